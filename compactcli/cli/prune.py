"""`compactcli prune`: clear old tool output (no LLM)."""

from __future__ import annotations

from compactcli.cli.admission import admit_input, refuse_invalid_result
from compactcli.cli.options import (
    Archive,
    As,
    BadLinePolicy,
    BoundaryFile,
    Dedupe,
    DryRun,
    Format,
    Images,
    InPlace,
    Json,
    KeepRecent,
    MinChars,
    OnBadLine,
    OutputFile,
    Quiet,
    Repair,
    ReportAs,
    Source,
    StageKeepRecentTokens,
    StatsFile,
    TokenMethod,
    Tools,
    read_one,
    report_kind,
)
from compactcli.cli.runner import guarded, stdin_hint
from compactcli.cli.stage_output import finish_stage, stage_destination


@guarded
def prune_command(
    source: Source = "-",
    *,
    output: OutputFile = None,
    in_place: InPlace = False,
    keep_recent_tokens: StageKeepRecentTokens = 40_000,
    keep_recent: KeepRecent = None,
    min_chars: MinChars = 200,
    tools: Tools = None,
    dedupe: Dedupe = True,
    images: Images = True,
    archive: Archive = None,
    method: TokenMethod = "heuristic",
    format: Format = None,
    on_bad_line: OnBadLine = BadLinePolicy.error,
    dry_run: DryRun = False,
    stats: StatsFile = None,
    boundary: BoundaryFile = None,
    repair: Repair = False,
    quiet: Quiet = False,
    json: Json = False,
    as_: As = ReportAs.table,
) -> None:
    """Clear the content of old tool results, keeping each call paired with its result.

    A cleared result keeps its id and gets a one-line digest: tool, main argument, size and the
    sha256 of the content (kept in --archive when given). When nothing qualifies the output is
    the input, byte for byte.

    Examples:

    \b
      compactcli prune session.jsonl -o pruned.jsonl
      compactcli prune session.jsonl --keep-recent 3 --archive archive -o pruned.jsonl
    """
    from compactcli.formats import get_dialect
    from compactcli.stages.prune import PruneOptions, prune
    from compactcli.tokens import get_counter

    seen = stage_destination(
        source,
        output,
        in_place=in_place,
        dry_run=dry_run,
        stats=stats,
        boundary=boundary,
        archive=archive,
    )
    stdin_hint([source])
    admitted = admit_input(read_one(source, format, on_bad_line), repair)
    transcript = admitted.transcript
    dialect = get_dialect(transcript.format)
    counter = get_counter(method, model=dialect.model(transcript), format=transcript.format)
    transcript = admitted.staged(counter)
    options = PruneOptions(
        keep_recent_tokens=keep_recent_tokens,
        keep_recent=keep_recent,
        min_chars=min_chars,
        tools=frozenset(t.strip() for t in tools.split(",") if t.strip()) if tools else None,
        dedupe=dedupe,
        images=images,
        archive=None if dry_run else archive,
    )
    result = prune(transcript, options, counter=counter)
    refuse_invalid_result(transcript, result)
    finish_stage(
        transcript,
        result,
        output=output,
        dry_run=dry_run,
        stats=stats,
        boundary=boundary,
        counter=counter,
        in_place=in_place,
        seen=seen,
        archive=options.archive,
        report_as=report_kind(json, as_).value,
    )
