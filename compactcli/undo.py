"""How to undo a compaction: the `Undo` compactcli records for each transcript it writes.

`record(before, after, ...)` writes into the output's newest record of ours (or, with an
archive, also into the archive's journal, named by the output's sha256) how to get each input
line back from the output: kept, patched in one span, or left out, with short spans inline and
long ones and left-out lines kept in the archive by sha256 (only counted, with no archive).
`restore(data, archive)` rebuilds the input's bytes from the newest undo that applies; they must
have the sha256 the input had, so a restore is exact or refused with its reason
(`RestoreError`). Nothing here writes a transcript: `compactcli.cli.restore` does."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

import orjson

from compactcli import boundary
from compactcli.archive import Archive
from compactcli.errors import CompactError, ExitCode
from compactcli.jsonl import dumps, record_bytes, render
from compactcli.transcript import Record, Transcript

INLINE_BYTES = 256
"""The longest span of the input an undo holds inline; a longer one goes to the archive."""

JOURNAL = "undo"
"""The archive's folder of undos, each named by the sha256 of the output it undoes."""

Piece = str | dict[str, Any]
"""Bytes of the input: inline text, `{"sha256": H}` in the archive, or `{"lost": N}` bytes."""


class Undo(TypedDict):
    """How to get the input back from one output (`compactcli.undo`).

    `ops` lists, for each line of the input in order, the output line that holds it unchanged
    (`keep`), or holds it with one span changed (`patch`: the input's bytes of that span), or
    that the line was left out (`lines`). Lines the command added are in none of them. A short
    span without a secret (a relinked `parentUuid`) is kept inline; a long one (a cleared tool
    output) and every left-out line are kept in the archive by sha256, or, with no archive, only
    counted (`lost`).
    """

    source_sha256: str  # of the input, which a restore must give back
    lines: int  # of the output this undoes
    stage: str  # of the command's last stage ("prune", "summarize", "compact")
    ops: list[list[Any]]  # ["keep", first, count] | ["patch", line, at, end, piece]
    # | ["lines", piece]: the input's lines in order, from output lines (0-based) or a piece


class RestoreError(CompactError):
    """A transcript that cannot be restored exactly; the reason is the message."""

    exit_code = ExitCode.CHECK_FAILED


class NothingRecorded(RestoreError):
    """No compaction by compactcli is recorded in the transcript (or in the archive given)."""


@dataclass(frozen=True, slots=True)
class Restored:
    """One compaction undone: the input's bytes and what it took."""

    data: bytes
    stage: str  # of the newest boundary of the compaction undone ("" when not known)
    where: str  # "file" (the undo was in the transcript) or "archive"
    dropped: int  # lines the compaction had added
    patched: int  # lines put back as they were
    put_back: int  # lines the compaction had left out


def _sha256(chunks: Iterable[bytes]) -> str:
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(chunk)
    return digest.hexdigest()


