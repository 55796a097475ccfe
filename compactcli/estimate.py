"""Token accounting: how full a transcript's context is, and how much the whole file holds.

`estimate(transcript, options)` and `estimate_file(path, options)` return an `EstimateReport`.
`estimate_file` streams the file: it reads one line at a time and keeps only what the format's
`Streamer` needs to decide the context view plus a few integers per message, never the whole
transcript. Both give the same report for the same bytes.

What is counted:

- `tokens`: the context view (what the model would see if the session resumed now, after the
  last compaction) under the chosen method; `file_tokens`: every message in the file.
- `by_role`, `by_block` (text, thinking, tool_call, tool_result, image, document, other, and
  `message` for per-message framing) and `by_tool` (calls and results by tool name): the
  context view, counted by `breakdown_method`.

Methods (`EstimateOptions.method`); every number in the report says which one made it:

- `heuristic`: the per-block rules of `compactcli.tokens.HeuristicCounter`.
- `exact`: tiktoken's count of each text (`compactcli.tokens.TiktokenCounter`).
- `usage`: what the agent recorded for its last request on the context view (`Dialect.usage`).
- `calibrated`: the heuristic with its densities scaled by one factor, fitted so that the
  estimated growth between consecutive usage anchors of this transcript matches the recorded
  growth in aggregate; plus the fixed part the file does not hold (system prompt, tool
  definitions), fitted as the median of recorded minus estimated at each anchor.
- `auto` (default): the last usage anchor plus the heuristic count of what the context view holds
  after it (how the agents measure themselves); the heuristic where nothing was recorded.

An assistant response counts as at least the `output_tokens` its usage anchor recorded (under
every counting method): that figure includes thinking that the file often keeps only as a
signature. What exceeds the counted text is reported under `by_block["thinking"]`.

Status: `over_window` when `tokens` exceed the context window, else `over_budget` when they
exceed `max_tokens`, else `over_threshold` when they reach the compaction threshold, else `ok`.

The library never prints; errors are `CompactError`s (`InputError` for unreadable input,
`BackendError` for a tokenizer that cannot be loaded, `UsageError` for bad options).
"""

from __future__ import annotations

import bisect
import itertools
import operator
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, BinaryIO

import orjson

from compactcli.dialects import SNIFF_RECORDS, detect_format, get_dialect
from compactcli.dialects.base import LightMessage, StreamedView, Streamer, light, streamed_view
from compactcli.dialects.mixed import checked_lines
from compactcli.errors import InputError, UsageError
from compactcli.jsonl import (
    _BOM,
    BadLines,
    OnBadLine,
    _describe_bad,
    _kind,
    display_name,
    first_line_reason,
    open_input,
)
from compactcli.limits import Limits, default_threshold, model_limits, parse_threshold, threshold
from compactcli.tokens import (
    METHODS,
    HeuristicCounter,
    TiktokenCounter,
    density_for,
    get_counter,
)
from compactcli.transcript import Line, Message, Record, Transcript, Usage

__all__ = [
    "METHODS",
    "STATUSES",
    "Calibration",
    "Delta",
    "EstimateOptions",
    "EstimateReport",
    "RecordedUsage",
    "estimate",
    "estimate_file",
    "estimate_records",
    "failures",
    "usage_deltas",
]

STATUSES = ("ok", "over_threshold", "over_budget", "over_window")
ROLES = ("system", "developer", "user", "assistant", "tool")
_ROLE_ID = {role: i for i, role in enumerate(ROLES)}
_NO_UNIT = 0
TRUSTED_OUTPUT = 0.3
"""Recorded output at least this share of the counted response is taken as its true size."""


@dataclass(frozen=True, slots=True)
class EstimateOptions:
    """What `estimate` counts with, and what it compares the count to."""

    method: str = "auto"
    model: str | None = None  # None: the model the transcript names
    context_window: int | None = None  # overrides the model's window
    threshold: str | None = None  # preset, "80%" or a token count; None: the format's agent
    max_tokens: int | None = None  # the CI budget

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            known = ", ".join(METHODS)
            raise UsageError(f"unknown method {self.method!r}; known methods: {known}")
        if self.threshold is not None:
            parse_threshold(self.threshold)
        if self.context_window is not None and self.context_window <= 0:
            raise UsageError("--context-window must be a positive number of tokens")
        if self.max_tokens is not None and self.max_tokens < 0:
            raise UsageError("--max-tokens must not be negative")


@dataclass(frozen=True, slots=True)
class RecordedUsage:
    """The agent's own record of its last request on the context view."""

    tokens: int  # the context size as the agent measures it
    input: int
    output: int
    cached: int
    line: int  # the input line that carries it
    requests: int  # usage anchors on the context view

    def to_dict(self) -> dict[str, Any]:
        return {
            "tokens": self.tokens,
            "input": self.input,
            "output": self.output,
            "cached": self.cached,
            "line": self.line,
            "requests": self.requests,
        }


