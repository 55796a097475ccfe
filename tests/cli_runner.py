"""Running the real command line in-process, with standard output and error kept apart; and
reading what a command run on a pseudo-terminal wrote to it (`read_terminal`)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from typer.testing import CliRunner

from compactcli.cli import app


@dataclass(frozen=True)
class Run:
    exit_code: int
    stdout: str
    stderr: str
    stdout_bytes: bytes


def run(*args: str, input: bytes | str | None = None) -> Run:
    """Invoke `compactcli ARGS...` and capture what it wrote."""
    result = CliRunner().invoke(app, list(args), input=input, catch_exceptions=False)
    return Run(result.exit_code, result.stdout, result.stderr, result.stdout_bytes)


def read_terminal(leader: int) -> bytes:
    """Everything written to the pseudo-terminal whose leader end is `leader`, until the last
    process holding its other end closes it."""
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 1 << 16)
        except OSError:  # Linux: the other end is closed
            return seen
        if not chunk:
            return seen
        seen += chunk
