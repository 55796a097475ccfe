#!/usr/bin/env python3
"""Benchmark `compactcli estimate` against its yardsticks, measured in the same run.

Generates a synthetic Claude Code transcript (default 200 MB, shaped like a current Claude Code
session: chained user / assistant records with thinking kept as a signature, text, tool calls and
line-numbered tool results, `toolUseResult` copies, attachments, metadata records, one
compaction) in a temporary folder, then prints each figure next to its
yardstick:

1. heuristic estimate throughput vs raw orjson parsing of the same file (target: >= 0.5x);
2. peak memory of `compactcli estimate --method heuristic` on that file, and on a file a
   quarter of its size, vs 64 MiB plus the longest line (target: at or under, flat in size);
3. exact counting throughput, in CPU time, vs a plain single-thread loop of tiktoken's
   `encode_ordinary` over the same texts (target: >= 0.8x, identical token counts);
4. start-up of `compactcli --help` and `compactcli estimate <small file>` vs
   `python -c "import typer, rich, orjson"` (target: <= 2x), and that neither imports litellm
   or tiktoken.

Usage: python scripts/bench_estimate.py [--mb 200] [--keep DIR] [--skip-exact]
    [--exact-on FILE ...] (the exact figure on other shapes too, such as the inputs
    `scripts/bench_shapes.py --keep DIR` leaves)
Nothing here reaches the network; the exact counter reads tiktoken's files from a local copy
(`compactcli.tokens.load_encoding`).
"""

from __future__ import annotations

import argparse
import compileall
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid as uuidlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compactcli.estimate import EstimateOptions, estimate_file  # noqa: E402
from compactcli.tokens import TiktokenCounter, load_encoding  # noqa: E402

MIB = 1024 * 1024

# --------------------------------------------------------------------------------------------
# The synthetic transcript

WORDS = [
    "def",
    "class",
    "return",
    "import",
    "self",
    "value",
    "result",
    "config",
    "path",
    "file",
    "data",
    "error",
    "test",
    "user",
    "request",
    "response",
    "handler",
    "client",
    "server",
    "token",
    "model",
    "session",
    "context",
    "window",
    "message",
    "index",
    "record",
    "parse",
    "write",
    "read",
    "update",
    "delete",
    "create",
    "list",
    "dict",
    "string",
    "int",
    "float",
    "bool",
    "None",
    "True",
    "False",
    "async",
    "await",
    "yield",
    "lambda",
    "for",
    "while",
    "if",
    "else",
    "elif",
    "try",
    "except",
    "finally",
    "with",
    "open",
    "json",
    "yaml",
    "http",
    "url",
    "query",
    "cache",
    "retry",
    "timeout",
    "logger",
    "debug",
    "info",
    "warning",
]


