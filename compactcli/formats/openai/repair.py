"""Repairing an OpenAI chat message list so that the API accepts it again (FORMATS.md §3.1, §6).

`repair(transcript, findings)` makes, in one pass (see `compactcli.formats.repairing`), what an
agent does to a history before it sends it: messages the API cannot read dropped, every tool call
answered in the run of `tool` messages after it, and every `tool` message answering a call of the
assistant message before its run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compactcli.formats.base import Finding
from compactcli.formats.openai.dialect import _parse
from compactcli.formats.plain.dialect import parse_records
from compactcli.formats.repairing import Edits, Repair, located
from compactcli.transcript import Message, Transcript

PLACEHOLDER = "aborted"
"""The content of the tool message added for a call that has none."""


def repair(transcript: Transcript, findings: Sequence[Finding]) -> tuple[Transcript, list[Repair]]:
    """One pass of fixes for `findings`.

    - `bad-shape`: a message the API cannot read is dropped.
    - A tool call with no `tool` message in the run after its assistant message gets one, added
      at the end of that run: `"aborted"`, the output Codex (OpenAI's agent) gives such a call
      (`_close`).
    - A `tool` message that answers no call of the assistant message before its run (a call made
      nowhere, a call of an earlier message, the list's first message) is dropped, and so is a
      second `tool` message for one call (`_result`); the call then gets the placeholder if it
      has no other.
    - A tool call whose id appears a second time in one message is dropped (`_own_duplicates`).

    A call id that a later assistant message reuses (a warning) is left as it is: the results sit
    right after each call, so pairing stays unambiguous.
    """
    edits = Edits(transcript)
    for index, finding in located(transcript, findings, ("bad-shape",)):
        if edits.claim(index):
            edits.drop(index)
            edits.note(index, finding.code, f"dropped the message: {finding.message}")
    messages, _ = parse_records(transcript, _parse, strict=False)
    messages = [m for m in messages if not edits.dropped(m.index)]
    _pairs(edits, messages)
    return edits.apply(), edits.repairs


def _pairs(edits: Edits, messages: Sequence[Message]) -> None:
    made: dict[str, int] = {}  # call id -> the record of the message that made it first
    open_call: Message | None = None
    run_end = -1  # the last record of the open call's run of tool messages
    answered: set[str] = set()
    for message in messages:
        if message.role == "tool":
            _result(edits, message, open_call, answered, made, messages[0])
            if open_call is not None:
                run_end = message.index
            continue
        if open_call is not None:
            _close(edits, open_call, answered, run_end)
        open_call = None
        answered = set()
        if message.tool_calls:
            _own_duplicates(edits, message)
            for block in message.tool_calls:
                if block.call_id is not None:
                    made.setdefault(block.call_id, message.index)
            open_call, run_end = message, message.index
    if open_call is not None:
        _close(edits, open_call, answered, run_end)


def _result(
    edits: Edits,
    message: Message,
    open_call: Message | None,
    answered: set[str],
    made: dict[str, int],
    first: Message,
) -> None:
    """Keep a tool message that answers the open call (once per call id), else drop it."""
    index = message.index
    calls = {b.call_id for b in open_call.tool_calls} if open_call is not None else set()
    good: list[str] = []
    bad: list[tuple[str, str, str]] = []  # (code, call id, why)
    for block in message.tool_results:
        if block.type == "function" or block.call_id is None:
            return  # pairs by name; or reported and dropped as a bad shape
        call_id = block.call_id
        if call_id in calls and call_id not in answered:
            good.append(call_id)
            answered.add(call_id)
        elif call_id in calls:
            bad.append(("duplicate-id", call_id, "the call has an earlier one"))
        elif call_id in made:
            line = edits.line(made[call_id])
            why = f"it does not follow the assistant message that made the call (line {line})"
            bad.append(("result-not-adjacent", call_id, why))
        elif message is first:
            bad.append(("first-role", call_id, "the list starts with it, and no call has its id"))
        else:
            bad.append(("orphan-result", call_id, "no call has its id"))
    if not bad or not edits.claim(index):
        return
    raw = edits.raw(index)
    if good and isinstance(raw.get("tool_call_ids"), list):
        edits.replace(index, {**raw, "tool_call_ids": good})
        for code, call_id, why in bad:
            edits.note(index, code, f"removed call {call_id} from tool_call_ids: {why}")
        return
    edits.drop(index)
    for code, call_id, why in bad:
        edits.note(index, code, f"dropped the tool message for call {call_id}: {why}")


def _close(edits: Edits, assistant: Message, answered: set[str], run_end: int) -> None:
    """A placeholder tool message for each call of `assistant` its run did not answer."""
    missing = [
        b for b in assistant.tool_calls if b.call_id is not None and b.call_id not in answered
    ]
    for block in dict((b.call_id, b) for b in missing).values():
        assert block.call_id is not None
        raw: dict[str, Any] = {"role": "tool", "tool_call_id": block.call_id}
        raw["content"] = PLACEHOLDER
        edits.insert_after(run_end, raw)
        edits.repairs.append(
            Repair(
                edits.line(assistant.index),
                "call-unanswered",
                f"added a tool message for call {block.call_id} ({block.name}): "
                f"{PLACEHOLDER!r}, as an agent answers a call left without one",
            )
        )


def _own_duplicates(edits: Edits, message: Message) -> None:
    """Drop a tool call whose id an earlier call of the same message has."""
    seen: set[str] = set()
    bad: list[int] = []
    for block in message.tool_calls:
        if block.call_id is None or block.type == "function_call":
            continue
        if block.call_id in seen and len(block.path) == 2 and isinstance(block.path[1], int):
            bad.append(block.path[1])
        seen.add(block.call_id)
    if not bad or not edits.claim(message.index):
        return
    raw = edits.raw(message.index)
    calls = [c for p, c in enumerate(raw["tool_calls"]) if p not in bad]
    edits.replace(message.index, {**raw, "tool_calls": calls})
    for position in bad:
        edits.note(
            message.index,
            "duplicate-id",
            f"dropped tool call {position}: an earlier call of the message has its id",
        )
