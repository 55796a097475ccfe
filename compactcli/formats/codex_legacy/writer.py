"""Writing a summary into a legacy Codex rollout (`compactcli.formats.codex_legacy.dialect`) or a
list of OpenAI Responses items (`compactcli.formats.openai_responses.dialect`).

Neither has a compaction record: resuming a legacy rollout replays every item in the file, and a
Responses list is sent whole. So `CodexLegacyWriter` rewrites the file, as a plain message list
is rewritten (`compactcli.formats.plain.writer`): the meta line and the head items, one `user`
message item holding the summary, then the kept tail lines, byte for byte.
"""

from __future__ import annotations

from typing import Any

from compactcli.formats.codex.items import SUMMARY_PREFIX
from compactcli.formats.codex.writer import CodexWriter
from compactcli.formats.codex_legacy.dialect import is_meta, is_state
from compactcli.injection import STUB_RESULT, Injection, lost_results, repair_pairs
from compactcli.transcript import Message, Record, Transcript


class CodexLegacyWriter(CodexWriter):
    """`CodexWriter`'s cuts (the same head), written as a rewrite of the file.

    The head is the meta line (a rollout's) and the system, developer and injected context
    messages before the first real user message, and any protected messages. The items of the
    summarized middle are left out (an earlier summary among them); the state lines among them
    stay, before the summary.

    In a Codex rollout (`codex=True`) the summary text starts with Codex's own summary prefix, as
    Codex's later compaction writes it, so Codex takes it for a summary too, and our details
    (with the facts) go under a top-level `compactcli` key, which Codex's resume ignores. A
    Responses list is sent to the API as it is, and the API refuses unknown keys: its summary
    message is a plain user message (known as ours by the text it starts with,
    `OUR_SUMMARY_START`), and the details go to the stats and `--boundary FILE` only. A final
    pass drops an output whose call is not in the new file and gives a call whose output was lost
    a stub `function_call_output` right after the call's other outputs.
    """

    def __init__(self, *, codex: bool = True) -> None:
        self.codex = codex
        self.prefix = f"{SUMMARY_PREFIX}\n" if codex else ""  # Codex's own summary prefix

    def write(self, transcript: Transcript, injection: Injection) -> tuple[Record, ...]:
        records = transcript.records
        context = injection.context
        cut = injection.cut
        middle = range(context[cut.head].index, context[cut.start].index)
        head = [r for i, r in enumerate(records[: middle.stop]) if i not in middle or _kept_line(r)]
        summary: dict[str, Any] = {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": f"{self.prefix}{injection.text}"}],
        }
        if self.codex:  # Codex's resume drops unknown keys; the Responses API refuses them
            summary["compactcli"] = dict(injection.details)
        out = [*head, Record(raw=summary), *records[middle.stop :]]
        kept = [*injection.head, *injection.tail]
        orphans, lost = lost_results(kept, context)
        if not orphans and not lost:
            return tuple(out)
        return tuple(
            repair_pairs(
                out,
                transcript,
                kept,
                orphans,
                lost,
                continues=_is_output,
                stub=lambda calls, following: ([_stub(c) for c in calls], following),
                drop=_without_orphans,
            )
        )


def _kept_line(record: Record) -> bool:
    """A middle line that is not an item (a state line, a line kept unparsed): it stays."""
    raw = record.raw
    return not isinstance(raw, dict) or is_state(raw) or is_meta(raw)


def _is_output(record: Record) -> bool:
    raw = record.raw
    return isinstance(raw, dict) and raw.get("type") == "function_call_output"


def _without_orphans(record: Record, message: Message, orphans: set[str]) -> Record | None:
    """An output item answers one call: it goes when that call is not in the new file."""
    return None if any(b.call_id in orphans for b in message.tool_results) else record


def _stub(call_id: str) -> Record:
    return Record(raw={"type": "function_call_output", "call_id": call_id, "output": STUB_RESULT})


def writer(format: str) -> CodexLegacyWriter:
    """The writer of format `format`: Codex's legacy rollouts, or plain Responses API items."""
    return CodexLegacyWriter(codex=format == "codex-legacy")