@dataclass(frozen=True, slots=True)
class Calibration:
    """The fit behind `calibrated`: densities scaled by `factor`, plus a fixed `overhead`."""

    factor: float  # text tokens per heuristic text token
    chars_per_token: float  # the fitted density of tool output (the bulk of a transcript)
    deltas: int  # consecutive anchor pairs fitted
    overhead: int  # tokens the agent sends that the file does not hold

    def to_dict(self) -> dict[str, Any]:
        return {
            "factor": round(self.factor, 4),
            "chars_per_token": round(self.chars_per_token, 3),
            "deltas": self.deltas,
            "overhead": self.overhead,
        }


@dataclass(frozen=True, slots=True)
class Delta:
    """Growth between two consecutive usage anchors: recorded, and estimated from the file."""

    first_line: int
    last_line: int
    recorded: int
    estimated: int


@dataclass(frozen=True, slots=True)
class EstimateReport:
    """What `estimate` found for one transcript; `to_dict()` is the `--json` object."""

    path: str
    format: str
    method: str  # the method that made `tokens`
    tokens: int
    file_tokens: int
    file_tokens_method: str
    records: int
    messages: int
    context_messages: int
    by_role: Mapping[str, int]
    by_block: Mapping[str, int]
    by_tool: Mapping[str, int]
    breakdown_method: str
    usage: RecordedUsage | None
    after_usage: int | None  # `auto`: tokens estimated after the last usage anchor
    calibration: Calibration | None
    model: str | None
    context_window: int
    context_window_source: str
    max_output: int
    threshold: int
    threshold_spec: str
    threshold_rule: str
    max_tokens: int | None
    status: str

    @property
    def over(self) -> list[tuple[str, int, int]]:
        """(what, limit, excess) for every limit `tokens` is over: window, budget, threshold."""
        found: list[tuple[str, int, int]] = []
        if self.tokens > self.context_window:
            found.append(("window", self.context_window, self.tokens - self.context_window))
        if self.max_tokens is not None and self.tokens > self.max_tokens:
            found.append(("budget", self.max_tokens, self.tokens - self.max_tokens))
        if self.tokens >= self.threshold:
            found.append(("threshold", self.threshold, self.tokens - self.threshold))
        return found

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "format": self.format,
            "method": self.method,
            "tokens": self.tokens,
            "file_tokens": self.file_tokens,
            "file_tokens_method": self.file_tokens_method,
            "records": self.records,
            "messages": self.messages,
            "context_messages": self.context_messages,
            "by_role": dict(self.by_role),
            "by_block": dict(self.by_block),
            "by_tool": dict(self.by_tool),
            "breakdown_method": self.breakdown_method,
            "usage": self.usage.to_dict() if self.usage else None,
            "after_usage": self.after_usage,
            "calibration": self.calibration.to_dict() if self.calibration else None,
            "model": self.model,
            "context_window": self.context_window,
            "context_window_source": self.context_window_source,
            "max_output": self.max_output,
            "threshold": self.threshold,
            "threshold_spec": self.threshold_spec,
            "threshold_rule": self.threshold_rule,
            "max_tokens": self.max_tokens,
            "status": self.status,
        }


# ---------------------------------------------------------------------------------------------
# The ledger: a few integers per message, in file order


