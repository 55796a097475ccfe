#!/usr/bin/env python3
"""Time each second path of compactcli against the one implementation it duplicates.

A second path is code that states a rule again only to make a command faster. Each stays only
where it pays: at least 10% of its command's time, or 10 ms of start-up or exit. For every such
path this runs the command it serves as a user runs it (`compactcli estimate FILE > out`, with
`--method heuristic` or `exact` for a path of those, `compactcli compact FILE --force -o OUT`),
once as shipped and once with the general code in its place, and prints the medians and their
ratio. The general code is put in place by the driver of each run, before the command starts (a
class attribute set, or a function's code pointed at the general one), so nothing in the package
is switched for the benchmark.

Inputs (about `--mb` MB each, 50 by default; the sizes are printed):

- `synthetic`: the Claude Code session of `scripts/bench_estimate.py` (thinking signatures,
  numbered Read results with their `toolUseResult` copies, one compaction in the middle);
- `small-tools`: a Claude Code session of long runs of small tool calls and results (mostly
  Reads of a few KB with their UI copies, short Bash and Grep outputs, one compaction);
- `corpus-claude` and `corpus-codex`: the real sessions of `../shared/corpus/*.jsonl`, one
  format per file, copied one after the other until the size is reached, each copy with fresh
  ids and later timestamps (a Claude Code copy continues the chain of the one before). Left out
  when the folder is absent.

Every run is a new process; runs are interleaved (each round runs every variant once, in a
shuffled order) and the median of `--rounds` rounds is kept, of CPU time (user + system, which a
busy machine disturbs less) and of wall time. Each variant's output is compared with the
shipped one's: a general path must give the same bytes. Start-up and exit paths are timed on a
small fixture (`--startup-rounds` rounds, wall time, the output going to a file).

Usage: python scripts/bench_paths.py [--mb 50] [--rounds 5] [--only PATH,...] [--keep DIR]
       [--corpus DIR] [--json FILE]
Nothing here reaches the network.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid as uuidlib
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import orjson  # noqa: E402
from bench_estimate import Text, compile_package, generate  # noqa: E402

# --------------------------------------------------------------------------------------------
# Inputs


def generate_small_tools(path: Path, target: int, seed: int = 11) -> tuple[int, int]:
    """A Claude Code session of long runs of small tool calls: each turn a prompt, then 10 to
    40 steps of a call and its result (mostly Reads of 15 to 60 numbered lines with their
    `toolUseResult` copy, a few KB a line; else a Bash or Grep with one to five lines of
    output), now and then a short text; one compaction in the middle. Returns (bytes, records).
    """
    rng = random.Random(seed)
    text = Text(rng)
    session = str(uuidlib.UUID(int=rng.getrandbits(128)))
    envelope = {"isSidechain": False, "userType": "external", "cwd": "/home/dev/app"}
    envelope |= {"sessionId": session, "version": "2.1.120", "gitBranch": "main"}
    clock = 1_767_000_000.0
    parent: str | None = None
    written = records = turn = 0
    context = 20_000
    compacted = False

    def stamp() -> str:
        nonlocal clock
        clock += rng.uniform(0.1, 2.0)
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(clock)) + ".000Z"

    def chain(kind: str, body: dict[str, Any]) -> dict[str, Any]:
        nonlocal parent
        uid = str(uuidlib.UUID(int=rng.getrandbits(128), version=4))
        record = {"parentUuid": parent, **envelope, "type": kind, **body}
        record |= {"uuid": uid, "timestamp": stamp()}
        parent = uid
        return record

    def assistant(block: dict[str, Any]) -> dict[str, Any]:
        nonlocal context
        context += rng.randint(200, 1500)
        usage = {"input_tokens": 3, "cache_creation_input_tokens": rng.randint(50, 900)}
        usage |= {"cache_read_input_tokens": context, "output_tokens": rng.randint(20, 300)}
        message = {"model": "claude-sonnet-4-6", "id": f"msg_{rng.getrandbits(96):024x}"}
        message |= {"type": "message", "role": "assistant", "content": [block], "usage": usage}
        return chain("assistant", {"message": message, "requestId": f"req_{records:012d}"})

    def turn_records() -> Iterator[dict[str, Any]]:
        nonlocal parent, compacted
        if not compacted and written >= target // 2:
            compacted = True
            boundary = chain(
                "system",
                {
                    "subtype": "compact_boundary",
                    "content": "Conversation compacted",
                    "compactMetadata": {"trigger": "auto", "preTokens": context},
                    "logicalParentUuid": parent,
                },
            )
            boundary["parentUuid"] = None
            yield boundary
            summary = "This session is being continued from a previous conversation.\n"
            message = {"role": "user", "content": summary + text.words(3000)}
            yield chain("user", {"message": message, "isCompactSummary": True})
        prompt = {"role": "user", "content": text.words(rng.randint(40, 300))}
        yield chain("user", {"message": prompt})
        for _step in range(rng.randint(10, 40)):
            if rng.random() < 0.1:
                yield assistant({"type": "text", "text": text.words(rng.randint(20, 200))})
            call_id = f"toolu_{rng.getrandbits(100):025x}"
            tool = rng.choice(("Read", "Read", "Read", "Bash", "Grep"))
            copy: Any
            if tool == "Read":
                arguments: dict[str, Any] = {"file_path": f"/home/dev/app/src/m{turn % 50}.py"}
                lines = rng.randint(15, 60)
                output = text.numbered(lines)
                copy = {"type": "text", "file": {"filePath": arguments["file_path"]}}
                copy["file"] |= {"content": output, "numLines": lines}
            elif tool == "Bash":
                arguments = {"command": f"pytest -q tests/test_m{turn % 50}.py -x"}
                output = text.code(rng.randint(1, 5))
                copy = {"stdout": output, "stderr": "", "interrupted": False}
            else:
                arguments = {"pattern": rng.choice(("def ", "TODO", "import")), "path": "src"}
                output = "\n".join(f"src/m{rng.randint(0, 49)}.py" for _ in range(3))
                copy = {"mode": "files_with_matches", "filenames": output.split("\n")}
            call = assistant({"type": "tool_use", "id": call_id, "name": tool, "input": arguments})
            yield call
            result = {"tool_use_id": call_id, "type": "tool_result", "content": output}
            body = {"message": {"role": "user", "content": [result]}, "toolUseResult": copy}
            yield chain("user", body | {"sourceToolAssistantUUID": call["uuid"]})
        yield assistant({"type": "text", "text": text.words(rng.randint(40, 400))})

    with open(path, "wb") as out:
        while written < target:
            turn += 1
            for record in turn_records():
                line = orjson.dumps(record) + b"\n"
                out.write(line)
                written += len(line)
                records += 1
    return written, records


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_ID = re.compile(r"(toolu|msg|req|call|fc|rs|resp|ws)_[A-Za-z0-9_-]+")
_STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")
_NAMESPACE = uuidlib.UUID("1b671a64-40d5-491e-99b0-da01e6d6a4f7")


def _fresh(value: Any, copy: int) -> Any:
    """`value` with every id made new for copy `copy` and every timestamp moved on by `copy`
    times 400 days (the same old id gives the same new one within a copy)."""
    if isinstance(value, dict):
        return {key: _fresh(item, copy) for key, item in value.items()}
    if isinstance(value, list):
        return [_fresh(item, copy) for item in value]
    if isinstance(value, str) and copy:
        if _UUID.fullmatch(value):
            return str(uuidlib.uuid5(_NAMESPACE, f"{copy}:{value}"))
        if _ID.fullmatch(value):
            return f"{value}x{copy}"
        if _STAMP.fullmatch(value):
            moved = datetime.fromisoformat(value.replace("Z", "+00:00")) + timedelta(
                days=400 * copy
            )
            text = moved.isoformat(timespec="milliseconds")
            return text.replace("+00:00", "Z") if value.endswith("Z") else text
    return value


def _ends_answered(path: Path) -> bool:
    """Whether every tool call of session `path` has its result: a call left open at its end
    would be followed by the next copy's prompt, which no agent writes (an invalid session)."""
    sys.path.insert(0, str(ROOT))
    from compactcli import read_transcript, validate

    report = validate(read_transcript(str(path)))
    return not any(f.code == "call-unanswered" for f in (*report.errors, *report.warnings))


