"""The toy-chat dialect: each line is one message; the context is every message, and a line
carrying our `compactcli` key is a summary."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from compactcli.formats.base import Dialect, Finding, summary_compactions
from compactcli.transcript import Block, Compaction, Message, Transcript, Usage

SPEAKERS = {"user": "user", "agent": "assistant"}


class ToyChatDialect(Dialect):
    """The `toy-chat` dialect."""

    name = "toy-chat"
    summary = "toy chat lines"
    one_message_per_record = True

    @classmethod
    def sniff(cls, objects: Sequence[Mapping[str, Any]]) -> int:
        return 90 if objects and all("speaker" in o and "said" in o for o in objects) else 0

    def messages(self, transcript: Transcript) -> list[Message]:
        return [
            Message(
                index=index,
                role="user" if record.raw.get("speaker") == "user" else "assistant",
                blocks=(Block(kind="text", text=str(record.raw.get("said", "")), path=("said",)),),
                summary="compactcli" in record.raw,
            )
            for index, record in transcript.objects()
        ]

    def context(self, transcript: Transcript) -> list[Message]:
        return self.messages(transcript)

    def compactions(self, transcript: Transcript) -> list[Compaction]:
        return summary_compactions(self.messages(transcript))

    def usage(self, transcript: Transcript) -> list[Usage]:
        return []

    def validate(self, transcript: Transcript) -> list[Finding]:
        return [
            Finding(record.lineno, "bad-speaker", f"unknown speaker {record.raw.get('speaker')!r}")
            for _, record in transcript.objects()
            if record.raw.get("speaker") not in SPEAKERS
        ]
