"""The facts a summary is built on, extracted from the records themselves.

`Facts` is what survives any summary: the goal, every user message (trimmed), the user's
constraints, files read and modified, commands and their outcomes, errors and whether a later
step resolved them, decisions, pending asks and open todo items. The extractive summarizer
renders them; the LLM summarizer is given them as ground truth and has what it dropped appended.
File lists are cumulative across compactions (`merge`).

`extract_facts(messages, previous=None)` reads them from message views (any format), in order:

- **User messages**: the text a person typed (`compactcli.user_text`). Injected text is left out:
  Claude Code meta text (IDE selections, system reminders, command caveats, local command output,
  skill bodies, interrupt markers, task notifications), Codex context (`AGENTS.md` instructions,
  `<environment_context>`), and compaction summaries. A Claude Code slash command keeps its name
  and arguments; a queued prompt counts; the reason a user gave when rejecting a tool call counts.
  A shell command the user ran (pi `!`, Claude Code `<bash-input>`) is a command, not a message.
- **Goal**: the first user message. **Constraints**: user sentences that set a rule or a
  preference (don't, do not, never, must, always, only, without, instead, avoid, prefer, make
  sure, use X...), and also a user sentence that gives a setting another value than an earlier
  one did (`KEY=value`, `--flag=value`, `host:port`, "the X is Y" with a number or a quoted
  value: `setting_values`), with or without a cue word; the earlier sentence then becomes a
  constraint too, so the summary can show it next to its replacement (`supersedes`).
  **Decisions**: assistant text sentences (decided, we'll use, instead of, going with, switch
  (X) to, let's use...). Thinking is never read.
- **Files**: from tool call arguments (`compactcli.tools.touched_files`) and, for agents that
  read through the shell, `cat`/`sed -n`/`nl`/`head`/`tail` of a path; a skill's body (Claude
  Code's, or Codex's `<skill>`) counts as a read of its `SKILL.md`. A file counts as modified
  unless its call failed or was rejected (the failure is then an error naming the file).
- **Commands**: shell tool calls (the commands a Codex code-mode script runs, see
  `compactcli.tools.shell_command`) with their outcome from the result: `failed` for an error
  result, a non-zero exit code ("Exit code 1", "Process exited with code 2", "Command exited with
  code 1", `"exit_code": 1`), an aborted run, a traceback, a shell's first line saying it could
  not run the command ("bash: line 1: jq: command not found"), or a Codex code-mode script that
  reports "Script failed"; `ok` for a zero exit code or a result without any of those;
  `rejected` when the user refused the call; `unknown` without a result. A Codex command still
  running when its result came (a code-mode script's cell, a unified-exec session) takes its
  outcome from the result of the later `wait` or `write_stdin` call that polls it. A command run
  several times is listed once, at its last run, with its last outcome.
- **Errors**: the distinctive line of every failed result (a line that starts as an error
  does: an exception class and message, `Error:`, `error[...]:`, FAIL, a panic; then other error
  words, never on a passing test's line), with the tool and the path or command it came from;
  `resolved` once a later call on the same path or command succeeds. A result the prune stage
  cleared is failed when its placeholder kept an error line (`cleared_error`), with that line.
- **Identifiers**: names to keep verbatim, from user and assistant text (`identifiers`): a
  commit (a 7-40 digit hex id after "commit", "sha" or "revision", and `git commit`'s own
  `[branch abc1234]` line), a pull request or issue number (`#123`, "PR 123"; never a colour
  such as `#333` or `#112233`), a tracker ticket (`ABC-123`), a branch (after "branch", with a
  `/`, `-`, `_`, `.` or a digit in its name, or main, master, develop, trunk), a URL, a local
  port (`localhost:3000`, "port 8080"), a version (`pkg@1.2.3`, `group:artifact:2.6.0`, "Spring
  Boot 3.3.4"); and the names an edit defines (classes, functions, components, types:
  `carriers.created_names`). Each once, at its last mention.
- **Pending asks**: the user messages after the last assistant text, and questions the user
  asked that got no assistant text before the next user message. **Todos**: the open items
  (pending, in progress) of the latest todo list (Claude Code `TodoWrite`, Codex
  `update_plan`, `todowrite`-style tools, pi's `todo` tool).

With `previous` (the facts of an earlier compaction), lists carry over: earlier items first, new
ones after, duplicates once; earlier errors are marked resolved by later successes; earlier
pending asks stay pending only while no assistant text follows; the todo list is the latest one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from compactcli.lazy_pattern import compile_lazily
from compactcli.redact import redact
from compactcli.summarizers import carriers
from compactcli.tools import (
    base_name,
    call_kind,
    poll_target,
    read_only_command,
    shell_command,
    tool_kind,
    touched_files,
)
from compactcli.transcript import Block, Message
from compactcli.user_text import skill_file, squeeze, typed_text


@dataclass(frozen=True, slots=True)
class Command:
    command: str
    outcome: str  # "ok" | "failed" | "rejected" | "unknown"
    detail: str = ""  # a short excerpt of what it printed, for failures
    runs: int = 1  # how many times it ran (the outcome is the last run's)


@dataclass(frozen=True, slots=True)
class ErrorFact:
    text: str  # the distinctive error line
    resolved: bool
    tool: str = ""
    where: str = ""  # the path or command it came from


@dataclass(frozen=True, slots=True)
class Facts:
    goal: str = ""
    user_messages: tuple[str, ...] = ()
    constraints: tuple[str, ...] = ()
    files_read: tuple[str, ...] = ()
    files_modified: tuple[str, ...] = ()
    commands: tuple[Command, ...] = ()
    errors: tuple[ErrorFact, ...] = ()
    decisions: tuple[str, ...] = ()
    pending: tuple[str, ...] = ()
    todos: tuple[str, ...] = ()
    identifiers: tuple[str, ...] = ()  # "commit 2e45f5f", "#12", "AB-1", "branch x"
    answers: tuple[str, ...] = ()  # the user's words inside tool results (`carriers`)
    changes: tuple[tuple[str, str], ...] = ()  # (path, what changed), in order
    plan: tuple[str, ...] = ()  # the steps of the latest plan the user approved
    reports: tuple[str, ...] = ()  # what each completed turn's last message reported
    last_reply: str = ""  # the assistant's last text: the current state

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Facts:
        return cls(
            goal=str(data.get("goal", "")),
            user_messages=tuple(data.get("user_messages", ())),
            constraints=tuple(data.get("constraints", ())),
            files_read=tuple(data.get("files_read", ())),
            files_modified=tuple(data.get("files_modified", ())),
            commands=tuple(Command(**c) for c in data.get("commands", ())),
            errors=tuple(ErrorFact(**e) for e in data.get("errors", ())),
            decisions=tuple(data.get("decisions", ())),
            pending=tuple(data.get("pending", ())),
            todos=tuple(data.get("todos", ())),
            identifiers=tuple(data.get("identifiers", ())),
            answers=tuple(data.get("answers", ())),
            changes=tuple(
                (str(c[0]), str(c[1]))
                for c in data.get("changes", ())
                if isinstance(c, list | tuple) and len(c) == 2
            ),
            plan=tuple(data.get("plan", ())),
            reports=tuple(data.get("reports", ())),
            last_reply=str(data.get("last_reply", "")),
        )

    def is_empty(self) -> bool:
        return not any(getattr(self, name) for name in self.__slots__)

    def map_text(self, change: Any) -> Facts:
        """A copy with `change(text)` applied to every string (e.g. redaction)."""
        return Facts(
            goal=change(self.goal),
            user_messages=tuple(map(change, self.user_messages)),
            constraints=tuple(map(change, self.constraints)),
            files_read=tuple(map(change, self.files_read)),
            files_modified=tuple(map(change, self.files_modified)),
            commands=tuple(
                replace(c, command=change(c.command), detail=change(c.detail))
                for c in self.commands
            ),
            errors=tuple(
                replace(e, text=change(e.text), where=change(e.where)) for e in self.errors
            ),
            decisions=tuple(map(change, self.decisions)),
            pending=tuple(map(change, self.pending)),
            todos=tuple(map(change, self.todos)),
            identifiers=tuple(map(change, self.identifiers)),
            answers=tuple(map(change, self.answers)),
            changes=tuple((change(path), change(note)) for path, note in self.changes),
            plan=tuple(map(change, self.plan)),
            reports=tuple(map(change, self.reports)),
            last_reply=change(self.last_reply),
        )


# --------------------------------------------------------------------------------------------
# Limits (characters): long enough to keep what matters, short enough to bound the facts.

MESSAGE_CHARS = 6000  # a user message kept in the facts (`condense` beyond that)
REPLY_CHARS = 4000  # the assistant's last message kept in the facts
GOAL_CHARS = 600
SENTENCE_CHARS = 400  # a constraint or a pending question
DECISION_CHARS = 300
ERROR_CHARS = 240
COMMAND_CHARS = 200


def head_tail(text: str, limit: int) -> str:
    """`text` when it fits in `limit` characters, else its head and tail around a marker.

    A text that is cut is redacted first (`compactcli.redact`), whatever the caller's redaction
    setting: a secret the cut fell inside would leave a piece no longer recognisable as one, and a
    value cut off from its label would no longer be known for a secret.
    """
    if len(text) <= limit:
        return text
    text = redact(text)
    if len(text) <= limit:
        return text
    marker = " […] "
    keep = max(limit - len(marker), 2)
    head = keep * 2 // 3
    tail = keep - head
    return text[:head].rstrip() + marker + text[len(text) - tail :].lstrip()


def one_line(text: str) -> str:
    return " ".join(text.split())


CONDENSED_LINE_CHARS = 240
"""The longest line of a long message's middle that `condense` keeps."""


