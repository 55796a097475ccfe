#!/usr/bin/env python3
"""How close `compactcli estimate` lands on the growth the agents recorded.

For each Claude Code, Codex or pi transcript (default: the Claude Code and Codex ones of
../shared/corpus), take every pair of consecutive usage anchors on the context view (the context
as it stood before each compaction, and after the last one), and compare what the agent recorded
between them (the later context size minus the earlier) with what compactcli estimates was added:
the messages in between plus the later response. A Claude Code pair is left out (counted in `left
out`) when main-thread messages the file holds between its two anchors are off the context chain
Claude Code's loader reads now (`comparable`): the live session may have sent them (tool
progress records written after a later turn hang it off an older tool call), a resume does not,
so what it recorded is not the growth of the context compactcli counts. Prints, per file, the
aggregate ratio estimated / recorded for

- `heuristic`: the fixed per-block rules (target: within +-15% for files with >= 10 anchors);
- `calibrated`: judged held out, as the method is used (it fits what was recorded so far and
  estimates what comes after): the factor is fitted on the first half of the deltas and the
  ratio is taken on the second half (target: within +-5% for files with >= 10 anchors);
- `in-sample`: the factor fitted on all the deltas and judged on them too (1.000 by
  construction, shown only to tell it apart from the held-out figure).

The fit scales the text densities only: framing and media (images at their provider's cost,
documents) are fixed costs and stay as they are. The factor is the one that makes the estimated
growth of the fitted deltas add up to their recorded growth (bisection, as `compactcli estimate
--method calibrated` fits it). That is the maximum-likelihood factor when each delta's error
grows with its size, and it is the figure the judged ratio measures; a median of per-delta
ratios was not used because a single delta's estimate is often off by 2x either way where the
agent recorded a response's output in the next request (the pairs cancel in a sum, not in a
median).

Usage: python scripts/estimate_accuracy.py [PATH ...]  (exit 1 when a target is missed)
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compactcli import get_dialect, read_transcript  # noqa: E402
from compactcli.errors import InputError  # noqa: E402
from compactcli.estimate_usage import Delta, usage_deltas  # noqa: E402
from compactcli.tokens import HeuristicCounter, density_for  # noqa: E402
from compactcli.transcript import Transcript  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"
MIN_ANCHORS = 10
HEURISTIC_BOUND = 0.15
CALIBRATED_BOUND = 0.05


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


def comparable(transcript: Transcript, deltas: list[Delta]) -> tuple[list[Delta], int]:
    """`deltas` but those whose span holds Claude Code messages of the main thread that are off
    the context chain of an epoch that read them, and how many were left out. A resume does
    not load them, so compactcli does not count them; but the live session may have sent them
    (tool progress records written after a later turn hang that turn's chain off an older tool
    call), and then what it recorded is not the growth of the chain. A rewind's dead branch
    leaves its pairs out too. Subagent (sidechain) records are never in the main context."""
    if transcript.format != "claude-code":
        return deltas, 0
    dialect = get_dialect(transcript.format)
    counter = HeuristicCounter(density_for(dialect.model(transcript), transcript.format))
    spoilt: set[tuple[int, int]] = set()
    for epoch in epochs(transcript):
        records = epoch.records
        chain = {records[m.index].lineno for m in dialect.context(epoch)}
        if not chain:
            continue
        first = min(chain)
        off = [
            records[m.index].lineno
            for m in dialect.messages(epoch)
            if records[m.index].lineno > first
            and records[m.index].lineno not in chain
            and not (
                isinstance(records[m.index].raw, dict) and records[m.index].raw.get("isSidechain")
            )
        ]
        found, _ = usage_deltas(records, transcript.format, counter=counter)
        spoilt.update(
            (d.first_line, d.last_line)
            for d in found
            if any(d.first_line < line < d.last_line for line in off)
        )
    kept = [d for d in deltas if (d.first_line, d.last_line) not in spoilt]
    return kept, len(deltas) - len(kept)


def _same(deltas: list[Delta], pairs: list[Delta]) -> list[Delta]:
    """Of `deltas`, those of the anchor pairs of `pairs`."""
    keys = {(d.first_line, d.last_line) for d in pairs}
    return [d for d in deltas if (d.first_line, d.last_line) in keys]


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


@dataclass(frozen=True)
class Accuracy:
    """One file's figures: ratios estimated / recorded (None when there is nothing to judge)."""

    path: Path
    format: str
    pairs: int
    left_out: int  # pairs whose span holds a branch the loader drops (`comparable`)
    recorded: int
    heuristic: float | None
    held_out: float | None
    in_sample: float | None

    @property
    def judged(self) -> bool:
        """Whether the targets apply: at least `MIN_ANCHORS` usage anchors."""
        return self.pairs + 1 >= MIN_ANCHORS

    def misses(self) -> list[str]:
        """The targets this file misses (none when it is not judged)."""
        if not self.judged:
            return []
        found = []
        if self.heuristic is None or abs(self.heuristic - 1) > HEURISTIC_BOUND:
            found.append("heuristic")
        if self.held_out is None or abs(self.held_out - 1) > CALIBRATED_BOUND:
            found.append("calibrated")
        return found


