"""What the two plain message-list formats (OpenAI chat, Anthropic Messages) share.

Both write one API message per JSONL line, `{"role": …, "content": …}`, so telling them apart
takes a look at every record (FORMATS.md §3): `plain_scores` does that once for both dialects.
`parse_records` is how both read every record's messages, either raising on a malformed record
(the views) or turning it into a `bad-shape` finding (validate).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from compactcli.errors import InputError
from compactcli.formats.base import Dialect, Finding, remembered, summary_compactions
from compactcli.transcript import Compaction, Message, Transcript

OPENAI_ONLY_ROLES = frozenset({"system", "developer", "tool", "function", "session_meta"})
OPENAI_ONLY_KEYS = ("tool_calls", "tool_call_id", "tool_call_ids", "function_call")
OPENAI_ONLY_PARTS = frozenset({"image_url", "input_audio", "file", "refusal"})
ANTHROPIC_ONLY_BLOCKS = frozenset(
    {
        "tool_use",
        "tool_result",
        "thinking",
        "redacted_thinking",
        "server_tool_use",
        "mcp_tool_use",
        "search_result",
        "container_upload",
    }
)
SOURCED_BLOCKS = frozenset({"image", "document"})

PLAIN_ROLES = frozenset({"user", "assistant", *OPENAI_ONLY_ROLES})


def plain_scores(objects: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    """(OpenAI score, Anthropic score) for the first object records of a file.

    A record that only OpenAI allows (`tool_calls`, `tool_call_id`, roles `tool` / `system` /
    `developer` / `function`, `content: null`, parts of type `image_url` / `input_audio` /
    `file`, a hermes `session_meta` line, a Kimi `_`-role line) marks OpenAI; a block that only
    Anthropic allows (`tool_use`, `tool_result`, `thinking`, `redacted_thinking`, server tool
    blocks, an `image` or `document` with a `source`) marks Anthropic. Records that fit both are
    told apart by habit: a list of plain user/assistant strings reads as OpenAI (its rules are
    the looser of the two), while content written as lists of `{"type":"text"}` blocks, the
    Messages API's usual shape, leans Anthropic.
    """
    if not objects:
        return 0, 0
    with_role = [raw for raw in objects if isinstance(raw.get("role"), str)]
    if len(with_role) * 5 < len(objects) * 4:
        return 0, 0  # most records of a plain list are messages; other formats wrap theirs
    known = False
    openai = anthropic = blocks = False
    for raw in with_role:
        role = raw["role"]
        if role in OPENAI_ONLY_ROLES or role.startswith("_"):
            openai = True
        known = known or role in PLAIN_ROLES
        if any(key in raw for key in OPENAI_ONLY_KEYS):
            openai = True
        content = raw.get("content", "")
        if content is None:
            openai = True
        elif isinstance(content, list):
            blocks = blocks or bool(content)
            for part in content:
                if not isinstance(part, Mapping):
                    continue
                kind = part.get("type")
                if not isinstance(kind, str):
                    continue
                if kind in OPENAI_ONLY_PARTS:
                    openai = True
                elif (
                    kind in ANTHROPIC_ONLY_BLOCKS
                    or (isinstance(kind, str) and kind.endswith("_tool_result"))
                    or (kind in SOURCED_BLOCKS and "source" in part)
                ):
                    anthropic = True
    if not known:
        return 0, 0
    if openai and anthropic:
        return 40, 30  # contradictory records: neither format fits well
    if openai:
        return 95, 0
    if anthropic:
        return 0, 95
    return (50, 60) if blocks else (50, 40)


MessageParser = Callable[[Transcript, int, Mapping[str, Any]], "list[Message]"]


def parse_records(
    transcript: Transcript, parse: MessageParser, *, strict: bool
) -> tuple[list[Message], list[Finding]]:
    """Every record's messages in file order.

    With `strict`, a malformed record raises its `InputError`; otherwise it becomes a
    `bad-shape` finding and contributes no message (what `validate` wants).
    """
    messages: list[Message] = []
    findings: list[Finding] = []
    for index, record in transcript.objects():
        try:
            messages += parse(transcript, index, record.raw)
        except InputError as error:
            if strict:
                raise
            findings.append(Finding(record.lineno, "bad-shape", error.message))
    return messages, findings


class PlainDialect(Dialect):
    """The views the two plain message lists share: every record read into its messages by the
    format's `parse` (a malformed record raises), the context is every message, and a message
    carrying our top-level `compactcli` key is a summary. `side` is the format's place in
    `plain_scores` (0: OpenAI, 1: Anthropic)."""

    side: ClassVar[int]

    @staticmethod
    @abstractmethod
    def parse(transcript: Transcript, index: int, raw: Mapping[str, Any]) -> list[Message]:
        """The messages of record `index` ([] for a line that is not a message); raises
        `InputError` for a malformed record."""

    @classmethod
    def sniff(cls, objects: Sequence[Mapping[str, Any]]) -> int:
        return plain_scores(objects)[cls.side]

    @remembered
    def messages(self, transcript: Transcript) -> list[Message]:
        return parse_records(transcript, type(self).parse, strict=True)[0]

    @remembered
    def context(self, transcript: Transcript) -> list[Message]:
        return self.messages(transcript)

    @remembered
    def compactions(self, transcript: Transcript) -> list[Compaction]:
        return summary_compactions(self.messages(transcript))
