"""What each stage did, as data: `StageStats`, and the report made from them.

A stage appends one `StageStats` to the transcript it returns, with its typed result
(`StageStats.result`: `PruneResult`, `SummarizeResult`, `CompactCheck`, in
`compactcli.stages`) and the JSON details written from it (`details`). `report(transcript)`
gathers them into the stats report (`--stats FILE`, a `StatsReport`): a plain dict that
`json`/`orjson` can write, whose shape docs/prune.md and docs/summarize.md document; the
`--json` object of `prune` and `summarize` is that report with where the result went
(`StageRow`, `DryRunStageRow`). Nothing here renders or prints.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NotRequired, TypeAlias, TypedDict

if TYPE_CHECKING:
    from compactcli.diff import DiffDict
    from compactcli.redact_transcript import RedactionDict
    from compactcli.stages.compact import CompactCheck, CompactDetails
    from compactcli.stages.prune import PruneDetails, PruneResult
    from compactcli.stages.summarize import SummarizeDetails, SummarizeResult
    from compactcli.transcript import Transcript

    StageResult: TypeAlias = PruneResult | SummarizeResult | CompactCheck
    # a stage without a typed result (`compactcli.repair`) gives its details as they are
    StageDetails: TypeAlias = PruneDetails | SummarizeDetails | CompactDetails | dict[str, Any]


class StageReport(TypedDict):
    """`StageStats.to_dict()`: one stage in the stats report."""

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
    results_cleared: int
    duplicates_cleared: int
    images_cleared: int
    chars_cleared: int
    tokens_freed_by_tool: dict[str, int]
    details: StageDetails


class StatsReport(TypedDict):
    """`report(transcript)`: the stats report of a transcript that went through stages."""

    path: str
    format: str
    source_sha256: str
    tokens_before: int | None
    tokens_after: int | None
    method: str | None
    changed: bool
    stages: list[StageReport]
    redact: NotRequired[RedactionDict]  # `compact --redact`: what was redacted


class StageRow(StatsReport):
    """The `--json` object of `prune` and `summarize` (`compactcli.cli.stage_output`): the
    stats report, then where the transcript went (a file, `-` for standard output, None on a
    dry run)."""

    output: str | None


class DryRunStageRow(StageRow):
    """The `--json` object of `prune --dry-run` and `summarize --dry-run`: a `StageRow`, then
    the diff the run would make (`compactcli.diff.DiffReport.to_dict`)."""

    diff: DiffDict


@dataclass(frozen=True, slots=True)
class StageStats:
    """One stage's effect on one transcript. Tokens are of the context view.

    `result` is the stage's typed result; when there is one, `details` (the JSON the stats
    report and the boundary records write) is made from it (`to_details`), whatever was given.
    """

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
    result: StageResult | None = None

    def __post_init__(self) -> None:
        if self.result is not None:
            object.__setattr__(self, "details", self.result.to_details())

    @property
    def tokens_saved(self) -> int:
        return self.tokens_before - self.tokens_after

    def to_dict(self) -> StageReport:
        return {
            "stage": self.stage,
            "method": self.method,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "records_before": self.records_before,
            "records_after": self.records_after,
            "messages_before": self.messages_before,
            "messages_after": self.messages_after,
            "seconds": round(self.seconds, 4),
            "changed": self.changed,
            "results_cleared": self.results_cleared,
            "duplicates_cleared": self.duplicates_cleared,
            "images_cleared": self.images_cleared,
            "chars_cleared": self.chars_cleared,
            "tokens_freed_by_tool": dict(self.tokens_freed_by_tool),
            "details": dict(self.details),
        }


def report(transcript: Transcript) -> StatsReport:
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
