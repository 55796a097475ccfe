"""The `validate` command: one line per finding, a verdict per file, exit codes, --json."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from compactcli import read_transcript, to_bytes, validate
from tests.cli_runner import run
from tests.conftest import CORPUS, FIXTURES

INVALID = sorted((FIXTURES / "invalid").glob("*.jsonl"))
VALID = sorted((FIXTURES / "transcripts").glob("*.jsonl"))


def test_quiet_shows_only_the_errors_of_invalid_files(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FIXTURES)
    valid = run("validate", "-q", "transcripts/claude-code-interrupted.jsonl", "transcripts")
    assert (valid.exit_code, valid.stdout, valid.stderr) == (0, "", "")
    both = run("validate", "--quiet", "transcripts", "invalid/codex-orphan-result.jsonl")
    assert both.exit_code == 1
    lines = both.stdout.splitlines()
    assert len(lines) == 2 and lines[0].startswith("invalid/codex-orphan-result.jsonl:")
    assert " error " in lines[0]
    assert (
        lines[1]
        == "invalid/codex-orphan-result.jsonl: INVALID codex transcript (1 error, 0 warnings)"
    )


def test_quiet_also_leaves_out_the_warnings_of_a_skipped_line(tmp_path: Path) -> None:
    """`-q` is `options.Quiet` on standard error too: a line `--on-bad-line skip` leaves out
    is a warning, which `-q` does not print."""
    session = (FIXTURES / "transcripts" / "codex-session.jsonl").read_bytes()
    path = tmp_path / "bad-line.jsonl"
    path.write_bytes(session + b"{not json\n")
    loud = run("validate", "--on-bad-line", "skip", str(path))
    assert loud.exit_code == 0 and "skipped" in loud.stderr
    quiet = run("validate", "-q", "--on-bad-line", "skip", str(path))
    assert (quiet.exit_code, quiet.stdout, quiet.stderr) == (0, "", "")


def test_valid_file_with_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FIXTURES / "transcripts")
    result = run("validate", "claude-code-interrupted.jsonl")
    assert result.exit_code == 0
    assert result.stderr == ""
    assert result.stdout.splitlines() == [
        "claude-code-interrupted.jsonl:9: warning call-unanswered: tool_use "
        "toolu_01xDk73sJl6B04VkHaMiM8hF (Bash) has no tool_result: its branch ends there "
        "(Claude Code adds a placeholder result)",
        "claude-code-interrupted.jsonl: valid claude-code transcript (0 errors, 1 warning)",
    ]


def test_invalid_and_valid_files_together_exit_1(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FIXTURES)
    result = run(
        "validate", "invalid/codex-orphan-result.jsonl", "transcripts/openai-session.jsonl"
    )
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "invalid/codex-orphan-result.jsonl:9: error orphan-result: function_call_output "
        "call_id 'call_or2' has no earlier function_call or local_shell_call in its history",
        "invalid/codex-orphan-result.jsonl: INVALID codex transcript (1 error, 0 warnings)",
        "transcripts/openai-session.jsonl: valid openai transcript (0 errors, 0 warnings)",
    ]


def test_json_output_is_one_object_per_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FIXTURES / "invalid")
    result = run("validate", "--json", "openai-first-role.jsonl")
    assert result.exit_code == 1
    assert orjson.loads(result.stdout) == {
        "path": "openai-first-role.jsonl",
        "format": "openai",
        "errors": [
            {
                "line": 1,
                "code": "first-role",
                "message": "the list starts with a tool message, not a call",
            }
        ],
        "warnings": [],
    }


def test_unreadable_file_among_others_exits_3_and_still_reports_the_rest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(FIXTURES)
    result = run("validate", "broken/not-object.jsonl", "transcripts/pi-session.jsonl")
    assert result.exit_code == 3
    assert (
        result.stderr
        == "error: broken/not-object.jsonl:2: expected a JSON object, found an array\n"
    )
    assert (
        result.stdout
        == "transcripts/pi-session.jsonl: valid pi transcript (0 errors, 0 warnings)\n"
    )


def test_a_folder_is_every_jsonl_below_it() -> None:
    result = run("validate", "--json", str(FIXTURES / "transcripts"))
    reports = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert [Path(r["path"]).name for r in reports] == [p.name for p in VALID]
    assert result.exit_code == 0


def test_format_option_overrides_detection() -> None:
    result = run(
        "validate", "--format", "anthropic", str(FIXTURES / "transcripts" / "openai-session.jsonl")
    )
    assert result.exit_code == 1
    assert "INVALID anthropic transcript" in result.stdout.splitlines()[-1]


def test_unknown_format_name_is_a_usage_error() -> None:
    result = run("validate", "--format", "gemini", str(VALID[0]))
    assert result.exit_code == 2
    assert "'gemini' is not one of" in result.stderr


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.name)
def test_each_invalid_fixture_has_exactly_its_planted_error(path: Path) -> None:
    report = validate(read_transcript(str(path)))
    fmt, _, code = path.stem.partition("-")
    if path.stem.startswith("claude-code-"):
        fmt, code = "claude-code", path.stem[len("claude-code-") :]
    assert report.format == fmt
    assert [e.code for e in report.errors] == [code]


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_every_bundled_transcript_is_valid_and_round_trips(path: Path) -> None:
    transcript = read_transcript(str(path))
    assert path.name.startswith(transcript.format + "-")
    assert validate(transcript).errors == ()
    assert to_bytes(transcript) == path.read_bytes()


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus not present")
def test_validate_the_whole_corpus_from_the_command_line() -> None:
    result = run("validate", "--json", str(CORPUS))
    assert result.exit_code == 0
    formats = {
        Path(r["path"]).name: r["format"] for r in map(orjson.loads, result.stdout.splitlines())
    }
    # a SWE-agent trajectory reads as the openai messages of its history
    assert all(
        name.startswith(fmt) or (name.endswith(".traj") and fmt == "openai")
        for name, fmt in formats.items()
    )
    assert len(formats) == len(list(CORPUS.glob("*.jsonl"))) + len(list(CORPUS.glob("*.traj")))
