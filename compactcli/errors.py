"""Exit codes and the exceptions the library raises.

The library raises only `CompactError` subclasses for conditions a user can act on; each carries
the exit code the command line turns it into and a message that fits on one line. Nothing here
prints or exits.
"""

from __future__ import annotations

from enum import IntEnum
from typing import TypedDict


class ExitCode(IntEnum):
    """Process exit codes, documented in the README."""

    OK = 0
    CHECK_FAILED = 1  # a check failed: invalid transcript, over budget or threshold
    USAGE = 2  # bad options or arguments
    INPUT = 3  # unreadable input: file and line named in the message
    BACKEND = 4  # tokenizer or LLM backend failed
    OUTPUT = 5  # output could not be written (unwritable folder, full disk)
    INTERRUPTED = 130  # Ctrl-C


class CompactError(Exception):
    """Base of every error the library raises on purpose."""

    exit_code: ExitCode = ExitCode.CHECK_FAILED


class InputError(CompactError):
    """A transcript cannot be read: bad JSON, bad UTF-8, wrong record shape, empty, unknown format.

    `str(error)` is `PATH:LINE: MESSAGE` (or `PATH: MESSAGE` when no line applies).
    """

    exit_code = ExitCode.INPUT

    def __init__(self, path: str, line: int | None, message: str) -> None:
        self.path = path
        self.line = line
        self.message = message
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}")


class InvalidFinding(TypedDict):
    """One finding of a refused transcript (`InvalidTranscript.to_dicts()`), as the `--json`
    rows of `compact` and `redact` list it."""

    line: int
    severity: str
    code: str
    message: str


class InvalidTranscript(CompactError):
    """A transcript that fails its format's checks, refused by a command that writes one (or
    one that `--repair` could not make valid); nothing was written.

    `str(error)` is one line, `PATH: MESSAGE`; `findings` are the lines `compactcli validate`
    prints for the file (`PATH:LINE: SEVERITY CODE: MESSAGE`), which the command line prints
    before it, and `to_dicts()` the same as data.
    """

    exit_code = ExitCode.CHECK_FAILED

    def __init__(
        self, path: str, message: str, findings: tuple[tuple[int, str, str, str], ...] = ()
    ) -> None:
        self.path = path
        self.message = message
        self.found = findings  # (line, severity, code, message)
        super().__init__(f"{path}: {message}")

    @property
    def findings(self) -> tuple[str, ...]:
        return tuple(f"{self.path}:{n}: {sev} {code}: {text}" for n, sev, code, text in self.found)

    def to_dicts(self) -> list[InvalidFinding]:
        return [
            {"line": n, "severity": sev, "code": code, "message": text}
            for n, sev, code, text in self.found
        ]


class UsageError(CompactError):
    """Options that cannot work together, or a value out of range that Typer did not catch."""

    exit_code = ExitCode.USAGE


class BackendError(CompactError):
    """The tokenizer or the LLM backend failed."""

    exit_code = ExitCode.BACKEND


class OutputError(CompactError):
    """The output could not be written; the input is untouched and no partial file is left."""

    exit_code = ExitCode.OUTPUT

    @classmethod
    def cannot_write(cls, where: object, error: OSError) -> OutputError:
        """`WHERE: cannot write: REASON` for a failed write to `where` (a path, or `STDOUT`)."""
        return cls(f"{where}: cannot write: {error.strerror or error}")


STDOUT = "<stdout>"
"""How messages name standard output."""
