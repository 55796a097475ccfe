"""Reading and writing JSONL transcripts, byte-exact and atomic.

`iter_records` streams a file (or standard input for `-`) one record at a time with the exact
bytes and line ending of every line, so untouched records are written back as they were; bad
input raises `InputError` naming the file, line and what is wrong (for a file that is one JSON
document or pretty-printed records, `not_json_lines` says so), unless `on_bad_line` skips such
lines (counted in `BadLines`) or keeps them verbatim. `render` turns records back into bytes
(original bytes where unchanged, orjson where edited) and `write_bytes` writes them to standard
output, or atomically to a file, so a reader never sees a partial file."""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, BinaryIO, Literal

import orjson

from compactcli import atomic, trajectory
from compactcli.errors import STDOUT, InputError, OutputError
from compactcli.formats.values import kind_of
from compactcli.transcript import Line, Record

if TYPE_CHECKING:
    import hashlib

OnBadLine = Literal["error", "skip", "keep"]
STDIN = "-"
_BOM = b"\xef\xbb\xbf"
_POSITION = re.compile(r"^(.*): line \d+ column (\d+) \(char \d+\)$")


@dataclass(slots=True)
class BadLines:
    """Lines left out or kept unparsed under `on_bad_line`, with the reason for each."""

    lines: list[tuple[int, str]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.lines)


def _sha256() -> hashlib._Hash:
    import hashlib  # when a file is read whole: importing it at start-up costs milliseconds

    return hashlib.sha256()


@dataclass(slots=True)
class SourceInfo:
    """Facts about the bytes read: their sha256 and size, filled in as the stream is read."""

    path: str
    size: int = 0
    records: int = 0
    _hash: hashlib._Hash = field(default_factory=_sha256)

    @property
    def sha256(self) -> str:
        return self._hash.hexdigest()


def display_name(path: str) -> str:
    return "<stdin>" if path == STDIN else path


@contextlib.contextmanager
def open_input(path: str, data: bytes | None = None) -> Iterator[BinaryIO]:
    """Open `path` for binary reading; `-` is standard input. OSError becomes InputError.
    Given `data`, those bytes are read instead, as the content of a file named `path`."""
    if data is not None:
        import io

        if trajectory.is_trajectory(path):
            data = trajectory.to_lines(data, path)
        yield io.BytesIO(data)
        return
    if path == STDIN:
        yield sys.stdin.buffer
        return
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except IsADirectoryError:
        raise InputError(path, None, "is a folder, not a transcript file") from None
    except FileNotFoundError:
        raise InputError(path, None, "no such file") from None
    except OSError as error:
        raise InputError(path, None, f"cannot open: {error.strerror or error}") from None
    with handle:
        if trajectory.is_trajectory(path):  # a SWE-agent document, read as JSON Lines
            import io

            yield io.BytesIO(trajectory.to_lines(handle.read(), path))
        else:
            yield handle


_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def _describe_bad(line: bytes, body: bytes, error: Exception, last: bool) -> str:
    if body.startswith(_UTF16_BOMS):
        return (
            "not UTF-8 but UTF-16 (it starts with a UTF-16 byte-order mark, as Windows "
            "PowerShell's > writes files): convert it first, e.g. iconv -f UTF-16 -t UTF-8"
        )
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as bad:
        return f"invalid UTF-8 at byte {bad.start + 1} of the line"
    if last:
        return "truncated last line: no closing newline and not complete JSON"
    message = str(error).split("\n", 1)[0]
    found = _POSITION.match(message)
    if found:
        message = f"{found.group(1)} at column {found.group(2)}"
    return f"invalid JSON: {message}"


_DOCUMENT_LIMIT = 256 << 20
"""The largest file `not_json_lines` reads whole to see whether it is one JSON document."""


