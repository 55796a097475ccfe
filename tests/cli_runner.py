"""Running the real command line in-process, with standard output and error kept apart; and
reading what a command run on a pseudo-terminal wrote to it (`read_terminal`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache
from typing import Any
from unittest import mock

import typer.testing
from typer.main import get_command
from typer.testing import CliRunner

from compactcli.cli import app


@dataclass(frozen=True)
class Run:
    exit_code: int
    stdout: str
    stderr: str
    stdout_bytes: bytes


@cache
def _command() -> Any:
    """The command line as click runs it, made once per process, as `compactcli` makes it once
    per run: typer's runner makes it anew for every invocation (reading the options of the
    command from its function again, about a quarter of a run on a small file). Click commands
    keep nothing of an invocation; each run gets a context of its own."""
    return get_command(app)


def run(*args: str, input: bytes | str | None = None) -> Run:
    """Invoke `compactcli ARGS...` and capture what it wrote."""
    with mock.patch.object(typer.testing, "_get_command", lambda _: _command()):
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
