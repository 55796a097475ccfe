"""The errors a session met, and which of them a later step resolved.

`ErrorLedger` holds one `ErrorFact` per error line and place (the path or command it came from;
lines that differ only in their numbers are one), in the order last seen, and marks an error
resolved when a later call succeeds where it failed (`ErrorLedger.resolve`: the same command or
a wider run of it, the commands of a failed chain, the same command mended, or the same path
with a tool of the same kind). `values` gives them, an unresolved error that is only an exit
code said once for the commands that failed with it. Unresolved errors are indexed by
what resolves them, so each successful call of a long session looks at only its few candidates."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TypedDict

from compactcli.outcomes import only_exit_code
from compactcli.summarizers.tool_calls import command_key
from compactcli.tools import and_chain, tool_kind


class ErrorFactDict(TypedDict):
    """`ErrorFact.to_dict()`: one of the `errors` of a boundary's `facts`."""

    text: str
    resolved: bool
    tool: str
    where: str


@dataclass(frozen=True, slots=True)
class ErrorFact:
    """One error the session met: its line, whether a later call resolved it, and where it came
    from (the tool, and the path or command)."""

    text: str  # the distinctive error line
    resolved: bool
    tool: str = ""
    where: str = ""  # the path or command it came from

    def to_dict(self) -> ErrorFactDict:
        return {
            "text": self.text,
            "resolved": self.resolved,
            "tool": self.tool,
            "where": self.where,
        }


ErrorKey = tuple[str, str]  # (line with its numbers as #, where): one error per line and place

_NUMBER = re.compile(r"\d+")


def _key(error: ErrorFact) -> ErrorKey:
    """`error`'s line with its numbers left out (the same failure again, in another process or
    on another port, is the same error), and its place."""
    return (_NUMBER.sub("#", error.text), error.where)


PLACES = 3
"""How many places an unresolved error printed at several is said with (`ErrorLedger.values`)."""
PLACED_BY_ARGUMENT = frozenset({"web", "other"})
"""Kinds of tool whose error, when the call names no command and no file, is placed at its main
argument (a URL, a query): the same tool succeeding there later resolves it, and the same line
printed at several such places is said once (`ErrorLedger.values`)."""

_DISTINCT_CHARS = 20
"""An error line this long (not an exit code alone) is one failure wherever it is printed: when a
command that printed it passes, another command's same line is resolved with it."""


def _distinct(text: str) -> bool:
    """Whether an error line is one failure wherever it is printed (`_DISTINCT_CHARS`)."""
    return len(text) >= _DISTINCT_CHARS and not only_exit_code(text)


_SETUP = frozenset({"source", ".", "export", "set", "cd", "pushd", "mkdir", "chmod", "touch"})
_SETUP_WORDS = (("npm", "pkg", "set"), ("npm", "config", "set"), ("git", "config"))
"""Commands of a chain that only set up the shell or the project for the next (`source
.venv/bin/activate && pytest`, `mkdir -p out && ...`, `npm pkg set type=module && npx hardhat
compile`): not what printed its error, and not run again alone."""


_VERB = re.compile(r"[a-z][a-z-]{2,}")
_RUNNERS = frozenset({"run", "exec", "run-script"})


def _verb(command: str) -> str:
    """What a command of a chain does, as its error line would name it: the subcommand (`push`
    of `git push origin main`, the script of `npm run lint`), else the program (`pytest`); ""
    when it is not a plain word."""
    words = command.split()
    if len(words) > 2 and words[1] in _RUNNERS:
        word = words[2]
    elif len(words) > 1 and not words[1].startswith("-"):
        word = words[1]
    else:
        word = words[0].rsplit("/", 1)[-1] if words else ""
    word = word.lower()
    return word if _VERB.fullmatch(word) else ""


def _named(text: str, parts: set[str]) -> set[str]:
    """Of a failed chain's commands, the one its error line names by what it does (`error:
    failed to push some refs` of `git add -A && git commit -m x && git push`), when exactly one
    is named; else all of them (which printed it is not known)."""
    low = text.lower()
    named = {
        part
        for part in parts
        if (verb := _verb(part)) and re.search(rf"(?<![\w-]){re.escape(verb)}(?![\w-])", low)
    }
    return named if len(named) == 1 else parts