def concatenate_corpus(
    sources: list[Path], path: Path, target: int, claude: bool
) -> tuple[int, int]:
    """The `sources` copied one after the other, with fresh ids, until `target` bytes; in a
    Claude Code file each copy's root records hang off the last chain record before them, and
    in a Codex file only the first `session_meta` is kept, so the whole file is one session (a
    source that ends with a call unanswered is left out: the next copy would make it invalid).
    Returns (bytes, records)."""
    originals = [
        [orjson.loads(line) for line in p.read_bytes().splitlines() if line.strip()]
        for p in sources
        if _ends_answered(p)
    ]
    written = records = copy = 0
    last: str | None = None
    with open(path, "wb") as out:
        while written < target:
            for original in originals:
                if written >= target:
                    break
                for raw in original:
                    if records and raw.get("type") == "session_meta":
                        continue  # a Codex rollout has one, first
                    raw = _fresh(raw, copy)
                    if claude and isinstance(raw.get("uuid"), str) and "parentUuid" in raw:
                        boundary = raw.get("subtype") == "compact_boundary"
                        if raw["parentUuid"] is None and not boundary and last is not None:
                            raw["parentUuid"] = last
                        if raw.get("type") in ("user", "assistant", "system", "attachment"):
                            last = raw["uuid"]
                    line = orjson.dumps(raw) + b"\n"
                    out.write(line)
                    written += len(line)
                    records += 1
            copy += 1
    return written, records


