"""The evaluation's report: the results table as plain text, and the same as JSON.

`render(evaluation, gates)` is the text `compactcli eval` prints, plain (no colour, fixed
columns) so the README can show it as printed; `to_json(evaluation, gates)` is `--json`, a
`ReportDict` holding the same figures, per run and pooled.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

from compactcli.evaluation.budgets import Budget, is_default, label
from compactcli.evaluation.drift import PartsDriftDict, all_parts_drift
from compactcli.evaluation.gates import GATE_BUDGET, GateDict, GateResult, drift_points
from compactcli.evaluation.harness import BadProbe, Evaluation
from compactcli.evaluation.metrics import (
    BUCKETS,
    Pooled,
    PooledDict,
    RunDict,
    RunMetrics,
    auc,
    carrier_order,
    max_compression,
    pool,
)
from compactcli.evaluation.strategies import GATED, STRATEGIES

COLUMNS = (
    ("user_constraint", "constr"),
    ("pending_ask", "pending"),
    ("file_modified", "modified"),
    ("file_read", "read"),
    ("error_string", "errors"),
    ("decision", "decisions"),
    ("identifier", "ident"),
)


class SettingsDict(TypedDict):
    """`settings` of `eval --json`: what the run covered."""

    budgets: list[Budget]
    strategies: list[str]
    rounds: int
    drift_budget: float
    new_turns: float
    tokens: str


class SummaryRowDict(PooledDict):
    """One row of `summary` in `eval --json`: a strategy at a budget, round 1, pooled."""

    strategy: str
    budget: Budget


class FixtureSweepDict(TypedDict):
    """One fixture's figures of a budget sweep."""

    auc: float
    max_compression: float | None


class SweepFigures(TypedDict):
    """A strategy's budget sweep (`_sweep`): its AUC and highest compression at >= 90%, over
    fixtures and per fixture."""

    auc: float | None
    max_compression: float | None
    fixtures: dict[str, FixtureSweepDict]


class SweepDict(SweepFigures):
    """A strategy in `sweep` of `eval --json`: the sweep, and the drift as (round, points)."""

    drift: list[tuple[int, float]]


class PartsDict(TypedDict):
    """`parts` of `eval --json`: the drift over the parts of real sessions, and their runs."""

    drift: list[PartsDriftDict]
    runs: list[RunDict]


class ReportDict(TypedDict):
    """`to_json(evaluation, gates)`: the `eval --json` object."""

    settings: SettingsDict
    fixtures: list[str]
    summary: list[SummaryRowDict]
    sweep: dict[str, SweepDict]
    gates: list[GateDict]
    passed: bool
    inputs: list[RunDict]
    runs: list[RunDict]
    parts: PartsDict
    bad_probes: list[BadProbe]
    notes: list[str]


def _count(number: int, stem: str, one: str = "", many: str = "s") -> str:
    return f"{number} {stem}{one if number == 1 else many}"


def _percent(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value * 100:.{digits}f}%"


def _groups(evaluation: Evaluation) -> list[tuple[str, Budget, list[RunMetrics]]]:
    groups: list[tuple[str, Budget, list[RunMetrics]]] = []
    for name in evaluation.settings.strategies:
        for budget in evaluation.settings.budgets:
            runs = [
                r
                for r in evaluation.runs
                if r.strategy == name and r.budget == budget and r.cycle == 1
            ]
            if runs:
                groups.append((name, budget, runs))
    return groups


