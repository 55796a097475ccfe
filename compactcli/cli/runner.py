"""The error boundary every command runs inside.

`guarded` wraps a command: a `CompactError` becomes one line on standard error and its exit code;
Ctrl-C exits 130 without a traceback; a closed standard output (`| head`) ends quietly; any other
exception is reported in one line with exit 1, or re-raised when `COMPACTCLI_TRACEBACK=1`.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import typer

from compactcli.errors import CompactError, ExitCode

P = ParamSpec("P")
R = TypeVar("R")


def guarded(command: Callable[P, R]) -> Callable[P, R]:
    """Run `command` inside the error boundary (keeps its signature for Typer)."""

    @functools.wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except typer.Exit:
            raise
        except CompactError as error:
            _error(str(error))
            raise typer.Exit(int(error.exit_code)) from None
        except KeyboardInterrupt:
            _error("interrupted")
            raise typer.Exit(int(ExitCode.INTERRUPTED)) from None
        except BrokenPipeError:
            _silence_stdout()
            raise typer.Exit(int(ExitCode.OK)) from None
        except Exception as error:
            if os.environ.get("COMPACTCLI_TRACEBACK") == "1":
                raise
            _error(
                f"unexpected {type(error).__name__}: {error} "
                "(set COMPACTCLI_TRACEBACK=1 to see the traceback)"
            )
            raise typer.Exit(int(ExitCode.CHECK_FAILED)) from None

    return run


def _error(message: str) -> None:
    from compactcli import console  # rich, only once there is something to say

    console.error(message)


def _silence_stdout() -> None:
    """Point standard output at /dev/null so the interpreter's final flush cannot fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def stdin_hint(paths: list[str]) -> None:
    """On a terminal with nothing piped, say that standard input is being read."""
    if "-" in paths and sys.stdin.isatty():
        from compactcli import console

        console.stderr().print("Reading a transcript from standard input (Ctrl-D to end)...")
