"""The one check every writing command makes first: no output is an input, or another output.

`check(inputs, outputs)` raises `UsageError` (exit 2), before anything is read or written, when
an output would write over a file the command reads, or two outputs are one file, with a one-line
message naming the file and the option. Files are compared as the system sees them (`identity`):
the same file reached through `..`, a symbolic link or a hard link is the same file, and what is
not a regular file or folder (a terminal, a pipe, a device, the process's own open files)
overwrites nothing.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence

from compactcli.atomic import process_file
from compactcli.errors import UsageError

__all__ = ["check", "identity"]

_REPLACEABLE = ("-o", "--out-dir")
"""Options whose output would replace an input that `--in-place` replaces on purpose."""


def identity(path: str) -> tuple[object, ...] | None:
    """What makes two paths one file: ("inode", device, inode) for an existing regular file or
    folder (`os.stat`, following symbolic links), ("path", resolved path) for a path not made
    yet; None for standard input, for the process's own open files (`/dev/stderr`, `/dev/fd/N`:
    `compactcli.atomic.process_file`), for what is not a regular file or folder (a terminal, a
    pipe, a device), and for what cannot be looked at.
    """
    if not path or path == "-" or process_file(path):
        return None
    try:
        status = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return ("path", os.path.realpath(path))
    except OSError:
        return None
    if stat.S_ISREG(status.st_mode) or stat.S_ISDIR(status.st_mode):
        return ("inode", status.st_dev, status.st_ino)
    return None


def check(inputs: Iterable[str], outputs: Sequence[tuple[str, str | None]]) -> None:
    """Refuse an output that is an input or another output.

    `inputs` are the files read (`-`, standard input, is none); `outputs` are `(option, path)`
    pairs in the order the command writes them: `-o`, each `--out-dir` file, `--stats`,
    `--boundary`, `--archive` (a folder, compared as a whole: the archive holds files named by
    their sha256 and never writes over one); `eval`'s `--records` and `--write-baseline`. The
    message names the file and the option:

        out.jsonl: -o would overwrite the input; use --in-place
        link.jsonl: --stats would overwrite the input s.jsonl
        same.json: --boundary would overwrite the --stats output

    `-o` and `--out-dir` point at `--in-place`, which replaces an input on purpose (with a
    backup); under `--in-place` the result is not an output here, but every report still is.
    Paths are compared by `identity`, so two outputs not yet written can still be one file.
    """
    read: dict[tuple[object, ...], str] = {}
    for name in inputs:
        key = identity(name)
        if key is not None:
            read.setdefault(key, name)
    written: dict[tuple[object, ...], str] = {}
    for option, given in outputs:
        if given is None:
            continue
        path = given
        key = identity(path)
        if key is None:
            continue
        source = read.get(key)
        if source is not None:
            named = "" if _same_name(source, path) else f" {source}"
            hint = "; use --in-place" if option in _REPLACEABLE else ""
            raise UsageError(f"{path}: {option} would overwrite the input{named}{hint}")
        other = written.get(key)
        if other is not None:
            raise UsageError(f"{path}: {option} would overwrite the {other} output")
        written.setdefault(key, option)


def _same_name(a: str, b: str) -> bool:
    return os.path.abspath(a) == os.path.abspath(b)
