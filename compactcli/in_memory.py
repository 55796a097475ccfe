"""Transcripts as bytes in and bytes out: what the commands do to a file, done to its content.

`compact_bytes(data)`, `prune_bytes`, `summarize_bytes` and `estimate_bytes` read `data` as the
content of a file named `name` (its suffix picks a SWE-agent trajectory; the name is the one
messages and reports give), and give back what the command gives for that file: the output as
the exact bytes it writes (the input's own bytes when nothing changed), with the stats report,
the boundary's details and the figures of its report. Nothing is read from disk, and nothing is
written but the archive a setting names. Bad input raises what the file API raises:
`InputError` (unreadable, naming the line), `InvalidTranscript` (fails `validate`, unless
`repair`), `UsageError` (an unknown setting or format). The file commands are this with a read
before and a write after (`compactcli.compact_file.compact_input`), so both give the same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from compactcli.errors import UsageError

if TYPE_CHECKING:
    from compactcli.boundary import BoundaryDetails
    from compactcli.estimate import EstimateOptions, EstimateReport
    from compactcli.jsonl import OnBadLine
    from compactcli.stages.prune import PruneOptions
    from compactcli.stages.summarize import SummarizeOptions
    from compactcli.stats import StatsReport
    from compactcli.summarizers import Summarizer
    from compactcli.transcript import Transcript

__all__ = [
    "CompactResult",
    "StageResult",
    "compact_bytes",
    "estimate_bytes",
    "prune_bytes",
    "summarize_bytes",
]

NAME = "<bytes>"
"""The name a transcript given as bytes goes by when none is given."""


@dataclass(frozen=True, slots=True)
class CompactResult:
    """`compact_bytes`'s result: what `compactcli compact FILE -o OUT --json --stats S
    --boundary B` writes and reports for one file.

    `data` is the output (the input's bytes when nothing changed); `status` is `compacted`,
    `unchanged`, `kept` (the result would have been invalid or larger), `repaired` or
    `redacted`; `code` is the exit code the command gives the file (1 when a result is still
    over `max_tokens`, or over the threshold with `fail_on_threshold`), `message` why an input
    was kept. `summary` is the summary written (None when none was).
    """

    data: bytes
    status: str
    tokens_before: int
    tokens_after: int
    method: str
    summarized: bool
    llm_calls: int
    code: int
    message: str
    warnings: tuple[str, ...]
    notes: tuple[str, ...]
    stats: StatsReport
    boundary: BoundaryDetails | None
    summary: str | None

    @property
    def changed(self) -> bool:
        return self.status != "unchanged"


@dataclass(frozen=True, slots=True)
class StageResult:
    """`prune_bytes`'s or `summarize_bytes`'s result: the output bytes, whether they differ
    from the input, the stats report (`--stats`), the boundary's details (`--boundary`; None
    when the stage wrote none), the stage's warnings and the repairs made with `repair`."""

    data: bytes
    changed: bool
    stats: StatsReport
    boundary: BoundaryDetails | None
    warnings: tuple[str, ...]
    repairs: tuple[str, ...]


def compact_bytes(
    data: bytes,
    *,
    name: str = NAME,
    format: str | None = None,
    settings: Mapping[str, Any] | None = None,
    on_bad_line: OnBadLine = "error",
    repair: bool = False,
    summarizer: Summarizer | None = None,
) -> CompactResult:
    """Compact the transcript `data` as `compactcli compact` compacts a file of it.

    `settings` are `compact`'s, by the names of `compactcli.compact_file.DEFAULTS` (`force`,
    `max_tokens`, `keep_recent_tokens`, `summarizer`, `model`, `archive`, ...), each
    defaulting as on the command line; no policy file and no environment variable is read.
    `summarizer` overrides the one the settings name (for a shared or cached LLM backend:
    `compactcli.compact_file.make_summarizer`).
    """
    from compactcli.compact_file import DEFAULTS, FilePlan, compact_input, make_summarizer
    from compactcli.jsonl import file_bytes, render

    given = dict(settings or {})
    unknown = sorted(set(given) - set(DEFAULTS))
    if unknown:
        raise UsageError(
            f"unknown compact setting {', '.join(map(repr, unknown))}; known settings: "
            + ", ".join(DEFAULTS)
        )
    plan = FilePlan(
        given=given,
        policies=None,
        destinations={},
        format=format,
        on_bad_line=on_bad_line,
        stats=True,
        boundary=True,
        repair=repair,
        summary=True,
    )
    backend = summarizer

    def summarizer_for(resolved: Mapping[str, Any]) -> Summarizer:
        return backend if backend is not None else make_summarizer(resolved)

    done = compact_input(name, plan, summarizer_for, data=data)
    result = done.result
    output = file_bytes(render(done.after.records), name)
    details = result.details
    return CompactResult(
        data=output,
        status=result.status,
        tokens_before=result.tokens_before,
        tokens_after=result.tokens_after,
        method=result.method,
        summarized=result.summarized,
        llm_calls=result.llm_calls,
        code=result.code,
        message=result.message,
        warnings=result.warnings,
        notes=result.notes,
        stats=details["stats"],
        boundary=details.get("boundary"),
        summary=details.get("summary"),
    )


def prune_bytes(
    data: bytes,
    options: PruneOptions | None = None,
    *,
    name: str = NAME,
    format: str | None = None,
    method: str = "heuristic",
    on_bad_line: OnBadLine = "error",
    repair: bool = False,
) -> StageResult:
    """Prune the transcript `data` as `compactcli prune` prunes a file of it (`options`: the
    command's defaults when None; an `archive` there is written)."""
    from compactcli.stages.prune import PruneOptions, prune

    chosen = options if options is not None else PruneOptions()

    def run(before: Transcript, counter: Any) -> Transcript:
        return prune(before, chosen, counter=counter)

    return _stage(data, run, name, format, method, on_bad_line, repair, chosen.archive)


def summarize_bytes(
    data: bytes,
    options: SummarizeOptions | None = None,
    *,
    name: str = NAME,
    format: str | None = None,
    method: str = "heuristic",
    summarizer: Summarizer | None = None,
    on_bad_line: OnBadLine = "error",
    repair: bool = False,
) -> StageResult:
    """Summarize the transcript `data` as `compactcli summarize` summarizes a file of it
    (`options`: the command's defaults when None; `summarizer`: the extractive one when None)."""
    from compactcli.stages.summarize import SummarizeOptions, summarize
    from compactcli.summarizers import get_summarizer

    chosen = options if options is not None else SummarizeOptions()
    backend = summarizer if summarizer is not None else get_summarizer("extractive")

    def run(before: Transcript, counter: Any) -> Transcript:
        return summarize(before, chosen, summarizer=backend, counter=counter)

    return _stage(data, run, name, format, method, on_bad_line, repair, None)


def estimate_bytes(
    data: bytes,
    options: EstimateOptions | None = None,
    *,
    name: str = NAME,
    format: str | None = None,
    on_bad_line: OnBadLine = "error",
) -> EstimateReport:
    """The `compactcli estimate` report of the transcript `data` (`options`: the command's
    defaults when None)."""
    from compactcli.estimate import EstimateOptions, estimate
    from compactcli.loading import read_transcript

    transcript = read_transcript(name, format, on_bad_line=on_bad_line, data=data)
    return estimate(transcript, options if options is not None else EstimateOptions())


def _stage(
    data: bytes,
    run: Any,
    name: str,
    format: str | None,
    method: str,
    on_bad_line: OnBadLine,
    repair: bool,
    archive: str | None,
) -> StageResult:
    """One stage on `data`, as the stage commands run it (`compactcli.cli.prune`): read, admit,
    stage, refuse an invalid result, record how to undo a change, render."""
    from compactcli import undo
    from compactcli.errors import InvalidTranscript
    from compactcli.formats import get_dialect
    from compactcli.jsonl import file_bytes, render
    from compactcli.loading import read_transcript
    from compactcli.repair import admit, output_problem
    from compactcli.stats import report
    from compactcli.tokens import get_counter

    read = read_transcript(name, format, on_bad_line=on_bad_line, data=data)
    admitted = admit(read, repair=repair)
    transcript = admitted.transcript
    counter = get_counter(
        method, model=get_dialect(transcript.format).model(transcript), format=transcript.format
    )
    transcript = admitted.staged(counter)
    after = run(transcript, counter)
    problem = output_problem(transcript, after)
    if problem is not None:
        raise InvalidTranscript(transcript.source, f"{problem}; nothing written")
    changed = any(s.changed for s in after.stats)
    if changed:
        after = undo.record(transcript, after, archive=archive)
    output = file_bytes(render(after.records), name)
    boundaries = [s.details["boundary"] for s in after.stats if "boundary" in s.details]
    warnings = [
        f"{transcript.source}: {w}"
        for s in after.stats
        for w in s.details.get("summarize", {}).get("warnings", ())
    ]
    return StageResult(
        data=output,
        changed=output != data,
        stats=report(after),
        boundary=boundaries[-1] if boundaries else None,
        warnings=tuple(warnings),
        repairs=tuple(admitted.lines()),
    )
