"""Writing a summary into a Claude Code session (FORMATS.md §1.3, §1.5, §6).

`ClaudeCodeWriter` appends a `system/compact_boundary` record and an `isCompactSummary` user
record, as Claude Code's own partial compaction writes them, and leaves every input line where it
was: the kept tail is the input's own records, named as the boundary's preserved segment, so they
stay byte-identical except for the few whose `parentUuid` must change to make the tail one run of
the chain. The same input gives the same bytes. Protected head messages are quoted in the summary
(`quotes_head`), since the chain after a boundary is one run.
"""

from __future__ import annotations

import itertools
import uuid as uuidlib
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from compactcli.formats.claude_code.records import ENVELOPE_KEYS
from compactcli.formats.claude_code.state import chain_leaf, chain_parents
from compactcli.injection import Injection, seed
from compactcli.transcript import Message, Record, Transcript

_NAMESPACE = uuidlib.UUID("0b6f6f2a-52c4-4d0e-9a3c-61d1c6a4e7b5")
_MESSAGES = frozenset({"user", "assistant"})
SUMMARY_SUFFIX = "Recent messages are preserved verbatim."
SUMMARY_WRAPPER = ("", f"\n\n{SUMMARY_SUFFIX}")
"""What Claude Code puts around a summary it wrote (prefix, suffix)."""


class ClaudeCodeWriter:
    """Writes a summary as a compact boundary and a summary record appended to the session.

    1. The boundary: a `system/compact_boundary` record with `parentUuid: null`,
       `logicalParentUuid` the last kept record (the leaf), `compactMetadata` with `trigger`,
       `preTokens`, `postTokens`, `preservedSegment {headUuid, anchorUuid, tailUuid}` and
       `preservedMessages {anchorUuid, uuids, allUuids}` naming the kept tail, and our details
       under a top-level `compactcli` key.
    2. The summary: a `user` record with `isCompactSummary: true`,
       `isVisibleInTranscriptOnly: true` and string content (the framed summary), whose parent is
       the boundary.

    On resume Claude Code (`applyPreservedSegmentRelinks`) walks the segment from its tail back
    to its head along `parentUuid`, re-parents the head onto the summary, and drops everything
    physically before the boundary that is not on that walk, so the chain from the leaf reads
    boundary, summary, kept tail. Copies of the kept records after the summary would instead need
    fresh uuids and repeat every `tool_use` id and `message.id` in the file (a duplicate tool_use
    id is an API error; records sharing a message.id are merged on load).

    The kept records stay byte-identical when the kept tail is one run of the chain on disk, as
    current Claude Code writes a session. Two shapes are not: parallel tool calls written the
    older way (both `tool_use` records first, each result hanging off its own call), and a tail
    that reaches into the kept part of an earlier compaction (whose records keep their
    pre-compaction `parentUuid`). There the kept records whose parent is not the kept message
    before them get a new `parentUuid` and nothing else (`_relinks`), each tool result right
    after the call it answers; a record that is not a message (a `turn_duration` note, a silent
    attachment) stays in the chain when it sits between two kept messages already in order. The
    model sees the same messages, in the same atomic units.

    The boundary and the summary take the leaf's timestamp less one millisecond, so a Claude Code
    that predates preserved segments still resumes from the kept leaf (with the full history)
    rather than from the summary alone. Their uuids derive from the input; `sessionId`, `cwd`,
    `version`, `gitBranch` and the rest of the envelope are copied from the leaf, which must be a
    user or assistant record (Claude Code resumes from one). A session that ended on an API
    error after an attachment (`You've hit your limit`, which Claude Code does not send) has its
    context end on the attachment: the segment's tail is then the API error below it (`_leaf`),
    which the loader would otherwise drop with the attachment.
    """

    quotes_head = True
    alternating = False
    refusal = "the last message is not a user or assistant record, which Claude Code resumes from"

    def initial(self, context: Sequence[Message]) -> int:
        return 0

    def acceptor(
        self, transcript: Transcript, context: Sequence[Message]
    ) -> Callable[[int], bool] | None:
        """Any start, when the context ends on the leaf of its chain (`_leaf`)."""
        if not context:
            return None
        usable = _leaf(transcript, context[-1].index) is not None
        return lambda _position: usable

    def write(self, transcript: Transcript, injection: Injection) -> tuple[Record, ...]:
        records = list(transcript.records)
        order, relinks = _relinks(transcript, injection.context, injection.tail)
        for index, parent in relinks.items():
            records[index] = records[index].with_raw({**records[index].raw, "parentUuid": parent})
        relinked = transcript.evolve(records=tuple(records)) if relinks else transcript
        head_raw = records[order[0].index].raw
        leaf_raw = records[_leaf(transcript, order[-1].index) or order[-1].index].raw
        head_uuid = str(head_raw["uuid"])
        leaf_uuid = str(leaf_raw["uuid"])
        walk = _walk(relinked, leaf_uuid, head_uuid)
        key = seed(transcript.sha256, leaf_uuid, head_uuid, injection.text)
        boundary_uuid = _uuid(key + ":boundary")
        summary_uuid = _uuid(key + ":summary")
        stamp = _earlier(leaf_raw.get("timestamp"))
        envelope = {k: leaf_raw[k] for k in ENVELOPE_KEYS if k in leaf_raw}
        sidechain = leaf_raw.get("isSidechain") is True  # a subagent's own transcript
        boundary: dict[str, Any] = {
            "parentUuid": None,
            "logicalParentUuid": leaf_uuid,
            "isSidechain": sidechain,
            "type": "system",
            "subtype": "compact_boundary",
            "content": "Conversation compacted",
            "isMeta": False,
            "timestamp": stamp,
            "uuid": boundary_uuid,
            "level": "info",
            "compactMetadata": {
                "trigger": "manual",
                "preTokens": injection.tokens_before,
                "postTokens": injection.tokens_after,
                "preservedSegment": {
                    "headUuid": head_uuid,
                    "anchorUuid": summary_uuid,
                    "tailUuid": leaf_uuid,
                },
                "preservedMessages": {
                    "anchorUuid": summary_uuid,
                    "uuids": walk,
                    "allUuids": walk,
                },
            },
            **envelope,
            "compactcli": dict(injection.details),
        }
        summary: dict[str, Any] = {
            "parentUuid": boundary_uuid,
            "isSidechain": sidechain,
            "type": "user",
            "message": {"role": "user", "content": f"{injection.text}\n\n{SUMMARY_SUFFIX}"},
            "isVisibleInTranscriptOnly": True,
            "isCompactSummary": True,
            "uuid": summary_uuid,
            "timestamp": stamp,
            **envelope,
        }
        return (*records, Record(raw=boundary), Record(raw=summary))


