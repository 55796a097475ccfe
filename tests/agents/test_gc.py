"""A session `compactcli gc` shrank resumes in the real Claude Code with the same first request.

Every Claude Code session (the bundled fixtures and the corpus's) is collected with
`compactcli gc`, and the real Claude Code resumes the original and the collected file against
the fake Anthropic server: the first model request after each resume must hold the same system
prompt, tools and messages (the run's own folder aside). gc is at least 50% smaller on the corpus sessions that hold a
compaction.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import orjson
import pytest

from tests.agents.conftest import Runs
from tests.agents.resume_checks import check_answered_once
from tests.agents.sessions import Session, require, sessions
from tests.cli_runner import run

SESSIONS = [pytest.param("claude", s, id=s.name) for s in sessions("claude")]


def _collected(session: Session, folder: Path) -> tuple[Path, dict[str, int]]:
    out = folder / session.path.name
    done = run("gc", str(session.path), "-o", str(out), "--json")
    assert done.exit_code == 0, done.stderr
    row = orjson.loads(done.stdout)
    if row["status"] == "unchanged":
        out.write_bytes(session.path.read_bytes())
    return out, row


def _normal(body: dict[str, object], folder: Path) -> dict[str, object]:
    """`body` with the run's folder (its home and working directory, and Claude Code's project
    name for it) written as one placeholder, so that two runs in two folders compare."""
    text = json.dumps({k: body.get(k) for k in ("system", "tools", "messages")})
    text = text.replace(str(folder), "<run>")
    text = text.replace(re.sub(r"[^a-zA-Z0-9]", "-", str(folder)), "<run>")
    normal: dict[str, object] = json.loads(text)
    return normal


@pytest.mark.parametrize(("agent", "session"), SESSIONS)
def test_a_collected_session_sends_the_same_first_request(
    agent: str, session: Session, runs: Runs, tmp_path: Path
) -> None:
    require(session)
    collected, row = _collected(session, tmp_path / "gc")
    first, second = tmp_path / "original", tmp_path / "collected"
    original = runs.resume(agent, session.path, first)
    check_answered_once(original)
    resumed = runs.resume(agent, collected, second)
    check_answered_once(resumed)
    assert _normal(resumed.first, second) == _normal(original.first, first)
    compactions = session.path.read_bytes().count(b'"compact_boundary"')
    if session.name.startswith("corpus/") and compactions:
        assert row["bytes_after"] <= row["bytes_before"] / 2, row