class Text:
    """Deterministic code-like and prose-like text, sliced from a large pre-built pool."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        lines = []
        for _ in range(20_000):
            indent = " " * (4 * rng.randint(0, 3))
            words = rng.choices(WORDS, k=rng.randint(2, 10))
            sep = rng.choice((" ", "_", ".", "(", ", "))
            lines.append(indent + sep.join(words) + rng.choice(("", ":", ")", " = 0", "  # note")))
        self.lines = lines
        self.prose = " ".join(rng.choices(WORDS, k=200_000))

    def code(self, n_lines: int) -> str:
        start = self.rng.randrange(0, len(self.lines) - n_lines)
        return "\n".join(self.lines[start : start + n_lines])

    def numbered(self, n_lines: int) -> str:
        first = self.rng.randint(1, 400)
        start = self.rng.randrange(0, len(self.lines) - n_lines)
        return "\n".join(
            f"{first + i:>6}\u2192{line}"
            for i, line in enumerate(self.lines[start : start + n_lines])
        )

    def words(self, n_chars: int) -> str:
        start = self.rng.randrange(0, len(self.prose) - n_chars)
        return self.prose[start : start + n_chars]


def _records(rng: random.Random, state: dict[str, bool]) -> Iterator[dict[str, Any]]:
    text = Text(rng)
    session = str(uuidlib.UUID(int=rng.getrandbits(128)))
    envelope = {
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/dev/project",
        "sessionId": session,
        "version": "2.1.120",
        "gitBranch": "main",
    }
    parent: str | None = None
    context = 20_000
    clock = 1_767_000_000.0
    turn = 0

    def new_uuid() -> str:
        return str(uuidlib.UUID(int=rng.getrandbits(128), version=4))

    def stamp() -> str:
        nonlocal clock
        clock += rng.uniform(0.2, 4.0)
        return (
            time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(clock))
            + f".{int(clock * 1000) % 1000:03d}Z"
        )

    def chain(kind: str, body: dict[str, Any]) -> dict[str, Any]:
        nonlocal parent
        uuid = new_uuid()
        record = {
            "parentUuid": parent,
            **envelope,
            "type": kind,
            **body,
            "uuid": uuid,
            "timestamp": stamp(),
        }
        parent = uuid
        return record

    while True:
        turn += 1
        if state.pop("compact", False):
            boundary = chain(
                "system",
                {
                    "subtype": "compact_boundary",
                    "content": "Conversation compacted",
                    "isMeta": False,
                    "level": "info",
                    "compactMetadata": {"trigger": "auto", "preTokens": context},
                    "logicalParentUuid": parent,
                },
            )
            boundary["parentUuid"] = None
            yield boundary
            summary = "This session is being continued from a previous conversation. Summary:\n"
            yield chain(
                "user",
                {
                    "message": {"role": "user", "content": summary + text.words(4000)},
                    "isVisibleInTranscriptOnly": True,
                    "isCompactSummary": True,
                },
            )
        yield {
            "type": "queue-operation",
            "operation": "dequeue",
            "timestamp": stamp(),
            "sessionId": session,
        }
        prompt = text.words(rng.randint(60, 900))
        user = chain(
            "user", {"message": {"role": "user", "content": prompt}, "promptId": new_uuid()}
        )
        yield user
        if turn % 3 == 0:
            attachment = {
                "type": "todo_reminder",
                "content": [{"content": text.words(80), "status": "pending"}],
            }
            yield chain("attachment", {"attachment": attachment})
        for _step in range(rng.randint(3, 12)):
            message_id = f"msg_{rng.getrandbits(96):024x}"
            request = f"req_{rng.getrandbits(96):024x}"
            output = rng.randint(80, 2500)
            usage = {
                "input_tokens": 3,
                "cache_creation_input_tokens": rng.randint(100, 4000),
                "cache_read_input_tokens": context,
                "output_tokens": output,
                "service_tier": "standard",
            }
            context += rng.randint(500, 6000)
            if context > 160_000:
                context = 22_000

            def assistant(
                block: dict[str, Any],
                message_id: str = message_id,
                usage: dict[str, Any] = usage,
                request: str = request,
            ) -> dict[str, Any]:
                message = {
                    "model": "claude-opus-4-7",
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "content": [block],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": usage,
                }
                return chain("assistant", {"message": message, "requestId": request})

            if rng.random() < 0.6:
                signature = text.words(rng.randint(400, 4000)).replace(" ", "")
                yield assistant({"type": "thinking", "thinking": "", "signature": signature})
            if rng.random() < 0.4:
                yield assistant({"type": "text", "text": text.words(rng.randint(40, 600))})
            for _call in range(1 if rng.random() < 0.8 else rng.randint(2, 4)):
                tool_id = f"toolu_{rng.getrandbits(100):025x}"
                tool = rng.choice(("Read", "Read", "Bash", "Edit", "Grep", "Write"))
                if tool == "Read":
                    arguments: dict[str, Any] = {
                        "file_path": f"/home/dev/project/src/{rng.choice(WORDS)}.py"
                    }
                    lines = rng.randint(20, 400)
                    content = text.numbered(lines)
                    copy: Any = {
                        "type": "text",
                        "file": {
                            "filePath": arguments["file_path"],
                            "content": content,
                            "numLines": lines,
                        },
                    }
                elif tool == "Bash":
                    arguments = {
                        "command": f"pytest -q tests/test_{rng.choice(WORDS)}.py",
                        "description": "Run tests",
                    }
                    content = text.code(rng.randint(5, 120))
                    copy = {"stdout": content, "stderr": "", "interrupted": False, "isImage": False}
                elif tool in ("Edit", "Write"):
                    body = text.code(rng.randint(5, 80))
                    arguments = {
                        "file_path": "/home/dev/project/src/app.py",
                        "old_string": body[:200],
                        "new_string": body,
                    }
                    content = "The file /home/dev/project/src/app.py has been updated."
                    copy = {
                        "filePath": "/home/dev/project/src/app.py",
                        "oldString": body[:200],
                        "newString": body,
                    }
                else:
                    arguments = {"pattern": rng.choice(WORDS), "path": "/home/dev/project"}
                    content = "\n".join(
                        f"src/{rng.choice(WORDS)}.py" for _ in range(rng.randint(1, 40))
                    )
                    copy = {"mode": "files_with_matches", "filenames": content.split("\n")}
                call = assistant(
                    {"type": "tool_use", "id": tool_id, "name": tool, "input": arguments}
                )
                yield call
                result = {
                    "role": "user",
                    "content": [
                        {"tool_use_id": tool_id, "type": "tool_result", "content": content}
                    ],
                }
                yield chain(
                    "user",
                    {
                        "message": result,
                        "toolUseResult": copy,
                        "sourceToolAssistantUUID": call["uuid"],
                    },
                )
        yield chain(
            "system",
            {"subtype": "turn_duration", "durationMs": rng.randint(1000, 90_000), "isMeta": False},
        )
        yield {
            "type": "file-history-snapshot",
            "messageId": new_uuid(),
            "snapshot": {"trackedFileBackups": {}, "timestamp": stamp()},
            "isSnapshotUpdate": False,
        }
        yield {}  # end of a turn: the caller checks the size


def generate(path: Path, target: int, seed: int = 7) -> tuple[int, int, int]:
    """Write a synthetic Claude Code transcript of at least `target` bytes.

    Returns (bytes, records, longest line).
    """
    rng = random.Random(seed)
    written = records = longest = 0
    state: dict[str, bool] = {}
    compacted = False
    with open(path, "wb") as out:
        for record in _records(rng, state):
            if not record:
                if written >= target:
                    break
                if not compacted and written >= target // 2:
                    compacted = state["compact"] = True  # one compaction in the middle
                continue
            line = orjson.dumps(record) + b"\n"
            out.write(line)
            written += len(line)
            records += 1
            longest = max(longest, len(line))
    return written, records, longest


# --------------------------------------------------------------------------------------------
# Measurements


def compile_package() -> None:
    """Write the bytecode of compactcli's modules, as an installed copy has it: with
    PYTHONDONTWRITEBYTECODE set, every run would otherwise compile each module edited since
    its bytecode was last written, and time that instead of the command."""
    compileall.compile_dir(str(ROOT / "compactcli"), quiet=1)


def orjson_parse(path: Path) -> None:
    loads = orjson.loads
    with open(path, "rb") as handle:
        for line in handle:
            loads(line)


def peak_rss(args: list[str]) -> int:
    """Peak resident set size of a child process, in bytes."""
    code = (
        "import resource, subprocess, sys;"
        "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True);"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True
    )
    return int(out.stdout.strip()) * 1024


class CountingCounter(TiktokenCounter):
    """The exact counter, also keeping the texts' total chars and tokens."""

    def __init__(self, encoding: str) -> None:
        super().__init__(encoding)
        self.chars = 0
        self.text_tokens_total = 0
        self.texts: list[str] | None = None

    def _prose(self, text: str) -> int:
        tokens = super()._prose(text)
        self.chars += len(text)
        self.text_tokens_total += tokens
        if self.texts is not None and text:
            self.texts.append(text)
        return tokens