def condense(text: str, limit: int) -> str:
    """`text` when it fits in `limit` characters; else its head, the lines of its middle that
    set a rule or carry an error (a pasted stack trace's exception, a "never do X" in the
    middle of a long brief), and its tail, around markers."""
    if len(text) <= limit:
        return text
    marker = " […] "
    head_end = limit * 2 // 5
    tail_start = len(text) - limit // 5
    newline = text.rfind("\n", head_end // 2, head_end)
    head_end = newline if newline > 0 else head_end
    newline = text.find("\n", tail_start, tail_start + limit // 10)
    tail_start = newline + 1 if newline > 0 else tail_start
    room = limit - head_end - (len(text) - tail_start) - 2 * len(marker)
    picked: list[str] = []
    for line in _pieces(text[head_end:tail_start]):
        if not line or not (_carries_error(line) or _CONSTRAINT.search(line)):
            continue
        line = head_tail(line, CONDENSED_LINE_CHARS)
        if len(line) + 3 > room:
            break
        picked.append(line)
        room -= len(line) + 3
    middle = marker + " … ".join(picked) + marker if picked else marker
    return text[:head_end].rstrip() + middle + text[tail_start:].lstrip()


def _pieces(text: str) -> Iterator[str]:
    """The lines of `text`, a long line in its sentences (dictated text has no line breaks)."""
    for line in text.splitlines():
        line = one_line(line)
        if len(line) <= CONDENSED_LINE_CHARS:
            yield line
        else:
            yield from (part.strip() for part in _SENTENCE_END.split(line))


def _carries_error(line: str) -> bool:
    """Whether a line reads as an error: it starts as one, or names an exception or error code."""
    return bool(_ERROR_HEAD.search(line) or _FAIL_HEAD.search(line) or _ERROR_STRONG.search(line))


# --------------------------------------------------------------------------------------------
# User text: what is injected, what is typed

_REJECTED = "The user doesn't want to proceed with this tool use"
_REJECTION_REASON = compile_lazily(
    r"(?:The user provided the following reason for the rejection|"
    r"To tell you how to proceed, the user said):\s*(.+)",
    re.DOTALL,
)
_QUEUED_TAIL = frozenset({"prompt", "bash", "human", "agent", "system", "task-notification"})


def _queued_prompt(block: Block) -> str | None:
    """The prompt of a Claude Code `queued_command` attachment (its string fields joined)."""
    lines = block.text.split("\n")
    while len(lines) > 1 and lines[-1] in _QUEUED_TAIL:
        lines.pop()
    typed, _ = typed_text("\n".join(lines))
    return typed


# --------------------------------------------------------------------------------------------
# Sentences: constraints, decisions, questions

_FENCE = compile_lazily(r"```.*?(```|$)", re.DOTALL)
_SENTENCE_END = compile_lazily(r"(?<=[.!?])\s+(?=\S)")
_BULLET = compile_lazily(r"^\s*(?:[-*•>]+|\d+[.)])\s+")


class _Cue:
    """A case-blind pattern of lowercase words: `search` runs it case-sensitively on the
    lowercased text when the text is ASCII (the same match, several times faster than a
    case-blind search), else case-blind. Callers read the match's position, not its text."""

    __slots__ = ("_blind", "_lower")

    def __init__(self, source: str) -> None:
        self._blind = compile_lazily(source, re.IGNORECASE)
        self._lower = compile_lazily(source)

    def search(self, text: str) -> re.Match[str] | None:
        if text.isascii():
            return self._lower.search(text.lower())
        return self._blind.search(text)


_CONSTRAINT = _Cue(
    r"\b(?:don'?t|do\s+not|never|must|mustn'?t|always|only|without|instead|"
    r"avoid|prefer|make\s+sure|ensure|shouldn'?t|should\s+not|no\s+need\s+to|not\s+allowed|"
    r"stick\s+(?:to|with)|please\s+use|pls\s+use|keep\s+using|rather\s+than|"
    r"under\s+no\s+circumstances|remember\s+(?:to|that))\b"
)
_CONSTRAINT_START = compile_lazily(
    r"^(?:(?:please|pls|and|also|but|so|then|now|ok|okay|just)[, ]+)*"
    r"(?:use|stick|keep|avoid|leave|skip|no)\b",
    re.IGNORECASE,
)
_DECISION = _Cue(
    r"\b(?:decided|decide\s+to|decision|we'?ll\s+use|we\s+will\s+use|i'?ll\s+use|i\s+will\s+use|"
    r"let'?s\s+use|let\s+us\s+use|instead\s+of|going\s+with|go\s+with|"
    r"switch(?:ed|ing)?\s+(?:(?!to\b)[\w`'./-]+\s+){0,4}?to|"
    r"opt(?:ed|ing)?\s+for|chose|choosing|rather\s+than|will\s+use)\b"
)


def _logical_lines(text: str) -> list[tuple[str, bool]]:
    """Lines of `text` outside fenced code, with hard-wrapped lines joined back together; each
    with whether it is a list item (its marker taken off)."""
    out: list[tuple[str, bool]] = []
    joinable = False
    for raw in _FENCE.sub("\n\n", text).splitlines():
        line = raw.strip()
        if not line:
            joinable = False
            continue
        bullet = _BULLET.match(line)
        body = _BULLET.sub("", line).strip() if bullet else line
        continues = (
            joinable
            and not (bullet and not line.startswith(">"))
            and not line.startswith("#")
            and body[:1].islower()
            and not out[-1][0].endswith((".", "!", "?", ":", ";"))
        )
        if continues:
            out[-1] = (out[-1][0] + " " + body, out[-1][1])
        elif body:
            out.append((body, bool(bullet) and not line.startswith(">")))
        joinable = bool(body) and not body.startswith("#")
    return out


_JSON_VALUE = compile_lazily(r'":\s*["\[{\d]')
_CALL_OR_ASSIGNMENT = compile_lazily(r"\w+\s*[=(]\S")


def _code_like(line: str) -> bool:
    """Whether `line` is code or pasted JSON, not prose: it opens with a bracket, holds `{"`, a
    JSON key and its value (`": "`, `": [`, `": 1`) or an escaped newline, opens with a call or
    an assignment (`x = 1`, `f(x)`), or ends with `;`. Literal parts are tested as substrings
    first, which on a long line is several times faster than one regular expression."""
    return (
        line.startswith(("[", "{", "<", "("))
        or '{"' in line
        or "\\n" in line
        or line.rstrip().endswith(";")
        or ('":' in line and _JSON_VALUE.search(line) is not None)
        or _CALL_OR_ASSIGNMENT.match(line) is not None
    )


LEAD_IN_ITEMS = 6
"""How many list items a sentence that introduces them (ending with `:`) is read with."""
LEAD_IN_ITEM_CHARS = 160
"""The longest list item read with the sentence that introduces it (longer ones are prose)."""


def sentences(text: str, *, lists: bool = False) -> list[str]:
    """The sentences of `text` outside fenced code and pasted JSON, one line each, in order.

    With `lists` (a user's text), a line that ends by introducing a list (`Do not change:`) is
    read with the short items that follow it as one sentence (`Do not change: the Reader
    classes; embedder/base.py`): at most `LEAD_IN_ITEMS` of at most `LEAD_IN_ITEM_CHARS`.
    """
    found: list[str] = []
    lines = _logical_lines(text)
    at = 0
    while at < len(lines):
        line = lines[at][0]
        at += 1
        if _code_like(line):
            continue
        parts = [part.strip() for part in _SENTENCE_END.split(line) if part.strip()]
        if lists and parts and parts[-1].endswith(":"):
            items: list[str] = []
            while at < len(lines) and len(items) < LEAD_IN_ITEMS:
                item, bullet = lines[at]
                if not bullet or len(item) > LEAD_IN_ITEM_CHARS or _code_like(item):
                    break
                items.append(item.rstrip(".;"))
                at += 1
            if items:
                parts[-1] = f"{parts[-1]} {'; '.join(items)}"
        found.extend(parts)
    return found


def _window(sentence: str, match: re.Match[str], limit: int) -> str:
    """`sentence` cut to `limit` characters around `match`, at word boundaries."""
    if len(sentence) <= limit:
        return sentence
    start = max(0, match.start() - limit // 3)
    end = min(len(sentence), start + limit)
    start = max(0, end - limit)
    if start > 0:
        space = sentence.find(" ", start)
        start = space + 1 if 0 <= space < match.start() else start
    if end < len(sentence):
        space = sentence.rfind(" ", match.end(), end)
        end = space if space > 0 else end
    return (
        ("…" if start > 0 else "")
        + sentence[start:end].strip()
        + ("…" if end < len(sentence) else "")
    )


_SHOULD = _Cue(r"\bshould\b")
_CLAUSE = compile_lazily(r"[:;—–]\s+|\s-\s")
_STRONG = _Cue(
    r"\b(?:instead|never|always|must|rather\s+than|please\s+use|stick\s+(?:to|with)|avoid|"
    r"make\s+sure)\b"
)


def constraint_sentences(text: str) -> list[str]:
    """User sentences that set a rule or a preference (questions only with a strong word)."""
    return [found for found in map(_constraint, sentences(text, lists=True)) if found]


def _constraint(sentence: str) -> str | None:
    """`sentence` as a constraint (cut around its cue), or None when it sets no rule (nor does
    a sentence that only introduces what follows it, ending with `:`, read alone)."""
    if sentence.endswith(":"):
        return None
    question = sentence.endswith("?")
    match = (_STRONG if question else _CONSTRAINT).search(sentence)
    if not match and not question:
        match = _SHOULD.search(sentence)
        if not match and (len(sentence.split()) >= 3 or sentence.endswith(".")):
            match = _CONSTRAINT_START.search(sentence)
            clause = _CLAUSE.search(sentence)  # "Change of plan: use port 6543"
            if not match and clause:
                rest = _CONSTRAINT_START.search(sentence[clause.end() :])
                if rest:
                    match = re.compile(re.escape(rest.group(0))).search(sentence, clause.end())
    return _window(one_line(sentence), match, SENTENCE_CHARS) if match else None


def decision_sentences(text: str) -> list[str]:
    out: list[str] = []
    for sentence in sentences(text):
        match = _DECISION.search(sentence)
        if match and not sentence.endswith("?"):
            out.append(_window(one_line(sentence), match, DECISION_CHARS))
    return out


# --------------------------------------------------------------------------------------------
# Settings: values the user gives (KEY=value, host:port, "the X is Y"), and changes to them

_ASSIGNMENT = compile_lazily(
    r"(?<![\w.$/?&=:@-])(--?[A-Za-z][\w-]*|[A-Za-z_][\w-]*)(?<![=!<>])=(?![=\s])"
    r"(\"[^\"]+\"|'[^']+'|[^\s,;`'\"()\[\]{}<>]+)"
)
_HOST_PORT = compile_lazily(
    r"(?<![\w.-])((?:[A-Za-z0-9][A-Za-z0-9-]*\.)+[A-Za-z][A-Za-z0-9-]*|"
    r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+):(\d{2,5})(?!\d|:\d)"
)
_IS_VALUE = compile_lazily(
    r"\b((?:[A-Za-z][\w.-]*\s+){0,2}?[A-Za-z][\w.-]*)\s+(?:is|are)\s+"
    r"(?:now\s+|still\s+|set\s+to\s+|changed\s+to\s+)?"
    r"(`[^`]+`|\"[^\"]+\"|'[^']+'|[^\s,;`'\"]*\d[^\s,;`'\"]*)"
)
# Last labels that make `name.ext:12` a file and line, not a host and port.
_FILE_SUFFIXES = frozenset(
    re.split(
        r"\s+",
        "ts tsx js jsx mjs cjs py pyi rb go rs java kt kts c h cc cpp hpp cs php swift scala md "
        "rst json jsonl yaml yml toml txt log sh bash zsh sql html htm css scss vue svelte lock "
        "cfg ini xml ipynb tf lua ex exs erl dart",
    )
)
_NOT_A_KEY = frozenset(
    re.split(
        r"\s+",
        "the a an our my your their its this that these those it there here which what who "
        "everything something nothing one value",
    )
)
_TRAILING = ".:!?)]}'\""
_IS_ARE = compile_lazily(r"\s(?:is|are)\s")
"""What every match of `_IS_VALUE` holds: found first, it spares most sentences that search."""


def setting_values(sentence: str) -> dict[str, frozenset[str]]:
    """The settings a sentence gives a value, by key: `KEY=value` (and `--flag=value`),
    `host:port` (the host is the key, loopback hosts are not), and "the X is Y" where Y is
    quoted or holds a digit (the last two words of X are the key). Keys are case-folded."""
    found: dict[str, set[str]] = {}

    def add(key: str, value: str) -> None:
        value = value.strip().rstrip(_TRAILING).strip("`'\"")
        if key and value:
            found.setdefault(key.lower(), set()).add(value)

    # each pattern runs only on a sentence holding what all its matches hold
    if "=" in sentence:
        for match in _ASSIGNMENT.finditer(sentence):
            add(match.group(1), match.group(2))
    if ":" in sentence:
        for match in _HOST_PORT.finditer(sentence):
            host = match.group(1).lower()
            last = host.rsplit(".", 1)[-1]
            if host != "localhost" and last not in _FILE_SUFFIXES:
                add(host + ":", match.group(2))
    if _IS_ARE.search(sentence):
        for match in _IS_VALUE.finditer(sentence):
            words = [w for w in match.group(1).lower().split() if w not in _NOT_A_KEY]
            if words and "=" not in match.group(2):
                add("the " + " ".join(words[-2:]), match.group(2))
    return {key: frozenset(values) for key, values in found.items()}


def changes_setting(new: Mapping[str, frozenset[str]], old: Mapping[str, frozenset[str]]) -> bool:
    """Whether `new` gives a key of `old` another value (not merely restating the same one)."""
    return any(
        key in old and bool(values - old[key]) and bool(old[key] - values)
        for key, values in new.items()
    )


_VALUE = compile_lazily(r"`[^`]+`|\"[^\"]+\"|'[^']+'|\b[\w.:/@-]*\d[\w.:/@-]*\b")
_WORD = compile_lazily(r"[a-z][a-z_-]{2,}")
STOP_WORDS = frozenset(  # words too common to say what a sentence is about
    re.split(
        r"\s+",
        "the and for with that this from into use using now then also but not our your you are "
        "was were will should must can could would just please instead only always never don't",
    )
)


def _values(text: str) -> set[str]:
    return {v.strip("`\"'").lower() for v in _VALUE.findall(text)}


def _words(text: str) -> set[str]:
    stripped = _VALUE.sub(" ", text.lower())
    return {w for w in _WORD.findall(stripped) if w not in STOP_WORDS}


def supersedes(new: str, old: str) -> bool:
    """Whether `new` restates `old` with other values: it gives a setting of `old` another
    value (`setting_values`), or it shares most of its words with other numbers or names."""
    if changes_setting(setting_values(new), setting_values(old)):
        return True
    old_values, new_values = _values(old), _values(new)
    if not old_values or not new_values or old_values <= new_values:
        return False
    old_words, new_words = _words(old), _words(new)
    shared = old_words & new_words
    return len(shared) >= 2 and len(shared) * 2 >= min(len(old_words), len(new_words))


# --------------------------------------------------------------------------------------------
# Identifiers

_COMMIT = compile_lazily(
    r"\b(?:commit|sha|revision)s?(?: id| hash)?[\s:`'\"(]+([0-9a-f]{7,40})\b", re.IGNORECASE
)
_GIT_COMMIT_LINE = compile_lazily(
    r"^\[([^\s\]]+)(?: \(root-commit\))? ([0-9a-f]{7,40})\]", re.MULTILINE
)
_NUMBER = compile_lazily(r"(?<![\w&#/])#(\d{1,6})\b(?![\w-])")
_COLOUR_CONTEXT = compile_lazily(r"(?:colou?r|background|fill|stroke|border|:)\s*$", re.IGNORECASE)
_URL = compile_lazily(r"\bhttps?://[^\s<>()\[\]{}`'\"|\\]+")
_PORT = compile_lazily(
    r"\b(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1?\]):(\d{2,5})\b|\bports?\s+(\d{2,5})\b",
    re.IGNORECASE,
)
_VERSION = compile_lazily(
    r"(?<![\w./@-])((?:@?[\w.-]+/)?[A-Za-z][\w.-]*@\^?~?\d+(?:\.\d+)+[\w.-]*|"
    r"[\w.-]+:(?:[\w.-]+:)?\d+\.\d+\.\d+[\w.-]*|"
    r"[A-Z][\w.+-]*(?: [A-Z][\w.+-]*)? v?\d+\.\d+(?:\.\d+)+)\b"
)
_NAMED_NUMBER = compile_lazily(
    r"\b(?:PR|MR|[Pp]ull [Rr]equest|[Mm]erge [Rr]equest|[Ii]ssue)[\s:]+#?(\d{1,7})\b"
)
_TICKET = compile_lazily(r"\b([A-Z][A-Z]{1,9}-\d{2,7})\b")
_NOT_TICKETS = frozenset(  # standards and algorithms named like tickets (UTF-16, SHA-256)
    ("UTF", "ISO", "SHA", "RFC", "ECMA", "IEEE", "CVE", "TLS", "SSL", "HTTP", "AES", "RSA", "MD")
)
_BRANCH = compile_lazily(
    r"\bbranch(?:es)?(?: named| called)?[\s:`'\"]+([A-Za-z0-9][\w./-]*[A-Za-z0-9])", re.IGNORECASE
)
_MAIN_BRANCHES = frozenset(("main", "master", "develop", "trunk"))
_BRANCH_SIGNS = compile_lazily(r"[/_.\d-]")


def named(identifier: str) -> str:
    """What an identifier names: `abc1234` of "commit abc1234 (branch main)", `#12` of "#12"."""
    parts = identifier.split(" ")
    return parts[1] if len(parts) > 1 else parts[0]


def identifiers(text: str) -> list[str]:
    """The identifiers `text` names, in order, as "commit 2e45f5f", "#123", "AB-12" or
    "branch feat/x" (see the module docstring). Each pattern runs only where a plain substring
    test says it can match: most texts name none."""
    found: list[tuple[int, str]] = []
    low = text.lower()
    if "commit" in low or "sha" in low or "revision" in low:
        for match in _COMMIT.finditer(text):
            value = match.group(1)
            if any(c.isdigit() for c in value):
                found.append((match.start(1), f"commit {value}"))
    if text.startswith("[") or "\n[" in text:
        for match in _GIT_COMMIT_LINE.finditer(text):
            found.append((match.start(2), f"commit {match.group(2)} (branch {match.group(1)})"))
    if "#" in text:
        for match in _NUMBER.finditer(text):
            if len(match.group(1)) in (3, 6) and _COLOUR_CONTEXT.search(text, 0, match.start()):
                continue  # a colour (`color: #333`), not an issue
            if len(match.group(1)) == 6:
                continue
            found.append((match.start(), f"#{match.group(1)}"))
    if "://" in text:
        for match in _URL.finditer(text):
            url = match.group(0).rstrip(".,;:!?*_")
            if len(url) > 12:
                found.append((match.start(), url))
    if ":" in text or "port" in low:
        for match in _PORT.finditer(text):
            port = match.group(1) or match.group(2)
            value = match.group(0) if match.group(1) else f"port {port}"
            found.append((match.start(), value))
    if "." in text:
        found.extend((match.start(), match.group(1)) for match in _VERSION.finditer(text))
    if "PR" in text or "MR" in text or "request" in low or "issue" in low:
        found.extend(
            (match.start(), f"#{match.group(1)}") for match in _NAMED_NUMBER.finditer(text)
        )
    if "-" in text:
        for match in _TICKET.finditer(text):
            value = match.group(1)
            if value.split("-", 1)[0] not in _NOT_TICKETS:
                found.append((match.start(1), value))
    if "branch" in low:
        for match in _BRANCH.finditer(text):
            name = match.group(1).rstrip(".")
            if name.lower() in _MAIN_BRANCHES or (
                _BRANCH_SIGNS.search(name) and not name.isdigit()
            ):
                found.append((match.start(1), f"branch {name}"))
    return list(dict.fromkeys(value for _, value in sorted(found)))


def superseded(items: Sequence[str]) -> dict[int, int]:
    """For each superseded item, the later item that replaces it (positions)."""
    found: dict[int, int] = {}
    for i, old in enumerate(items):
        for j in range(len(items) - 1, i, -1):
            if j not in found and supersedes(items[j], old):
                found[i] = j
                break
    return found


def fold_superseded(items: Sequence[str]) -> list[tuple[str, list[str]]]:
    """Items with each superseded one folded into the later item that replaces it: (item, the
    earlier items it replaces)."""
    replaced = superseded(items)
    out: list[tuple[str, list[str]]] = []
    for j, item in enumerate(items):
        if j in replaced:
            continue
        out.append((item, [items[i] for i, k in replaced.items() if k == j]))
    return out


def folded(item: str, olds: Sequence[str]) -> str:
    """`item` with the earlier items it replaces after it, so none reads as current."""
    return item + "".join(f" (replaces earlier: {old})" for old in olds)


# --------------------------------------------------------------------------------------------
# Tool results: outcomes and error lines

_EXIT_CODE = compile_lazily(
    r"(?:Process exited with code|Command exited with code|exited with code|Exit code:?|"
    r"exit code:?|exit status:?)\s*(-?\d+)|\"exit_code\"\s*:\s*(-?\d+)",
)
_ABORTED = compile_lazily(r"^(?:Command aborted|\(command cancelled\)|aborted)\s*$", re.MULTILINE)
_TRACEBACK = "Traceback (most recent call last):"
_SCRIPT_FAILED = "Script failed\n"  # the head of a failed Codex code-mode script's output
_NOT_RUN = compile_lazily(  # what a shell says first when it cannot run the command
    r"\A\s*(?:\S*sh: (?:(?:line )?\d+: )?[^\n:]+: "
    r"(?:(?:command )?not found|No such file or directory|Permission denied)"
    r"|zsh: (?:command not found|no such file or directory|permission denied): \S+)"
)
_NOISE_LINE = compile_lazily(
    r"^(?:Exit code:?\s*-?\d+|Chunk ID:.*|Wall time:.*|Process exited with code.*|"
    r"Command exited with code.*|Original token count:.*|Output:|Process running with.*|"
    r"Script (?:completed|running with cell ID \S+)|Wall time [\d.]+ seconds?|"
    r"\(no output\)|\(Bash completed with no output\)|[>$#]\s.*|```.*|(?!--- FAIL)[-=─━_*]{3,}.*)$"
)
_ERROR_STRONG = compile_lazily(
    r"\b[A-Z][A-Za-z0-9_.]*(?:Error|Exception|Failure|Fault)\b|\berror(?:\[\w+\])?:|"
    r"\bERROR\b|\bE[A-Z]{4,}\b|\bfatal:|\bpanic:|\bFAILED\b|\berror TS\d+|✘|×",
)
_ERROR_WEAK = compile_lazily(
    r"\b(?:error|failed|failure|fails|cannot|can't|could not|couldn't|unable to|not found|"
    r"no such file|denied|refused|invalid|unexpected|undefined|missing|timed? ?out)\b",
    re.IGNORECASE,
)
# A line that is an error by its start: an exception class (with pytest's `E` marker), an
# `Error:` / `error[E0308]:` / `fatal:` / `panic:` line, a test runner's FAIL line, a Rust panic.
_ERROR_HEAD = compile_lazily(
    r"^(?:E\s+)?(?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Failure|Fault)\b(?!\.\w)|"
    r"^(?:Error|error|Fatal|fatal|panic)(?:\[\w+\])?:|^(?:ERROR|FATAL|PANIC)\b|"
    r"^thread '[^']*' panicked"
)
_FAIL_HEAD = compile_lazily(r"^(?:FAIL|FAILED|--- FAIL:|✗|✘|×|●)(?:\s|$)")
# A line that reports success (a passing test), whatever words its test or file name holds.
_PASS_LINE = compile_lazily(r"^(?:✓|✔|√|PASS|PASSED|ok|--- PASS:)(?:\s|$)")
_TAG = compile_lazily(r"</?tool_use_error>")


# What the prune stage writes after the digest of a result that failed: the error line, so a
# cleared failure still says how it failed (to the model, and to `outcome` here).
CLEARED_RESULT = "[Old tool result cleared:"
CLEARED_FAILURE = "; failed: "
_CLEARED_ERROR = compile_lazily(r"sha256:[0-9a-f]{64}" + re.escape(CLEARED_FAILURE) + r"(.+)\]\Z")


CLEARED_SOFT = "; printed an error: "
_CLEARED_SOFT = compile_lazily(r"sha256:[0-9a-f]{64}" + re.escape(CLEARED_SOFT) + r"(.+)\]\Z")


def cleared_error(text: str) -> str | None:
    """The error line a prune placeholder kept for a result that failed; None otherwise."""
    if not text.startswith(CLEARED_RESULT):
        return None
    match = _CLEARED_ERROR.search(text)
    return match.group(1) if match else None


def cleared_soft_error(text: str) -> str | None:
    """The error line a prune placeholder kept for a result that did not fail but printed an
    error (`content_error`); None otherwise."""
    if not text.startswith(CLEARED_RESULT):
        return None
    match = _CLEARED_SOFT.search(text)
    return match.group(1) if match else None


@dataclass(frozen=True, slots=True)
class Outcome:
    status: str  # "ok" | "failed" | "rejected"
    error: str = ""  # the distinctive error line, for a failure
    reason: str = ""  # what the user said when rejecting the call


def exit_code(text: str) -> int | None:
    """The exit code a shell result reports near its start or end, if any."""
    for part in (text[:400], text[-300:]):
        match = _EXIT_CODE.search(part) if "xit" in part else None  # in every form it takes
        if match:
            return int(match.group(1) or match.group(2))
    return None


def error_line(text: str) -> str:
    """The most distinctive error line of a failed result (exception, `error:` line, ...)."""
    text = _TAG.sub("", text)
    lines = [one_line(line) for line in text.splitlines()]
    kept = [line for line in lines if line and not _NOISE_LINE.match(line)]
    if not kept:  # nothing but the exit code: that is the error
        exits = [line for line in lines if _EXIT_CODE.search(line)]
        return head_tail((exits or [line for line in lines if line] or [""])[0], ERROR_CHARS)
    lines = kept
    if _TRACEBACK in text:  # the exception line is the last unindented line of the traceback
        tail = text[text.rfind(_TRACEBACK) :].splitlines()
        for raw in reversed(tail):
            if raw and not raw[0].isspace() and not raw.startswith(_TRACEBACK):
                return head_tail(one_line(raw), ERROR_CHARS)
    short = [line for line in lines if len(line) <= 2 * ERROR_CHARS] or lines
    failing = [line for line in short if not _PASS_LINE.search(line)]
    for pattern in (_ERROR_HEAD, _FAIL_HEAD, _ERROR_STRONG, _ERROR_WEAK):
        for at, line in enumerate(failing):
            if pattern.search(line):
                return head_tail(_unwrapped(line, failing[at + 1 : at + 3]), ERROR_CHARS)
    return head_tail((failing or short)[-1], ERROR_CHARS)  # errors come last


_WRAPPER = compile_lazily(
    r"^(?:[\w ]{0,30}(?:error|Error|ERROR|exception|Exception|failed|Failed|FAILED)|"
    r"npm ERR! code \w+|Traceback.*)\s*:?$"
)


def _unwrapped(line: str, following: Sequence[str]) -> str:
    """An error line that only announces the error (`Script error:`, `Error:`, `npm ERR! code
    E404`) joined with the line after it, which holds the message."""
    if _WRAPPER.match(line) and following:
        return f"{line} {following[0]}"
    return line


_SOFT_ERROR = compile_lazily(
    r"^(?:npm ERR!|error TS\d+|.*\berror TS\d+:|Script error\b|Uncaught\b|Unhandled\b)|"
    r"\bFailed to [a-z]|\b(?:ENOENT|EACCES|EADDRINUSE|ECONNREFUSED)\b"
)
SOFT_LINES = 5
"""How many first lines of a tool result that is not a shell's are read for an error."""
_NO_MATCH_PROGRAMS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "diff", "cmp"})


