"""Every option that more than one command takes, declared once as an `Annotated` alias, so its
flag, help text, help panel (`compactcli.cli.panels`), variable and checks are the same in every
command that takes it; and the reading of transcripts those commands share. A default that
differs between commands is given where the alias is used (`--keep-recent-tokens`, whose absence
means more in `compact`, has an alias for `compact` and one for the stages, built from one
declaration). A flag that means something else in one command has a second alias here, named
for that command or meaning, which says why (`ValidateQuiet`, `EstimateMethod`, `CountingModel`,
`RestoreArchive`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from compactcli.cli.panels import (
    ARCHIVE,
    INPUT,
    KEPT_TAIL,
    LIMITS,
    PRUNING,
    REPORTS,
    RUNNING,
    SUMMARY,
    WHERE,
)
from compactcli.errors import InputError
from compactcli.formats import FORMATS

if TYPE_CHECKING:
    from compactcli.transcript import Transcript


def _counting_method(value: str) -> str:
    """`value` when it names a method the stages count with (`estimate` takes more)."""
    if value not in ("heuristic", "exact"):
        from compactcli.cli.runner import usage_error

        usage_error(f"--method must be heuristic or exact, not {value!r}")
    return value


def _quiet(value: bool) -> bool:
    """`-q`: errors only on standard error, for the whole command (`compactcli.console`); set
    for every run, so a command run in-process after a quiet one is not quiet."""
    from compactcli import console

    console.set_quiet(value)
    return value


def _known_format(value: str | None) -> str | None:
    """`value` when it names a registered format (`compactcli.formats`)."""
    if value is not None and value not in FORMATS:
        known = ", ".join(repr(name) for name in FORMATS)
        raise typer.BadParameter(f"{value!r} is not one of {known}.")
    return value


class BadLinePolicy(StrEnum):
    """What to do with a line that is not a JSON object."""

    error = "error"
    skip = "skip"
    keep = "keep"


Verbose = Annotated[
    bool,
    typer.Option(
        "--verbose",
        "-v",
        help="Say on standard error, for each file, the policy file whose settings apply (or "
        "none), the format, and how it was counted.",
        rich_help_panel=REPORTS,
    ),
]


def _quiet_flag(help: str) -> Any:
    """`--quiet`/`-q` (errors only on standard error, `_quiet`), with `help`."""
    return typer.Option(
        "--quiet", "-q", callback=_quiet, is_eager=True, help=help, rich_help_panel=REPORTS
    )


Quiet = Annotated[
    bool,
    _quiet_flag("Errors only on standard error: no warnings, notes, progress or stats tables."),
]
ValidateQuiet = Annotated[
    bool,
    _quiet_flag(
        "Only the errors of invalid files and their verdict: no warnings, nothing for a "
        "valid file (the exit code says it)."
    ),
]
"""`validate`'s `-q`: `Quiet` on standard error, and more: validate's findings are its output,
so its `-q` also leaves out a valid file's lines and every warning on standard output, which its
own help says."""
Paths = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="[PATH]...",
        help="Transcript files, folders (every *.jsonl below them), or - for standard input.",
        show_default=False,
    ),
]
Format = Annotated[
    str | None,
    typer.Option(
        "--format",
        "-f",
        metavar="[" + "|".join(FORMATS) + "]",
        callback=_known_format,
        autocompletion=lambda: list(FORMATS),
        help="Transcript format; detected from the first records when not given.",
        envvar="COMPACTCLI_FORMAT",
        show_default=False,
        rich_help_panel=INPUT,
    ),
]
Source = Annotated[
    str,
    typer.Argument(metavar="INPUT", help="Transcript file, or - (the default) for standard input."),
]
OutputFile = Annotated[
    str | None,
    typer.Option(
        "--output",
        "-o",
        help="Where to write the transcript (one input); - is standard output, the default "
        "when that is not a terminal.",
        show_default=False,
        metavar="FILE",
        rich_help_panel=WHERE,
    ),
]
OutDir = Annotated[
    str | None,
    typer.Option(
        "--out-dir",
        help="Write each result into this folder, under the same name (files of an input "
        "folder keep their path below it).",
        show_default=False,
        metavar="DIR",
        rich_help_panel=WHERE,
    ),
]
Json = Annotated[
    bool,
    typer.Option(
        "--json", help="Machine-readable output: one JSON object per line.", rich_help_panel=REPORTS
    ),
]


class ReportAs(StrEnum):
    """How a command prints its results (`--as`)."""

    table = "table"
    json = "json"
    csv = "csv"
    tsv = "tsv"


As = Annotated[
    ReportAs,
    typer.Option(
        "--as",
        help="How results are printed: a table, JSON lines (as --json), or CSV or TSV rows "
        "(a header, then one row per file, whole paths, numbers without separators).",
        case_sensitive=False,
        rich_help_panel=REPORTS,
    ),
]


def report_kind(json: bool, given: ReportAs) -> ReportAs:
    """What `--json` and `--as` ask for together: JSON when either says so."""
    return ReportAs.json if json else given


OnBadLine = Annotated[
    BadLinePolicy,
    typer.Option(
        "--on-bad-line",
        help="A line that is not a JSON object: stop (error), leave it out and report it "
        "(skip), or carry it through unparsed (keep).",
        envvar="COMPACTCLI_ON_BAD_LINE",
        rich_help_panel=INPUT,
    ),
]


# ---------------------------------------------------------------------------------------------
# where the results go (compact, prune, summarize, redact)

InPlace = Annotated[
    bool,
    typer.Option(
        "--in-place",
        help="Replace each input file that changes, atomically; the original is kept next to it "
        "as FILE.bak (FILE.1.bak, ... when that exists).",
        rich_help_panel=WHERE,
    ),
]
DryRun = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        help="Write nothing; show what would change: the diff, or for redact the secrets found.",
        rich_help_panel=WHERE,
    ),
]
Repair = Annotated[
    bool,
    typer.Option(
        "--repair",
        help="Repair an input that fails validate as its agent does on load (a placeholder "
        "result for each unanswered call, results without a call dropped, duplicate ids and "
        "broken chains resolved), one line per repair on standard error, then go on. Without "
        "it such an input is refused (exit 1) and nothing is written.",
        rich_help_panel=INPUT,
    ),
]


def _a_file(value: Path | None) -> Path | None:
    """A report file, never `-`: standard output carries the transcript or the results."""
    if value is not None and str(value) == "-":
        raise typer.BadParameter("standard output carries the results; give a file name")
    return value


StatsFile = Annotated[
    Path | None,
    typer.Option(
        "--stats",
        help="Append the stats report (one JSON line per run) to this file.",
        envvar="COMPACTCLI_STATS",
        show_default=False,
        callback=_a_file,
        metavar="FILE",
        rich_help_panel=REPORTS,
    ),
]
BoundaryFile = Annotated[
    Path | None,
    typer.Option(
        "--boundary",
        help="Write the boundary details (JSON) to this file; the only record of a compaction "
        "for plain message lists, which have no place for one.",
        show_default=False,
        callback=_a_file,
        metavar="FILE",
        rich_help_panel=REPORTS,
    ),
]

# ---------------------------------------------------------------------------------------------
# counting and limits (compact, estimate; --method heuristic|exact: compact, prune, summarize,
# diff)

TokenMethod = Annotated[
    str,
    typer.Option(
        "--method",
        help="How tokens are counted: heuristic or exact (tiktoken).",
        metavar="heuristic|exact",
        callback=_counting_method,
        autocompletion=lambda: ["heuristic", "exact"],
        rich_help_panel=INPUT,
    ),
]


class MethodName(StrEnum):
    """How `estimate` counts tokens (see `compactcli.estimate`)."""

    auto = "auto"
    heuristic = "heuristic"
    exact = "exact"
    usage = "usage"
    calibrated = "calibrated"


EstimateMethod = Annotated[
    MethodName,
    typer.Option(
        "--method",
        "-m",
        help="auto: the last recorded usage plus an estimate of what follows it (heuristic "
        "where nothing was recorded); heuristic: per-block rules; exact: tiktoken; usage: what "
        "the agent recorded; calibrated: the heuristic fitted on this transcript's usage. "
        "Under a policy file: its method (heuristic unless it says exact), as compact counts.",
        envvar="COMPACTCLI_METHOD",
        rich_help_panel=INPUT,
    ),
]
"""`estimate`'s `--method`: `TokenMethod`'s two methods and three more that read the usage the
agent recorded, which describes the transcript as the agent read it, not one a stage rewrote;
so a second alias, with its own values, `-m` and default."""
Jobs = Annotated[
    int,
    typer.Option(
        "--jobs",
        "-j",
        min=0,
        help="Files processed in parallel (0: one per CPU).",
        metavar="N",
        rich_help_panel=RUNNING,
    ),
]


class EngineName(StrEnum):
    """Where the files are processed (`--engine`)."""

    local = "local"
    ray = "ray"


Engine = Annotated[
    EngineName,
    typer.Option(
        "--engine",
        help="local: processes on this machine (--jobs); ray: Ray tasks on the Ray at "
        "--address, or on a local Ray started for the run (pip install 'compactcli[ray]'; "
        "workers read the files by path).",
        case_sensitive=False,
        rich_help_panel=RUNNING,
    ),
]
Address = Annotated[
    str | None,
    typer.Option(
        "--address",
        help="The Ray of --engine ray: auto (the one 'ray start' runs here) or ray://HOST:PORT; "
        "default: a local Ray started for the run.",
        show_default=False,
        metavar="ADDRESS",
        rich_help_panel=RUNNING,
    ),
]
ContextWindow = Annotated[
    int | None,
    typer.Option(
        "--context-window",
        min=1,
        help="Context window in tokens; default: the window of the transcript's model (for "
        "estimate: of --model when given).",
        show_default=False,
        metavar="TOKENS",
        rich_help_panel=LIMITS,
    ),
]
Threshold = Annotated[
    str | None,
    typer.Option(
        "--threshold",
        help="Compaction threshold: an agent's own rule (claude-code, codex, pi, opencode, "
        "hermes), a percentage of the window such as 80%, or a token count; default: the rule "
        "of the agent that wrote the format (80% for message lists).",
        envvar="COMPACTCLI_THRESHOLD",
        show_default=False,
        metavar="RULE",
        rich_help_panel=LIMITS,
    ),
]
MaxTokens = Annotated[
    int | None,
    typer.Option(
        "--max-tokens",
        min=0,
        help="CI budget: exit 1 when a file's context is over this many tokens.",
        envvar="COMPACTCLI_MAX_TOKENS",
        show_default=False,
        metavar="TOKENS",
        rich_help_panel=LIMITS,
    ),
]
FailOnThreshold = Annotated[
    bool,
    typer.Option(
        "--fail-on-threshold",
        help="Exit 1 when a file's context reaches the threshold.",
        rich_help_panel=LIMITS,
    ),
]

# ---------------------------------------------------------------------------------------------
# the kept tail (compact, prune, summarize)

_KEEP_RECENT_TOKENS_VARIABLE = "COMPACTCLI_KEEP_RECENT_TOKENS"


def _keep_recent_tokens(envvar: str | None) -> Any:
    """`--keep-recent-tokens`, reading `envvar` when one is given."""
    return typer.Option(
        "--keep-recent-tokens",
        min=0,
        help="Keep the newest this many tokens as they are: whole tool output when pruning "
        "(default: 40,000), the tail of the conversation when summarizing (default: 20,000; "
        "at least the last user prompt, unless its turn is cut, and 3 messages; up to 1.5 "
        "times this to keep a tool call whole). Not given, compact lowers the tail when it "
        "would leave the result over the budget.",
        envvar=envvar,
        show_default=False,
        metavar="TOKENS",
        rich_help_panel=KEPT_TAIL,
    )


KeepRecentTokens = Annotated[int | None, _keep_recent_tokens(_KEEP_RECENT_TOKENS_VARIABLE)]
"""compact's: None leaves each stage its own default, and the tail free to be fitted."""
StageKeepRecentTokens = Annotated[int, _keep_recent_tokens(_KEEP_RECENT_TOKENS_VARIABLE)]
"""prune's and summarize's (each default given where it is used)."""

