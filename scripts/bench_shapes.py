#!/usr/bin/env python3
"""`estimate` and `compact` on every shape of session, at several sizes, as ratios to yardsticks.

For each input shape and size this runs, as a user runs them, each in a new process:

- `parse`: a bare orjson parse of every line of the file (`python -c`, start-up included), the
  yardstick of `estimate`;
- `estimate`: `compactcli estimate --method heuristic FILE`;
- `usage`: `compactcli estimate --method usage FILE`;
- `compact`: `compactcli compact FILE --force -o OUT`.

Runs are interleaved (each round runs every command on every input, in a shuffled order) and the
medians of `--rounds` rounds of CPU time (user + system) and wall time are kept, with the peak
resident size. It prints, per input, `estimate / parse` as throughput (target >= 0.5x),
`compact / estimate` (target <= 3x) and compact's peak against twice the input plus 100 MiB.

Shapes (`--shapes`, all by default), each about `--mb` MB (several sizes: `--mb 100,400`):
`synthetic` (the session of `scripts/bench_estimate.py`: large records, thinking signatures,
numbered Read results with their UI copies), `small-tools` (long runs of small tool calls and
results), `corpus-claude` and `corpus-codex` (the real sessions of ../shared/corpus concatenated
with fresh ids; left out when that folder is absent). `--keep DIR` keeps the inputs for the next
run. Nothing here reaches the network.

Usage: python scripts/bench_shapes.py [--mb 100,400] [--rounds 5] [--shapes a,b] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from bench_estimate import compile_package, generate  # noqa: E402
from bench_paths import cli_driver, concatenate_corpus, generate_small_tools  # noqa: E402

SHAPES = ("synthetic", "small-tools", "corpus-claude", "corpus-codex")

PARSE = """
import orjson, sys
loads = orjson.loads
for line in open(sys.argv[1], "rb"):
    loads(line)
"""


def maker(shape: str, target: int, corpus: Path) -> Callable[[Path], object] | None:
    if shape == "synthetic":
        return lambda path: generate(path, target)
    if shape == "small-tools":
        return lambda path: generate_small_tools(path, target)
    prefix = "claude-code-" if shape == "corpus-claude" else "codex-"
    sources = sorted(corpus.glob(f"{prefix}*.jsonl")) if corpus.is_dir() else []
    if not sources:
        return None
    return lambda path: concatenate_corpus(sources, path, target, shape == "corpus-claude")


def run(command: str, source: Path, folder: Path) -> tuple[float, float, float]:
    """(CPU seconds, wall seconds, peak MiB) of one run of `command` on `source`."""
    import time

    output, peak = folder / "out.jsonl", folder / "peak.txt"
    output.unlink(missing_ok=True)
    peak.unlink(missing_ok=True)
    if command == "parse":
        argv = [sys.executable, "-c", PARSE, str(source)]
    else:
        args = {
            "estimate": ["estimate", "--method", "heuristic", str(source)],
            "usage": ["estimate", "--method", "usage", str(source)],
            "compact": ["compact", str(source), "--force", "-o", str(output)],
        }[command]
        code = cli_driver(ROOT, ["compactcli", *args], peak)
        argv = [sys.executable, "-c", code]
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPACTCLI_")}
    started = time.perf_counter()
    with open(folder / "stdout.txt", "wb") as out:
        child = subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{command} on {source.name} failed")
    resident = usage.ru_maxrss / 1024 if command == "parse" else int(peak.read_text()) / 1024
    return usage.ru_utime + usage.ru_stime, wall, resident


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", default="100", help="sizes in MB, comma-separated")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--commands", default="parse,estimate,usage,compact")
    parser.add_argument("--keep", type=Path, help="write the inputs here and reuse them")
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    args = parser.parse_args()
    compile_package()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="compactcli-shapes-"))
    folder.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="compactcli-shapes-run-"))
    inputs: dict[str, Path] = {}
    for mb in (int(m) for m in args.mb.split(",")):
        for shape in args.shapes.split(","):
            make = maker(shape, mb * 1_000_000, args.corpus)
            if make is None:
                print(f"{shape}: no sessions in {args.corpus}; left out", file=sys.stderr)
                continue
            path = folder / f"{shape}-{mb}.jsonl"
            if not path.exists():
                make(path)
            inputs[f"{shape}-{mb}"] = path
            print(f"{path.name}: {path.stat().st_size / 1e6:.0f} MB", file=sys.stderr)
    commands = args.commands.split(",")
    found: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    rng = random.Random(5)
    for number in range(args.rounds):
        cases = [(name, command) for name in inputs for command in commands]
        rng.shuffle(cases)
        for name, command in cases:
            found.setdefault((name, command), []).append(run(command, inputs[name], scratch))
        print(f"round {number + 1}/{args.rounds}", file=sys.stderr, flush=True)

    def cpu(name: str, command: str) -> float:
        return statistics.median(r[0] for r in found[(name, command)])

    def peak(name: str, command: str) -> float:
        return max(r[2] for r in found[(name, command)])

    print(f"CPU seconds, median of {args.rounds} interleaved rounds; peak resident MiB")
    header = f"{'input':<20} {'MB':>5} " + " ".join(f"{c:>9}" for c in commands)
    print(header + "  est/parse  compact/est  compact peak (limit)")
    for name, path in inputs.items():
        size = path.stat().st_size
        line = f"{name:<20} {size / 1e6:>5.0f} " + " ".join(
            f"{cpu(name, c):>8.2f}s" for c in commands
        )
        if "parse" in commands and "estimate" in commands:
            line += f"  {cpu(name, 'parse') / cpu(name, 'estimate'):>8.2f}x"
        if "compact" in commands and "estimate" in commands:
            line += f"  {cpu(name, 'compact') / cpu(name, 'estimate'):>10.2f}x"
        if "compact" in commands:
            limit = 2 * size / 2**20 + 100
            line += f"  {peak(name, 'compact'):>7.0f} ({limit:.0f})"
        print(line)
    shutil.rmtree(scratch, ignore_errors=True)
    if args.keep is None:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