def content_error(text: str, *, shell: bool) -> str:
    """The error line an output carries although its call did not fail ('' when none): an
    exception, an `Error:`/`error[...]`/`fatal:` line, a FAIL line, `npm ERR!`, a TypeScript
    error, a code-mode `Script error:`; in a shell's output anywhere, in another tool's output
    only in its first lines (`SOFT_LINES`)."""
    text = _TAG.sub("", text)
    if shell and _TRACEBACK in text:
        return error_line(text)
    lines = [
        one_line(line) for line in (text.splitlines() if shell else text.splitlines()[:SOFT_LINES])
    ]
    for at, line in enumerate(lines):
        if not line or len(line) > 4 * ERROR_CHARS or _PASS_LINE.search(line):
            continue
        if _ERROR_HEAD.search(line) or _FAIL_HEAD.search(line) or _SOFT_ERROR.search(line):
            following = [rest for rest in lines[at + 1 : at + 3] if rest]
            return head_tail(_unwrapped(line, following), ERROR_CHARS)
    return ""


def _no_match(command: str, code: int | None, text: str) -> bool:
    """A search that found nothing (`grep`, `rg` exit 1 with no error printed), not a failure."""
    if code != 1 or not command:
        return False
    words = command.strip().split()
    program = next((w.rsplit("/", 1)[-1] for w in words if "=" not in w and w != "cd"), "")
    body = "\n".join(line for line in text.splitlines() if not _NOISE_LINE.match(line.strip()))
    return program in _NO_MATCH_PROGRAMS and not body.strip()


