"""`compactcli hook`: Claude Code's status line and its SessionStart hook after a compaction,
fed the payloads Claude Code gives; the transcript is only read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compactcli.hooks import LEDGER_HEADING
from tests.cli_runner import run
from tests.conftest import CORPUS, FIXTURES

T = FIXTURES / "transcripts"


def _payload(path: Path, **fields: object) -> str:
    payload = {
        "session_id": "00893aaf-19fa-41d2-8238-13269b9b3ca0",
        "transcript_path": str(path),
        "cwd": "/home/dana/src/almanac",
        **fields,
    }
    return json.dumps(payload)


def test_the_status_line_is_the_estimate_against_the_agents_trigger() -> None:
    path = T / "claude-code-session.jsonl"
    status = {"model": {"id": "claude-opus-4-6", "display_name": "Opus"}, "version": "2.1.185"}
    done = run("hook", input=_payload(path, **status))
    assert done.exit_code == 0
    report = json.loads(run("estimate", str(path), "--json").stdout)
    tokens, trigger, window = report["tokens"], report["threshold"], report["context_window"]
    assert done.stdout == (
        f"context {tokens:,} tokens: {tokens / trigger:.0%} of the compaction trigger "
        f"({trigger:,}), {tokens / window:.0%} of the window ({window:,})\n"
    )


@pytest.mark.parametrize(
    "path",
    [T / "claude-code-compacted.jsonl", *sorted(CORPUS.glob("claude-code-pv-case-review.jsonl"))],
    ids=lambda p: p.name,
)
def test_after_a_compaction_the_ledger_of_the_history_before_it_is_printed(path: Path) -> None:
    before = path.read_bytes()
    done = run("hook", input=_payload(path, hook_event_name="SessionStart", source="compact"))
    assert done.exit_code == 0
    assert done.stdout.startswith(LEDGER_HEADING + "\n\n## Goal\n")
    assert path.read_bytes() == before  # only read


def test_the_ledger_holds_what_only_the_history_before_the_boundary_says() -> None:
    path = T / "claude-code-compacted.jsonl"
    done = run("hook", input=_payload(path, hook_event_name="SessionStart", source="compact"))
    assert "Add a --json flag to the report command" in done.stdout


def test_other_sessions_starts_print_nothing() -> None:
    for source in ("startup", "resume", "clear"):
        payload = _payload(T / "claude-code-compacted.jsonl", hook_event_name="SessionStart")
        done = run("hook", input=payload.replace("}", f', "source": "{source}"}}'))
        assert (done.exit_code, done.stdout) == (0, "")


def test_a_payload_it_cannot_use_is_one_clear_line() -> None:
    missing = run("hook", input='{"hook_event_name": "Status"}')
    assert (missing.exit_code, missing.stderr) == (
        2,
        "error: the hook's JSON names no transcript_path\n",
    )
    broken = run("hook", input="not json")
    assert broken.exit_code == 3 and broken.stderr.startswith(
        "error: -: the hook's input is not JSON"
    )
    other = run("hook", input=_payload(T / "claude-code-session.jsonl", hook_event_name="Stop"))
    assert other.exit_code == 2 and "'Stop'" in other.stderr


def _entries(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_pi_s_compaction_gets_the_summary_of_what_comes_before_the_kept_entry() -> None:
    path = T / "pi-summarize-session.jsonl"
    messages = [e for e in _entries(path) if e.get("type") == "message"]
    kept = str(messages[-4]["id"])
    done = run(
        "hook",
        input=json.dumps(
            {
                "hook_event_name": "session_before_compact",
                "transcript_path": str(path),
                "first_kept_entry_id": kept,
            }
        ),
    )
    assert done.exit_code == 0, done.stderr
    assert done.stdout.startswith("## Goal\nThe CSV export in src/report/export.py")
    everything = run(
        "hook",
        input=json.dumps(
            {"hook_event_name": "session_before_compact", "transcript_path": str(path)}
        ),
    )
    assert everything.exit_code == 0 and len(everything.stdout) >= len(done.stdout)


def test_pi_s_event_on_another_format_is_refused() -> None:
    path = T / "claude-code-session.jsonl"
    done = run("hook", input=_payload(path, hook_event_name="session_before_compact"))
    assert (done.exit_code, done.stderr) == (
        2,
        f"error: {path}: session_before_compact comes from pi; this is a claude-code file\n",
    )


def test_the_pi_extension_ships_with_the_package() -> None:
    done = run("hook", "--pi-extension")
    found = Path(done.stdout.strip())
    assert done.exit_code == 0 and found.is_file()
    text = found.read_text()
    assert 'pi.on("session_before_compact"' in text and '["hook"]' in text


def test_codex_gets_the_ledger_as_its_hook_json() -> None:
    path = T / "codex-compacted.jsonl"
    done = run("hook", input=_payload(path, hook_event_name="SessionStart", source="compact"))
    assert done.exit_code == 0, done.stderr
    output = json.loads(done.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == "SessionStart"
    assert output["additionalContext"].startswith(
        "[compactcli: facts from the conversation before the last compaction"
    )
