"""The real Claude Code resumes original and compacted sessions (`claude -p ... --resume ID`).

Each session (the bundled Claude Code fixtures and the corpus's Claude Code sessions) is resumed
as it is and after `compactcli compact --force` at each setting (`sessions.SETTINGS`), against the
fake Anthropic server; the first model request after the resume is checked (`resume_checks`).
A session the compaction left unchanged must come out byte for byte (its resume is the
original's).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.agents.conftest import Runs
from tests.agents.fake_server import AnthropicServer
from tests.agents.messages_api import last_user_text
from tests.agents.resume import PROMPT, Resumed
from tests.agents.resume_checks import (
    check_answered_once,
    check_holds_view,
    compaction_records,
)
from tests.agents.sessions import SETTINGS, Session, require, sessions, view
from tests.conftest import FIXTURES

SESSIONS = [pytest.param(s, id=s.name) for s in sessions("claude")]


@pytest.mark.parametrize("session", SESSIONS)
def test_original_resumes_with_its_history(session: Session, runs: Runs) -> None:
    require(session)
    resumed = runs.resumed("claude", session.path)
    check_answered_once(resumed)
    original = view(session.path)
    check_holds_view(resumed, original)


@pytest.mark.parametrize("setting", SETTINGS)
@pytest.mark.parametrize("session", SESSIONS)
def test_compacted_resumes_from_the_summary(session: Session, setting: str, runs: Runs) -> None:
    checked = runs.checked_compaction(session, setting)
    if checked is None:
        return
    compacted, after = checked
    # Claude Code's form: the compact boundary, then the summary record, start the chain
    records = [json.loads(line) for line in compacted.path.read_bytes().splitlines()]
    boundary, summary = records[-2], records[-1]
    assert boundary["subtype"] == "compact_boundary" and boundary["parentUuid"] is None
    assert summary["isCompactSummary"] is True and summary["parentUuid"] == boundary["uuid"]
    assert summary["message"]["content"].strip() == after.summary


def _stale(source: Path, target: Path, tokens: int) -> Path:
    """`source` with the usage of every assistant record raised to `tokens` (cache reads)."""
    lines = []
    for line in source.read_bytes().splitlines():
        record = json.loads(line)
        usage = (
            record.get("message", {}).get("usage") if record.get("type") == "assistant" else None
        )
        if isinstance(usage, dict):
            usage.update(
                input_tokens=1, cache_creation_input_tokens=0, cache_read_input_tokens=tokens
            )
        lines.append(json.dumps(record))
    target.write_text("\n".join(lines) + "\n")
    return target


def _context_tokens(resumed: Resumed) -> int:
    """The context size `claude -p /context` reports ("**Tokens:** 19.7k / 200k (10%)")."""
    found = re.search(r"\*\*Tokens:\*\* ([\d.]+)(k?) / ", resumed.stdout)
    assert found, resumed.describe()
    return round(float(found.group(1)) * (1000 if found.group(2) else 1))


@pytest.mark.parametrize(
    "name", ["claude-code-summarize-session", "claude-code-summarize-parallel"]
)
def test_stale_usage_of_kept_records_does_not_compact_again(
    name: str, runs: Runs, tmp_path: Path
) -> None:
    """The kept records keep the usage they had before the compaction (190,000 tokens here, over
    Claude Code's auto-compact threshold of a 200K window): Claude Code zeroes it on load (it
    reads our boundary's preserved segment), so the resume does not compact again and its
    `/context` report counts the compacted context instead of the stale usage. The original with
    the same usage does compact first and reports the stale figure, which shows both checks can
    fail."""
    stale = _stale(FIXTURES / "transcripts" / f"{name}.jsonl", tmp_path / f"{name}.jsonl", 190_000)
    original = runs.resume("claude", stale, tmp_path / "original")
    assert original.exit_code == 0, original.describe()
    # summary requests first (the prompt is not theirs), the answer last, a boundary written
    assert len(original.bodies) >= 2, original.describe()
    assert last_user_text(original.bodies[0]) != PROMPT
    assert last_user_text(original.bodies[-1]) == PROMPT
    assert compaction_records("claude", original.after) == 1
    theirs = [json.loads(line) for line in original.after.splitlines()]
    reported = runs.resume("claude", stale, tmp_path / "original-context", "/context")
    assert _context_tokens(reported) >= 190_000

    session = Session(f"stale/{name}", stale, "claude")
    compacted = runs.compacted(session, "tenth")
    assert compacted.changed, compacted.report
    resumed = runs.resume("claude", compacted.path, tmp_path / "compacted")
    check_answered_once(resumed)
    check_holds_view(resumed, view(compacted.path))
    reported = runs.resume("claude", compacted.path, tmp_path / "compacted-context", "/context")
    # /context asks the token-counting endpoint only, never the model
    assert reported.exit_code == 0 and reported.bodies == [], reported.describe()
    assert {r.route for r in reported.requests} == {AnthropicServer.COUNT_TOKENS}
    assert 0 < _context_tokens(reported) < 100_000

    # our boundary carries what Claude Code's own carries for its loader, in the same types
    boundary = next(r for r in theirs if r.get("subtype") == "compact_boundary")["compactMetadata"]
    ours = [json.loads(line) for line in compacted.path.read_bytes().splitlines()][-2][
        "compactMetadata"
    ]
    for key in ("trigger", "preTokens", "postTokens", "preservedSegment", "preservedMessages"):
        assert type(ours[key]) is type(boundary[key]), key
    assert ours["preservedSegment"].keys() == boundary["preservedSegment"].keys()
    assert ours["preservedMessages"].keys() == boundary["preservedMessages"].keys()
