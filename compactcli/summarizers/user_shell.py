"""Shell commands the user ran themselves (pi's and Claude Code's `!`): what came of each.

`pi_shell(text)` reads pi's `bashExecution` message ("Ran `command`", then what it printed and
its exit status); `printed(text)` reads the record Claude Code writes after a `<bash-input>` one
(`<bash-stdout>...</bash-stdout><bash-stderr>...</bash-stderr>`), which names no command and
carries no exit status. Each gives a `UserShell`: `failed` with the error line (`detail`), or
not. pi's command failed when it was cancelled or exited non-zero; Claude Code's when what it
printed carries an error line (`outcomes.content_error`: `bash: line 1: x: command not found`,
`sudo: a password is required`), since a program may write to standard error and succeed.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from compactcli.error_lines import error_line
from compactcli.lazy_pattern import compile_lazily
from compactcli.outcomes import cleared_error, content_error, exit_code
from compactcli.placeholders import CLEARED_RESULT

__all__ = ["USER_SHELL", "UserShell", "pi_shell", "printed"]

USER_SHELL = "the user's shell"
"""The `tool` of an error a shell command the user ran printed."""


@dataclass(frozen=True, slots=True)
class UserShell:
    command: str  # "" where the record does not name it (Claude Code's output record)
    failed: bool
    detail: str = ""  # the error line of a failed command


def pi_shell(text: str) -> UserShell:
    """pi's `bashExecution` message: the command and its outcome; the error line of a failed
    one is the one prune kept when it cleared the output, else the output's own."""
    first, _, rest = text.partition("\n")
    command = first.removeprefix("Ran `").removesuffix("`")
    failed = "(command cancelled)" in rest[-200:] or (exit_code(rest) or 0) != 0
    detail = ""
    if failed:
        lines = rest.splitlines()
        kept = (cleared_error(line) for line in lines if line.startswith(CLEARED_RESULT))
        detail = next((e for e in kept if e is not None), None) or error_line(rest)
    return UserShell(command, failed, detail)


_PRINTED = compile_lazily(
    r"^\s*<bash-stdout>(.*?)</bash-stdout>\s*<bash-stderr>(.*?)</bash-stderr>\s*$", re.DOTALL
)


def printed(text: str) -> UserShell | None:
    """What Claude Code recorded a user's `!` command printed (None for other text), its `<` and
    `>` written back: failed when its standard error, or its output, carries an error line."""
    found = _PRINTED.match(text)
    if found is None:
        return None
    said = html.unescape(f"{found.group(2)}\n{found.group(1)}")  # Claude Code writes `&lt;`
    detail = content_error(said, shell=True)
    return UserShell("", bool(detail), detail)