def outcome(block: Block, shell: bool, command: str = "", *, soft: bool = False) -> Outcome:
    """How a tool call went, from its result block. A search that found nothing (`grep` exit 1)
    did not fail. With `soft`, a call that did not fail but whose output carries an error
    (`content_error`) is `ok` with that error line."""
    text = block.text
    if text.startswith(_REJECTED):
        match = _REJECTION_REASON.search(text)
        return Outcome("rejected", reason=match.group(1).strip() if match else "")
    cleared = cleared_error(text)
    if cleared is not None:  # cleared by prune, which kept the error line
        return Outcome("failed", error=cleared)
    cleared = cleared_soft_error(text)
    if cleared is not None:
        return Outcome("ok", error=cleared)
    failed = block.is_error
    if shell and not failed:
        code = exit_code(text)
        failed = (code is not None and code != 0) or bool(_ABORTED.search(text[-200:]))
        failed = failed or text.startswith(_SCRIPT_FAILED)
        if code is None and not failed:
            failed = _TRACEBACK in text or bool(_NOT_RUN.match(text))
    if failed and shell and _no_match(command, exit_code(text), text):
        return Outcome("ok")
    if not failed:
        if soft and not (command and read_only_command(command)):
            return Outcome("ok", error=content_error(text, shell=shell))
        return Outcome("ok")
    return Outcome("failed", error=error_line(text) or "failed")


