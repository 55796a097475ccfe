"""Repairing an Anthropic Messages list so that the API accepts it again (FORMATS.md §3.2, §6).

`repair(transcript, findings)` makes, in one pass (see `compactcli.formats.repairing`), what
Claude Code does to the messages it sends (`normalizeMessagesForAPI`, `ensureToolResultPairing`),
reading the list as the API does (consecutive messages of one role are one turn): malformed
blocks and messages dropped, then every call answered in the next turn and every result answering
a call of the turn before. A list whose first message is not a user message (`first-role`) is not
repaired: nothing in it says what the user asked.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compactcli.errors import InputError
from compactcli.formats.anthropic.dialect import _block, _parse
from compactcli.formats.base import Finding
from compactcli.formats.plain.dialect import parse_records
from compactcli.formats.repairing import Edits, Repair, located
from compactcli.transcript import Message, Transcript

PLACEHOLDER = "[Tool result missing due to internal error]"
"""The content of the result added for a call that has none (Claude Code's)."""


def repair(transcript: Transcript, findings: Sequence[Finding]) -> tuple[Transcript, list[Repair]]:
    """One pass of fixes for `findings`: the `bad-shape` ones (`_bad_shape`) in a pass of their own,
    before the pairing (`_Pairing`).
    """
    edits = Edits(transcript)
    shapes = located(transcript, findings, ("bad-shape",))
    if shapes:
        for index, finding in shapes:
            if edits.claim(index):
                _bad_shape(edits, index, finding)
        return edits.apply(), edits.repairs
    messages, _ = parse_records(transcript, _parse, strict=False)
    if messages:
        _Pairing(edits, messages).run()
    return edits.apply(), edits.repairs


def _bad_shape(edits: Edits, index: int, finding: Finding) -> None:
    """Drop a block of an impossible shape, a `tool_use` in a user message or a `tool_result` in an
    assistant message; a message whose content cannot be read, or that has nothing left, goes.
    """
    raw = edits.raw(index)
    role = raw.get("role")
    content = raw.get("content")
    if not isinstance(content, list):
        edits.drop(index)
        edits.note(index, finding.code, f"dropped the message: {finding.message}")
        return
    kept: list[Any] = []
    gone: list[str] = []
    for position, block in enumerate(content):
        try:
            parsed = _block(block, ("content", position), _fail)
        except InputError as error:
            gone.append(f"block {position} ({error.message})")
            continue
        if role == "user" and parsed.kind == "tool_call":
            gone.append(f"block {position} (a tool_use in a user message)")
        elif role == "assistant" and parsed.kind == "tool_result":
            gone.append(f"block {position} (a tool_result in an assistant message)")
        else:
            kept.append(block)
    if not gone:
        return
    if kept:
        edits.replace(index, {**raw, "content": kept})
        edits.note(index, finding.code, f"dropped {', '.join(gone)}")
    else:
        edits.drop(index)
        edits.note(index, finding.code, f"dropped the message: it held only {', '.join(gone)}")


def _fail(reason: str) -> InputError:
    return InputError("-", None, reason)


def _result(call_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": PLACEHOLDER, "is_error": True}


def _is_result(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "tool_result"


class _Pairing:
    """The pairing fixes, made on copies of the messages' content lists.

    - A `tool_use` with no `tool_result` in the next turn gets one, "[Tool result missing due to
      internal error]" with `is_error`, put among the results at the front of that turn (in a new
      user message when the list ends with the call).
    - A `tool_result` that answers no `tool_use` of the turn before (a call made nowhere, or in
      an earlier turn) is dropped, and so is a second result for one call; the call then gets the
      placeholder if it has no other.
    - `result-order`: a turn's results are hoisted to the front of its first message.
    - `duplicate-id`: a `tool_use` whose id an earlier one has is dropped (`dedupe_calls`).
    """

    def __init__(self, edits: Edits, messages: Sequence[Message]) -> None:
        self.edits = edits
        self.messages = messages
        self.content: dict[int, list[Any]] = {}  # record -> its content as fixed
        self.changed: set[int] = set()
        self.made: dict[str, int] = {}  # call id -> the record of its (first) tool_use

    def blocks(self, index: int) -> list[Any]:
        if index not in self.content:
            content = self.edits.raw(index).get("content")
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            self.content[index] = list(content)
        return self.content[index]

    def set_blocks(self, index: int, blocks: list[Any]) -> None:
        self.content[index] = blocks
        self.changed.add(index)

    def run(self) -> None:
        turns: list[list[Message]] = []
        for message in self.messages:
            if turns and turns[-1][0].role == message.role:
                turns[-1].append(message)
            else:
                turns.append([message])
        self.dedupe_calls()
        self.made = {
            str(b.get("id")): m.index
            for m in self.messages
            if m.role == "assistant"
            for b in self.blocks(m.index)
            if isinstance(b, dict) and b.get("type") == "tool_use"
        }
        for position, turn in enumerate(turns):
            if turn[0].role != "user":
                continue
            before = turns[position - 1] if position > 0 else []
            self.answer(turn, before)
        last = turns[-1]
        if last[0].role == "assistant" and turns[0][0].role == "user":
            missing = self.calls(last)
            if missing:
                self.edits.insert_after(
                    last[-1].index, {"role": "user", "content": [_result(c) for c, _, _ in missing]}
                )
                self.note_added(missing, "a new user message at the end")
        for index in sorted(self.changed):
            raw = self.edits.raw(index)
            if self.content[index]:
                self.edits.replace(index, {**raw, "content": self.content[index]})
            else:
                self.edits.drop(index)

    def dedupe_calls(self) -> None:
        seen: dict[str, int] = {}
        for message in self.messages:
            if message.role != "assistant":
                continue
            blocks = self.blocks(message.index)
            kept = []
            for block in blocks:
                call_id = block.get("id") if isinstance(block, dict) else None
                if isinstance(block, dict) and block.get("type") == "tool_use" and call_id in seen:
                    self.edits.note(
                        message.index,
                        "duplicate-id",
                        f"dropped tool_use {call_id}: the one on line "
                        f"{self.edits.line(seen[call_id])} has its id",
                    )
                    continue
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    seen[str(call_id)] = message.index
                kept.append(block)
            if len(kept) != len(blocks):
                self.set_blocks(message.index, kept)

    def calls(self, turn: Sequence[Message]) -> list[tuple[str, str, int]]:
        """(call id, name, record) of the tool_use blocks of an assistant turn."""
        found: list[tuple[str, str, int]] = []
        for message in turn:
            for block in self.blocks(message.index):
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    found.append((str(block.get("id")), str(block.get("name")), message.index))
        return found

    def answer(self, turn: Sequence[Message], before: Sequence[Message]) -> None:
        """Keep the results that answer the turn before (once each, first in the turn), drop
        the others, and answer the calls left without one."""
        calls = {c: (name, i) for c, name, i in self.calls(before)} if before else {}
        made = self.made
        results: list[Any] = []
        rest: dict[int, list[Any]] = {}
        disordered = other = False
        for message in turn:
            index = message.index
            rest[index] = []
            for block in self.blocks(index):
                if not _is_result(block):
                    rest[index].append(block)
                    other = True
                    continue
                disordered = disordered or other
                call_id = block.get("tool_use_id")
                if call_id in calls and all(r.get("tool_use_id") != call_id for r in results):
                    results.append(block)
                    continue
                if call_id in calls:
                    why = ("duplicate-id", f"dropped a second tool_result for {call_id}")
                elif call_id in made:
                    why = (
                        "result-not-adjacent",
                        f"dropped the tool_result for {call_id}: its tool_use (line "
                        f"{self.edits.line(made[call_id])}) is not in the message before",
                    )
                else:
                    why = (
                        "orphan-result",
                        f"dropped the tool_result for {call_id}: no tool_use has its id",
                    )
                self.edits.note(index, *why)
                self.changed.add(index)
        answered = {r.get("tool_use_id") for r in results}
        missing = [(c, name, i) for c, (name, i) in calls.items() if c not in answered]
        if missing:
            results += [_result(c) for c, _, _ in missing]
            self.note_added(missing, f"the user message on line {self.edits.line(turn[0].index)}")
        if disordered:
            self.edits.note(
                turn[0].index,
                "result-order",
                "moved the turn's tool_result blocks to the front, as Claude Code hoists them",
            )
        if not (missing or disordered or any(m.index in self.changed for m in turn)):
            return
        first = turn[0].index
        self.set_blocks(first, results + rest[first])
        for message in turn[1:]:
            self.set_blocks(message.index, rest[message.index])

    def note_added(self, missing: Sequence[tuple[str, str, int]], where: str) -> None:
        for call_id, name, index in missing:
            self.edits.note(
                index,
                "call-unanswered",
                f"added a tool_result for {call_id} ({name}) to {where}: {PLACEHOLDER!r}, as "
                "Claude Code answers a call left without one",
            )
