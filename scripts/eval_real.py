#!/usr/bin/env python3
"""Score compaction on the real sessions with hand-written probes, one markdown table per split.

    python scripts/eval_real.py                     # fixtures/real/tune and fixtures/real/heldout
    python scripts/eval_real.py --corpus DIR        # the sessions are elsewhere
    python scripts/eval_real.py --split heldout     # one split only

The probe files live in fixtures/real/SPLIT/NAME.probes.jsonl; the sessions they describe are
not in the repository but in ../shared/corpus/NAME.jsonl (beside the checkout). For each split
it runs `compactcli eval --fixtures fixtures/real/SPLIT --transcripts CORPUS --strategies
compact --budgets default,0.2,0.1,0.05 --rounds 3` (in process) and prints, per budget: the
kept share of tokens, weighted retention and retention per category in the whole context the
agent loads next and in the summary alone (`whole / summary`), must-survive probes lost,
negative-probe violations, the share of summary tokens spent on read-only commands that
succeeded, and the drift over the session's three parts (the first part's weighted retention
lost from round 1 to round 3, in points, at 10% and at default); then retention per carrier.
A split without probe files, or a missing corpus, is reported and skipped; the script exits 0
whatever the figures are (they are reported, not gated).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from compactcli.evaluation import EvalOptions, EvalSettings, FixtureError, ProbeError, run
from compactcli.evaluation.budgets import Budget, label, parse_budgets
from compactcli.evaluation.drift import all_parts_drift
from compactcli.evaluation.harness import Evaluation
from compactcli.evaluation.metrics import Pooled, Tally, carrier_order, pool
from compactcli.evaluation.report import COLUMNS

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
CORPUS = os.path.normpath(os.path.join(ROOT, "..", "shared", "corpus"))
SPLITS = ("tune", "heldout")
BUDGETS = "default,0.2,0.1,0.05"
STRATEGY = "compact"


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def _rate(tally: Tally | None) -> float | None:
    return tally.rate if tally is not None else None


def _markdown(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def _by_budget(evaluation: Evaluation) -> list[tuple[Budget, Pooled]]:
    found = []
    for budget in evaluation.settings.budgets:
        runs = [
            r
            for r in evaluation.runs
            if r.strategy == STRATEGY and r.budget == budget and r.cycle == 1
        ]
        if runs:
            found.append((budget, pool(runs)))
    return found


def tables(evaluation: Evaluation) -> list[str]:
    """The split's tables, as markdown lines."""
    drift = {d.budget: d for d in all_parts_drift(evaluation.parts) if d.strategy == STRATEGY}
    rows = []
    for budget, pooled in _by_budget(evaluation):
        summary = pooled.summary_retention or {}
        cells = [
            label(budget),
            _percent(pooled.ratio),
            f"{_percent(_rate(pooled.weighted))} / {_percent(_rate(pooled.summary_weighted))}",
        ]
        for key, _ in COLUMNS:
            cells.append(
                f"{_percent(_rate(pooled.retention.get(key)))} / "
                f"{_percent(_rate(summary.get(key)))}"
            )
        loss = drift[budget].loss if budget in drift else None
        cells += [
            str(pooled.must_survive_violations),
            str(pooled.violations),
            _percent(pooled.read_only_share),
            "-" if loss is None else f"{loss:+.1f}",
        ]
        rows.append(cells)
    header = [
        "budget",
        "kept",
        "weighted",
        *(name for _, name in COLUMNS),
        "must-survive lost",
        "violations",
        "read-only",
        "drift (points)",
    ]
    lines = _markdown(header, rows)
    groups = _by_budget(evaluation)
    carriers = carrier_order(c for _, pooled in groups for c in pooled.carriers)
    carrier_rows = []
    for carrier in carriers:
        cells = [carrier]
        for _, pooled in groups:
            tally = pooled.carriers.get(carrier)
            summary_tally = (pooled.summary_carriers or {}).get(carrier)
            cells.append(f"{_percent(_rate(tally))} / {_percent(_rate(summary_tally))}")
        carrier_rows.append(cells)
    lines += ["", *_markdown(["carrier", *(label(b) for b, _ in groups)], carrier_rows)]
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=CORPUS, help="the folder of the sessions")
    parser.add_argument("--split", action="append", choices=SPLITS, help="a split (repeatable)")
    args = parser.parse_args()
    if not os.path.isdir(args.corpus):
        print(f"eval_real: {args.corpus}: no corpus here; nothing to score", file=sys.stderr)
        return 0
    settings = EvalSettings(budgets=parse_budgets(BUDGETS), strategies=(STRATEGY,), rounds=3)
    for split in args.split or SPLITS:
        folder = os.path.join(ROOT, "fixtures", "real", split)
        try:
            evaluation, _ = run(
                EvalOptions(folders=(folder,), transcripts=args.corpus, settings=settings)
            )
        except (FixtureError, ProbeError) as error:
            print(f"## {split}\n\nnot scored: {error}\n")
            continue
        print(f"## {split} ({len(evaluation.fixtures)} sessions: {', '.join(evaluation.fixtures)})")
        print()
        print(
            f"`{STRATEGY}` at each budget; `whole / summary`: the whole context the agent loads "
            "next / the summary alone; drift: the first part's weighted retention lost from "
            "round 1 to round 3 (each part appended to the last output and compacted again)."
        )
        print()
        print("\n".join(tables(evaluation)))
        for note in evaluation.notes:
            print(f"\n- {note}")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