class _Ledger:
    """Per-message costs (framing and text, split by block kind and tool), kept compactly.

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
        self.unit = array("q")  # hash of the unit key, _NO_UNIT for none
        self.fixed = array("i")  # framing and media tokens of the message
        self.text = array("i")  # text tokens of the message
        self.frame = array("i")  # the framing part of `fixed`
        self.key = array("i")
        self.multi: dict[int, list[tuple[int, int, int]]] = {}
        self.lines = _Lines()
        self.last = -1  # the last record index added (messages come in file order)
        self.names: dict[str, str | None] = {}  # tool name by call id, of the calls added
        self._key = self.key.append
        self._record = self.record.append
        self._role = self.role.append
        self._unit = self.unit.append
        self._fixed = self.fixed.append
        self._text = self.text.append
        self._frame = self.frame.append

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
        self.role.append(_ROLE_ID.get(role, 2))
        self.unit.append(hash(unit) if unit is not None else _NO_UNIT)
        self.fixed.append(fixed)
        self.text.append(count)
        self.frame.append(frame)

    def add_total(self, record: int, role: str, unit: str | None, tokens: int) -> None:
        """Add one message by its whole cost, as `message_tokens` gives it: no split into
        framing, blocks and text, so the breakdowns and a calibration cannot be made."""
        if record < self.last:
            raise ValueError("messages must be added in file order")
        self.last = record
        self._key(-1)
        self.multi[len(self.record)] = []
        self._record(record)
        self._role(_ROLE_ID.get(role, 2))
        self._unit(hash(unit) if unit is not None else _NO_UNIT)
        self._fixed(tokens)
        self._text(0)
        self._frame(0)

    def add_one(
        self,
        record: int,
        role: str,
        unit: str | None,
        kind: str,
        text: str,
        is_json: bool,
        name: str | None,
        images: int,
    ) -> None:
        """`add_light` for a message of one block, given as plain arguments (the common case)."""
        if record < self.last:
            raise ValueError("messages must be added in file order")
        self.last = record
        frame = self.frame_const
        if frame < 0:
            frame = self.framing(role, ((kind, text, is_json, name, images),))
        fixed, count = self.parts(kind, text, is_json, name, images)
        tool = (name or "?") if kind == "tool_call" or kind == "tool_result" else ""
        key = self.keys.get((kind, tool))
        self._key(key if key is not None else self.key_of(kind, tool))
        self._record(record)
        self._role(_ROLE_ID.get(role, 2))
        self._unit(hash(unit) if unit is not None else _NO_UNIT)
        self._fixed(fixed + frame)
        self._text(count)
        self._frame(frame)

    def one_block_sink(
        self,
    ) -> Callable[[int, str, str | None, str, str, bool, str | None, int], None]:
        """`add_one` as a closure over this ledger's arrays: the same, with fewer lookups (it
        runs once per message of a large file)."""
        parts = self.counter.fast_parts()
        keys = self.keys
        key_of = self.key_of
        framing = self.framing
        frame_const = self.frame_const
        roles = _ROLE_ID
        put_key, put_record, put_role = self.key.append, self.record.append, self.role.append
        put_unit, put_fixed, put_text = self.unit.append, self.fixed.append, self.text.append
        put_frame = self.frame.append
        last = [self.last]

        def add_one(
            record: int,
            role: str,
            unit: str | None,
            kind: str,
            text: str,
            is_json: bool,
            name: str | None,
            images: int,
        ) -> None:
            if record < last[0]:
                raise ValueError("messages must be added in file order")
            last[0] = record
            frame = frame_const
            if frame < 0:
                frame = framing(role, ((kind, text, is_json, name, images),))
            fixed, count = parts(kind, text, is_json, name, images)
            tool = (name or "?") if kind == "tool_call" or kind == "tool_result" else ""
            key = keys.get((kind, tool))
            put_key(key if key is not None else key_of(kind, tool))
            put_record(record)
            put_role(roles.get(role, 2))
            put_unit(hash(unit) if unit is not None else _NO_UNIT)
            put_fixed(fixed + frame)
            put_text(count)
            put_frame(frame)
            self.last = record

        return add_one

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
        text = self.text[position]
        if factor != 1.0:
            text = int(text * factor + 0.5)
        return self.fixed[position] + text


class _Lines:
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


class _RecordLines(_Lines):
    """`_Lines` of records held in memory: each record's line is read from the record."""

    def __init__(self, records: Sequence[Record]) -> None:
        super().__init__()
        self.records = records

    def get(self, index: int, default: int = 0) -> int:
        return self.records[index].lineno


@dataclass(slots=True)
class _Anchor:
    usage: Usage
    produced: list[int] = field(default_factory=list)  # context positions of its response
    first: int = -1  # first of them (its request's input is everything before)


