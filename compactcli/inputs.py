"""Expanding command-line inputs into transcript paths.

`expand_inputs(paths)` turns the paths a user gave into the list of files to read: a file as
given, a folder as every `*.jsonl` and SWE-agent `*.traj` file below it (sorted, hidden folders
skipped), `-` as standard
input, and nothing at all as standard input. A path that does not exist raises `InputError`.
`workers_for(jobs, files)` is how many of them run at once for `--jobs`, and
`largest_first(paths)` the order in which parallel runs hand them out.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from compactcli.errors import InputError, UsageError

STDIN = "-"


def expand_inputs(paths: Sequence[str]) -> list[str]:
    """The transcript files named by `paths`, in the order given, folders expanded."""
    if not paths:
        return [STDIN]
    if paths.count(STDIN) > 1:
        raise UsageError("standard input ('-') can be read only once")
    files: list[str] = []
    for path in paths:
        if path == STDIN:
            files.append(path)
        elif os.path.isdir(path):
            found = _jsonl_below(path)
            if not found:
                raise InputError(path, None, "folder holds no *.jsonl or *.traj file")
            files.extend(found)
        elif os.path.exists(path):
            files.append(path)
        else:
            raise InputError(path, None, "no such file or folder")
    return files


def _jsonl_below(folder: str) -> list[str]:
    found: list[str] = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(
            os.path.join(root, n) for n in sorted(names) if n.endswith((".jsonl", ".traj"))
        )
    return found


def workers_for(jobs: int, files: int) -> int:
    """How many files run at once for `--jobs jobs` (0: one per core) over `files` files."""
    return max(1, min(jobs or os.cpu_count() or 1, files))


def largest_first(paths: Sequence[str]) -> list[int]:
    """The indexes of `paths`, largest file first (ties, standard input and files that cannot
    be looked at keep their order): the longest runs start first, so that a batch does not end
    waiting on one large file started last."""

    def size(index: int) -> int:
        try:
            return os.path.getsize(paths[index])
        except OSError:
            return 0

    return sorted(range(len(paths)), key=lambda index: -size(index))
