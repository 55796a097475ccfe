"""The prune stage and the `prune` command: what is cleared, how, and what never changes."""

from __future__ import annotations

import base64
import hashlib
import os
import re
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compactcli import get_dialect, read_transcript, to_bytes, validate
from compactcli.estimate import EstimateOptions, estimate
from compactcli.formats.base import atomic_units
from compactcli.outcomes import Outcome, outcome
from compactcli.stages.prune import PruneOptions, prune
from compactcli.summarizers.facts import Command, extract_facts
from compactcli.tokens import get_counter
from compactcli.transcript import Block, Transcript
from tests.cli_runner import run
from tests.conftest import CORPUS, FIXTURES
from tests.image_files import png
from tests.transcript_strategies import FORMAT_NAMES, plans, render

TRANSCRIPTS = FIXTURES / "transcripts"
SESSION = TRANSCRIPTS / "claude-code-session.jsonl"
HASH = re.compile(r"sha256:([0-9a-f]{64})")


def _counter(t: Transcript):  # type: ignore[no-untyped-def]
    return get_counter("heuristic", model=get_dialect(t.format).model(t), format=t.format)


def _prune(path: Path, **options: object) -> tuple[Transcript, Transcript]:
    before = read_transcript(str(path))
    after = prune(before, PruneOptions(**options), counter=_counter(before))  # type: ignore[arg-type]
    return before, after


def _pairs(t: Transcript) -> tuple[set[str], set[str]]:
    context = get_dialect(t.format).context(t)
    calls = {b.call_id for m in context for b in m.blocks if b.kind == "tool_call" and b.call_id}
    results = {
        b.call_id for m in context for b in m.blocks if b.kind == "tool_result" and b.call_id
    }
    return calls, results


def test_placeholder_is_a_digest_and_claude_codes_copy_is_cleared_too() -> None:
    before, after = _prune(SESSION, keep_recent=0, min_chars=50)
    record = after.records[5].raw
    block = record["message"]["content"][0]
    assert block["tool_use_id"] == "toolu_010tTDY6Mo1NjN0Gaq92RBH4"
    original = before.records[5].raw["message"]["content"][0]["content"]
    digest = hashlib.sha256(original.encode()).hexdigest()
    assert block["content"] == (
        "[Old tool result cleared: Read /home/dana/src/almanac/src/almanac/dates.py — "
        f"7 lines, 197 chars, sha256:{digest}]"
    )
    assert record["toolUseResult"] == block["content"]
    stats = after.stats[-1]
    assert (stats.stage, stats.results_cleared, stats.duplicates_cleared) == ("prune", 2, 0)
    assert set(stats.tokens_freed_by_tool) == {"Read", "Bash"}


def _codex_placeholders(path: Path) -> list[str]:
    """The outputs a prune of the Codex rollout at `path` (nothing kept) changed, hashes elided;
    the result must validate."""
    before, after = _prune(path, keep_recent=0)
    assert validate(after).errors == ()
    return [
        HASH.sub("sha256:…", r.raw["payload"]["output"])
        for a, r in zip(before.records, after.records, strict=False)
        if a.line != r.line
    ]


def test_placeholders_of_codex_code_mode_scripts_name_the_commands_they_ran() -> None:
    assert _codex_placeholders(TRANSCRIPTS / "codex-code-mode.jsonl") == [
        "[Old tool result cleared: exec rg -n ttl src — 26 lines, 1,724 chars, sha256:…]",
        "[Old tool result cleared: exec npm test -- cache — 36 lines, 1,409 chars, sha256:…]",
        "[Old tool result cleared: exec sed -n '1,60p' src/cache.ts — 34 lines, 1,328 chars, "
        "sha256:…]",
    ]


def _codex_rollout(folder: Path, *items: dict[str, object]) -> Path:
    """A Codex rollout holding `items` after a user prompt, then a last prompt."""
    meta = {
        "id": "s",
        "timestamp": "2026-09-01T00:00:00.000Z",
        "cwd": "/r",
        "cli_version": "0.150.1",
    }
    prompt = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Go."}]}
    path = folder / "rollout.jsonl"
    lines = [{"timestamp": "2026-09-01T00:00:00.000Z", "type": "session_meta", "payload": meta}]
    lines += [
        {"timestamp": "2026-09-01T00:00:01.000Z", "type": "response_item", "payload": item}
        for item in (prompt, *items, prompt)
    ]
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return path


