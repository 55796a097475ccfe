"""A compactcli compaction of a session compactcli already compacted resumes in each agent.

The second run appends a second boundary (Claude Code) or compaction entry (pi) after the first;
the agent resumes from the second summary, and the first summary is gone with what it covered
(the second summary holds it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agents.conftest import Runs
from tests.agents.messages_api import texts
from tests.agents.resume_checks import (
    check_answered_once,
    check_compacted,
    check_holds_view,
    compaction_records,
)
from tests.agents.sessions import view
from tests.cli_runner import run
from tests.conftest import FIXTURES


@pytest.mark.parametrize(
    ("agent", "name"),
    [("claude", "claude-code-summarize-session"), ("pi", "pi-summarize-session")],
)
def test_a_second_compaction_over_ours_resumes(
    agent: str, name: str, runs: Runs, tmp_path: Path
) -> None:
    source = FIXTURES / "transcripts" / f"{name}.jsonl"
    once, twice = tmp_path / "once.jsonl", tmp_path / "twice.jsonl"
    for given, written, keep in ((source, once, "2000"), (once, twice, "200")):
        done = run(
            "compact", str(given), "--force", "--keep-recent-tokens", keep, "-o", str(written)
        )
        assert done.exit_code == 0, done.stderr
    assert compaction_records(agent, twice.read_bytes()) == 2
    first, second = view(once), view(twice)
    resumed = runs.resume(agent, twice, tmp_path / "run")
    check_answered_once(resumed)
    check_holds_view(resumed, second)
    assert first.summary is not None and first.summary not in texts(resumed.first)
    check_compacted(resumed, second, runs.resumed(agent, source), view(source))
