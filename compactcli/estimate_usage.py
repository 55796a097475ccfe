"""Usage anchors on the context view: the figures the agent recorded, fitted and broken down.

`Analysis(ledger, view)` holds the context view's message positions in a `Ledger` and the
agent's usage records tied to the responses they measured (`Anchor`s); from them it gives the
context and whole-file costs, the recorded output beyond the counted text (a response costs its
recorded `output_tokens` when they are at least `TRUSTED_OUTPUT` of its counted text), the
factor that makes the estimated growth between consecutive anchors match the recorded growth in
total (`fit`), the fixed part of the context the file does not hold (`overhead`), and the
context's tokens by role, block kind and tool (`breakdown`). `usage_deltas(records, format)`
gives that growth for each pair of consecutive anchors as `Delta`s, recorded and estimated.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from compactcli.estimate_ledger import NO_UNIT, ROLE_ID, ROLES, Ledger, feed_ledger
from compactcli.formats import get_dialect
from compactcli.formats.base import StreamedView
from compactcli.tokens import HeuristicCounter, TiktokenCounter, get_counter
from compactcli.transcript import Record, Usage

__all__ = ["TRUSTED_OUTPUT", "Analysis", "Anchor", "Delta", "usage_deltas"]

TRUSTED_OUTPUT = 0.3
"""Recorded output at least this share of the counted response is taken as its true size."""


@dataclass(frozen=True, slots=True)
class Delta:
    """Growth between two consecutive usage anchors: recorded, and estimated from the file."""

    first_line: int
    last_line: int
    recorded: int
    estimated: int


@dataclass(slots=True)
class Anchor:
    usage: Usage
    produced: list[int] = field(default_factory=list)  # context positions of its response
    first: int = -1  # first of them (its request's input is everything before)


class Analysis:
    """The context view over a ledger, with the usage anchors placed on it."""

    def __init__(self, ledger: Ledger, view: StreamedView) -> None:
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

    def _place(self, usage: Sequence[Usage]) -> list[Anchor]:
        """Tie each usage anchor to its response on the context view.

        The response is the assistant message of the record carrying the usage (Claude Code,
        pi), else the last assistant message before the first message written after it (Codex
        writes its usage after the response), with the other messages of its unit.
        """
        ledger, context = self.ledger, self.context
        records, roles, units_of = ledger.record, ledger.role, ledger.unit
        assistant = ROLE_ID["assistant"]
        anchors = [Anchor(u) for u in usage]
        wanted = {u.index for u in usage}
        direct: dict[int, int] = {}  # record -> slot of its last assistant message
        for slot, position in enumerate(context):
            if roles[position] == assistant and records[position] in wanted:
                direct[records[position]] = slot
        reply: dict[int, int] = {}  # id(anchor) -> context slot of its response
        pending: list[Anchor] = []
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
            if hit is not None and units_of[context[hit]] != NO_UNIT:
                members[units_of[context[hit]]] = []
        if members:
            for slot, position in enumerate(context):
                if roles[position] == assistant:
                    group = members.get(units_of[position])
                    if group is not None:
                        group.append(slot)
        placed: list[Anchor] = []
        for anchor in anchors:
            hit = reply.get(id(anchor))
            if hit is None:
                continue  # no reply on the context view: nothing to tie the usage to
            unit = units_of[context[hit]]
            anchor.produced = list(members[unit]) if unit != NO_UNIT else [hit]
            anchor.first = anchor.produced[0]
            placed.append(anchor)
        return placed

    def produced_cost(self, anchor: Anchor, factor: float) -> tuple[int, int]:
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

    def after(self, anchor: Anchor) -> list[int]:
        """Context slots after an anchor's request that its response does not account for."""
        mine = set(anchor.produced)
        return [s for s in range(anchor.first + 1, len(self.context)) if s not in mine]

    def pairs(self) -> Iterator[tuple[Anchor, Anchor, list[int]]]:
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


def _largest(item: tuple[str, float]) -> tuple[float, str]:
    return (-item[1], item[0])


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
    ledger = Ledger(counter or get_counter("heuristic", model=model, format=format))
    feed_ledger(((r.lineno, r.raw, r.line) for r in records), streamer, ledger)
    view = streamer.finish()
    for message in view.messages:
        ledger.add(message)
    analysis = Analysis(ledger, view)
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
