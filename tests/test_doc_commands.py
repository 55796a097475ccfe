"""The `compactcli` commands that README.md and docs/*.md show in `bash` blocks (recipes that
name the user's own files, a hosted model, a cluster: not run by `tests/test_readme.py`) are
still commands the tool takes: each names a command that exists, and every option it gives is
one of that command's options, with a value where the option takes one. The command is looked
up in the command line's own group, in-process; values are not checked against files or servers."""

from __future__ import annotations

import re
import shlex

import pytest
import typer.main

from compactcli.cli import app
from tests.conftest import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BASH = re.compile(r"```bash\n(.*?)```", re.DOTALL)
_SUBSTITUTION = re.compile(r'"?\$\(([^()]*)\)"?')
_STOP = {"|", "||", "&&", ";", ")", ">", ">>", "2>", "&"}


def commands(text: str) -> list[list[str]]:
    """The argument lists of the `compactcli ...` commands in a bash block's text: lines joined
    at a trailing backslash, comments dropped, each command cut at a pipe, `&&`, `;`, a
    redirection or the end of a `$(...)`."""
    found: list[list[str]] = []
    for line in re.sub(r"\\\n\s*", " ", text).splitlines():
        line = _SUBSTITUTION.sub(r" ( \1 ) ", line)  # a command's output in a word: its own
        lexer = shlex.shlex(line, posix=True, punctuation_chars="|&;()<>")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        words = list(lexer)
        for at, word in enumerate(words):
            if word != "compactcli" and not word.endswith("/compactcli"):
                continue
            args: list[str] = []
            for rest in words[at + 1 :]:
                if rest in _STOP:
                    break
                args.append(rest)
            found.append(args)
    return found


def _shown() -> list[tuple[str, list[str]]]:
    shown = []
    for page in PAGES:
        for block in BASH.findall(page.read_text(encoding="utf-8")):
            shown.extend((page.name, args) for args in commands(block))
    return shown


SHOWN = _shown()


def test_the_pages_show_commands_in_bash_blocks() -> None:
    assert len(SHOWN) >= 15
    names = {args[0] for _, args in SHOWN if args}
    assert {"compact", "estimate", "eval", "summarize"} <= names


def test_commands_are_cut_where_the_shell_ends_them() -> None:
    block = 'cp "$(compactcli hook --pi-extension)" x/\ncompactcli a \\\n  --b 1 | head  # c\n'
    assert commands(block) == [["hook", "--pi-extension"], ["a", "--b", "1"]]


@pytest.mark.parametrize(
    ("page", "args"), SHOWN, ids=[f"{page}: {' '.join(args)}"[:90] for page, args in SHOWN]
)
def test_a_command_shown_in_the_docs_parses(page: str, args: list[str]) -> None:
    group = typer.main.get_command(app)
    name, *rest = args
    context = group.make_context("compactcli", [name], resilient_parsing=True)
    command = group.get_command(context, name)
    assert command is not None, f"{page}: no command {name!r}"
    options = {flag: p for p in command.params for flag in (*p.opts, *p.secondary_opts)}
    options.update({"-h": None, "--help": None})
    words = iter(rest)
    for word in words:
        if word == "--":
            break
        if not word.startswith("-") or word == "-":
            continue
        flag = word.split("=", 1)[0]
        assert flag in options, f"{page}: compactcli {name} has no option {flag}"
        param = options[flag]
        if param is not None and not getattr(param, "is_flag", False) and "=" not in word:
            given = next(words, "--")
            assert not given.startswith("--"), f"{page}: {flag} needs a value in {args}"
