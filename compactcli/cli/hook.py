"""`compactcli hook`: answer the JSON an agent gives its hooks and its status line."""

from __future__ import annotations

import sys
from typing import Annotated

import orjson
import typer

from compactcli.cli.runner import guarded
from compactcli.errors import InputError

PiExtension = Annotated[
    bool,
    typer.Option(
        "--pi-extension",
        help="Print the path of compactcli's pi extension (copy it into ~/.pi/agent/extensions/).",
    ),
]


@guarded
def hook_command(pi_extension: PiExtension = False) -> None:
    """Answer an agent's hook: read the JSON it gives on standard input, print what it uses.

    Claude Code's status line (statusLine): one line, the context used against the agent's own
    compaction trigger and its window. Claude Code's SessionStart after a compaction (source
    "compact"): the facts compactcli reads from the history before it (files modified, the
    user's rules, errors, pending asks), which Claude Code adds to the context. pi's
    session_before_compact, from compactcli's pi extension (--pi-extension prints where it is):
    the summary pi writes into its compaction entry, made offline. It never writes to the
    transcript. A payload without a transcript_path is a usage error (exit 2); an
    unreadable transcript exits 3.

    Examples:

    \b
      compactcli hook < statusline.json       # one line: the context used
      compactcli hook < session-start.json    # after a compaction: the facts it dropped
      compactcli hook --pi-extension          # pi's extension: copy it into ~/.pi/agent/extensions/
    """
    if pi_extension:
        from pathlib import Path

        import compactcli

        typer.echo(Path(compactcli.__file__).parent / "data" / "pi" / "compactcli-compaction.ts")
        return
    from compactcli.hooks import answer

    data = sys.stdin.buffer.read()
    try:
        payload = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        raise InputError("-", None, f"the hook's input is not JSON: {error}") from None
    text = answer(payload)
    if text:
        typer.echo(text)
