"""Writing a generated session as a transcript, in each format whose entry names a renderer.

`render(session, format)` returns the records (JSON objects, in file order) and, for every
planted fact, the index of the first record that carries it; `render_more` renders further
turns to append to an existing transcript of the same session and format (a compacted one, for
the drift rounds). The formats rendered are those whose registry entry names a renderer
(`RENDER_FORMATS`); draws are seeded, so the same arguments always give the same bytes, and
another format is a `UsageError`."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compactcli.errors import UsageError
from compactcli.evaluation.render_common import AnchoredRecords, JsonObject, Renderer
from compactcli.evaluation.session_model import Session, Turn
from compactcli.formats import FORMATS, get_dialect, get_format
from compactcli.transcript import Transcript

RENDER_FORMATS = tuple(name for name, entry in FORMATS.items() if entry.renderer is not None)
"""The formats the evaluation generates sessions in, in the order of the registry: those whose
entry names a renderer (`Format.renderer`: Claude Code and Anthropic Messages by
`render_claude`, Codex and OpenAI chat by `render_openai`, drawing from `render_common`)."""


def dumps(record: Mapping[str, Any]) -> bytes:
    """One record as a JSONL line (compact, UTF-8, keys in insertion order)."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


@dataclass(slots=True)
class Rendered:
    """Records of a transcript, and the record index carrying each planted fact (the first
    record that carries it); `to_bytes` writes them as JSONL, one `dumps` line each."""

    records: list[JsonObject]
    anchors: dict[str, int] = field(default_factory=dict)

    def to_bytes(self) -> bytes:
        return b"".join(dumps(r) for r in self.records)


def render(session: Session, fmt: str) -> Rendered:
    """The whole session as format `fmt`."""
    renderer = _renderer(fmt)
    out = AnchoredRecords([], {})
    renderer(session, session.turns, out, None, 0)
    return Rendered(out.records, out.anchors)


def render_more(
    turns: Sequence[Turn], transcript: Transcript, session: Session, salt: int
) -> Rendered:
    """Records for `turns`, to append after `transcript` (of the same session and format),
    `salt` varying the draws. In a format whose records name their parent, the records chain
    from the record the dialect's `append_parent` names (passed to the renderer last, as a
    `leaf` entry)."""
    renderer = _renderer(transcript.format)
    existing = [r.raw for _, r in transcript.objects()]
    dialect = get_dialect(transcript.format)
    context = dialect.context(transcript)
    if context and dialect.link_keys is not None:
        leaf = dialect.append_parent(transcript, context)
        existing.append({dialect.link_keys[0]: leaf, "type": "leaf"})
    out = AnchoredRecords([], {})
    renderer(session, list(turns), out, existing, salt)
    return Rendered(out.records, out.anchors)


def _renderer(fmt: str) -> Renderer:
    """The renderer of format `fmt`; `UsageError` for a format the evaluation does not render
    (or one that is not registered)."""
    renderer = get_format(fmt).render()
    if renderer is None:
        raise UsageError(
            f"the evaluation renders no {fmt} sessions; it renders {', '.join(RENDER_FORMATS)}"
        )
    return renderer


__all__ = ["RENDER_FORMATS", "Rendered", "dumps", "render", "render_more"]
