"""What `extract_facts` has read, kept for the next head that begins with the same messages.

A fitting loop summarizes the same session with longer and shorter kept tails: each head begins
with the messages of the one before. Within `reading_once()`, `extract_facts` keeps, for each
call, a copy of what it had read at the end of its messages (a `Fold`, before the calls left
without a result are counted and the facts finished); a later call whose messages begin with
those of a fold (the same message objects, the same earlier facts and working folder) starts
from a copy of the longest such fold and reads only the messages after it. The facts are the
same as those read from the start. Outside the block nothing is kept; the folds live in a
context variable, so threads and nested blocks keep their own.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from compactcli.summarizers.facts import Facts
    from compactcli.transcript import Message

KEPT = 4
"""How many folds a block keeps (the newest)."""

_FOLDS: ContextVar[list[Fold] | None] = ContextVar("compactcli_fact_folds", default=None)


@dataclass(frozen=True, slots=True)
class Fold:
    """What `extract_facts` had read at the end of `messages`, from `previous` in `cwd`: its
    state and the calls still waiting for a result (copies, never read into again)."""

    messages: tuple[Message, ...]
    previous: Facts | None
    cwd: str | None
    state: Any
    calls: dict[str, Any]


@contextmanager
def reading_once() -> Iterator[None]:
    """Keep folds for the calls of `extract_facts` made within the block."""
    token = _FOLDS.set([])
    try:
        yield
    finally:
        _FOLDS.reset(token)


def current() -> list[Fold] | None:
    """The folds of the enclosing `reading_once` block; None outside one."""
    return _FOLDS.get()


def keep(folds: list[Fold], fold: Fold) -> None:
    folds[:] = [*folds[-(KEPT - 1) :], fold]


def resumable(
    folds: Sequence[Fold], messages: Sequence[Message], previous: Facts | None, cwd: str | None
) -> Fold | None:
    """The longest fold whose messages begin `messages`, read from the same start."""
    best: Fold | None = None
    for fold in folds:
        n = len(fold.messages)
        if (
            n <= len(messages)
            and (best is None or n > len(best.messages))
            and fold.cwd == cwd
            and (fold.previous is previous or fold.previous == previous)
            and all(map(operator.is_, fold.messages, messages[:n]))
        ):
            best = fold
    return best
