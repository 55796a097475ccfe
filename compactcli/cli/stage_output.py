"""What every transcript-writing command does with its result.

`stage_destination` checks, before anything is read, where the results may go; `finish_stage`
writes the result transcript (or, with `--dry-run`, shows its diff instead), the reports
`--stats` and `--boundary` ask for, and a short stats table on a terminal's standard error;
`run_files` runs a command that writes one transcript per file and `print_results` reports
its files.
Records only ever go to standard output, and to a terminal only when `-o -` says so
(`refuse_terminal`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import orjson

from compactcli.errors import OutputError, UsageError

if TYPE_CHECKING:
    from compactcli import plain_table
    from compactcli.batch import FileResult
    from compactcli.cli.options import ReportAs
    from compactcli.compact_file import Destination
    from compactcli.diff import DiffReport
    from compactcli.in_place import Identity
    from compactcli.stats import DryRunStageRow, StageRow, StatsReport
    from compactcli.tokens import TokenCounter
    from compactcli.transcript import Transcript


def append_json_lines(path: Path, items: Iterable[object], *, mode: int | None) -> None:
    """Append one JSON line per item to report file `path`, atomically (`atomic.append`)."""
    from compactcli import atomic

    data = b"".join(orjson.dumps(item) + b"\n" for item in items)
    try:
        atomic.append(str(path), data, mode=mode)
    except OSError as error:
        raise OutputError.cannot_write(path, error) from None


def write_json(path: Path, data: object, *, mode: int | None) -> None:
    """Write `data` as indented JSON to report file `path`, atomically (`atomic.write`)."""
    from compactcli import atomic

    body = orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n"
    try:
        atomic.write(str(path), [body], mode=mode, narrow=True)
    except OSError as error:
        raise OutputError.cannot_write(path, error) from None


def refuse_terminal(output: str | None) -> None:
    """A transcript is not written to a terminal unless asked for: with no `-o` and standard
    output a terminal, a `UsageError` says what to use instead (`-o -` writes it there all the
    same, as gzip's `-c` does)."""
    if output is None and sys.stdout.isatty():
        raise UsageError(
            "standard output is a terminal: write the transcript with -o FILE, --out-dir DIR "
            "or --in-place (-o - prints it here)"
        )


def refuse_folder(output: str) -> None:
    """`-o` names the file to write: a folder there is a `UsageError` that names `--out-dir`."""
    import os

    if os.path.isdir(output):
        raise UsageError(
            f"-o {output} is a folder: give a file name, or --out-dir {output} to write each "
            "result into it"
        )


def stage_destination(
    source: str,
    output: str | None,
    *,
    in_place: bool,
    dry_run: bool,
    stats: Path | None,
    boundary: Path | None,
    archive: str | None = None,
) -> Identity | None:
    """Check where a stage command's results go, before its input is read: no output is the
    input or another output (`compactcli.overwrite`), and `--in-place` has a file to replace.
    The input's `file_identity` under `--in-place`, else None."""
    from compactcli import overwrite
    from compactcli.in_place import file_identity

    to_file = output is not None and output != "-"
    if in_place and to_file:
        raise UsageError("-o and --in-place cannot be used together")
    if in_place and source == "-":
        raise UsageError("--in-place needs a file: standard input cannot be replaced")
    if dry_run:
        return None
    if not in_place:
        refuse_terminal(output)
    if to_file and output is not None:
        refuse_folder(output)
    outputs: list[tuple[str, str | None]] = []
    if not in_place and to_file:
        outputs.append(("-o", output))
    outputs += [
        ("--stats", None if stats is None else str(stats)),
        ("--boundary", None if boundary is None else str(boundary)),
        ("--archive", archive),
    ]
    overwrite.check([source], outputs)
    return file_identity(source) if in_place else None


def finish_stage(
    before: Transcript,
    after: Transcript,
    *,
    output: str | None,
    dry_run: bool,
    stats: Path | None,
    boundary: Path | None,
    counter: TokenCounter,
    in_place: bool = False,
    seen: Identity | None = None,
    archive: str | None = None,
    report_as: str = "table",
) -> None:
    """Write (or, dry, show) the result of a stage command and its reports.

    The result transcript goes to standard output when `output` is None or `-`, to the file
    `output` with the input's permission bits, or in place with a backup (`in_place`:
    `compactcli.in_place`); with `dry_run` nothing is written and the diff is printed instead.
    A changed result carries how to undo it (`compactcli.undo.record`, in `archive` too).
    The stats report is appended to `stats` and the last boundary's details written to
    `boundary` (both atomically, `compactcli.atomic`, with the input's permission bits), and a
    short stats table is shown on standard error when that is a terminal. `report_as` `json`
    prints the stats report instead as one JSON line (`stage_json`), with the diff under
    `"diff"` in place of its text on a dry run; `csv` or `tsv` print the table's rows (bare
    numbers), in place of the diff on a dry run; both on standard output, or on standard error
    when the transcript went there. Once the transcript
    is written the run is settled (`compactcli.interrupts.settle`): a Ctrl-C after that no
    longer interrupts it.
    """
    from compactcli import atomic, interrupts, undo
    from compactcli import in_place as replacing
    from compactcli.diff import diff
    from compactcli.jsonl import render
    from compactcli.loading import write_transcript
    from compactcli.stats import report

    mode = atomic.permission_bits(before.source) if before.source != "<stdin>" else None
    changed = any(s.changed for s in after.stats)
    if changed and not dry_run:  # how to undo it (`compactcli restore`)
        after = undo.record(before, after, archive=archive)
    if dry_run and report_as == "table":
        print_diff(diff(before, after, counter=counter))
    elif dry_run:
        pass
    elif in_place:
        if changed:  # else nothing to replace: no write, no backup
            replacing.replace(before.source, list(render(after.records)), seen, final=True)
        interrupts.settle()
    else:
        target = "-" if output is None else output
        with interrupts.held(target != "-"):
            write_transcript(after, target, mode=mode)
            interrupts.settle()
    data = report(after)
    if stats is not None and not dry_run:
        append_json_lines(stats, [data], mode=mode)
    if boundary is not None and not dry_run:
        details = [s.details["boundary"] for s in after.stats if "boundary" in s.details]
        write_json(boundary, details[-1] if details else None, mode=mode)
    to_stdout = not dry_run and not in_place and (output is None or output == "-")
    stream = sys.stderr if to_stdout else sys.stdout  # the transcript's stream stays its own
    if report_as == "json":
        line = stage_json(
            data,
            output=None if dry_run else (before.source if in_place else output or "-"),
            diff=diff(before, after, counter=counter) if dry_run else None,
        )
        print(line, file=stream, flush=True)
    elif report_as in ("csv", "tsv"):
        from compactcli import console

        console.print_rows(stats_table(data), "," if report_as == "csv" else "\t", stream)
    elif sys.stderr.isatty():
        from compactcli import console

        if not console.quiet():
            print_stats(data)


def stage_json(data: StatsReport, *, output: str | None, diff: DiffReport | None) -> str:
    """The `--json` line of `prune` and `summarize` (a `StageRow`; a `DryRunStageRow` on a dry
    run): the stats report, where the transcript went (`output`: a file, `-` for standard
    output, None on a dry run) and, on a dry run, the diff (`compactcli.diff.DiffReport`)."""
    row: StageRow | DryRunStageRow = (
        {**data, "output": output}
        if diff is None
        else {**data, "output": output, "diff": diff.to_dict()}
    )
    return orjson.dumps(row).decode()


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


def stats_table(data: StatsReport) -> plain_table.Table:
    """What each stage did: its tokens before and after, saved, results cleared, method."""
    from compactcli import plain_table

    rows = []
    for stage in data["stages"]:
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
    return plain_table.Table.of(columns, rows, right=(1, 2, 3, 4))


def print_stats(data: StatsReport) -> None:
    """A short table of what each stage did, on standard error."""
    from compactcli import console

    table = stats_table(data)
    console.stderr().print(console.table(table.columns, table.rows, right=sorted(table.right)))


def print_results(
    results: Sequence[FileResult],
    *,
    kind: ReportAs,
    to_stdout: bool,
    table: Callable[[Sequence[FileResult]], plain_table.Table],
    row: Callable[[FileResult], object],
) -> None:
    """Report the results of a command that writes one transcript per file (`redact`,
    `restore`): the `table` of its rows, a JSON `row` per file, or CSV or TSV rows, as `kind`
    says. When a transcript went to standard output (`to_stdout`) the report goes to standard
    error: JSON lines always, the table only on a terminal. A single failed file's error line
    says it all."""
    import typer

    from compactcli import console

    json = kind.value == "json"
    if kind.value in ("csv", "tsv"):  # on standard error when records are out
        separator = "," if kind.value == "csv" else "\t"
        console.print_rows(table(results), separator, sys.stderr if to_stdout else None)
        return
    if not json and len(results) == 1 and results[0].failed:
        return
    if to_stdout:  # standard output carries the transcript
        if json:
            for result in results:
                line = orjson.dumps(row(result)).decode()
                console.stderr().print(line, markup=False, highlight=False)
        elif sys.stderr.isatty() and not console.quiet():
            console.stderr().print(console.rich_totals_table(table(results)))
        return
    if json:
        for result in results:
            typer.echo(orjson.dumps(row(result)).decode())
        return
    console.print_totals_table(table(results))


def run_files(
    files: Sequence[str],
    work: Callable[[str], FileResult],
    destinations: Mapping[str, Destination],
    *,
    kind: ReportAs,
    table: Callable[[Sequence[FileResult]], plain_table.Table],
    row: Callable[[FileResult], object],
    jobs: int = 1,
) -> None:
    """Run a command that writes one transcript per file (`redact`, `restore`, `gc`): `work` on
    each file (`compactcli.batch.run_batch`: `jobs` files at a time in worker processes, 0 one
    per core, so `work` must then pickle; a file that fails, fails alone, its warnings and error
    on standard error as it ends, in input order), then the report (`print_results`), and exit
    with the worst file's code."""
    import os

    import typer

    from compactcli.batch import run_batch

    reraise = os.environ.get("COMPACTCLI_TRACEBACK") == "1"
    results = run_batch(files, work, jobs=jobs, on_result=_problems, reraise=reraise)
    to_stdout = any(d.mode == "stdout" for d in destinations.values())
    print_results(results, kind=kind, to_stdout=to_stdout, table=table, row=row)
    code = max((r.code for r in results), default=0)
    if code:
        raise typer.Exit(code)


def _problems(result: FileResult) -> None:
    """A file's warnings, the findings or repairs of its admission, and its error, as it ends."""
    from compactcli import console
    from compactcli.cli.admission import admission_lines

    for warning in result.warnings:
        console.warning(warning)
    for line in admission_lines(result):  # a refused input's findings, or --repair's repairs
        console.say(line)
    if result.failed:
        console.error(result.message)
