"""Writing a summary into a toy chat: the list rewritten (`PlainWriter`), the summary a user
line carrying our details."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compactcli.formats.plain.writer import PlainWriter
from compactcli.transcript import Message, Record


class ToyChatWriter(PlainWriter):
    """`PlainWriter` with toy-chat lines (no tool calls, so nothing to pair)."""

    def summary_record(self, text: str, details: dict[str, Any]) -> dict[str, Any]:
        return {"speaker": "user", "said": text, "compactcli": details}

    def stubs(
        self, pending: Sequence[str], following: Record | None
    ) -> tuple[list[Record], Record | None]:
        return [], following

    def without_results(self, record: Record, message: Message, orphans: set[str]) -> Record | None:
        return record


def writer(format: str) -> ToyChatWriter:
    """The writer of format `format` (`toy-chat`)."""
    return ToyChatWriter(format)
