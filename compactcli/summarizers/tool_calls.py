"""What the facts read from the arguments of a tool call, whatever the agent.

For a shell call: its command on one line (`command_text`, at most `COMMAND_CHARS`, a `bash -lc`
wrapper taken off) and as written (`raw_command`), what makes two runs of a command the same
(`command_key`: no leading `cd`, no pipe to `head`/`tail`), and the first line of a `git
commit -m` message (`commit_message`), and the newest commit a `git log` printed
(`head_commit`). For a todo call (Claude Code `TodoWrite`, Codex
`update_plan`, `todowrite`-style tools, pi's `todo` tool, task create/update tools): the todo list
it leaves (`todo_items`, which updates a list kept by id) and that list's open items
(`open_todos`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from compactcli.lazy_pattern import compile_lazily
from compactcli.tools import base_name, read_only_command
from compactcli.trim import head_tail, one_line

if TYPE_CHECKING:  # fact_record reads this module
    from compactcli.summarizers.fact_record import Command

COMMAND_CHARS = 200

_CD_PREFIX = compile_lazily(r"^(?:cd\s+(?:\"[^\"]*\"|'[^']*'|\S+)\s*(?:&&|;)\s*)+")
_SHELL_WRAP = compile_lazily(r"^(?:/bin/)?(?:ba|z)?sh\s+-l?c\s+")
_LAST_PIPE = compile_lazily(r"\|((?:[^|'\"]|'[^']*'|\"[^\"]*\")*)$")
_SHOWS_PART = frozenset({"head", "tail", "cat", "less"})
_SEARCHES = frozenset({"grep", "egrep", "rg"})
_FAILURE_WORD = compile_lazily(r"err|fail", re.IGNORECASE)


def _without_filters(key: str) -> str:
    """`key` without the pipes at its end that only show part of what it printed, its failures
    included: `| tail -20`, and a search for its errors (`| grep -E "error|✓"`); not one that
    may hide them (`| grep passed`, `| grep -c ok`, `| grep -v ERROR`)."""
    while (found := _LAST_PIPE.search(key)) is not None:
        words = found.group(1).split()
        program = words[0] if words else ""
        flags = "".join(w[1:] for w in words[1:] if w.startswith("-") and not w.startswith("--"))
        searches_errors = (
            program in _SEARCHES
            and bool(_FAILURE_WORD.search(found.group(1)))
            and not set(flags) & set("cvlq")
        )
        if program not in _SHOWS_PART and not searches_errors:
            break
        key = key[: found.start()].rstrip().removesuffix("2>&1").rstrip()
    return key


_REDIRECT = compile_lazily(r"\s+2>&1\b")
_STDIN_FEED = compile_lazily(
    r"^(?:yes(?:\s+[\w-]+)?|(?:echo(?:\s+-[ne]+)?|printf)\s+(['\"]?)"
    r"(?:(?:y|n|yes|no|\d{1,2})?(?:\\n)?)+\1)\s*\|\s*",
    re.IGNORECASE,
)
"""Answers piped into a command's prompts (`echo "N" | npx create-app`, `printf 'y\\ny\\n' |`,
`yes |`), not data piped into it (`echo $PATH | tr`)."""
_STDIN_TAIL = compile_lazily(
    r"(?:\s*<\s*/dev/null|\s+<<-?\s*(['\"]?)(\w+)\1(?:\s+(?:y|n|yes|no|\d{1,2}))*\s+\2)$",
    re.IGNORECASE,
)
"""Answers given at the end: none (`< /dev/null`), or a here-document of answers only (`<<EOF`,
`N`, `EOF`; not a script given to `python - <<'PY'`)."""


def command_text(command: str) -> str:
    """A shell call's command (its `shell_command`) on one line, at most `COMMAND_CHARS` (a
    `bash -lc` wrapper taken off)."""
    command = _SHELL_WRAP.sub("", command)
    quote = command[:1]
    if len(command) > 1 and quote in "'\"" and command.count(quote) == 2 and command[-1] == quote:
        command = command[1:-1]
    return head_tail(command, COMMAND_CHARS)


_COMMIT_MESSAGE = compile_lazily(
    r"\bgit\s+(?:-C\s+\S+\s+)?commit\b[^\n]*?\s-(?:[a-z]*m)\s+(?:\"((?:[^\"\\]|\\.)*)\"|'([^']*)'|(\S+))"
)


def raw_command(arguments: Any) -> str:
    """A shell call's command as written (line breaks kept), or ''."""
    if isinstance(arguments, Mapping):
        for key in ("command", "cmd"):
            value = arguments.get(key)
            if isinstance(value, list):
                value = " ".join(v for v in value if isinstance(v, str))
            if isinstance(value, str):
                return value
    return arguments if isinstance(arguments, str) else ""


_HEREDOC = compile_lazily(r"\s*\$\(\s*cat\s+<<-?\s*['\"]?\w+['\"]?[ \t]*\n")
"""`$(cat <<'EOF'` opening a message given as a here-document (Claude Code's way)."""


def commit_message(command: str) -> str | None:
    """The message of a `git commit -m "..."` in a command line (its first line, also of a
    here-document `-m "$(cat <<'EOF' ...)"`), or None."""
    match = _COMMIT_MESSAGE.search(command)
    if match is None:
        return None
    message = next(group for group in match.groups() if group is not None)
    heredoc = _HEREDOC.match(message)
    message = message[heredoc.end() :] if heredoc else message
    first = message.replace('\\"', '"').strip().splitlines()
    return head_tail(first[0], COMMAND_CHARS) if first and first[0].strip() else None


