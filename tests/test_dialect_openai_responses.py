"""The openai-responses dialect: OpenAI Responses API items, one per line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from compactcli import get_dialect, read_transcript, to_bytes, validate
from compactcli.formats.base import OUR_SUMMARY_START
from compactcli.formats.detect import detect_format
from compactcli.injection import PREAMBLES
from compactcli.stages.summarize import SummarizeOptions, summarize
from compactcli.summarizers import get_summarizer
from compactcli.tokens import get_counter
from compactcli.transcript import Record, Transcript
from tests.cli_runner import run
from tests.conftest import FIXTURES

TRANSCRIPTS = FIXTURES / "transcripts"
SESSION = TRANSCRIPTS / "openai-responses-session.jsonl"
LONG = TRANSCRIPTS / "openai-responses-summarize-session.jsonl"
RESPONSES = get_dialect("openai-responses")


def message(role: str, text: str) -> dict[str, Any]:
    part = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": part, "text": text}]}


def in_memory(*raws: dict[str, Any]) -> Transcript:
    records = tuple(Record(raw=raw, lineno=n) for n, raw in enumerate(raws, 1))
    return Transcript(records=records, format="openai-responses", source="mem.jsonl")


@pytest.mark.parametrize("path", [SESSION, LONG], ids=lambda p: p.name)
def test_fixtures_are_detected_valid_and_round_trip(path: Path) -> None:
    t = read_transcript(str(path))
    assert t.format == "openai-responses"
    assert to_bytes(t) == path.read_bytes()
    assert validate(t).ok and validate(t).warnings == ()


def test_detection_tells_responses_items_from_chat_messages() -> None:
    assert detect_format([message("user", "hi"), message("assistant", "yo")], "x") == (
        "openai-responses"
    )
    assert detect_format([{"role": "user", "content": "hi"}], "x") == "openai"
    # a pi entry is a `message` without a role; a Codex envelope is not a bare item
    assert RESPONSES.sniff([{"type": "message", "message": {"role": "user"}}]) == 0
    envelope = {"timestamp": "t", "type": "response_item", "payload": message("user", "hi")}
    assert RESPONSES.sniff([envelope]) == 0
    assert RESPONSES.sniff([{"type": "function_call_output", "call_id": "c", "output": ""}]) == 0


def test_the_context_is_every_item() -> None:
    t = read_transcript(str(SESSION))
    context = RESPONSES.context(t)
    assert [(m.role, [b.kind for b in m.blocks]) for m in context[:4]] == [
        ("developer", ["text", "text"]),
        ("user", ["text"]),
        ("assistant", ["thinking", "other"]),
        ("assistant", ["text"]),
    ]
    assert len(context) == len(t.records)


def test_validation_codes() -> None:
    t = in_memory(
        {"id": "x", "timestamp": "t"},
        message("user", "hi"),
        {"type": "function_call_output", "call_id": "c9", "output": "ok"},
    )
    assert [(f.line, f.code, f.message) for f in RESPONSES.validate(t)] == [
        (1, "bad-shape", "line is neither a response item (no string 'type') nor a state line"),
        (
            3,
            "orphan-result",
            "function_call_output call_id 'c9' has no earlier function_call or "
            "local_shell_call in its history",
        ),
    ]


def test_summarize_rewrites_the_list_around_our_summary_message() -> None:
    before = read_transcript(str(LONG))
    counter = get_counter("heuristic", model=None, format=before.format)
    options = SummarizeOptions(keep_recent_tokens=300)
    extractive = get_summarizer("extractive")
    after = summarize(before, options, summarizer=extractive, counter=counter)
    assert after.stats[-1].changed and validate(after).ok
    lines = to_bytes(after).splitlines()
    old = LONG.read_bytes().splitlines()
    assert lines[0] == old[0]  # the developer message
    summary = orjson.loads(lines[1])
    assert summary["role"] == "user"
    assert summary["content"][0]["text"].startswith("[compactcli summary:")  # no Codex prefix
    assert "compactcli" not in summary  # the API refuses unknown keys
    assert after.stats[-1].details["boundary"]["stage"] == "summarize"  # --boundary, --stats
    assert lines[2:] == old[len(old) - len(lines) + 2 :]
    assert RESPONSES.context(after)[1].summary
    assert RESPONSES.compactions(after)[0].ours
    again = summarize(after, options, summarizer=extractive, counter=counter)
    assert to_bytes(again) == to_bytes(after)


def test_compact_and_estimate_on_the_command_line(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    result = run("compact", str(LONG), "--force", "--keep-recent-tokens", "300", "-o", str(out))
    assert result.exit_code == 0, result.stderr
    check = run("validate", str(out))
    assert check.stdout == f"{out}: valid openai-responses transcript (0 errors, 0 warnings)\n"
    counted = run("estimate", str(LONG), "--json")
    assert orjson.loads(counted.stdout)["format"] == "openai-responses"


def test_our_summary_is_known_by_how_its_text_starts() -> None:
    assert all(preamble.startswith(OUR_SUMMARY_START) for preamble in PREAMBLES)


def test_a_message_may_hold_a_plain_string() -> None:
    t = in_memory(
        {"type": "message", "role": "user", "content": "fix the port"},
        message("assistant", "Done."),
    )
    assert [(m.role, m.text) for m in RESPONSES.context(t)] == [
        ("user", "fix the port"),
        ("assistant", "Done."),
    ]
    assert RESPONSES.context(t)[0].blocks[0].path == ("content",)
    assert RESPONSES.validate(t) == []
    rollout = in_memory(
        {"id": "s", "timestamp": "t", "instructions": None},
        {"type": "message", "role": "user", "content": "fix the port"},
    )
    assert [f.message for f in get_dialect("codex-legacy").validate(rollout)] == [
        "message: message content is not an array"  # Codex always writes an array
    ]