# --------------------------------------------------------------------------------------------
# Variants: the command as shipped, and with one general path in place of a second one

PRELUDE = '''
import sys, types
sys.path.insert(0, {root!r})

def _copy(function):
    """A copy of `function` (its code as it is now)."""
    copy = types.FunctionType(function.__code__, function.__globals__, function.__name__,
                              function.__defaults__, function.__closure__)
    copy.__kwdefaults__ = function.__kwdefaults__
    return copy

def _redirect(function, replacement):
    """Make every call of `function`, wherever its name was imported, call `replacement`."""
    name = "_bench_" + function.__name__
    function.__globals__[name] = replacement
    space = {{}}
    exec("def proxy(*args, **kwargs):\\n    return " + name + "(*args, **kwargs)",
         function.__globals__, space)
    function.__code__ = space["proxy"].__code__
'''

DRIVER = """import os, sys
sys.path.insert(0, {root!r})
{before}

def _peak(exit=os._exit):
    \"\"\"Write the process's peak resident size (VmHWM, kB) to the file the bench names.\"\"\"
    with open("/proc/self/status") as status:
        found = [line.split()[1] for line in status if line.startswith("VmHWM:")]
    with open({peak!r}, "w") as out:
        out.write(found[0] if found else "0")

def _exit(code, exit=os._exit):
    _peak()
    exit(code)

os._exit = _exit
from compactcli.cli import main
{after}
sys.argv = {argv!r}
try:
    main()
finally:
    _peak()
"""


def cli_driver(root: Path, argv: list[str], peak: Path, before: str = "", after: str = "") -> str:
    """Python source that runs `argv` (`compactcli ...`) with the package of source tree `root`
    and writes the process's peak resident size (kB) to `peak`, as it exits; `before` runs
    before the package is imported, `after` once the command line is."""
    return DRIVER.format(root=str(root), before=before, after=after, argv=argv, peak=str(peak))