def test_a_codex_poll_of_a_running_command_is_cleared_as_shell_output(tmp_path: Path) -> None:
    script = "const r = await tools.exec_command({cmd: 'npx jest'});\ntext(r.output);\n"
    running = "Script running with cell ID 28\nWall time 10.0 seconds\nOutput:\n"
    log = "".join(f"PASS src/case{n}.test.ts\n" for n in range(20))
    collab = "".join(f"agent-1: step {n} of the review is done\n" for n in range(20))
    path = _codex_rollout(
        tmp_path,
        {"type": "custom_tool_call", "call_id": "x1", "name": "exec", "input": script},
        {"type": "custom_tool_call_output", "call_id": "x1", "output": running + log},
        {
            "type": "function_call",
            "call_id": "w1",
            "name": "wait",
            "arguments": '{"cell_id":"28","yield_time_ms":10000}',
        },
        {"type": "function_call_output", "call_id": "w1", "output": running + log},
        # a multi-agent `wait` for other agents: their messages, not a command's output
        {
            "type": "function_call",
            "call_id": "w2",
            "name": "wait",
            "arguments": '{"ids":["agent-1"],"timeout_ms":30000}',
        },
        {"type": "function_call_output", "call_id": "w2", "output": collab},
    )
    assert _codex_placeholders(path) == [
        "[Old tool result cleared: exec npx jest — 24 lines, 532 chars, sha256:…]",
        "[Old tool result cleared: wait cell 28 — 24 lines, 532 chars, sha256:…]",
    ]


def test_records_not_cleared_stay_byte_identical_and_a_boundary_is_appended() -> None:
    before, after = _prune(SESSION, keep_recent=0, min_chars=50)
    changed = [
        i
        for i, (a, b) in enumerate(zip(before.records, after.records, strict=False))
        if a.line != b.line
    ]
    assert changed == [5, 7]
    assert len(after.records) == len(before.records) + 1
    marker = after.records[-1].raw
    assert (marker["type"], marker["subtype"]) == ("system", "microcompact_boundary")
    assert marker["compactcli"]["stage"] == "prune"
    assert marker["compactcli"]["source_sha256"] == before.sha256
    assert [c["id"] for c in marker["compactcli"]["cleared"]] == [
        "toolu_010tTDY6Mo1NjN0Gaq92RBH4",
        "toolu_01VsuWJttBiXht0z542aMYyi",
    ]
    assert validate(after).errors == ()
    assert (
        get_dialect("claude-code").context(after)[-1]
        == get_dialect("claude-code").context(before)[-1]
    )


def test_thinking_blocks_are_never_edited() -> None:
    before, after = _prune(SESSION, keep_recent=0, min_chars=0)
    for old, new in zip(before.records, after.records, strict=False):
        content = old.get("message", {}).get("content") if isinstance(old.raw, dict) else None
        if isinstance(content, list) and any(b.get("type") == "thinking" for b in content):
            assert new.line == old.line


@pytest.mark.parametrize("path", sorted(TRANSCRIPTS.glob("*.jsonl")), ids=lambda p: p.name)
def test_default_prune_of_a_small_transcript_is_a_byte_exact_no_op(path: Path) -> None:
    result = run("prune", str(path))
    assert result.exit_code == 0
    assert result.stdout_bytes == path.read_bytes()


@pytest.mark.parametrize("path", sorted(TRANSCRIPTS.glob("*.jsonl")), ids=lambda p: p.name)
def test_aggressive_prune_keeps_every_fixture_valid_and_paired(path: Path) -> None:
    before, after = _prune(path, keep_recent=0, min_chars=0)
    assert validate(after).errors == ()
    assert _pairs(after) == _pairs(before)
    again = prune(after, PruneOptions(keep_recent=0, min_chars=0), counter=_counter(after))
    assert to_bytes(again) == to_bytes(after)
    assert after.stats[-1].tokens_after <= after.stats[-1].tokens_before


