"""What each stage did, as data: `StageStats`, and the report made from them.

A stage appends one `StageStats` to the transcript it returns. `report(transcript)` gathers them
into the stats report (`--stats FILE`): a plain dict that `json`/`orjson` can write, whose shape
docs/prune.md and docs/summarize.md document. Nothing here renders or prints.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from compactcli.transcript import Transcript


@dataclass(frozen=True, slots=True)
class StageStats:
    """One stage's effect on one transcript. Tokens are of the context view."""

    stage: str
    method: str
    tokens_before: int
    tokens_after: int
    records_before: int
    records_after: int
    messages_before: int
    messages_after: int
    seconds: float
    changed: bool
    results_cleared: int = 0
    duplicates_cleared: int = 0
    images_cleared: int = 0
    chars_cleared: int = 0
    tokens_freed_by_tool: Mapping[str, int] = field(default_factory=dict)
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def tokens_saved(self) -> int:
        return self.tokens_before - self.tokens_after

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["seconds"] = round(self.seconds, 4)
        data["tokens_freed_by_tool"] = dict(self.tokens_freed_by_tool)
        data["details"] = dict(self.details)
        return data


def report(transcript: Transcript) -> dict[str, Any]:
    """The stats report of a transcript that went through stages."""
    stages = [s.to_dict() for s in transcript.stats]
    first = transcript.stats[0] if transcript.stats else None
    last = transcript.stats[-1] if transcript.stats else None
    return {
        "path": transcript.source,
        "format": transcript.format,
        "source_sha256": transcript.sha256,
        "tokens_before": first.tokens_before if first else None,
        "tokens_after": last.tokens_after if last else None,
        "method": last.method if last else None,
        "changed": any(s.changed for s in transcript.stats),
        "stages": stages,
    }