_GIT_LOG = compile_lazily(r"(?:^|[;&|]\s*)git\s+(?:-C\s+\S+\s+)?log\b")
_WHOLE_COMMIT = compile_lazily(r"^commit ([0-9a-f]{40})\b")
_COMMIT_FIELD = compile_lazily(r"^(?:Author|Date|Merge|Commit|AuthorDate|CommitDate):")
_ONE_LINE_COMMIT = compile_lazily(r"^\*?\s*([0-9a-f]{7,40})\s+(?:\([^)]*\)\s+)?(\S.*)$")


def head_commit(command: str, output: str) -> str:
    """The newest commit a `git log` command printed (one line each, `--oneline`, `--graph`; or
    whole): its hash and subject, which say where the branch stands ("" for another command or
    output)."""
    if "log" not in command or not _GIT_LOG.search(command):
        return ""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    whole = _WHOLE_COMMIT.match(lines[0]) if lines else None
    if whole:  # `commit <hash>`, its author and date lines, then its message
        subject = next((line for line in lines[1:6] if not _COMMIT_FIELD.match(line)), "")
        return head_tail(f"{whole.group(1)[:7]} {subject}".strip(), COMMAND_CHARS)
    found = _ONE_LINE_COMMIT.match(lines[0]) if lines else None
    return head_tail(f"{found.group(1)} {found.group(2)}", COMMAND_CHARS) if found else ""


_TEST_COUNT = compile_lazily(
    r"\b\d+ (?:passed|failed)\b|\b\d+/\d+ tests? passed\b|\b\d+ tests? collected\b"
)
_RULER = compile_lazily(r"^[=\s]+|[=\s]+$")
TEST_SUMMARY_CHARS = 160


def passed_tests(command: Command) -> bool:
    """Whether `command` ran tests that passed, its answer their count (`tests_counted`): not a
    read of a log that counts them."""
    return (
        command.outcome == "ok"
        and bool(_TEST_COUNT.search(command.detail))
        and not read_only_command(command.command)
    )


def tests_counted(output: str) -> str:
    """The last line of a test run's output that counts its tests (pytest's `11 passed in
    3.64s`, cargo's `test result: ok. 223 passed; 0 failed`, Jest's `Tests: 32 passed, 32
    total`, `531 tests collected`), without pytest's `=` rulers; "" when none does."""
    tail = output[-4000:]
    for line in reversed(tail.splitlines()):
        if _TEST_COUNT.search(line):
            return head_tail(" ".join(_RULER.sub("", line).split()), TEST_SUMMARY_CHARS)
    return ""


def command_key(command: str) -> str:
    """What makes two commands "the same" for resolving an error and counting reruns: no `cd`,
    pipes that show part of its output, its failures included (`_without_filters`), nor the
    answers given to its prompts (piped in, a here-document, none at all: the same command run
    again with other answers is a rerun)."""
    key = _CD_PREFIX.sub("", command.strip())
    key = _STDIN_FEED.sub("", key)
    key = _without_filters(key)
    key = _STDIN_TAIL.sub("", _REDIRECT.sub("", key))
    return _REDIRECT.sub("", key).strip()


# --------------------------------------------------------------------------------------------
# Todo lists

_OPEN = frozenset({"pending", "in_progress", "in-progress", "todo", "open", "not_started"})


def todo_items(name: str, arguments: Any, state: dict[str, tuple[str, str]]) -> bool:
    """Update `state` (id -> (status, text)) from one todo call; False when not understood."""
    if not isinstance(arguments, Mapping):
        return False
    lists = arguments.get("todos")
    if not isinstance(lists, list):
        lists = arguments.get("plan")
    if isinstance(lists, list):  # TodoWrite / todowrite / update_plan: the whole list
        state.clear()
        for position, item in enumerate(lists):
            if not isinstance(item, Mapping):
                continue
            text = item.get("content") or item.get("step") or item.get("text")
            status = item.get("status")
            if isinstance(text, str):
                state[str(item.get("id", position))] = (
                    status if isinstance(status, str) else "pending",
                    one_line(text),
                )
        return True
    action = arguments.get("action")
    base = base_name(name)
    if base in ("taskcreate",) or action in ("add", "create"):
        text = arguments.get("subject") or arguments.get("text") or arguments.get("content")
        if isinstance(text, str):
            state[str(len(state) + 1)] = ("pending", one_line(text))
            return True
    if base in ("taskupdate",) or action in ("update", "toggle"):
        ident = arguments.get("taskId", arguments.get("id"))
        key = str(ident)
        if key in state:
            status, text = state[key]
            new = arguments.get("status")
            if action == "toggle":
                new = "completed" if status in _OPEN else "pending"
            state[key] = (new.strip("\"' ") if isinstance(new, str) else status, text)
            return True
    if action == "clear":
        state.clear()
        return True
    return False


def open_todos(state: Mapping[str, tuple[str, str]]) -> tuple[str, ...]:
    return tuple(f"[{status}] {text}" for status, text in state.values() if status.lower() in _OPEN)
