"""Every command's --help ends with two or more examples, and every option they use is one the
command takes."""

from __future__ import annotations

import re
import shlex

import pytest

from compactcli.cli import COMMANDS
from tests.cli_runner import run


def _examples(help_text: str) -> list[list[str]]:
    block = help_text.split("Examples:", 1)[1].split("\n\n", 2)[1]
    return [shlex.split(line, comments=True) for line in block.splitlines() if line.strip()]


@pytest.mark.parametrize("command", list(COMMANDS))
def test_help_shows_examples_that_use_the_commands_own_options(command: str) -> None:
    shown = run(command, "--help")
    assert shown.exit_code == 0
    examples = _examples(shown.stdout)
    assert len(examples) >= 2, f"fewer than two examples in {command} --help"
    # the options the help lists (in one list, or in panels): the first column of each entry
    listed = [
        line.split("  ", 2)[1] for line in shown.stdout.splitlines() if line.startswith("  -")
    ]
    options = {o for entry in listed for o in re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", entry)}
    assert "--help" in options
    for words in examples:
        segments: list[list[str]] = [[]]  # a pipe example runs several commands
        for word in words:
            if word == "|":
                segments.append([])
            else:
                segments[-1].append(word)
        mine = [s for s in segments if s[1] == command]
        assert mine and all(s[0] == "compactcli" for s in segments), words
        for segment in mine:
            used = {w.split("=", 1)[0] for w in segment[2:] if w.startswith("-") and w != "-"}
            assert used <= options, (command, used - options)
