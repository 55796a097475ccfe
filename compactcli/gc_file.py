"""One file of the `gc` command: a session file cut down to what its agent loads next.

`gc_file(path, destination, format=..., archive=...)` reads a session, asks its format what the
agent loads on resume and what metadata it needs (`Dialect.collect`; a format without that rule is
refused), checks that the result keeps the context the agent would load and validates as well as
the input did (else nothing is written, exit 1), records how to undo it in `archive` when given
(`compactcli.undo`: `compactcli restore --archive` puts the input back), and writes it where
`destination` says, as `compact` writes its results. It returns a `compactcli.batch.FileResult`
whose `details["gc"]` (`GcDict`) holds the sizes before and after.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from compactcli import batch
from compactcli.compact_file import Destination, write_chunks
from compactcli.errors import CompactError, UsageError

if TYPE_CHECKING:
    from compactcli.formats.base import Dialect
    from compactcli.transcript import Transcript


class GcDict(TypedDict):
    """What `gc` did to one file (`FileResult.details["gc"]`)."""

    records_before: int
    records_after: int
    bytes_before: int
    bytes_after: int


def gc_file(
    path: str,
    destination: Destination,
    *,
    format: str | None = None,
    archive: str | None = None,
    final: bool = False,
) -> batch.FileResult:
    """Write the session `path` holding only what its agent loads next and the metadata it needs
    (see the module). In place, a file that changed since it was read (an agent still writing to
    it) is left as it is (`compactcli.in_place`); `final` says this is the run's only output."""
    from compactcli import in_place, undo
    from compactcli.formats import get_dialect
    from compactcli.jsonl import render
    from compactcli.loading import read_transcript
    from compactcli.validation import validate

    seen = in_place.file_identity(path) if destination.mode == "in_place" else None
    transcript = read_transcript(path, format)
    dialect = get_dialect(transcript.format)
    records = dialect.collect(transcript)
    if records is None:
        raise UsageError(
            f"{transcript.source}: gc knows what Claude Code, Codex and pi load on resume, "
            f"not what {transcript.format} sessions need"
        )
    result = transcript.evolve(records=tuple(records))
    changed = len(records) != len(transcript.records) or any(
        a is not b for a, b in zip(records, transcript.records, strict=False)
    )
    if changed:
        if _context(dialect, result) != _context(dialect, transcript):
            raise CompactError(
                f"{transcript.source}: the collected session would not load the context the "
                "session holds; nothing written"
            )
        errors = validate(result).errors
        if len(errors) > len(validate(transcript).errors):
            first = errors[0]
            raise CompactError(
                f"{transcript.source}: the collected session would not validate (line "
                f"{first.line}: {first.code}: {first.message}); nothing written"
            )
        result = undo.record(transcript, result, archive=archive, stage="gc")
    chunks = list(render(result.records))
    output, backup = write_chunks(
        path, chunks, destination, changed=changed, seen=seen, final=final
    )
    figures: GcDict = {
        "records_before": len(transcript.records),
        "records_after": len(result.records),
        "bytes_before": sum(len(r.line or b"") + len(r.eol) for r in transcript.records),
        "bytes_after": sum(len(chunk) for chunk in chunks),
    }
    return batch.FileResult(
        path=transcript.source,
        status="collected" if changed else "unchanged",
        output=output,
        backup=backup,
        details={"gc": figures},
    )


def _context(dialect: Dialect, transcript: Transcript) -> list[tuple[str, list[tuple[str, str]]]]:
    """What the agent would load: each message's role and its blocks' kinds and texts."""
    return [(m.role, [(b.kind, b.text) for b in m.blocks]) for m in dialect.context(transcript)]
