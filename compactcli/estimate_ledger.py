"""The per-message cost ledger that `estimate` counts into: a few integers per message.

`Ledger` keeps, for every message of a transcript in file order, its record index, role, unit,
fixed cost, text tokens and the (kind, tool) key of each of its blocks in compact arrays, so a
large file's costs are held without its messages. `feed_ledger(lines, streamer, ledger)` passes
every record to a format's `Streamer` and the messages it returns to the ledger, with the same
figures whether a counter counts texts one message at a time or in groups. `Lines` (and
`RecordLines` for records held in memory) gives the input line of each record."""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterable, Sequence
from typing import Any

from compactcli.formats.base import LightMessage, Streamer, light
from compactcli.tokens import HeuristicCounter, TiktokenCounter
from compactcli.transcript import Line, Message, Record

__all__ = ["NO_UNIT", "ROLES", "ROLE_ID", "Ledger", "Lines", "RecordLines", "feed_ledger"]

ROLES = ("system", "developer", "user", "assistant", "tool")
ROLE_ID = {role: i for i, role in enumerate(ROLES)}
NO_UNIT = 0


class Ledger:
    """Per-message costs (framing and text, split by block kind and tool), kept compactly.

    Per message, in file order: its record index, role, unit, fixed cost (framing and media),
    text tokens and framing under one counter. `add` and `add_light` add a message (out of file
    order: `ValueError`), `cost` gives a message's tokens with its text scaled by a factor, and
    `blocks_of` and `positions` read entries back.

    One entry of each array per message; a message of one block (most of them) keeps that
    block's (kind, tool) key in `key`, one of several blocks keeps -1 there and its blocks'
    (key, fixed, text) in `multi`.
    """

    def __init__(self, counter: HeuristicCounter | TiktokenCounter) -> None:
        self.counter = counter
        self.parts = counter.parts
        self.framing = counter.costs.framing_of
        self.frame_const = counter.costs.message if not counter.costs.turn else -1
        self.keys: dict[tuple[str, str], int] = {}
        self.key_list: list[tuple[str, str]] = []
        self.record = array("i")  # record index of each message (non-decreasing)
        self.role = array("b")
        self.unit = array("q")  # hash of the unit key, NO_UNIT for none
        self.fixed = array("i")  # framing and media tokens of the message
        self.text = array("i")  # text tokens of the message
        self.frame = array("i")  # the framing part of `fixed`
        self.key = array("i")
        self.multi: dict[int, list[tuple[int, int, int]]] = {}
        self.lines = Lines()
        self.last = -1  # the last record index added (messages come in file order)
        self.names: dict[str, str | None] = {}  # tool name by call id, of the calls added

    def __len__(self) -> int:
        return len(self.record)

    def key_of(self, kind: str, tool: str) -> int:
        found = self.keys.get((kind, tool))
        if found is None:
            found = self.keys[(kind, tool)] = len(self.key_list)
            self.key_list.append((kind, tool))
        return found

    def add(self, message: Message) -> None:
        """Add one message; a tool result that does not name its tool (the plain message
        formats) is counted under the tool of the call it answers."""
        part = self.counter.block_parts  # remembered per block: the stages count them again
        self.add_light(light(message, self.names), [part(b) for b in message.blocks])

    def add_light(
        self, message: LightMessage, counted: Sequence[tuple[int, int]] | None = None
    ) -> None:
        """Add one message; `counted` gives its blocks' (fixed, text) parts when known."""
        record, role, unit, blocks = message
        records = self.record
        if record < self.last:
            raise ValueError("messages must be added in file order")
        self.last = record
        frame = self.frame_const if self.frame_const >= 0 else self.framing(role, blocks)
        if len(blocks) == 1:
            kind, text, is_json, name, images = blocks[0]
            if counted is None:
                fixed, count = self.parts(kind, text, is_json, name, images)
            else:
                fixed, count = counted[0]
            tool = (name or "?") if kind == "tool_call" or kind == "tool_result" else ""
            key = self.keys.get((kind, tool))
            self.key.append(key if key is not None else self.key_of(kind, tool))
            fixed += frame
        else:
            fixed, count = frame, 0
            entries = []
            for position, (kind, text, is_json, name, images) in enumerate(blocks):
                if counted is None:
                    part, words = self.parts(kind, text, is_json, name, images)
                else:
                    part, words = counted[position]
                tool = (name or "?") if kind == "tool_call" or kind == "tool_result" else ""
                entries.append((self.key_of(kind, tool), part, words))
                fixed += part
                count += words
            self.multi[len(records)] = entries
            self.key.append(-1)
        records.append(record)
        self.role.append(ROLE_ID.get(role, 2))
        self.unit.append(hash(unit) if unit is not None else NO_UNIT)
        self.fixed.append(fixed)
        self.text.append(count)
        self.frame.append(frame)

    def blocks_of(self, position: int) -> list[tuple[int, int, int]]:
        """(key, fixed, text) of each block of message `position`."""
        key = self.key[position]
        if key >= 0:
            frame = self.frame[position]
            return [(key, self.fixed[position] - frame, self.text[position])]
        return self.multi[position]

    def positions(self, record: int) -> range:
        """The message positions of record `record` (empty when it has no message)."""
        low = bisect.bisect_left(self.record, record)
        high = bisect.bisect_right(self.record, record, lo=low)
        return range(low, high)

    def cost(self, position: int, factor: float = 1.0) -> int:
        """The tokens of message `position`: its fixed cost plus its text scaled by `factor`."""
        text = self.text[position]
        if factor != 1.0:
            text = int(text * factor + 0.5)
        return self.fixed[position] + text