class _Analysis:
    """The context view over a ledger, with the usage anchors placed on it."""

    def __init__(self, ledger: _Ledger, view: StreamedView) -> None:
        self.ledger = ledger
        records = ledger.record
        last = dict(zip(records, range(len(records)), strict=True))  # record -> (last) message
        if len(last) == len(records):  # one message per record: no search needed
            context = array("q", map(last.__getitem__, filter(last.__contains__, view.context)))
        else:
            context = array("q")
            for record in view.context:
                context.extend(ledger.positions(record))
        self.context = context
        self.anchors = self._place(view.usage)

    def _place(self, usage: Sequence[Usage]) -> list[_Anchor]:
        """Tie each usage anchor to its response on the context view.

        The response is the assistant message of the record carrying the usage (Claude Code,
        pi), else the last assistant message before the first message written after it (Codex
        writes its usage after the response), with the other messages of its unit.
        """
        ledger, context = self.ledger, self.context
        records, roles, units_of = ledger.record, ledger.role, ledger.unit
        assistant = _ROLE_ID["assistant"]
        anchors = [_Anchor(u) for u in usage]
        wanted = {u.index for u in usage}
        direct: dict[int, int] = {}  # record -> slot of its last assistant message
        for slot, position in enumerate(context):
            if roles[position] == assistant and records[position] in wanted:
                direct[records[position]] = slot
        reply: dict[int, int] = {}  # id(anchor) -> context slot of its response
        pending: list[_Anchor] = []
        for anchor in anchors:
            hit = direct.get(anchor.usage.index)
            if hit is None:
                pending.append(anchor)
            else:
                reply[id(anchor)] = hit
        if pending:
            pending.sort(key=lambda a: a.usage.index)
            last = -1
            waiting = 0
            for slot, position in enumerate(context):
                record = records[position]
                while waiting < len(pending) and pending[waiting].usage.index < record:
                    if last >= 0:
                        reply[id(pending[waiting])] = last
                    waiting += 1
                if roles[position] == assistant:
                    last = slot
            for anchor in pending[waiting:]:
                if last >= 0:
                    reply[id(anchor)] = last
        members: dict[int, list[int]] = {}
        for anchor in anchors:
            hit = reply.get(id(anchor))
            if hit is not None and units_of[context[hit]] != _NO_UNIT:
                members[units_of[context[hit]]] = []
        if members:
            for slot, position in enumerate(context):
                if roles[position] == assistant:
                    group = members.get(units_of[position])
                    if group is not None:
                        group.append(slot)
        placed: list[_Anchor] = []
        for anchor in anchors:
            hit = reply.get(id(anchor))
            if hit is None:
                continue  # no reply on the context view: nothing to tie the usage to
            unit = units_of[context[hit]]
            anchor.produced = list(members[unit]) if unit != _NO_UNIT else [hit]
            anchor.first = anchor.produced[0]
            placed.append(anchor)
        return placed

    def produced_cost(self, anchor: _Anchor, factor: float) -> tuple[int, int]:
        """(counted, cost) of an anchor's response: its counted text, and what it costs.

        The cost is the recorded `output_tokens` when they can be the whole response (at least
        `TRUSTED_OUTPUT` of the counted text), else the counted text: older Claude Code versions
        recorded the usage of the stream's first event, a handful of output tokens.
        """
        ledger, context = self.ledger, self.context
        counted = sum(ledger.cost(context[slot], factor) for slot in anchor.produced)
        output = anchor.usage.output
        return counted, output if output >= TRUSTED_OUTPUT * counted else counted

    def excess(self, factor: float) -> int:
        """Recorded output minus counted text, over every anchor on the context view."""
        total = 0
        for anchor in self.anchors:
            counted, cost = self.produced_cost(anchor, factor)
            total += cost - counted
        return total

    def context_cost(self, factor: float = 1.0) -> int:
        ledger = self.ledger
        if factor == 1.0:
            return sum(map(ledger.fixed.__getitem__, self.context)) + sum(
                map(ledger.text.__getitem__, self.context)
            )
        return sum(ledger.cost(p, factor) for p in self.context)

    def file_cost(self, factor: float = 1.0) -> int:
        ledger = self.ledger
        if factor == 1.0:
            return sum(ledger.fixed) + sum(ledger.text)
        return sum(ledger.cost(p, factor) for p in range(len(ledger)))

    def after(self, anchor: _Anchor) -> list[int]:
        """Context slots after an anchor's request that its response does not account for."""
        mine = set(anchor.produced)
        return [s for s in range(anchor.first + 1, len(self.context)) if s not in mine]

    def pairs(self) -> Iterator[tuple[_Anchor, _Anchor, list[int]]]:
        """(earlier, later, slots in between) for consecutive anchors."""
        for earlier, later in zip(self.anchors, self.anchors[1:], strict=False):
            if later.first <= earlier.first:
                continue
            mine = set(earlier.produced)
            between = [s for s in range(earlier.first + 1, later.first) if s not in mine]
            yield earlier, later, between

    def deltas(self, factor: float = 1.0) -> list[tuple[int, int]]:
        """(recorded, estimated) growth for each pair of consecutive anchors."""
        ledger, context = self.ledger, self.context
        out: list[tuple[int, int]] = []
        for earlier, later, between in self.pairs():
            recorded = later.usage.context - earlier.usage.context
            _, cost = self.produced_cost(later, factor)
            estimated = sum(ledger.cost(context[s], factor) for s in between) + cost
            out.append((recorded, estimated))
        return out

    def fit(self) -> tuple[float, int] | None:
        """The factor that makes the estimated growth match the recorded growth in total."""
        pairs = list(self.pairs())
        if not pairs:
            return None
        recorded = sum(later.usage.context - earlier.usage.context for earlier, later, _ in pairs)
        if recorded <= 0:
            return None

        def total(factor: float) -> int:
            return sum(e for _, e in self.deltas(factor))

        low, high = 0.1, 10.0
        if total(low) >= recorded:
            return low, len(pairs)
        if total(high) <= recorded:
            return high, len(pairs)
        for _ in range(40):
            middle = (low + high) / 2
            if total(middle) < recorded:
                low = middle
            else:
                high = middle
        return (low + high) / 2, len(pairs)

    def overhead(self, factor: float) -> int:
        """Median over anchors of recorded context minus the estimate up to that anchor."""
        ledger, context = self.ledger, self.context
        prefix = [0]
        for position in context:
            prefix.append(prefix[-1] + ledger.cost(position, factor))
        gaps: list[int] = []
        floors = 0
        for anchor in self.anchors:
            counted, cost = self.produced_cost(anchor, factor)
            before = prefix[anchor.first] - sum(
                ledger.cost(context[s], factor) for s in anchor.produced if s < anchor.first
            )
            gaps.append(anchor.usage.context - (before + floors + cost))
            floors += cost - counted
        import statistics  # only the calibrated method gets here

        return max(0, int(statistics.median(gaps))) if gaps else 0

    def breakdown(self, factor: float) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
        """Tokens of the context view by role, by block kind and by tool.

        A response whose recorded output exceeds its counted text has the difference under
        `thinking` (what the file does not show); one whose recorded output is smaller has its
        blocks scaled down to it.
        """
        ledger, context = self.ledger, self.context
        by_role: dict[str, float] = {}
        by_block: dict[str, float] = {}
        by_tool: dict[str, float] = {}
        scale: dict[int, float] = {}
        hidden = 0
        for anchor in self.anchors:
            counted, cost = self.produced_cost(anchor, factor)
            if cost > counted:
                hidden += cost - counted
            elif cost < counted:
                for slot in anchor.produced:
                    scale[context[slot]] = cost / counted
        keys = ledger.key_list
        roles, frames, fixeds, texts, block_keys = (
            ledger.role,
            ledger.frame,
            ledger.fixed,
            ledger.text,
            ledger.key,
        )
        # sums per (role, block key) for the one-block messages that keep their counts
        sums: dict[tuple[int, int], list[int]] = {}
        for position in context:
            key = block_keys[position]
            if key < 0 or position in scale:
                self._add_slow(
                    position, factor, scale.get(position, 1.0), by_role, by_block, by_tool
                )
                continue
            entry = sums.get((roles[position], key))
            if entry is None:
                entry = sums[(roles[position], key)] = [0, 0, 0]
            entry[0] += frames[position]
            entry[1] += fixeds[position] - frames[position]
            entry[2] += texts[position]
        for (role_id, key), (frame, fixed, text) in sums.items():
            kind, tool = keys[key]
            role = ROLES[role_id]
            words = int(text * factor + 0.5) if factor != 1.0 else text
            by_role[role] = by_role.get(role, 0) + frame + fixed + words
            by_block["message"] = by_block.get("message", 0) + frame
            by_block[kind] = by_block.get(kind, 0) + fixed + words
            if tool:
                by_tool[tool] = by_tool.get(tool, 0) + fixed + words
        if hidden:
            by_role["assistant"] = by_role.get("assistant", 0) + hidden
            by_block["thinking"] = by_block.get("thinking", 0) + hidden
        return (
            {k: int(v + 0.5) for k, v in sorted(by_role.items(), key=_largest)},
            {k: int(v + 0.5) for k, v in sorted(by_block.items(), key=_largest)},
            {k: int(v + 0.5) for k, v in sorted(by_tool.items(), key=_largest)},
        )

    def _add_slow(
        self,
        position: int,
        factor: float,
        ratio: float,
        by_role: dict[str, float],
        by_block: dict[str, float],
        by_tool: dict[str, float],
    ) -> None:
        """Add one message to the breakdowns block by block, scaled by `ratio`."""
        ledger = self.ledger
        role = ROLES[ledger.role[position]]
        by_role[role] = by_role.get(role, 0) + ledger.cost(position, factor) * ratio
        frame = ledger.frame[position]
        by_block["message"] = by_block.get("message", 0) + frame * ratio
        for key, fixed, text in ledger.blocks_of(position):
            kind, tool = ledger.key_list[key]
            value = (fixed + text * factor) * ratio
            by_block[kind] = by_block.get(kind, 0) + value
            if tool:
                by_tool[tool] = by_tool.get(tool, 0) + value


