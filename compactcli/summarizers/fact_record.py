"""The facts a summary is built on, as a record: what `extract_facts` gives and a boundary keeps.

`Facts` holds the goal, every user message (trimmed), the user's constraints, files read and
modified, commands (`Command`: each with its outcome and what it printed), errors and whether a
later step resolved them, decisions, identifiers, pending asks and open todo items, the user's
words from tool results, what changed in each file, the approved plan, the agent's reports and
its last message. `to_dict` and `from_dict` are its JSON form (a boundary's `facts`, the
summary cache); `map_text` applies a change to every string of it (redaction);
`replaced_constraints` and `folded_constraints` pair a constraint with the later one that
replaces it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, TypedDict

from compactcli.summarizers.error_ledger import ErrorFact, ErrorFactDict
from compactcli.summarizers.sentences import fold_superseded, superseded

__all__ = ["Command", "CommandDict", "Facts", "FactsDict"]


class CommandDict(TypedDict):
    """`Command.to_dict()`: one of the `commands` of a `FactsDict`."""

    command: str
    outcome: str
    detail: str
    runs: int


class FactsDict(TypedDict):
    """`Facts.to_dict()`: the facts as a boundary's `facts` and the summary cache write them
    (each `changes` item a `[path, what changed]` pair)."""

    goal: str
    user_messages: list[str]
    constraints: list[str]
    files_read: list[str]
    files_modified: list[str]
    commands: list[CommandDict]
    errors: list[ErrorFactDict]
    decisions: list[str]
    pending: list[str]
    todos: list[str]
    identifiers: list[str]
    answers: list[str]
    changes: list[list[str]]
    plan: list[str]
    reports: list[str]
    last_reply: str
    constraint_turns: list[int]


@dataclass(frozen=True, slots=True)
class Command:
    command: str
    # "ok" | "failed" | "rejected" | "unknown" | PRINTED_ERROR (it did not fail, but its output
    # carries an error: a Codex code-mode script that completed around a failed build)
    outcome: str
    detail: str = ""  # a short excerpt of what it printed: its error, or its one-line answer
    runs: int = 1  # how many times it ran (the outcome is the last run's)

    def to_dict(self) -> CommandDict:
        return {
            "command": self.command,
            "outcome": self.outcome,
            "detail": self.detail,
            "runs": self.runs,
        }


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
    # the user message each constraint came from (numbered from 1; 0: a file's or not known)
    constraint_turns: tuple[int, ...] = ()

    def to_dict(self) -> FactsDict:
        return {
            "goal": self.goal,
            "user_messages": list(self.user_messages),
            "constraints": list(self.constraints),
            "files_read": list(self.files_read),
            "files_modified": list(self.files_modified),
            "commands": [c.to_dict() for c in self.commands],
            "errors": [e.to_dict() for e in self.errors],
            "decisions": list(self.decisions),
            "pending": list(self.pending),
            "todos": list(self.todos),
            "identifiers": list(self.identifiers),
            "answers": list(self.answers),
            "changes": [[path, note] for path, note in self.changes],
            "plan": list(self.plan),
            "reports": list(self.reports),
            "last_reply": self.last_reply,
            "constraint_turns": list(self.constraint_turns),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Facts:
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
            constraint_turns=tuple(
                int(turn) for turn in data.get("constraint_turns", ()) if isinstance(turn, int)
            ),
        )

    def is_empty(self) -> bool:
        return not any(getattr(self, name) for name in self.__slots__)

    def files_only(self) -> bool:
        """Whether these facts hold no more than file lists: what pi records with its own
        compaction, not the facts of a summary of ours."""
        files = ("files_read", "files_modified")
        return not any(getattr(self, name) for name in self.__slots__ if name not in files)

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
            constraint_turns=self.constraint_turns,
        )

    def replaced_constraints(self) -> dict[int, int]:
        """For each constraint a later one replaces, that one (`sentences.superseded`), never
        within one user message: a spec's lines are all in force at once."""
        return superseded(self.constraints, self._turns())

    def folded_constraints(self) -> list[tuple[str, list[str]]]:
        """The constraints, each replaced one folded into its replacement (`fold_superseded`),
        as `replaced_constraints` pairs them."""
        return fold_superseded(self.constraints, self._turns())

    def _turns(self) -> tuple[int, ...] | None:
        turns = self.constraint_turns
        return turns if len(turns) == len(self.constraints) else None
