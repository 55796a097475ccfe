"""The sessions the real agents resume, their compactions, and compactcli's view of each.

`sessions(agent)` lists the bundled fixtures of that agent's format (`fixtures/transcripts`) and,
when `../shared/corpus` is there, its real sessions (`claude-code-*.jsonl`, and pi's
`pi-before-compaction.jsonl`); when it is not, one placeholder `Session` named "corpus" stands
for them, and `require(session)` skips its tests with one line naming the folder. A Claude Code
subagent's own transcript is left out: it is not a session (`claude --resume` answers "No
conversation found"), it is read when its parent is.

`compact(session, setting, folder, tokens_before)` runs `compactcli compact --force` (in-process,
the real command line) with the setting's options and returns what its `--json` report says:
"default" is the extractive summary with the default options, "tenth" adds `--max-tokens` at a
tenth of `tokens_before` (the session's size, as the default run reports it).

`view(path)` is compactcli's context view of a session (what it says the agent will send): its
`Item`s, comparable with a request's (`messages_api.items`), the call ids it answers, what the
person typed in its last prompt, and the summary it opens with.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from compactcli.formats import get_dialect
from compactcli.loading import read_transcript
from compactcli.stages.cuts import is_prompt
from compactcli.transcript import Message, Transcript, get_in
from compactcli.user_text import typed_text
from tests.agents.messages_api import Item
from tests.cli_runner import run
from tests.conftest import CORPUS, FIXTURES

SETTINGS = ("default", "tenth")
"""The compactions each session gets."""

_FORMAT = {"claude": "claude-code", "pi": "pi"}
_CORPUS_NAMES = {"claude": "claude-code-*.jsonl", "pi": "pi-*.jsonl"}
_NOT_SESSIONS = {"claude-code-subagent.jsonl"}  # a subagent's transcript: not resumable alone


@dataclass(frozen=True)
class Session:
    """A session file an agent resumes; `name` is its test id."""

    name: str
    path: Path
    agent: str  # "claude" or "pi"


@dataclass(frozen=True)
class Compacted:
    """One compaction of a session: the output file and compactcli's `--json` report."""

    session: Session
    setting: str
    path: Path
    report: dict[str, Any]
    exit_code: int

    @property
    def changed(self) -> bool:
        return bool(self.report.get("status") == "compacted")


@dataclass(frozen=True)
class View:
    """compactcli's context view of a session file."""

    items: list[Item]
    answered: set[str]  # call ids the view answers with a real result
    last_prompt: str | None  # what the person typed last (`compactcli.stages.cuts.is_prompt`)
    summary: str | None  # the text of the summary message the view starts with, if any


def sessions(agent: str) -> list[Session]:
    """The sessions of `agent`'s format: bundled fixtures, then the corpus when present."""
    prefix = _FORMAT[agent]
    found = [
        Session(f"fixtures/{p.stem}", p, agent)
        for p in sorted((FIXTURES / "transcripts").glob(f"{prefix}-*.jsonl"))
        if p.name not in _NOT_SESSIONS
    ]
    if CORPUS.is_dir():
        pattern = _CORPUS_NAMES[agent]
        found += [Session(f"corpus/{p.stem}", p, agent) for p in sorted(CORPUS.glob(pattern))]
    else:
        found.append(Session("corpus", CORPUS, agent))
    return found


def require(session: Session) -> None:
    """Skip the calling test when `session` stands for an absent corpus."""
    if not session.path.is_file():
        pytest.skip(
            f"the real sessions are not here: {CORPUS} (../shared/corpus beside the checkout)"
        )


def compact(session: Session, setting: str, folder: Path, tokens_before: int | None) -> Compacted:
    """Compact `session` with `setting` into `folder` (`tokens_before` sets the tenth)."""
    out = folder / f"{session.path.stem}.{setting}.jsonl"
    args = ["compact", str(session.path), "--force", "--json", "-o", str(out)]
    if setting == "tenth":
        assert tokens_before is not None
        args += ["--max-tokens", str(max(1, tokens_before // 10))]
    done = run(*args)
    assert done.exit_code in (0, 1), f"compactcli {' '.join(args)}: {done.stderr}"
    report = json.loads(done.stdout.splitlines()[-1])
    return Compacted(session, setting, out, report, done.exit_code)


def _items(transcript: Transcript, messages: Iterable[Message]) -> list[Item]:
    out: list[Item] = []
    for message in messages:
        role = "assistant" if message.role == "assistant" else "user"
        for block in message.blocks:
            if block.kind == "thinking":
                raw = get_in(transcript.records[message.index].raw, block.path)
                signature = _signature(raw)
                if signature is not None:
                    out.append(Item(role, "thinking", signature))
            elif block.kind == "tool_call" and block.call_id:
                out.append(Item(role, "call", block.call_id))
            elif block.kind == "tool_result" and block.call_id:
                out.append(Item(role, "result", block.call_id))
            elif block.kind == "text" and block.text.strip():
                out.append(Item(role, "text", block.text.strip()))
    return out


def view(path: Path) -> View:
    """compactcli's context view of the session at `path`."""
    transcript = read_transcript(str(path))
    context = get_dialect(transcript.format).context(transcript)
    answered = {b.call_id for m in context for b in m.tool_results if b.call_id}
    typed = [
        typed_text(b.text)[0] for m in context if is_prompt(m) for b in m.blocks if b.kind == "text"
    ]
    prompts = [t for t in typed if t]
    summary = context[0].text.strip() if context and context[0].summary else None
    return View(_items(transcript, context), answered, prompts[-1] if prompts else None, summary)


def _signature(block: Any) -> str | None:
    """A thinking block's signature (Claude Code's `signature`, pi's `thinkingSignature`)."""
    if not isinstance(block, dict):
        return None
    for key in ("signature", "thinkingSignature"):
        if isinstance(block.get(key), str) and block[key]:
            return str(block[key])
    return None