def test_archive_holds_every_cleared_content_under_its_hash(tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    out = tmp_path / "out.jsonl"
    result = run(
        "prune",
        str(SESSION),
        "--keep-recent",
        "0",
        "--min-chars",
        "50",
        "--archive",
        str(archive),
        "-o",
        str(out),
    )
    assert result.exit_code == 0
    assert result.stdout == ""
    text = out.read_text()
    hashes = {h for h in HASH.findall(text)}
    assert len(hashes) == 2
    stored = [p for p in archive.iterdir() if p.is_file()]  # and what restore needs: its undo
    assert hashes <= {p.name for p in stored}
    for piece in stored:
        assert hashlib.sha256(piece.read_bytes()).hexdigest() == piece.name
    originals = SESSION.read_text()
    for digest in hashes:
        assert orjson.dumps((archive / digest).read_text()).decode() in originals


def _with_png(source: Path, target: Path, width: int, height: int) -> Path:
    """`source` with the base64 data of each of its 1 x 1 PNG images replaced by a PNG of
    `width` x `height`."""
    tiny = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    text = source.read_text()
    assert tiny in text
    target.write_text(text.replace(tiny, base64.b64encode(png(width, height)).decode()))
    return target


def test_a_tiny_image_is_kept_where_its_marker_would_cost_more(tmp_path: Path) -> None:
    source = TRANSCRIPTS / "anthropic-image.jsonl"  # its images are 1 x 1: one token each
    tiny = run("prune", str(source), "--keep-recent", "0")
    assert "[Old image cleared" not in tiny.stdout
    large = _with_png(source, tmp_path / "large.jsonl", 1200, 800)  # 1,280 tokens each
    assert "[Old image cleared" in run("prune", str(large), "--keep-recent", "0").stdout


def test_archive_holds_a_cleared_image_under_its_hash(tmp_path: Path) -> None:
    source = _with_png(TRANSCRIPTS / "anthropic-image.jsonl", tmp_path / "in.jsonl", 640, 480)
    archive = tmp_path / "archive"
    out = tmp_path / "out.jsonl"
    result = run(
        "prune", str(source), "--keep-recent", "0", "--archive", str(archive), "-o", str(out)
    )
    assert result.exit_code == 0
    markers = re.findall(
        r"\[Old image cleared: image/png, ([\d,]+) bytes, sha256:([0-9a-f]{64})\]", out.read_text()
    )
    assert len(markers) == 1
    size, digest = markers[0]
    data = (archive / digest).read_bytes()
    assert (len(data), hashlib.sha256(data).hexdigest()) == (int(size.replace(",", "")), digest)
    image = orjson.loads(data)
    assert image["type"] == "image" and image["source"]["media_type"] == "image/png"


def test_second_prune_in_a_pipe_changes_nothing_already_cleared() -> None:
    first = run("prune", str(SESSION), "--keep-recent", "3", "--min-chars", "50")
    second = run("prune", "--keep-recent", "3", "--min-chars", "50", input=first.stdout_bytes)
    assert second.exit_code == 0
    assert second.stdout_bytes == first.stdout_bytes
    tighter = run("prune", "--keep-recent", "0", "--min-chars", "50", input=first.stdout_bytes)
    assert tighter.stdout_bytes != first.stdout_bytes
    cleared_before = HASH.findall(first.stdout)
    assert set(cleared_before) <= set(HASH.findall(tighter.stdout))


def test_dry_run_writes_nothing_and_shows_the_diff(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    archive = tmp_path / "archive"
    stats = tmp_path / "stats.json"
    result = run(
        "prune",
        str(SESSION),
        "--keep-recent",
        "0",
        "--min-chars",
        "50",
        "--dry-run",
        "-o",
        str(out),
        "--archive",
        str(archive),
        "--stats",
        str(stats),
    )
    assert result.exit_code == 0
    assert not out.exists() and not archive.exists() and not stats.exists()
    lines = result.stdout.splitlines()
    assert lines[0] == "records: 17 -> 18  kept 15, cleared 2, edited 0, removed 0, added 1"
    assert lines[2] == "first change: line 6 (cleared user); prompt cache breaks here"
    assert [line.split()[:3] for line in lines[3:]] == [
        ["cleared", "6", "6"],
        ["cleared", "8", "8"],
        ["added", "-", "18"],
    ]


def test_stats_file_and_boundary_file_for_a_plain_message_list(tmp_path: Path) -> None:
    source = TRANSCRIPTS / "openai-session.jsonl"
    stats = tmp_path / "stats.jsonl"
    boundary = tmp_path / "boundary.json"
    result = run(
        "prune",
        str(source),
        "--keep-recent",
        "0",
        "--min-chars",
        "20",
        "--stats",
        str(stats),
        "--boundary",
        str(boundary),
    )
    assert result.exit_code == 0
    out = [orjson.loads(line) for line in result.stdout_bytes.splitlines()]
    original = [orjson.loads(line) for line in source.read_bytes().splitlines()]
    assert len(out) == len(original)  # no place for a boundary record in the list itself
    report = orjson.loads(stats.read_bytes())
    assert report["format"] == "openai"
    assert report["stages"][0]["stage"] == "prune"
    assert report["stages"][0]["results_cleared"] >= 1
    assert report["tokens_after"] < report["tokens_before"]
    details = orjson.loads(boundary.read_bytes())
    assert details["stage"] == "prune"
    assert details["source_sha256"] == hashlib.sha256(source.read_bytes()).hexdigest()
    assert len(details["cleared"]) == report["stages"][0]["results_cleared"]


@pytest.mark.parametrize(
    ("command", "option"),
    [
        ("prune", "--stats"),
        ("prune", "--boundary"),
        ("summarize", "--stats"),
        ("compact", "--stats"),
    ],
)
def test_a_report_file_cannot_be_standard_output(
    command: str, option: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run(command, str(TRANSCRIPTS / "openai-session.jsonl"), option, "-")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.splitlines()[-1].startswith(f"Error: Invalid value for '{option}'")
    assert result.stderr.rstrip().endswith("standard output carries the results; give a file name")
    assert list(tmp_path.iterdir()) == []  # no file called "-"


@pytest.mark.parametrize("path", sorted(TRANSCRIPTS.glob("*.jsonl")), ids=lambda p: p.name)
def test_every_pruned_file_read_back_counts_what_the_stats_claim(path: Path) -> None:
    _before, after = _prune(path, keep_recent=0, min_chars=50)
    # its boundary record (with the undo) added after the count leaves the context as counted
    again = read_transcript(str(path), data=to_bytes(after))
    counted = estimate(again, EstimateOptions(method="heuristic"), counter=_counter(after))
    assert after.stats[-1].tokens_after == counted.tokens


def test_the_stats_claim_matches_an_independent_count() -> None:
    _before, after = _prune(SESSION, keep_recent=0, min_chars=50)
    counter = _counter(after)
    # what `estimate --method heuristic` says of the result (each response at least its
    # recorded output), not the bare sum of its messages
    counted = estimate(after, EstimateOptions(method="heuristic"), counter=counter).tokens
    assert after.stats[-1].tokens_after == counted
    assert counted > sum(
        counter.message_tokens(m) for m in get_dialect("claude-code").context(after)
    )


def _openai_call(call_id: str, name: str, arguments: dict[str, object]) -> dict[str, object]:
    """An OpenAI chat assistant message making one function call."""
    function = {"name": name, "arguments": orjson.dumps(arguments).decode()}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": function}],
    }


def _twice(tmp_path: Path, output: str, name: str, arguments: dict[str, object]) -> Transcript:
    """A session that made one call twice with the same `output`, pruned (newest kept whole)."""
    lines = [
        {"role": "user", "content": "do it twice"},
        _openai_call("call_1", name, arguments),
        {"role": "tool", "tool_call_id": "call_1", "content": output},
        _openai_call("call_2", name, arguments),
        {"role": "tool", "tool_call_id": "call_2", "content": output},
        {"role": "assistant", "content": "same output"},
    ]
    path = tmp_path / "twice.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return _prune(path, keep_recent=1)[1]


def test_identical_outputs_keep_only_the_newest_whole(tmp_path: Path) -> None:
    output = "x" * 400
    after = _twice(tmp_path, output, "read_file", {"path": "a.py"})
    digest = hashlib.sha256(output.encode()).hexdigest()
    assert after.records[2].raw["content"] == (
        f"[Duplicate tool result cleared: same output as a later read_file call — 400 chars, sha256:{digest}]"
    )
    assert after.records[4].raw["content"] == output
    assert after.stats[-1].duplicates_cleared == 1


def test_wrong_shape_record_is_refused_with_its_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FIXTURES / "invalid")
    result = run("prune", "openai-bad-shape.jsonl")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == (
        "openai-bad-shape.jsonl:3: error bad-shape: assistant content is an object, not a string, a list or null\n"
        "error: openai-bad-shape.jsonl: invalid openai transcript (1 error): nothing written; "
        "--repair repairs it as the agent does when it loads a session\n"
    )
    repaired = run("prune", "openai-bad-shape.jsonl", "--repair")
    assert repaired.exit_code == 0
    assert repaired.stderr == (
        "openai-bad-shape.jsonl:3: repaired bad-shape: dropped the message: assistant content is "
        "an object, not a string, a list or null\n"
    )
    lines = (FIXTURES / "invalid" / "openai-bad-shape.jsonl").read_bytes().splitlines(keepends=True)
    assert repaired.stdout_bytes == b"".join(lines[:2] + lines[3:])


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
@settings(
    max_examples=int(os.environ.get("COMPACTCLI_TEST_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(plan=plans(), keep=st.integers(0, 4), min_chars=st.sampled_from([0, 50, 200]))
def test_prune_properties_in_every_format(
    tmp_path: Path, fmt: str, plan: object, keep: int, min_chars: int
) -> None:
    path = tmp_path / f"{fmt}.jsonl"
    path.write_bytes(render(plan, fmt))  # type: ignore[arg-type]
    before, after = _prune(path, keep_recent=keep, min_chars=min_chars)
    assert validate(after).errors == ()
    assert _pairs(after) == _pairs(before)
    dialect = get_dialect(fmt)
    assert len(atomic_units(dialect.context(after))) == len(atomic_units(dialect.context(before)))
    stats = after.stats[-1]
    assert stats.tokens_after <= stats.tokens_before
    edited = {
        i
        for i, (a, b) in enumerate(zip(before.records, after.records, strict=False))
        if a.line != b.line
    }
    assert len(edited) <= stats.results_cleared + stats.duplicates_cleared + stats.images_cleared

    def prompts(t: Transcript) -> list[str]:
        return [
            m.text
            for m in dialect.context(t)
            if m.role == "user"
            and any(b.kind == "text" and b.type != "bashExecution" for b in m.blocks)
        ]

    assert prompts(after) == prompts(before)
    again = prune(
        after, PruneOptions(keep_recent=keep, min_chars=min_chars), counter=_counter(after)
    )
    assert to_bytes(again) == to_bytes(after)


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus not present")
@pytest.mark.parametrize(
    "name", sorted(p.name for p in CORPUS.glob("*.jsonl")) if CORPUS.is_dir() else []
)
def test_prune_on_real_transcripts(name: str) -> None:
    before, after = _prune(CORPUS / name, keep_recent_tokens=20_000)
    assert validate(after).errors == ()
    assert _pairs(after) == _pairs(before)
    dialect = get_dialect(before.format)
    assert dialect.context(after)[-1].index == dialect.context(before)[-1].index
    again = prune(after, PruneOptions(keep_recent_tokens=20_000), counter=_counter(after))
    assert to_bytes(again) == to_bytes(after)


def _shell_session(tmp_path: Path, *outputs: str) -> Path:
    """An OpenAI chat list: one `exec_command` call per output, then a closing answer."""
    lines: list[dict[str, object]] = [{"role": "user", "content": "run the tests"}]
    for n, output in enumerate(outputs, start=1):
        lines.append(_openai_call(f"call_{n}", "exec_command", {"cmd": f"npm test -- shard {n}"}))
        lines.append({"role": "tool", "tool_call_id": f"call_{n}", "content": output})
    lines.append({"role": "assistant", "content": "done"})
    path = tmp_path / "shell.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return path


PASSING_LOG = "".join(f" ✓ test/api/errors.test.ts > case {n} (missing) 3ms\n" for n in range(40))


def test_a_cleared_failure_keeps_its_error_line_and_a_success_does_not(tmp_path: Path) -> None:
    failing = (
        "Exit code 1\n"
        + PASSING_LOG
        + " FAIL  test/api/queue.test.ts > drains the queue\n"
        + "Error: Timeout of 4356ms exceeded waiting for payments queue\n"
        + " Test Files  1 failed | 9 passed\n"
    )
    passing = "Exit code 0\n" + PASSING_LOG
    path = _shell_session(tmp_path, failing, passing, "Exit code 0\nok")
    before, after = _prune(path, keep_recent=1)
    digest = hashlib.sha256(failing.encode()).hexdigest()
    assert after.records[2].raw["content"] == (
        f"[Old tool result cleared: exec_command npm test -- shard 1 — 45 lines, "
        f"{len(failing):,} chars, sha256:{digest}; "
        "failed: Error: Timeout of 4356ms exceeded waiting for payments queue]"
    )
    digest = hashlib.sha256(passing.encode()).hexdigest()
    assert after.records[4].raw["content"] == (
        f"[Old tool result cleared: exec_command npm test -- shard 2 — 42 lines, "
        f"{len(passing):,} chars, sha256:{digest}]"
    )
    assert after.records[6].raw == before.records[6].raw
    assert validate(after).errors == ()
    # a second run changes nothing
    again = prune(after, PruneOptions(keep_recent=1), counter=_counter(after))
    assert to_bytes(again) == to_bytes(after)


def test_an_error_printed_by_a_call_that_did_not_fail_is_kept_in_its_placeholder(
    tmp_path: Path,
) -> None:
    # piped through `head`: exit 0, and the error is in the output
    soft = "Exit code 0\n" + PASSING_LOG + "src/a.ts(3,1): error TS2304: Cannot find name 'x'.\n"
    path = _shell_session(tmp_path, soft, "Exit code 0\nok")
    _, after = _prune(path, keep_recent=1)
    digest = hashlib.sha256(soft.encode()).hexdigest()
    placeholder = after.records[2].raw["content"]
    assert placeholder == (
        f"[Old tool result cleared: exec_command npm test -- shard 1 — 43 lines, "
        f"{len(soft):,} chars, sha256:{digest}; "
        "printed an error: src/a.ts(3,1): error TS2304: Cannot find name 'x'.]"
    )
    # a later summary still reads it as an error, not as a failed call
    block = Block(kind="tool_result", text=placeholder)
    assert outcome(block, shell=True, soft=True) == Outcome(
        "ok", error="src/a.ts(3,1): error TS2304: Cannot find name 'x'."
    )


def _reads_session(path: Path, ask: str, reads: list[tuple[str, str]]) -> Path:
    """An OpenAI-format session at `path`: `ask`, a `read` call and its result per (path, text)
    of `reads` (records 1, 2; 3, 4; ...), then an answer and a thank-you."""
    lines: list[dict[str, object]] = [{"role": "user", "content": ask}]
    for n, (read, text) in enumerate(reads, start=1):
        lines.append(_openai_call(f"call_{n}", "read", {"path": read}))
        lines.append({"role": "tool", "tool_call_id": f"call_{n}", "content": text})
    lines += [{"role": "assistant", "content": "done"}, {"role": "user", "content": "thanks"}]
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return path


def test_a_file_read_whose_text_names_an_error_printed_none(tmp_path: Path) -> None:
    body = "  const tries = 3;\n" * 60
    source = f"export function save() {{\n  this.showError(`Failed to export: ${{m}}`);\n{body}}}\n"
    path = _reads_session(tmp_path / "read.jsonl", "read it", [("src/save.ts", source)])
    _, after = _prune(path, keep_recent=0)
    placeholder = str(after.records[2].raw["content"])
    assert placeholder.startswith("[Old tool result cleared: read src/save.ts")
    # the file's text is the file's: no "printed an error", and no error in a summary of it
    assert "error" not in placeholder.lower()
    facts = extract_facts(get_dialect(after.format).context(after))
    assert facts.errors == ()


SPRING_LOG = (
    "".join(
        f"2026-06-21T14:47:{n:02d} INFO 69581 --- [main] o.s.Boot : step {n}\n" for n in range(30)
    )
    + "***************************\nAPPLICATION FAILED TO START\n***************************\n\n"
    "Description:\n\nWeb server failed to start. Port 8080 was already in use.\n\n"
    "> Task :bootRun FAILED\n\nBUILD FAILED in 5s\n"
)


def test_a_log_read_keeps_the_error_it_shows_in_its_placeholder(tmp_path: Path) -> None:
    """A log's lines are output, not a file's text: the error a read of one shows (`tail` of
    a server's log, a read tool's numbered lines) is kept, read back as an error of the work;
    a log of nothing but progress shows none."""
    numbered = "".join(f"{n:6}→{line}\n" for n, line in enumerate(SPRING_LOG.splitlines(), 1))
    quiet = "".join(f"2026-06-21 INFO request {n} served\n" for n in range(40))
    reads = [("logs/backend.log", numbered), ("logs/access.log", quiet)]
    path = _reads_session(tmp_path / "log.jsonl", "why is the backend down?", reads)
    _, after = _prune(path, keep_recent=0)
    error = (
        "APPLICATION FAILED TO START Description: Web server failed to start. Port 8080 was "
        "already in use."
    )
    assert str(after.records[2].raw["content"]).endswith(f"; printed an error: {error}]")
    assert "error" not in str(after.records[4].raw["content"]).lower()
    facts = extract_facts(get_dialect(after.format).context(after))
    assert [(e.text, e.where) for e in facts.errors] == [(error, "logs/backend.log")]


def test_a_poll_clears_the_output_of_the_command_it_polls_by_that_commands_rules(
    tmp_path: Path,
) -> None:
    """Codex `write_stdin` to a running process's session brings that command's output: a file
    `sed -n` printed (`error: vaultError,` is a line of its code) printed no error, and a build
    polled the same way keeps the error it printed."""
    code = "".join(f"  const value{n} = {n};\n" for n in range(40)) + "    error: vaultError,\n"
    build = "".join(f"compiling module {n}\n" for n in range(40)) + "error: build failed\n"

    def polled(call_id: str, command: str, session: int, output: str) -> list[dict[str, object]]:
        running = (
            f"Chunk ID: a\nWall time: 1.0 seconds\nProcess running with session ID {session}\n"
        )
        done = "Chunk ID: b\nWall time: 0.1 seconds\nProcess exited with code 0\nOutput:\n"
        arguments = f'{{"session_id":{session},"chars":""}}'
        return [
            {
                "type": "function_call",
                "call_id": call_id,
                "name": "exec_command",
                "arguments": orjson.dumps({"cmd": command}).decode(),
            },
            {"type": "function_call_output", "call_id": call_id, "output": running},
            {
                "type": "function_call",
                "call_id": f"{call_id}-poll",
                "name": "write_stdin",
                "arguments": arguments,
            },
            {"type": "function_call_output", "call_id": f"{call_id}-poll", "output": done + output},
        ]

    path = _codex_rollout(
        tmp_path,
        *polled("c1", "sed -n '1,60p' app/page.tsx", 7, code),
        *polled("c2", "npm run build", 8, build),
    )
    placeholders = _codex_placeholders(path)
    assert len(placeholders) == 2
    assert "error" not in placeholders[0]
    assert placeholders[1].endswith("; printed an error: error: build failed]")
    _, after = _prune(path, keep_recent=0)
    facts = extract_facts(get_dialect(after.format).context(after))
    assert [(e.text, e.where) for e in facts.errors] == [("error: build failed", "npm run build")]


def test_a_failure_whose_placeholder_would_not_be_smaller_stays_whole(tmp_path: Path) -> None:
    error = "AssertionError: expected the refund total of order 42 to equal 1200 " + "x" * 150
    failing = "Exit code 1\n" + error + "\n"
    assert 200 < len(failing) < 300
    path = _shell_session(tmp_path, failing, "Exit code 0\n" + "y" * 400, "Exit code 0\nok")
    before, after = _prune(path, keep_recent=1)
    assert after.records[2].raw == before.records[2].raw  # the error line alone is as long
    assert str(after.records[4].raw["content"]).startswith("[Old tool result cleared:")
    assert after.stats[-1].results_cleared == 1


def _pi_session(tmp_path: Path, failing: str, listing: str) -> Path:
    """A pi session: a failing command the user ran, a prompt, a read, an answer, and a newer
    command the user ran as the latest message."""
    model = {
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-opus-4-5",
        "usage": {"input": 100, "output": 20, "totalTokens": 120, "cost": {"total": 0.0}},
        "timestamp": 1770110060121,
    }
    bodies: list[dict[str, object]] = [
        {
            "role": "bashExecution",
            "command": "npm test -- shard 1",
            "output": failing,
            "exitCode": 1,
            "cancelled": False,
            "truncated": False,
        },
        {"role": "user", "content": [{"type": "text", "text": "the queue test fails, fix it"}]},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "toolCall",
                    "id": "toolu_1",
                    "name": "read",
                    "arguments": {"path": "src/queue.ts"},
                }
            ],
            "stopReason": "toolUse",
            **model,
        },
        {
            "role": "toolResult",
            "toolCallId": "toolu_1",
            "toolName": "read",
            "content": [{"type": "text", "text": "export const timeout = 4356;\n" * 12}],
            "isError": False,
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "The timeout was too short; it is 10000 now."}],
            "stopReason": "stop",
            **model,
        },
        {
            "role": "bashExecution",
            "command": "find ./src -name '*.ts'",
            "output": listing,
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
        },
    ]
    lines: list[dict[str, object]] = [
        {"type": "session", "version": 3, "id": "6a1d0c2e", "timestamp": "2026-02-03T09:14:00Z"}
    ]
    for n, body in enumerate(bodies, 1):
        lines.append(
            {
                "type": "message",
                "id": f"{n:08x}",
                "parentId": f"{n - 1:08x}" if n > 1 else None,
                "timestamp": f"2026-02-03T09:14:{n:02d}.000Z",
                "message": {"timestamp": 1770110060121, **body},
            }
        )
    path = tmp_path / "pi-shell.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return path