def exact_yardstick(texts: list[str], encoding: str) -> tuple[float, int]:
    """CPU seconds and total tokens of a plain single-thread loop of tiktoken's
    `encode_ordinary` over `texts` (the work `--method exact` must do, with nothing around it)."""
    enc = load_encoding(encoding)
    encode = enc.encode_ordinary
    started = time.process_time()
    total = sum(len(encode(text)) for text in texts)
    return time.process_time() - started, total


def exact_ratio(path: Path, rounds: int) -> tuple[float, float, float, int, int, bool]:
    """CPU seconds of `estimate --method exact` on `path` (in process, the encoding loaded
    first), of the same counting one text at a time (`batch_chars` 0), and of the yardstick
    loop over the texts it counts, best of `rounds` alternating runs; the texts' characters and
    tokens, and whether every run gave the same figures (the
    reports, and the loop's total against the texts' counted one at a time)."""
    collector = CountingCounter("o200k_base")
    collector.batch_chars = 0  # each text seen as it is counted
    collector.texts = []
    options = EstimateOptions(method="exact")
    expected = estimate_file(str(path), options, counter=collector).to_dict()
    texts = collector.texts
    reports: list[Any] = []
    totals: list[int] = []

    def ours(batch_chars: int) -> Callable[[], None]:
        def run() -> None:
            counter = TiktokenCounter("o200k_base")
            counter.batch_chars = batch_chars
            counter.load()
            reports.append(estimate_file(str(path), options, counter=counter).to_dict())

        return run

    def yardstick() -> None:
        totals.append(exact_yardstick(texts, "o200k_base")[1])

    mine, single, yard = interleaved(
        rounds, ours(TiktokenCounter.batch_chars), ours(0), yardstick, clock=time.process_time
    )
    same = set(totals) == {collector.text_tokens_total} and all(r == expected for r in reports)
    return mine, single, yard, collector.chars, collector.text_tokens_total, same


