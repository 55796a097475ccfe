#!/usr/bin/env python3
"""How close `compactcli estimate` lands on the growth the agents recorded.

For each Claude Code and Codex transcript (default: the real ones in ../shared/corpus), take
every pair of consecutive usage anchors on the context view (the context as it stood before
each compaction, and after the last one), and compare what the agent recorded between them
(the later context size minus the earlier) with what compactcli estimates was added: the
messages in between plus the later response. Prints, per file, the aggregate ratio
estimated / recorded for

- `heuristic`: the fixed per-block rules (target: within +-15% for files with >= 10 anchors);
- `calibrated`: the heuristic with its densities scaled by the factor fitted on the same
  deltas (target: within +-5%);
- `held-out`: the factor fitted on the first half of the deltas, judged on the second half
  (what estimating the tail after the last anchor relies on; no target, shown for honesty).

Usage: python scripts/estimate_accuracy.py [PATH ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compactcli import get_dialect, read_transcript  # noqa: E402
from compactcli.estimate_usage import Delta, usage_deltas  # noqa: E402
from compactcli.tokens import HeuristicCounter, density_for  # noqa: E402
from compactcli.transcript import Transcript  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"
MIN_ANCHORS = 10


def epochs(transcript: Transcript) -> list[Transcript]:
    """The transcript as it stood before each compaction, and whole."""
    dialect = get_dialect(transcript.format)
    cuts = [c.index for c in dialect.compactions(transcript)] + [len(transcript.records)]
    return [transcript.evolve(records=transcript.records[:cut]) for cut in cuts]


def deltas_of(transcript: Transcript, factor: float = 1.0) -> list[Delta]:
    """Every consecutive-anchor delta of every epoch, each pair once."""
    model = get_dialect(transcript.format).model(transcript)
    density = density_for(model, transcript.format)
    counter = HeuristicCounter(density.scaled(1 / factor) if factor != 1.0 else density)
    seen: dict[tuple[int, int], Delta] = {}
    for epoch in epochs(transcript):
        found, _ = usage_deltas(epoch.records, transcript.format, counter=counter)
        for delta in found:
            seen[(delta.first_line, delta.last_line)] = delta
    return sorted(seen.values(), key=lambda d: d.first_line)


def ratio(deltas: list[Delta]) -> float | None:
    recorded = sum(d.recorded for d in deltas)
    return sum(d.estimated for d in deltas) / recorded if recorded > 0 else None


def fit(transcript: Transcript, deltas: list[Delta]) -> float | None:
    """The density factor that makes `deltas` (heuristic) add up to the recorded growth."""
    recorded = sum(d.recorded for d in deltas)
    if recorded <= 0:
        return None
    low, high = 0.1, 10.0
    lines = {(d.first_line, d.last_line) for d in deltas}

    def total(factor: float) -> int:
        return sum(
            d.estimated
            for d in deltas_of(transcript, factor)
            if (d.first_line, d.last_line) in lines
        )

    for _ in range(30):
        middle = (low + high) / 2
        if total(middle) < recorded:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def show(value: float | None, bound: float | None) -> str:
    if value is None:
        return "     -       "
    mark = ""
    if bound is not None:
        mark = " ok" if abs(value - 1) <= bound else " OUT"
    return f"{value:6.3f}{mark:4}"


def main(argv: list[str]) -> int:
    paths = [Path(p) for p in argv] or sorted(
        p for p in CORPUS.glob("*.jsonl") if p.name.startswith(("claude-code-", "codex-"))
    )
    if not paths:
        print(f"no transcripts (looked in {CORPUS})")
        return 0
    print(
        f"{'file':40} {'format':11} {'anchor pairs':>12} {'recorded':>9} "
        f"{'heuristic':>10} {'calibrated':>11} {'held-out':>9}"
    )
    failed = False
    for path in paths:
        transcript = read_transcript(str(path))
        deltas = deltas_of(transcript)
        judged = len(deltas) + 1 >= MIN_ANCHORS
        heuristic = ratio(deltas)
        factor = fit(transcript, deltas) if deltas else None
        calibrated = ratio(deltas_of(transcript, factor)) if factor else None
        held_out = None
        if len(deltas) >= 4:
            half = len(deltas) // 2
            first = deltas[:half]
            early = fit(transcript, first)
            if early:
                later = {(d.first_line, d.last_line) for d in deltas[half:]}
                held_out = ratio(
                    [
                        d
                        for d in deltas_of(transcript, early)
                        if (d.first_line, d.last_line) in later
                    ]
                )
        recorded = sum(d.recorded for d in deltas)
        print(
            f"{path.name:40} {transcript.format:11} {len(deltas):12d} {recorded:9d} "
            f"{show(heuristic, 0.15 if judged else None):>10} "
            f"{show(calibrated, 0.05 if judged else None):>11} {show(held_out, None):>9}"
        )
        if judged and (
            heuristic is None
            or abs(heuristic - 1) > 0.15
            or calibrated is None
            or abs(calibrated - 1) > 0.05
        ):
            failed = True
    print(
        f"\nratios are estimated / recorded growth, summed per file; targets apply to files with "
        f">= {MIN_ANCHORS} anchors (heuristic +-15%, calibrated +-5%)."
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