def _sets_up(command: str) -> bool:
    words = tuple(command.split())
    return bool(words) and (words[0] in _SETUP or any(words[: len(w)] == w for w in _SETUP_WORDS))


RETRY_SHARE = 0.8
RETRY_WORDS = 4


def _retried(failed: str, passed: str) -> bool:
    """Whether command `passed` is `failed` run again with a small change, the agent's fix (a
    flag added, an argument mended: `git rm --cached -f x` after `git rm --cached x`, `open(f,
    encoding='utf-8')` after `open(f)`): the same program and subcommand, `RETRY_WORDS` words or
    more each, and `RETRY_SHARE` of the words of the longer in both."""
    old, new = failed.split(), passed.split()
    if min(len(old), len(new)) < RETRY_WORDS or old[0] != new[0] or _verb(failed) != _verb(passed):
        return False
    words, others = set(old), set(new)
    return len(words & others) >= RETRY_SHARE * max(len(words), len(others))


_QUOTING = str.maketrans("", "", "\"'\\")
_LITERAL = re.compile(r" -LiteralPath\b", re.IGNORECASE)


def _loose(key: str) -> str:
    """A command's key without its quotes and backslashes, and PowerShell's `-LiteralPath`
    (which quotes a path's `[` and `]`): run again with its quoting mended (`"a/\\$id.tsx"`
    after `a/$id.tsx`, which the shell expanded; `Get-Content -LiteralPath 'a\\[id]\\b.tsx'`
    after `Get-Content a\\[id]\\b.tsx`, which read a pattern), it is the same command."""
    return _LITERAL.sub("", key).translate(_QUOTING)


