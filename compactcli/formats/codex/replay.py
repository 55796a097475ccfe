"""Codex's resume replay of a rollout's timeline (FORMATS.md §2).

A `Step` is one entry of the timeline in file order: a response item's message, a `compacted`
line, a `thread_rolled_back` event or a `turn_aborted` event. `_apply` gives the history after
one step, as Codex rebuilds it on resume, `is_user_turn` says which user messages are real turns,
and `rolled_back` names the record windows whose turns a rollback removed. Nothing here edits
records.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from compactcli.formats.codex.items import is_contextual
from compactcli.transcript import Message, Transcript

COMPACT_USER_MESSAGE_MAX_TOKENS = 20_000
"""How many tokens of recent user messages a local compaction keeps (compact.rs)."""


@dataclass(frozen=True, slots=True)
class Step:
    """One entry of the replay timeline, in file order.

    kind: `item` (a response item's message), `compacted` (messages = the new history's synthetic
    messages, `replaced` says whether they replace the history or are the rebuilt summary),
    `rollback` (drop `turns` user turns), `aborted` (a `turn_aborted` event).
    """

    kind: Literal["item", "compacted", "rollback", "aborted"]
    index: int
    messages: tuple[Message, ...] = ()
    replaced: bool = False
    turns: int = 0


def is_user_turn(message: Message) -> bool:
    """A real user message: Codex's user-turn boundary, a user message that is neither a summary nor
    injected context.
    """
    if message.role != "user" or message.summary:
        return False
    texts = [b.text for b in message.blocks if b.kind == "text"]
    return not any(is_contextual(text) for text in texts)


def _is_aborted_marker(message: Message) -> bool:
    return message.role == "user" and message.text.lstrip().lower().startswith("<turn_aborted>")


def _apply(history: list[Message], step: Step) -> list[Message]:
    """The history after one timeline step (Codex's resume replay): an item is appended; a
    `compacted` line with `replacement_history` replaces the history with its messages, one
    without it rebuilds it (`_rebuild`); a rollback drops its last `num_turns` user turns, from
    the newest real user message on.
    """
    if step.kind == "item":
        history.append(step.messages[0])
        return history
    if step.kind == "compacted":
        if step.replaced:
            return list(step.messages)
        return _rebuild(history, step.messages[0])
    if step.kind == "rollback":
        return _drop_turns(history, step.turns)
    return history


def _rebuild(history: Sequence[Message], summary: Message) -> list[Message]:
    """A compaction without replacement_history (compact.rs `build_compacted_history`): the initial
    context (the messages before the first real user message), the most recent real user messages
    within `COMPACT_USER_MESSAGE_MAX_TOKENS` (counted as UTF-8 bytes / 4, the oldest kept one
    possibly over the budget), then the summary.
    """
    first_turn = next((i for i, m in enumerate(history) if is_user_turn(m)), len(history))
    initial = list(history[:first_turn])
    collected = [m for m in history if is_user_turn(m) or _is_aborted_marker(m)]
    kept: list[Message] = []
    remaining = COMPACT_USER_MESSAGE_MAX_TOKENS
    for message in reversed(collected):
        if remaining == 0:
            break
        tokens = (len(message.text.encode()) + 3) // 4
        kept.append(message)  # a message over the budget is kept truncated by Codex
        if tokens > remaining:
            break
        remaining -= tokens
    kept.reverse()
    return [*initial, *kept, summary]


def _drop_turns(history: list[Message], turns: int) -> list[Message]:
    positions = [i for i, m in enumerate(history) if is_user_turn(m)]
    if not positions:
        return history
    cut = positions[0] if turns >= len(positions) else positions[len(positions) - turns]
    return history[:cut]


def has_rollback(transcript: Transcript) -> bool:
    """Whether any record is a `thread_rolled_back` event."""
    for _, record in transcript.objects():
        payload = record.raw.get("payload")
        if isinstance(payload, dict) and payload.get("type") == "thread_rolled_back":
            return True
    return False


def rolled_back(steps: Sequence[Step]) -> list[tuple[int, int]]:
    """(first dropped record, rollback record) for each rollback: the records in between
    belong to turns the model no longer sees, and so does the usage recorded there."""
    windows: list[tuple[int, int]] = []
    history: list[Message] = []
    for step in steps:
        if step.kind == "rollback":
            kept = _drop_turns(list(history), step.turns)
            if len(kept) < len(history):
                windows.append((history[len(kept)].index, step.index))
        history = _apply(history, step)
    return windows
