"""One file of the `restore` command: undo the compactions compactcli wrote into it.

`restore_file(path, destination, archive=..., every=...)` reads the file's bytes, undoes its
newest compaction (`every`: all of them, newest first) with `compactcli.undo`, and writes the
input's bytes where `destination` says, as `compact` writes its results (standard output, a file
with the input's permission bits, in place with a backup, or nothing for `--dry-run`). What it
cannot give back exactly it refuses (`compactcli.undo.RestoreError`, exit 1) and writes nothing.
It returns a `compactcli.batch.FileResult` whose `details["restore"]` (`RestoreDict`) says what
was undone.
"""

from __future__ import annotations

from typing import TypedDict

from compactcli import batch
from compactcli.compact_file import Destination, write_chunks
from compactcli.jsonl import display_name, open_input
from compactcli.undo import Restored, RestoreError, restore, restore_all


class UndoneDict(TypedDict):
    """One compaction undone: its stage, where its undo was kept, and the lines it took."""

    stage: str
    undo_from: str  # "file" or "archive"
    lines_removed: int  # that the compaction had added
    lines_patched: int  # that it had edited, put back as they were
    lines_put_back: int  # that it had left out


class RestoreDict(TypedDict):
    """What `restore` did to one file (`FileResult.details["restore"]`)."""

    undone: list[UndoneDict]
    bytes_before: int
    bytes_after: int


def _undone(restored: Restored) -> UndoneDict:
    return {
        "stage": restored.stage,
        "undo_from": restored.where,
        "lines_removed": restored.dropped,
        "lines_patched": restored.patched,
        "lines_put_back": restored.put_back,
    }


def restore_file(
    path: str,
    destination: Destination,
    *,
    archive: str | None = None,
    every: bool = False,
    final: bool = False,
) -> batch.FileResult:
    """Undo the newest compaction of `path` (with `every`, all of them) and write the result
    where `destination` says. In place, a file that changed since it was read is left as it
    is (`compactcli.in_place`); `final` says this is the run's only output."""
    from compactcli import in_place

    seen = in_place.file_identity(path) if destination.mode == "in_place" else None
    with open_input(path) as handle:
        data = handle.read()
    try:
        done = restore_all(data, archive) if every else [restore(data, archive)]
    except RestoreError as error:
        raise type(error)(f"{display_name(path)}: {error}") from None
    result = done[-1].data
    output, backup = write_chunks(path, [result], destination, changed=True, seen=seen, final=final)
    figures: RestoreDict = {
        "undone": [_undone(r) for r in done],
        "bytes_before": len(data),
        "bytes_after": len(result),
    }
    return batch.FileResult(
        path=display_name(path),
        status="restored",
        output=output,
        backup=backup,
        details={"restore": figures},
    )
