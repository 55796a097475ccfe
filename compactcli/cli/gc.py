"""`compactcli gc`: a session file cut down to what its agent loads next, and its metadata.

The command chooses where each result goes with the rules of `compactcli compact` (`-o FILE`,
`--out-dir DIR`, `--in-place` with a backup, `--dry-run`), refuses an output that would write over
an input (`compactcli.overwrite`), runs `compactcli.gc_file.gc_file` on every file
(`compactcli.batch.run_batch`: a file that fails, fails alone) and reports one row per file: its
records and bytes before and after, and the bytes saved (or `--json` lines).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, TypedDict

from compactcli.cli.options import (
    Archive,
    As,
    DryRun,
    Format,
    InPlace,
    Jobs,
    Json,
    OutDir,
    OutputFile,
    Paths,
    Quiet,
    ReportAs,
    report_kind,
)
from compactcli.cli.runner import guarded
from compactcli.cli.stage_output import run_files

if TYPE_CHECKING:
    from compactcli import plain_table
    from compactcli.batch import FileResult
    from compactcli.compact_file import Destination


@guarded
def gc_command(
    paths: Paths = None,
    *,
    output: OutputFile = None,
    out_dir: OutDir = None,
    in_place: InPlace = False,
    archive: Archive = None,
    format: Format = None,
    dry_run: DryRun = False,
    json: Json = False,
    as_: As = ReportAs.table,
    jobs: Jobs = 0,
    quiet: Quiet = False,
) -> None:
    """Shrink a session file to what its agent loads next, and the metadata it needs.

    Claude Code sessions: the records on the context chain (from the last compaction to the
    newest message) and the metadata records (titles, mode, last prompt) stay; the history
    before the last compaction, dead branches, progress records, file snapshots and the UI's
    copy of each tool result (toolUseResult) go. The result must load the same context and
    validate, or nothing is written (exit 1). Codex rollouts and pi sessions: what the last
    compaction made unneeded, and dead branches, go. With --archive, compactcli restore puts
    the whole file back.

    Examples:

    \b
      compactcli gc session.jsonl --dry-run
      compactcli gc session.jsonl --in-place --archive archive
    """
    from compactcli.cli.compact import file_destinations

    files, destinations = file_destinations(
        paths, output, out_dir, in_place, dry_run, [("--archive", archive)]
    )

    work = functools.partial(
        _collect_one,
        destinations=destinations,
        format=format,
        archive=None if dry_run else archive,
        final=len(files) == 1,
    )
    run_files(
        files,
        work,
        destinations,
        jobs=jobs,
        kind=report_kind(json, as_),
        table=render_results,
        row=json_row,
    )


def _collect_one(
    path: str,
    destinations: Mapping[str, Destination],
    format: str | None,
    archive: str | None,
    final: bool,
) -> FileResult:
    """One file of `gc` (module-level: it runs in worker processes)."""
    from compactcli.gc_file import gc_file

    return gc_file(path, destinations[path], format=format, archive=archive, final=final)


COLUMNS = ("file", "records", "bytes before", "bytes after", "saved", "status")
DROP = (1,)
"""The columns left out, in this order, when the table is wider than the console: records."""


def _saved(before: int, after: int) -> str:
    return f"{before - after:,} ({(before - after) / before:.0%})" if before else "0"


def render_results(results: Sequence[FileResult]) -> plain_table.Table:
    """One row per file, and a total row when there are several."""
    from compactcli import plain_table

    rows = []
    done = []
    for result in results:
        if result.status in ("failed", "skipped"):
            rows.append((result.path, "-", "-", "-", "-", f"{result.status} (exit {result.code})"))
            continue
        figures = result.details["gc"]
        done.append(figures)
        rows.append(
            (
                result.path,
                f"{figures['records_before']:,} -> {figures['records_after']:,}",
                f"{figures['bytes_before']:,}",
                f"{figures['bytes_after']:,}",
                _saved(figures["bytes_before"], figures["bytes_after"]),
                result.status,
            )
        )
    total = None
    if len(results) > 1:
        before = sum(f["bytes_before"] for f in done)
        after = sum(f["bytes_after"] for f in done)
        total = (
            f"total ({len(results)} files)",
            f"{sum(f['records_before'] for f in done):,} -> "
            f"{sum(f['records_after'] for f in done):,}",
            f"{before:,}",
            f"{after:,}",
            _saved(before, after),
            "",
        )
    return plain_table.Table.of(COLUMNS, rows, total, right=(2, 3, 4), fold=(0,), drop=DROP)


class GcRow(TypedDict):
    """The `gc --json` object of one file (`json_row`)."""

    path: str
    status: str
    output: str | None
    backup: str | None
    records_before: int | None
    records_after: int | None
    bytes_before: int | None
    bytes_after: int | None
    exit_code: int
    message: str | None


def json_row(result: FileResult) -> GcRow:
    """The `--json` object of one file."""
    figures = result.details.get("gc")
    return {
        "path": result.path,
        "status": result.status,
        "output": result.output,
        "backup": result.backup,
        "records_before": figures["records_before"] if figures is not None else None,
        "records_after": figures["records_after"] if figures is not None else None,
        "bytes_before": figures["bytes_before"] if figures is not None else None,
        "bytes_after": figures["bytes_after"] if figures is not None else None,
        "exit_code": result.code,
        "message": result.message or None,
    }
