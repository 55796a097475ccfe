#!/usr/bin/env python3
"""The Ray engine against local processes on a tree of real-shaped sessions, and what a run costs.

Builds (or takes, `--tree DIR`) a tree of `--sessions` sessions (default 300, about `--mb` MB in
all, default 400) in Claude Code's `projects/<project>/<id>.jsonl` layout: copies of the real
sessions of ../shared/corpus (Claude Code, Codex and pi), drawn so that the tree reaches its size
with sessions of every size. Then, in `--rounds` interleaved rounds (medians kept):

- `local`: `compactcli compact TREE --out-dir OUT --force --jobs 2`;
- `ray-warm`: the same with `--engine ray --address auto`, submitted to a Ray started once
  before the rounds with `ray start --head --num-cpus 2` (as a job reaches a running cluster),
  stopped after them;
- `ray-cold`: the same with `--engine ray` alone: the command starts a local Ray and stops it.

It prints each run's wall seconds, MB/s, and the Ray runs' throughput as a share of `local`'s
(target: `ray-warm` at least 0.8x). Every run's outputs are checked byte for byte against the
first local run's. Last, the per-session figures a cost estimate is made of: CPU seconds per
session (user + system of the local run) and, with `--llm-sample N`, the tokens the LLM
summarizer sends and asks for per session, counted with tiktoken's o200k_base (the copy
compactcli ships) from the requests N sessions made to a local fake model server
(tests/llm_server.py); priced at `--cpu-hour` USD
per vCPU-hour and `--input-price` / `--output-price` USD per million tokens, per million
sessions. Nothing here reaches the network.

Usage: python scripts/bench_ray.py [--sessions 300] [--mb 400] [--rounds 3] [--tree DIR]
       [--llm-sample 20] [--cpu-hour 0.04] [--input-price 0.15] [--output-price 0.60]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
COMPACTCLI = str(Path(sys.executable).with_name("compactcli"))
RAY = str(Path(sys.executable).with_name("ray"))


def build_tree(tree: Path, sessions: int, total: int, corpus: Path) -> None:
    """`sessions` copies of the corpus sessions under `tree/projects/p<N>/<id>.jsonl`, about
    `total` bytes in all: drawn at random (seeded) with weights size**a, `a` chosen so that the
    expected size of a draw is `total / sessions`, so every session of the corpus can be drawn
    and the larger ones are drawn more often when the tree must be larger than the corpus."""
    import random

    sources = sorted(corpus.glob("*.jsonl"))
    if not sources:
        raise SystemExit(f"no sessions in {corpus}")
    sizes = [p.stat().st_size for p in sources]

    def mean(a: float) -> float:
        weights = [s**a for s in sizes]
        return sum(w * s for w, s in zip(weights, sizes, strict=True)) / sum(weights)

    low, high = -3.0, 3.0
    for _ in range(60):  # the mean grows with a
        middle = (low + high) / 2
        low, high = (middle, high) if mean(middle) < total / sessions else (low, middle)
    weights = [s**low for s in sizes]
    picks = random.Random(7).choices(range(len(sources)), weights=weights, k=sessions)
    for number, pick in enumerate(picks):
        folder = tree / "projects" / f"p{number % 12:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        name = uuid.UUID(int=number + 1, version=4)
        shutil.copyfile(sources[pick], folder / f"{name}.jsonl")


def digest(folder: Path) -> str:
    """One sha256 of every file below `folder`, by path."""
    found = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        found.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return found.hexdigest()


def run(kind: str, tree: Path, out: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and its children) of one run."""
    shutil.rmtree(out, ignore_errors=True)
    argv = [COMPACTCLI, "compact", str(tree), "--out-dir", str(out), "--force", "-q"]
    argv += {
        "local": ["--jobs", "2"],
        "ray-warm": ["--engine", "ray", "--address", "auto"],
        "ray-cold": ["--engine", "ray"],
    }[kind]
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPACTCLI_")}
    before = os.times()
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - started
    after = os.times()
    if done.returncode not in (0, 1):
        raise SystemExit(f"{kind} failed: {done.stderr.decode()[-2000:]}")
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return wall, cpu


