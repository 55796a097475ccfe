#!/usr/bin/env python3
"""Benchmark `compactcli estimate --method usage` over a tree of Claude Code sessions, against
the forward read and ccusage, measured in the same run.

The tree has the layout Claude Code writes, `<root>/projects/<project>/<session id>.jsonl`: at
least `--sessions` sessions (default 320) of at least `--mb` MB in total (default 420), copied
from the Claude Code sessions of `../shared/corpus` with fresh ids (every uuid, `msg_` and
`req_` id of a copy is new, the session id is the file's name), in eight projects; most copies
are one session, some are several copies chained one after another (a long session, up to tens
of MB). `--tree DIR` measures an existing `projects` folder instead (nothing is written there).
A built tree is kept under `--work` (default a folder in the temporary directory) and reused
when its manifest matches.

Each setting runs `--runs` times (default 5), the settings interleaved; each run is timed in CPU
(user + system of the command and every process it waited for) and wall time, and its peak
memory is the largest sum of the resident sizes of the command's process tree, sampled every
10 ms from /proc. Medians are printed, with throughput (MB of sessions per CPU second) and the
ratios to ccusage:

- `compactcli estimate --method usage TREE --json`, with `--jobs` at its default (one per core)
  and with `--jobs 1`;
- the forward read: `--method heuristic` (every line read), and `--method usage --by role`
  (usage counted on the whole context, as it was before it was read from the end);
- `ccusage session --json --offline`, with `CLAUDE_CONFIG_DIR` the tree's parent and a fresh
  empty `HOME` (so no other agent's data is found).

ccusage 20 is installed by hand, once, before the run (the only step that reaches the network):

    npm install --prefix /tmp/ccusage ccusage@20.0.24

Usage: python scripts/bench_usage.py [--tree DIR] [--runs 5] [--ccusage PATH] [--corpus DIR]
Target: compactcli's usage estimate at least 3x ccusage's throughput in CPU time, with a lower
peak memory. Nothing here reaches the network.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid as uuidlib
from dataclasses import dataclass
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
MB = 1_000_000
UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
IDS = re.compile(rb"\b(msg|req|toolu)_[0-9A-Za-z]{10,}")
PROJECTS = 8


# --------------------------------------------------------------------------------------------
# the tree


def _fresh(data: bytes, rng: random.Random) -> bytes:
    """`data` with every uuid and every msg_/req_/toolu_ id replaced, the same one the same way."""
    uuids: dict[bytes, bytes] = {}
    ids: dict[bytes, bytes] = {}

    def new_uuid(match: re.Match[bytes]) -> bytes:
        old = match.group(0)
        found = uuids.get(old)
        if found is None:
            found = uuids[old] = str(uuidlib.UUID(int=rng.getrandbits(128), version=4)).encode()
        return found

    def new_id(match: re.Match[bytes]) -> bytes:
        old = match.group(0)
        found = ids.get(old)
        if found is None:
            prefix, _, rest = old.partition(b"_")
            alphabet = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
            body = bytes(rng.choice(alphabet) for _ in rest)
            found = ids[old] = prefix + b"_" + body
        return found

    return IDS.sub(new_id, UUID.sub(new_uuid, data))


def _chained(copies: list[bytes]) -> bytes:
    """Copies of a session one after another, each one's first root hung off the last record
    of the one before (one long session)."""
    out: list[bytes] = []
    last: str | None = None
    for copy in copies:
        lines = copy.splitlines(keepends=True)
        if last is not None:
            for at, line in enumerate(lines):
                if line.startswith(b'{"parentUuid":null'):
                    rest = line[len(b'{"parentUuid":null') :]
                    lines[at] = b'{"parentUuid":"' + last.encode() + b'"' + rest
                    break
        for line in reversed(lines):
            if line.startswith(b'{"parentUuid"'):
                found = orjson.loads(line).get("uuid")
                if isinstance(found, str):
                    last = found
                    break
        out.extend(lines)
    return b"".join(out)


def _session_id(data: bytes) -> str | None:
    for line in data.splitlines():
        if b'"sessionId"' in line:
            found = orjson.loads(line).get("sessionId")
            if isinstance(found, str):
                return found
    return None


def build_tree(projects: Path, corpus: Path, sessions: int, megabytes: int, seed: int) -> None:
    """Write the tree (see the module) into `projects`."""
    bases = [p.read_bytes() for p in sorted(corpus.glob("claude-code-*.jsonl"))]
    if not bases:
        raise SystemExit(f"no Claude Code sessions in {corpus}")
    rng = random.Random(seed)
    total = count = 0
    while count < sessions or total < megabytes * MB:
        base = bases[count % len(bases)]
        roll = rng.random()
        copies = 1 if roll < 0.8 else rng.randint(2, 4) if roll < 0.97 else rng.randint(8, 16)
        made = [_fresh(base, rng) for _ in range(copies)]
        data = _chained(made) if copies > 1 else made[0]
        session = str(uuidlib.UUID(int=rng.getrandbits(128), version=4))
        old = _session_id(data)
        if old is not None:
            data = data.replace(old.encode(), session.encode())
        folder = projects / f"-home-dev-project-{count % PROJECTS}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{session}.jsonl").write_bytes(data)
        total += len(data)
        count += 1


def tree_size(projects: Path) -> tuple[int, int]:
    files = list(projects.rglob("*.jsonl"))
    return len(files), sum(f.stat().st_size for f in files)


# --------------------------------------------------------------------------------------------
# measuring


@dataclass
class Sample:
    cpu: float
    wall: float
    rss: int  # bytes, the largest sum over the process tree


def _tree_rss(root: int) -> int:
    """The resident bytes of `root` and its descendants, now."""
    total = 0
    stack = [root]
    page = os.sysconf("SC_PAGE_SIZE")
    while stack:
        pid = stack.pop()
        try:
            with open(f"/proc/{pid}/statm") as handle:
                total += int(handle.read().split()[1]) * page
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as handle:
                    stack.extend(int(c) for c in handle.read().split())
        except (FileNotFoundError, ProcessLookupError, ValueError):
            continue
    return total


def measure(command: list[str], env: dict[str, str]) -> Sample:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0
    while process.poll() is None:
        peak = max(peak, _tree_rss(process.pid))
        time.sleep(0.01)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if process.returncode != 0:
        assert process.stderr is not None
        raise SystemExit(f"{command[0]} failed ({process.returncode}): {process.stderr.read()!r}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Sample(cpu, wall, peak)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, help="an existing projects folder to measure")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "bench-usage")
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    parser.add_argument("--sessions", type=int, default=320)
    parser.add_argument("--mb", type=int, default=420)
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--ccusage", default="/tmp/ccusage/node_modules/.bin/ccusage", help="ccusage 20 binary"
    )
    args = parser.parse_args()

    if args.tree is not None:
        projects = args.tree.resolve()
    else:
        projects = args.work / "claude" / "projects"
        manifest = args.work / "manifest.json"
        wanted = {"sessions": args.sessions, "mb": args.mb, "seed": args.seed}
        if not manifest.exists() or orjson.loads(manifest.read_bytes()) != wanted:
            shutil.rmtree(args.work, ignore_errors=True)
            print(f"building {projects} ...", flush=True)
            build_tree(projects, args.corpus, args.sessions, args.mb, args.seed)
            manifest.write_bytes(orjson.dumps(wanted))
    count, size = tree_size(projects)
    print(f"tree: {projects}: {count} sessions, {size / MB:,.1f} MB", flush=True)

    compactcli = str(Path(sys.executable).with_name("compactcli"))
    home = Path(tempfile.mkdtemp(prefix="bench-usage-home-"))
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("COMPACTCLI_")}
    env = {**base_env, "HOME": str(home)}
    ccusage_env = {**env, "CLAUDE_CONFIG_DIR": str(projects.parent), "NO_COLOR": "1"}
    tree = str(projects)
    settings: dict[str, tuple[list[str], dict[str, str]]] = {
        "usage (from the end)": (
            [compactcli, "estimate", "--method", "usage", tree, "--json"],
            env,
        ),
        "usage, --jobs 1": (
            [compactcli, "estimate", "--method", "usage", tree, "--json", "--jobs", "1"],
            env,
        ),
        "heuristic (forward)": ([compactcli, "estimate", "--method", "heuristic", tree], env),
        "heuristic, --jobs 1": (
            [compactcli, "estimate", "--method", "heuristic", tree, "--jobs", "1"],
            env,
        ),
        "usage --by role (forward)": (
            [compactcli, "estimate", "--method", "usage", "--by", "role", tree],
            env,
        ),
        "ccusage session": ([args.ccusage, "session", "--json", "--offline"], ccusage_env),
    }
    check = subprocess.run(settings["usage (from the end)"][0], env=env, capture_output=True)
    reports = [orjson.loads(line) for line in check.stdout.splitlines()]
    from_end = sum(1 for r in reports if r["file_tokens"] is None)
    print(f"read from the end: {from_end} of {len(reports)} sessions (the rest read forward)")
    found = subprocess.run(settings["ccusage session"][0], env=ccusage_env, capture_output=True)
    print(f"ccusage sessions found: {len(orjson.loads(found.stdout).get('session', []))}")

    samples: dict[str, list[Sample]] = {name: [] for name in settings}
    for run in range(args.runs):
        for name, (command, run_env) in settings.items():
            samples[name].append(measure(command, run_env))
        print(f"run {run + 1}/{args.runs} done", flush=True)
    shutil.rmtree(home, ignore_errors=True)

    reference = samples["ccusage session"]
    ref_cpu = statistics.median(s.cpu for s in reference)
    ref_rss = statistics.median(s.rss for s in reference)
    print()
    print(f"{count} sessions, {size / MB:,.1f} MB; medians of {args.runs} interleaved runs")
    head = ("setting", "CPU s", "wall s", "MB/CPU s", "peak RSS MB", "x ccusage CPU", "RSS/ccusage")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name, found_samples in samples.items():
        cpu = statistics.median(s.cpu for s in found_samples)
        wall = statistics.median(s.wall for s in found_samples)
        rss = statistics.median(s.rss for s in found_samples)
        print(
            f"| {name} | {cpu:.2f} | {wall:.2f} | {size / MB / cpu:,.0f} | {rss / 2**20:,.0f} | "
            f"{ref_cpu / cpu:.2f}x | {rss / ref_rss:.2f} |"
        )


if __name__ == "__main__":
    main()
