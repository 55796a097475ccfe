"""Replacing an input file with its result (`--in-place`), the original kept as a backup.

`replace(path, chunks, seen)` is what every command's `--in-place` does: a file that changed
since it was read is left as it is, the original is kept next to it under a new backup name, and
the result is written over it atomically with the original's permission bits; a write that fails
leaves the input as it was. Ctrl-C cannot separate the rename from the backup.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterable

from compactcli import atomic, interrupts
from compactcli.errors import OutputError
from compactcli.transcript import Line

__all__ = ["backup_path", "file_identity", "make_backup", "replace"]

Identity = tuple[int, int, int, int]


def file_identity(path: str) -> Identity | None:
    """What tells a file's content changed: its device, inode, size and modification time; None
    when it cannot be read (reading it then says why)."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)


def backup_path(path: str, exists: Callable[[str], bool] = os.path.lexists) -> str:
    """The first free backup name of `path`: `PATH.bak`, then `PATH.1.bak`, `PATH.2.bak`..."""
    candidate = f"{path}.bak"
    number = 0
    while exists(candidate):
        number += 1
        candidate = f"{path}.{number}.bak"
    return candidate


def make_backup(path: str) -> str:
    """Keep the original of `path` next to it under a new backup name (never overwriting one).

    A hard link when the file system allows it (instant, atomic), else a copy written under a
    temporary name and linked into place. Raises `OutputError` when neither works.
    """
    while True:
        candidate = backup_path(path)
        try:
            os.link(path, candidate)
            return candidate
        except FileExistsError:
            continue
        except OSError:
            break
    temporary = atomic.temp_path(f"{path}.bak")
    try:
        shutil.copy2(path, temporary)
        while True:
            candidate = backup_path(path)
            try:
                os.link(temporary, candidate)
                return candidate
            except FileExistsError:
                continue
    except OSError as error:
        raise OutputError(f"{path}: cannot keep a backup: {error.strerror or error}") from None
    finally:
        if os.path.lexists(temporary):
            os.unlink(temporary)


def replace(
    path: str, chunks: Iterable[Line], seen: Identity | None, *, final: bool = False
) -> tuple[str, str]:
    """Replace input file `path` with `chunks`; (the file written, its backup).

    It checks that the file is still the one that was read (`seen`, its `file_identity` taken
    before reading: a file an agent appended to meanwhile is left as it is, with an
    `OutputError`), keeps the original under a new backup name (`make_backup`), and writes the
    result over it atomically with the original's permission bits. A write that fails removes the
    backup again and leaves the input as it was. A file reached through a symbolic link is
    replaced where it lies (the link stays), with its backup beside it. The whole replacement
    goes through `compactcli.batch.WRITES` and `compactcli.interrupts.held`; `final=True` (the
    run's only output) settles the run once the file is in place
    (`compactcli.interrupts.settle`).
    """
    from compactcli import batch
    from compactcli.jsonl import write_bytes

    if file_identity(path) != seen:
        raise OutputError(
            f"{path}: changed while it was being compacted (is an agent still writing to it?); "
            "left as it is"
        )
    target = os.path.realpath(path) if os.path.islink(path) else path
    with batch.WRITES.writing(), interrupts.held():
        backup = make_backup(target)
        try:
            write_bytes(chunks, target, mode_from=target)
        except BaseException:
            os.unlink(backup)  # the input is untouched: the backup is not needed
            raise
        if final:
            interrupts.settle()
    return target, backup