_INDEX = operator.attrgetter("index")


def failures(
    report: EstimateReport, *, fail_on_threshold: bool = False
) -> list[tuple[str, int, int]]:
    """What fails the CI check for `report`: (what, limit, excess) for the budget (`max_tokens`)
    and, with `fail_on_threshold`, the compaction threshold."""
    return [
        item
        for item in report.over
        if item[0] == "budget" or (fail_on_threshold and item[0] == "threshold")
    ]


def _largest(item: tuple[str, float]) -> tuple[float, str]:
    return (-item[1], item[0])


# ---------------------------------------------------------------------------------------------
# Entry points


def estimate(
    transcript: Transcript,
    options: EstimateOptions = EstimateOptions(),
    *,
    counter: HeuristicCounter | TiktokenCounter | None = None,
    whole_file: bool = True,
    breakdown: bool = True,
) -> EstimateReport:
    """Count `transcript` (already read) under `options`.

    `counter` replaces the content counter the method would build (tests inject one).

    The format's views of `transcript` are counted (its messages, context and usage, made once
    per transcript and shared with the stages), not the records streamed again; the report is
    the one `estimate_file` gives for the same bytes.

    `whole_file=False` (with the `heuristic` and `exact` methods, whose figures for the context
    read nothing else) counts the context view only: `tokens`, the breakdowns and
    `context_messages` are the same, while `file_tokens` and `messages` then cover the context
    view and not the whole file. Compaction decides on the context alone.

    `breakdown=False` (with `whole_file=False`) counts each message whole with the counter's
    `message_tokens`, which the stages share, and leaves the breakdowns by role, block and tool
    empty; every other figure is the same.
    """
    records = transcript.records
    dialect = get_dialect(transcript.format)
    context_only = not whole_file and options.method in ("heuristic", "exact")
    view = streamed_view(
        dialect,
        transcript,
        messages=not (context_only and not breakdown and dialect.one_message_per_record),
    )
    content = counter or get_counter(
        "heuristic" if options.method in ("auto", "usage") else options.method,
        model=options.model or _peek_model(records[:SNIFF_RECORDS], transcript.format),
        format=transcript.format,
    )
    ledger = _Ledger(content)
    ledger.lines = _RecordLines(records)
    add = ledger.add
    if not context_only:
        breakdown = True
        for message in view.messages:
            add(message)
    elif not breakdown and dialect.one_message_per_record:
        # the context view holds every message of its records: count those, in file order
        tokens = content.message_tokens
        total = ledger.add_total
        last = -1
        for message in sorted(dialect.context(transcript), key=_INDEX):
            if message.index != last:  # each record once, as `view.messages` has it
                total(message.index, message.role, message.unit, tokens(message))
                last = message.index
    else:
        wanted = set(view.context)
        tokens = content.message_tokens
        total = ledger.add_total
        for message in view.messages:
            if message.index in wanted:
                if breakdown:
                    add(message)
                else:
                    total(message.index, message.role, message.unit, tokens(message))
    return _report(
        ledger,
        view,
        options,
        format=transcript.format,
        source=transcript.source,
        records=len(records),
        breakdown=breakdown,
    )


