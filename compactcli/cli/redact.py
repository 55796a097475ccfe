"""`compactcli redact`: replace every secret in every record of transcripts, nothing else.

The command chooses where each result goes with the rules of `compactcli compact` (`-o FILE`,
`--out-dir DIR`, `--in-place` with a backup, `--dry-run`: `compactcli.cli.compact`), refuses an
output that would write over an input (`compactcli.overwrite`), runs
`compactcli.redact_transcript.redact_file` on every file (`compactcli.batch.run_batch`:
failures kept to their file) and reports one row per file: its records, those changed, and the
secrets replaced by kind (or `--json` lines). Records only ever go to standard output when a
single transcript is written there; the report then goes to standard error.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NotRequired, TypedDict

from compactcli.cli.options import (
    As,
    BadLinePolicy,
    DryRun,
    Format,
    InPlace,
    Jobs,
    Json,
    OnBadLine,
    OutDir,
    OutputFile,
    Paths,
    Quiet,
    Repair,
    ReportAs,
    report_kind,
)
from compactcli.cli.runner import guarded
from compactcli.cli.stage_output import run_files

if TYPE_CHECKING:
    from compactcli import plain_table
    from compactcli.batch import FileResult
    from compactcli.compact_file import Destination
    from compactcli.errors import InvalidFinding
    from compactcli.formats.repairing import RepairDict
    from compactcli.jsonl import OnBadLine as BadLineName
    from compactcli.redact_transcript import RedactionDict


@guarded
def redact_command(
    paths: Paths = None,
    *,
    output: OutputFile = None,
    out_dir: OutDir = None,
    in_place: InPlace = False,
    dry_run: DryRun = False,
    format: Format = None,
    on_bad_line: OnBadLine = BadLinePolicy.error,
    json: Json = False,
    as_: As = ReportAs.table,
    repair: Repair = False,
    jobs: Jobs = 0,
    quiet: Quiet = False,
) -> None:
    """Replace every secret in every record with [REDACTED:<kind>], changing nothing else.

    Records without a secret keep their exact bytes; a record with one changes only in the
    strings that held it. Thinking signatures, encrypted content and base64 data are left
    as they are. The result must validate as the input did, or nothing is written (exit 1).
    With --dry-run nothing is written and the secrets found are counted by kind.

    Examples:

    \b
      compactcli redact session.jsonl -o clean.jsonl
      compactcli redact logs/ --dry-run
    """
    from compactcli.cli.compact import file_destinations

    files, destinations = file_destinations(paths, output, out_dir, in_place, dry_run)

    work = functools.partial(
        _redact_one,
        destinations=destinations,
        format=format,
        on_bad_line=on_bad_line.value,
        final=len(files) == 1,
        repair=repair,
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


def _redact_one(
    path: str,
    destinations: Mapping[str, Destination],
    format: str | None,
    on_bad_line: BadLineName,
    final: bool,
    repair: bool,
) -> FileResult:
    """One file of `redact` (module-level: it runs in worker processes)."""
    from compactcli.redact_transcript import redact_file

    return redact_file(
        path,
        destinations[path],
        format=format,
        on_bad_line=on_bad_line,
        final=final,
        repair=repair,
    )


COLUMNS = ("file", "records", "changed", "secrets", "kinds")
DROP = (1, 2)
"""The columns left out, in this order, when the table is wider than the console: records,
changed."""


def _figures(result: FileResult) -> RedactionDict:
    """The figures of a file that was redacted (one that failed or was skipped has none)."""
    return result.details["redact"]


def kinds_text(kinds: Mapping[str, int]) -> str:
    """The kinds column: `kind count` pairs, most frequent first."""
    if not kinds:
        return "-"
    ordered = sorted(kinds.items(), key=lambda item: (-item[1], item[0]))
    return ", ".join(f"{kind} {count:,}" for kind, count in ordered)


def render_results(results: Sequence[FileResult]) -> plain_table.Table:
    """One row per file, and a total row when there are several."""
    from compactcli import plain_table

    rows = []
    for result in results:
        if result.status in ("failed", "skipped"):
            rows.append((result.path, "-", "-", "-", f"{result.status} (exit {result.code})"))
            continue
        figures = _figures(result)
        rows.append(
            (
                result.path,
                f"{figures['records']:,}",
                f"{figures['records_changed']:,}",
                f"{figures['secrets']:,}",
                kinds_text(figures["kinds"]),
            )
        )
    total = None
    done = [_figures(r) for r in results if not r.failed and r.status != "skipped"]
    if len(results) > 1:
        kinds: dict[str, int] = {}
        for figures in done:
            for kind, count in figures["kinds"].items():
                kinds[kind] = kinds.get(kind, 0) + count
        total = (
            f"total ({len(results)} files)",
            f"{sum(f['records'] for f in done):,}",
            f"{sum(f['records_changed'] for f in done):,}",
            f"{sum(f['secrets'] for f in done):,}",
            kinds_text(kinds),
        )
    return plain_table.Table.of(COLUMNS, rows, total, right=(1, 2, 3), fold=(0,), drop=DROP)


class RedactRow(TypedDict):
    """The `redact --json` object of one file (`json_row`); the figures are None for a file
    that failed or was skipped."""

    path: str
    status: str
    output: str | None
    backup: str | None
    records: int | None
    records_changed: int | None
    secrets: int | None
    kinds: dict[str, int]
    exit_code: int
    message: str | None
    warnings: list[str]
    repairs: NotRequired[list[RepairDict]]
    findings: NotRequired[list[InvalidFinding]]


def json_row(result: FileResult) -> RedactRow:
    """The `--json` object of one file."""
    details = result.details
    figures = details.get("redact")
    data: RedactRow = {
        "path": result.path,
        "status": result.status,
        "output": result.output,
        "backup": result.backup,
        "records": figures["records"] if figures is not None else None,
        "records_changed": figures["records_changed"] if figures is not None else None,
        "secrets": figures["secrets"] if figures is not None else None,
        "kinds": figures["kinds"] if figures is not None else {},
        "exit_code": result.code,
        "message": result.message or None,
        "warnings": list(result.warnings),
    }
    if "repairs" in details:
        data["repairs"] = details["repairs"]
    if "findings" in details:
        data["findings"] = details["findings"]
    return data