# ---------------------------------------------------------------------------------------------
# the summarizer (compact, summarize)

SummarizerName = Annotated[
    str,
    typer.Option(
        "--summarizer",
        help="extractive (offline, deterministic) or llm (through litellm, the compactcli[llm] "
        "extra; needs --model).",
        envvar="COMPACTCLI_SUMMARIZER",
        metavar="extractive|llm",
        rich_help_panel=SUMMARY,
    ),
]
LlmModel = Annotated[
    str | None,
    typer.Option(
        "--model",
        help="The model of --summarizer llm, as litellm names it.",
        envvar="COMPACTCLI_MODEL",
        show_default=False,
        metavar="PROVIDER/MODEL",
        rich_help_panel=SUMMARY,
    ),
]
CountingModel = Annotated[
    str | None,
    typer.Option(
        "--model",
        help="Model whose window, output limit and tokenizer apply; default: the transcript's.",
        show_default=False,
        metavar="PROVIDER/MODEL",
        rich_help_panel=LIMITS,
    ),
]
"""`estimate`'s `--model`: the model a count is made for, where `LlmModel` is the model that
writes a summary; the same flag and variable, another meaning, so a second alias."""
ApiBase = Annotated[
    str | None,
    typer.Option(
        "--api-base",
        help="Base URL of the LLM server (Ollama, vLLM, a proxy, ...).",
        envvar="COMPACTCLI_API_BASE",
        show_default=False,
        metavar="URL",
        rich_help_panel=SUMMARY,
    ),
]
Timeout = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        min=0.001,
        help="Seconds to wait for one LLM answer before retrying; default: 120.",
        show_default=False,
        metavar="SECONDS",
        rich_help_panel=SUMMARY,
    ),
]
SummaryTokens = Annotated[
    int | None,
    typer.Option(
        "--summary-tokens",
        min=1,
        help="The summary's budget in tokens; default: a tenth of what it replaces, 400 to 12,000.",
        show_default=False,
        metavar="TOKENS",
        rich_help_panel=SUMMARY,
    ),
]
ProtectFirst = Annotated[
    int,
    typer.Option(
        "--protect-first",
        min=0,
        help="Keep the first N messages (after the system and developer prompts) as they are.",
        metavar="N",
        rich_help_panel=SUMMARY,
    ),
]
CutTurn = Annotated[
    bool,
    typer.Option(
        "--cut-turn",
        help="When the current turn alone is larger than 1.5 times --keep-recent-tokens, cut "
        "inside it and quote its prompt verbatim at the end of the summary. Without it, only a "
        "turn with nothing before it to summarize (a session of one prompt) is cut, and in "
        "compact also one when nothing else brings the result under its limits; compact with "
        "--max-tokens may cut it from the first try.",
        rich_help_panel=SUMMARY,
    ),
]
Focus = Annotated[
    str | None,
    typer.Option(
        "--focus",
        help="Topics the summary gives the larger share to.",
        show_default=False,
        metavar="TEXT",
        rich_help_panel=SUMMARY,
    ),
]
NoRedact = Annotated[
    bool,
    typer.Option(
        "--no-redact",
        help="Do not redact secrets from what is sent to an LLM and from the summary.",
        rich_help_panel=SUMMARY,
    ),
]

