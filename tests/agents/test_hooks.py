"""`compactcli hook` as the real Claude Code's SessionStart hook after it compacts.

A session whose recorded usage is over Claude Code's auto-compact threshold (190,000 tokens of a
200,000 window) is resumed with the hook in the user's settings (`"matcher": "compact"`): Claude
Code compacts first, runs the hook with `"source": "compact"`, and adds what it prints to the
context. The request that answers the prompt must hold the facts `compactcli hook` read from the
history before the compaction; without the hook it does not.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.agents.codex_resume import resume_codex
from tests.agents.conftest import Agents
from tests.agents.messages_api import last_user_text, texts
from tests.agents.resume import ANSWER, PROMPT, resume_claude_code, resume_pi
from tests.agents.test_claude_code_resume import _stale
from tests.agents.test_codex_resume import last_context
from tests.agents.test_pi_resume import _stale as _stale_pi
from tests.conftest import FIXTURES

HEADER = "[compactcli: facts from the conversation before the last compaction"
HOOK = f"{Path(sys.executable).parent / 'compactcli'} hook"
SETTINGS = {
    "hooks": {
        "SessionStart": [{"matcher": "compact", "hooks": [{"type": "command", "command": HOOK}]}]
    }
}


@pytest.mark.parametrize("agent", ["claude"])
def test_after_claude_code_compacts_the_hook_facts_reach_its_next_request(
    agent: str, agents: Agents, tmp_path: Path
) -> None:
    source = FIXTURES / "transcripts" / "claude-code-summarize-session.jsonl"
    stale = _stale(source, tmp_path / source.name, 190_000)
    command = agents.command(agent)
    hooked = resume_claude_code(
        command, stale, PROMPT, tmp_path / "hooked", ANSWER, settings=SETTINGS
    )
    plain = resume_claude_code(command, stale, PROMPT, tmp_path / "plain", ANSWER, settings={})
    for resumed in (hooked, plain):
        assert resumed.exit_code == 0, resumed.describe()
        assert len(resumed.bodies) >= 2, resumed.describe()  # it compacted, then answered
        assert last_user_text(resumed.bodies[-1]) == PROMPT
    answered = json.dumps(hooked.bodies[-1])
    assert HEADER in answered, hooked.describe()
    assert "Files modified" in answered or "## Goal" in answered
    assert HEADER not in json.dumps(plain.bodies[-1])


EXTENSION = Path(__file__).resolve().parents[2] / "compactcli/data/pi/compactcli-compaction.ts"


@pytest.mark.parametrize("agent", ["pi"])
def test_pi_compacts_with_compactcli_s_summary_through_the_extension(
    agent: str, agents: Agents, tmp_path: Path
) -> None:
    """A pi session over pi's threshold (995,000 tokens recorded) is resumed with compactcli's
    extension installed: pi compacts before sending the prompt, with no summary request to the
    model; its compaction entry holds compactcli's summary, and the request that answers the
    prompt carries it. Without the extension pi asks the model for its summary."""
    source = FIXTURES / "transcripts" / "pi-summarize-session.jsonl"
    stale = _stale_pi(source, tmp_path / source.name, 995_000)
    command = agents.command(agent)
    environment = {"COMPACTCLI": str(Path(sys.executable).parent / "compactcli")}
    hooked = resume_pi(
        command, stale, PROMPT, tmp_path / "hooked", ANSWER,
        extensions=[EXTENSION], extra_env=environment,
    )  # fmt: skip
    assert hooked.exit_code == 0, hooked.describe()
    assert len(hooked.bodies) == 1, hooked.describe()  # the answer only: no summary request
    assert last_user_text(hooked.bodies[0]) == PROMPT
    entries = [json.loads(line) for line in hooked.after.splitlines()]
    compaction = [e for e in entries if e.get("type") == "compaction"][-1]
    summary = compaction["summary"]
    assert "## Goal" in summary or "Goal" in summary, summary[:500]
    assert summary[:200] in texts(hooked.bodies[0])
    plain = resume_pi(command, stale, PROMPT, tmp_path / "plain", ANSWER)
    assert plain.exit_code == 0 and len(plain.bodies) >= 2, plain.describe()


@pytest.mark.parametrize("agent", ["codex"])
def test_after_codex_compacts_the_hook_facts_reach_its_next_request(
    agent: str, agents: Agents, tmp_path: Path
) -> None:
    """A rollout resumed with Codex's auto-compact limit at its recorded context: Codex compacts
    first, runs the SessionStart hook with `"source": "compact"`, and the request that answers
    the prompt carries the ledger; without the hook it does not."""
    source = FIXTURES / "transcripts" / "codex-summarize-session.jsonl"
    limit = last_context(source)
    assert limit is not None
    hooks = {
        "hooks": {
            "SessionStart": [
                {"matcher": "compact", "hooks": [{"type": "command", "command": HOOK}]}
            ]
        }
    }
    command = agents.command(agent)
    hooked = resume_codex(command, source, PROMPT, tmp_path / "hooked", ANSWER, limit, hooks)
    plain = resume_codex(command, source, PROMPT, tmp_path / "plain", ANSWER, limit)
    for resumed in (hooked, plain):
        assert resumed.exit_code == 0, resumed.describe()
        assert resumed.compactions, resumed.describe()  # it compacted, then answered
    answered = json.dumps(hooked.model_requests[-1].body)
    assert HEADER in answered, hooked.describe()
    assert HEADER not in json.dumps(plain.model_requests[-1].body)
