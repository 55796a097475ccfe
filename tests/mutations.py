"""Seeded mutations of JSONL transcripts: the inputs a damaged or hand-edited session file gives.

`mutate(data, rng)` applies one or two mutations drawn with `rng` (a `random.Random`): a value's
type flipped, a key dropped, an id copied from another record (duplicated ids, broken links),
two lines swapped, a line duplicated or deleted, a line truncated, a line of invalid JSON.
`mutants(sources, count, seed)` makes `count` of them, deterministically, cycling through
`sources` (name, bytes). `corpus_windows(folder)` cuts small windows of consecutive lines out of
the real sessions (with each file's first line, which holds a Codex or pi session header), so
that a mutant of a large session stays quick to compact.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

ID_KEYS = frozenset(
    {
        "uuid",
        "parentUuid",
        "logicalParentUuid",
        "sourceToolAssistantUUID",
        "id",
        "parentId",
        "firstKeptEntryId",
        "call_id",
        "tool_use_id",
        "toolCallId",
        "tool_call_id",
    }
)
"""Keys whose values link records: copying one onto another duplicates or breaks a link."""

KINDS = ("flip", "drop-key", "duplicate-id", "swap", "duplicate", "delete", "truncate", "garbage")
WEIGHTS = (6, 6, 6, 3, 3, 4, 1, 1)
"""How often each mutation is drawn: unreadable files (truncated, invalid JSON) only exercise
the reader, so they are drawn least."""

_OTHER_VALUES: tuple[Any, ...] = (None, 0, 7, 1.5, "x", "", True, [], [1], {}, {"a": 1})
_GARBAGE = (b'{"type": "user", "message": ', b"not json", b"[1, 2]", b'"a string"', b"{}")


@dataclass(frozen=True)
class Mutant:
    source: str
    mutations: tuple[str, ...]
    data: bytes


def mutants(sources: Sequence[tuple[str, bytes]], count: int, seed: int) -> Iterator[Mutant]:
    """`count` mutants of `sources`, the same ones for the same seed."""
    rng = random.Random(seed)
    for n in range(count):
        name, data = sources[n % len(sources)]
        done: list[str] = []
        for _ in range(rng.choice((1, 1, 2))):
            data, what = mutate(data, rng)
            done.append(what)
        yield Mutant(name, tuple(done), data)


def mutate(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """`data` with one mutation, and what it was."""
    lines = data.split(b"\n")
    final = lines[-1] == b""
    if final:
        lines.pop()
    if not lines:
        return data, "none (empty)"
    kind = rng.choices(KINDS, WEIGHTS)[0]
    what = _apply(kind, lines, rng)
    return b"\n".join(lines) + (b"\n" if final else b""), what


def _apply(kind: str, lines: list[bytes], rng: random.Random) -> str:
    n = rng.randrange(len(lines))
    if kind == "swap" and len(lines) > 1:
        m = rng.randrange(len(lines))
        lines[n], lines[m] = lines[m], lines[n]
        return f"swap lines {n + 1} and {m + 1}"
    if kind == "duplicate":
        m = rng.randrange(len(lines) + 1)
        lines.insert(m, lines[n])
        return f"line {n + 1} copied before line {m + 1}"
    if kind == "delete" and len(lines) > 1:
        del lines[n]
        return f"line {n + 1} deleted"
    if kind == "truncate" and lines[n]:
        cut = rng.randrange(len(lines[n]))
        lines[n] = lines[n][:cut]
        return f"line {n + 1} cut at byte {cut}"
    if kind == "garbage":
        lines.insert(n, rng.choice(_GARBAGE))
        return f"bad line before line {n + 1}"
    if kind == "duplicate-id":
        return _duplicate_id(lines, rng)
    parsed = _parsed(lines[n])
    if parsed is None:
        return f"line {n + 1} left (not an object)"
    paths = list(_paths(parsed, ()))
    if not paths:
        return f"line {n + 1} left (empty)"
    path = rng.choice(paths)
    if kind == "drop-key":
        parent = _get(parsed, path[:-1])
        if isinstance(parent, dict):
            del parent[path[-1]]
            lines[n] = orjson.dumps(parsed)
            return f"line {n + 1}: dropped {_name(path)}"
    value = _get(parsed, path)
    choices = [v for v in _OTHER_VALUES if type(v) is not type(value)]
    _set(parsed, path, rng.choice(choices))
    lines[n] = orjson.dumps(parsed)
    return f"line {n + 1}: {_name(path)} changed from {type(value).__name__}"


def _duplicate_id(lines: list[bytes], rng: random.Random) -> str:
    found: list[tuple[int, tuple[Any, ...], str]] = []
    parsed: dict[int, Any] = {}
    for n, line in enumerate(lines):
        value = _parsed(line)
        if value is None:
            continue
        parsed[n] = value
        for path in _paths(value, ()):
            if path[-1] in ID_KEYS and isinstance(_get(value, path), str):
                found.append((n, path, _get(value, path)))
    values = sorted({v for _, _, v in found})
    if len(values) < 2:
        return "no ids to copy"
    n, path, old = rng.choice(found)
    new = rng.choice([v for v in values if v != old])
    _set(parsed[n], path, new)
    lines[n] = orjson.dumps(parsed[n])
    return f"line {n + 1}: {_name(path)} set to another record's id"


def _parsed(line: bytes) -> Any:
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _paths(value: Any, base: tuple[Any, ...], depth: int = 0) -> Iterator[tuple[Any, ...]]:
    if depth > 6:
        return
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, inner in items:
        path = (*base, key)
        yield path
        if isinstance(inner, (dict, list)):
            yield from _paths(inner, path, depth + 1)


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def _set(value: Any, path: tuple[Any, ...], new: Any) -> None:
    _get(value, path[:-1])[path[-1]] = new


def _name(path: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in path)


def corpus_windows(folder: Path, per_file: int = 3, size: int = 40) -> list[tuple[str, bytes]]:
    """`per_file` windows of `size` lines from each session in `folder` (none when the folder
    is not there), each with the file's first line."""
    windows: list[tuple[str, bytes]] = []
    if not folder.is_dir():
        return windows
    for path in sorted(folder.glob("*.jsonl")):
        lines = path.read_bytes().splitlines(keepends=True)
        if not lines:
            continue
        step = max(1, (len(lines) - size) // per_file)
        for k in range(per_file):
            start = min(k * step, max(0, len(lines) - size))
            window = lines[start : start + size]
            if start > 0:
                window = [lines[0], *window]
            if not window[-1].endswith(b"\n"):
                window[-1] += b"\n"
            label = f"{path.name}[{start + 1}:{start + size}]"
            if not windows or windows[-1][0] != label:
                windows.append((label, b"".join(window)))
    return windows
