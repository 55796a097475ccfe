"""Writing a summary into a plain message list: OpenAI chat, Anthropic Messages (FORMATS.md §3).

A plain list has no compaction record, so `PlainWriter` rewrites the list itself: the head lines,
one `user` message holding the summary, then the kept tail lines, byte for byte. The summary
message carries our details under a top-level `compactcli` key, which is how a reader knows the
message is ours; the same details go to the stats report and `--boundary FILE`. A final pass
keeps every tool call and result paired.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from compactcli.formats import get_dialect
from compactcli.injection import CLOSING, STUB_RESULT, Injection, lost_results, repair_pairs
from compactcli.transcript import Block, Message, Record, Transcript


class PlainWriter:
    """Writes a summary into an `openai` or `anthropic` list by rewriting it.

    The head lines are the system or developer messages and any protected messages, with the
    non-message lines among them (such as a hermes `session_meta` line). The messages of the
    summarized middle are left out (an earlier summary of ours among them), and so are the usage
    records that measured them (Kimi `_usage` lines); other lines there that are not messages (a
    line kept unparsed, a Kimi checkpoint) stay, before the summary. The summary's details hold
    its facts, so a later run carries its file lists over.

    Anthropic roles must alternate and the list must start with a user message. The cut gives a
    head that ends on an assistant message (or no head) and, when it can, a tail that starts on
    one, so the summary stands alone between them. When the tail can only start on a user
    message, the summary is merged into that message, first, with `CLOSING` after it: the one
    kept line that is not byte-identical, as the format requires.

    A final pass (`_repair`) drops a tool result whose call is not in the new list and gives a
    call whose result was lost a stub result (OpenAI: a `tool` message after the call's other
    results; Anthropic: a `tool_result` block first in the next user message).
    """

    quotes_head = False
    refusal = ""

    def __init__(self, format: str) -> None:
        self.format = format
        self.alternating = format == "anthropic"

    def initial(self, context: Sequence[Message]) -> int:
        """The leading system and developer messages."""
        count = 0
        for message in context:
            if message.role not in ("system", "developer"):
                break
            count += 1
        return count

    def acceptor(
        self, transcript: Transcript, context: Sequence[Message]
    ) -> Callable[[int], bool] | None:
        return None

    def write(self, transcript: Transcript, injection: Injection) -> tuple[Record, ...]:
        records = list(transcript.records)
        context = injection.context
        cut = injection.cut
        middle_start = context[cut.head].index
        tail_start = context[cut.start].index
        messages = {m.index for m in context}
        anchors = {u.index for u in get_dialect(self.format).usage(transcript)}
        head_records = records[:middle_start] + [
            records[i]
            for i in range(middle_start, tail_start)
            if i not in messages and i not in anchors
        ]
        tail_records = records[tail_start:]
        details = dict(injection.details)
        first = injection.tail[0]
        if self.alternating and first.role == "user" and not first.tool_results:
            merged = _merge(records[first.index], f"{injection.text}\n\n{CLOSING}", details)
            summary: list[Record] = []
            tail_records[0] = merged
        else:
            summary = [Record(raw=self._summary(injection.text, details))]
        out = [*head_records, *summary, *tail_records]
        kept = [*injection.head, *injection.tail]
        orphans, lost = lost_results(kept, context)
        if orphans or lost:
            out = self._repair(out, transcript, kept, orphans, lost)
        return tuple(out)

    def _summary(self, text: str, details: dict[str, Any]) -> dict[str, Any]:
        if self.format == "anthropic":
            content: Any = [{"type": "text", "text": text}]
            return {"role": "user", "content": content, "compactcli": details}
        return {"role": "user", "content": text, "compactcli": details}

    def _repair(
        self,
        out: list[Record],
        transcript: Transcript,
        kept: Sequence[Message],
        orphans: set[str],
        lost: Sequence[Block],
    ) -> list[Record]:
        """The final pairing pass: no orphan result, a stub for every lost one."""
        return repair_pairs(
            out,
            transcript,
            kept,
            orphans,
            lost,
            continues=lambda record: _continues_results(self.format, record),
            stub=self._stubs,
            drop=self._drop_orphans,
        )

    def _stubs(
        self, pending: Sequence[str], following: Record | None
    ) -> tuple[list[Record], Record | None]:
        """Stub results for `pending` calls before `following`: Anthropic puts them first in a
        user message that follows (or in one of their own), OpenAI as `tool` messages."""
        if self.format == "anthropic":
            if following is not None and following.get("role") == "user":
                return [], _prepend_results(following, pending)
            blocks = [_stub_block(call_id) for call_id in pending]
            return [Record(raw={"role": "user", "content": blocks})], following
        stubs = [
            Record(raw={"role": "tool", "tool_call_id": call_id, "content": STUB_RESULT})
            for call_id in pending
        ]
        return stubs, following

    def _drop_orphans(self, record: Record, message: Message, orphans: set[str]) -> Record | None:
        results = [b for b in message.tool_results if b.call_id in orphans]
        if not results:
            return record
        if self.format == "openai" or len(results) == len(message.blocks):
            return None
        content = [
            block
            for block in record.raw["content"]
            if not (
                isinstance(block, dict)
                and block.get("type") == "tool_result"
                and block.get("tool_use_id") in orphans
            )
        ]
        return record.with_raw({**record.raw, "content": content})


def _continues_results(format: str, record: Record) -> bool:
    """Whether `record` is one more result of the assistant message before it (OpenAI)."""
    return format == "openai" and record.get("role") == "tool"


def _stub_block(call_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": STUB_RESULT, "is_error": True}


def _prepend_results(record: Record, call_ids: Sequence[str]) -> Record:
    content = record.raw.get("content")
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
    return record.with_raw(
        {**record.raw, "content": [*(_stub_block(c) for c in call_ids), *blocks]}
    )


def _merge(record: Record, text: str, details: dict[str, Any]) -> Record:
    """An Anthropic user message with the summary first, as its own text block."""
    content = record.raw.get("content")
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
    return record.with_raw(
        {**record.raw, "content": [{"type": "text", "text": text}, *blocks], "compactcli": details}
    )


def writer(format: str) -> PlainWriter:
    """The writer of a plain message-list format `format` (`openai`, `anthropic`)."""
    return PlainWriter(format)
