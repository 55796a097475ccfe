#!/usr/bin/env python3
"""Benchmark `compactcli compact` against `compactcli estimate --method heuristic` on one file.

Generates the synthetic Claude Code transcript of `scripts/bench_estimate.py` (default 100 MB) in a
temporary folder, then times, as a user runs them, the two commands on it:

- `compactcli estimate --method heuristic FILE` (the yardstick: one streaming pass), and
- `compactcli compact FILE --force -o OUT` (read, prune, summarize with the extractive
  summarizer, check, write),

alternating them for `--rounds` rounds and keeping each one's best time (after writing the
package's bytecode, as an installed copy has it), and prints the ratio with its target: compact
within 3 times the estimate. `--small-records` generates instead a session of many small records (a
prompt, a short command, its one-line output and an answer per turn, about 600 bytes a record), the
costliest shape per byte. The ratio is taken on the processes' CPU time (user + system), which a
busy shared machine disturbs less than wall-clock time; both are printed, with the peak memory of
the compact run. It also checks that the output validates and is smaller.

Usage: python scripts/bench_compact.py [--mb 100] [--rounds 3] [--keep DIR] [--small-records]
Nothing here reaches the network.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import orjson  # noqa: E402
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


def generate_small(path: Path, target: int, seed: int = 3) -> tuple[int, int]:
    """Write a Claude Code session of many small records, at least `target` bytes: turns of a
    prompt, a Bash call, its one-line output and an answer. Returns (bytes, records)."""
    rng = random.Random(seed)

    def new_id() -> str:
        return str(uuid.UUID(int=rng.getrandbits(128)))

    envelope = {"isSidechain": False, "userType": "external", "entrypoint": "cli"}
    envelope |= {"cwd": "/home/dev/app", "sessionId": new_id(), "version": "2.1.112"}
    written = records = turn = 0
    parent: str | None = None
    with open(path, "wb") as out:
        while written < target:
            item, call = turn % 97, f"toolu_{turn:012d}"
            output = f"{item + 10}: item{item} = {turn}"
            usage = {"input_tokens": 3, "cache_read_input_tokens": 1000 + turn, "output_tokens": 40}
            ask = f"Step {turn}: check item {item} and fix it if it is wrong."
            bash = {"command": f"grep -n item{item} src/data.py"}
            answer = f"Item {item} holds {turn}, which is right; nothing to change."
            result = {"tool_use_id": call, "type": "tool_result", "content": output}
            for kind, content, extra in (
                ("user", ask, {}),
                (
                    "assistant",
                    [{"type": "tool_use", "id": call, "name": "Bash", "input": bash}],
                    {},
                ),
                ("user", [result], {"toolUseResult": {"stdout": output, "stderr": ""}}),
                ("assistant", [{"type": "text", "text": answer}], {}),
            ):
                message: dict[str, object] = {"role": kind, "content": content}
                if kind == "assistant":
                    message |= {"model": "claude-opus-4-6", "id": f"msg_{records}", "usage": usage}
                uid = new_id()
                record = {"parentUuid": parent, **envelope, "type": kind, "message": message}
                record |= {**extra, "uuid": uid, "timestamp": f"2026-03-14T09:00:{turn % 60:02d}Z"}
                line = orjson.dumps(record) + b"\n"
                out.write(line)
                parent = uid
                written += len(line)
                records += 1
            turn += 1
    return written, records


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=100, help="size of the synthetic transcript")
    parser.add_argument("--rounds", type=int, default=3, help="timing rounds (best is kept)")
    parser.add_argument("--keep", type=Path, help="write the files here and keep them")
    parser.add_argument(
        "--small-records", action="store_true", help="a session of many small records instead"
    )
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="compactcli-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    name = "synthetic-claude-code-small" if args.small_records else "synthetic-claude-code"
    source = folder / f"{name}.jsonl"
    output = folder / "compacted.jsonl"
    compile_package()
    started = time.perf_counter()
    if args.small_records:
        size, records = generate_small(source, args.mb * 1_000_000)
    else:
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
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB on Linux
    print(f"peak memory of the largest run (compact): {peak:.0f} MiB")
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
