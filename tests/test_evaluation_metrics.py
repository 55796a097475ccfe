"""Metrics and gates on hand-made runs: retention, compression, AUC, drift, gate verdicts."""

from __future__ import annotations

import pytest

from compactcli.errors import UsageError
from compactcli.evaluation.budgets import Budget, budget_tokens, label, parse_budgets
from compactcli.evaluation.drift import parts_drift
from compactcli.evaluation.gates import check_gates, drift_points, failed
from compactcli.evaluation.metrics import (
    RunMetrics,
    Tally,
    auc,
    max_compression,
    pool,
    run_metrics,
)
from compactcli.evaluation.probes import Origin, make_probe
from compactcli.evaluation.scorer import Outcome, ProbeScore

PROBES = [
    make_probe("c", "user_constraint", "use pnpm", origin=Origin(depth=0.1)),
    make_probe("a", "pending_ask", "add tests", key_terms=("tests",), origin=Origin(depth=0.95)),
    make_probe("f", "file_modified", "src/a.py", origin=Origin(depth=0.5)),
    make_probe("e", "error_string", "KeyError: 'x'", origin=Origin(depth=0.3)),
    make_probe("d", "decision", "use Redis", key_terms=("redis",), origin=Origin(depth=0.7)),
    make_probe("x", "decoy", "fix/never"),
]


_SAME = -1


def _run(
    passed: set[str],
    *,
    budget: Budget = 0.1,
    cycle: int = 1,
    out: int = 90,
    fixture: str = "f1",
    integrity: tuple[str, ...] = (),
    budget_tokens: int | None = _SAME,
    original: frozenset[str] = frozenset("cafed"),
) -> RunMetrics:
    if budget_tokens == _SAME:  # the budget's share of 1000 tokens in
        budget_tokens = None if isinstance(budget, str) else int(1000 * budget)
    scores = [
        ProbeScore(
            p,
            Outcome(p.id in passed, "key_terms" if p.id == "d" and p.id in passed else None),
            None,
        )
        for p in PROBES
    ]
    return run_metrics(
        fixture=fixture,
        format="openai",
        strategy="compact",
        budget=budget,
        cycle=cycle,
        tokens=(1000, out, 1100, out + 5),
        budget_tokens=budget_tokens,
        scores=scores,
        integrity=integrity,
        summarizes=True,
        original=original,
    )


def test_run_metrics_count_what_passed() -> None:
    metrics = _run({"c", "a", "f", "d", "x"})
    assert {k: v.to_list() for k, v in metrics.retention.items()} == {
        "user_constraint": [1, 1],
        "pending_ask": [1, 1],
        "file_modified": [1, 1],
        "error_string": [0, 1],
        "decision": [1, 1],
    }
    assert metrics.weighted == Tally(6.5, 8.0)  # weights 2 + 2 + 1.5 + 1 of 8
    assert (metrics.must_survive_violations, metrics.violations) == (0, 0)
    assert metrics.key_terms_only == Tally(1, 2)  # the decision passed on its key terms only
    assert [t.to_list() for t in metrics.position] == [[1, 1], [0, 1], [1, 1], [1, 1], [1, 1]]
    assert (metrics.ratio, metrics.compliant, metrics.negative_compression) == (0.09, True, False)
    assert _run(set()).violations == 1  # the decoy was found
    assert _run({"x"}, out=101).compliant is False


def test_pooling_adds_fixtures_up() -> None:
    pooled = pool([_run({"c", "a", "f", "x"}), _run({"c", "e", "x"}, out=110, fixture="f2")])
    assert pooled.retention["pending_ask"] == Tally(1, 2)
    assert (pooled.ratio, pooled.compliant, pooled.runs) == (0.1, 1, 2)
    assert pooled.must_survive_violations == 1


def test_auc_and_the_highest_compression_at_90_percent() -> None:
    assert auc([]) == 0.0  # the input alone covers no compression at all
    assert auc([(0.01, 1.0)]) == 1.0
    assert auc([(0.1, 1.0)]) == 0.5  # nothing known below 10%: a log decade of two is lost
    assert auc([(0.1, 0.5)]) == 0.375
    assert max_compression([(0.5, 0.99), (0.1, 0.92), (0.02, 0.5)]) == 10.0
    assert max_compression([(0.5, 0.8)]) is None


def test_the_gates_pass_and_fail_on_their_targets() -> None:
    good = [_run({"c", "a", "f", "e", "d", "x"}), _run({"c", "a", "f", "e", "d", "x"}, budget=0.25)]
    results = {g.name: g for g in check_gates(good)}
    assert failed(list(results.values())) == []
    assert results["weighted"].value == 1.0 and results["weighted_4x"].status == "pass"
    bad = [_run({"c", "f", "e", "d"}, integrity=("invalid: line 2: x: y",))]
    verdicts = {g.name: g.status for g in check_gates(bad)}
    assert verdicts == {
        "user_constraint": "pass",
        "pending_ask": "FAIL",
        "file_modified": "pass",
        "error_string": "pass",
        "decision": "pass",
        "weighted": "FAIL",  # 6 of 8
        "violations": "FAIL",  # the decoy
        "integrity": "FAIL",
        "budget_10x": "pass",
    }
    assert all(g.status == "skipped" for g in check_gates([]) if g.gate)