def estimate_records(
    records: Iterable[Record],
    format: str,
    options: EstimateOptions = EstimateOptions(),
    *,
    source: str = "-",
    counter: HeuristicCounter | TiktokenCounter | None = None,
    model_hint: str | None = None,
) -> EstimateReport:
    """Count a stream of `records` of a known `format`, holding one record at a time.

    The content counter follows `options.model`, else `model_hint` (the model the first
    records name), else the format.
    """
    lines = ((r.lineno, r.raw, r.line) for r in records)
    return _estimate_lines(lines, format, options, source, counter, model_hint)


def _estimate_lines(
    lines: Iterable[tuple[int, Any, Line | None]],
    format: str,
    options: EstimateOptions,
    source: str,
    counter: HeuristicCounter | TiktokenCounter | None,
    model_hint: str | None,
) -> EstimateReport:
    content = counter or get_counter(
        "heuristic" if options.method in ("auto", "usage") else options.method,
        model=options.model or model_hint,
        format=format,
    )
    ledger = _Ledger(content)
    streamer = get_dialect(format).streamer(source)
    count = _feed(lines, streamer, ledger)
    view = streamer.finish()
    for message in view.messages:
        ledger.add(message)
    return _report(ledger, view, options, format=format, source=source, records=count)


def _feed(
    lines: Iterable[tuple[int, Any, Line | None]], streamer: Streamer, ledger: _Ledger
) -> int:
    """Feed every line's record to `streamer` and its messages to `ledger`; the record count."""
    note = ledger.lines.note
    index = -1
    feed = getattr(streamer, "feed", None)
    if feed is not None:
        count: int = feed(lines, ledger.add_light, note, ledger.one_block_sink())
        return count
    if streamer.light:
        add_light = streamer.add_light
        take = ledger.add_light
        for index, (lineno, raw, _line) in enumerate(lines):
            note(index, lineno)
            if raw is None:
                continue
            for message in add_light(index, raw, lineno):
                take(message)
    else:
        add = streamer.add
        for index, (lineno, raw, line) in enumerate(lines):
            note(index, lineno)
            for view in add(index, Record(raw=raw, line=line, lineno=lineno)):
                ledger.add(view)
    return index + 1


_BLOCK = 1 << 18
"""Bytes read at a time: small enough to stay in the CPU's caches while their lines are parsed."""

Trim = Callable[[bytes, int, int], "bytes | None"]
"""A streamer's `trim_span`: what to parse instead of line `data[start:end]`, or None."""


def _spans(handle: BinaryIO) -> Iterator[tuple[bytes, int, int]]:
    """The input as (data, start, stop): runs of whole lines `data[start:stop]`, in order.

    Lines are not copied out of the blocks read; only a line that runs across blocks is joined
    into a `data` of its own (the last line may lack its newline).
    """
    read = handle.read
    pending: list[bytes] = []  # the start of a line that runs on into the next block
    while True:
        block = read(_BLOCK)
        if not block:
            if pending:
                tail = b"".join(pending)
                yield tail, 0, len(tail)
            return
        first = block.find(b"\n") + 1
        if not first:
            pending.append(block)
            continue
        start = 0
        if pending:
            pending.append(block[:first])
            joined = b"".join(pending)
            pending = []
            yield joined, 0, len(joined)
            start = first
        last = block.rfind(b"\n") + 1
        if start < last:
            yield block, start, last
        if last < len(block):
            pending.append(block[last:])