@dataclass(frozen=True)
class Variant:
    """One second path replaced by the general code it duplicates (`late` runs after the
    command line is imported, `early` before anything of the package is)."""

    path: str  # the row of docs/benchmarks.md this measures
    name: str
    command: str  # estimate | heuristic | exact | compact | estimate-small | compact-small
    shapes: tuple[str, ...]
    late: str = ""
    early: str = ""
    requires: str = ""  # "module:Name.attr": the second path, when the package still has it


def present(requirement: str) -> bool:
    """Whether `module:Name.attr` is defined (the last name in its owner's own namespace)."""
    if not requirement:
        return True
    import importlib

    module, _, dotted = requirement.partition(":")
    owner: Any = importlib.import_module(module)
    *path, last = dotted.split(".")
    for name in path:
        owner = getattr(owner, name)
    return last in vars(owner) or last in getattr(owner, "__slots__", ())


CLAUDE_SHAPES = ("synthetic", "small-tools", "corpus-claude")
ALL_SHAPES = (*CLAUDE_SHAPES, "corpus-codex")

_ITER_RECORDS = """
import compactcli.estimate_reader as reader
from compactcli.jsonl import iter_records
def read_lines(path, *, on_bad_line="error", bad=None, trim=None):
    for r in iter_records(path, on_bad_line=on_bad_line, bad=bad):
        yield r.lineno, r.raw, None if r.raw is not None else bytes(r.line) + r.eol
_redirect(reader.read_lines, read_lines)
"""

_NO_HASH = """
import compactcli.jsonl as jsonl
class _NoHash:
    def update(self, data): pass
    def copy(self): return self
    def hexdigest(self): return ""
jsonl._sha256 = _NoHash
"""

_DROP_FEED = """
from compactcli.formats.claude_code.stream import ClaudeCodeStreamer
if "feed" in vars(ClaudeCodeStreamer):
    del ClaudeCodeStreamer.feed
"""

