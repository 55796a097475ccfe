"""`compactcli prune`: clear old tool output (no LLM)."""

from __future__ import annotations

from typing import Annotated

import typer

from compactcli.cli.admission import RepairOption, admit_input, refuse_invalid_result
from compactcli.cli.options import BadLinePolicy, Format, OnBadLine, Source, read_one
from compactcli.cli.runner import guarded, stdin_hint
from compactcli.cli.stage_output import (
    BoundaryFile,
    DryRun,
    InPlace,
    Output,
    StatsFile,
    finish_stage,
    stage_destination,
)
from compactcli.errors import UsageError


@guarded
def prune_command(
    source: Source = "-",
    *,
    output: Output = "-",
    in_place: InPlace = False,
    keep_recent_tokens: Annotated[
        int,
        typer.Option(
            min=0,
            help="Keep whole the newest tool output up to this many tokens.",
            envvar="COMPACTCLI_KEEP_RECENT_TOKENS",
            metavar="TOKENS",
        ),
    ] = 40_000,
    keep_recent: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="Keep whole the newest N tool results (instead of a token budget).",
            show_default=False,
            metavar="N",
        ),
    ] = None,
    min_chars: Annotated[
        int,
        typer.Option(
            min=0, help="Clear only results longer than this many characters.", metavar="CHARS"
        ),
    ] = 200,
    tools: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated tool names whose output may be cleared (any case); default: "
            "file reads, shell, search, web fetch and edit tools.",
            show_default=False,
            metavar="NAMES",
        ),
    ] = None,
    dedupe: Annotated[
        bool, typer.Option(help="Clear older copies of an output repeated later.")
    ] = True,
    images: Annotated[bool, typer.Option(help="Replace old images with a marker.")] = True,
    archive: Annotated[
        str | None,
        typer.Option(
            help="Keep every cleared content in this folder, named by its sha256.",
            envvar="COMPACTCLI_ARCHIVE",
            show_default=False,
            metavar="DIR",
        ),
    ] = None,
    method: Annotated[
        str,
        typer.Option(
            help="How the figures count tokens: heuristic or exact (tiktoken).",
            metavar="heuristic|exact",
        ),
    ] = "heuristic",
    format: Format = None,
    on_bad_line: OnBadLine = BadLinePolicy.error,
    dry_run: DryRun = False,
    stats: StatsFile = None,
    boundary: BoundaryFile = None,
    repair: RepairOption = False,
) -> None:
    """Clear the content of old tool results, keeping each call paired with its result.

    A cleared result keeps its id and gets a one-line digest: tool, main argument, size and the
    sha256 of the content (kept in --archive when given). When nothing qualifies the output is
    the input, byte for byte.
    """
    from compactcli.dialects import get_dialect
    from compactcli.prune import PruneOptions, prune
    from compactcli.tokens import get_counter

    if method not in ("heuristic", "exact"):
        raise UsageError(f"--method must be heuristic or exact, not {method!r}")
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
    )
