"""A session `compactcli gc` shrank resumes in the real agent with the same first request.

Every Claude Code and pi session (the bundled fixtures and the corpus's, and the corpus's again
once compactcli compacted them to a tenth, the compaction the resume tests make and resume) is
collected with `compactcli gc`, and the real agent resumes the original (the run the other tests
of that session share) and the collected file against the fake Anthropic server: the first model
request after each resume must hold the same system prompt, tools and messages (the run's own
folder aside); a file gc leaves unchanged must be the same bytes. gc is at least 50% smaller on
the corpus sessions that hold a compaction. The real Codex resumes each rollout that holds a
compaction replacing its history (the bundled ones, and the corpus's once compactcli compacted
them) before and after gc, and sends the same instructions, tools and input.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.agents.codex_resume import resume_codex
from tests.agents.conftest import Agents, Runs
from tests.agents.resume import ANSWER, PROMPT
from tests.agents.resume_checks import check_answered_once
from tests.agents.sessions import Session, require, sessions
from tests.cli_runner import run
from tests.conftest import CORPUS, FIXTURES

SESSIONS = [pytest.param("claude", s, id=s.name) for s in sessions("claude")] + [
    pytest.param("pi", s, id=f"pi/{s.name}") for s in sessions("pi")
]


def _collected(session: Session, folder: Path) -> tuple[Path, dict[str, Any]]:
    out = folder / session.path.name
    done = run("gc", str(session.path), "-o", str(out), "--json")
    assert done.exit_code == 0, done.stderr
    row = orjson.loads(done.stdout)
    if row["status"] == "unchanged":
        out.write_bytes(session.path.read_bytes())
    return out, row


def _normal(
    body: dict[str, object], folder: Path, keys: tuple[str, ...] = ("system", "tools", "messages")
) -> dict[str, object]:
    """`body` with the run's folder (its home and working directory, and Claude Code's project
    name for it) written as one placeholder, so that two runs in two folders compare, and so is
    the date Claude Code tells the model (two runs may fall either side of midnight)."""
    text = json.dumps({k: body.get(k) for k in keys})
    text = text.replace(str(folder), "<run>")
    text = text.replace(re.sub(r"[^a-zA-Z0-9]", "-", str(folder)), "<run>")
    text = re.sub(r"Today's date is \d{4}-\d{2}-\d{2}", "Today's date is <date>", text)
    normal: dict[str, object] = json.loads(text)
    return normal


def _compacted_first(agent: str) -> list[object]:
    """The corpus's sessions of `agent` once compactcli compacted them (compact appends; gc then
    shrinks the file)."""
    return [
        pytest.param(agent, s, id=f"{agent}/compacted/{s.name}")
        for s in sessions(agent)
        if s.name.startswith("corpus")
    ]


@pytest.mark.parametrize(("agent", "session"), _compacted_first("claude") + _compacted_first("pi"))
def test_a_compacted_then_collected_session_sends_the_same_first_request(
    agent: str, session: Session, runs: Runs, tmp_path: Path
) -> None:
    require(session)
    compacted = runs.compacted(session, "tenth")  # and resumed by the resume tests: shared
    if not compacted.changed:  # a single turn: the session as it is, which the test below runs
        assert compacted.path.read_bytes() == session.path.read_bytes()
        return
    test_a_collected_session_sends_the_same_first_request(
        agent, Session(session.name, compacted.path, agent), runs, tmp_path / "then"
    )


@pytest.mark.parametrize(("agent", "session"), SESSIONS)
def test_a_collected_session_sends_the_same_first_request(
    agent: str, session: Session, runs: Runs, tmp_path: Path
) -> None:
    require(session)
    collected, row = _collected(session, tmp_path / "gc")
    data = session.path.read_bytes()
    if row["status"] == "unchanged":  # the same bytes: the same first request
        assert collected.read_bytes() == data
        return
    original = runs.resumed(agent, session.path)  # shared with the other tests of the session
    check_answered_once(original)
    resumed = runs.resume(agent, collected, tmp_path / "collected")
    check_answered_once(resumed)
    assert _normal(resumed.first, resumed.folder) == _normal(original.first, original.folder)
    compactions = data.count(b'"compact_boundary"') + data.count(b'"type":"compaction"')
    if session.name.startswith("corpus/") and compactions:
        assert row["bytes_after"] <= row["bytes_before"] / 2, row


def _codex_rollouts() -> list[object]:
    """Rollouts that hold a compaction that replaces the history: the bundled ones, and each
    corpus rollout once compactcli compacted it (compact appends; gc then shrinks the file)."""
    found: list[object] = [
        pytest.param("codex", FIXTURES / "transcripts" / f"{name}.jsonl", False, id=name)
        for name in ("codex-compacted", "codex-compacted-remote")
    ]
    corpus = sorted(CORPUS.glob("codex-*.jsonl")) if CORPUS.is_dir() else []
    found += [pytest.param("codex", p, True, id=f"corpus/{p.stem}") for p in corpus]
    return found


@pytest.mark.parametrize(("agent", "path", "compact_first"), _codex_rollouts())
def test_a_collected_rollout_sends_the_same_first_request(
    agent: str, path: Path, compact_first: bool, agents: Agents, tmp_path: Path
) -> None:
    if compact_first:
        compacted = tmp_path / path.name
        done = run("compact", str(path), "--force", "--max-tokens", "5000", "-o", str(compacted))
        assert done.exit_code in (0, 1), done.stderr
        path = compacted
    out = tmp_path / "gc" / path.name
    done = run("gc", str(path), "-o", str(out), "--json")
    assert done.exit_code == 0, done.stderr
    row = orjson.loads(done.stdout)
    if row["status"] == "unchanged":
        pytest.skip("no compaction that replaces the history: gc keeps every line")
    assert row["bytes_after"] < row["bytes_before"]
    command = agents.command(agent)
    first, second = tmp_path / "original", tmp_path / "collected"
    original = resume_codex(command, path, PROMPT, first, ANSWER)
    resumed = resume_codex(command, out, PROMPT, second, ANSWER)
    assert original.exit_code == 0 and resumed.exit_code == 0, resumed.describe()
    keys = ("instructions", "tools", "input")
    assert _unstamped(_normal(resumed.first, second, keys)) == _unstamped(
        _normal(original.first, first, keys)
    )


RUN_STAMPS = frozenset({"id", "turn_id", "create_time"})
"""Keys whose values Codex makes afresh in each run for the items it adds on resume (its
instructions, environment context, the prompt)."""


def _unstamped(value: object) -> object:
    """`value` without `RUN_STAMPS` keys, at any depth."""
    if isinstance(value, dict):
        return {k: _unstamped(v) for k, v in value.items() if k not in RUN_STAMPS}
    if isinstance(value, list):
        return [_unstamped(v) for v in value]
    return value