def not_json_lines(path: str, data: bytes | None = None) -> str | None:
    """Why `path`, whose first line is not a JSON object, is not JSON Lines at all: one JSON
    document (an object spread over lines, or an array), with how to turn its list of messages
    into JSON Lines, or JSON objects spread over lines one after another (pretty-printed records),
    with how to put one on each line. None when it is none of these, or is standard input.
    Given `data`, those are the file's bytes."""
    if path == STDIN and data is None:
        return None
    import shlex  # only on this error path: reading a file does not load it

    if data is None:
        try:
            if os.path.getsize(path) > _DOCUMENT_LIMIT:
                return None
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            return None
    elif len(data) > _DOCUMENT_LIMIT:
        return None
    lines = data.count(b"\n") + (not data.endswith(b"\n"))
    where = f" over {lines:,} lines" if lines > 1 else ""
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        objects = _objects_one_after_another(data)
        if objects is None:
            return None
        return (
            f"not JSON Lines: the file is {objects:,} JSON objects{where}, not one per line "
            f"(as JSON Lines: jq -c . {shlex.quote(path)})"
        )
    if isinstance(document, list):
        return (
            f"not JSON Lines: the file is one JSON array{where} of {len(document):,} items "
            f"(as JSON Lines: jq -c '.[]' {shlex.quote(path)})"
        )
    if not isinstance(document, dict) or lines < 2:
        return None
    found = f"not JSON Lines: the file is one JSON object{where}"
    for key in ("history", "messages"):  # a SWE-agent trajectory, a chat request
        if isinstance(document.get(key), list):
            return f"{found} (its {key!r} list as JSON Lines: jq -c '.{key}[]' {shlex.quote(path)})"
    return found


def _objects_one_after_another(data: bytes) -> int | None:
    """How many JSON objects `data` holds one after another (pretty-printed, as `jq .` or
    `json.dump(..., indent=2)` write them), when it holds two or more and nothing else."""
    import json  # only on this error path

    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    decode = json.JSONDecoder().raw_decode
    count, at, end = 0, 0, len(text)
    while True:
        while at < end and text[at] in " \t\r\n":
            at += 1
        if at == end:
            return count if count > 1 else None
        try:
            value, at = decode(text, at)
        except ValueError:
            return None
        if not isinstance(value, dict):
            return None
        count += 1


def first_line_reason(path: str, lineno: int, reason: str, data: bytes | None = None) -> str:
    """`reason` for bad line `lineno`, or, on line 1 of a file that is one JSON document, what
    `not_json_lines` says of it (`data`: the file's bytes, when they are not read from it)."""
    return (not_json_lines(path, data) or reason) if lineno == 1 else reason


def iter_records(
    path: str,
    *,
    on_bad_line: OnBadLine = "error",
    bad: BadLines | None = None,
    info: SourceInfo | None = None,
    data: bytes | None = None,
) -> Iterator[Record]:
    """Stream the records of `path` (or of `data`, the bytes of a file named `path`), one per
    line, keeping each line's exact bytes.

    Blank lines are carried through as unparsed records. Raises `InputError` naming the file
    and line for a bad line: invalid JSON, invalid UTF-8, a truncated last line, a line that is
    JSON but not an object (`first_line_reason`); and for a file with no record at all.
    `on_bad_line="skip"` leaves such lines out and counts them in `bad` instead; `"keep"`
    carries them through unparsed, to be written back verbatim. `info` gathers the sha256 and
    size of the bytes read.
    """
    name = display_name(path)
    info = info if info is not None else SourceInfo(path)
    bad = bad if bad is not None else BadLines()
    seen_object = False
    lineno = 0
    with open_input(path, data) as handle:
        for line, eol in _lines(handle, info):
            lineno += 1
            body = line[3:] if lineno == 1 and line[:3] == _BOM else line
            if (not body or body[0] in _SPACE) and not body.strip():
                yield Record(raw=None, line=line, lineno=lineno, eol=eol)
                continue
            try:
                raw = orjson.loads(body)
            except orjson.JSONDecodeError as error:
                # only the last line can lack its line ending
                reason = first_line_reason(
                    path, lineno, _describe_bad(line, body, error, last=eol == b""), data
                )
                yield from _bad(name, line, lineno, eol, reason, on_bad_line, bad)
                continue
            if not isinstance(raw, dict):
                reason = first_line_reason(
                    path, lineno, f"expected a JSON object, found {kind_of(raw)}", data
                )
                yield from _bad(name, line, lineno, eol, reason, on_bad_line, bad)
                continue
            seen_object = True
            info.records += 1
            yield Record(raw, line, lineno, eol)
    if not seen_object:
        if lineno == 0:
            raise InputError(name, None, "empty file: no records")
        if not bad:
            raise InputError(name, None, "no records: the file holds only blank lines")
        raise InputError(name, None, f"no readable record: all {len(bad)} bad lines skipped")


_BLOCK = 1 << 20
"""Bytes read at a time, and the size of the write buffer."""

_SPACE = frozenset(b" \t\n\r\x0b\x0c")
"""What `bytes.isspace` counts as white space, as byte values."""