def _leaf(transcript: Transcript, last: int) -> int | None:
    """The record a kept tail that ends on record `last` ends the chain on: `last`, a user or
    assistant record with a uuid; or, when `last` is an attachment Claude Code wrote after the
    last prompt (`deferred_tools_delta`), the chain's leaf below it, an API error Claude Code
    does not send (`You've hit your limit`), so that the preserved segment keeps both. None
    when there is no such record: Claude Code resumes from a user or assistant record."""
    raw = transcript.records[last].raw
    if not isinstance(raw.get("uuid"), str):
        return None
    if raw.get("type") in _MESSAGES:
        return last
    leaf = chain_leaf(transcript) if raw.get("type") == "attachment" else None
    if leaf is None or transcript.records[leaf].raw.get("type") not in _MESSAGES:
        return None
    below = _walk(transcript, str(transcript.records[leaf].raw.get("uuid")), raw["uuid"])
    return leaf if below[:1] == [raw["uuid"]] else None


def _uuid(text: str) -> str:
    return str(uuidlib.UUID(bytes=uuidlib.uuid5(_NAMESPACE, text).bytes, version=4))


def _earlier(stamp: Any) -> str:
    """One millisecond before an ISO-8601 `...Z` timestamp (the epoch when there is none)."""
    if isinstance(stamp, str):
        try:
            moment = datetime.fromisoformat(stamp) - timedelta(milliseconds=1)
        except ValueError:
            return stamp
        text = moment.isoformat(timespec="milliseconds")
        return text.replace("+00:00", "Z") if stamp.endswith("Z") else text
    return "1970-01-01T00:00:00.000Z"


def _order(tail: Sequence[Message]) -> list[Message]:
    """The kept messages in the order one run of the chain must hold them: context order, with
    each tool result record right after the last call it answers."""
    answers = {
        position: {b.call_id for b in m.tool_results if b.call_id}
        for position, m in enumerate(tail)
    }
    done: set[str] = set()
    placed: set[int] = set()
    out: list[Message] = []

    def place(position: int) -> None:
        placed.add(position)
        out.append(tail[position])
        done.update(b.call_id for b in tail[position].tool_calls if b.call_id)

    for position, message in enumerate(tail):
        if position in placed:
            continue
        place(position)
        if message.tool_calls:
            for later in range(position + 1, len(tail)):
                if later not in placed and answers[later] and answers[later] <= done:
                    place(later)
    return out


def _relinks(
    transcript: Transcript, context: Sequence[Message], tail: Sequence[Message]
) -> tuple[list[Message], dict[int, str]]:
    """The kept messages in run order, and the new `parentUuid` of each record that needs one."""
    records = transcript.records
    parent = chain_parents(transcript)
    messages = {str(m.id) for m in context}  # a message's id is its record's uuid
    order = _order(tail)
    relinks: dict[int, str] = {}
    for previous, message in itertools.pairwise(order):
        want = str(records[previous.index].raw["uuid"])
        current = parent.get(str(records[message.index].raw["uuid"]))
        seen: set[str] = set()
        while current is not None and current not in messages and current not in seen:
            seen.add(current)  # a record that is not a message: look through it
            current = parent.get(current)
        if current != want:
            relinks[message.index] = want
    return order, relinks


def _walk(transcript: Transcript, leaf: str, head: str) -> list[str]:
    """The uuids from `head` to `leaf` along the chain, head first."""
    parent = chain_parents(transcript)
    out: list[str] = []
    current: str | None = leaf
    while current is not None and current in parent and current not in out:
        out.append(current)
        if current == head:
            break
        current = parent[current]
    out.reverse()
    return out


def writer(format: str) -> ClaudeCodeWriter:
    """The writer of format `format` (the registry's entry point)."""
    return ClaudeCodeWriter()