def test_drift_compares_the_same_probes_round_by_round() -> None:
    runs = [
        _run({"c", "a", "f", "e", "d"}),
        _run({"c", "a", "f"}, cycle=2),
        _run({"c", "a", "f", "e"}, cycle=3),
    ]
    assert drift_points(runs, "compact") == [(2, 31.25), (3, 12.5)]


def test_budgets_are_shares_or_the_default() -> None:
    assert parse_budgets("default,0.2,0.1,0.05") == ("default", 0.2, 0.1, 0.05)
    assert parse_budgets("Default, 20%, 10%") == ("default", 0.2, 0.1)
    assert [label(b) for b in parse_budgets("default,0.5,0.02")] == ["default", "50%", "2%"]
    assert (budget_tokens(0.1, 20_000), budget_tokens("default", 20_000)) == (2000, None)
    with pytest.raises(UsageError, match=r"such as 0\.5,0\.1 or default"):
        parse_budgets("0.1,most")


def test_a_run_with_no_token_budget_has_no_compliance() -> None:
    metrics = _run({"c"}, budget_tokens=None)
    assert metrics.compliant is None
    assert metrics.to_dict()["compliant"] is None
    assert pool([metrics]).compliant == 0


def test_retention_per_carrier_in_both_scopes() -> None:
    probes = [
        make_probe("u", "user_constraint", "use pnpm", origin=Origin(carrier="user_text")),
        make_probe("s", "decision", "use Redis", origin=Origin(carrier="earlier_summary")),
        make_probe("t", "error_string", "E1", origin=Origin(carrier="tool_result")),
        make_probe("t2", "error_string", "E2", origin=Origin(carrier="tool_result")),
        make_probe("z", "identifier", "v1", origin=Origin(carrier="zz-custom")),
        make_probe("x", "decoy", "nope", origin=Origin(carrier="none")),
    ]
    whole = {"u", "s", "t", "z", "x"}
    scores = [ProbeScore(p, Outcome(p.id in whole), Outcome(p.id in {"u", "x"})) for p in probes]
    metrics = run_metrics(
        fixture="f",
        format="openai",
        strategy="compact",
        budget=0.1,
        cycle=1,
        tokens=(100, 10, 100, 10),
        budget_tokens=10,
        scores=scores,
        integrity=(),
        summarizes=True,
        summary_costs=(3, 12),
    )
    assert {k: v.to_list() for k, v in metrics.carriers.items()} == {
        "user_text": [1, 1],
        "tool_result": [1, 2],
        "earlier_summary": [1, 1],
        "zz-custom": [1, 1],  # an unknown carrier comes after the known ones
    }
    assert metrics.summary_carriers is not None
    assert metrics.summary_carriers["earlier_summary"] == Tally(0, 1)
    assert (metrics.summary_tokens, metrics.read_only_tokens) == (12, 3)
    assert metrics.read_only_share == 0.25
    pooled = pool([metrics, metrics])
    assert pooled.carriers["tool_result"] == Tally(2, 4)
    assert (pooled.read_only_share, pooled.to_dict()["carrier_counts"]["user_text"]) == (
        0.25,
        [2, 2],
    )
    assert pooled.to_dict()["summary_retention_counts"]["user_constraint"] == [2, 2]


def test_drift_over_parts_is_measured_on_the_first_parts_probes() -> None:
    def part(cycle: int, passed: set[str], fixture: str = "f1") -> RunMetrics:
        return _run(passed, cycle=cycle, fixture=fixture, original=frozenset("cf"))

    runs = [
        part(1, {"c", "f"}),
        part(2, {"c", "f", "a"}),
        part(3, {"c", "a", "e", "d"}),  # the first part's file was lost
        part(1, {"c"}, fixture="f2"),  # stopped after round 1: left out
    ]
    drift = parts_drift(runs, "compact", 0.1)
    assert drift is not None
    assert drift.fixtures == ("f1",)
    assert [(r.cycle, r.first) for r in drift.rounds] == [(1, 1.0), (2, 1.0), (3, 2 / 3.5)]
    assert drift.rounds[2].own == 6.5 / 8
    assert drift.loss == round((1 - 2 / 3.5) * 100, 2)
    assert parts_drift(runs[:1], "compact", 0.1) is None
    gates = {g.name: g for g in check_gates([], runs)}
    assert gates["drift_parts"].description == "drift over 3 parts (points)"
    assert (gates["drift_parts"].status, gates["drift_parts"].gate) == ("miss", False)
