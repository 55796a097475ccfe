"""Writing a summary into a Codex rollout (FORMATS.md §2.3, §2.4, §6).

`CodexWriter` appends to the rollout, as Codex's own remote compaction does, a `compacted` line
whose `replacement_history` is the complete new history (head items, an encrypted remote
compaction the summary cannot read, the summary as a user message, kept tail items), a copy of
the latest `turn_context`, and a `token_count` event with compactcli's count of the compacted
context. Every input line stays as it was, and the kept items are the input's, equal value for
value; on resume Codex replaces its history with the replacement, so nothing before the new
lines reaches the model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from compactcli.formats.codex.items import (
    COMPACTION_ITEMS,
    CONTEXTUAL_USER_PREFIXES,
    SUMMARY_PREFIX,
)
from compactcli.injection import STUB_RESULT, Injection, lost_results, raw_item
from compactcli.transcript import Message, Record, Transcript

SUMMARY_WRAPPER = (f"{SUMMARY_PREFIX}\n", "")
"""What Codex puts around a summary it wrote (prefix, suffix)."""

_OUTPUT_OF = {"custom_tool_call": "custom_tool_call_output"}


def _contextual(message: Message) -> bool:
    if message.role in ("system", "developer"):
        return True
    if message.role != "user" or message.summary:
        return False
    texts = [b.text for b in message.blocks if b.kind == "text"]
    return bool(texts) and all(
        t.lstrip()[:40].lower().startswith(CONTEXTUAL_USER_PREFIXES) for t in texts
    )


def _instructions(message: Message) -> bool:
    """A developer or system message, or AGENTS.md's instructions as Codex injects them."""
    if message.role in ("system", "developer"):
        return True
    texts = [b.text.lstrip()[:40].lower() for b in message.blocks if b.kind == "text"]
    return message.role == "user" and any(t.startswith(_INSTRUCTIONS) for t in texts)


_INSTRUCTIONS = ("# agents.md instructions for ", "<user_instructions>")


class CodexWriter:
    """Writes a summary as a `compacted` line, a `turn_context` and a `token_count` event.

    1. The `compacted` line: its `replacement_history` holds the head items (the initial
       developer and contextual user messages, then any protected messages), the summary as a
       `user` message with one `input_text` item, then the kept tail items; `payload.message` is
       the summary text too, so Codex and our reader both know which item is the summary. Our
       details go under a top-level `compactcli` key.
    2. A copy of the latest `turn_context` (the model and settings to resume with), as newer
       Codex writes one after a compaction.
    3. An `event_msg` `token_count` (`_token_count`): on resume Codex takes the last
       `token_count` as the context's size and compacts before the first request when it reaches
       the auto-compact limit; without this line it would read the size from before the
       compaction.

    All carry the timestamp of the input's last line and, in a rollout whose lines are numbered,
    the numbers that follow the last one (`_last_ordinal`). The summary text starts with Codex's
    own summary prefix, so a later Codex compaction treats it as a summary and not as a user
    message. The head and tail items keep reasoning `encrypted_content`, and a compaction of
    the summarized part that only the provider can read (OpenAI's remote compaction) is kept
    before the summary (`_sealed`). A final pass drops an
    output whose call is not in the new history and gives a call whose output was lost a stub
    output, as Codex's own `normalize` would (it writes "aborted").
    """

    quotes_head = False
    refusal = ""
    alternating = False

    def initial(self, context: Sequence[Message]) -> int:
        """The leading developer, system and injected-context user messages; after a compaction
        of Codex's own, whose replacement history puts the standing instructions (the developer
        message, AGENTS.md's) after the user messages it kept, those items up to the last
        instructions too, as Codex keeps them."""
        count = 0
        for message in context:
            if not _contextual(message):
                break
            count += 1
        for at, message in enumerate(context):
            if not message.synthetic or message.summary:
                break
            if _instructions(message):
                count = max(count, at + 1)
        return count

    def acceptor(
        self, transcript: Transcript, context: Sequence[Message]
    ) -> Callable[[int], bool] | None:
        return None

    def write(self, transcript: Transcript, injection: Injection) -> tuple[Record, ...]:
        records = transcript.records
        text = f"{SUMMARY_PREFIX}\n{injection.text}"
        kept = [*injection.head, *injection.tail]
        orphans, lost = lost_results(kept, injection.context)
        history: list[Any] = []
        for message in injection.head:
            history.extend(_items(transcript, message, orphans, lost))
        history.extend(
            _sealed(transcript, injection.context[injection.cut.head : injection.cut.start])
        )
        history.append(
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
        )
        for message in injection.tail:
            history.extend(_items(transcript, message, orphans, lost))
        stamp = _last_timestamp(transcript)
        ordinal = _last_ordinal(transcript)
        lines: list[dict[str, Any]] = [
            {
                "type": "compacted",
                "payload": {"message": text, "replacement_history": history},
                "compactcli": dict(injection.details),
            }
        ]
        turn = _last_turn_context(transcript)
        if turn is not None:
            lines.append({"type": "turn_context", "payload": turn})
        lines.append({"type": "event_msg", "payload": _token_count(transcript, injection)})
        out = list(records)
        for line in lines:
            head: dict[str, Any] = {"timestamp": stamp}
            if ordinal is not None:  # newer Codex numbers its lines
                ordinal += 1
                head["ordinal"] = ordinal
            out.append(Record(raw={**head, **line}))
        return tuple(out)


