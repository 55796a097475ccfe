"""Repairing a Codex rollout (and the items of a `codex-legacy` rollout or an `openai-responses`
list) the way Codex reads one (FORMATS.md §2.4).

`repair(transcript, findings)` makes, in one pass (see `compactcli.formats.repairing`), what
Codex's resume and `normalize_history` make of a rollout: in each history (a `compacted` line
starts a new one) every call gets an output and every output a call, lines Codex cannot parse are
dropped, and the session meta line is put first. A file without a meta line cannot be repaired.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from compactcli.formats.base import Finding
from compactcli.formats.codex.dialect import CodexDialect
from compactcli.formats.codex.replay import Step, _apply
from compactcli.formats.codex_legacy.dialect import is_meta
from compactcli.formats.repairing import Edits, Repair, located, without_items
from compactcli.transcript import Message, Transcript

ABORTED = "aborted"
"""The output Codex gives a call that has none (`normalize.rs`)."""

_ANSWERS: dict[str, frozenset[str]] = {
    "function_call_output": frozenset({"function_call", "local_shell_call"}),
    "custom_tool_call_output": frozenset({"custom_tool_call"}),
    "tool_search_output": frozenset({"tool_search_call"}),
}


def _output_for(kind: str, call_id: str) -> dict[str, Any]:
    """The output item Codex makes for an unanswered call of type `kind`."""
    if kind == "custom_tool_call":
        return {"type": "custom_tool_call_output", "call_id": call_id, "output": ABORTED}
    if kind == "tool_search_call":
        return {
            "type": "tool_search_output",
            "call_id": call_id,
            "status": "completed",
            "execution": "client",
            "tools": [],
        }
    return {"type": "function_call_output", "call_id": call_id, "output": ABORTED}


@dataclass(slots=True)
class _Call:
    kind: str
    name: str | None
    message: Message
    answered: bool = False


@dataclass(slots=True)
class _Plan:
    """Item edits: (record index, position in its replacement_history or None) of items to
    drop, and items to add after a call's item."""

    drop: dict[tuple[int, int | None], tuple[str, str]] = field(default_factory=dict)
    add: dict[tuple[int, int | None], list[tuple[dict[str, Any], str]]] = field(
        default_factory=dict
    )


def repair(transcript: Transcript, findings: Sequence[Finding]) -> tuple[Transcript, list[Repair]]:
    """One pass of fixes for `findings`.

    `bad-shape`: a line Codex cannot parse (an envelope without `timestamp`, `type` or `payload`,
    or an item of a known type with a wrong shape) is dropped, as its resume skips such a line.
    `session-meta`: see `_session_meta`. The calls and outputs of every history are paired as
    `_pairs` says.
    """
    edits = Edits(transcript)
    envelope = transcript.format == "codex"
    for index, finding in located(transcript, findings, ("session-meta", "bad-shape")):
        if finding.code == "bad-shape":
            if edits.claim(index):
                edits.drop(index)
                edits.note(
                    index, finding.code, f"dropped the line: {finding.message} (Codex skips it)"
                )
        else:
            _session_meta(edits, index, envelope)
    dialect = _dialect(transcript)
    plan = _pairs(transcript, dialect._timeline(transcript, []))
    _apply_plan(edits, plan, envelope)
    return edits.apply(), edits.repairs


def _dialect(transcript: Transcript) -> CodexDialect:
    from compactcli.formats import get_dialect

    dialect = get_dialect(transcript.format)
    assert isinstance(dialect, CodexDialect)
    return dialect


def _is_session_meta(raw: Any, envelope: bool) -> bool:
    if not isinstance(raw, dict):
        return False
    return raw.get("type") == "session_meta" if envelope else is_meta(raw)


def _session_meta(edits: Edits, index: int, envelope: bool) -> None:
    """Move the file's only meta line first when another record comes before it, or drop a second
    one (a legacy rollout's meta line likewise).
    """
    records = edits.transcript.records
    metas = [i for i, r in enumerate(records) if _is_session_meta(r.raw, envelope)]
    first_object = next((i for i, r in enumerate(records) if isinstance(r.raw, dict)), None)
    if index not in metas or first_object is None:
        return  # the first record is not a meta line: a later one is moved, if any
    if metas[0] == first_object:
        if index != metas[0] and edits.claim(index):
            edits.drop(index)
            edits.note(
                index,
                "session-meta",
                f"dropped a second session meta line (the first is line {edits.line(metas[0])})",
            )
        return
    if index == metas[0] and edits.claim(index):
        edits.move_first(index)
        edits.note(index, "session-meta", "moved the session meta line first, where Codex reads it")