def split_lines(data: bytes) -> list[bytes]:
    """`data` as lines, each with its `\\n` (the last one without, when the data ends without
    one): lines as `compactcli.jsonl` reads them, a `\\r` left inside its line."""
    parts = data.split(b"\n")
    lines = [part + b"\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _shared(was: bytes, now: bytes, limit: int, *, tail: bool) -> int:
    """How many bytes `was` and `now` share at their start (`tail`: their end), at most `limit`;
    by halving, each step one comparison of slices."""
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if (was[-middle:] == now[-middle:]) if tail else (was[:middle] == now[:middle]):
            low = middle
        else:
            high = middle - 1
    return low


def _span(was: bytes, now: bytes) -> tuple[int, int, int]:
    """(at, end in `now`, end in `was`): the one span of `now` that differs from `was`, cut at
    UTF-8 character boundaries."""
    limit = min(len(was), len(now))
    at = _shared(was, now, limit, tail=False)
    while at > 0 and (
        (at < len(was) and was[at] & 0xC0 == 0x80) or (at < len(now) and now[at] & 0xC0 == 0x80)
    ):
        at -= 1
    tail = _shared(was, now, limit - at, tail=True)
    while tail > 0 and (was[-tail] & 0xC0 == 0x80 or now[-tail] & 0xC0 == 0x80):
        tail -= 1
    return at, len(now) - tail, len(was) - tail


def _alike(was: bytes, now: bytes) -> bool:
    """True when `now` is `was` with one span changed that is at most half the longer of them
    (a relinked parent, not a line put in another's place)."""
    at, end, _ = _span(was, now)
    return at + len(now) - end >= max(len(was), len(now)) / 2


def _safe_inline(data: bytes) -> str | None:
    """`data` as inline text, when short, valid UTF-8 and free of anything `redact` hides."""
    if len(data) > INLINE_BYTES:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    from compactcli.redact import redact

    return text if redact(text) == text else None


def _piece(data: bytes, archive: Archive | None, *, inline: bool) -> Piece:
    text = _safe_inline(data) if inline else None
    if text is not None:
        return text
    if archive is not None:
        return {"sha256": archive.put(data)}
    return {"lost": len(data)}


def _read(item: Record) -> bytes:
    """The bytes an input record was read from, its line ending included."""
    assert item.line is not None
    return item.line + item.eol


def build(
    before: Transcript, records: Sequence[Record], *, archive: Archive | None, inline: bool
) -> tuple[Undo, list[int]] | None:
    """The undo of writing `records` for `before`, and the indexes of the records the writing
    added; None when the input's bytes are not all in `before` (a line left out with
    `--on-bad-line skip`, a record `--repair` rewrote).

    The output is lined up with the input by content, not by what the stages say: a line
    written as read anchors the two (by position first, else by being the only input line
    with those bytes, further on); between two anchors, as many input lines as output lines
    (records of ours aside) are the same lines edited; else the first ones that are alike
    (`_alike`) are, and the other input lines were left out and the other output lines added."""
    source = before.records
    for number, item in enumerate(source, 1):
        if item.lineno != number or item.line is None:
            return None
    ops: list[list[Any]] = []
    added: list[int] = []
    last = len(records) - 1
    index_of: dict[bytes, int] | None = None  # an input line's bytes -> its index, -1: twice

    def keep(index: int) -> None:
        previous = ops[-1] if ops else None
        if previous and previous[0] == "keep" and previous[1] + previous[2] == index:
            previous[2] += 1
        else:
            ops.append(["keep", index, 1])

    def patch(index: int, was: bytes) -> None:
        now = record_bytes(records[index], last=index == last)
        at, end, was_end = _span(was, now)
        ops.append(["patch", index, at, end, _piece(was[at:was_end], archive, inline=inline)])

    def gap(first: int, stop: int, outputs: list[int]) -> None:
        """Input lines `first:stop` and the output lines `outputs` between two anchors."""
        if not outputs and stop == first:
            return
        theirs = [j for j in outputs if not boundary.is_ours(records[j].raw)]
        paired = 0
        if len(theirs) == stop - first:
            paired = len(theirs)  # the same lines, edited in place
        else:  # the edited lines come first, the rest were left out or added
            while paired < min(len(theirs), stop - first) and _alike(
                _read(source[first + paired]), record_bytes(records[theirs[paired]], last=False)
            ):
                paired += 1
        for j, item in zip(theirs[:paired], source[first : first + paired], strict=True):
            patch(j, _read(item))
        if stop > first + paired:
            data = b"".join(_read(item) for item in source[first + paired : stop])
            ops.append(["lines", _piece(data, archive, inline=False)])
        added.extend(j for j in outputs if j not in theirs[:paired])

    taken = 0  # input lines placed so far
    pending: list[int] = []  # output lines since the last anchor
    for index, item in enumerate(records):
        body = item.line if item.line is not None else dumps(item.raw)
        at = taken
        if at < len(source) and (body is source[at].line or body == source[at].line):
            pass
        else:
            if index_of is None:
                index_of = {}
                for k, other in enumerate(source):
                    assert other.line is not None
                    index_of[other.line] = -1 if other.line in index_of else k
            at = index_of.get(body, -1)
            if at < taken:
                pending.append(index)
                continue
        gap(taken, at, pending)
        pending = []
        taken = at + 1
        eol = item.eol if item.eol or index == last else b"\n"  # as `render` ends it
        if eol == source[at].eol:
            keep(index)
        else:
            patch(index, _read(source[at]))
    gap(taken, len(source), pending)
    undo: Undo = {"source_sha256": before.sha256, "stage": "", "lines": len(records), "ops": ops}
    return undo, added


def _details(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    found = raw.get(boundary.MARK)
    if found is None and isinstance(raw.get("payload"), dict):
        found = raw["payload"].get(boundary.MARK)
    return found if isinstance(found, dict) else None


def _with_undo(raw: dict[str, Any], undo: Undo) -> dict[str, Any]:
    if boundary.MARK in raw:
        return {**raw, boundary.MARK: {**raw[boundary.MARK], "undo": undo}}
    payload = raw["payload"]
    return {**raw, "payload": {**payload, boundary.MARK: {**payload[boundary.MARK], "undo": undo}}}


def record(
    before: Transcript,
    after: Transcript,
    *,
    archive: str | None,
    inline: bool = True,
    stage: str | None = None,
    journal: bool = True,
) -> Transcript:
    """`after` with the undo of writing it for `before` in the newest record of ours it added
    (under `compactcli.undo`), so a session in an append-only format carries how to undo its
    compaction, and, with `archive` and `journal`, that undo in the archive's journal too, named
    by the sha256 of the output it undoes (which serves formats with no record of ours).
    `inline=False` keeps every span of the input out of the transcript (`--redact`: the output
    must not carry what it hid). `stage` names what is undone (default: the last stage of
    `after.stats`). `after` unchanged when the undo cannot be made (`build`); and as it is when
    its newest record of ours holds the undo of `before` already (a stage records its own: a
    command that runs one stage records it again)."""
    store = Archive(archive) if archive and journal else None
    newest = next((r for r in reversed(after.records) if boundary.is_ours(r.raw)), None)
    held = _details(newest.raw) if newest is not None else None
    undo: Undo | None = held.get("undo") if held is not None else None
    if undo is None or undo.get("source_sha256") != before.sha256:
        records = list(after.records)
        built = build(before, records, archive=Archive(archive) if archive else None, inline=inline)
        if built is None:
            return after
        undo, added = built
        if stage is not None:
            undo["stage"] = stage
        else:
            undo["stage"] = after.stats[-1].stage if after.stats else ""
        holder = next((j for j in reversed(added) if boundary.is_ours(records[j].raw)), None)
        if holder is not None:
            records[holder] = records[holder].with_raw(_with_undo(records[holder].raw, undo))
            after = after.evolve(records=tuple(records))
    if store is not None:
        written = _sha256(render(after.records))
        store.put_file(f"{JOURNAL}/{written}.json", orjson.dumps(undo))
    return after


def _find_in_file(lines: Sequence[bytes]) -> tuple[Undo, str] | None:
    """The undo in the newest record of ours that holds one, and its stage."""
    for line in reversed(lines):
        if b'"undo"' not in line:
            continue
        try:
            raw = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        details = _details(raw)
        if details is not None and isinstance(details.get("undo"), dict):
            undo: Undo = details["undo"]
            return undo, undo.get("stage") or str(details.get("stage", ""))
    return None


def _bytes(piece: Piece, archive: Archive | None, what: str) -> bytes:
    if isinstance(piece, str):
        return piece.encode("utf-8")
    if "lost" in piece:
        raise RestoreError(
            f"{what} {piece['lost']:,} bytes of the input that the compaction kept in no archive "
            "(compact and prune keep them with --archive), so it cannot be undone exactly"
        )
    digest = str(piece["sha256"])
    if archive is None:
        raise RestoreError(f"{what} bytes kept in an archive: give the archive with --archive DIR")
    try:
        return archive.get(digest)
    except OSError:
        raise RestoreError(
            f"{what} bytes the archive {archive.folder} does not hold ({digest})"
        ) from None


def apply(lines: Sequence[bytes], undo: Undo, archive: Archive | None) -> tuple[bytes, int, int]:
    """The input's bytes rebuilt from output `lines` by `undo`, checked against its sha256;
    (bytes, lines patched, lines put back). `RestoreError` when a piece is missing or the bytes
    are not the input's."""
    if len(lines) != undo["lines"]:
        more = len(lines) - undo["lines"]
        if more > 0:
            raise RestoreError(
                f"{more:,} lines follow what compactcli wrote (the session went on after it); "
                "restoring would drop them"
            )
        raise RestoreError(f"the file has {-more:,} lines fewer than compactcli wrote")
    out: list[bytes] = []
    patched = put_back = 0
    for op in undo["ops"]:
        kind = op[0]
        if kind == "keep":
            out.extend(lines[op[1] : op[1] + op[2]])
        elif kind == "patch":
            index, at, end = op[1], op[2], op[3]
            line = lines[index]
            out.append(
                line[:at]
                + _bytes(op[4], archive, f"line {index + 1} (edited by the compaction) needs")
                + line[end:]
            )
            patched += 1
        elif kind == "lines":
            data = _bytes(op[1], archive, "lines left out are")
            out.append(data)
            put_back += data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
        else:
            raise RestoreError(f"an undo step this version does not know: {kind!r}")
    if _sha256(out) != undo["source_sha256"]:
        raise RestoreError(
            "the file changed after compactcli wrote it: the bytes restored are not its input's"
        )
    return b"".join(out), patched, put_back


def restore(data: bytes, archive: str | None = None) -> Restored:
    """The newest compaction of `data` undone (`Restored`), by the newest undo that applies to
    it (in the archive's journal first, then in the file); `RestoreError` when none is
    recorded, or it cannot be undone exactly."""
    store = Archive(archive) if archive else None
    lines = data.splitlines(keepends=True)
    found: tuple[Undo, str] | None = None
    where = "file"
    if store is not None:
        journal = store.folder / JOURNAL / f"{hashlib.sha256(data).hexdigest()}.json"
        if journal.is_file():
            undo: Undo = orjson.loads(journal.read_bytes())
            found, where = (undo, undo.get("stage", "")), "archive"
    if found is None:
        found = _find_in_file(lines)
    if found is None:
        raise NothingRecorded(
            "no compaction by compactcli is recorded here"
            + ("" if store is not None else " (one written only to an archive needs --archive)")
        )
    undo, stage = found
    restored, patched, put_back = apply(lines, undo, store)
    kept = sum(op[2] for op in undo["ops"] if op[0] == "keep")
    return Restored(
        data=restored,
        stage=stage,
        where=where,
        dropped=len(lines) - kept - patched,
        patched=patched,
        put_back=put_back,
    )


def restore_all(data: bytes, archive: str | None = None) -> list[Restored]:
    """Every compaction of `data` undone, newest first, until none is recorded; at least one
    (`RestoreError` as `restore` raises it when there is none)."""
    done = [restore(data, archive)]
    while True:
        try:
            done.append(restore(done[-1].data, archive))
        except NothingRecorded:
            return done


def journal_path(archive: str | os.PathLike[str], output: bytes) -> Path:
    """Where the undo of writing `output` is kept in `archive`."""
    return Path(archive) / JOURNAL / f"{hashlib.sha256(output).hexdigest()}.json"