def _sealed(transcript: Transcript, middle: Sequence[Message]) -> list[Any]:
    """The compaction items of the summarized part that only the provider can read (an
    `encrypted_content`: OpenAI's remote compaction), kept as they are: what they hold of the
    session cannot be read into the summary, and would be lost with them."""
    found = []
    for message in middle:
        if message.summary:
            item = raw_item(transcript, message)
            if item.get("type") in COMPACTION_ITEMS and item.get("encrypted_content"):
                found.append(item)
    return found


def _items(
    transcript: Transcript, message: Message, orphans: set[str], lost: Sequence[Any]
) -> list[Any]:
    """The history items of one kept message: itself (unless an orphan output) and stubs."""
    item = raw_item(transcript, message)
    results = [b.call_id for b in message.tool_results]
    if results and all(r in orphans for r in results):
        return []
    out = [item]
    for block in message.tool_calls:
        if any(block is b for b in lost):
            kind = _OUTPUT_OF.get(block.type, "function_call_output")
            out.append({"type": kind, "call_id": block.call_id, "output": STUB_RESULT})
    return out


def _last_timestamp(transcript: Transcript) -> str:
    for record in reversed(transcript.records):
        stamp = record.get("timestamp")
        if isinstance(stamp, str):
            return stamp
    return "1970-01-01T00:00:00.000Z"


def _last_ordinal(transcript: Transcript) -> int | None:
    """The `ordinal` of the last line that has one (Codex 0.150 and later number each line
    from 0), or None when the rollout's lines carry none."""
    for record in reversed(transcript.records):
        ordinal = record.get("ordinal")
        if type(ordinal) is int:
            return ordinal
    return None


def _token_count(transcript: Transcript, injection: Injection) -> dict[str, Any]:
    """The `token_count` event Codex writes after its own compaction (`recompute_token_usage`):
    `last_token_usage` holds only `total_tokens`, the estimate of the new history (here
    compactcli's count of the compacted context); the running total and the context window
    carry over from the input's last `token_count`."""
    info: Any = {}
    for record in reversed(transcript.records):
        payload = record.get("payload")
        if (
            record.get("type") == "event_msg"
            and isinstance(payload, dict)
            and payload.get("type") == "token_count"
            and isinstance(payload.get("info"), dict)
        ):
            info = payload["info"]
            break
    total = info.get("total_token_usage")
    window = info.get("model_context_window")
    return {
        "type": "token_count",
        "info": {
            "total_token_usage": total if isinstance(total, dict) else _usage(0),
            "last_token_usage": _usage(injection.tokens_after),
            "model_context_window": window if type(window) is int else None,
        },
        "rate_limits": None,
    }


def _usage(total_tokens: int) -> dict[str, int]:
    return {
        "input_tokens": 0,
        "cached_input_tokens": 0,
        "output_tokens": 0,
        "reasoning_output_tokens": 0,
        "total_tokens": total_tokens,
    }


def _last_turn_context(transcript: Transcript) -> Any:
    for record in reversed(transcript.records):
        if record.get("type") == "turn_context" and isinstance(record.get("payload"), dict):
            return record.get("payload")
    return None


def writer(format: str) -> CodexWriter:
    """The writer of format `format` (the registry's entry point)."""
    return CodexWriter()
