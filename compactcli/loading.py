"""Files to transcripts and back: `read_transcript` and `write_transcript`.

`read_transcript` reads a JSONL file (or `-`) into a `Transcript`, detecting its format from the
first records unless one is named (a file whose records mix formats is then an `InputError`
naming the line where the other format starts: `compactcli.formats.mixed`). `write_transcript`
writes one back atomically; records that no stage changed come out byte for byte as they went
in.

"""

from __future__ import annotations

from itertools import islice

from compactcli.errors import UsageError
from compactcli.formats import FORMATS, get_dialect
from compactcli.formats.detect import SNIFF_RECORDS, detect_format
from compactcli.formats.mixed import check_records
from compactcli.jsonl import (
    BadLines,
    OnBadLine,
    SourceInfo,
    display_name,
    iter_records,
    render,
    write_bytes,
)
from compactcli.transcript import Transcript


def read_transcript(
    path: str,
    format: str | None = None,
    *,
    on_bad_line: OnBadLine = "error",
    bad: BadLines | None = None,
    data: bytes | None = None,
) -> Transcript:
    """Read `path` (`-` for standard input) into a Transcript; given `data`, those bytes as the
    content of a file named `path` (`compactcli.in_memory`).

    Raises `InputError` (file and line in the message) for unreadable input, an unknown
    format or, when the format is detected, a file that mixes formats; and `UsageError` for an
    unknown `format` name.
    """
    if format is not None and format not in FORMATS:
        get_dialect(format)  # raises UsageError naming the known formats
    info = SourceInfo(path)
    records = tuple(iter_records(path, on_bad_line=on_bad_line, bad=bad, info=info, data=data))
    if format is None:
        objects = list(islice((r.raw for r in records if isinstance(r.raw, dict)), SNIFF_RECORDS))
        format = detect_format(objects, display_name(path))
        check_records(records, display_name(path))
    return Transcript(records=records, format=format, source=display_name(path), sha256=info.sha256)


def write_transcript(
    transcript: Transcript, path: str, *, mode_from: str | None = None, mode: int | None = None
) -> None:
    """Write `transcript` to `path` (`-` for standard output), atomically for files, with the
    permission bits of file `mode_from`, or `mode`, or else the umask's."""
    if path != "-" and not path:
        raise UsageError("empty output path")
    write_bytes(render(transcript.records), path, mode_from=mode_from, mode=mode)


def to_bytes(transcript: Transcript) -> bytes:
    """The transcript as the bytes `write_transcript` would write."""
    return b"".join(render(transcript.records))
