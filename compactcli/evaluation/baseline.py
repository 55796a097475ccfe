"""The evaluation's baseline: the figures of a run, kept in the repository and compared exactly.

`figures(evaluation, gates)` is every deterministic figure of a run (a `BaselineDict`; per run:
tokens, budget, retention counts, violations, integrity failures, the ids of the probes lost, the
summary's read-only command tokens; pooled: the report's summary, sweep, drift over parts and
gates; the notes), without timings; `dumps` writes it with one line per run.
`compare(expected, actual)` lists the differences, one line each, at 0% tolerance: a change of
any figure is an explicit, reviewed update of the file (`compactcli eval --write-baseline FILE`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NotRequired, TypedDict

import orjson

from compactcli.evaluation.budgets import Budget
from compactcli.evaluation.drift import PartsDriftDict
from compactcli.evaluation.gates import GateDict, GateResult
from compactcli.evaluation.harness import Evaluation
from compactcli.evaluation.metrics import RunDict
from compactcli.evaluation.report import SettingsDict, SummaryRowDict, SweepDict, to_json


class BaselineRun(TypedDict):
    """One run's deterministic figures (`_run`), one line of the baseline file: `tokens` is
    `[in, out, budget]` (exact), `heuristic` `[in, out]`, `violations` `[decoy, superseded]`,
    `lost` the ids of the probes lost, `read_only` `[read-only command tokens, summary tokens]`;
    `parts` marks a drift round over the parts of a real session."""

    fixture: str
    strategy: str
    budget: Budget
    cycle: int
    tokens: list[int | None]
    heuristic: list[int]
    weighted: float | None
    retention: dict[str, list[float]]
    violations: list[int]
    integrity: list[str]
    lost: list[str]
    read_only: list[int]
    parts: NotRequired[bool]


class BaselineDict(TypedDict):
    """`figures(evaluation, gates)`: the baseline file (`--write-baseline`), as plain JSON values
    (tuples become lists)."""

    settings: SettingsDict
    fixtures: list[str]
    gates: list[GateDict]
    summary: list[SummaryRowDict]
    sweep: dict[str, SweepDict]
    parts_drift: list[PartsDriftDict]
    notes: list[str]
    runs: list[BaselineRun]


def figures(evaluation: Evaluation, gates: Sequence[GateResult]) -> BaselineDict:
    """Every deterministic figure of the run (see the module docstring), as plain JSON values."""
    data = to_json(evaluation, gates)
    found: BaselineDict = orjson.loads(
        orjson.dumps(
            {
                "settings": data["settings"],
                "fixtures": data["fixtures"],
                "gates": data["gates"],
                "summary": data["summary"],
                "sweep": data["sweep"],
                "parts_drift": data["parts"]["drift"],
                "notes": data["notes"],
                "runs": [_run(r) for r in data["runs"]]
                + [{**_run(r), "parts": True} for r in data["parts"]["runs"]],
            }
        )
    )
    return found


def _run(r: RunDict) -> BaselineRun:
    """One run's deterministic figures, on one line of the file."""
    return {
        "fixture": r["fixture"],
        "strategy": r["strategy"],
        "budget": r["budget"],
        "cycle": r["cycle"],
        "tokens": [r["tokens_in"], r["tokens_out"], r["budget_tokens"]],
        "heuristic": [r["heuristic_in"], r["heuristic_out"]],
        "weighted": r["weighted"],
        "retention": r["retention"],
        "violations": [r["decoy_violations"], r["superseded_violations"]],
        "integrity": r["integrity"],
        "lost": [f["id"] for f in r["failures"]],
        "read_only": [r["read_only_tokens"], r["summary_tokens"]],
    }


def dumps(found: BaselineDict) -> bytes:
    """The baseline file: indented JSON, one line per run (so a change shows as one line)."""
    head = {k: v for k, v in found.items() if k != "runs"}
    text = orjson.dumps(head, option=orjson.OPT_INDENT_2).decode()
    runs = ",\n".join("    " + orjson.dumps(r).decode() for r in found["runs"])
    return (text[:-2] + ',\n  "runs": [\n' + runs + "\n  ]\n}\n").encode()


def compare(expected: object, actual: object, path: str = "") -> list[str]:
    """The differences between two figure trees, as `path: expected X, got Y` lines: `expected`
    is read from a baseline file (`BaselineDict` when it is one, but any JSON value is
    compared)."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        found: list[str] = []
        for key in sorted(set(expected) | set(actual), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in actual:
                found.append(f"{where}: missing from this run")
            elif key not in expected:
                found.append(f"{where}: not in the baseline")
            else:
                found += compare(expected[key], actual[key], where)
        return found
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return [f"{path}: {len(expected)} items in the baseline, {len(actual)} now"]
        found = []
        for i, (a, b) in enumerate(zip(expected, actual, strict=True)):
            found += compare(a, b, f"{path}[{i}]")
        return found
    if expected != actual:
        return [f"{path}: expected {expected!r}, got {actual!r}"]
    return []
