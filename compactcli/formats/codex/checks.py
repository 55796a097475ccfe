"""Validation rules of the `codex` dialect over a rollout's records and replay timeline.

`check_envelopes` checks every line's envelope and the session meta line, and `check_pairs`
follows the call / output pairing through each history, each `compacted` line starting a new one.
Both return findings in file order of discovery and never edit records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from compactcli.formats.base import Finding
from compactcli.formats.codex.items import ANSWERS, RECORD_TYPES
from compactcli.formats.codex.replay import Step, _apply, is_user_turn
from compactcli.transcript import Message, Transcript


def check_envelopes(transcript: Transcript) -> list[Finding]:
    """`bad-shape` for an envelope missing or mistyping `timestamp` / `type` / `payload`, or a known
    record type whose payload is not an object; `session-meta` when the first record is not
    `session_meta`, or a second one appears.
    """
    findings: list[Finding] = []
    first_meta: int | None = None
    first_object = True
    for _, record in transcript.objects():
        raw = record.raw
        line = record.lineno
        kind = raw.get("type")
        missing = [k for k in ("timestamp", "type", "payload") if k not in raw]
        if missing:
            findings.append(
                Finding(line, "bad-shape", f"record has no {', '.join(map(repr, missing))}")
            )
        elif not isinstance(kind, str):
            findings.append(Finding(line, "bad-shape", "record 'type' is not a string"))
        elif not isinstance(raw.get("timestamp"), str):
            findings.append(Finding(line, "bad-shape", "record 'timestamp' is not a string"))
        elif kind in RECORD_TYPES and not isinstance(raw.get("payload"), dict):
            findings.append(Finding(line, "bad-shape", f"{kind} record 'payload' is not an object"))
        if kind == "session_meta":
            if first_meta is None and first_object:
                first_meta = line
            elif first_meta is None:
                findings.append(
                    Finding(line, "session-meta", "session_meta is not the first record")
                )
                first_meta = line
            else:
                findings.append(
                    Finding(
                        line, "session-meta", f"second session_meta (first on line {first_meta})"
                    )
                )
        elif first_object:
            findings.append(
                Finding(line, "session-meta", f"first record is {kind!r}, not session_meta")
            )
        first_object = False
    return findings


@dataclass(slots=True)
class _Call:
    type: str
    name: str | None
    line: int
    answered: bool = False
    reported: bool = False


def check_pairs(transcript: Transcript, steps: Sequence[Step]) -> list[Finding]:
    """Call/output pairing per history (each compacted line starts a new one).

    `duplicate-id`: a call id used by two calls, or answered twice, in one history.
    `orphan-result`: an output with no earlier call of a kind it answers in the same history, so
    also one inside a `replacement_history` whose call is not in it, or after a compaction whose
    call was before it. `call-unanswered`: always a warning, since Codex answers every unanswered
    call with `"aborted"` when it builds a prompt; the message says where the call was left (end
    of file, an aborted turn, the next user message or a compaction).
    """
    findings: list[Finding] = []
    history: list[Message] = []
    calls: dict[str, _Call] = {}
    unanswered: dict[str, _Call] = {}  # the calls of `calls` not answered and not reported yet

    def report_open(reason: str, open_calls: Mapping[str, _Call]) -> None:
        for call_id, call in open_calls.items():
            if not call.answered and not call.reported:
                call.reported = True
                findings.append(
                    Finding(
                        call.line,
                        "call-unanswered",
                        f"{call.type} {call_id!r} ({call.name}) has no output {reason}; "
                        'Codex answers it with "aborted" on load',
                        "warning",
                    )
                )

    def take(message: Message) -> None:
        line = transcript.line_of(message.index)
        inside = ""
        if message.synthetic and len(message.path) > 2:
            inside = f" (replacement_history[{message.path[2]}])"
        for block in message.blocks:
            if not block.call_id:
                continue
            if block.kind == "tool_call":
                if block.call_id in calls:
                    findings.append(
                        Finding(
                            line,
                            "duplicate-id",
                            f"{block.type} call_id {block.call_id!r}{inside} is already used "
                            f"by the call on line {calls[block.call_id].line}",
                        )
                    )
                else:
                    calls[block.call_id] = unanswered[block.call_id] = _Call(
                        block.type, block.name, line
                    )
            elif block.kind == "tool_result":
                call = calls.get(block.call_id)
                allowed = ANSWERS.get(block.type, frozenset())
                if call is None or call.type not in allowed:
                    findings.append(
                        Finding(
                            line,
                            "orphan-result",
                            f"{block.type} call_id {block.call_id!r}{inside} has no earlier "
                            f"{' or '.join(sorted(allowed))} in its history",
                        )
                    )
                elif call.answered:
                    findings.append(
                        Finding(
                            line,
                            "duplicate-id",
                            f"{block.type} call_id {block.call_id!r}{inside} answers the call "
                            f"on line {call.line} a second time",
                        )
                    )
                else:
                    call.answered = True
                    unanswered.pop(block.call_id, None)

    for step in steps:
        line = transcript.line_of(step.index)
        if step.kind == "item":
            message = step.messages[0]
            if is_user_turn(message):
                report_open(f"before the next user message on line {line}", unanswered)
                unanswered.clear()
            take(message)
            history.append(message)
        elif step.kind == "aborted":
            report_open(f"in the turn aborted on line {line}", unanswered)
            unanswered.clear()
        elif step.kind == "compacted":
            # a new history: calls it drops are reported here, the ones it keeps start over
            history = _apply(history, step)
            kept = {b.call_id for m in history for b in m.tool_calls if b.call_id}
            dropped = {k: v for k, v in calls.items() if k not in kept}
            report_open(f"before the compaction on line {line}", dropped)
            reported = {k for k, v in calls.items() if v.reported}
            calls.clear()
            unanswered.clear()
            for message in history:
                take(message)
            for call_id in reported & calls.keys():
                calls[call_id].reported = True
                unanswered.pop(call_id, None)
        else:  # rollback: the dropped turns' calls leave the history
            history = _apply(history, step)
            kept = {b.call_id for m in history for b in m.tool_calls if b.call_id}
            for call_id in calls.keys() - kept:
                del calls[call_id]
                unanswered.pop(call_id, None)
    report_open("by the end of the file", calls)
    return findings
