"""The end of a command-line process: the work it can leave to the system.

A process that has written its output is about to hand all of its memory back to the system at
once, so freeing a large transcript object by object and tearing the interpreter down module by
module is work with no result. The command line opts in to skipping it (`enable`, then `keep`
for each file's data and `exit_now` at the end); the library never does on its own, and `keep`
and `exit_past` do nothing unless enabled. `exit_now` ends the process with the code it is given,
or 5 (`ExitCode.OUTPUT`) in place of 0 when standard output cannot be written.
`collector_paused` holds off cyclic garbage collection while one transcript is processed,
library or command line alike."""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import sys
import threading
from collections.abc import Iterable, Iterator
from typing import Any, NoReturn

from compactcli.errors import STDOUT, ExitCode, OutputError

__all__ = ["enable", "enabled", "exit_now", "exit_past", "keep", "silence_stdout"]

_state: dict[str, Any] = {"enabled": False, "kept": (), "past_threads": (), "past_handlers": 0}


def enable() -> None:
    """Let `keep` hold objects until the process ends, and `exit_now` skip the interpreter's
    teardown, for the rest of the process (the command line calls it first)."""
    _state["enabled"] = True


def enabled() -> bool:
    return bool(_state["enabled"])


def keep(*objects: Any) -> None:
    """Hold `objects` until the process ends, out of the collector's sight, when enabled (a
    no-op otherwise).

    They are kept referenced in place of what the previous call kept, so a batch frees each
    file's data but the last's when the next file's comes. Every object then tracked by the
    cyclic garbage collector is moved out of its sight (`gc.freeze`), so that no later
    collection walks them either; what the previous call froze is handed back to the collector
    first (`gc.unfreeze`), so a long batch leaves nothing but the last file's data out of it.
    """
    if not _state["enabled"]:
        return
    gc.unfreeze()
    _state["kept"] = objects  # what the previous call kept is freed here
    gc.freeze()


def exit_past(threads: Iterable[threading.Thread], handlers: int) -> None:
    """Let `exit_now` end the process although `threads` still run and `handlers` more exit
    handlers are registered; nothing unless enabled. They are those of a client whose server
    notices the process gone by itself (a Ray driver joined to a running cluster: the cluster
    ends the driver's job when its connection closes, so disconnecting first is work with no
    result)."""
    if not _state["enabled"]:
        return
    _state["past_threads"] = (*_state["past_threads"], *threads)
    _state["past_handlers"] += handlers


def exit_now(code: int) -> NoReturn:
    """End the process with `code`, skipping the interpreter's teardown when that is safe.

    Standard output and standard error are flushed first. When nothing else is left to run at
    exit (no thread but the main one and no exit handler registered, an LLM client may register
    some, apart from those `exit_past` named), the process ends at once (`os._exit`); otherwise
    this raises `SystemExit(code)` as usual. A standard output whose reader went away (`| head`)
    is left unflushed, quietly, as the error boundary leaves it (`compactcli.cli.runner`); one
    that cannot be written for another reason (a full disk) is reported in one line on standard
    error, and a run that would have exited 0 exits 5 (`ExitCode.OUTPUT`). Either way it is
    pointed at /dev/null (`silence_stdout`), so that what it still holds is dropped.
    """
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:  # the reader went away: nothing more to say
        silence_stdout()
    except OSError as error:
        silence_stdout()
        _say(f"error: {OutputError.cannot_write(STDOUT, error)}")
        code = code or int(ExitCode.OUTPUT)
    except ValueError:  # closed
        pass
    try:
        if sys.stderr is not None:
            sys.stderr.flush()
    except (OSError, ValueError):  # nowhere left to say anything
        pass
    main, past = threading.main_thread(), _state["past_threads"]
    others = [t for t in threading.enumerate() if t is not main and t not in past]
    if others or atexit._ncallbacks() > _state["past_handlers"]:
        raise SystemExit(code)
    os._exit(code)


def silence_stdout() -> None:
    """Point standard output at /dev/null, so that what it still holds is dropped and no later
    flush can fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _say(line: str) -> None:
    try:
        if sys.stderr is not None:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()
    except (OSError, ValueError):
        pass


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Hold off automatic cyclic garbage collection inside the block, then restore it.

    A transcript in memory is hundreds of thousands of containers (its parsed JSON and views)
    with no reference cycles among them. Building its views and running the stages allocates
    enough to trigger several full collections, and each one walks every one of those objects
    again: on a large file that is a fifth of the run. Objects are still freed as soon as
    nothing refers to them; only cyclic garbage waits until collection resumes. The collector's
    state on entry is restored on exit (a collector already disabled stays disabled).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