VARIANTS = [
    Variant("reader", "iter_records", "estimate", ALL_SHAPES, late=_ITER_RECORDS),
    Variant("reader", "iter_records unhashed", "estimate", ALL_SHAPES, _ITER_RECORDS + _NO_HASH),
    Variant(
        "trim",
        "whole lines parsed",
        "estimate",
        CLAUDE_SHAPES,
        late="import compactcli.estimate_reader as r\n_redirect(r.trim_of, lambda s: None)",
        requires="compactcli.estimate_reader:trim_of",
    ),
    Variant(
        "streamer",
        "dialect views (BufferingStreamer)",
        "estimate",
        CLAUDE_SHAPES,
        late="from compactcli.formats.claude_code.dialect import ClaudeCodeDialect as D\n"
        "from compactcli.formats.base import Dialect\nD.streamer = Dialect.streamer",
    ),
    Variant(
        "feed",
        "add_light per record",
        "estimate",
        CLAUDE_SHAPES,
        late=_DROP_FEED,
        requires="compactcli.formats.claude_code.stream:ClaudeCodeStreamer.feed",
    ),
    *(
        Variant(
            "light_blocks",
            "light of _record_message",
            command,
            CLAUDE_SHAPES,
            late="from compactcli.formats.claude_code.stream import ClaudeCodeStreamer as S\n"
            "S._light_message = lambda self, index, raw, kind, lineno: "
            "self._slow(index, raw, lineno)",
            requires="compactcli.formats.claude_code.stream:ClaudeCodeStreamer._light_message",
        )
        for command in ("estimate", "heuristic")
    ),
    Variant(
        "light",
        "add per record (Message, light)",
        "estimate",
        CLAUDE_SHAPES,
        late=_DROP_FEED + "ClaudeCodeStreamer.light = False",
    ),
    Variant(
        "sink",
        "Ledger.add_light",
        "estimate",
        CLAUDE_SHAPES,
        late="from compactcli.estimate_ledger import Ledger\n"
        "Ledger.one_block_sink = lambda self: None",
        requires="compactcli.estimate_ledger:Ledger.one_block_sink",
    ),
    Variant(
        "fast_parts",
        "HeuristicCounter.parts",
        "estimate",
        CLAUDE_SHAPES,
        late="from compactcli.tokens import HeuristicCounter, _Costing\n"
        "HeuristicCounter.fast_parts = _Costing.fast_parts",
        requires="compactcli.tokens:HeuristicCounter.fast_parts",
    ),
    Variant(
        "parts",
        "_Costing.parts",
        "estimate",
        ALL_SHAPES,
        late="from compactcli.tokens import HeuristicCounter, _Costing\n"
        "HeuristicCounter.fast_parts = _Costing.fast_parts\n"
        "HeuristicCounter.parts = _Costing.parts",
        requires="compactcli.tokens:HeuristicCounter.parts",
    ),
    Variant(
        "maybe_json",
        "_looks_json",
        "estimate",
        CLAUDE_SHAPES,
        late="import compactcli.formats.claude_code.records as r\n"
        "_redirect(r._maybe_json, r._looks_json)",
        requires="compactcli.formats.claude_code.records:_maybe_json",
    ),
    Variant(
        "fast_count",
        "len(encode_ordinary)",
        "exact",
        CLAUDE_SHAPES,
        late="import compactcli.tokens as t\n"
        "_redirect(t._fast_count, lambda e: (lambda text: len(e.encode_ordinary(text))))",
        requires="compactcli.tokens:_fast_count",
    ),
    Variant(
        "mapped",
        "read into memory (_lines)",
        "compact",
        CLAUDE_SHAPES,
        late="import compactcli.jsonl as j\n_redirect(j.map_file, lambda handle: None)",
        requires="compactcli.jsonl:map_file",
    ),
    Variant(
        "lite",
        "every message made (_record_message)",
        "compact",
        CLAUDE_SHAPES,
        late="import compactcli.formats.claude_code.state as s\n"
        "_redirect(s._last_boundary, lambda records, start: start)",
    ),
    Variant(
        "patched",
        "replaced records: state built anew (_build_state)",
        "compact",
        CLAUDE_SHAPES,
        late="import compactcli.formats.claude_code.state as s\n"
        "_redirect(s._patched, lambda parent, records: None)",
        requires="compactcli.formats.claude_code.state:_patched",
    ),
    Variant(
        "chain_reuse",
        "chain built for each transcript (_build_chain)",
        "compact",
        CLAUDE_SHAPES,
        late="import compactcli.formats.claude_code.state as s\n"
        "def chain_of(transcript, state):\n"
        "    if state.chain is None:\n"
        "        state.chain = s._build_chain(state.skeletons, state.uuid_graph())\n"
        "    return state.chain\n"
        "_redirect(s._chain_of, chain_of)",
        requires="compactcli.formats.claude_code.chain:_appended_quietly",
    ),
    Variant(
        "lineage",
        "each transcript parsed anew",
        "compact",
        CLAUDE_SHAPES,
        late="from compactcli.transcript import Transcript\n"
        "inherited = Transcript.inherited\n"
        "Transcript.inherited = lambda self, key: None if key == 'claude-code.state' "
        "else inherited(self, key)",
    ),
    Variant(
        "hash_marks",
        "hashed from the start",
        "compact",
        CLAUDE_SHAPES,
        late="import compactcli.jsonl as j\nj.SourceInfo.hash_marks = lambda self, records: None",
        requires="compactcli.jsonl:HashMarks",
    ),
    Variant(
        "context_count",
        "estimate with its breakdown (breakdown=True)",
        "compact",
        CLAUDE_SHAPES,
        late="import compactcli.estimate as e\nwhole = _copy(e.estimate)\n"
        "_redirect(e.estimate, lambda *a, **k: whole(*a, **{**k, 'breakdown': True}))",
        requires="compactcli.estimate_ledger:Ledger.add_total",
    ),
    Variant(
        "constructors",
        "dataclass constructors",
        "compact",
        CLAUDE_SHAPES,
        late="import compactcli.transcript as t\n"
        "_redirect(t.new_record, lambda *a, **k: t.Record(*a, **k))\n"
        "_redirect(t.new_block, lambda *a, **k: t.Block(*a, **k))\n"
        "_redirect(t.new_message, lambda *a, **k: t.Message(*a, **k))",
        requires="compactcli.transcript:new_record",
    ),
    Variant(
        "to_chunks",
        "render",
        "compact",
        CLAUDE_SHAPES,
        late="import compactcli.loading as l\nfrom compactcli.jsonl import render\n"
        "_redirect(l.to_chunks, lambda transcript: list(render(transcript.records)))",
        requires="compactcli.loading:to_chunks",
    ),
    Variant(
        "lifetime",
        "interpreter teardown",
        "compact",
        CLAUDE_SHAPES,
        early="import compactcli.lifetime as lt\nlt.enable = lambda: None\n"
        "def _exit(code):\n    raise SystemExit(code)\nlt.exit_now = _exit",
    ),
]