def test_pi_commands_the_user_ran_are_cleared_like_shell_results(tmp_path: Path) -> None:
    failing = (
        PASSING_LOG
        + " FAIL  test/api/queue.test.ts > drains the queue\n"
        + "Error: Timeout of 4356ms exceeded waiting for payments queue\n"
    )
    listing = "".join(f"./src/module_{n}.ts\n" for n in range(30))
    path = _pi_session(tmp_path, failing, listing)
    before, after = _prune(path, keep_recent=0)
    digest = hashlib.sha256(failing.encode()).hexdigest()
    assert after.records[1].raw["message"] == {
        **before.records[1].raw["message"],
        "output": f"[Old tool result cleared: bash npm test -- shard 1 — 43 lines, "
        f"{len(failing):,} chars, sha256:{digest}; "
        "failed: Error: Timeout of 4356ms exceeded waiting for payments queue]",
    }
    assert str(after.records[4].raw["message"]["content"][0]["text"]).startswith(
        "[Old tool result cleared: read src/queue.ts"
    )
    assert after.records[6].line == before.records[6].line  # the latest message stays whole
    stats = after.stats[-1]
    assert stats.results_cleared == 2
    cleared = stats.details["boundary"]["cleared"]
    assert [(c["id"], c["tool"], c["line"], c.get("user")) for c in cleared] == [
        (None, "bash", 2, True),
        ("toolu_1", "read", 5, None),
    ]
    assert validate(after).errors == ()
    again = prune(after, PruneOptions(keep_recent=0), counter=_counter(after))
    assert to_bytes(again) == to_bytes(after)
    # a summary made later still says how the command failed
    facts = extract_facts(get_dialect("pi").context(after))
    assert facts.commands[0] == Command(
        "npm test -- shard 1",
        "failed",
        "Error: Timeout of 4356ms exceeded waiting for payments queue",
    )


