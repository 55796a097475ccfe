"""The real pi resumes original and compacted sessions (`pi -p ... --session FILE`).

Each session (the bundled pi fixtures and the corpus's pi session) is resumed as it is and after
`compactcli compact --force` at each setting (`sessions.SETTINGS`), against the fake Anthropic
server (set as the `anthropic` provider's `baseUrl` in pi's models.json); the first model request
after the resume is checked (`resume_checks`). A session the compaction left unchanged must come
out byte for byte (its resume is the original's).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.agents.conftest import Runs
from tests.agents.messages_api import last_user_text, texts
from tests.agents.resume import PROMPT
from tests.agents.resume_checks import (
    check_answered_once,
    check_holds_view,
    compaction_records,
)
from tests.agents.sessions import SETTINGS, Session, require, sessions, view
from tests.conftest import FIXTURES

SESSIONS = [pytest.param(s, id=s.name) for s in sessions("pi")]


@pytest.mark.parametrize("session", SESSIONS)
def test_original_resumes_with_its_history(session: Session, runs: Runs) -> None:
    require(session)
    resumed = runs.resumed("pi", session.path)
    check_answered_once(resumed)
    check_holds_view(resumed, view(session.path))


@pytest.mark.parametrize("setting", SETTINGS)
@pytest.mark.parametrize("session", SESSIONS)
def test_compacted_resumes_from_the_summary(session: Session, setting: str, runs: Runs) -> None:
    checked = runs.checked_compaction(session, setting)
    if checked is None:
        return
    compacted, after = checked
    # pi's form: one compaction entry appended, on the leaf, naming a kept entry
    records = [json.loads(line) for line in compacted.path.read_bytes().splitlines()]
    entry = records[-1]
    assert entry["type"] == "compaction" and "compactcli" in entry
    assert compaction_records("pi", compacted.path.read_bytes()) == (
        compaction_records("pi", session.path.read_bytes()) + 1
    )
    assert after.summary is not None and entry["summary"] in after.summary
    assert entry["tokensBefore"] > 0
    if "id" in entry:  # versions 2 and 3: the tree
        ids = {r.get("id"): r for r in records[1:-1]}
        assert entry["parentId"] == records[-2]["id"]
        assert ids[entry["firstKeptEntryId"]]["type"] != "compaction"
        kept = ids[entry["firstKeptEntryId"]].get("message", {}).get("role")
        assert kept != "toolResult"
    else:  # version 1: an index into the file's lines
        assert records[entry["firstKeptEntryIndex"]]["type"] == "message"


def _stale(source: Path, target: Path, tokens: int) -> Path:
    """`source` with the usage of every assistant message raised to `tokens`."""
    lines = []
    for line in source.read_bytes().splitlines():
        record = json.loads(line)
        message = record.get("message") if record.get("type") == "message" else None
        if isinstance(message, dict) and isinstance(message.get("usage"), dict):
            message["usage"].update(input=tokens, totalTokens=tokens)
        lines.append(json.dumps(record))
    target.write_text("\n".join(lines) + "\n")
    return target


@pytest.mark.parametrize("name", ["pi-summarize-session", "pi-session"])
def test_stale_usage_of_kept_messages_does_not_compact_again(
    name: str, runs: Runs, tmp_path: Path
) -> None:
    """The kept assistant messages keep the usage they had before the compaction (995,000
    tokens here, over pi's threshold for any window up to 1M): pi ignores usage older than the
    latest compaction entry (its timestamp is the leaf's, not earlier than any kept message),
    so the resume does not compact again. The original with the same usage does compact
    before sending the prompt, which shows the check can fail."""
    stale = _stale(FIXTURES / "transcripts" / f"{name}.jsonl", tmp_path / f"{name}.jsonl", 995_000)
    original = runs.resume("pi", stale, tmp_path / "original")
    assert original.exit_code == 0, original.describe()
    assert len(original.bodies) >= 2, original.describe()
    assert last_user_text(original.bodies[0]) != PROMPT
    assert last_user_text(original.bodies[-1]) == PROMPT
    assert compaction_records("pi", original.after) == compaction_records("pi", original.before) + 1

    session = Session(f"stale/{name}", stale, "pi")
    compacted = runs.compacted(session, "tenth")
    assert compacted.changed, compacted.report
    resumed = runs.resume("pi", compacted.path, tmp_path / "compacted")
    check_answered_once(resumed)
    check_holds_view(resumed, view(compacted.path))


@pytest.mark.parametrize("name", ["pi-summarize-session", "pi-v1"])
def test_pis_next_compaction_builds_on_ours(name: str, runs: Runs, tmp_path: Path) -> None:
    """When the answer after the resume fills the window (the model reports 995,000 input
    tokens), pi compacts after the turn, as it would later in a real session: its summary
    request carries our summary as the previous one, and its entry keeps the files our details
    list, starts its kept part no earlier than ours, and has the keys ours has (a version 1
    file's entry is migrated by pi to ids like the rest)."""
    session = Session(f"fixtures/{name}", FIXTURES / "transcripts" / f"{name}.jsonl", "pi")
    compacted = runs.compacted(session, "tenth")
    assert compacted.changed, compacted.report
    resumed = runs.resume("pi", compacted.path, tmp_path, reported_input=995_000)
    assert resumed.exit_code == 0 and resumed.outside == [], resumed.describe()
    assert len(resumed.bodies) == 2, resumed.describe()
    assert last_user_text(resumed.bodies[0]) == PROMPT
    records = [json.loads(line) for line in resumed.after.splitlines()]
    position = {r.get("id"): i for i, r in enumerate(records)}
    entries = [r for r in records if r.get("type") == "compaction"]
    ours = next(r for r in entries if "compactcli" in r)
    theirs = entries[-1]
    assert theirs is not ours and "compactcli" not in theirs
    assert f"<previous-summary>\n{ours['summary']}\n</previous-summary>" in texts(resumed.bodies[1])

    def files(entry: dict[str, Any]) -> set[str]:
        return set(entry["details"]["readFiles"]) | set(entry["details"]["modifiedFiles"])

    assert files(ours) <= files(theirs)
    assert position[theirs["firstKeptEntryId"]] >= position[ours["firstKeptEntryId"]]
    # `fromHook` is optional: pi reads a missing one as false (its own compaction)
    assert set(theirs) - {"fromHook"} <= set(ours)
    for key in set(theirs) & set(ours):
        assert type(theirs[key]) is type(ours[key]), key