_NO_PLAIN = (
    "import compactcli.plain_table as pt\npt.write_table = lambda stream, table: False\n"
    "pt.write_line = lambda stream, line, emoji=False: False"
)
_NO_LAZY = (
    "import re, compactcli.lazy_pattern as lp\n"
    "lp.compile_lazily = lambda source, flags=0: re.compile(source, flags)"
)
_NO_LIFETIME = VARIANTS[-1].early

STARTUP = [
    Variant("plain_table", "rich tables", cmd, ("small",), early=_NO_PLAIN)
    for cmd in ("estimate-small", "compact-small")
] + [
    Variant(name, general, cmd, ("small",), early=early)
    for name, general, early in (
        ("lazy_pattern", "re.compile at import", _NO_LAZY),
        ("lifetime", "interpreter teardown", _NO_LIFETIME),
    )
    for cmd in ("estimate-small", "compact-small")
]


# --------------------------------------------------------------------------------------------
# Running


@dataclass
class Timing:
    """The runs of one case: CPU and wall seconds, and, for a variant, the ratio of each run to
    the shipped code's runs just before and after it."""

    cpu: list[float] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)
    ratio_cpu: list[float] = field(default_factory=list)
    ratio_wall: list[float] = field(default_factory=list)
    digests: set[str] = field(default_factory=set)


def _argv(command: str, source: Path, output: Path) -> list[str]:
    if command in ("estimate", "estimate-small"):
        return ["compactcli", "estimate", str(source)]
    if command == "exact":
        return ["compactcli", "estimate", "--method", "exact", str(source)]
    if command == "heuristic":
        return ["compactcli", "estimate", "--method", "heuristic", str(source)]
    return ["compactcli", "compact", str(source), "--force", "-o", str(output)]


Key = tuple[str, str, str]  # (command, variant name or "" for the shipped code, shape)

peaks: dict[Key, float] = {}
"""The peak resident size (MiB) of the last run of each (command, variant, input file)."""