# --------------------------------------------------------------------------------------------
# Commands and paths

_CD_PREFIX = compile_lazily(r"^(?:cd\s+(?:\"[^\"]*\"|'[^']*'|\S+)\s*(?:&&|;)\s*)+")
_SHELL_WRAP = compile_lazily(r"^(?:/bin/)?(?:ba|z)?sh\s+-l?c\s+")
_PIPE_TAIL = compile_lazily(r"\s*(?:2>&1\s*)?(?:\|\s*(?:head|tail|cat|less)\b[^|]*)+$")
_REDIRECT = compile_lazily(r"\s+2>&1\b")
_READ_COMMAND = compile_lazily(
    r"(?:^|&&|;|\|\||\n)\s*(?:cat|nl(?:\s+-\w+)*|head(?:\s+-n?\s*\d+)?|tail(?:\s+-n?\s*\d+)?|"
    r"sed\s+-n\s+(?:'[^']*'|\"[^\"]*\"|\S+))\s+([^\s|;&<>$`]+)"
)


def command_text(name: str | None, arguments: Any) -> str:
    """A shell call's command on one line (a `bash -lc` wrapper taken off)."""
    command = shell_command(name, arguments)
    command = _SHELL_WRAP.sub("", command)
    quote = command[:1]
    if len(command) > 1 and quote in "'\"" and command.count(quote) == 2 and command[-1] == quote:
        command = command[1:-1]
    return head_tail(command, COMMAND_CHARS)


