"""The codex-legacy dialect: Codex CLI rollouts of mid-2025 (a meta line, bare response items)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from compactcli import get_dialect, read_transcript, to_bytes, validate
from compactcli.formats.codex.items import SUMMARY_PREFIX
from compactcli.formats.detect import detect_format
from compactcli.stages.prune import PruneOptions, prune
from compactcli.stages.summarize import SummarizeOptions, summarize
from compactcli.summarizers import get_summarizer
from compactcli.tokens import get_counter
from compactcli.transcript import Record, Transcript
from tests.cli_runner import run
from tests.conftest import FIXTURES

TRANSCRIPTS = FIXTURES / "transcripts"
SESSION = TRANSCRIPTS / "codex-legacy-session.jsonl"
LONG = TRANSCRIPTS / "codex-legacy-summarize-session.jsonl"
LEGACY = get_dialect("codex-legacy")

META = {"id": "5973b6c0-94b8-487b-a530-2aeb6098ae0e", "timestamp": "2025-07-23T14:12:09.123Z"}
STATE = {"record_type": "state"}


def user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def call(call_id: str) -> dict[str, Any]:
    arguments = json.dumps({"command": ["bash", "-lc", "ls"]})
    return {"type": "function_call", "name": "shell", "arguments": arguments, "call_id": call_id}


def output(call_id: str, text: str = "ok") -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def in_memory(*raws: dict[str, Any]) -> Transcript:
    records = tuple(Record(raw=raw, lineno=n) for n, raw in enumerate(raws, 1))
    return Transcript(records=records, format="codex-legacy", source="mem.jsonl")


def findings(t: Transcript) -> list[tuple[int, str, str, str]]:
    return [(f.line, f.code, f.message, f.severity) for f in LEGACY.validate(t)]


def _counter(t: Transcript):  # type: ignore[no-untyped-def]
    return get_counter("heuristic", model=None, format=t.format)


@pytest.mark.parametrize("path", [SESSION, LONG], ids=lambda p: p.name)
def test_fixtures_are_detected_valid_and_round_trip(path: Path) -> None:
    t = read_transcript(str(path))
    assert t.format == "codex-legacy"
    assert to_bytes(t) == path.read_bytes()
    assert validate(t).ok and validate(t).warnings == ()


def test_detection_needs_a_meta_line_and_bare_items() -> None:
    items = [{**META, "instructions": None}, STATE, user("hi")]
    assert detect_format(items, "x") == "codex-legacy"
    assert get_dialect("codex-legacy").sniff([META, user("hi")]) == 80
    envelope = {"timestamp": "t", "type": "response_item", "payload": user("hi")}
    assert get_dialect("codex-legacy").sniff([META, envelope]) == 0
    assert get_dialect("codex-legacy").sniff([{"role": "user", "content": "hi"}]) == 0
    modern = read_transcript(str(TRANSCRIPTS / "codex-session.jsonl"))
    assert modern.format == "codex"


def test_the_context_is_every_item_read_as_codex_reads_it() -> None:
    t = read_transcript(str(SESSION))
    context = LEGACY.context(t)
    assert context == LEGACY.messages(t)
    assert [(t.line_of(m.index), m.role, [b.kind for b in m.blocks]) for m in context] == [
        (3, "user", ["text", "text"]),
        (5, "user", ["text"]),
        (6, "assistant", ["thinking", "other"]),
        (7, "assistant", ["text"]),
        (8, "assistant", ["tool_call"]),
        (9, "assistant", ["tool_call"]),
        (10, "tool", ["tool_result"]),
        (11, "tool", ["tool_result"]),
        (12, "assistant", ["thinking", "other"]),
        (13, "assistant", ["text"]),
        (14, "assistant", ["tool_call"]),
        (15, "tool", ["tool_result"]),
        (16, "assistant", ["tool_call"]),
        (17, "tool", ["tool_result"]),
        (18, "assistant", ["thinking", "other"]),
        (19, "assistant", ["text"]),
    ]
    assert context[6].blocks[0].name == "shell"
    assert LEGACY.usage(t) == [] and LEGACY.model(t) is None


def test_validation_codes() -> None:
    t = in_memory(
        user("no meta first"),
        {**META, "instructions": None},
        {"no": "type"},
        call("c1"),
        call("c1"),
        output("c9"),
        {"type": "message", "role": "user", "content": "not an array"},
        call("c2"),
    )
    assert findings(t) == [
        (
            1,
            "session-meta",
            "first record is not a session meta line ({id, timestamp, instructions})",
            "error",
        ),
        (2, "session-meta", "a second session meta line", "error"),
        (
            3,
            "bad-shape",
            "line is neither a response item (no string 'type') nor a state line",
            "error",
        ),
        (
            4,
            "call-unanswered",
            "function_call 'c1' (shell) has no output by the end of the file; "
            'Codex answers it with "aborted" on load',
            "warning",
        ),
        (
            5,
            "duplicate-id",
            "function_call call_id 'c1' is already used by the call on line 4",
            "error",
        ),
        (
            6,
            "orphan-result",
            "function_call_output call_id 'c9' has no earlier function_call or "
            "local_shell_call in its history",
            "error",
        ),
        (7, "bad-shape", "message: message content is not an array", "error"),
        (
            8,
            "call-unanswered",
            "function_call 'c2' (shell) has no output by the end of the file; "
            'Codex answers it with "aborted" on load',
            "warning",
        ),
    ]


def test_a_bad_line_stops_reading_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    lines = [{**META, "instructions": None}, user("hi"), {"type": "message", "role": "robot"}]
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    result = run("estimate", str(path))
    assert result.exit_code == 3
    assert result.stderr == f"error: {path}:3: message: message has an unknown role 'robot'\n"


def test_prune_clears_an_output_in_place(tmp_path: Path) -> None:
    text = "README.md\n" * 40
    lines = [{**META, "instructions": None}, STATE, user("list it")]
    lines += [call("c1"), output("c1", text), {**user("again"), "role": "user"}]
    lines += [call("c2"), output("c2", "done")]
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    before = read_transcript(str(path))
    after = prune(before, PruneOptions(keep_recent=1, min_chars=50), counter=_counter(before))
    cleared = after.records[4].raw["output"]
    assert cleared.startswith("[Old tool result cleared: shell bash -lc ls — 41 lines, 400 chars")
    assert len(after.records) == len(before.records)  # no boundary line: Codex has no place
    assert [r.line for i, r in enumerate(after.records) if i != 4] == [
        r.line for i, r in enumerate(before.records) if i != 4
    ]
    assert validate(after).ok


def test_summarize_rewrites_the_file_around_one_summary_item() -> None:
    before = read_transcript(str(LONG))
    options = SummarizeOptions(keep_recent_tokens=300)
    after = summarize(
        before, options, summarizer=get_summarizer("extractive"), counter=_counter(before)
    )
    assert after.stats[-1].changed
    assert validate(after).ok
    lines = to_bytes(after).splitlines()
    old = LONG.read_bytes().splitlines()
    at = next(i for i, line in enumerate(lines) if b'"compactcli"' in line)
    summary = orjson.loads(lines[at])
    assert summary["type"] == "message" and summary["role"] == "user"
    assert summary["content"][0]["text"].startswith(f"{SUMMARY_PREFIX}\n[compactcli summary:")
    assert summary["compactcli"]["stage"] == "summarize"
    tail = lines[at + 1 :]
    assert tail == old[len(old) - len(tail) :]  # the kept tail, byte for byte
    middle = old[4 : len(old) - len(tail)]
    # the meta line, a state line and the injected context, then the middle's state lines
    assert lines[:at] == old[:4] + [line for line in middle if line == b'{"record_type":"state"}']
    context = LEGACY.context(after)
    assert context[2].summary and LEGACY.compactions(after)[0].ours
    again = summarize(
        after, options, summarizer=get_summarizer("extractive"), counter=_counter(after)
    )
    assert to_bytes(again) == to_bytes(after)


def test_compact_on_the_command_line(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    result = run("compact", str(LONG), "--force", "--keep-recent-tokens", "300", "-o", str(out))
    assert result.exit_code == 0, result.stderr
    assert read_transcript(str(out)).format == "codex-legacy"
    check = run("validate", str(out), "--format", "codex-legacy")
    assert check.exit_code == 0
    assert check.stdout == f"{out}: valid codex-legacy transcript (0 errors, 0 warnings)\n"