def test_pi_commands_the_user_ran_follow_the_tools_option(tmp_path: Path) -> None:
    path = _pi_session(tmp_path, "x" * 400 + "\n", "y" * 400 + "\n")
    _, only_reads = _prune(path, keep_recent=0, tools=frozenset({"read"}))
    assert only_reads.stats[-1].results_cleared == 1
    _, with_bash = _prune(path, keep_recent=0, tools=frozenset({"read", "bash"}))
    assert with_bash.stats[-1].results_cleared == 2


def test_an_instruction_file_read_is_never_cleared_however_old(tmp_path: Path) -> None:
    rules = "# Rules\n- NEVER run: `npm run dev`\n" + "- keep the changelog tidy\n" * 30
    other = "y" * 900

    def read(call_id: str, path: str) -> dict[str, object]:
        arguments = orjson.dumps({"path": path}).decode()
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "read_file", "arguments": arguments},
                }
            ],
        }

    lines = [
        {"role": "user", "content": "read the rules, then the code"},
        read("call_1", "repo/AGENTS.md"),
        {"role": "tool", "tool_call_id": "call_1", "content": rules},
        read("call_2", "repo/src/app.py"),
        {"role": "tool", "tool_call_id": "call_2", "content": other},
        read("call_3", "repo/src/util.py"),
        {"role": "tool", "tool_call_id": "call_3", "content": "z" * 900},
        {"role": "assistant", "content": "read both"},
    ]
    path = tmp_path / "rules.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    _, after = _prune(path, keep_recent=1)
    assert after.records[2].raw["content"] == rules  # the rules the agent works by stay whole
    assert after.records[4].raw["content"] != other  # an ordinary read as old is cleared


