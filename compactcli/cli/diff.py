"""`compactcli diff`: what a compaction changed between two transcripts."""

from __future__ import annotations

from typing import Annotated

import orjson
import typer

from compactcli.cli.options import BadLinePolicy, Format, Json, TokenMethod, read_one
from compactcli.cli.runner import guarded
from compactcli.cli.stage_output import print_diff
from compactcli.errors import UsageError


@guarded
def diff_command(
    before: Annotated[str, typer.Argument(metavar="BEFORE", help="The transcript before.")],
    after: Annotated[str, typer.Argument(metavar="AFTER", help="The transcript after.")],
    *,
    json: Json = False,
    format: Format = None,
    method: TokenMethod = "heuristic",
) -> None:
    """Show what changed between two transcripts of the same session.

    Records kept, cleared (with sizes), edited, removed and added; context tokens before and
    after; the first changed record, where a provider's prompt cache stops matching.

    Examples:

    \b
      compactcli diff session.jsonl compacted.jsonl
      compactcli diff session.jsonl compacted.jsonl --json
      compactcli diff session.jsonl compacted.jsonl --method exact
    """
    from compactcli.diff import diff
    from compactcli.formats import get_dialect
    from compactcli.tokens import get_counter

    if before == "-" and after == "-":
        raise UsageError("standard input ('-') can be read only once")
    old = read_one(before, format, BadLinePolicy.error)
    new = read_one(after, format, BadLinePolicy.error)
    counter = get_counter(method, model=get_dialect(old.format).model(old), format=old.format)
    report = diff(old, new, counter=counter)
    if json:
        typer.echo(orjson.dumps(report.to_dict()).decode())
    else:
        print_diff(report)
