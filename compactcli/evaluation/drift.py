"""Drift over the parts of real sessions: each round's retention, and the loss on the first part.

`parts_drift(runs, strategy, budget)` pools the drift rounds of real sessions
(`compactcli.evaluation.parts`, `Evaluation.parts`) into a `PartsDrift`: per round, retention on
the probes seen so far and on the first part's probes, and the loss between the first round and
the last; `all_parts_drift(runs)` is that for every strategy and budget present.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

from compactcli.evaluation.budgets import Budget
from compactcli.evaluation.metrics import RunMetrics, Tally, pool


class RoundDict(TypedDict):
    """`RoundFigures.to_dict()`: one round of a `PartsDriftDict`."""

    cycle: int
    weighted: float | None
    first_part_weighted: float | None
    ratio: float


@dataclass(frozen=True, slots=True)
class RoundFigures:
    cycle: int
    own: float | None  # weighted retention on the probes seen so far
    first: float | None  # weighted retention on the first part's probes
    kept: float  # mean tokens out / in

    def to_dict(self) -> RoundDict:
        return {
            "cycle": self.cycle,
            "weighted": _round(self.own),
            "first_part_weighted": _round(self.first),
            "ratio": round(self.kept, 4),
        }


class PartsDriftDict(TypedDict):
    """`PartsDrift.to_dict()`: the drift of one strategy and budget over the parts of real
    sessions, in `eval --json` (`parts.drift`) and the baseline (`parts_drift`)."""

    strategy: str
    budget: Budget
    fixtures: list[str]
    rounds: list[RoundDict]
    loss: float | None


@dataclass(frozen=True, slots=True)
class PartsDrift:
    strategy: str
    budget: Budget
    fixtures: tuple[str, ...]
    rounds: tuple[RoundFigures, ...]

    @property
    def loss(self) -> float | None:
        """First-part retention in round 1 minus in the last round, in percentage points."""
        if len(self.rounds) < 2:
            return None
        first, last = self.rounds[0].first, self.rounds[-1].first
        if first is None or last is None:
            return None
        return round((first - last) * 100, 2)

    def to_dict(self) -> PartsDriftDict:
        return {
            "strategy": self.strategy,
            "budget": self.budget,
            "fixtures": list(self.fixtures),
            "rounds": [r.to_dict() for r in self.rounds],
            "loss": self.loss,
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def parts_drift(runs: Sequence[RunMetrics], strategy: str, budget: Budget) -> PartsDrift | None:
    """The drift of `strategy` at `budget` over the parts rounds `runs`; None when no fixture
    reached a second round.

    A real session's round k is scored on the probes seen so far, and also on the probes of the
    first part (each run's `original`). The rounds are pooled over the fixtures that reached
    the last round (so every round pools the same fixtures): per round, weighted retention on
    its own probes and on the first part's probes, and the mean kept share of tokens. The loss
    (`PartsDrift.loss`) is the first part's weighted retention in round 1 minus in the last
    round, in percentage points: the drift EVAL.md §3.4 asks for, measured on one probe set.
    """
    chosen = [r for r in runs if r.strategy == strategy and r.budget == budget]
    last = max((r.cycle for r in chosen), default=0)
    if last < 2:
        return None
    complete = sorted({r.fixture for r in chosen if r.cycle == last})
    rounds: list[RoundFigures] = []
    for cycle in range(1, last + 1):
        found = [r for r in chosen if r.cycle == cycle and r.fixture in complete]
        first = Tally()
        for run in found:
            for weight, passed in run.original.values():
                first += Tally(weight if passed else 0, weight)
        pooled = pool(found)
        rounds.append(RoundFigures(cycle, pooled.weighted.rate, first.rate, pooled.ratio))
    return PartsDrift(strategy, budget, tuple(complete), tuple(rounds))


def all_parts_drift(runs: Sequence[RunMetrics]) -> list[PartsDrift]:
    """`parts_drift` for every (strategy, budget) of `runs` that has one, in run order."""
    found: list[PartsDrift] = []
    for strategy, budget in dict.fromkeys((r.strategy, r.budget) for r in runs):
        drift = parts_drift(runs, strategy, budget)
        if drift is not None:
            found.append(drift)
    return found