def read_lines(
    path: str,
    *,
    on_bad_line: OnBadLine = "error",
    bad: BadLines | None = None,
    trim: list[Trim] | None = None,
) -> Iterator[tuple[int, Any, bytes | None]]:
    """(line number, parsed object or None, None or the line's bytes) for every record of `path`.

    The records and errors of `compactcli.jsonl.iter_records` (blank and kept lines give None
    and their bytes, skipped lines nothing, the same `InputError` for a bad line or a file with
    no record), read faster: each line is parsed where it lies in the block read, not copied
    (a parsed line gives None for its bytes), and nothing is hashed. When `trim` holds a
    function (it may be set while reading), each line is parsed as that function trims it, and
    whole when it cuts nothing or the trimmed bytes do not parse.
    """
    name = display_name(path)
    bad = bad if bad is not None else BadLines()
    loads = orjson.loads
    decode_error = orjson.JSONDecodeError
    seen_object = False
    lineno = 0
    trim = trim if trim is not None else []
    with open_input(path) as handle:
        for data, pos, stop in _spans(handle):
            view = memoryview(data)
            find = data.find
            while pos < stop:
                begin = start = pos
                pos = find(b"\n", pos, stop) + 1 or stop
                lineno += 1
                if lineno == 1 and data.startswith(_BOM, start):
                    start += 3
                try:
                    cut = trim[0](data, start, pos) if trim else None
                    raw = loads(view[start:pos] if cut is None else cut)
                except decode_error:
                    chunk = data[begin:pos]
                    body = chunk[start - begin :]
                    if body.isspace():
                        yield lineno, None, chunk
                        continue
                    line, eol = _split_eol(chunk)
                    text = line[3:] if lineno == 1 and line.startswith(_BOM) else line
                    try:  # the whole line, without its line ending, as iter_records parses it
                        raw = loads(text)
                    except decode_error as error:
                        reason = first_line_reason(
                            path, lineno, _describe_bad(line, text, error, last=eol == b"")
                        )
                        if on_bad_line == "error":
                            raise InputError(name, lineno, reason) from None
                        bad.lines.append((lineno, reason))
                        if on_bad_line == "keep":
                            yield lineno, None, chunk
                        continue
                if type(raw) is not dict:
                    reason = first_line_reason(
                        path, lineno, f"expected a JSON object, found {_kind(raw)}"
                    )
                    if on_bad_line == "error":
                        raise InputError(name, lineno, reason)
                    bad.lines.append((lineno, reason))
                    if on_bad_line == "keep":
                        yield lineno, None, data[begin:pos]
                    continue
                seen_object = True
                yield lineno, raw, None
    if not seen_object:
        if lineno == 0:
            raise InputError(name, None, "empty file: no records")
        if not bad:
            raise InputError(name, None, "no records: the file holds only blank lines")
        raise InputError(name, None, f"no readable record: all {len(bad)} bad lines skipped")


def _split_eol(chunk: bytes) -> tuple[bytes, bytes]:
    if chunk.endswith(b"\r\n"):
        return chunk[:-2], b"\r\n"
    if chunk.endswith(b"\n"):
        return chunk[:-1], b"\n"
    return chunk, b""


def estimate_file(
    path: str,
    options: EstimateOptions = EstimateOptions(),
    *,
    format: str | None = None,
    on_bad_line: OnBadLine = "error",
    bad: BadLines | None = None,
    counter: HeuristicCounter | TiktokenCounter | None = None,
) -> EstimateReport:
    """Count the transcript in file `path` (`-` for standard input), streaming it.

    The format is detected from the first records unless named. Raises `InputError` for
    unreadable input, as `read_transcript` does.
    """
    if format is not None:
        get_dialect(format)
    trim: list[Trim] = []
    stream = read_lines(path, on_bad_line=on_bad_line, bad=bad, trim=trim)
    head: list[tuple[int, Any, bytes | None]] = []
    objects: list[Any] = []
    for item in stream:
        head.append(item)
        if item[1] is not None:
            objects.append(item[1])
            if len(objects) >= SNIFF_RECORDS:
                break
    name = display_name(path)
    detected = format is None
    if format is None:
        format = detect_format(objects, name)
    trimmer = _trimmer(get_dialect(format).streamer())
    if trimmer is not None:
        trim.append(trimmer)
    hint = None
    if options.model is None and counter is None:
        hint = _peek_model([Record(raw=raw, lineno=lineno) for lineno, raw, _ in head], format)
    lines: Iterable[tuple[int, Any, bytes | None]] = itertools.chain(head, stream)
    if detected:  # a file that mixes formats is an error (compactcli.dialects.mixed)
        lines = checked_lines(lines, name)
    del head, objects  # the chain lets go of the head once it is read
    return _estimate_lines(lines, format, options, name, counter, hint)


def _trimmer(streamer: Streamer) -> Trim | None:
    """The streamer's `trim_span`, else its `trim` on the line's bytes; None when it has neither
    (the base class's `trim` cuts nothing)."""
    span: Trim | None = getattr(streamer, "trim_span", None)
    if span is not None:
        return span
    whole = streamer.trim
    if whole is Streamer.trim:
        return None

    def trim(data: bytes, start: int, end: int) -> bytes | None:
        line = data[start:end]
        cut = whole(line)
        return None if cut is line else cut

    return trim