def _shell_twice(tmp_path: Path, output: str) -> Transcript:
    return _twice(tmp_path, output, "bash", {"command": "python job.py"})


def test_an_older_copy_of_a_failed_output_keeps_its_error_line(tmp_path: Path) -> None:
    output = "Exit code 1\n" + "working...\n" * 40 + "ValueError: the job file is empty"
    after = _shell_twice(tmp_path, output)
    assert after.records[2].raw["content"].startswith("[Duplicate tool result cleared:")
    assert after.records[2].raw["content"].endswith("; failed: ValueError: the job file is empty]")
    assert after.records[4].raw["content"] == output


def test_a_rejected_call_is_never_cleared(tmp_path: Path) -> None:
    output = (
        "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if "
        "it was a file edit, the new_string was NOT written to the file). STOP what you are "
        "doing and wait for the user to tell you how to proceed."
    )
    after = _shell_twice(tmp_path, output)
    assert after.records[2].raw["content"] == output
    assert after.stats[-1].duplicates_cleared == 0


def test_placeholders_that_leave_the_context_no_smaller_are_not_written(tmp_path: Path) -> None:
    """A short result whose placeholder, with the error line it keeps, is barely smaller than
    it, in a record whose form around it costs more after: the context would grow, so prune
    writes nothing (found by the property test below)."""
    session = "5e55a0e0-0000-4000-8000-000000000001"

    def record(n: int, kind: str, message: dict[str, object], **extra: object) -> bytes:
        parent = f"0000000{n - 1}-0000-4000-8000-00000000000{n - 1}" if n > 1 else None
        return orjson.dumps(
            {
                "parentUuid": parent,
                "isSidechain": False,
                "userType": "external",
                "cwd": "/work/project",
                "sessionId": session,
                "version": "2.1.112",
                "type": kind,
                "message": message,
                "uuid": f"0000000{n}-0000-4000-8000-00000000000{n}",
                "timestamp": f"2026-05-01T10:00:0{n}.000Z",
                **extra,
            }
        )

    output = "\n".join(f"   {i}  pnpm ECONNREFUSED failing config push" for i in range(5))
    path = tmp_path / "claude-code.jsonl"
    path.write_bytes(
        b"\n".join(
            [
                record(1, "user", {"role": "user", "content": "fix"}),
                record(
                    2,
                    "assistant",
                    {
                        "id": "msg_2",
                        "type": "message",
                        "role": "assistant",
                        "model": "claude-opus-4-5",
                        "content": [
                            {
                                "type": "tool_use",
                                "id": "toolu_9",
                                "name": "Edit",
                                "input": {"file_path": "ls -la"},
                            }
                        ],
                        "stop_reason": "tool_use",
                    },
                ),
                record(
                    3,
                    "user",
                    {
                        "role": "user",
                        "content": [
                            {"type": "tool_result", "tool_use_id": "toolu_9", "content": output}
                        ],
                    },
                    toolUseResult={"stdout": output, "stderr": "", "interrupted": False},
                ),
            ]
        )
        + b"\n"
    )
    _, after = _prune(path, keep_recent=0, min_chars=0)
    stats = after.stats[-1]
    assert stats.tokens_after <= stats.tokens_before
    if not stats.changed:
        assert to_bytes(after) == path.read_bytes()
        assert stats.results_cleared == 0
