"""The format-free model of a generated coding session: turns, steps, tool calls, planted facts.

A `Session` is a seeded project (`filler.Project`), its `Turn`s and its `Fact`s. A turn is a user
message (optionally with a pasted image) answered by `Step`s, model responses of optional
thinking and text followed by parallel tool `Call`s (a read, edit, write, shell command, search
or todo-list update, with its output and exit code). A `Fact` is a planted fact: the future
probe's category, text and match terms, its `Carrier` (where in the session it sits), the fact
that supersedes it and the round that planted it; turns, steps and calls list the ids of the
facts they carry, so a renderer knows which record carries each. `session_text(turns)` joins
every string of the turns: what the session says, whatever its format. Nothing here draws random
numbers: `scenario` fills these structures and the `render_*` modules write them out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from compactcli.evaluation.filler import Project
from compactcli.evaluation.probes import Category

CallKind = Literal["read", "edit", "write", "bash", "grep", "todo"]
Carrier = Literal["user_text", "assistant_text", "tool_input", "tool_result", "todo", "none"]


@dataclass(slots=True)
class Todo:
    content: str
    status: str  # "pending" | "in_progress" | "completed"
    active: str


@dataclass(slots=True)
class Call:
    kind: CallKind
    path: str = ""
    command: str = ""
    pattern: str = ""
    old: str = ""
    new: str = ""
    content: str = ""
    todos: tuple[Todo, ...] = ()
    output: str = ""
    exit_code: int = 0
    target: str = ""  # a test run's test file
    input_facts: list[str] = field(default_factory=list)
    output_facts: list[str] = field(default_factory=list)

    @property
    def is_error(self) -> bool:
        return self.exit_code != 0

    def chars(self) -> int:
        todos = sum(len(t.content) + 40 for t in self.todos)
        return (
            len(self.path)
            + len(self.command)
            + len(self.pattern)
            + len(self.old)
            + len(self.new)
            + len(self.content)
            + todos
            + len(self.output)
        )


@dataclass(slots=True)
class Step:
    """One model response: optional thinking and text, then parallel tool calls."""

    thinking: str = ""
    text: str = ""
    calls: list[Call] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)  # planted in `text`

    def chars(self) -> int:
        return len(self.thinking) + len(self.text) + sum(c.chars() for c in self.calls)


@dataclass(slots=True)
class Turn:
    """A user message and the model's steps that answer it."""

    user: str
    steps: list[Step]
    image: bool = False
    facts: list[str] = field(default_factory=list)  # planted in `user`

    def chars(self) -> int:
        return len(self.user) + sum(s.chars() for s in self.steps)

    def messages(self) -> int:
        return 1 + sum(1 + 2 * len(s.calls) for s in self.steps)


@dataclass(frozen=True, slots=True)
class Fact:
    """A planted fact: the future probe's content and where it was planted."""

    id: str
    category: Category
    fact: str
    carrier: Carrier
    any_of: tuple[str, ...] = ()
    key_terms: tuple[str, ...] = ()
    mode: str | None = None
    superseded_by: str | None = None
    cycle: int = 0  # the round of new turns that planted it (0: the original session)


@dataclass(slots=True)
class Session:
    """A generated session: its project, turns and facts."""

    seed: int
    project: Project
    turns: list[Turn]
    facts: list[Fact]
    image_png: str = ""
    todos: list[Todo] = field(default_factory=list)  # the todo list after the last turn

    def fact(self, fact_id: str) -> Fact:
        for fact in self.facts:
            if fact.id == fact_id:
                return fact
        raise KeyError(fact_id)


# A 1x1 PNG, base64: small and valid, as agents paste screenshots.
TINY_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42"
    "mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)


def session_text(turns: Sequence[Turn]) -> str:
    """Every string of the session joined (what the format-free content says)."""
    parts: list[str] = []
    for turn in turns:
        parts.append(turn.user)
        for step in turn.steps:
            parts += [step.thinking, step.text]
            for call in step.calls:
                parts += [
                    call.path,
                    call.command,
                    call.pattern,
                    call.old,
                    call.new,
                    call.content,
                    call.output,
                ]
                parts += [t.content for t in call.todos]
    return "\n".join(parts)


__all__ = [
    "TINY_PNG",
    "Call",
    "CallKind",
    "Carrier",
    "Fact",
    "Session",
    "Step",
    "Todo",
    "Turn",
    "session_text",
]