def _sweep(evaluation: Evaluation, name: str) -> SweepFigures:
    """AUC and highest compression at >= 90%, per fixture, and over fixtures."""
    per_fixture: dict[str, FixtureSweepDict] = {}
    for fixture in evaluation.fixtures:
        runs = [
            r
            for r in evaluation.runs
            if r.strategy == name
            and r.fixture == fixture
            and r.cycle == 1
            and r.budget in evaluation.settings.budgets
        ]
        if not runs:
            continue
        points = [(r.ratio, r.weighted.rate or 0.0) for r in runs]
        base = next((i.weighted.rate for i in evaluation.inputs if i.fixture == fixture), 1.0)
        per_fixture[fixture] = {
            "auc": auc(points, base if base is not None else 1.0),
            "max_compression": max_compression(points),
        }
    values = list(per_fixture.values())
    ratios = [v["max_compression"] for v in values if v["max_compression"] is not None]
    return {
        "auc": round(sum(v["auc"] for v in values) / len(values), 4) if values else None,
        "max_compression": min(ratios) if values and len(ratios) == len(values) else None,
        "fixtures": per_fixture,
    }


def _row(name: str, budget: Budget, pooled: Pooled, summarizes: bool) -> list[str]:
    cells = [
        name,
        label(budget),
        _percent(pooled.ratio),
        "-" if is_default(budget) else f"{pooled.compliant}/{pooled.runs}",
        _percent(pooled.weighted.rate),
        _percent(pooled.summary_weighted.rate) if summarizes and pooled.summary_weighted else "-",
    ]
    for key, _ in COLUMNS:
        tally = pooled.retention.get(key)
        cells.append(_percent(tally.rate) if tally else "-")
    cells += [str(pooled.violations), f"{pooled.intact}/{pooled.runs}"]
    return cells


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = []
    for row in [header, *rows]:
        cells = [
            cell.ljust(widths[i]) if i < left else cell.rjust(widths[i])
            for i, cell in enumerate(row)
        ]
        lines.append("  ".join(cells).rstrip())
    return lines


