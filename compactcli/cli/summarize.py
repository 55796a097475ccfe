"""`compactcli summarize`: replace the old middle of a conversation with one summary."""

from __future__ import annotations

from compactcli.cli.admission import admit_input, refuse_invalid_result
from compactcli.cli.options import (
    ApiBase,
    Archive,
    As,
    BadLinePolicy,
    BoundaryFile,
    CutTurn,
    DryRun,
    Focus,
    Format,
    InPlace,
    Json,
    LlmModel,
    NoRedact,
    OnBadLine,
    OutputFile,
    ProtectFirst,
    Quiet,
    Repair,
    ReportAs,
    Source,
    StageKeepRecentTokens,
    StatsFile,
    SummarizerName,
    SummaryTokens,
    Timeout,
    TokenMethod,
    read_one,
    report_kind,
)
from compactcli.cli.runner import guarded, stdin_hint
from compactcli.cli.stage_output import finish_stage, stage_destination
from compactcli.errors import UsageError


@guarded
def summarize_command(
    source: Source = "-",
    *,
    output: OutputFile = None,
    in_place: InPlace = False,
    keep_recent_tokens: StageKeepRecentTokens = 20_000,
    protect_first: ProtectFirst = 0,
    cut_turn: CutTurn = False,
    summary_tokens: SummaryTokens = None,
    focus: Focus = None,
    summarizer: SummarizerName = "extractive",
    model: LlmModel = None,
    api_base: ApiBase = None,
    timeout: Timeout = None,
    no_redact: NoRedact = False,
    method: TokenMethod = "heuristic",
    format: Format = None,
    on_bad_line: OnBadLine = BadLinePolicy.error,
    dry_run: DryRun = False,
    stats: StatsFile = None,
    boundary: BoundaryFile = None,
    archive: Archive = None,
    repair: Repair = False,
    quiet: Quiet = False,
    json: Json = False,
    as_: As = ReportAs.table,
) -> None:
    """Replace the old middle of the conversation with one structured summary.

    The head (system and developer prompts, --protect-first messages) and the newest
    --keep-recent-tokens are kept as they are; what lies between is summarized and written in
    the format's own summary record. The last user prompt is kept with its turn; when that
    turn alone is larger than 1.5 times --keep-recent-tokens and nothing before it can be
    summarized (or with --cut-turn), the turn is cut instead and its prompt quoted verbatim at
    the end of the summary, as the task to carry on. When there is nothing worth summarizing,
    or the summary would not make the context smaller, the output is the input, byte for byte.

    Examples:

    \b
      compactcli summarize session.jsonl -o summarized.jsonl
      compactcli prune session.jsonl | compactcli summarize -o compacted.jsonl
      compactcli summarize session.jsonl --focus "the failing migration" --dry-run
    """
    from compactcli import console
    from compactcli.formats import get_dialect
    from compactcli.stages.summarize import SummarizeOptions, summarize
    from compactcli.summarizers import SUMMARIZERS, get_summarizer, require_llm
    from compactcli.tokens import get_counter

    if summarizer not in SUMMARIZERS:
        raise UsageError(
            f"--summarizer must be one of {', '.join(SUMMARIZERS)}, not {summarizer!r}"
        )
    if summarizer == "llm":
        require_llm()
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
    settings: dict[str, object] = {}
    if summarizer == "llm":
        settings = {"model": model, "api_base": api_base}
        if timeout is not None:  # else the summarizer's own (120 s)
            settings["timeout"] = timeout
    backend = get_summarizer(summarizer, **settings)
    options = SummarizeOptions(
        keep_recent_tokens=keep_recent_tokens,
        protect_first=protect_first,
        cut_turn=cut_turn,
        summary_tokens=summary_tokens,
        focus=focus or None,
        redact=not no_redact,
    )
    result = summarize(transcript, options, summarizer=backend, counter=counter)
    details = result.stats[-1].details
    info = details.get("summarize", {})
    for warning in info.get("warnings", ()):
        console.warning(f"{transcript.source}: {warning}")
    if "reason" in details:
        console.say(f"{transcript.source}: unchanged: {details['reason']}")
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
        archive=archive,
        report_as=report_kind(json, as_).value,
    )
