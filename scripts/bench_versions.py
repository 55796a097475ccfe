#!/usr/bin/env python3
"""Time `estimate` and `compact` of two versions of compactcli side by side, on the same inputs.

`--before REV` names a git revision; its tree is checked out into a temporary worktree (or give
`--before-dir DIR`, a checkout of it). The version under test is this checkout. Every run is a new
process started the way `scripts/bench_paths.py` starts them (the package's bytecode written
first, the command run from its `main`), so start-up is included; runs are interleaved (each
round runs both versions on every input and command, in a shuffled order) and the medians of
`--rounds` rounds are kept: CPU time (user + system), the ratio after/before of each pair, and
the peak resident size. The outputs of both versions are compared: a difference is reported.

Inputs are the shapes of `scripts/bench_paths.py` (`synthetic`, `small-tools`, `corpus-claude`,
`corpus-codex`), about `--mb` MB each. `compact` runs with `--force -o OUT`; `estimate` with
the default method. Nothing here reaches the network.

Usage: python scripts/bench_versions.py --before REV [--mb 50] [--rounds 5] [--keep DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from bench_estimate import generate  # noqa: E402
from bench_paths import cli_driver, concatenate_corpus, generate_small_tools  # noqa: E402


def run(tree: Path, argv: list[str], folder: Path) -> tuple[float, float, str]:
    """(CPU seconds, peak MiB, sha256 of standard output and the file written) of one run."""
    output, peak, captured = folder / "out.jsonl", folder / "peak.txt", folder / "stdout.txt"
    output.unlink(missing_ok=True)
    argv = [str(output) if a == "OUT" else a for a in argv]
    code = cli_driver(tree, argv, peak)
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPACTCLI_")}
    with open(captured, "wb") as out:
        child = subprocess.Popen([sys.executable, "-c", code], stdout=out, env=env)
        _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} in {tree} failed")
    digest = hashlib.sha256(captured.read_bytes())
    if output.exists():
        digest.update(output.read_bytes())
    return usage.ru_utime + usage.ru_stime, int(peak.read_text()) / 1024, digest.hexdigest()


def inputs(folder: Path, mb: int, corpus: Path) -> dict[str, Path]:
    target = mb * 1_000_000
    makers = {
        "synthetic": lambda p: generate(p, target),
        "small-tools": lambda p: generate_small_tools(p, target),
    }
    found = sorted(corpus.glob("*.jsonl")) if corpus.is_dir() else []
    for name, prefix, claude in (
        ("corpus-claude", "claude-code-", True),
        ("corpus-codex", "codex-", False),
    ):
        sources = [p for p in found if p.name.startswith(prefix)]
        if sources:
            makers[name] = lambda p, s=sources, c=claude: concatenate_corpus(s, p, target, c)
    files = {}
    for name, make in makers.items():
        path = folder / f"{name}.jsonl"
        if not path.exists():
            make(path)
        files[name] = path
        print(f"{name}: {path.stat().st_size / 1e6:.1f} MB", file=sys.stderr)
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--before", help="the git revision to compare against")
    group.add_argument("--before-dir", type=Path, help="a checkout of the version to compare")
    parser.add_argument("--mb", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="write the inputs here and reuse them")
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="compactcli-versions-"))
    before = args.before_dir
    if before is None:
        before = scratch / "before"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(before), args.before],
            check=True,
        )
    trees = {"before": before, "after": ROOT}
    for tree in trees.values():
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "compactcli")])
    folder = args.keep or scratch
    folder.mkdir(parents=True, exist_ok=True)
    files = inputs(folder, args.mb, args.corpus)
    commands = {
        "estimate": ["compactcli", "estimate", "SRC"],
        "compact": ["compactcli", "compact", "SRC", "--force", "-o", "OUT"],
    }
    results: dict[tuple[str, str, str], list[tuple[float, float, str]]] = {}
    rng = random.Random(1)
    try:
        for number in range(args.rounds):
            cases = [(c, s) for c in commands for s in files]
            rng.shuffle(cases)
            for command, shape in cases:
                argv = [str(files[shape]) if a == "SRC" else a for a in commands[command]]
                for version in rng.sample(list(trees), 2):
                    found = run(trees[version], argv, scratch)
                    results.setdefault((command, shape, version), []).append(found)
            print(f"round {number + 1}/{args.rounds}", file=sys.stderr, flush=True)
    finally:
        if args.before_dir is None:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(before)])
    print(
        f"{'command':<9} {'shape':<14} {'before':>8} {'after':>8} {'after/before':>13} "
        f"{'(min-max)':>12} {'peak MiB':>14}  same"
    )
    for command in commands:
        for shape in files:
            old, new = results[(command, shape, "before")], results[(command, shape, "after")]
            ratios = [n[0] / o[0] for o, n in zip(old, new, strict=True)]
            same = len({r[2] for r in old + new}) == 1
            print(
                f"{command:<9} {shape:<14} {statistics.median(r[0] for r in old):>7.3f}s "
                f"{statistics.median(r[0] for r in new):>7.3f}s {statistics.median(ratios):>13.3f} "
                f"({min(ratios):.2f}-{max(ratios):.2f}) "
                f"{max(r[1] for r in old):>6.0f}/{max(r[1] for r in new):<6.0f}  "
                f"{'yes' if same else 'NO'}"
            )
    if args.keep is None:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