def render(evaluation: Evaluation, gates: Sequence[GateResult]) -> str:
    """The report as `compactcli eval` prints it.

    Retention and compression for every strategy at every budget (round 1, pooled over
    fixtures; the whole context the agent loads next, with the summary alone beside it); the
    summary alone per category, with the share of its tokens spent on read-only commands that
    succeeded; retention per carrier (where in the session each fact was) for the main strategy
    (`main_strategy`) at every budget; the sweep summary per strategy (AUC, highest compression
    at >= 90% weighted retention, paraphrase share, drift of generated sessions); the drift over
    the parts of real sessions (each round's own retention, the first part's retention, the
    loss); the position curve of the gated strategy, the gates, every probe the gated strategy
    lost at the gate budget, and notes on rounds that could not run.
    """
    settings = evaluation.settings
    lines = [
        f"compactcli eval: {_count(len(evaluation.fixtures), 'fixture')}, "
        f"{_count(len(settings.strategies), 'strateg', 'y', 'ies')}, budgets "
        + " ".join(label(b) for b in settings.budgets)
        + f", {settings.rounds} round{'s' if settings.rounds != 1 else ''}; "
        "tokens: exact o200k_base (as `compactcli estimate --method exact`)",
        "fixtures: " + ", ".join(evaluation.fixtures),
        "",
        "Retention and compression (round 1, pooled over fixtures; kept = tokens out / in)",
    ]
    header = [
        "strategy",
        "budget",
        "kept",
        "fit",
        "weighted",
        "summary",
        *(label for _, label in COLUMNS),
        "viol",
        "intact",
    ]
    rows = [
        _row(name, budget, pool(runs), STRATEGIES[name].summarizes)
        for name, budget, runs in _groups(evaluation)
    ]
    lines += _table(header, rows, left=1)
    lines += _summary_table(evaluation)
    lines += _carrier_table(evaluation)

    lines += ["", "Sweep (per strategy)"]
    sweep_rows = []
    for name in settings.strategies:
        sweep = _sweep(evaluation, name)
        drift = drift_points(evaluation.runs, name)
        passing = [
            r
            for r in evaluation.runs
            if r.strategy == name and r.cycle == 1 and r.budget in settings.budgets
        ]
        key_only = pool(passing).key_terms_only.rate if passing else None
        sweep_rows.append(
            [
                name,
                f"{sweep['auc']:.3f}" if sweep["auc"] is not None else "-",
                f"{sweep['max_compression']:.1f}x" if sweep["max_compression"] else "-",
                _percent(key_only, 0),
                " ".join(f"r{c} {d:+.1f}" for c, d in drift) if drift else "-",
            ]
        )
    lines += _table(
        [
            "strategy",
            "AUC",
            "max compression >= 90%",
            "key-terms only",
            f"drift (points) at {label(GATE_BUDGET)}",
        ],
        sweep_rows,
    )
    lines += _parts_table(evaluation)

    gated = [
        r
        for r in evaluation.runs
        if r.strategy == GATED and r.budget == GATE_BUDGET and r.cycle == 1
    ]
    if gated:
        pooled = pool(gated)
        curve = "  ".join(
            f"{i * 100 // BUCKETS}-{(i + 1) * 100 // BUCKETS}%: {_percent(t.rate, 0)}"
            for i, t in enumerate(pooled.position)
        )
        lines += ["", f"Position curve ({GATED} at {GATE_BUDGET:.0%}; depth planted): {curve}"]

    lines += ["", f"Gates ({GATED} at {GATE_BUDGET:.0%} of the input, round 1, pooled)"]
    for result in gates:
        if not result.gate:
            continue
        lines.append(_gate_line(result))
    reported = [g for g in gates if not g.gate]
    if reported:
        lines += ["Reported (not gated)"]
        lines += [_gate_line(g) for g in reported]

    lost = [(r.fixture, f) for r in gated for f in r.failures]
    if lost:
        lines += ["", f"Probes {GATED} lost at {GATE_BUDGET:.0%} ({len(lost)})"]
        for fixture, failure in lost:
            depth = failure["depth"]
            where = f"depth {depth:.2f}" if isinstance(depth, float) else "depth -"
            note = " (key terms present)" if failure["near"] else ""
            if failure["category"] in ("decoy", "superseded"):
                note = " (found as current)" if failure["category"] == "superseded" else " (found)"
            fact = " ".join(str(failure["fact"]).split())
            fact = fact if len(fact) <= 90 else fact[:89] + "…"
            lines.append(
                f"  {fixture} {failure['id']} {failure['category']} {where} "
                f"{failure['carrier']}{note}: {fact}"
            )
    if evaluation.bad_probes:
        lines += ["", "Probes that do not hold on their own input (fix the probe file)"]
        lines += [
            f"  {b['fixture']} {b['id']} ({b['problem']}): {b['fact']}"
            for b in evaluation.bad_probes
        ]
    if evaluation.notes:
        lines += ["", "Notes"]
        lines += [f"  {note}" for note in evaluation.notes]
    failed = [g for g in gates if g.gate and g.passed is False]
    passed = [g for g in gates if g.gate and g.passed]
    lines += ["", f"gates: {len(passed)} passed, {len(failed)} failed"]
    return "\n".join(lines) + "\n"


def _gate_line(result: GateResult) -> str:
    value = result.value
    if result.name in ("violations", "drift", "drift_parts"):
        shown = "-" if value is None else f"{value:g}"
    else:
        shown = _percent(value)
    return f"  {result.status:<7} {result.description:<34} {shown:>8}  (target {result.target})"