def held_out(transcript: Transcript, deltas: list[Delta]) -> float | None:
    """The ratio on the second half of `deltas` under the factor fitted on the first half."""
    if len(deltas) < 4:
        return None
    half = len(deltas) // 2
    early = fit(transcript, deltas[:half])
    if not early:
        return None
    return ratio(_same(deltas_of(transcript, early), deltas[half:]))


def measure(path: Path) -> Accuracy:
    """The accuracy figures of the transcript at `path`."""
    transcript = read_transcript(str(path))
    deltas, left_out = comparable(transcript, deltas_of(transcript))
    factor = fit(transcript, deltas) if deltas else None
    return Accuracy(
        path=path,
        format=transcript.format,
        pairs=len(deltas),
        left_out=left_out,
        recorded=sum(d.recorded for d in deltas),
        heuristic=ratio(deltas),
        held_out=held_out(transcript, deltas),
        in_sample=ratio(_same(deltas_of(transcript, factor), deltas)) if factor else None,
    )


def corpus_files(folder: Path = CORPUS) -> list[Path]:
    """The Claude Code and Codex transcripts of the corpus folder."""
    return sorted(
        p for p in folder.glob("*.jsonl") if p.name.startswith(("claude-code-", "codex-"))
    )


def show(value: float | None, bound: float | None) -> str:
    if value is None:
        return "     -       "
    mark = ""
    if bound is not None:
        mark = " ok" if abs(value - 1) <= bound else " OUT"
    return f"{value:6.3f}{mark:4}"


def main(argv: list[str]) -> int:
    if any(arg in ("-h", "--help") for arg in argv):
        print(__doc__.strip().splitlines()[-1])
        return 0
    paths = [Path(p) for p in argv] or corpus_files()
    if not paths:
        print(f"no transcripts (looked in {CORPUS})")
        return 0
    print(
        f"{'file':40} {'format':11} {'anchor pairs':>12} {'left out':>8} {'recorded':>9} "
        f"{'heuristic':>10} {'calibrated':>11} {'in-sample':>9}"
    )
    failed = False
    for path in paths:
        try:
            row = measure(path)
        except InputError as error:  # one line for a file that is not a transcript, then on
            print(f"{path.name:40} skipped: {error}")
            continue
        judged = row.judged
        print(
            f"{path.name:40} {row.format:11} {row.pairs:12d} {row.left_out:8d} {row.recorded:9d} "
            f"{show(row.heuristic, HEURISTIC_BOUND if judged else None):>10} "
            f"{show(row.held_out, CALIBRATED_BOUND if judged else None):>11} "
            f"{show(row.in_sample, None):>9}"
        )
        failed = failed or bool(row.misses())
    print(
        f"\nratios are estimated / recorded growth, summed per file; calibrated is fitted on the "
        f"first half of a file's deltas and judged on the second (in-sample: fitted and judged "
        f"on all); targets apply to files with >= {MIN_ANCHORS} anchors (heuristic +-15%, "
        f"calibrated +-5%)."
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