# ---------------------------------------------------------------------------------------------
# pruning (compact, prune)

KeepRecent = Annotated[
    int | None,
    typer.Option(
        "--keep-recent",
        min=0,
        help="Keep whole the newest N tool results (instead of a token budget).",
        show_default=False,
        metavar="N",
        rich_help_panel=PRUNING,
    ),
]
MinChars = Annotated[
    int,
    typer.Option(
        "--min-chars",
        min=0,
        help="Clear only tool results longer than this many characters.",
        metavar="CHARS",
        rich_help_panel=PRUNING,
    ),
]
Tools = Annotated[
    str | None,
    typer.Option(
        "--tools",
        help="Comma-separated tool names whose output may be cleared (any case); default: "
        "file reads, shell, search, web fetch and edit tools.",
        show_default=False,
        metavar="NAMES",
        rich_help_panel=PRUNING,
    ),
]
Dedupe = Annotated[
    bool,
    typer.Option(
        "--dedupe/--no-dedupe",
        help="Clear older copies of a tool output repeated later.",
        rich_help_panel=PRUNING,
    ),
]
Images = Annotated[
    bool,
    typer.Option(
        "--images/--no-images", help="Replace old images with a marker.", rich_help_panel=PRUNING
    ),
]
Archive = Annotated[
    str | None,
    typer.Option(
        "--archive",
        help="Keep every cleared content in this folder, named by its sha256, and all that "
        "compactcli restore needs to undo the run.",
        envvar="COMPACTCLI_ARCHIVE",
        show_default=False,
        metavar="DIR",
        rich_help_panel=ARCHIVE,
    ),
]

