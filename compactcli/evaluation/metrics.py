"""The evaluation's metrics (EVAL.md §3.4), per run and pooled over fixtures.

A run is one strategy on one fixture at one budget in one round. `run_metrics` turns its probe
scores and token counts into `RunMetrics` (retention, violations, compression, the summary's
size, integrity), `pool(runs)` adds runs up into `Pooled`, and over a budget sweep `auc` and
`max_compression` weigh retention against compression. `RunDict` and `PooledDict` are the figures
as `eval --json` writes them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypedDict

from compactcli.evaluation.budgets import Budget
from compactcli.evaluation.probes import CARRIERS, POSITIVE, Category
from compactcli.evaluation.scorer import ProbeScore
from compactcli.evaluation.view import WhereDict

BUCKETS = 5
RETENTION_FLOOR = 0.9
AUC_LOW = 0.01  # the kept share the AUC's log axis starts at


@dataclass(frozen=True, slots=True)
class Tally:
    passed: float = 0
    total: float = 0

    def __add__(self, other: Tally) -> Tally:
        return Tally(self.passed + other.passed, self.total + other.total)

    @property
    def rate(self) -> float | None:
        return self.passed / self.total if self.total else None

    def to_list(self) -> list[float]:
        return [_number(self.passed), _number(self.total)]


def share(part: int, whole: int) -> float | None:
    """`part / whole` rounded for reports; None when `whole` is 0."""
    return round(part / whole, 4) if whole else None


def _number(value: float) -> float:
    return int(value) if float(value).is_integer() else round(value, 4)


class FailureDict(TypedDict):
    """A probe a run lost (`RunMetrics.failures`): a positive one not found, or a negative one
    violated."""

    id: str
    category: Category
    fact: str
    carrier: str
    depth: float | None
    near: bool
    where: WhereDict | None


class RunDict(TypedDict):
    """`RunMetrics.to_dict()`: one run in `eval --json` (`runs`, `inputs`, `parts.runs`);
    tallies are `[passed, total]`."""

    fixture: str
    format: str
    strategy: str
    budget: Budget
    cycle: int
    tokens_in: int
    tokens_out: int
    budget_tokens: int | None
    ratio: float
    heuristic_in: int
    heuristic_out: int
    compliant: bool | None
    negative_compression: bool
    weighted: float | None
    retention: dict[str, list[float]]
    summary_weighted: float | None
    summary_retention: dict[str, list[float]] | None
    must_survive_violations: int
    decoy_violations: int
    superseded_violations: int
    key_terms_only: list[float]
    position: list[list[float]]
    integrity: list[str]
    failures: list[FailureDict]
    carriers: dict[str, list[float]]
    summary_carriers: dict[str, list[float]] | None
    summary_tokens: int
    read_only_tokens: int
    read_only_share: float | None


@dataclass(frozen=True, slots=True)
class RunMetrics:
    """The metrics of one run (`run_metrics`).

    - retention per category (passed / total, positive probes) and weighted overall (the
      probes' weights), in the whole output and in the summary alone, and retention per carrier
      (the probes' `origin.carrier`: where in the session the fact was), in both scopes too;
    - must-survive violations (must-survive probes that did not pass), negative-probe violations
      (decoys found, superseded values presented as current);
    - the share of passing `key_terms` probes found only at that level (paraphrase drift);
    - the position curve: retention by the depth the fact was planted at, in `BUCKETS` buckets;
    - compression: tokens out over tokens in (exact o200k, and the heuristic), budget compliance
      (`tokens_out <= budget`, exact; None for a run with no token budget), negative compression
      (`tokens_out > tokens_in`);
    - the summary's size and the share of it spent on read-only commands that succeeded
      (`compactcli.evaluation.commands`), both in exact tokens;
    - integrity failures (`compactcli.evaluation.integrity`).
    """

    fixture: str
    format: str
    strategy: str
    budget: Budget  # share of the input's tokens, or "default" (no token budget)
    cycle: int
    tokens_in: int
    tokens_out: int
    heuristic_in: int
    heuristic_out: int
    budget_tokens: int | None  # None: no token budget
    retention: Mapping[str, Tally]
    weighted: Tally
    summary_retention: Mapping[str, Tally] | None
    summary_weighted: Tally | None
    must_survive_violations: int
    decoy_violations: int
    superseded_violations: int
    key_terms_only: Tally  # passing key_terms probes found only at that level
    position: tuple[Tally, ...]
    integrity: tuple[str, ...]
    seconds: float = 0.0
    original: Mapping[str, tuple[float, bool]] = field(default_factory=dict)
    """Round-1 probes still positive: id -> (weight, passed), for drift."""
    failures: tuple[FailureDict, ...] = ()
    """The probes that failed (positive ones not found, negative ones violated)."""
    carriers: Mapping[str, Tally] = field(default_factory=dict)
    summary_carriers: Mapping[str, Tally] | None = None
    summary_tokens: int = 0  # exact tokens of the summary messages
    read_only_tokens: int = 0  # of which on read-only commands that succeeded

    @property
    def ratio(self) -> float:
        return self.tokens_out / self.tokens_in if self.tokens_in else 1.0

    @property
    def compliant(self) -> bool | None:
        if self.budget_tokens is None:
            return None
        return self.tokens_out <= self.budget_tokens

    @property
    def read_only_share(self) -> float | None:
        return share(self.read_only_tokens, self.summary_tokens)

    @property
    def negative_compression(self) -> bool:
        return self.tokens_out > self.tokens_in

    @property
    def violations(self) -> int:
        return self.decoy_violations + self.superseded_violations

    def to_dict(self) -> RunDict:
        return {
            "fixture": self.fixture,
            "format": self.format,
            "strategy": self.strategy,
            "budget": self.budget,
            "cycle": self.cycle,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "budget_tokens": self.budget_tokens,
            "ratio": round(self.ratio, 4),
            "heuristic_in": self.heuristic_in,
            "heuristic_out": self.heuristic_out,
            "compliant": self.compliant,
            "negative_compression": self.negative_compression,
            "weighted": _rate(self.weighted),
            "retention": {k: v.to_list() for k, v in self.retention.items()},
            "summary_weighted": _rate(self.summary_weighted) if self.summary_weighted else None,
            "summary_retention": {k: v.to_list() for k, v in self.summary_retention.items()}
            if self.summary_retention is not None
            else None,
            "must_survive_violations": self.must_survive_violations,
            "decoy_violations": self.decoy_violations,
            "superseded_violations": self.superseded_violations,
            "key_terms_only": self.key_terms_only.to_list(),
            "position": [t.to_list() for t in self.position],
            "integrity": list(self.integrity),
            "failures": list(self.failures),
            "carriers": {k: v.to_list() for k, v in self.carriers.items()},
            "summary_carriers": {k: v.to_list() for k, v in self.summary_carriers.items()}
            if self.summary_carriers is not None
            else None,
            "summary_tokens": self.summary_tokens,
            "read_only_tokens": self.read_only_tokens,
            "read_only_share": self.read_only_share,
        }


def _rate(tally: Tally | None) -> float | None:
    if tally is None or tally.rate is None:
        return None
    return round(tally.rate, 4)


def _retention(scores: Iterable[ProbeScore], *, summary: bool) -> dict[str, Tally]:
    found: dict[str, Tally] = {c: Tally() for c in POSITIVE}
    for score in scores:
        if score.probe.negative:
            continue
        outcome = score.summary if summary else score.whole
        passed = bool(outcome and outcome.passed)
        found[score.probe.category] += Tally(1 if passed else 0, 1)
    return {k: v for k, v in found.items() if v.total}


def _carriers(scores: Iterable[ProbeScore], *, summary: bool) -> dict[str, Tally]:
    found: dict[str, Tally] = {}
    for score in scores:
        if score.probe.negative:
            continue
        outcome = score.summary if summary else score.whole
        passed = bool(outcome and outcome.passed)
        carrier = score.probe.origin.carrier
        found[carrier] = found.get(carrier, Tally()) + Tally(1 if passed else 0, 1)
    return {k: found[k] for k in carrier_order(found)}


def carrier_order(carriers: Iterable[str]) -> list[str]:
    """`carriers` in report order: those of `CARRIERS` in its order, then the others sorted."""
    present = set(carriers)
    return [c for c in CARRIERS if c in present] + sorted(present - set(CARRIERS))


def _weighted(scores: Iterable[ProbeScore], *, summary: bool) -> Tally:
    total = Tally()
    for score in scores:
        if score.probe.negative:
            continue
        outcome = score.summary if summary else score.whole
        passed = bool(outcome and outcome.passed)
        weight = score.probe.weight
        total += Tally(weight if passed else 0, weight)
    return total


def bucket(depth: float) -> int:
    return min(BUCKETS - 1, max(0, int(depth * BUCKETS)))


def run_metrics(
    *,
    fixture: str,
    format: str,
    strategy: str,
    budget: Budget,
    cycle: int,
    tokens: tuple[int, int, int, int],
    budget_tokens: int | None,
    scores: Sequence[ProbeScore],
    integrity: Sequence[str],
    summarizes: bool,
    original: frozenset[str] = frozenset(),
    seconds: float = 0.0,
    summary_costs: tuple[int, int] = (0, 0),
) -> RunMetrics:
    """The metrics of one run; `tokens` is (exact in, exact out, heuristic in, heuristic out);
    `original` names the probes of round 1 that are still positive (for drift);
    `summary_costs` is (read-only command tokens, summary tokens) of the output's summary."""
    position = [Tally() for _ in range(BUCKETS)]
    key_only = Tally()
    for score in scores:
        probe = score.probe
        if probe.negative:
            continue
        if probe.origin.depth is not None:
            position[bucket(probe.origin.depth)] += Tally(1 if score.passed else 0, 1)
        if probe.match.mode == "key_terms" and score.passed:
            key_only += Tally(1 if score.whole.level == "key_terms" else 0, 1)
    has_summary = summarizes and any(s.summary is not None for s in scores)
    failures = tuple(_failure(s) for s in scores if not s.passed)
    return RunMetrics(
        fixture=fixture,
        format=format,
        strategy=strategy,
        budget=budget,
        cycle=cycle,
        tokens_in=tokens[0],
        tokens_out=tokens[1],
        heuristic_in=tokens[2],
        heuristic_out=tokens[3],
        budget_tokens=budget_tokens,
        retention=_retention(scores, summary=False),
        weighted=_weighted(scores, summary=False),
        summary_retention=_retention(scores, summary=True) if has_summary else None,
        summary_weighted=_weighted(scores, summary=True) if has_summary else None,
        must_survive_violations=sum(
            1 for s in scores if s.probe.must_survive and not s.probe.negative and not s.passed
        ),
        decoy_violations=sum(1 for s in scores if s.probe.category == "decoy" and s.violated),
        superseded_violations=sum(
            1 for s in scores if s.probe.category == "superseded" and s.violated
        ),
        key_terms_only=key_only,
        position=tuple(position),
        integrity=tuple(integrity),
        seconds=seconds,
        original={
            s.probe.id: (s.probe.weight, s.passed)
            for s in scores
            if s.probe.id in original and not s.probe.negative
        },
        failures=failures,
        carriers=_carriers(scores, summary=False),
        summary_carriers=_carriers(scores, summary=True) if has_summary else None,
        summary_tokens=summary_costs[1] if summarizes else 0,
        read_only_tokens=summary_costs[0] if summarizes else 0,
    )


def _failure(score: ProbeScore) -> FailureDict:
    probe = score.probe
    return {
        "id": probe.id,
        "category": probe.category,
        "fact": probe.fact,
        "carrier": probe.origin.carrier,
        "depth": probe.origin.depth,
        "near": score.whole.near,
        "where": score.whole.where,
    }


class PooledDict(TypedDict):
    """`Pooled.to_dict()`: runs added up; rates, with the tallies beside them as `[passed,
    total]` (`*_counts`)."""

    runs: int
    ratio: float
    heuristic_ratio: float
    compliant: int
    negative_compression: int
    intact: int
    weighted: float | None
    retention: dict[str, float | None]
    retention_counts: dict[str, list[float]]
    summary_weighted: float | None
    summary_retention: dict[str, float | None] | None
    summary_retention_counts: dict[str, list[float]] | None
    carriers: dict[str, float | None]
    carrier_counts: dict[str, list[float]]
    summary_carriers: dict[str, float | None] | None
    must_survive_violations: int
    violations: int
    key_terms_only: float | None
    position: list[float | None]
    summary_tokens: int
    read_only_tokens: int
    read_only_share: float | None


@dataclass(frozen=True, slots=True)
class Pooled:
    """Runs added up (one strategy and budget, over fixtures)."""

    runs: int
    retention: Mapping[str, Tally]
    weighted: Tally
    summary_retention: Mapping[str, Tally] | None
    summary_weighted: Tally | None
    must_survive_violations: int
    violations: int
    key_terms_only: Tally
    position: tuple[Tally, ...]
    ratio: float  # mean of the runs' ratios
    heuristic_ratio: float
    compliant: int
    negative_compression: int
    intact: int
    carriers: Mapping[str, Tally] = field(default_factory=dict)
    summary_carriers: Mapping[str, Tally] | None = None
    summary_tokens: int = 0
    read_only_tokens: int = 0

    @property
    def read_only_share(self) -> float | None:
        return share(self.read_only_tokens, self.summary_tokens)

    def to_dict(self) -> PooledDict:
        return {
            "runs": self.runs,
            "ratio": round(self.ratio, 4),
            "heuristic_ratio": round(self.heuristic_ratio, 4),
            "compliant": self.compliant,
            "negative_compression": self.negative_compression,
            "intact": self.intact,
            "weighted": _rate(self.weighted),
            "retention": {k: _rate(v) for k, v in self.retention.items()},
            "retention_counts": {k: v.to_list() for k, v in self.retention.items()},
            "summary_weighted": _rate(self.summary_weighted) if self.summary_weighted else None,
            "summary_retention": {k: _rate(v) for k, v in self.summary_retention.items()}
            if self.summary_retention is not None
            else None,
            "summary_retention_counts": {k: v.to_list() for k, v in self.summary_retention.items()}
            if self.summary_retention is not None
            else None,
            "carriers": {k: _rate(v) for k, v in self.carriers.items()},
            "carrier_counts": {k: v.to_list() for k, v in self.carriers.items()},
            "summary_carriers": {k: _rate(v) for k, v in self.summary_carriers.items()}
            if self.summary_carriers is not None
            else None,
            "must_survive_violations": self.must_survive_violations,
            "violations": self.violations,
            "key_terms_only": _rate(self.key_terms_only),
            "position": [_rate(t) for t in self.position],
            "summary_tokens": self.summary_tokens,
            "read_only_tokens": self.read_only_tokens,
            "read_only_share": self.read_only_share,
        }


def _sum(tallies: Iterable[Mapping[str, Tally]], *, carriers: bool = False) -> dict[str, Tally]:
    """Tallies added up by key: categories in `POSITIVE` order, or carriers in theirs."""
    total: dict[str, Tally] = {}
    for tally in tallies:
        for key, value in tally.items():
            total[key] = total.get(key, Tally()) + value
    order = carrier_order(total) if carriers else [k for k in POSITIVE if k in total]
    return {k: total[k] for k in order}


def pool(runs: Sequence[RunMetrics]) -> Pooled:
    """`runs` added up: sums of passed and total and of summary tokens, the mean ratio, and
    counts of compliant, negatively compressed and intact runs."""
    summaries = [r for r in runs if r.summary_retention is not None]
    weighted = Tally()
    for run in runs:
        weighted += run.weighted
    summary_weighted: Tally | None = None
    if summaries:
        summary_weighted = Tally()
        for run in summaries:
            assert run.summary_weighted is not None
            summary_weighted += run.summary_weighted
    key_only = Tally()
    for run in runs:
        key_only += run.key_terms_only
    position = tuple(sum((r.position[i] for r in runs), Tally()) for i in range(BUCKETS))
    count = max(1, len(runs))
    return Pooled(
        runs=len(runs),
        retention=_sum(r.retention for r in runs),
        weighted=weighted,
        summary_retention=_sum(r.summary_retention for r in summaries if r.summary_retention)
        if summaries
        else None,
        summary_weighted=summary_weighted,
        must_survive_violations=sum(r.must_survive_violations for r in runs),
        violations=sum(r.violations for r in runs),
        key_terms_only=key_only,
        position=position,
        ratio=sum(r.ratio for r in runs) / count,
        heuristic_ratio=sum(
            r.heuristic_out / r.heuristic_in if r.heuristic_in else 1.0 for r in runs
        )
        / count,
        compliant=sum(1 for r in runs if r.compliant),
        negative_compression=sum(1 for r in runs if r.negative_compression),
        intact=sum(1 for r in runs if not r.integrity),
        carriers=_sum((r.carriers for r in runs), carriers=True),
        summary_carriers=_sum(
            (r.summary_carriers for r in summaries if r.summary_carriers), carriers=True
        )
        if summaries
        else None,
        summary_tokens=sum(r.summary_tokens for r in runs),
        read_only_tokens=sum(r.read_only_tokens for r in runs),
    )


def auc(points: Sequence[tuple[float, float]], baseline: float = 1.0) -> float:
    """Area under weighted retention against the kept share of tokens, on a log scale from
    `AUC_LOW` (1%) to 100%, normalised to 0-1; retention is 0 beyond the most compressed point.

    `points` are (kept share, weighted retention) of the sweep; the uncompacted input is the
    point (1, `baseline`)."""
    low = math.log10(AUC_LOW)
    curve = sorted({(max(AUC_LOW, min(1.0, r)), w) for r, w in points} | {(1.0, baseline)})
    area = 0.0
    for (r1, w1), (r2, w2) in itertools.pairwise(curve):
        area += (math.log10(r2) - math.log10(r1)) * (w1 + w2) / 2
    return round(area / -low, 4)


def max_compression(points: Sequence[tuple[float, float]]) -> float | None:
    """The highest tokens-in / tokens-out among `points` (kept share, weighted retention)
    whose retention is at least `RETENTION_FLOOR` (90%); None when none is."""
    found = [1 / r for r, w in points if w >= RETENTION_FLOOR and r > 0]
    return round(max(found), 2) if found else None