def interleaved(rounds: int, *runs: Any, clock: Any = time.perf_counter) -> list[float]:
    """Best time of each run over `rounds` rounds, alternating them (a shared machine's load
    then weighs on all of them alike). In-process runs use the process's CPU time."""
    best = [float("inf")] * len(runs)
    for _ in range(rounds):
        for position, run in enumerate(runs):
            started = clock()
            run()
            best[position] = min(best[position], clock() - started)
    return best


MINIMAL_TYPER = """
import typer
app = typer.Typer(add_completion=False)
@app.command()
def main(path: str, count: int = 1) -> None:
    pass
app()
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=200, help="size of the synthetic transcript")
    parser.add_argument("--keep", type=Path, help="write the transcripts here and keep them")
    parser.add_argument("--skip-exact", action="store_true", help="skip the tiktoken figures")
    parser.add_argument("--rounds", type=int, default=3, help="timing rounds (best is kept)")
    parser.add_argument(
        "--exact-on",
        type=Path,
        nargs="*",
        default=[],
        help="more files to measure the exact throughput on (other shapes of session)",
    )
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="compactcli-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    big = folder / "synthetic-claude-code.jsonl"
    small = folder / "synthetic-claude-code-quarter.jsonl"
    compile_package()
    started = time.perf_counter()
    size, records, longest = generate(big, args.mb * 1_000_000)
    quarter, _, _ = generate(small, args.mb * 250_000, seed=11)
    print(
        f"transcript: {size / 1e6:.1f} MB, {records:,} records, longest line {longest:,} bytes "
        f"(generated in {time.perf_counter() - started:.1f} s)"
    )
    results: list[tuple[str, str, str, bool]] = []

    # 1. throughput
    options = EstimateOptions(method="heuristic")
    parse, heuristic = interleaved(
        args.rounds,
        lambda: orjson_parse(big),
        lambda: estimate_file(str(big), options),
        clock=time.process_time,
    )
    parse_rate, heuristic_rate = size / parse / 1e6, size / heuristic / 1e6
    ratio = heuristic_rate / parse_rate
    results.append(
        (
            "heuristic throughput",
            f"{heuristic_rate:.0f} MB/s ({heuristic:.2f} s)",
            f"orjson parsing of the same lines {parse_rate:.0f} MB/s ({parse:.2f} s); "
            f"ratio {ratio:.2f}, target >= 0.50",
            ratio >= 0.5,
        )
    )

    # 2. memory
    cli = [sys.executable, "-m", "compactcli", "estimate", "--method", "heuristic"]
    rss_big = peak_rss([*cli, str(big)])
    rss_small = peak_rss([*cli, str(small)])
    rss_help = peak_rss([sys.executable, "-m", "compactcli", "--help"])
    budget = 64 * MIB + longest
    results.append(
        (
            "peak memory",
            f"{rss_big / MIB:.1f} MiB on {size / 1e6:.0f} MB, {rss_small / MIB:.1f} MiB on "
            f"{quarter / 1e6:.0f} MB (the interpreter with its imports: {rss_help / MIB:.1f} MiB)",
            f"64 MiB + longest line = {budget / MIB:.1f} MiB",
            rss_big <= budget,
        )
    )

    # 3. exact, on the synthetic transcript and on each file of --exact-on
    if not args.skip_exact:
        for path in [big, *args.exact_on]:
            ours, single, yard, chars, tokens, same = exact_ratio(path, args.rounds)
            our_rate, yard_rate = chars / ours / 1e6, chars / yard / 1e6
            ratio = our_rate / yard_rate
            name = "exact throughput" if path == big else f"exact throughput, {path.name}"
            results.append(
                (
                    name,
                    f"{our_rate:.1f} M chars/s end to end, parsing included ({ours:.2f} s, "
                    f"{chars:,} chars, {tokens:,} tokens; one text at a time {single:.2f} s, "
                    f"ratio {yard / single:.2f})",
                    f"a tiktoken encode_ordinary loop on the same texts {yard_rate:.1f} M "
                    f"chars/s ({yard:.2f} s); ratio {ratio:.2f}, target >= 0.80; "
                    f"counts {'identical' if same else 'DIFFER'}",
                    ratio >= 0.8 and same,
                )
            )

    # 4. start-up (bytecode compiled first, as an installed package has it)
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(ROOT / "compactcli")],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    tiny = folder / "small.jsonl"
    with open(big, "rb") as source, open(tiny, "wb") as out:
        for _ in range(40):
            out.write(source.readline())
    minimal = folder / "minimal_typer.py"
    minimal.write_text(MINIMAL_TYPER)
    env_free = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    python = sys.executable

    def launch(*command: str) -> Any:
        return lambda: subprocess.run(
            [python, *command], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env_free
        )

    base, help_time, run_time, floor = interleaved(
        7,
        launch("-c", "import typer, rich, orjson"),
        launch("-m", "compactcli", "--help"),
        launch("-m", "compactcli", "estimate", str(tiny)),
        launch(str(minimal), "x"),
    )
    modules = (
        subprocess.run(
            [
                python,
                "-c",
                "import sys; from compactcli.cli import app; sys.argv=['compactcli','estimate',"
                f"{str(tiny)!r}]\ntry: app(prog_name='compactcli')\nexcept SystemExit: pass\n"
                "print(sorted(m for m in ('litellm','tiktoken') if m in sys.modules), "
                "file=sys.stderr)",
            ],
            capture_output=True,
            text=True,
        )
        .stderr.strip()
        .splitlines()[-1]
    )
    worst = max(help_time, run_time)
    results.append(
        (
            "start-up",
            f"--help {help_time * 1000:.0f} ms, estimate on a 40-line file {run_time * 1000:.0f} "
            f"ms; litellm/tiktoken imported: {modules} (a one-command Typer app, for reference: "
            f"{floor * 1000:.0f} ms)",
            f"python -c 'import typer, rich, orjson' {base * 1000:.0f} ms; "
            f"ratio {worst / base:.2f}, target <= 2.00",
            worst <= 2 * base and modules == "[]",
        )
    )

    print()
    for name, figure, yardstick, met in results:
        print(f"{name}: {figure}\n    yardstick: {yardstick}  [{'met' if met else 'NOT MET'}]")
    if not args.keep:
        for path in (big, small, tiny, minimal):
            path.unlink(missing_ok=True)
        folder.rmdir()
    return 0 if all(met for *_, met in results) else 1


if __name__ == "__main__":
    sys.exit(main())
