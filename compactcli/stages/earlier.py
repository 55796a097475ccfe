"""What the middle of a conversation holds of earlier compactions, for the summarize stage.

`earlier(transcript, dialect, middle)` splits the messages a summary replaces into the bodies of
the earlier summaries among them (ours, or the agent's own: Claude Code `isCompactSummary`, Codex
`compacted`, pi `compaction`), the head a summary of ours quoted, the request it quoted, the
facts recorded with them (ours, or pi's own file lists), and the turns to summarize. When the
agent compacted a session we had compacted, the facts of our summary that its compaction
replaced are carried on too (`replaced_facts`). `carry_files` puts earlier file lists in front of
newer ones.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compactcli import boundary
from compactcli.formats import summary_wrappers
from compactcli.formats.base import Dialect
from compactcli.injection import has_preamble, split_request, unframe
from compactcli.stages.cuts import is_prompt
from compactcli.summarizers.facts import Facts
from compactcli.transcript import Compaction, Message, Transcript


@dataclass(frozen=True, slots=True)
class Earlier:
    """What the middle holds of earlier summaries."""

    text: str | None
    head: str
    facts: Facts | None
    turns: tuple[Message, ...]  # the middle's messages to summarize, in order
    request: str  # the request quoted by the newest of our summaries, when no prompt follows it
    replaced: bool = False  # `facts` are of a summary of ours the agent's own compaction replaced


def earlier(transcript: Transcript, dialect: Dialect, middle: Sequence[Message]) -> Earlier:
    """Split the middle into earlier summaries (their bodies, head quote, facts and quoted
    request) and turns.

    When the middle's summary is the agent's own, and the file holds a summary of ours from
    before that compaction (the agent compacted a session we had compacted: its summary was
    written from ours and need not restate what ours recorded), the facts recorded with ours are
    carried on beside the agent's summary (`replaced_facts`), so that what our summary kept is
    not lost to the agent's in between."""
    texts: list[str] = []
    head = ""
    facts: Facts | None = None
    turns: list[Message] = []
    request = ""
    agents: int | None = None  # the agent's own compaction whose summary the middle holds
    compactions = dialect.compactions(transcript) if any(m.summary for m in middle) else []
    for message in middle:
        if not message.summary:
            turns.append(message)
            request = "" if is_prompt(message) else request
            continue
        ours = [b for b in message.blocks if b.kind == "text" and has_preamble(b.text)]
        rest: Message | None = None
        if ours:
            blocks = tuple(b for b in message.blocks if not any(b is o for o in ours))
            if blocks:
                rest = dataclasses.replace(message, blocks=blocks, summary=False)
                turns.append(rest)
            source = "\n\n".join(b.text for b in ours)
        else:
            source = message.text
        body, quoted = unframe(source, summary_wrappers())
        if body:
            texts.append(body)
        head = quoted or head
        # a request stays current until a prompt follows (an agent's own summary may hold one)
        request = split_request(body)[1] if ours else ""
        if rest is not None and is_prompt(rest):
            request = ""
        for compaction in compactions:
            if message.index in (compaction.index, compaction.summary_index):
                found = _recorded_facts(transcript.records[compaction.index].raw)
                if found is not None:
                    facts = found if facts is None else carry_files(found, facts)
                if not compaction.ours:
                    agents = compaction.index
                break
    replaced = None
    if facts is None or facts.files_only():  # the agent's summary, with its file lists at most
        replaced = replaced_facts(transcript, dialect, compactions, agents)
    if replaced is not None:
        facts = carry_files(replaced, facts)
    joined = "\n\n".join(texts) if texts else None
    return Earlier(joined, head, facts, tuple(turns), request, replaced is not None)


def replaced_facts(
    transcript: Transcript, dialect: Dialect, compactions: Sequence[Compaction], agents: int | None
) -> Facts | None:
    """The facts recorded with the last summary of ours before the agent's own compaction at
    record `agents`, when that summary was in the context the agent compacted (the context of
    the records before it): not one on a branch the session had left (a rewind to before it)."""
    ours = [c for c in compactions if c.ours and agents is not None and c.index < agents]
    if not ours:
        return None
    last = ours[-1]
    before = transcript.evolve(records=transcript.records[:agents])
    places = {last.index, last.summary_index}
    if not any(m.summary and m.index in places for m in dialect.context(before)):
        return None
    return _recorded_facts(transcript.records[last.index].raw)


def _recorded_facts(raw: Any) -> Facts | None:
    """The facts recorded with an earlier compaction: ours, or pi's own file lists."""
    if not isinstance(raw, Mapping):
        return None
    ours = raw.get(boundary.MARK)
    if isinstance(ours, Mapping) and isinstance(ours.get("facts"), Mapping):
        try:
            return Facts.from_dict(dict(ours["facts"]))
        except (TypeError, ValueError):
            return None
    details = raw.get("details")
    if raw.get("type") == "compaction" and isinstance(details, Mapping):
        read = details.get("readFiles")
        modified = details.get("modifiedFiles")
        return Facts(
            files_read=_strings(read),
            files_modified=_strings(modified),
        )
    return None


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def carry_files(facts: Facts, previous: Facts | None) -> Facts:
    """`facts` with the earlier file lists in front of its own (each path once)."""
    if previous is None:
        return facts
    return dataclasses.replace(
        facts,
        files_read=tuple(dict.fromkeys((*previous.files_read, *facts.files_read))),
        files_modified=tuple(dict.fromkeys((*previous.files_modified, *facts.files_modified))),
    )
