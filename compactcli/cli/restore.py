"""`compactcli restore`: undo the compactions compactcli wrote, giving back their inputs' bytes.

The command chooses where each result goes with the rules of `compactcli compact` (`-o FILE`,
`--out-dir DIR`, `--in-place` with a backup, `--dry-run`), refuses an output that would write over
an input (`compactcli.overwrite`), runs `compactcli.restore_file.restore_file` on every file
(`compactcli.batch.run_batch`: a file that cannot be restored exactly fails alone, with its
reason) and reports one row per file: the compactions undone, the lines removed and put back,
and the size before and after (or `--json` lines).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, TypedDict

import typer

from compactcli.cli.options import (
    As,
    DryRun,
    InPlace,
    Jobs,
    Json,
    OutDir,
    OutputFile,
    Paths,
    Quiet,
    ReportAs,
    RestoreArchive,
    report_kind,
)
from compactcli.cli.panels import UNDONE
from compactcli.cli.runner import guarded
from compactcli.cli.stage_output import run_files

if TYPE_CHECKING:
    from compactcli import plain_table
    from compactcli.batch import FileResult
    from compactcli.compact_file import Destination
    from compactcli.restore_file import UndoneDict

Every = Annotated[
    bool,
    typer.Option(
        "--all",
        help="Undo every compaction compactcli recorded, not only the newest.",
        rich_help_panel=UNDONE,
    ),
]


@guarded
def restore_command(
    paths: Paths = None,
    *,
    output: OutputFile = None,
    out_dir: OutDir = None,
    in_place: InPlace = False,
    archive: RestoreArchive = None,
    every: Every = False,
    dry_run: DryRun = False,
    json: Json = False,
    as_: As = ReportAs.table,
    jobs: Jobs = 0,
    quiet: Quiet = False,
) -> None:
    """Undo the newest compaction compactcli wrote (--all: every one), byte for byte.

    Lines the compaction added are removed, lines it edited (a relinked parent, a cleared tool
    output) and lines it left out are put back, and the result must have the sha256 the input
    had, or nothing is written (exit 1, with the reason): a session that went on after the
    compaction, or content kept in no archive, cannot be restored exactly. Cleared outputs come
    back only from the --archive the compaction was written with.

    Examples:

    \b
      compactcli restore compacted.jsonl -o original.jsonl
      compactcli restore session.jsonl --in-place --archive archive
      compactcli restore logs/ --all --dry-run
    """
    from compactcli.cli.compact import file_destinations

    files, destinations = file_destinations(
        paths, output, out_dir, in_place, dry_run, [("--archive", archive)]
    )

    work = functools.partial(
        _restore_one,
        destinations=destinations,
        archive=archive,
        every=every,
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


def _restore_one(
    path: str,
    destinations: Mapping[str, Destination],
    archive: str | None,
    every: bool,
    final: bool,
) -> FileResult:
    """One file of `restore` (module-level: it runs in worker processes)."""
    from compactcli.restore_file import restore_file

    return restore_file(path, destinations[path], archive=archive, every=every, final=final)


COLUMNS = ("file", "undone", "removed", "put back", "bytes before", "bytes after")
DROP = (2, 3)
"""The columns left out, in this order, when the table is wider than the console: removed,
put back."""


def _undone(result: FileResult) -> list[UndoneDict]:
    return result.details["restore"]["undone"]


def undone_text(undone: Sequence[UndoneDict]) -> str:
    """The undone column: each compaction's stage, newest first."""
    return ", ".join(u["stage"] or "?" for u in undone)


def render_results(results: Sequence[FileResult]) -> plain_table.Table:
    """One row per file, and a total row when there are several."""
    from compactcli import plain_table

    rows = []
    for result in results:
        if result.status in ("failed", "skipped"):
            rows.append((result.path, f"{result.status} (exit {result.code})", "-", "-", "-", "-"))
            continue
        figures = result.details["restore"]
        undone = figures["undone"]
        rows.append(
            (
                result.path,
                undone_text(undone),
                f"{sum(u['lines_removed'] for u in undone):,}",
                f"{sum(u['lines_patched'] + u['lines_put_back'] for u in undone):,}",
                f"{figures['bytes_before']:,}",
                f"{figures['bytes_after']:,}",
            )
        )
    total = None
    if len(results) > 1:
        done = [r for r in results if r.status == "restored"]
        total = (
            f"total ({len(results)} files)",
            f"{sum(len(_undone(r)) for r in done):,}",
            f"{sum(u['lines_removed'] for r in done for u in _undone(r)):,}",
            f"{sum(u['lines_patched'] + u['lines_put_back'] for r in done for u in _undone(r)):,}",
            f"{sum(r.details['restore']['bytes_before'] for r in done):,}",
            f"{sum(r.details['restore']['bytes_after'] for r in done):,}",
        )
    return plain_table.Table.of(COLUMNS, rows, total, right=(2, 3, 4, 5), fold=(0,), drop=DROP)


class RestoreRow(TypedDict):
    """The `restore --json` object of one file (`json_row`)."""

    path: str
    status: str
    output: str | None
    backup: str | None
    undone: list[UndoneDict]
    bytes_before: int | None
    bytes_after: int | None
    exit_code: int
    message: str | None


def json_row(result: FileResult) -> RestoreRow:
    """The `--json` object of one file."""
    figures = result.details.get("restore")
    return {
        "path": result.path,
        "status": result.status,
        "output": result.output,
        "backup": result.backup,
        "undone": figures["undone"] if figures is not None else [],
        "bytes_before": figures["bytes_before"] if figures is not None else None,
        "bytes_after": figures["bytes_after"] if figures is not None else None,
        "exit_code": result.code,
        "message": result.message or None,
    }