def to_json(evaluation: Evaluation, gates: Sequence[GateResult]) -> ReportDict:
    """Every figure of the report, as a JSON-ready dict."""
    settings = evaluation.settings
    return {
        "settings": {
            "budgets": list(settings.budgets),
            "strategies": list(settings.strategies),
            "rounds": settings.rounds,
            "drift_budget": settings.drift_budget,
            "new_turns": settings.new_turns,
            "tokens": "exact o200k_base",
        },
        "fixtures": list(evaluation.fixtures),
        "summary": [
            {"strategy": name, "budget": budget, **pool(runs).to_dict()}
            for name, budget, runs in _groups(evaluation)
        ],
        "sweep": {
            name: {**_sweep(evaluation, name), "drift": drift_points(evaluation.runs, name)}
            for name in settings.strategies
        },
        "gates": [g.to_dict() for g in gates],
        "passed": not any(g.gate and g.passed is False for g in gates),
        "inputs": [i.to_dict() for i in evaluation.inputs],
        "runs": [r.to_dict() for r in evaluation.runs],
        "parts": {
            "drift": [d.to_dict() for d in all_parts_drift(evaluation.parts)],
            "runs": [r.to_dict() for r in evaluation.parts],
        },
        "bad_probes": evaluation.bad_probes,
        "notes": evaluation.notes,
    }


def main_strategy(evaluation: Evaluation) -> str | None:
    """The strategy the per-carrier table shows: the gated one when it ran, else the first."""
    strategies = evaluation.settings.strategies
    if GATED in strategies:
        return GATED
    return strategies[0] if strategies else None


def _summary_table(evaluation: Evaluation) -> list[str]:
    """The summary alone, per category, and its read-only command share."""
    rows = []
    for name, budget, runs in _groups(evaluation):
        pooled = pool(runs)
        if not STRATEGIES[name].summarizes or pooled.summary_retention is None:
            continue
        cells = [
            name,
            label(budget),
            _percent(pooled.summary_weighted.rate if pooled.summary_weighted else None),
        ]
        for key, _ in COLUMNS:
            tally = pooled.summary_retention.get(key)
            cells.append(_percent(tally.rate) if tally else "-")
        cells.append(_percent(pooled.read_only_share))
        rows.append(cells)
    if not rows:
        return []
    header = ["strategy", "budget", "weighted", *(c for _, c in COLUMNS), "read-only"]
    return [
        "",
        "Summary alone (round 1, pooled; read-only = share of summary tokens on read-only "
        "commands that succeeded)",
        *_table(header, rows),
    ]


def _carrier_table(evaluation: Evaluation) -> list[str]:
    """Retention per carrier of the main strategy, one column per budget."""
    name = main_strategy(evaluation)
    groups = [(b, pool(runs)) for n, b, runs in _groups(evaluation) if n == name]
    if not groups:
        return []
    carriers = carrier_order(c for _, pooled in groups for c in pooled.carriers)
    rows = []
    for carrier in carriers:
        total = max(int(p.carriers[carrier].total) for _, p in groups if carrier in p.carriers)
        cells = [carrier, str(total)]
        for _, pooled in groups:
            tally = pooled.carriers.get(carrier)
            cells.append(_percent(tally.rate) if tally else "-")
        rows.append(cells)
    header = ["carrier", "probes", *(label(b) for b, _ in groups)]
    return [
        "",
        f"Retention by carrier ({name}, round 1, pooled; where in the session the fact was)",
        *_table(header, rows),
    ]


def _parts_table(evaluation: Evaluation) -> list[str]:
    """The drift over the parts of real sessions."""
    drifts = all_parts_drift(evaluation.parts)
    if not drifts:
        return []
    rows = []
    for drift in drifts:
        rows.append(
            [
                drift.strategy,
                label(drift.budget),
                str(len(drift.fixtures)),
                " ".join(_percent(r.own) for r in drift.rounds),
                " ".join(_percent(r.first) for r in drift.rounds),
                "-" if drift.loss is None else f"{drift.loss:+.1f}",
            ]
        )
    header = ["strategy", "budget", "fixtures", "own probes", "first part's probes", "loss"]
    parts = max(len(d.rounds) for d in drifts)
    return [
        "",
        f"Drift over {parts} parts of each real session (round k: part k's records appended to "
        "round k-1's output, compacted again; weighted retention per round; loss in points)",
        *_table(header, rows),
    ]
