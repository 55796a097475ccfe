"""Writing a summary into a plain message list (FORMATS.md §3): what OpenAI chat and Anthropic
Messages share.

A plain list has no compaction record, so `PlainWriter` rewrites the list itself: the head lines,
one `user` message holding the summary, then the kept tail lines, byte for byte. The summary
message carries our details under a top-level `compactcli` key, which is how a reader knows the
message is ours; the same details go to the stats report and `--boundary FILE`. A final pass
keeps every tool call and result paired. A format's package subclasses it with the shapes of its
own messages (`summary_record`, `stubs`, `without_results`, `continues_results`, `alternating`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from compactcli.formats import get_dialect
from compactcli.injection import CLOSING, Injection, lost_results, repair_pairs
from compactcli.transcript import Block, Message, Record, Transcript


class PlainWriter(ABC):
    """Writes a summary into a plain message list by rewriting it.

    The head lines are the system or developer messages and any protected messages, with the
    non-message lines among them (such as a hermes `session_meta` line). The messages of the
    summarized middle are left out (an earlier summary of ours among them), and so are the usage
    records that measured them (Kimi `_usage` lines); other lines there that are not messages (a
    line kept unparsed, a Kimi checkpoint) stay, before the summary. The summary's details hold
    its facts, so a later run carries its file lists over.

    In a format whose roles must alternate (`alternating`), the cut gives a head that ends on an
    assistant message (or no head) and, when it can, a tail that starts on one, so the summary
    stands alone between them. When the tail can only start on a user message, the summary is
    merged into that message, first, with `CLOSING` after it (`merged_summary`): the one kept line
    that is not byte-identical, as the format requires.

    A final pass (`_repair`) drops a tool result whose call is not in the new list and gives a
    call whose result was lost a stub result (`stubs`).
    """

    quotes_head = False
    refusal = ""
    alternating: ClassVar[bool] = False
    """Whether user and assistant messages must alternate."""

    def __init__(self, format: str) -> None:
        self.format = format

    @abstractmethod
    def summary_record(self, text: str, details: dict[str, Any]) -> dict[str, Any]:
        """The `user` message that holds the summary and our details."""

    @abstractmethod
    def stubs(
        self, pending: Sequence[str], following: Record | None
    ) -> tuple[list[Record], Record | None]:
        """Stub results for the `pending` calls, to go before `following` (which the format
        may change to hold them): the records to insert, and `following` as it is then."""

    @abstractmethod
    def without_results(self, record: Record, message: Message, orphans: set[str]) -> Record | None:
        """`record` (holding `message`) without its results of the calls in `orphans`, or None
        to drop the record."""

    def continues_results(self, record: Record) -> bool:
        """Whether `record` is one more result of the assistant message before it."""
        return False

    def merged_summary(self, record: Record, text: str, details: dict[str, Any]) -> Record:
        """User message `record` with the summary first (an alternating format's tail that
        starts on a user message)."""
        raise NotImplementedError(f"{self.format} does not merge a summary into a message")

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
            merged = self.merged_summary(
                records[first.index], f"{injection.text}\n\n{CLOSING}", details
            )
            summary: list[Record] = []
            tail_records[0] = merged
        else:
            summary = [Record(raw=self.summary_record(injection.text, details))]
        out = [*head_records, *summary, *tail_records]
        kept = [*injection.head, *injection.tail]
        orphans, lost = lost_results(kept, context)
        if orphans or lost:
            out = self._repair(out, transcript, kept, orphans, lost)
        return tuple(out)

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
            continues=self.continues_results,
            stub=self.stubs,
            drop=self._drop_orphans,
        )

    def _drop_orphans(self, record: Record, message: Message, orphans: set[str]) -> Record | None:
        results = [b for b in message.tool_results if b.call_id in orphans]
        if not results:
            return record
        if len(results) == len(message.blocks):
            return None
        return self.without_results(record, message, orphans)
