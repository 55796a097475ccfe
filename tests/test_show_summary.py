"""`compact --show-summary` prints the summary a run writes, and with `--dry-run` the one it would
write, without writing anything."""

from __future__ import annotations

import json
from pathlib import Path

from compactcli import read_transcript
from compactcli.formats import get_dialect
from tests.cli_runner import run
from tests.conftest import FIXTURES

SESSION = FIXTURES / "transcripts" / "claude-code-summarize-session.jsonl"
KEEP = ("--force", "--keep-recent-tokens", "300")


def _written_summary(path: Path) -> str:
    transcript = read_transcript(str(path))
    context = get_dialect(transcript.format).context(transcript)
    (summary,) = [m for m in context if m.summary]
    return "\n".join(b.text for b in summary.blocks if b.kind == "text")


def test_the_summary_shown_is_the_one_written(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    done = run("compact", str(SESSION), *KEEP, "-o", str(out), "--show-summary")
    assert done.exit_code == 0
    header = f"== {SESSION}: summary\n"
    assert done.stdout.startswith(header)
    shown = done.stdout[len(header) :].split("\nfile ", 1)[0]
    assert shown == _written_summary(out)
    assert "## Goal" in shown


def test_a_dry_run_shows_it_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    dry = run("compact", str(SESSION), *KEEP, "-o", str(out), "--dry-run", "--show-summary")
    assert dry.exit_code == 0 and not out.exists()
    real = run("compact", str(SESSION), *KEEP, "-o", str(out), "--show-summary")
    assert dry.stdout.split("\nrecords:", 1)[0] == real.stdout.split("\nfile ", 1)[0]


def test_json_carries_it_and_records_on_standard_output_send_it_to_standard_error() -> None:
    done = run("compact", str(SESSION), *KEEP, "--dry-run", "--json", "--show-summary")
    row = json.loads(done.stdout)
    assert row["summary"].startswith("[compactcli summary")
    piped = run("compact", str(SESSION), *KEEP, "-o", "-", "--show-summary")
    assert piped.stdout.startswith("{") and f"== {SESSION}: summary" in piped.stderr
    unchanged = run("compact", str(SESSION), "--dry-run", "--json", "--show-summary")
    assert "summary" not in json.loads(unchanged.stdout)  # under the threshold: none made
