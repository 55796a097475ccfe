"""The last recorded usage of a transcript file, read from its end.

`read_from_end(path, format, head, counter)` reads a file backwards, a growing block at a time,
and feeds the records it reads, in file order, to the format's `Streamer` and a `Ledger` as the
forward read feeds every record, until the format's tail check says they decide the last usage
anchor of the context view, and what follows it, exactly as the whole file does; from its
`TailResult` `compactcli.estimate` reports the `usage` and `auto` figures. Whenever that is not
certain from what was read it returns None, and the caller reads the file forward. The records
before what was read are taken as the agent writes them and never read, so nothing is known of
them: not how many they are, not their tokens, not whether they parse."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

import orjson

from compactcli.errors import InputError
from compactcli.estimate_ledger import Ledger, feed_ledger
from compactcli.estimate_usage import Analysis
from compactcli.formats import get_dialect, get_format
from compactcli.formats.base import StreamedView, TailCheck, TailVerdict
from compactcli.formats.mixed import Mixing
from compactcli.tokens import HeuristicCounter, TiktokenCounter

__all__ = ["BLOCK", "TailResult", "TailStats", "read_from_end"]

BLOCK = 1 << 14
"""Bytes read first from the end; each further read doubles."""


@dataclass(slots=True)
class TailStats:
    """What one read from the end did: bytes read, and why it gave up (empty when it did not)."""

    bytes_read: int = 0
    reason: str = ""


@dataclass(frozen=True, slots=True)
class TailResult:
    """The records read from the end, counted: the ledger and view the report is made from."""

    ledger: Ledger
    view: StreamedView
    records: int  # records read (the last ones of the file)


def _blocks_back(handle: BinaryIO, size: int, block: int, stats: TailStats) -> Iterator[bytes]:
    """Runs of whole lines, each ending where the one before it (in the file) starts, read from
    the end; the first line of the file is never given (the caller stops at the start)."""
    end = size
    carry = b""  # the end of a line whose start lies before `end`
    while end > 0:
        start = max(0, end - block)
        handle.seek(start)
        chunk = handle.read(end - start)
        stats.bytes_read += len(chunk)
        data = chunk + carry
        end = start
        block *= 2
        if start == 0:
            return
        cut = data.find(b"\n") + 1
        if not cut:  # a line longer than what was read: read further back
            carry = data
            continue
        carry = data[:cut]
        yield data[cut:]


def _parse_back(data: bytes) -> tuple[list[dict[str, Any]], bool]:
    """The records of whole lines `data` in file order (blank lines left out), parsed from the
    last: those after the last line that is not a JSON object, and whether there is one."""
    loads = orjson.loads
    found: list[dict[str, Any]] = []
    for line in reversed(data.split(b"\n")):
        if not line or line.isspace():
            continue
        try:
            raw = loads(line)
        except orjson.JSONDecodeError:
            raw = None
        if type(raw) is not dict:
            found.reverse()
            return found, True
        found.append(raw)
    found.reverse()
    return found, False


def read_from_end(
    path: str,
    format: str,
    head: Sequence[Any],
    counter: HeuristicCounter | TiktokenCounter,
    *,
    block: int | None = None,
    stats: TailStats | None = None,
) -> TailResult | None:
    """The last usage anchor of file `path` and the context after it, from its end; `head`
    holds the parsed objects of the file's first records, as format detection read them.

    The file is read backwards in blocks (`block` bytes first, `BLOCK` by default, twice as many
    each time after); only the whole lines of what was read are parsed, from the last one back,
    and those records are fed, in file order, to the format's `Streamer` and a `Ledger` made
    with `counter`. After each block the format's tail check (`compactcli.formats.Format.tail`)
    says whether the records read decide the last usage anchor of the context view and every
    context message after the start of its response exactly as the whole file does (or hold the
    whole context view, with no usage on it); then they are returned, counted. The records
    before them are taken as the agent writes them (appended in time order, each after its
    parent, a response's records together, ids unique).

    None (read the file forward) whenever that is not certain from what was read: the format
    has no tail check or its check declines (a compaction, a branch or a usage it cannot
    place), a line that is not a JSON object comes before the records decide, a record of
    another format's family, a record the format cannot read, or reading back reaches the start
    of the file (with no usage or no model named in what was read, say). `stats`, when given,
    counts the bytes read and says why it gave up.
    """
    stats = stats if stats is not None else TailStats()
    block = block or BLOCK
    check = get_format(format).tail()
    if check is None:
        stats.reason = f"no tail check for {format}"
        return None
    mixing = Mixing()
    for raw in head:
        if isinstance(raw, dict):
            mixing.other(raw, 0)
    if mixing.first is None:
        stats.reason = "the first records name no format family"
        return None
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError:
        stats.reason = "cannot open"
        return None
    with handle:
        size = os.fstat(handle.fileno()).st_size
        records: list[dict[str, Any]] = []
        for data in _blocks_back(handle, size, block, stats):
            found, broken = _parse_back(data)
            if any(mixing.other(raw, 0) is not None for raw in found):
                stats.reason = "a record of another format"
                return None
            records[:0] = found
            if records:
                result, verdict = _decide(records, format, counter, check)
                if result is not None:
                    stats.reason = ""
                    return result
                stats.reason = verdict.reason
                if not verdict.more:
                    return None
            if broken:
                stats.reason = "a line that is not a JSON object before the records needed"
                return None
    stats.reason = f"reached the start of the file ({stats.reason or 'nothing decided'})"
    return None


def _decide(
    records: Sequence[dict[str, Any]],
    format: str,
    counter: HeuristicCounter | TiktokenCounter,
    check: TailCheck,
) -> tuple[TailResult | None, TailVerdict]:
    """The records counted as a file of their own, and whether that decides the whole file's
    figures (the format's `TailVerdict`)."""
    streamer = get_dialect(format).streamer()
    ledger = Ledger(counter)
    try:
        feed_ledger(((i, raw, None) for i, raw in enumerate(records)), streamer, ledger)
        view = streamer.finish()
        for message in view.messages:
            ledger.add(message)
    except (InputError, ValueError):
        return None, TailVerdict.no("a record the format cannot read")
    first = None  # the record that starts the last usage's response, when there is a usage
    if view.usage:
        analysis = Analysis(ledger, view)
        last = analysis.anchors[-1] if analysis.anchors else None
        if last is None or last.usage is not view.usage[-1]:
            return None, TailVerdict.need("the last usage has no response on what was read")
        first = ledger.record[analysis.context[last.first]]
    verdict = check(records, streamer, view, first)
    if not verdict.decided:
        return None, verdict
    if view.model is None:
        return None, TailVerdict.need("no model named in what was read")
    return TailResult(ledger, view, len(records)), verdict
