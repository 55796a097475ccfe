"""What every transcript-writing command does with its result.

`finish_stage` writes the result transcript (standard output or `-o FILE`, atomically), or with
`--dry-run` writes nothing and prints the diff instead; appends the stats report to `--stats
FILE`; writes the boundary details to `--boundary FILE`; and shows a short stats table on
standard error when that is a terminal. Records only ever go to standard output.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TextIO

import orjson
import typer

from compactcli.errors import OutputError

if TYPE_CHECKING:
    from compactcli.diff import DiffReport
    from compactcli.tokens import TokenCounter
    from compactcli.transcript import Transcript

Output = Annotated[
    str,
    typer.Option(
        "--output",
        "-o",
        help="Where to write the transcript; - is standard output.",
        metavar="FILE",
    ),
]
DryRun = Annotated[
    bool,
    typer.Option("--dry-run", help="Write nothing; show what would change (the diff)."),
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
    ),
]


def _append_json_line(path: Path, data: Any) -> None:
    try:
        with path.open("ab") as handle:
            handle.write(orjson.dumps(data) + b"\n")
    except OSError as error:
        raise OutputError.cannot_write(path, error) from None


def _write_json(path: Path, data: Any) -> None:
    try:
        path.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")
    except OSError as error:
        raise OutputError.cannot_write(path, error) from None


def finish_stage(
    before: Transcript,
    after: Transcript,
    *,
    output: str,
    dry_run: bool,
    stats: Path | None,
    boundary: Path | None,
    counter: TokenCounter,
) -> None:
    """Write (or, dry, show) the result of a stage command and its reports."""
    from compactcli.diff import diff
    from compactcli.loading import write_transcript
    from compactcli.stats import report

    if dry_run:
        print_diff(diff(before, after, counter=counter))
    else:
        write_transcript(after, output, mode_from=None)
    data = report(after)
    if stats is not None and not dry_run:
        _append_json_line(stats, data)
    if boundary is not None and not dry_run:
        details = [s.details["boundary"] for s in after.stats if "boundary" in s.details]
        _write_json(boundary, details[-1] if details else None)
    if sys.stderr.isatty():
        print_stats(data)


_STYLES = {"cleared": "yellow", "edited": "magenta", "removed": "red", "added": "green"}


def print_diff(report: DiffReport, *, file: TextIO | None = None) -> None:
    """The diff of two transcripts: coloured on a terminal, plain text in a pipe."""
    from rich.console import Console
    from rich.text import Text

    from compactcli.diff import summary_lines

    out = Console(file=file or sys.stdout, highlight=False, soft_wrap=True)
    lines = summary_lines(report)
    if not out.is_terminal:
        for line in lines:
            out.print(line, markup=False)
        return
    for line in lines:
        kind = line.strip().split(" ", 1)[0]
        style = _STYLES.get(kind, "") if line.startswith("  ") else "bold"
        out.print(Text(line, style=style))


def print_stats(data: Mapping[str, Any]) -> None:
    """A short table of what each stage did, on standard error."""
    from compactcli import console

    rows = []
    for stage in data.get("stages", []):
        saved = stage["tokens_before"] - stage["tokens_after"]
        cleared = stage["results_cleared"] + stage["duplicates_cleared"]
        rows.append(
            [
                stage["stage"],
                f"{stage['tokens_before']:,}",
                f"{stage['tokens_after']:,}",
                f"{saved:,}",
                str(cleared),
                stage["method"],
            ]
        )
    columns = ["stage", "tokens before", "after", "saved", "cleared", "method"]
    console.stderr().print(console.table(columns, rows, right=(1, 2, 3, 4)))
