"""Writing a summary into an Anthropic Messages list: `PlainWriter` with Anthropic's shapes.

Roles alternate and the list starts with a user message, so the writer is `alternating`: a
summary the tail's first user message must hold goes first in it, as a text block of its own. The
summary message's `content` is a list of one text block. A call whose result was lost gets a
`tool_result` block holding `STUB_RESULT`, marked as an error, first in the user message that
follows (or in a user message of its own); results of calls that are no longer in the list are
taken out of their message, which is dropped when nothing else is left in it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compactcli.formats.plain.writer import PlainWriter
from compactcli.injection import STUB_RESULT
from compactcli.transcript import Message, Record


class AnthropicWriter(PlainWriter):
    """`PlainWriter` for Anthropic Messages."""

    alternating = True

    def summary_record(self, text: str, details: dict[str, Any]) -> dict[str, Any]:
        return {"role": "user", "content": [{"type": "text", "text": text}], "compactcli": details}

    def merged_summary(self, record: Record, text: str, details: dict[str, Any]) -> Record:
        content = record.raw.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        return record.with_raw(
            {
                **record.raw,
                "content": [{"type": "text", "text": text}, *blocks],
                "compactcli": details,
            }
        )

    def stubs(
        self, pending: Sequence[str], following: Record | None
    ) -> tuple[list[Record], Record | None]:
        if following is not None and following.get("role") == "user":
            return [], _prepend_results(following, pending)
        blocks = [_stub_block(call_id) for call_id in pending]
        return [Record(raw={"role": "user", "content": blocks})], following

    def without_results(self, record: Record, message: Message, orphans: set[str]) -> Record | None:
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


def _stub_block(call_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": STUB_RESULT, "is_error": True}


def _prepend_results(record: Record, call_ids: Sequence[str]) -> Record:
    content = record.raw.get("content")
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
    return record.with_raw(
        {**record.raw, "content": [*(_stub_block(c) for c in call_ids), *blocks]}
    )


def writer(format: str) -> AnthropicWriter:
    """The writer of format `format` (`anthropic`)."""
    return AnthropicWriter(format)
