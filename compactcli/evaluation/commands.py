"""How much of a summary goes to commands that only looked: read-only shell commands that succeeded.

`read_only_cost(text, count)` is (tokens of a summary's read-only `ok` command lines, tokens of
the whole text): their quotient is the share of a summary spent on recalling that the agent
looked at something and it worked. `ok_command` reads a summary's command line and `is_read_only`
says, conservatively, whether a shell command only reads. This rule is the measurement's own,
kept apart from the one the summarizer folds read-only commands with
(`compactcli.tools.read_only_command`), so that the metric can see where that rule goes wrong.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable, Sequence

READ_ONLY = frozenset(
    {
        "ls",
        "cat",
        "head",
        "tail",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "ag",
        "wc",
        "pwd",
        "echo",
        "nl",
        "tree",
        "stat",
        "file",
        "which",
        "type",
        "jq",
        "du",
        "df",
        "realpath",
        "readlink",
        "basename",
        "dirname",
        "cut",
        "tr",
        "diff",
        "cmp",
        "printenv",
        "date",
        "whoami",
        "uname",
        "true",
        "column",
        "less",
        "more",
        "cd",
    }
)
"""Commands that read and print, whatever their arguments (unless output is redirected)."""

GIT_READ_ONLY = frozenset(
    {"status", "log", "diff", "show", "blame", "ls-files", "rev-parse", "shortlog", "grep"}
    | {"describe", "reflog", "ls-tree", "cat-file", "whatchanged"}
)
"""`git` subcommands that only read, whatever their arguments."""

_GIT_LISTING: dict[str, frozenset[str]] = {
    "branch": frozenset({"-a", "-r", "-v", "-vv", "-l", "--list", "--show-current", "--all"}),
    "tag": frozenset({"-l", "--list", "-n"}),
    "remote": frozenset({"-v", "--verbose", "show", "get-url"}),
    "stash": frozenset({"list", "show"}),
}
"""`git` subcommands that only read when every argument is one of these (they list)."""

_FIND_ACTIONS = frozenset(
    {"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"}
)
_SHELLS = frozenset({"bash", "sh", "zsh", "dash"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_OPERATOR = re.compile(r"^[();<>|&]+$")
_OK_LINE = re.compile(r"^\s*- `(.+)` \(ok(?:, ran \d+ times)?\)(?:: .*)?$")


def ok_command(line: str) -> str | None:
    """The command of a summary line `` - `COMMAND` (ok) `` or `` - `COMMAND` (ok, ran N times) ``
    (optionally followed by `: detail`); None for another line.
    """
    found = _OK_LINE.match(line)
    return found.group(1) if found else None


def is_read_only(command: str) -> bool:
    """Whether shell `command` only reads.

    Every command of it (split on `|`, `&&`, `||`, `;`, `&`, parentheses and line breaks, after
    `NAME=value` prefixes and `time`, `timeout N`, `bash -c SCRIPT` wrappers) must be one of
    `READ_ONLY` (`ls`, `cat`, `head`, `grep`, `rg`, `wc`, `jq`...), `cd`, `sed` without `-i`,
    `find` without an action that writes or runs something (`-delete`, `-exec`...), `sort`
    without `-o`, `uniq` with at most one file, or a `git` subcommand that only reads
    (`GIT_READ_ONLY`: `status`, `log`, `diff`, `show`... and `branch`, `tag`, `remote`, `stash`
    only when they list); and nothing may be redirected to a file (`>`, `>>`, `&>`; `/dev/null`
    and `2>&1` are fine). Command substitution (`$(...)`, backquotes) and text the shell cannot
    split count as not read-only, and so does a command this does not know.
    """
    text = command.strip()
    if not text or "$(" in text or "`" in text:
        return False
    lexer = shlex.shlex(text.replace("\n", " ; "), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:  # an unclosed quote
        return False
    words: list[str] = []
    seen = False
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if not _OPERATOR.match(token):
            words.append(token)
            i += 1
            continue
        if ">" in token:
            target = tokens[i + 1] if i + 1 < len(tokens) else ""
            if words and words[-1].isdigit():
                words.pop()  # the descriptor of `2>`
            duplicate = token.endswith(">&") and (target.isdigit() or target == "-")
            if not duplicate and target != "/dev/null":
                return False
            i += 2
            continue
        if "<" in token:
            i += 2  # input from a file or a here-document: reading
            continue
        if words:
            if not _reads(words):
                return False
            seen = True
        words = []
        i += 1
    if words:
        if not _reads(words):
            return False
        seen = True
    return seen


def _reads(words: Sequence[str]) -> bool:
    """Whether one simple command (its words, no operators) only reads."""
    words = list(words)
    while words and _ASSIGNMENT.match(words[0]):
        words.pop(0)
    while words and words[0] in ("time", "timeout", "nice", "command"):
        dropped = words.pop(0)
        if dropped == "timeout":
            while words and words[0].startswith("-"):
                words.pop(0)
            if words:
                words.pop(0)  # the duration
    if not words:
        return True
    name, arguments = os.path.basename(words[0]), words[1:]
    if name in _SHELLS:
        flags = [a for a in arguments if a.startswith("-")]
        scripts = [a for a in arguments if not a.startswith("-")]
        if any("c" in flag for flag in flags) and len(scripts) == 1:
            return is_read_only(scripts[0])
        return False
    if name in READ_ONLY:
        return True
    if name == "sed":
        return not any(a == "--in-place" or (a.startswith("-") and "i" in a) for a in arguments)
    if name == "find":
        return not any(a in _FIND_ACTIONS for a in arguments)
    if name == "sort":
        return not any(a.startswith("-o") or a.startswith("--output") for a in arguments)
    if name == "uniq":  # a second file operand is where it writes
        return sum(1 for a in arguments if not a.startswith("-")) <= 1
    if name == "git":
        return _git_reads(arguments)
    return False


def _git_reads(arguments: Sequence[str]) -> bool:
    rest = list(arguments)
    while rest and rest[0].startswith("-"):  # git's own options: -C DIR, --no-pager...
        option = rest.pop(0)
        if option in ("-C", "-c") and rest:
            rest.pop(0)
    if not rest:
        return False
    subcommand, tail = rest[0], rest[1:]
    if subcommand in GIT_READ_ONLY:
        return not any(a.startswith("--output") for a in tail)
    listing = _GIT_LISTING.get(subcommand)
    if listing is None or (subcommand == "stash" and not tail):  # `git stash` alone stashes
        return False
    return all(a in listing for a in tail)


def read_only_cost(text: str, count: Callable[[str], int]) -> tuple[int, int]:
    """(tokens of the read-only `ok` command lines of `text`, tokens of `text`)."""
    if not text:
        return 0, 0
    spent = 0
    for line in text.split("\n"):
        command = ok_command(line)
        if command is not None and is_read_only(command):
            spent += count(line)
    return spent, count(text)