_COMMIT_MESSAGE = compile_lazily(
    r"\bgit\s+(?:-C\s+\S+\s+)?commit\b[^\n]*?\s-(?:[a-z]*m)\s+(?:\"((?:[^\"\\]|\\.)*)\"|'([^']*)'|(\S+))"
)


def _raw_command(arguments: Any) -> str:
    """A shell call's command as written (line breaks kept), or ''."""
    if isinstance(arguments, Mapping):
        for key in ("command", "cmd"):
            value = arguments.get(key)
            if isinstance(value, list):
                value = " ".join(v for v in value if isinstance(v, str))
            if isinstance(value, str):
                return value
    return arguments if isinstance(arguments, str) else ""


def commit_message(command: str) -> str | None:
    """The message of a `git commit -m "..."` in a command line (its first line), or None."""
    match = _COMMIT_MESSAGE.search(command)
    if match is None:
        return None
    message = next(group for group in match.groups() if group is not None)
    first = message.replace('\\"', '"').strip().splitlines()
    return head_tail(first[0], COMMAND_CHARS) if first and first[0].strip() else None


def command_key(command: str) -> str:
    """What makes two commands "the same" for resolving an error: no `cd`, pipes to head/tail."""
    key = _CD_PREFIX.sub("", command.strip())
    key = _PIPE_TAIL.sub("", key)
    return _REDIRECT.sub("", key).strip()


def shell_reads(name: str | None, arguments: Any) -> list[str]:
    """Paths a shell command reads with cat / sed -n / nl / head / tail."""
    command = shell_command(name, arguments)
    found: list[str] = []
    for match in _READ_COMMAND.finditer(command):
        path = match.group(1).strip("'\"")
        if path.startswith("-") or path in found:
            continue
        if "/" in path or "." in path:
            found.append(path)
    return found


# --------------------------------------------------------------------------------------------
# Todo lists

_OPEN = frozenset({"pending", "in_progress", "in-progress", "todo", "open", "not_started"})


def _todo_items(name: str, arguments: Any, state: dict[str, tuple[str, str]]) -> bool:
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
            state[key] = (new if isinstance(new, str) else status, text)
            return True
    if action == "clear":
        state.clear()
        return True
    return False


def _open_todos(state: Mapping[str, tuple[str, str]]) -> tuple[str, ...]:
    return tuple(f"[{status}] {text}" for status, text in state.values() if status.lower() in _OPEN)


# --------------------------------------------------------------------------------------------
# Extraction


@dataclass(slots=True)
class _Call:
    name: str
    arguments: Any
    kind: str
    read: tuple[str, ...]
    modified: tuple[str, ...]
    command: str = ""
    notes: tuple[tuple[str, str], ...] = ()  # what an edit changed, per file (`carriers`)


