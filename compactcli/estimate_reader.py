"""The JSONL reader that `estimate_file` streams a transcript through (a second path:
docs/benchmarks.md).

`read_lines(path)` yields (line number, parsed object or None, None or the line's bytes) for
every record of a file, with the records and errors of `compactcli.jsonl.iter_records`: it
reads `_BLOCK` bytes at a time and parses each line where it lies in its block, copying only a
line that runs across blocks, and hashes nothing.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import Any, BinaryIO

import orjson

from compactcli.errors import InputError
from compactcli.formats.values import kind_of
from compactcli.jsonl import (
    _BOM,
    BadLines,
    OnBadLine,
    _describe_bad,
    display_name,
    first_line_reason,
    open_input,
)

__all__ = ["read_lines"]

_BLOCK = 1 << 18
"""Bytes read at a time: small enough to stay in the CPU's caches while their lines are parsed."""


def _spans(handle: BinaryIO) -> Iterator[tuple[bytes, int, int]]:
    """The input as (data, start, stop): runs of whole lines `data[start:stop]`, in order.

    Lines are not copied out of the blocks read; only a line that runs across blocks is joined
    into a `data` of its own (the last line may lack its newline).
    """
    read = handle.read
    pending: list[bytes] = []  # the start of a line that runs on into the next block
    while True:
        block = read(_BLOCK)
        if not block:
            if pending:
                tail = b"".join(pending)
                yield tail, 0, len(tail)
            return
        first = block.find(b"\n") + 1
        if not first:
            pending.append(block)
            continue
        start = 0
        if pending:
            pending.append(block[:first])
            joined = b"".join(pending)
            pending = []
            yield joined, 0, len(joined)
            start = first
        last = block.rfind(b"\n") + 1
        if start < last:
            yield block, start, last
        if last < len(block):
            pending.append(block[last:])


def read_lines(
    path: str,
    *,
    on_bad_line: OnBadLine = "error",
    bad: BadLines | None = None,
) -> Generator[tuple[int, Any, bytes | None], None, None]:
    """(line number, parsed object or None, None or the line's bytes) for every record of `path`.

    The records and errors of `compactcli.jsonl.iter_records` (blank and kept lines give None
    and their bytes, skipped lines nothing, the same `InputError` for a bad line or a file with
    no record), read faster: each line is parsed where it lies in the block read, not copied
    (a parsed line gives None for its bytes), and nothing is hashed.
    """
    name = display_name(path)
    bad = bad if bad is not None else BadLines()
    loads = orjson.loads
    decode_error = orjson.JSONDecodeError
    seen_object = False
    lineno = 0
    with open_input(path) as handle:
        for data, pos, stop in _spans(handle):
            view = memoryview(data)
            find = data.find
            while pos < stop:
                begin = start = pos
                pos = find(b"\n", pos, stop) + 1 or stop
                lineno += 1
                if lineno == 1 and data.startswith(_BOM, start):
                    start += 3
                try:
                    raw = loads(view[start:pos])
                except decode_error:
                    chunk = data[begin:pos]
                    body = chunk[start - begin :]
                    if body.isspace():
                        yield lineno, None, chunk
                        continue
                    line, eol = _split_eol(chunk)
                    text = line[3:] if lineno == 1 and line.startswith(_BOM) else line
                    try:  # without its line ending, as iter_records parses it: the same error
                        raw = loads(text)
                    except decode_error as error:
                        reason = first_line_reason(
                            path, lineno, _describe_bad(line, text, error, last=eol == b"")
                        )
                        if on_bad_line == "error":
                            raise InputError(name, lineno, reason) from None
                        bad.lines.append((lineno, reason))
                        if on_bad_line == "keep":
                            yield lineno, None, chunk
                        continue
                if type(raw) is not dict:
                    reason = first_line_reason(
                        path, lineno, f"expected a JSON object, found {kind_of(raw)}"
                    )
                    if on_bad_line == "error":
                        raise InputError(name, lineno, reason)
                    bad.lines.append((lineno, reason))
                    if on_bad_line == "keep":
                        yield lineno, None, data[begin:pos]
                    continue
                seen_object = True
                yield lineno, raw, None
    if not seen_object:
        if lineno == 0:
            raise InputError(name, None, "empty file: no records")
        if not bad:
            raise InputError(name, None, "no records: the file holds only blank lines")
        raise InputError(name, None, f"no readable record: all {len(bad)} bad lines skipped")


def _split_eol(chunk: bytes) -> tuple[bytes, bytes]:
    if chunk.endswith(b"\r\n"):
        return chunk[:-2], b"\r\n"
    if chunk.endswith(b"\n"):
        return chunk[:-1], b"\n"
    return chunk, b""
