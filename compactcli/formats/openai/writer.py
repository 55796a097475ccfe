"""Writing a summary into an OpenAI chat message list: `PlainWriter` with OpenAI's shapes.

The summary is a `user` message whose `content` is the text; a call whose result was lost gets a
`tool` message holding `STUB_RESULT` after the call's other results; a `tool` message answering a
call that is no longer in the list is dropped whole (a `tool` message answers one call).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compactcli.formats.plain.writer import PlainWriter
from compactcli.injection import STUB_RESULT
from compactcli.transcript import Message, Record


class OpenAIWriter(PlainWriter):
    """`PlainWriter` for OpenAI chat messages."""

    def summary_record(self, text: str, details: dict[str, Any]) -> dict[str, Any]:
        return {"role": "user", "content": text, "compactcli": details}

    def stubs(
        self, pending: Sequence[str], following: Record | None
    ) -> tuple[list[Record], Record | None]:
        stubs = [
            Record(raw={"role": "tool", "tool_call_id": call_id, "content": STUB_RESULT})
            for call_id in pending
        ]
        return stubs, following

    def without_results(self, record: Record, message: Message, orphans: set[str]) -> Record | None:
        return None

    def continues_results(self, record: Record) -> bool:
        return bool(record.get("role") == "tool")


def writer(format: str) -> OpenAIWriter:
    """The writer of format `format` (`openai`)."""
    return OpenAIWriter(format)