@dataclass(slots=True)
class _State:
    user_messages: list[str] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)
    read: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    commands: dict[str, Command] = field(default_factory=dict)  # by command, in last-run order
    errors: list[ErrorFact] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    todos: dict[str, tuple[str, str]] = field(default_factory=dict)
    todo_seen: bool = False
    answered: bool = False  # the assistant's last act was text (a turn that completed)
    completed_turn: bool = False  # some turn completed in these messages
    since_answer: list[str] = field(default_factory=list)  # user messages not answered yet
    names: dict[str, None] = field(default_factory=dict)  # identifiers, by last mention
    # the user's sentences that gave a setting a value: key -> [(sentence, its values)]
    settings: dict[str, list[tuple[str, frozenset[str]]]] = field(default_factory=dict)
    # commands still running when their result came (Codex), by what a later call names them
    running: dict[tuple[str, str], _Call] = field(default_factory=dict)
    answers: list[str] = field(default_factory=list)
    changes: dict[tuple[str, str], None] = field(default_factory=dict)
    plan: list[str] = field(default_factory=list)
    reports: list[str] = field(default_factory=list)
    turn_text: str = ""  # the assistant's latest text in the current turn
    last_reply: str = ""

    def add_user(self, text: str) -> None:
        if self.user_messages and one_line(self.user_messages[-1]) == one_line(text):
            return
        self.close_turn()
        self.user_messages.append(condense(text, MESSAGE_CHARS))
        self.since_answer.append(text)
        self.add_identifiers(text)
        for sentence in sentences(text, lists=True):
            self.add_sentence(sentence, _constraint(sentence))
        for line in pasted_errors(text):
            error = ErrorFact(text=line, resolved=False, tool=PASTED)
            if error not in self.errors:
                self.errors.append(error)

    def add_answer(self, line: str) -> None:
        """The user's words from inside a tool result: a rule or a choice, not a new turn."""
        _add_unique(self.answers, line)
        self.add_identifiers(line)

    def add_sentence(self, sentence: str, constraint: str | None) -> None:
        """A user sentence: a constraint when it sets a rule, and also when it gives a setting
        another value than an earlier sentence did (the earlier one becomes a constraint too,
        so that the summary can show it only next to its replacement)."""
        line = constraint or head_tail(one_line(sentence), SENTENCE_CHARS)
        values = setting_values(sentence)
        replaced = [
            earlier
            for key, new in values.items()
            for earlier, old in self.settings.get(key, ())
            if new - old and old - new
        ]
        for earlier in replaced:
            _add_unique(self.constraints, earlier)
        if constraint or replaced:
            _add_unique(self.constraints, line)
        for key, new in values.items():
            self.settings.setdefault(key, []).append((line, new))

    def add_earlier(self, previous: Facts) -> None:
        """The settings an earlier compaction's user messages and constraints gave."""
        for constraint in previous.constraints:
            for key, new in setting_values(constraint).items():
                self.settings.setdefault(key, []).append((constraint, new))
        for message in previous.user_messages:
            for sentence in sentences(message, lists=True):
                line = _constraint(sentence) or head_tail(one_line(sentence), SENTENCE_CHARS)
                for key, new in setting_values(sentence).items():
                    self.settings.setdefault(key, []).append((line, new))

    def add_identifiers(self, text: str) -> None:
        for name in identifiers(text):
            self.names.pop(name, None)
            self.names[name] = None

    def close_turn(self) -> None:
        """The assistant's turn ends here (a user message follows, or the messages end)."""
        if self.answered:
            for sentence in decision_sentences(self.turn_text):
                _add_unique(self.decisions, sentence)
            self.since_answer = []
            self.completed_turn = True
            found = carriers.report(self.turn_text)
            if found:
                _add_unique(self.reports, found)
        self.answered = False

    def add_command(self, command: str, status: str, detail: str = "") -> None:
        """A command's latest run; runs of the same command (`command_key`: another `cd`
        before it, another pipe to `head` after it) are counted as one, shown as the last."""
        key = command_key(command)
        earlier = self.commands.pop(key, None)
        runs = earlier.runs + 1 if earlier else 1
        self.commands[key] = Command(command, status, detail, runs)

    def resolve(self, call: _Call, where: str) -> None:
        """Mark earlier errors resolved by `call`, which succeeded: same command, or same path
        with a tool of the same kind (a successful edit resolves a failed edit or read)."""
        key = command_key(call.command) if call.command else ""
        for i, error in enumerate(self.errors):
            if error.resolved or not where:
                continue
            if key:  # the same command, or a wider run of it (`pytest -q` after `pytest -q x`)
                failed = command_key(error.where)
                same = failed == key or failed.startswith(key + " ")
            else:
                kind = tool_kind(error.tool)
                same = error.where == where and (kind == call.kind or call.kind == "edit")
            if same:
                self.errors[i] = replace(error, resolved=True)


IDENTIFIERS = 60
"""How many identifiers the facts keep (the most recently mentioned)."""
REPORTS = 80
"""How many reports (end of turn, mid-turn, commits) the facts keep (the newest)."""
PASTED = "pasted by the user"
"""The `tool` of an error the user pasted into a message."""
PASTED_ERRORS = 3
"""How many error lines one user message gives at most."""
_ERROR_IN_LINE = compile_lazily(r"\b\w*(?:Error|Exception)\b:|\bERR!|\bFAILED\b|\berror TS\d+")


def pasted_errors(text: str) -> list[str]:
    """Error lines a user pasted into a message: lines that start as an error does, or name an
    exception or error code with its message (`Uncaught TypeError: x is not a function`)."""
    if "rror" not in text and "xception" not in text and "FAIL" not in text and "ERR" not in text:
        return []
    found: list[str] = []
    for raw in text.splitlines():
        line = one_line(raw)
        if len(line) < 8 or line.endswith("?"):
            continue
        if _ERROR_HEAD.search(line) or _FAIL_HEAD.search(line) or _ERROR_IN_LINE.search(line):
            found.append(head_tail(line, ERROR_CHARS))
            if len(found) >= PASTED_ERRORS:
                break
    return found


def _add_unique(items: list[str], item: str) -> None:
    if item and item not in items:
        items.append(item)


def extract_facts(messages: Sequence[Message], previous: Facts | None = None) -> Facts:
    """The facts of `messages` (in conversation order), carried on from `previous`."""
    state = _State()
    if previous is not None:
        state.constraints.extend(previous.constraints)
        state.add_earlier(previous)
        state.read.extend(previous.files_read)
        state.modified.extend(previous.files_modified)
        for command in previous.commands:
            state.commands[command_key(command.command)] = command
        state.errors.extend(previous.errors)
        state.decisions.extend(previous.decisions)
        state.names.update(dict.fromkeys(previous.identifiers))
        state.answers.extend(previous.answers)
        state.changes.update(dict.fromkeys(previous.changes))
        state.plan.extend(previous.plan)
        state.reports.extend(previous.reports)
    calls: dict[str, _Call] = {}
    for message in messages:
        if message.summary:
            continue
        if message.role == "user":
            _read_user(message, state)
        elif message.role == "assistant":
            _read_assistant(message, state, calls)
        for block in message.blocks:
            if block.kind == "tool_result":
                _read_result(block, _polled(calls.pop(block.call_id or "", None), state), state)
    for call in (*calls.values(), *state.running.values()):  # calls left without a result
        _add_paths(state, call, call.modified)
        if call.command:
            state.add_command(call.command, "unknown")
    return _finish(state, previous)


def _read_user(message: Message, state: _State) -> None:
    for block in message.blocks:
        if block.kind == "text":
            if block.type == "bashExecution":  # pi: a shell command the user ran with `!`
                _user_shell(block.text, state)
                continue
            typed, shell = typed_text(block.text)
            skill = skill_file(block.text)
            if skill:
                _add_unique(state.read, skill)
                rules = carriers.skill_rules(block.text)
                if rules is not None:
                    for rule in rules[1]:
                        _add_unique(state.constraints, f"Skill {rules[0]}: {rule}")
            if shell:
                state.add_command(head_tail(one_line(shell), COMMAND_CHARS), "unknown")
            if typed:
                state.add_user(typed)
        elif (
            block.kind == "other" and block.type == "attachment" and block.name == "queued_command"
        ):
            typed = _queued_prompt(block)
            if typed:
                state.add_user(typed)


def _user_shell(text: str, state: _State) -> None:
    first, _, rest = text.partition("\n")
    command = first.removeprefix("Ran `").removesuffix("`")
    failed = "(command cancelled)" in rest[-200:] or (exit_code(rest) or 0) != 0
    detail = ""
    if failed:  # the error line prune kept when it cleared the output, else the output's own
        lines = rest.splitlines()
        kept = (cleared_error(line) for line in lines if line.startswith(CLEARED_RESULT))
        detail = next((e for e in kept if e is not None), None) or error_line(rest)
    state.add_command(
        head_tail(one_line(command), COMMAND_CHARS), "failed" if failed else "ok", detail
    )


