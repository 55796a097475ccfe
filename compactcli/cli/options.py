"""Options shared by several commands, spelled once so every command spells them the same."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from compactcli.errors import InputError

if TYPE_CHECKING:
    from compactcli.transcript import Transcript


class FormatName(StrEnum):
    """Transcript formats, as `--format` accepts them (same order as compactcli.dialects)."""

    claude_code = "claude-code"
    codex = "codex"
    codex_legacy = "codex-legacy"
    pi = "pi"
    openai = "openai"
    openai_responses = "openai-responses"
    anthropic = "anthropic"


class BadLinePolicy(StrEnum):
    """What to do with a line that is not a JSON object."""

    error = "error"
    skip = "skip"
    keep = "keep"


Paths = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="PATH",
        help="Transcript files, folders (every *.jsonl below them), or - for standard input.",
        show_default=False,
    ),
]
Format = Annotated[
    FormatName | None,
    typer.Option(
        "--format",
        "-f",
        help="Transcript format; detected from the first records when not given.",
        envvar="COMPACTCLI_FORMAT",
        show_default=False,
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
        help="Where to write the transcript (one input); - is standard output, the default.",
        show_default=False,
        metavar="FILE",
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
    ),
]
Json = Annotated[
    bool, typer.Option("--json", help="Machine-readable output: one JSON object per file.")
]
OnBadLine = Annotated[
    BadLinePolicy,
    typer.Option(
        "--on-bad-line",
        help="A line that is not a JSON object: stop (error), leave it out and report it "
        "(skip), or carry it through unparsed (keep).",
        envvar="COMPACTCLI_ON_BAD_LINE",
    ),
]


def format_name(value: FormatName | None) -> str | None:
    return value.value if value is not None else None


def read_one(path: str, format: FormatName | None, on_bad_line: BadLinePolicy) -> Transcript:
    """Read one transcript; lines left out or kept under `--on-bad-line` become warnings."""
    from compactcli import console, jsonl
    from compactcli.loading import read_transcript

    policy: jsonl.OnBadLine = on_bad_line.value
    bad = jsonl.BadLines()
    transcript = read_transcript(path, format_name(format), on_bad_line=policy, bad=bad)
    verb = "skipped" if policy == "skip" else "kept unparsed"
    for lineno, reason in bad.lines:
        console.warning(f"{transcript.source}:{lineno}: {verb}: {reason}")
    return transcript


def read_inputs(
    files: Sequence[str], format: FormatName | None, on_bad_line: BadLinePolicy
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
