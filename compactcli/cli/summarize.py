"""`compactcli summarize`: replace the old middle of a conversation with one summary."""

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
def summarize_command(
    source: Source = "-",
    *,
    output: Output = "-",
    in_place: InPlace = False,
    keep_recent_tokens: Annotated[
        int,
        typer.Option(
            min=0,
            help="Keep the newest messages up to this many tokens as they are (at least the "
            "last user prompt, unless its turn is cut, and 3 messages; up to 1.5 times this to "
            "keep a tool call whole).",
            metavar="TOKENS",
        ),
    ] = 20_000,
    protect_first: Annotated[
        int,
        typer.Option(
            min=0,
            help="Also keep the first N messages (after the system and developer prompts).",
            metavar="N",
        ),
    ] = 0,
    cut_turn: Annotated[
        bool,
        typer.Option(
            "--cut-turn",
            help="When the current turn alone is larger than 1.5 times --keep-recent-tokens, "
            "cut inside it and quote its prompt verbatim at the end of the summary. Without it, "
            "only a turn with nothing before it to summarize (a session of one prompt) is cut.",
        ),
    ] = False,
    summary_tokens: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Token budget of the summary; default: a tenth of what it replaces, 400 to 8,000.",
            show_default=False,
            metavar="TOKENS",
        ),
    ] = None,
    focus: Annotated[
        str | None,
        typer.Option(
            help="Give what mentions these words the larger share of the summary.",
            show_default=False,
            metavar="TEXT",
        ),
    ] = None,
    summarizer: Annotated[
        str,
        typer.Option(
            help="extractive (offline, deterministic) or llm (through litellm; needs --model).",
            envvar="COMPACTCLI_SUMMARIZER",
            metavar="extractive|llm",
        ),
    ] = "extractive",
    model: Annotated[
        str | None,
        typer.Option(
            help="The summarizer model for --summarizer llm, as litellm names it.",
            envvar="COMPACTCLI_MODEL",
            show_default=False,
            metavar="PROVIDER/MODEL",
        ),
    ] = None,
    api_base: Annotated[
        str | None,
        typer.Option(
            help="Base URL of the model's API (a local server: Ollama, vLLM, ...).",
            envvar="COMPACTCLI_API_BASE",
            show_default=False,
            metavar="URL",
        ),
    ] = None,
    timeout: Annotated[
        float,
        typer.Option(
            min=0.001, help="Seconds to wait for one LLM answer before retrying.", metavar="SECONDS"
        ),
    ] = 120.0,
    no_redact: Annotated[
        bool,
        typer.Option(
            "--no-redact",
            help="Do not redact secrets from what is sent to an LLM and from the summary.",
        ),
    ] = False,
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
    """Replace the old middle of the conversation with one structured summary.

    The head (system and developer prompts, --protect-first messages) and the newest
    --keep-recent-tokens are kept as they are; what lies between is summarized and written in
    the format's own summary record. The last user prompt is kept with its turn; when that
    turn alone is larger than 1.5 times --keep-recent-tokens and nothing before it can be
    summarized (or with --cut-turn), the turn is cut instead and its prompt quoted verbatim at
    the end of the summary, as the task to carry on. When there is nothing worth summarizing,
    or the summary would not make the context smaller, the output is the input, byte for byte.
    """
    from compactcli import console
    from compactcli.dialects import get_dialect
    from compactcli.summarize import SummarizeOptions, summarize
    from compactcli.summarizers import SUMMARIZERS, get_summarizer
    from compactcli.tokens import get_counter

    if method not in ("heuristic", "exact"):
        raise UsageError(f"--method must be heuristic or exact, not {method!r}")
    if summarizer not in SUMMARIZERS:
        raise UsageError(
            f"--summarizer must be one of {', '.join(SUMMARIZERS)}, not {summarizer!r}"
        )
    seen = stage_destination(
        source,
        output,
        in_place=in_place,
        dry_run=dry_run,
        stats=stats,
        boundary=boundary,
    )
    stdin_hint([source])
    admitted = admit_input(read_one(source, format, on_bad_line), repair)
    transcript = admitted.transcript
    dialect = get_dialect(transcript.format)
    counter = get_counter(method, model=dialect.model(transcript), format=transcript.format)
    transcript = admitted.staged(counter)
    settings: dict[str, object] = {}
    if summarizer == "llm":
        settings = {"model": model, "api_base": api_base, "timeout": timeout}
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
        console.stderr().print(f"{transcript.source}: unchanged: {details['reason']}")
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