RestoreArchive = Annotated[
    str | None,
    typer.Option(
        "--archive",
        help="The archive the compaction was written with: it holds the cleared tool outputs "
        "and left-out lines to put back, and the undo of formats that keep none in the file.",
        envvar="COMPACTCLI_ARCHIVE",
        show_default=False,
        metavar="DIR",
        rich_help_panel=ARCHIVE,
    ),
]
"""`restore`'s `--archive`: the folder `Archive` wrote, read back; the same flag and variable,
so one setting serves both, with help that says what restore takes from it."""


def read_one(path: str, format: str | None, on_bad_line: BadLinePolicy) -> Transcript:
    """Read one transcript; lines left out or kept under `--on-bad-line` become warnings."""
    from compactcli import console, jsonl
    from compactcli.loading import read_transcript

    policy: jsonl.OnBadLine = on_bad_line.value
    bad = jsonl.BadLines()
    transcript = read_transcript(path, format, on_bad_line=policy, bad=bad)
    verb = "skipped" if policy == "skip" else "kept unparsed"
    for lineno, reason in bad.lines:
        console.warning(f"{transcript.source}:{lineno}: {verb}: {reason}")
    return transcript


def read_inputs(
    files: Sequence[str], format: str | None, on_bad_line: BadLinePolicy
) -> Iterator[tuple[str, Transcript | None]]:
    """Read each file; an unreadable one is reported on standard error and yields None."""
    from compactcli import console

    for path in files:
        try:
            transcript = read_one(path, format, on_bad_line)
        except InputError as error:
            console.error(str(error))
            yield path, None
            continue
        yield path, transcript


def given_settings(ctx: typer.Context, names: Iterable[str]) -> frozenset[str]:
    """The `names` an option or a `COMPACTCLI_*` variable set (they beat a policy file)."""
    found = set()
    for name in names:
        source = ctx.get_parameter_source(name)
        if source is not None and source.name in ("COMMANDLINE", "ENVIRONMENT"):
            found.add(name)
    return frozenset(found)