def run_once(
    variant: Variant | None, command: str, source: Path, folder: Path
) -> tuple[float, float, str]:
    """(CPU seconds, wall seconds, sha256 of what the command wrote) of one run."""
    output = folder / "out.jsonl"
    captured = folder / "stdout.txt"
    output.unlink(missing_ok=True)
    (folder / "peak.txt").unlink(missing_ok=True)
    driver = cli_driver(
        ROOT,
        _argv(command, source, output),
        folder / "peak.txt",
        before=PRELUDE.format(root=str(ROOT)) + (variant.early if variant else ""),
        after=variant.late if variant else "",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPACTCLI_")}
    env.pop("COLUMNS", None)
    started = time.perf_counter()
    with open(captured, "wb") as out:
        child = subprocess.Popen(
            [sys.executable, "-c", driver], stdout=out, stderr=subprocess.PIPE, env=env
        )
        assert child.stderr is not None
        errors = child.stderr.read()
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    cpu = usage.ru_utime + usage.ru_stime
    if child.returncode not in (0, 1):
        sys.stderr.write(errors.decode())
        name = variant.name if variant else "shipped"
        raise SystemExit(f"{command} ({name}) on {source.name} exited {child.returncode}")
    peak = int((folder / "peak.txt").read_text()) / 1024
    peaks[(command, variant.name if variant else "", source.name)] = peak
    digest = hashlib.sha256(captured.read_bytes())
    if output.exists():
        digest.update(output.read_bytes())
    return cpu, wall, digest.hexdigest()


def measure(
    variants: list[Variant], files: dict[str, Path], rounds: int, folder: Path, rng: random.Random
) -> dict[Key, Timing]:
    """Time the variants and the shipped code, `rounds` times. Each round takes the (command,
    shape) groups in a shuffled order and runs, within a group, the shipped code before and
    after every variant (the variants shuffled): S V1 S V2 S ... S. A variant's ratio in that
    round is its time over the mean of the two shipped runs around it, taken a few seconds
    apart, so that a change in the machine's load weighs on both alike."""
    groups: dict[tuple[str, str], list[Variant]] = {}
    for variant in variants:
        for shape in variant.shapes:
            groups.setdefault((variant.command, shape), []).append(variant)
    timings: dict[Key, Timing] = {}

    def run(command: str, variant: Variant | None, shape: str) -> tuple[float, float]:
        cpu, wall, digest = run_once(variant, command, files[shape], folder)
        timing = timings.setdefault((command, variant.name if variant else "", shape), Timing())
        timing.cpu.append(cpu)
        timing.wall.append(wall)
        timing.digests.add(digest)
        return cpu, wall

    for round_number in range(rounds):
        order = list(groups)
        rng.shuffle(order)
        for command, shape in order:
            members = list(groups[(command, shape)])
            rng.shuffle(members)
            before = run(command, None, shape)
            for variant in members:
                cpu, wall = run(command, variant, shape)
                after = run(command, None, shape)
                timing = timings[(command, variant.name, shape)]
                timing.ratio_cpu.append(cpu / ((before[0] + after[0]) / 2))
                timing.ratio_wall.append(wall / ((before[1] + after[1]) / 2))
                before = after
        print(f"  round {round_number + 1}/{rounds} done", file=sys.stderr, flush=True)
    return timings


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def report(
    variants: list[Variant], timings: dict[Key, Timing], files: dict[str, Path], wall: bool
) -> list[dict[str, Any]]:
    """One row per variant and shape: the medians of the shipped and the general code's times
    (CPU, or wall for start-up), the median of the paired ratios, and what the shipped code
    saves (the ratio applied to the shipped code's median); printed as a table."""
    rows = []
    for variant in variants:
        for shape in variant.shapes:
            fast = timings.get((variant.command, "", shape))
            slow = timings.get((variant.command, variant.name, shape))
            if fast is None or slow is None:
                continue
            shipped = _median(fast.wall if wall else fast.cpu)
            ratio = _median(slow.ratio_wall if wall else slow.ratio_cpu)
            rows.append(
                {
                    "path": variant.path,
                    "general": variant.name,
                    "command": variant.command,
                    "shape": shape,
                    "clock": "wall" if wall else "cpu",
                    "shipped_s": shipped,
                    "general_s": _median(slow.wall if wall else slow.cpu),
                    "ratio": ratio,
                    "ratio_low": min(slow.ratio_wall if wall else slow.ratio_cpu),
                    "ratio_high": max(slow.ratio_wall if wall else slow.ratio_cpu),
                    "saved_ms": (ratio - 1) * shipped * 1000,
                    "same_output": len(fast.digests | slow.digests) == 1,
                    "shipped_peak_mib": peaks.get((variant.command, "", files[shape].name)),
                    "general_peak_mib": peaks.get(
                        (variant.command, variant.name, files[shape].name)
                    ),
                }
            )
    print(
        f"{'path':<14} {'general code':<46} {'command':<14} {'shape':<14} "
        f"{'shipped':>8} {'general':>8} {'ratio':>6} {'(min-max)':>13} {'saved':>9}  same"
        f"  peak MiB"
    )
    for row in rows:
        print(
            f"{row['path']:<14} {row['general']:<46} {row['command']:<14} {row['shape']:<14} "
            f"{row['shipped_s']:>7.3f}s {row['general_s']:>7.3f}s {row['ratio']:>6.3f} "
            f"({row['ratio_low']:.2f}-{row['ratio_high']:.2f}) {row['saved_ms']:>7.1f}ms  "
            f"{'yes' if row['same_output'] else 'NO '}  "
            f"{row['shipped_peak_mib'] or 0:.0f}/{row['general_peak_mib'] or 0:.0f}"
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=50, help="size of each large input, in MB")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (median kept)")
    parser.add_argument("--startup-rounds", type=int, default=21, help="rounds of start-up runs")
    parser.add_argument("--only", help="comma-separated paths to time (default: all)")
    parser.add_argument("--keep", type=Path, help="write the inputs here and reuse them")
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    parser.add_argument("--json", type=Path, help="write the rows here too")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else None
    folder = args.keep or Path(tempfile.mkdtemp(prefix="compactcli-paths-"))
    folder.mkdir(parents=True, exist_ok=True)
    compile_package()
    target = args.mb * 1_000_000
    files: dict[str, Path] = {
        "small": ROOT / "fixtures" / "transcripts" / "claude-code-session.jsonl"
    }
    makers = {
        "synthetic": lambda p: generate(p, target)[:2],
        "small-tools": lambda p: generate_small_tools(p, target),
    }
    corpus = sorted(args.corpus.glob("*.jsonl")) if args.corpus.is_dir() else []
    for name, prefix, claude in (
        ("corpus-claude", "claude-code-", True),
        ("corpus-codex", "codex-", False),
    ):
        sources = [p for p in corpus if p.name.startswith(prefix)]
        if sources:
            makers[name] = lambda p, s=sources, c=claude: concatenate_corpus(s, p, target, c)
        else:
            print(f"{name}: no {prefix}*.jsonl in {args.corpus}; left out")
    for name, make in makers.items():
        path = folder / f"{name}.jsonl"
        if not path.exists():
            make(path)
        with open(path, "rb") as handle:
            lines = sum(block.count(b"\n") for block in iter(lambda: handle.read(1 << 20), b""))
        print(f"{name}: {path.stat().st_size / 1e6:.1f} MB, {lines:,} records")
        files[name] = path
    rng = random.Random(args.seed)
    chosen = [replace(v, shapes=tuple(s for s in v.shapes if s in files)) for v in VARIANTS]
    chosen = [v for v in chosen if v.shapes and (only is None or v.path in only)]
    for variant in [v for v in chosen if not present(v.requires)]:
        print(f"{variant.path}: not in this version ({variant.requires} is gone); not timed")
        chosen.remove(variant)
    rows: list[dict[str, Any]] = []
    if chosen:
        print(f"\nlarge inputs: {args.rounds} rounds (CPU time; ratio: median of the pairs)")
        rows += report(chosen, measure(chosen, files, args.rounds, folder, rng), files, wall=False)
    starting = [v for v in STARTUP if only is None or v.path in only]
    if starting:
        small = files["small"].name
        print(f"\nstart-up and exit on {small}: {args.startup_rounds} rounds (wall time)")
        timings = measure(starting, files, args.startup_rounds, folder, rng)
        rows += report(starting, timings, files, wall=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    if args.keep is None:
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
