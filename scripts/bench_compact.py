#!/usr/bin/env python3
"""Benchmark `compactcli compact` against `compactcli estimate --method heuristic` on one file.

Generates the synthetic Claude Code transcript of `scripts/bench_estimate.py` (default 100 MB)
in a temporary folder, then times, as a user runs them, the two commands on it:

- `compactcli estimate --method heuristic FILE` (the yardstick: one streaming pass), and
- `compactcli compact FILE --force -o OUT` (read, prune, summarize with the extractive
  summarizer, check, write),

alternating them for `--rounds` rounds and keeping each one's best time (after writing the
package's bytecode, as an installed copy has it), and prints the ratio with its target: compact
within 3 times the estimate. The ratio is taken on the processes' CPU time (user + system),
which a busy shared machine disturbs less than wall-clock time; both are printed. It also checks
that the output validates and is smaller.

Usage: python scripts/bench_compact.py [--mb 100] [--rounds 3] [--keep DIR]
Nothing here reaches the network.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_estimate import compile_package, generate  # noqa: E402

from compactcli import read_transcript, validate  # noqa: E402

TARGET = 3.0


def timed(command: list[str]) -> tuple[float, float, subprocess.CompletedProcess[bytes]]:
    """(wall seconds, CPU seconds of the child, the run)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPACTCLI_")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, env=env, check=False)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        sys.stderr.write(done.stderr.decode())
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}")
    return elapsed, cpu, done


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=100, help="size of the synthetic transcript")
    parser.add_argument("--rounds", type=int, default=3, help="timing rounds (best is kept)")
    parser.add_argument("--keep", type=Path, help="write the files here and keep them")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="compactcli-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / "synthetic-claude-code.jsonl"
    output = folder / "compacted.jsonl"
    compile_package()
    started = time.perf_counter()
    size, records, _ = generate(source, args.mb * 1_000_000)
    print(
        f"transcript: {size / 1e6:.1f} MB, {records:,} records "
        f"(generated in {time.perf_counter() - started:.1f} s)"
    )
    cli = [sys.executable, "-m", "compactcli"]
    estimate = [*cli, "estimate", "--method", "heuristic", str(source)]
    compact = [*cli, "compact", str(source), "--force", "-o", str(output), "--json"]
    wall = {"estimate": float("inf"), "compact": float("inf")}
    cpu = dict(wall)
    report = b""
    for _ in range(args.rounds):
        for name, command in (("estimate", estimate), ("compact", compact)):
            elapsed, used, done = timed(command)
            wall[name] = min(wall[name], elapsed)
            cpu[name] = min(cpu[name], used)
            if name == "compact":
                report = done.stdout
    print(f"compact --json: {report.decode().strip()}")
    result = read_transcript(str(output))
    errors = validate(result).errors
    smaller = output.stat().st_size < size
    for name, label in (
        ("estimate", "estimate --method heuristic"),
        ("compact", "compact --force"),
    ):
        print(
            f"{label}: {wall[name]:.2f} s wall ({size / wall[name] / 1e6:.0f} MB/s), "
            f"{cpu[name]:.2f} s CPU"
        )
    print(
        f"output: {output.stat().st_size / 1e6:.1f} MB, "
        f"{'valid' if not errors else f'{len(errors)} validation errors'}"
    )
    ratio = cpu["compact"] / cpu["estimate"]
    ok = ratio <= TARGET and not errors and smaller
    print(
        f"ratio compact / estimate: {ratio:.2f} in CPU time, "
        f"{wall['compact'] / wall['estimate']:.2f} in wall time "
        f"(target <= {TARGET:.1f}) {'ok' if ok else 'MISSED'}"
    )
    if args.keep is None:
        source.unlink()
        output.unlink(missing_ok=True)
        folder.rmdir()
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
