"""Refusing invalid inputs, and `--repair`: the library (`compactcli.repair`) and the commands."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from compactcli import read_transcript, to_bytes, validate
from compactcli.errors import InvalidTranscript
from compactcli.formats import FORMATS, get_dialect
from compactcli.repair import admit, check, output_problem
from compactcli.transcript import Transcript
from tests.cli_runner import run
from tests.conftest import FIXTURES

INVALID = sorted((FIXTURES / "invalid").glob("*.jsonl"))
VALID = sorted((FIXTURES / "transcripts").glob("*.jsonl"))
UNREPAIRABLE = {
    "anthropic-first-role.jsonl": "first-role",  # nothing says what the user asked
    "pi-header.jsonl": "header",  # pi does not load a file without its header
}
COMMANDS = ("compact", "prune", "summarize")


def _read(path: Path) -> Transcript:
    return read_transcript(str(path))


def _planted(path: Path) -> str:
    stem = path.stem
    return stem[len("claude-code-") :] if stem.startswith("claude-code-") else stem.split("-", 1)[1]


def test_every_format_has_a_repair() -> None:
    for entry in FORMATS.values():
        assert callable(entry.repair()), entry.name


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.name)
def test_each_invalid_fixture_is_refused_then_repaired_or_named_unrepairable(path: Path) -> None:
    transcript = _read(path)
    with pytest.raises(InvalidTranscript) as refused:
        check(transcript)
    assert refused.value.exit_code == 1
    report = validate(transcript)
    assert [f.split(": ", 2)[1] for f in refused.value.findings] == [
        f"{f.severity} {f.code}"
        for f in sorted((*report.errors, *report.warnings), key=lambda f: (f.line, f.code))
    ]
    if path.name in UNREPAIRABLE:
        with pytest.raises(InvalidTranscript) as caught:
            admit(transcript, repair=True)
        assert f": {UNREPAIRABLE[path.name]}: " in str(caught.value)
        assert str(caught.value).startswith(f"{transcript.source}: cannot be repaired: line ")
        return
    admitted = admit(transcript, repair=True)
    assert validate(admitted.transcript).errors == ()
    assert admitted.repairs
    lines = {r.line for r in admitted.repairs}
    assert lines <= {r.lineno for r in transcript.records}
    planted = _planted(path)
    codes = {r.code for r in admitted.repairs}
    assert planted in codes or planted == "first-role"
    # a second repair finds nothing left to do
    assert admit(admitted.transcript, repair=True).repairs == ()


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_a_valid_fixture_is_admitted_as_it_is_unless_a_call_is_unanswered(path: Path) -> None:
    transcript = _read(path)
    assert admit(transcript).transcript is transcript
    report = validate(transcript)
    admitted = admit(transcript, repair=True)
    if any(w.code == "call-unanswered" for w in report.warnings):
        assert {r.code for r in admitted.repairs} == {"call-unanswered"}
        after = validate(admitted.transcript)
        assert after.errors == ()
        assert not any(w.code == "call-unanswered" for w in after.warnings)
        kept = {id(r) for r in admitted.transcript.records}
        assert sum(id(r) not in kept for r in transcript.records) <= 1  # nothing else is lost
    else:
        assert admitted.repairs == ()
        assert to_bytes(admitted.transcript) == path.read_bytes()


def _raw(transcript: Transcript) -> list[Any]:
    return [r.raw for r in transcript.records]


def test_claude_code_unanswered_call_gets_the_placeholder_between_it_and_what_followed() -> None:
    path = FIXTURES / "invalid" / "claude-code-call-unanswered.jsonl"
    before = _raw(_read(path))
    after = _raw(admit(_read(path), repair=True).transcript)
    assert len(after) == len(before) + 1
    call, added = after[1], after[2]
    assert next(iter(added)) == "parentUuid"
    assert added["parentUuid"] == call["uuid"] == added["sourceToolAssistantUUID"]
    assert added["type"] == "user" and added["sessionId"] == call["sessionId"]
    assert added["message"]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": call["message"]["content"][0]["id"],
            "content": "[Tool result missing due to internal error]",
            "is_error": True,
        }
    ]
    # the prompt that followed the call now follows its result, and the context holds both
    assert after[3]["parentUuid"] == added["uuid"]
    assert after[3:] != before[2:] and [r["uuid"] for r in after[3:]] == [
        r["uuid"] for r in before[2:]
    ]


def test_codex_unanswered_calls_get_an_aborted_output_right_after_them() -> None:
    path = FIXTURES / "transcripts" / "codex-interrupted.jsonl"
    before = _read(path)
    after = admit(before, repair=True).transcript
    added = [r.raw for r in after.records if r.lineno == 0]
    assert [a["payload"] for a in added] == [
        {"type": "function_call_output", "call_id": "call_int1", "output": "aborted"},
        {"type": "function_call_output", "call_id": "call_int2", "output": "aborted"},
    ]
    for position, record in enumerate(after.records):
        if record.lineno == 0:
            call = after.records[position - 1].raw
            assert call["payload"]["call_id"] == record.raw["payload"]["call_id"]
            assert record.raw["timestamp"] == call["timestamp"]


def test_pi_unanswered_call_gets_pis_own_result_and_keeps_the_chain() -> None:
    path = FIXTURES / "invalid" / "pi-result-not-adjacent.jsonl"
    after = admit(_read(path), repair=True).transcript
    raws = _raw(after)
    added = next(r for r, rec in zip(raws, after.records, strict=True) if rec.lineno == 0)
    assert added["message"]["content"] == [{"type": "text", "text": "No result provided"}]
    assert added["message"]["isError"] is True
    assert added["parentId"] == "33cc44dd"  # after the result of the call's other call
    assert next(r for r in raws if r.get("id") == "44dd55ee")["parentId"] == added["id"]
    context = get_dialect("pi").context(after)
    assert [b.call_id for m in context for b in m.tool_results] == [
        "toolu_01InVaLiD1",
        "toolu_01InVaLiD2",
    ]


def test_anthropic_results_are_hoisted_to_the_front_of_their_turn() -> None:
    path = FIXTURES / "invalid" / "anthropic-result-order.jsonl"
    after = _raw(admit(_read(path), repair=True).transcript)
    assert [b["type"] for b in after[2]["content"]] == ["tool_result", "text"]


def test_openai_unanswered_call_gets_a_tool_message_at_the_end_of_its_run() -> None:
    path = FIXTURES / "invalid" / "openai-call-unanswered.jsonl"
    before = _raw(_read(path))
    after = _raw(admit(_read(path), repair=True).transcript)
    added = [r for r in after if r not in before]
    assert added == [{"role": "tool", "tool_call_id": "call_Bb2", "content": "aborted"}]
    position = after.index(added[0])
    assert after[position - 1]["role"] == "tool"
    assert after[position + 1]["role"] != "tool"


def test_a_repair_that_would_not_read_back_as_its_format_is_refused(tmp_path: Path) -> None:
    lines = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Read it."},
        {
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "text"},
        {"role": "assistant", "content": True},
    ]
    path = tmp_path / "list.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    transcript = _read(path)
    assert transcript.format == "openai"
    with pytest.raises(InvalidTranscript) as caught:
        admit(transcript, repair=True)
    assert (
        "cannot be repaired: the repaired file would not validate: it would not read back as openai"
        in str(caught.value)
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_commands_refuse_an_invalid_input_and_write_nothing(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(FIXTURES / "invalid")
    output, stats = tmp_path / "out.jsonl", tmp_path / "stats.jsonl"
    result = run(command, "codex-orphan-result.jsonl", "-o", str(output), "--stats", str(stats))
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "codex-orphan-result.jsonl:9: error orphan-result: function_call_output call_id 'call_or2' "
        "has no earlier function_call or local_shell_call in its history",
        "error: codex-orphan-result.jsonl: invalid codex transcript (1 error): nothing written; "
        "--repair repairs it as the agent does when it loads a session",
    ]
    assert not output.exists() and not stats.exists()


@pytest.mark.parametrize("command", COMMANDS)
def test_commands_repair_report_each_repair_and_write_a_valid_output(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(FIXTURES / "invalid")
    output, stats = tmp_path / "out.jsonl", tmp_path / "stats.jsonl"
    source = Path("codex-orphan-result.jsonl")
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    result = run(command, str(source), "-o", str(output), "--stats", str(stats), "--repair")
    assert result.exit_code == 0
    line = (
        "codex-orphan-result.jsonl:9: repaired orphan-result: dropped function_call_output "
        "call_or2: no call before it has its id (Codex drops such an output)"
    )
    assert line in result.stderr.splitlines()
    assert validate(_read(output)).errors == ()
    lines = source.read_bytes().splitlines(keepends=True)
    if command != "summarize":  # nothing else to do: the repaired input itself
        assert output.read_bytes() == b"".join(lines[:8] + lines[9:])
    report = orjson.loads(stats.read_bytes().splitlines()[-1])
    assert report["source_sha256"] == digest
    assert report["stages"][0]["stage"] == "repair"
    assert report["stages"][0]["details"]["repairs"] == [
        {
            "line": 9,
            "code": "orphan-result",
            "action": "dropped function_call_output call_or2: no call before it has its id "
            "(Codex drops such an output)",
        }
    ]
    assert report["changed"] is True


def test_compact_json_gives_the_repairs_and_a_refused_files_findings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(FIXTURES / "invalid")
    out = str(tmp_path / "out.jsonl")
    repaired = orjson.loads(
        run("compact", "pi-orphan-result.jsonl", "--json", "--repair", "-o", out).stdout
    )
    assert repaired["status"] == "repaired" and repaired["exit_code"] == 0
    assert [r["code"] for r in repaired["repairs"]] == ["orphan-result"]
    assert "findings" not in repaired
    refused = run("compact", "pi-orphan-result.jsonl", "--json", "-o", str(tmp_path / "no.jsonl"))
    data = orjson.loads(refused.stdout)
    assert refused.exit_code == 1 and data["status"] == "failed"
    assert data["findings"] == [
        {
            "line": 5,
            "severity": "error",
            "code": "orphan-result",
            "message": "toolResult for unknown call 'toolu_01NoSuChCaLl'",
        }
    ]
    assert not (tmp_path / "no.jsonl").exists()


def test_compact_cannot_repair_names_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FIXTURES / "invalid")
    result = run("compact", "pi-header.jsonl", "--repair", "-o", str(tmp_path / "out.jsonl"))
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        "error: pi-header.jsonl: cannot be repaired: line 1: header: first record is a 'message' "
        'record, not the session header ({"type":"session","id":…}) (1 error left after 0 '
        "repairs); nothing written"
    )
    assert not (tmp_path / "out.jsonl").exists()


def test_repair_in_place_keeps_the_original_as_a_backup(tmp_path: Path) -> None:
    source = tmp_path / "session.jsonl"
    shutil.copy(FIXTURES / "invalid" / "claude-code-call-unanswered.jsonl", source)
    original = source.read_bytes()
    result = run("prune", str(source), "--in-place", "--repair")
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "session.jsonl.bak").read_bytes() == original
    assert validate(_read(source)).errors == ()


def test_dry_run_with_repair_writes_nothing(tmp_path: Path) -> None:
    output = tmp_path / "out.jsonl"
    path = FIXTURES / "invalid" / "claude-code-call-unanswered.jsonl"
    result = run("summarize", str(path), "--repair", "--dry-run", "-o", str(output))
    assert result.exit_code == 0
    assert not output.exists()
    assert "repaired call-unanswered" in result.stderr


def test_a_stage_result_that_would_not_validate_is_not_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import compactcli.stages.prune as module

    real = module.prune

    def broken(t: Transcript, *args: Any, **kwargs: Any) -> Transcript:
        result = real(t, *args, **kwargs)
        # drop the first tool result: its call is left unanswered mid-conversation
        index = next(m.index for m in get_dialect(t.format).context(t) if m.tool_results)
        return result.evolve(records=result.records[:index] + result.records[index + 1 :])

    monkeypatch.setattr(module, "prune", broken)
    output = tmp_path / "out.jsonl"
    result = run(
        "prune", str(FIXTURES / "transcripts" / "claude-code-session.jsonl"), "-o", str(output)
    )
    assert result.exit_code == 1
    assert "the result would not validate (line " in result.stderr
    assert result.stderr.rstrip().endswith("; nothing written")
    assert not output.exists()


def test_output_problem_is_none_for_an_unchanged_result() -> None:
    transcript = _read(FIXTURES / "transcripts" / "pi-session.jsonl")
    assert output_problem(transcript, transcript) is None


def test_redact_refuses_an_invalid_input_and_repairs_it_with_repair(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(FIXTURES / "invalid")
    output = tmp_path / "out.jsonl"
    refused = run("redact", "pi-orphan-result.jsonl", "-o", str(output))
    assert refused.exit_code == 1
    assert refused.stderr.splitlines()[0] == (
        "pi-orphan-result.jsonl:5: error orphan-result: toolResult for unknown call "
        "'toolu_01NoSuChCaLl'"
    )
    assert not output.exists()
    repaired = run("redact", "pi-orphan-result.jsonl", "-o", str(output), "--repair", "--json")
    assert repaired.exit_code == 0
    data = orjson.loads(repaired.stdout)
    assert data["status"] == "repaired"
    assert [r["code"] for r in data["repairs"]] == ["orphan-result"]
    assert "pi-orphan-result.jsonl:5: repaired orphan-result: " in repaired.stderr
    assert validate(_read(output)).errors == ()