def _read_assistant(message: Message, state: _State, calls: dict[str, _Call]) -> None:
    for block in message.blocks:
        if block.kind == "text" and block.text.strip():
            state.answered = True
            state.turn_text = state.last_reply = block.text
            state.add_identifiers(block.text)
            steps = carriers.proposed_plans(block.text)
            if steps:
                state.plan = steps
        elif block.kind == "tool_call":
            if state.answered:  # what the assistant said before this call, mid-turn
                _add_statement(state, state.turn_text)
            state.answered = False  # the turn goes on
            name = block.name or ""
            kind = call_kind(name, block.arguments)
            touched = touched_files(name, block.arguments)
            read = touched.read
            if kind == "shell":
                read = (*read, *shell_reads(name, block.arguments))
            call = _Call(
                name=name,
                arguments=block.arguments,
                kind=kind,
                read=read,
                modified=touched.modified,
                command=command_text(name, block.arguments) if kind == "shell" else "",
                notes=tuple(carriers.edit_notes(name, block.arguments)) if kind == "edit" else (),
            )
            if kind == "edit":
                for created in carriers.created_names(name, block.arguments):
                    state.names.pop(created, None)
                    state.names[created] = None
            for path in read:
                _add_unique(state.read, path)
            if kind == "todo" and _todo_items(name, block.arguments, state.todos):
                state.todo_seen = True
            if block.call_id:
                calls[block.call_id] = call
            else:
                _add_paths(state, call, call.modified)


STATEMENT_CHARS = 120
"""An assistant text said mid-turn (before a call) this long is a decision whole: agents state
their plan and findings there ("Now I'll restructure the roadmap: X, then Y")."""


WHILE_WORKING = "While working: "
"""How a mid-turn statement starts among the reports (`Facts.reports`)."""


def _add_statement(state: _State, text: str) -> None:
    """A mid-turn assistant text: among the reports, in order, when it is long; else its
    decision sentences."""
    line = one_line(_FENCE.sub(" ", text))
    if len(line) >= STATEMENT_CHARS:
        _add_unique(state.reports, WHILE_WORKING + head_tail(line, 2 * SENTENCE_CHARS))
    else:
        for sentence in decision_sentences(text):
            _add_unique(state.decisions, sentence)


def _add_paths(state: _State, call: _Call, paths: Iterable[str]) -> None:
    for path in paths:
        _add_unique(state.modified, path)


_STILL_RUNNING = compile_lazily(
    r"\AScript running with cell ID (\S+)|^Process running with session ID (\S+)", re.MULTILINE
)


def _running(text: str) -> tuple[str, str] | None:
    """What a later call names a command by, when its result says it is still running: a Codex
    code-mode script's cell, or a unified-exec process's session."""
    match = _STILL_RUNNING.search(text, 0, 400) if "running with" in text[:400] else None
    if match is None:
        return None
    return ("cell", match.group(1)) if match.group(1) else ("session", match.group(2))


def _polled(call: _Call | None, state: _State) -> _Call | None:
    """The command that `call` polls for the rest of its output (Codex `wait` on a script's
    cell, `write_stdin` to a process's session), or `call` itself."""
    target = poll_target(call.name, call.arguments) if call is not None else None
    if target is None:
        return call
    return state.running.pop(target, None) or call


def _read_result(block: Block, call: _Call | None, state: _State) -> None:
    if call is None:
        return
    shell = call.kind == "shell"
    running = _running(block.text) if shell else None
    if running is not None:  # its outcome comes with a later call's result, if any
        state.running[running] = call
        return
    for line in carriers.user_answers(call.name, call.arguments, block.text):
        state.add_answer(line)
    for path in call.read:
        found = carriers.instruction_rules(path, block.text) if not block.is_error else None
        if found is not None:
            for rule in found[1]:
                _add_unique(state.constraints, f"{found[0]}: {rule}")
    result = outcome(block, shell, call.command, soft=call.kind in _SOFT_KINDS)
    where = call.command or (call.modified or call.read or ("",))[0]
    if result.status == "rejected":
        if call.command:
            state.add_command(call.command, "rejected")
        if result.reason:
            state.add_user(squeeze(result.reason))
        return
    if result.status == "ok":
        steps = carriers.accepted_plan(call.name, call.arguments, block.text)
        if steps:
            state.plan = steps
        _add_paths(state, call, call.modified)
        state.changes.update(dict.fromkeys(call.notes))
        if result.error:  # it did not fail, but printed an error
            if call.command:
                state.add_command(call.command, "ok", result.error)
            error = ErrorFact(text=result.error, resolved=False, tool=call.name, where=where)
            state.errors = [e for e in state.errors if (e.text, e.where) != (error.text, where)]
            state.errors.append(error)
            return
        state.resolve(call, where)
        message = commit_message(_raw_command(call.arguments)) if "commit" in call.command else None
        if message:  # a milestone: with the agent's reports, not the command log
            made = _GIT_COMMIT_LINE.search(block.text, 0, 2000)
            _add_unique(state.reports, f"Committed{f' {made.group(2)}' if made else ''}: {message}")
        elif call.command and not read_only_command(call.command):
            state.add_command(call.command, "ok")
        if call.command and "commit" in call.command:  # `git commit` names the commit it made
            for match in _GIT_COMMIT_LINE.finditer(block.text, 0, 2000):
                state.add_identifiers(match.group(0))
        return
    if call.command:
        state.add_command(call.command, "failed", result.error)
    if _ABORTED.fullmatch(result.error):  # stopped by the user: not an error of the work
        return
    error = ErrorFact(text=result.error, resolved=False, tool=call.name, where=where)
    state.errors = [e for e in state.errors if (e.text, e.where) != (error.text, error.where)]
    state.errors.append(error)


_SOFT_KINDS = frozenset({"shell", "other", "web"})
"""Kinds of call whose output is read for errors even when the call did not fail."""
_PLACEHOLDER_GOALS = ("[Old tool result", "[Request interrupted", "[Duplicate tool result")


def _goal_of(messages: Sequence[str]) -> str:
    """The first user message that states a task: not a bare slash command (`/clear`), not a
    placeholder; the first message when none does."""
    for message in messages:
        text = message.strip()
        if text.startswith(_PLACEHOLDER_GOALS):
            continue
        if text.startswith("/") and len(text.split()) == 1:
            continue
        return message
    return messages[0] if messages else ""


def _finish(state: _State, previous: Facts | None) -> Facts:
    state.close_turn()
    user_messages = tuple(state.user_messages)
    goal = _goal_of(user_messages)
    pending: list[str] = []
    if previous is not None:
        goal = previous.goal or goal
        user_messages = (*previous.user_messages, *user_messages)
        if not state.completed_turn:
            pending.extend(previous.pending)
    for text in state.since_answer:
        _add_unique(pending, condense(squeeze(text), MESSAGE_CHARS))
    todos: tuple[str, ...]
    if state.todo_seen:
        todos = _open_todos(state.todos)
    else:
        todos = previous.todos if previous is not None else ()
    return Facts(
        goal=goal,
        user_messages=user_messages,
        constraints=tuple(state.constraints),
        files_read=tuple(state.read),
        files_modified=tuple(state.modified),
        commands=tuple(state.commands.values()),
        errors=tuple(state.errors),
        decisions=tuple(state.decisions),
        pending=tuple(pending),
        todos=todos,
        identifiers=tuple(state.names)[-IDENTIFIERS:],
        answers=tuple(state.answers),
        changes=tuple(state.changes),
        plan=tuple(state.plan),
        reports=tuple(state.reports)[-REPORTS:],
        last_reply=condense(state.last_reply, REPLY_CHARS)
        or (previous.last_reply if previous is not None else ""),
    )
