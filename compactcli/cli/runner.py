"""The error boundary every command runs inside.

`guarded` wraps a command: a `CompactError` becomes one line on standard error and its exit code
(an `InvalidTranscript` is preceded by its findings, as `compactcli validate` prints them);
Ctrl-C exits 130 without a traceback, unless it came once the command's output was in place
(`compactcli.interrupts.settle`: the command then finishes and exits with its own code); a
closed standard output (`| head`) ends quietly, and one with no room left on its disk is one
line and exit 5; any other exception is reported in one line with exit 1, or re-raised when
`COMPACTCLI_TRACEBACK=1`.
"""

from __future__ import annotations

import errno
import functools
import os
import sys
from collections.abc import Callable
from typing import NoReturn, ParamSpec, TypeVar

import typer

from compactcli import lifetime
from compactcli.errors import STDOUT, CompactError, ExitCode, InvalidTranscript, OutputError

P = ParamSpec("P")
R = TypeVar("R")


def guarded(command: Callable[P, R]) -> Callable[P, R]:
    """Run `command` inside the error boundary (keeps its signature for Typer)."""

    @functools.wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        from compactcli import interrupts  # here: `--help` imports no library module

        interrupts.begin()
        try:
            return command(*args, **kwargs)
        except typer.Exit:
            raise
        except CompactError as error:
            if isinstance(error, InvalidTranscript):
                _findings(error.findings)
            _error(str(error))
            raise typer.Exit(int(error.exit_code)) from None
        except KeyboardInterrupt:
            _error("interrupted")
            raise typer.Exit(int(ExitCode.INTERRUPTED)) from None
        except BrokenPipeError:
            lifetime.silence_stdout()
            raise typer.Exit(int(ExitCode.OK)) from None
        except OSError as error:
            if error.errno not in _FULL:
                _unexpected(error)
            # the library names the files it writes: no room left here is standard output's
            lifetime.silence_stdout()
            _error(str(OutputError.cannot_write(STDOUT, error)))
            raise typer.Exit(int(ExitCode.OUTPUT)) from None
        except Exception as error:
            _unexpected(error)
        finally:
            if not lifetime.enabled():  # run inside another program: its Ctrl-C back
                interrupts.reset()
                quieted = sys.modules.get("compactcli.console")
                if quieted is not None:  # and its next command as loud as it asks
                    quieted.set_quiet(False)

    return run


_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
"""The errors of a write that found no room (only writes raise them)."""


def _unexpected(error: Exception) -> NoReturn:
    """One line for an error no layer expected (exit 1), or the traceback on request."""
    if os.environ.get("COMPACTCLI_TRACEBACK") == "1":
        raise error
    _error(
        f"unexpected {type(error).__name__}: {error} "
        "(set COMPACTCLI_TRACEBACK=1 to see the traceback)"
    )
    raise typer.Exit(int(ExitCode.CHECK_FAILED)) from None


def _findings(lines: tuple[str, ...]) -> None:
    """What `validate` found in a refused input, one line each, as `compactcli validate` prints."""
    from compactcli import console

    for line in lines:
        console.say(line)


def usage_error(message: str) -> NoReturn:
    """End the command as a `UsageError` would inside `guarded`: one line, exit 2 (for the
    checks that run while the options are parsed, before the command does)."""
    _error(message)
    raise typer.Exit(int(ExitCode.USAGE))


def _error(message: str) -> None:
    from compactcli import console  # rich, only once there is something to say

    console.error(message)


def stdin_hint(paths: list[str]) -> None:
    """On a terminal with nothing piped, say that standard input is being read."""
    if "-" in paths and sys.stdin.isatty():
        from compactcli import console

        console.say("Reading a transcript from standard input (Ctrl-D to end)...")