def _peek_model(head: Sequence[Record], format: str) -> str | None:
    """The model the first records name, to choose the counter before streaming the rest."""
    transcript = Transcript(records=tuple(head), format=format)
    try:
        return get_dialect(format).model(transcript)
    except Exception:  # a partial head may not satisfy every view; the model is only a hint
        return None


def usage_deltas(
    records: Iterable[Record],
    format: str,
    *,
    counter: HeuristicCounter | TiktokenCounter | None = None,
    model: str | None = None,
    fit: bool = False,
) -> tuple[list[Delta], float | None]:
    """The growth between consecutive usage anchors of the context view, recorded and estimated.

    Estimates use `counter` (the heuristic for `model` by default); with `fit`, the densities
    are first scaled by the calibration factor fitted on these same deltas, which is returned
    too (None when there is nothing to fit or `fit` is false).
    """
    streamer = get_dialect(format).streamer()
    ledger = _Ledger(counter or get_counter("heuristic", model=model, format=format))
    _feed(((r.lineno, r.raw, r.line) for r in records), streamer, ledger)
    view = streamer.finish()
    for message in view.messages:
        ledger.add(message)
    analysis = _Analysis(ledger, view)
    factor: float | None = None
    if fit:
        fitted = analysis.fit()
        factor = fitted[0] if fitted else None
    deltas = [
        Delta(
            first_line=ledger.lines.get(earlier.usage.index, 0),
            last_line=ledger.lines.get(later.usage.index, 0),
            recorded=recorded,
            estimated=estimated,
        )
        for (earlier, later, _), (recorded, estimated) in zip(
            analysis.pairs(), analysis.deltas(factor or 1.0), strict=True
        )
    ]
    return deltas, factor


# ---------------------------------------------------------------------------------------------
# The report


def _report(
    ledger: _Ledger,
    view: StreamedView,
    options: EstimateOptions,
    *,
    format: str,
    source: str,
    records: int,
    breakdown: bool = True,
) -> EstimateReport:
    analysis = _Analysis(ledger, view)
    content_method = ledger.counter.method
    method = options.method
    factor = 1.0
    calibration: Calibration | None = None
    if method == "calibrated":
        fitted = analysis.fit()
        if fitted is not None:
            factor, pairs = fitted
            density = density_for(options.model or view.model, format)
            calibration = Calibration(
                factor=factor,
                chars_per_token=density.output / factor,
                deltas=pairs,
                overhead=analysis.overhead(factor),
            )
    breakdown_method = "calibrated" if calibration else content_method
    excess = analysis.excess(factor)
    content = analysis.context_cost(factor) + excess
    file_content = analysis.file_cost(factor) + excess
    last_usage = view.usage[-1] if view.usage else None
    last = analysis.anchors[-1] if analysis.anchors else None
    if last is not None and last.usage is not last_usage:
        last = None
    recorded = (
        RecordedUsage(
            tokens=last_usage.context,
            input=last_usage.input,
            output=last_usage.output,
            cached=last_usage.cached,
            line=ledger.lines.get(last_usage.index, 0),
            requests=len(view.usage),
        )
        if last_usage is not None
        else None
    )
    after: int | None = None
    if method == "auto" and last_usage is not None:
        after = sum(ledger.cost(analysis.context[s]) for s in analysis.after(last)) if last else 0
        tokens = last_usage.context + after
        resolved = "usage+heuristic" if after else "usage"
    elif method == "usage" and last_usage is not None:
        tokens, resolved = last_usage.context, "usage"
    elif calibration is not None:
        tokens, resolved = content + calibration.overhead, "calibrated"
    else:
        tokens, resolved = content, content_method
    by_role, by_block, by_tool = analysis.breakdown(factor) if breakdown else ({}, {}, {})
    model = options.model or view.model
    window_override = options.context_window
    limits = model_limits(model, context_window=window_override)
    if window_override is None and options.model is None and view.context_window:
        limits = Limits(model, view.context_window, limits.max_output, "recorded in the transcript")
    spec = options.threshold or default_threshold(format)
    limit = threshold(spec, limits)
    report = EstimateReport(
        path=source,
        format=format,
        method=resolved,
        tokens=tokens,
        file_tokens=file_content,
        file_tokens_method=breakdown_method,
        records=records,
        messages=len(ledger),
        context_messages=len(analysis.context),
        by_role=by_role,
        by_block=by_block,
        by_tool=by_tool,
        breakdown_method=breakdown_method,
        usage=recorded,
        after_usage=after,
        calibration=calibration,
        model=model,
        context_window=limits.context_window,
        context_window_source=limits.source,
        max_output=limits.max_output,
        threshold=limit.tokens,
        threshold_spec=limit.spec,
        threshold_rule=limit.rule,
        max_tokens=options.max_tokens,
        status="ok",
    )
    return _with_status(report)


def _with_status(report: EstimateReport) -> EstimateReport:
    over = {what for what, _, _ in report.over}
    status = "ok"
    if "window" in over:
        status = "over_window"
    elif "budget" in over:
        status = "over_budget"
    elif "threshold" in over:
        status = "over_threshold"
    return replace(report, status=status)