class Lines:
    """The input line of each record, kept as the few places where line - index changes."""

    def __init__(self) -> None:
        self.starts = array("q")
        self.offsets = array("q")
        self.offset = 1

    def note(self, index: int, lineno: int) -> None:
        offset = lineno - index
        if offset != self.offset:
            self.starts.append(index)
            self.offsets.append(offset)
            self.offset = offset

    def get(self, index: int, default: int = 0) -> int:
        at = bisect.bisect_right(self.starts, index) - 1
        return index + (self.offsets[at] if at >= 0 else 1)


class RecordLines(Lines):
    """`Lines` of records held in memory: each record's line is read from the record."""

    def __init__(self, records: Sequence[Record]) -> None:
        super().__init__()
        self.records = records

    def get(self, index: int, default: int = 0) -> int:
        return self.records[index].lineno


def feed_ledger(
    lines: Iterable[tuple[int, Any, Line | None]], streamer: Streamer, ledger: Ledger
) -> int:
    """Feed every line's record to `streamer` and its messages to `ledger`; the record count.
    With a counter that counts in groups (tiktoken's `batch_chars`), a light streamer's messages
    (Claude Code's, whose records are parsed as they come) wait in a `_Batch` until their texts
    make one, with the same figures as one message at a time, and all have been added when this
    returns."""
    note = ledger.lines.note
    index = -1
    if streamer.light:
        batch = _Batch(ledger) if ledger.counter.batch_chars else None
        add_light = streamer.add_light
        take = ledger.add_light if batch is None else batch.add
        for index, (lineno, raw, _line) in enumerate(lines):
            note(index, lineno)
            if raw is None:
                continue
            for message in add_light(index, raw, lineno):
                take(message)
        if batch is not None:
            batch.flush()
    else:  # records buffered by the format until `finish`: nothing to count in groups here
        add = streamer.add
        for index, (lineno, raw, line) in enumerate(lines):
            note(index, lineno)
            for view in add(index, Record(raw=raw, line=line, lineno=lineno)):
                ledger.add(view)
    return index + 1


class _Batch:
    """Messages held until their texts reach the counter's `batch_chars`, then counted
    together (`parts_of`) and added to the ledger in the order they came."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.limit = ledger.counter.batch_chars
        self.messages: list[LightMessage] = []
        self.chars = 0

    def add(self, message: LightMessage) -> None:
        self.messages.append(message)
        for block in message[3]:
            self.chars += len(block[1])
        if self.chars >= self.limit:
            self.flush()

    def flush(self) -> None:
        messages = self.messages
        counted = self.ledger.counter.parts_of([b for m in messages for b in m[3]])
        take = self.ledger.add_light
        start = 0
        for message in messages:
            end = start + len(message[3])
            take(message, counted[start:end])
            start = end
        self.messages = []
        self.chars = 0
