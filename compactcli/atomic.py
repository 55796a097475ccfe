"""Writing files so that a reader sees the old file or the new one, never a part.

`write(path, chunks, mode=...)` writes a temporary file next to the target, fsyncs it, gives it
its permission bits and renames it over the target; `append(path, data, mode=...)` adds to the
end of a file the same way, under an exclusive lock. Every write goes through
`compactcli.interrupts.held`, so Ctrl-C cannot cut it off half-way, and a failed write removes
its temporary file and raises `OSError` (the caller names the file). Temporary files a killed run
left behind are cleared by the next run that writes into their folder (`clear_stale`). Targets
that cannot be replaced (`_direct`) are written as they are.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import stat
import threading
from collections.abc import Callable, Iterable

from compactcli import interrupts
from compactcli.transcript import Line

__all__ = [
    "append",
    "clear_stale",
    "default_mode",
    "permission_bits",
    "process_file",
    "shared_bits",
    "temp_path",
    "write",
    "write_all",
]

_MARK = "compactcli"
_STALE = re.compile(r"^\..+\.compactcli-(\d+)\.tmp$")
_STANDARD = ("/dev/stdin", "/dev/stdout", "/dev/stderr")
_FD_ROOTS = ("/dev/fd/", "/proc/")
_BLOCK = 1 << 20
_IOV_MAX = 1024
"""Pieces handed to one `os.writev` (the least limit POSIX systems have)."""

_lock = threading.Lock()
_cleared: set[str] = set()  # folders whose leftovers this process removed
_mine: set[str] = set()  # temporary files this process is writing now


def temp_path(target: str) -> str:
    """The temporary file a write of `target` by this process uses, `.<name>.compactcli-<pid>.tmp`
    beside it. A run killed half-way (SIGKILL, power loss) leaves one behind, which `clear_stale`
    removes once its process no longer runs.
    """
    folder, name = os.path.split(os.path.abspath(target))
    return os.path.join(folder, f".{name}.{_MARK}-{os.getpid()}.tmp")


def default_mode() -> int:
    """The permission bits a new file gets from the umask (0o666 less the umask)."""
    return 0o666 & ~_umask()


def _umask() -> int:
    """The process's umask, read where the system shows it (setting it to read it would
    change it for a moment under other threads creating files)."""
    try:
        with open("/proc/self/status", "rb") as status:
            for line in status:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    umask = os.umask(0o077)
    os.umask(umask)
    return umask


def permission_bits(path: str) -> int | None:
    """The permission bits of regular file `path`; None when it is not one (or is `-`)."""
    if path == "-":
        return None
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_mode & 0o777 if stat.S_ISREG(status.st_mode) else None


def shared_bits(paths: Iterable[str]) -> int | None:
    """The permission bits every regular file of `paths` has (what the outputs made from them
    get); None when none of them is a regular file (standard input)."""
    found: int | None = None
    for path in paths:
        bits = permission_bits(path)
        if bits is not None:
            found = bits if found is None else found & bits
    return found


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, owned by someone else
        return True
    return True


def clear_stale(folder: str) -> list[str]:
    """Remove the temporary files of runs that no longer run from `folder` (once per folder in
    this process); the names removed."""
    folder = os.path.abspath(folder)
    with _lock:
        if folder in _cleared:
            return []
        _cleared.add(folder)
    removed: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        found = _STALE.match(entry.name)
        if found is None or _alive(int(found.group(1))):
            continue
        with contextlib.suppress(OSError):
            if entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)
                removed.append(entry.name)
    return removed


def process_file(path: str) -> bool:
    """Whether `path` names one of the process's open files (`/dev/stdout`, `/dev/fd/N`,
    `/proc/...`) rather than a file of its own."""
    absolute = os.path.abspath(path)
    return absolute in _STANDARD or absolute.startswith(_FD_ROOTS)


def _direct(path: str) -> bool:
    """Whether `path` is written as it is, appending, rather than replaced: an existing file that is
    not a regular one (a terminal, a pipe, a device) and the process's own open files
    (`/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, anything under /proc: `process_file`).
    """
    if process_file(path):
        return True
    try:
        status = os.stat(path)
    except OSError:
        return False
    return not stat.S_ISREG(status.st_mode)


def _target(path: str) -> str:
    """The file a write of `path` replaces: the file a symbolic link points to."""
    return os.path.realpath(path) if os.path.islink(path) else path


def write_all(fd: int, chunks: Iterable[Line]) -> None:
    """Write every one of `chunks` to file descriptor `fd`, in order, `_IOV_MAX` at a time with
    `os.writev` where the system has it (no copy joins them; a short write goes on where it
    stopped)."""
    pieces = iter(chunks)
    if not hasattr(os, "writev"):
        for chunk in pieces:
            rest = memoryview(chunk)
            while rest:
                rest = rest[os.write(fd, rest) :]
        return
    while batch := list(itertools.islice(pieces, _IOV_MAX)):
        written = os.writev(fd, batch)
        if written < sum(map(len, batch)):  # a short write: the rest of this batch, in order
            rest = memoryview(b"".join(batch))[written:]
            while rest:
                rest = rest[os.write(fd, rest) :]


def _open_temp(target: str) -> tuple[int, str]:
    """A new temporary file for `target`, readable by its owner only until it is complete."""
    clear_stale(os.path.dirname(os.path.abspath(target)))
    name = temp_path(target)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(2):
        try:
            fd = os.open(name, flags, 0o600)
        except FileExistsError:
            with _lock:
                busy = name in _mine
            if busy:
                raise
            os.unlink(name)  # left by an earlier process that had this process's id
            continue
        with _lock:
            _mine.add(name)
        return fd, name
    raise FileExistsError(name)


def _finish(fd: int, name: str, target: str, mode: int) -> None:
    """fsync, set `mode`, close and rename the temporary file `name` over `target`."""
    try:
        os.fsync(fd)
        os.fchmod(fd, mode)
    finally:
        os.close(fd)
    os.replace(name, target)


def _forget(name: str) -> None:
    with _lock:
        _mine.discard(name)


def _write_direct(path: str, chunks: Iterable[Line]) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        write_all(fd, chunks)
    finally:
        os.close(fd)


def write(
    path: str, chunks: Iterable[Line], *, mode: int | None = None, narrow: bool = False
) -> None:
    """Replace `path` with `chunks`, atomically; the new file gets permission bits `mode` (default:
    from the umask), or with `narrow` only those of them the file it replaces has too. A symbolic
    link is followed: the file it points to is replaced and the link stays. Raises `OSError` with
    nothing left behind.
    """
    with interrupts.held():
        if _direct(path):
            _write_direct(path, chunks)
            return
        target = _target(path)
        mode = default_mode() if mode is None else mode
        if narrow:
            existing = permission_bits(target)
            mode = mode if existing is None else mode & existing
        _replace(target, mode, lambda fd: write_all(fd, chunks))


def append(path: str, data: bytes, *, mode: int | None = None) -> None:
    """Add `data` to the end of `path` (made when missing, with permission bits `mode`; an existing
    file keeps only those of its bits `mode` has too: a report of a private input never stays
    readable by others), so that a failure leaves the file as it was.

    The old content and the new are written to a temporary file that replaces the old one, under
    an exclusive lock (`flock`) on the file, so that two runs appending at once both keep their
    line and a full disk leaves the old file whole, never a cut line.
    """
    with interrupts.held():
        if _direct(path):
            _write_direct(path, [data])
            return
        target = _target(path)
        while True:
            try:
                old = os.open(target, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            except FileNotFoundError:
                write(target, [data], mode=mode)
                return
            try:
                _lock_file(old)
                status = os.fstat(old)
                try:
                    current = os.stat(target)
                except FileNotFoundError:
                    current = None
                if current is None or (current.st_dev, current.st_ino) != (
                    status.st_dev,
                    status.st_ino,
                ):
                    continue  # another run replaced it meanwhile: lock the new one
                bits = stat.S_IMODE(status.st_mode)
                _append_copy(old, target, data, bits if mode is None else bits & mode)
                return
            finally:
                os.close(old)  # and with it the lock


def _lock_file(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # no advisory locks here: appends of two runs at once may race
        return
    fcntl.flock(fd, fcntl.LOCK_EX)


def _append_copy(old: int, target: str, data: bytes, mode: int) -> None:
    """Write the content of open file `old`, then `data`, to a temporary file that replaces
    `target`."""

    def copy(fd: int) -> None:
        while block := os.read(old, _BLOCK):
            write_all(fd, [block])
        if data:
            write_all(fd, [data])

    _replace(target, mode, copy)


def _replace(target: str, mode: int, fill: Callable[[int], None]) -> None:
    """Have `fill` write a temporary file beside `target`, then rename it over `target` with
    permission bits `mode`; on any failure the temporary file is removed."""
    fd, name = _open_temp(target)
    done = False
    try:
        try:
            fill(fd)
        except BaseException:
            os.close(fd)
            raise
        _finish(fd, name, target, mode)
        done = True
    finally:
        if not done:
            with contextlib.suppress(OSError):
                os.unlink(name)
        _forget(name)
