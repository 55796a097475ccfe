"""Writing a generated session as a transcript: Claude Code, Codex, OpenAI chat, Anthropic.

`render(session, format)` returns the records (JSON objects, in file order) and, for every
planted fact, the index of the first record that carries it; `Rendered.to_bytes` writes them as
JSONL, one `dumps` line each (compact, UTF-8, keys in insertion order). `render_more(turns,
transcript, session, salt)` renders further turns to append to an existing transcript of the same
session and format (a compacted one, for the drift rounds); Claude Code records chain from the
last message of that transcript's context view. The formats are written by `render_claude`
(Claude Code, Anthropic Messages) and `render_openai` (Codex, OpenAI chat) from seeded draws
(`render_common`), so the same arguments always give the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compactcli.evaluation.render_claude import write_anthropic, write_claude_code
from compactcli.evaluation.render_common import AnchoredRecords, JsonObject, Renderer
from compactcli.evaluation.render_openai import write_codex, write_openai
from compactcli.evaluation.session_model import Session, Turn
from compactcli.formats import get_dialect
from compactcli.transcript import Transcript

RENDER_FORMATS = ("claude-code", "codex", "openai", "anthropic")


def dumps(record: Mapping[str, Any]) -> bytes:
    """One record as a JSONL line (compact, UTF-8, keys in insertion order)."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


@dataclass(slots=True)
class Rendered:
    """Records of a transcript, and the record index carrying each planted fact."""

    records: list[JsonObject]
    anchors: dict[str, int] = field(default_factory=dict)

    def to_bytes(self) -> bytes:
        return b"".join(dumps(r) for r in self.records)


def render(session: Session, fmt: str) -> Rendered:
    """The whole session as format `fmt`."""
    renderer = _RENDERERS[fmt]
    out = AnchoredRecords([], {})
    renderer(session, session.turns, out, None, 0)
    return Rendered(out.records, out.anchors)


def render_more(
    turns: Sequence[Turn], transcript: Transcript, session: Session, salt: int
) -> Rendered:
    """Records for `turns`, to append after `transcript` (of the same session and format)."""
    renderer = _RENDERERS[transcript.format]
    existing = [r.raw for _, r in transcript.objects()]
    context = get_dialect(transcript.format).context(transcript)
    if context and transcript.format == "claude-code":
        leaf = transcript.records[context[-1].index].raw
        existing.append({"uuid": leaf.get("uuid"), "type": "leaf"})
    out = AnchoredRecords([], {})
    renderer(session, list(turns), out, existing, salt)
    return Rendered(out.records, out.anchors)


_RENDERERS: dict[str, Renderer] = {
    "claude-code": write_claude_code,
    "codex": write_codex,
    "openai": write_openai,
    "anthropic": write_anthropic,
}

__all__ = ["RENDER_FORMATS", "Rendered", "dumps", "render", "render_more"]
