"""`compactcli validate`: check transcripts against their format's invariants."""

from __future__ import annotations

from typing import TYPE_CHECKING

import orjson
import typer

from compactcli.cli.options import (
    BadLinePolicy,
    Format,
    Json,
    OnBadLine,
    Paths,
    ValidateQuiet,
    read_inputs,
)
from compactcli.cli.runner import guarded, stdin_hint
from compactcli.errors import ExitCode
from compactcli.inputs import expand_inputs

if TYPE_CHECKING:
    from compactcli.validation import ValidationReport


@guarded
def validate_command(
    paths: Paths = None,
    *,
    format: Format = None,
    json: Json = False,
    on_bad_line: OnBadLine = BadLinePolicy.error,
    quiet: ValidateQuiet = False,
) -> None:
    """Check transcripts against their format's rules.

    Errors (exit 1) are what the agent would reject or repair: a tool result without its call,
    a call separated from its result, duplicate ids, a broken parentUuid or parentId chain, a
    Codex file whose first line is not its only session_meta, a message list that starts with
    the wrong role. Warnings (exit 0) are what agents write and repair on load, such as a call
    left unanswered by an interrupted turn. Unreadable input exits 3.

    Examples:

    \b
      compactcli validate session.jsonl
      compactcli validate ~/.claude/projects --json
      compactcli validate -q compacted/ || echo "some file is invalid"
    """
    from compactcli import console
    from compactcli.validation import validate

    files = expand_inputs(paths or [])
    stdin_hint(files)
    exit_code = ExitCode.OK
    out = console.stdout()
    for _path, transcript in read_inputs(files, format, on_bad_line):
        if transcript is None:
            exit_code = max(exit_code, ExitCode.INPUT)
            continue
        report = validate(transcript)
        if not report.ok:
            exit_code = max(exit_code, ExitCode.CHECK_FAILED)
        if json:
            typer.echo(orjson.dumps(report.to_dict()).decode())
        elif not (quiet and report.ok):
            for line in render_report(report, warnings=not quiet):
                out.print(line, markup=False)
    if exit_code:
        raise typer.Exit(int(exit_code))


def render_report(report: ValidationReport, *, warnings: bool = True) -> list[str]:
    """Lines for one file: `PATH:LINE: error CODE: MESSAGE` (and its warnings, unless
    `warnings` is false), then a verdict line."""
    shown = (*report.errors, *report.warnings) if warnings else report.errors
    lines = [
        f"{report.path}:{f.line}: {f.severity} {f.code}: {f.message}"
        for f in sorted(shown, key=lambda f: (f.line, f.code))
    ]
    verdict = "valid" if report.ok else "INVALID"
    counts = f"{_plural(len(report.errors), 'error')}, {_plural(len(report.warnings), 'warning')}"
    lines.append(f"{report.path}: {verdict} {report.format} transcript ({counts})")
    return lines


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"