def llm_tokens(tree: Path, sample: int, scratch: Path) -> tuple[float, float, float]:
    """(requests, tokens sent, tokens asked for) per session of the LLM summarizer, from the
    requests `sample` sessions of the tree made to a local fake server."""
    sys.path.insert(0, str(ROOT))
    from compactcli.tokens import get_counter
    from tests.llm_server import ok, serve
    from tests.test_llm_summarizer import ANSWER

    chosen = sorted(tree.rglob("*.jsonl"))[:: max(1, len(list(tree.rglob("*.jsonl"))) // sample)]
    folder = scratch / "llm-sample"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for number, path in enumerate(chosen[:sample]):
        shutil.copyfile(path, folder / f"s{number}.jsonl")
    counter = get_counter("exact", model="gpt-4o-mini")  # o200k_base, shipped with compactcli
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPACTCLI_")}
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    env["COMPACTCLI_CACHE"] = "false"
    with serve(ok(ANSWER)) as server:
        subprocess.run(
            [COMPACTCLI, "compact", str(folder), "--out-dir", str(scratch / "llm-out"),
             "--force", "--summarizer", "llm", "--model", "openai/gpt-4o-mini",
             "--api-base", server.url, "-q"],
            env=env, check=False, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        requests = list(server.requests)
    sent = asked = 0
    for request in requests:
        body = request.body
        sent += sum(counter.text_tokens(str(m.get("content", ""))) for m in body["messages"])
        asked += int(body.get("max_tokens") or body.get("max_completion_tokens") or 0)
    count = min(sample, len(chosen))
    return len(requests) / count, sent / count, asked / count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--mb", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tree", type=Path, help="use (or build and keep) this tree")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--llm-sample", type=int, default=0)
    parser.add_argument("--cpu-hour", type=float, default=0.04, help="USD per vCPU-hour")
    parser.add_argument("--input-price", type=float, default=0.15, help="USD per M tokens in")
    parser.add_argument("--output-price", type=float, default=0.60, help="USD per M tokens out")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="compactcli-ray-bench-"))
    tree = args.tree or scratch / "tree"
    if not tree.exists():
        build_tree(tree, args.sessions, args.mb * 1_000_000, args.corpus)
    files = sorted(tree.rglob("*.jsonl"))
    megabytes = sum(p.stat().st_size for p in files) / 1e6
    print(f"tree: {len(files)} sessions, {megabytes:.0f} MB", file=sys.stderr)
    found: dict[str, list[tuple[float, float]]] = {"local": [], "ray-warm": [], "ray-cold": []}
    reference: str | None = None
    subprocess.run([RAY, "start", "--head", "--num-cpus", "2", "--include-dashboard=false"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        for number in range(args.rounds):
            kinds = ["local", "ray-warm"] if number % 2 == 0 else ["ray-warm", "local"]
            if number == args.rounds - 1:
                kinds.append("ray-cold")
            for kind in kinds:
                if kind == "ray-cold":
                    subprocess.run([RAY, "stop"], check=True, stdout=subprocess.DEVNULL)
                out = scratch / f"out-{kind}"
                found[kind].append(run(kind, tree, out))
                seen = digest(out)
                reference = reference or seen
                if seen != reference:
                    raise SystemExit(f"{kind}: the outputs differ from the first run's")
            print(f"round {number + 1}/{args.rounds}", file=sys.stderr, flush=True)
    finally:
        subprocess.run([RAY, "stop"], check=False, stdout=subprocess.DEVNULL)
    local = statistics.median(w for w, _ in found["local"])
    print(f"{len(files)} sessions, {megabytes:.0f} MB; medians of {args.rounds} rounds (cold: 1)")
    print(f"{'run':<9} {'wall s':>7} {'MB/s':>6} {'x local':>8}")
    for kind, runs in found.items():
        wall = statistics.median(w for w, _ in runs)
        print(f"{kind:<9} {wall:>7.1f} {megabytes / wall:>6.1f} {local / wall:>7.2f}x")
    cpu = statistics.median(c for _, c in found["local"]) / len(files)
    print(f"outputs: identical in every run ({reference})")
    print(f"CPU per session (local, extractive): {cpu:.3f} s")
    per_million = cpu * 1e6 / 3600 * args.cpu_hour
    print(f"extractive, per million sessions: {cpu * 1e6 / 3600:,.0f} vCPU-hours, "
          f"${per_million:,.0f} at ${args.cpu_hour}/vCPU-hour")  # fmt: skip
    if args.llm_sample:
        requests, sent, asked = llm_tokens(tree, args.llm_sample, scratch)
        model = (sent * args.input_price + asked * args.output_price) / 1e6 * 1e6
        print(f"LLM summarizer, per session: {requests:.2f} requests, {sent:,.0f} tokens sent, "
              f"at most {asked:,.0f} asked for")  # fmt: skip
        print(f"LLM, per million sessions: ${model:,.0f} of model calls at most "
              f"(${args.input_price}/M in, ${args.output_price}/M out) + ${per_million:,.0f} "
              "of CPU")  # fmt: skip
    print(json.dumps({k: v for k, v in found.items()}), file=sys.stderr)
    shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
