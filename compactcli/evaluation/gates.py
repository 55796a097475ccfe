"""The quality gates, and the figures reported next to them.

`check_gates(runs, parts)` gives a `GateResult` for every gate (EVAL.md §3.8: retention and
integrity targets for the default `compact` at `GATE_BUDGET`, round 1, pooled over every
fixture) and for every target reported next to them, which never fails a run; `failed(results)`
lists the gates that failed. `drift_points(runs, strategy, budget)` is the drift over rounds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

from compactcli.evaluation.budgets import Budget
from compactcli.evaluation.drift import parts_drift
from compactcli.evaluation.metrics import Pooled, RunMetrics, pool
from compactcli.evaluation.strategies import GATED

GATE_BUDGET = 0.1


class GateDict(TypedDict):
    """`GateResult.to_dict()`: one gate or reported target, in `eval --json` and the baseline."""

    name: str
    description: str
    target: str
    value: float | None
    status: str
    gate: bool


@dataclass(frozen=True, slots=True)
class GateResult:
    """One gate (`gate`) or reported target, and how the run measured against it."""

    name: str
    description: str
    target: str
    value: float | None  # None: not measured in this run
    passed: bool | None  # None: skipped
    gate: bool  # False: reported only

    @property
    def status(self) -> str:
        if self.passed is None:
            return "skipped"
        if self.passed:
            return "pass"
        return "FAIL" if self.gate else "miss"

    def to_dict(self) -> GateDict:
        return {
            "name": self.name,
            "description": self.description,
            "target": self.target,
            "value": round(self.value, 4) if self.value is not None else None,
            "status": self.status,
            "gate": self.gate,
        }


def _rate(pooled: Pooled, category: str) -> float | None:
    tally = pooled.retention.get(category)
    return tally.rate if tally is not None else None


def _at(runs: Sequence[RunMetrics], budget: float, cycle: int = 1) -> list[RunMetrics]:
    return [r for r in runs if r.strategy == GATED and r.budget == budget and r.cycle == cycle]


def check_gates(runs: Sequence[RunMetrics], parts: Sequence[RunMetrics] = ()) -> list[GateResult]:
    """The gates and the reported targets, over `runs` and the real sessions' drift rounds
    `parts`.

    The gates apply to the default `compact` (`GATED`) at 10% of the input's tokens (10x),
    round 1, pooled over every fixture: user constraints and pending asks retained 100%,
    modified files >= 95%, error strings and decisions >= 80%, weighted overall retention
    >= 90%, no negative-probe violation (a decoy found, a superseded value presented as
    current), and every output intact (no integrity failure). Reported next to them, never
    failing a run: budget compliance at 10x, weighted retention >= 95% at 4x, must-survive
    retention at 50x, and drift <= 5 points after the last round (generated sessions
    continued, `drift_points`) and after the last part of a real session (its parts appended
    one by one, `compactcli.evaluation.drift.parts_drift`). A gate whose runs are missing (the
    strategy or budget was not part of the run) is `skipped`, which does not fail, and a
    reported target with no runs is left out.
    """
    results: list[GateResult] = []
    gated = _at(runs, GATE_BUDGET)
    pooled = pool(gated) if gated else None

    def at_least(name: str, description: str, value: float | None, floor: float) -> None:
        passed = None if value is None else value >= floor - 1e-9
        target = "100%" if floor >= 1 else f">= {floor:.0%}"
        results.append(GateResult(name, description, target, value, passed, True))

    rates = {
        c: (_rate(pooled, c) if pooled else None)
        for c in ("user_constraint", "pending_ask", "file_modified", "error_string", "decision")
    }
    at_least("user_constraint", "user constraints retained", rates["user_constraint"], 1.0)
    at_least("pending_ask", "pending asks retained", rates["pending_ask"], 1.0)
    at_least("file_modified", "modified files retained", rates["file_modified"], 0.95)
    at_least("error_string", "error strings retained", rates["error_string"], 0.8)
    at_least("decision", "decisions retained", rates["decision"], 0.8)
    at_least(
        "weighted", "weighted overall retention", pooled.weighted.rate if pooled else None, 0.9
    )
    violations = float(pooled.violations) if pooled else None
    results.append(
        GateResult(
            "violations",
            "negative-probe violations",
            "0",
            violations,
            None if violations is None else violations == 0,
            True,
        )
    )
    intact = pooled.intact / pooled.runs if pooled and pooled.runs else None
    at_least("integrity", "outputs with intact integrity", intact, 1.0)

    # reported, not gated
    if pooled:
        value = pooled.compliant / pooled.runs
        results.append(
            GateResult("budget_10x", "budget compliance at 10x", "100%", value, value >= 1.0, False)
        )
    four = _at(runs, 0.25)
    if four:
        rate = pool(four).weighted.rate
        results.append(
            GateResult(
                "weighted_4x",
                "weighted retention at 4x",
                ">= 95%",
                rate,
                None if rate is None else rate >= 0.95,
                False,
            )
        )
    fifty = _at(runs, 0.02)
    if fifty:
        pooled50 = pool(fifty)
        kept = [pooled50.retention.get(c) for c in ("user_constraint", "pending_ask")]
        passed = sum(t.passed for t in kept if t)
        total = sum(t.total for t in kept if t)
        share = passed / total if total else None
        results.append(
            GateResult(
                "must_survive_50x",
                "must-survive retained at 50x",
                "100%",
                share,
                None if share is None else share >= 1.0,
                False,
            )
        )
    cycles = sorted({r.cycle for r in runs if r.strategy == GATED and r.budget == GATE_BUDGET})
    if len(cycles) > 1:
        points = drift_points(runs, GATED)
        worst = max((d for _, d in points), default=0.0)
        results.append(
            GateResult(
                "drift",
                f"drift after {cycles[-1]} rounds (points)",
                "<= 5",
                worst,
                worst <= 5.0 + 1e-9,
                False,
            )
        )
    drift = parts_drift(parts, GATED, GATE_BUDGET)
    if drift is not None and drift.loss is not None:
        results.append(
            GateResult(
                "drift_parts",
                f"drift over {len(drift.rounds)} parts (points)",
                "<= 5",
                drift.loss,
                drift.loss <= 5.0 + 1e-9,
                False,
            )
        )
    return results


def drift_points(
    runs: Sequence[RunMetrics], strategy: str, budget: Budget = GATE_BUDGET
) -> list[tuple[int, float]]:
    """(round, drift in percentage points) for `strategy` at `budget`: weighted retention in
    round 1 minus in round k, over the round-1 probes still current in every round, pooled over
    fixtures."""
    by_cycle: dict[int, list[RunMetrics]] = {}
    for run in runs:
        if run.strategy == strategy and run.budget == budget:
            by_cycle.setdefault(run.cycle, []).append(run)
    if 1 not in by_cycle or len(by_cycle) < 2:
        return []
    stable: dict[str, set[str]] = {}
    for cycle_runs in by_cycle.values():
        for run in cycle_runs:
            ids = set(run.original)
            stable[run.fixture] = stable[run.fixture] & ids if run.fixture in stable else ids

    def rate(items: list[RunMetrics]) -> float:
        passed = total = 0.0
        for run in items:
            for probe_id in stable.get(run.fixture, set()):
                weight, ok = run.original[probe_id]
                total += weight
                passed += weight if ok else 0.0
        return passed / total if total else 0.0

    first = rate(by_cycle[1])
    return [(c, round((first - rate(by_cycle[c])) * 100, 2)) for c in sorted(by_cycle) if c > 1]


def failed(results: Sequence[GateResult]) -> list[GateResult]:
    """The gates that failed (reported targets never fail a run)."""
    return [r for r in results if r.gate and r.passed is False]