class ErrorLedger:
    """The errors found, one per line (numbers aside) and place, in the order last seen, the
    unresolved ones indexed by what resolves them (`resolve`): a long session's every
    successful call looks at its few candidates, not at every error."""

    __slots__ = (
        "_all",
        "_by_line",
        "_by_part",
        "_by_program",
        "_by_where",
        "_failed",
        "_unpassed",
    )

    def __init__(self) -> None:
        self._all: dict[ErrorKey, ErrorFact] = {}
        self._failed: dict[ErrorKey, str] = {}  # an unresolved error's `command_key(where)`
        self._by_program: dict[str, dict[ErrorKey, None]] = {}  # by that key's first word
        self._by_where: dict[str, dict[ErrorKey, None]] = {}
        self._by_line: dict[str, dict[ErrorKey, None]] = {}  # a command's error, by its line
        # an error of a failed `a && b`: the commands of it not seen to succeed since
        self._unpassed: dict[ErrorKey, set[str]] = {}
        self._by_part: dict[str, dict[ErrorKey, None]] = {}

    def values(self) -> Iterable[ErrorFact]:
        """The errors, one line for the unresolved ones that say the same: one that is only an
        exit code (`Command exited with code 28`) and the same line as a later unresolved error
        of another command is said once for all (the commands are listed as failed); one that a
        tool placed by its argument printed at several places (`Fetch failed` for each of six
        URLs), or a line of at least `_DISTINCT_CHARS` one tool printed at several (the same
        `npm error ...` in each of four logs read), is said once, at its latest, with its
        places (`PLACES` at most, the newest)."""
        later: set[str] = set()
        places: dict[tuple[str, str], list[str]] = {}
        kept: list[ErrorFact] = []
        for error in reversed(self._all.values()):
            if error.resolved:
                kept.append(error)
            elif only_exit_code(error.text):
                if error.text not in later:
                    later.add(error.text)
                    kept.append(error)
            elif tool_kind(error.tool) not in PLACED_BY_ARGUMENT and not _distinct(error.text):
                kept.append(error)
            else:
                same = places.setdefault((error.text, error.tool), [])
                same.append(error.where)
                if len(same) == 1:
                    kept.append(error)
        for at, error in enumerate(kept):
            found = places.get((error.text, error.tool), ()) if not error.resolved else ()
            if len(found) > 1:
                shown = [where for where in found[:PLACES] if where]
                more = f" and {len(found) - PLACES} more" if len(found) > PLACES else ""
                kept[at] = replace(error, where="; ".join(reversed(shown)) + more)
        return reversed(kept)

    def put(self, error: ErrorFact) -> None:
        """`error` after the others (an earlier one of its line and place is dropped)."""
        key = _key(error)
        self._forget(key)
        self._all.pop(key, None)
        self._all[key] = error
        self._index(key, error)

    def keep(self, error: ErrorFact) -> None:
        """`error`, unless one of its line and place is there already."""
        key = _key(error)
        if key not in self._all:
            self._all[key] = error
            self._index(key, error)

    def update(self, errors: Iterable[ErrorFact]) -> None:
        """Each of `errors` in place of one of its line and place, else after the others."""
        for error in errors:
            key = _key(error)
            self._forget(key)
            self._all[key] = error
            self._index(key, error)

    def resolve(
        self, key: str, where: str, kind: str, *, exact: bool = False, tool: str = ""
    ) -> None:
        """Mark resolved the errors a call that succeeded resolves: one of command `key` (as
        `command_key` gives it) those of the same command or (unless `exact`) a narrower run of
        it (`pytest -q` after `pytest -q x`); one without a command those at the same `where`
        made by a tool of its `kind` (an edit resolves any; a tool of no known kind resolves
        only its own, `tool`). The error of a failed chain `a &&
        b` is resolved once each of them has succeeded, alone or in another chain; when its line
        names one of them by what it does (`_named`), once that one has. Unless `exact`, so is
        the error of a command that this one runs again with a small change (`_retried`). A
        command's error resolved so resolves the same line (numbers aside, `_DISTINCT_CHARS` or
        more) that another command printed before: its cause is gone."""
        if not where:
            return
        key = _loose(key)
        if key:
            bucket = self._by_program.get(key.split(" ", 1)[0], {})
            found = [
                k
                for k in bucket
                if self._failed[k] == key
                or (not exact and k not in self._unpassed and self._failed[k].startswith(key + " "))
                or (not exact and _retried(self._failed[k], key))
            ]
            for k in self._by_part.pop(key, {}):
                self._unpassed[k].discard(key)
                if not self._unpassed[k]:
                    found.append(k)
            for k in list(found):  # its cause is gone: the same error of another command
                found.extend(self._by_line.get(k[0], {}))
        else:
            found = [
                k
                for k in self._by_where.get(where, {})
                if kind == "edit"
                or (
                    tool_kind(self._all[k].tool) == kind
                    and (kind != "other" or not tool or self._all[k].tool == tool)
                )
            ]
        for k in dict.fromkeys(found):
            self._forget(k)
            self._all[k] = replace(self._all[k], resolved=True)

    def _index(self, key: ErrorKey, error: ErrorFact) -> None:
        if error.resolved:
            return
        failed = self._failed[key] = _loose(command_key(error.where))
        self._by_program.setdefault(failed.split(" ", 1)[0], {})[key] = None
        self._by_where.setdefault(error.where, {})[key] = None
        if failed and _distinct(error.text):
            self._by_line.setdefault(key[0], {})[key] = None
        chain = and_chain(failed) if "&&" in failed else []
        parts = {_loose(command_key(p)) for p in chain if not _sets_up(p)}
        if len(chain) > 1 and parts:
            parts = _named(error.text, parts)
            self._unpassed[key] = parts
            for part in parts:
                self._by_part.setdefault(part, {})[key] = None

    def _forget(self, key: ErrorKey) -> None:
        failed = self._failed.pop(key, None)
        if failed is not None:
            self._by_program[failed.split(" ", 1)[0]].pop(key, None)
            self._by_where[key[1]].pop(key, None)
            self._by_line.get(key[0], {}).pop(key, None)
        for part in self._unpassed.pop(key, ()):
            self._by_part.get(part, {}).pop(key, None)
