"""Ctrl-C around writes: a write that has begun ends whole, and a finished run reports success.

`held()` is a block in which SIGINT is recorded instead of raised and passed on when the block
ends; every file write goes through one (`compactcli.atomic`), so a write is never cut off
half-way by Ctrl-C. `settle()` says that a command's result is in place, after which Ctrl-C no
longer interrupts it, so it writes its reports and exits with its own code. Only a command run
can settle (`begin`, `reset`): the library never changes a program's Ctrl-C on its own.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

__all__ = ["begin", "held", "reset", "settle", "settled"]

_Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None

_state: dict[str, Any] = {
    "depth": 0,  # nested `held` blocks
    "pending": False,  # a SIGINT came while held
    "settled": False,
    "armed": False,  # a command runs: `settle` may act
    "previous": None,  # the handler the outermost `held` replaced
    "before": None,  # the handler `settle` replaced, which `reset` puts back
}
_lock = threading.Lock()


def _record(signum: int, frame: FrameType | None) -> None:
    _state["pending"] = True


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def held(active: bool = True) -> Iterator[None]:
    """SIGINT waits while inside; nothing is held unless `active`.

    SIGINT is recorded instead of raised, in the main thread (elsewhere signals cannot be handled
    and the block does nothing). A write inside either ends with its file renamed into place or
    fails with its temporary file removed. When the outermost block ends, the handler it replaced
    is put back and a SIGINT recorded meanwhile is passed on to it (Python's default raises
    `KeyboardInterrupt`), unless the run has settled.
    """
    if not active or not _main_thread():
        yield
        return
    with _lock:
        if _state["depth"] == 0 and not _state["settled"]:
            _state["previous"] = signal.signal(signal.SIGINT, _record)
            _state["pending"] = False
        _state["depth"] += 1
    try:
        yield
    finally:
        with _lock:
            _state["depth"] -= 1
            outermost = _state["depth"] == 0
            handler: _Handler = _state["previous"]
            pending = bool(_state["pending"]) and outermost and not _state["settled"]
            if outermost and not _state["settled"]:
                signal.signal(signal.SIGINT, handler if handler is not None else signal.SIG_DFL)
                _state["previous"] = None
                _state["pending"] = False
        if pending:
            _pass_on(handler)


def _pass_on(handler: _Handler) -> None:
    """Give a SIGINT recorded while held to the handler it would have reached."""
    if handler == signal.SIG_IGN:
        return
    if callable(handler):
        handler(signal.SIGINT, None)
        return
    raise KeyboardInterrupt


def settle() -> None:
    """The run's result is in place: SIGINT no longer interrupts this process.

    A command of one output calls it right after that output's rename; from then on SIGINT is
    recorded and dropped for the rest of the process, so a Ctrl-C that comes after the output is
    complete reports success, not an interruption. It does so only while a command runs (`begin`,
    which the command line's error boundary calls as a command starts); elsewhere it does
    nothing.
    """
    if not _main_thread():
        return
    with _lock:
        if _state["settled"] or not _state["armed"]:
            return
        _state["settled"] = True
        if _state["depth"] == 0:
            _state["before"] = signal.signal(signal.SIGINT, _record)
        else:
            _state["before"] = _state["previous"]


def settled() -> bool:
    """Whether `settle` was called (and took effect) in this run."""
    return bool(_state["settled"])


def begin() -> None:
    """A command starts: forget an earlier `settle`, and let this run settle."""
    reset()
    if _main_thread():
        _state["armed"] = True


def reset() -> None:
    """Forget `settle`, put back the SIGINT handler it replaced, and let no run settle until the
    next `begin` (main thread only). The command line's error boundary calls it when a command
    run inside another program, such as a test, ends.
    """
    if not _main_thread():
        return
    with _lock:
        if _state["settled"] and _state["depth"] == 0:
            before = _state["before"]
            signal.signal(signal.SIGINT, before if before is not None else signal.SIG_DFL)
        _state.update(settled=False, pending=False, before=None, armed=False)