def _pairs(transcript: Transcript, steps: Sequence[Step]) -> _Plan:
    """What `ensure_call_outputs_present` and `remove_orphan_outputs` do to each history.

    - A call (`function_call`, `custom_tool_call`, `local_shell_call`, `tool_search_call`) with
      no output anywhere in its history gets one right after it (`_output_for`: `"aborted"`, or a
      `tool_search_output` with no tools for a tool search); inside a `replacement_history`, the
      output goes into that list after the call.
    - An output with no call of its kind before it in its history is dropped, and so are a second
      output for one call and a call whose id an earlier call of the history has (the API refuses
      both).

    A call whose output comes later than the next user message is left as it is (Codex finds the
    output and adds none; `validate` warns about it all the same).
    """
    plan = _Plan()
    history: list[Message] = []
    calls: dict[str, _Call] = {}

    def where(message: Message) -> tuple[int, int | None]:
        inside = message.synthetic and len(message.path) > 2
        position = message.path[2] if inside else None
        return message.index, position if isinstance(position, int) else None

    def take(message: Message) -> None:
        for block in message.blocks:
            if not block.call_id:
                continue
            if block.kind == "tool_call":
                if block.call_id in calls:
                    first = calls[block.call_id].message
                    plan.drop.setdefault(
                        where(message),
                        (
                            "duplicate-id",
                            f"dropped {block.type} {block.call_id}: the call on line "
                            f"{transcript.line_of(first.index)} has its id",
                        ),
                    )
                else:
                    calls[block.call_id] = _Call(block.type, block.name, message)
            elif block.kind == "tool_result":
                call = calls.get(block.call_id)
                if call is None or call.kind not in _ANSWERS.get(block.type, frozenset()):
                    plan.drop.setdefault(
                        where(message),
                        (
                            "orphan-result",
                            f"dropped {block.type} {block.call_id}: no call before it has its "
                            "id (Codex drops such an output)",
                        ),
                    )
                elif call.answered:
                    plan.drop.setdefault(
                        where(message),
                        ("duplicate-id", f"dropped a second {block.type} for {block.call_id}"),
                    )
                else:
                    call.answered = True

    def close(open_calls: dict[str, _Call]) -> None:
        for call_id, call in open_calls.items():
            if call.answered or where(call.message) in plan.drop:
                continue
            call.answered = True
            plan.add.setdefault(where(call.message), []).append(
                (
                    _output_for(call.kind, call_id),
                    f"added an {ABORTED!r} output for {call.kind} {call_id} ({call.name}), as "
                    "Codex answers a call left without one",
                )
            )

    for step in steps:
        if step.kind == "item":
            message = step.messages[0]
            take(message)
            history.append(message)
        elif step.kind == "compacted":
            history = _apply(history, step)
            kept = {b.call_id for m in history for b in m.tool_calls if b.call_id}
            close({k: v for k, v in calls.items() if k not in kept})
            calls.clear()
            for message in history:
                take(message)
        elif step.kind == "rollback":
            history = _apply(history, step)
            kept = {b.call_id for m in history for b in m.tool_calls if b.call_id}
            for call_id in calls.keys() - kept:
                del calls[call_id]
    close(calls)
    return plan


def _apply_plan(edits: Edits, plan: _Plan, envelope: bool) -> None:
    """Make the planned drops and additions: whole lines, or items of a replacement_history."""
    inside: dict[int, tuple[list[int], dict[int, list[dict[str, Any]]]]] = {}
    for (index, position), (code, what) in plan.drop.items():
        if position is None:
            if edits.claim(index):
                edits.drop(index)
                edits.note(index, code, what)
        else:
            inside.setdefault(index, ([], {}))[0].append(position)
            edits.note(index, code, f"{what} (replacement_history[{position}])")
    for (index, position), outputs in plan.add.items():
        if position is None:
            if edits.dropped(index):
                continue
            record = edits.transcript.records[index].raw
            for item, what in outputs:
                line: Any = item
                if envelope:
                    line = {"timestamp": record.get("timestamp"), "type": "response_item"}
                    line["payload"] = item
                edits.insert_after(index, line)
                edits.note(index, "call-unanswered", what)
        else:
            added = inside.setdefault(index, ([], {}))[1]
            for item, what in outputs:
                added.setdefault(position, []).append(item)
                edits.note(index, "call-unanswered", f"{what} (replacement_history[{position}])")
    for index, (dropped, added) in inside.items():
        if not edits.claim(index):
            continue
        raw = edits.raw(index)
        history = raw["payload"]["replacement_history"]
        items: list[Any] = []
        for position, item in enumerate(history):
            items.append(item)
            items += added.get(position, [])
        kept = without_items(items, [_shifted(p, added) for p in dropped])
        edits.replace(index, {**raw, "payload": {**raw["payload"], "replacement_history": kept}})


def _shifted(position: int, added: dict[int, list[dict[str, Any]]]) -> int:
    """Where the item at `position` of a replacement_history is once `added` are in."""
    return position + sum(len(items) for p, items in added.items() if p < position)