def _cut(data: bytes, start: int, stop: int) -> Iterator[tuple[Line, bytes]]:
    """The lines of `data[start:stop]`, which ends with a line end, each with its ending."""
    find = data.find
    end = find(b"\n", start, stop)
    while end >= 0:
        if end > start and data[end - 1] == 13:  # \r
            yield data[start : end - 1], b"\r\n"
        else:
            yield data[start:end], b"\n"
        start = end + 1
        end = find(b"\n", start, stop)


def _lines(handle: BinaryIO, info: SourceInfo) -> Iterator[tuple[Line, bytes]]:
    """(line, line ending) for every line read from `handle`, counted and hashed into `info`.

    The ending is `\r\n`, `\n`, or empty for a last line without one. Lines are cut out of
    large blocks (one copy each); a line that runs across blocks is joined first.
    """
    read = handle.read
    digest = info._hash
    pending: list[bytes] = []  # the start of a line that runs on into the next block
    while True:
        block = read(_BLOCK)
        if not block:
            break
        info.size += len(block)
        digest.update(block)
        start = 0
        end = block.find(b"\n")
        if end < 0:
            pending.append(block)
            continue
        last = block.rfind(b"\n") + 1
        if pending:
            pending.append(block[: end + 1])
            joined = b"".join(pending)
            pending = []
            if joined.endswith(b"\r\n"):
                yield joined[:-2], b"\r\n"
            else:
                yield joined[:-1], b"\n"
            start = end + 1
        yield from _cut(block, start, last)
        if last < len(block):
            pending.append(block[last:])
    if pending:
        yield b"".join(pending), b""


def _bad(
    name: str,
    line: Line,
    lineno: int,
    eol: bytes,
    reason: str,
    on_bad_line: OnBadLine,
    bad: BadLines,
) -> Iterator[Record]:
    if on_bad_line == "error":
        raise InputError(name, lineno, reason)
    bad.lines.append((lineno, reason))
    if on_bad_line == "keep":
        yield Record(raw=None, line=line, lineno=lineno, eol=eol)


def dumps(raw: object) -> bytes:
    """Serialise one record's JSON the way compactcli writes new or edited records."""
    return orjson.dumps(raw)


def render(records: Iterable[Record]) -> Iterator[Line]:
    """The bytes of `records` as pieces to write one after the other: each untouched line as it
    was read (not copied) and then its ending, each edited record re-serialised with its ending.

    A record without a line ending (the input's last line) gets one when another record follows
    it, so appending never glues two records together.
    """
    previous: Record | None = None
    for record in records:
        if previous is not None:
            yield from _pieces(previous, last=False)
        previous = record
    if previous is not None:
        yield from _pieces(previous, last=True)


def _pieces(record: Record, *, last: bool) -> tuple[Line, bytes]:
    if record.line is None:
        return dumps(record.raw), record.eol or b"\n"
    return record.line, record.eol if record.eol or last else b"\n"


def write_bytes(
    chunks: Iterable[Line], path: str, *, mode_from: str | None = None, mode: int | None = None
) -> None:
    """Write `chunks` to `path` atomically (`compactcli.atomic.write`: a temporary file in the
    same folder, then a rename).

    `-` writes to standard output. The file gets the permission bits of file `mode_from`, or
    `mode`, or else the umask's. Any OSError becomes an `OutputError`, and the temporary file
    is removed. The chunks are written as they are, without copying them into a buffer first
    (`compactcli.atomic.write_all`), where the system can.
    """
    if path == STDIN:
        out = sys.stdout.buffer
        try:
            for chunk in chunks:
                out.write(chunk)
            out.flush()
        except BrokenPipeError:
            raise  # the reader went away (`| head`): the run ends quietly
        except OSError as error:
            raise OutputError.cannot_write(STDOUT, error) from None
        return
    if trajectory.is_trajectory(path):  # written back as a SWE-agent document
        chunks = [trajectory.to_document(chunks)]
    try:
        if mode_from is not None:
            mode = os.stat(mode_from).st_mode & 0o7777
        atomic.write(path, chunks, mode=mode)
    except OSError as error:
        raise OutputError.cannot_write(path, error) from None


def file_bytes(chunks: Iterable[Line], path: str) -> bytes:
    """The bytes `write_bytes` writes to a file named `path` for `chunks` (a SWE-agent
    trajectory's document for a `.traj` name)."""
    if trajectory.is_trajectory(path):
        return trajectory.to_document(chunks)
    return b"".join(chunks)


def record_bytes(record: Record, *, last: bool) -> bytes:
    """The bytes `render` writes for `record`, its line ending included (`last`: no record
    follows it)."""
    body, eol = _pieces(record, last=last)
    return body + eol
