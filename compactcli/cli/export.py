"""`compactcli export`: a transcript as a page to read, in Markdown or one HTML file."""

from __future__ import annotations

from typing import Annotated

import typer

from compactcli.cli.options import BadLinePolicy, Format, OnBadLine, OutputFile, Source, read_one
from compactcli.cli.runner import guarded

Html = Annotated[
    bool,
    typer.Option(
        "--html", help="One self-contained HTML page (inline style, no script) instead of Markdown."
    ),
]
SummaryOnly = Annotated[
    bool, typer.Option("--summary-only", help="Only the newest summary of a compaction.")
]
NoRedact = Annotated[
    bool,
    typer.Option("--no-redact", help="Show secrets as they are (by default they are redacted)."),
]


@guarded
def export_command(
    source: Source = "-",
    *,
    output: OutputFile = None,
    html: Html = False,
    summary_only: SummaryOnly = False,
    no_redact: NoRedact = False,
    format: Format = None,
    on_bad_line: OnBadLine = BadLinePolicy.error,
) -> None:
    """Render a transcript to read: Markdown (default) or one HTML page.

    Every message in file order under its role, each tool call folded with its result, thinking
    folded, summaries and compaction boundaries marked, cleared tool outputs shown as cleared.
    Secrets are redacted unless --no-redact. The page goes to standard output, or to -o FILE
    (written atomically).

    Examples:

    \b
      compactcli export session.jsonl -o session.md
      compactcli export session.jsonl --html -o session.html
      compactcli export compacted.jsonl --summary-only
    """
    from compactcli import atomic
    from compactcli.errors import OutputError
    from compactcli.export import export
    from compactcli.formats import session_title

    transcript = read_one(source, format, on_bad_line)
    title = session_title(source) if source != "-" else None
    page = export(
        transcript,
        html=html,
        summary_only=summary_only,
        redacted=not no_redact,
        title=title or transcript.source,
    )
    if output is None or output == "-":
        typer.echo(page, nl=False)
        return
    try:
        atomic.write(output, [page.encode("utf-8")], mode=atomic.permission_bits(source))
    except OSError as error:
        raise OutputError.cannot_write(output, error) from None
