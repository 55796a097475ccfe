"""Terminal presentation for the command line: consoles, error lines, tables.

Only the command-line layer imports this module. Colour and tables are used only when the
stream is a terminal; in a pipe the same content is plain text, and when no standard stream
is a terminal (a CI log) and COLUMNS is not set, tables are as wide as their cells. rich is
imported on first use, and not at all for what `compactcli.plain_table` can write to a stream
that is not a terminal (error and warning lines, `print_totals_table`) with the same bytes rich
would write.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from compactcli import plain_table

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

_stderr: Console | None = None
_live: Console | None = None  # the console of a live progress bar, while it shows
_quiet = False


def set_quiet(quiet: bool = True) -> None:
    """With `quiet`, standard error carries errors only: no warnings, notes, hints, progress
    or stats tables (`-q/--quiet`)."""
    global _quiet
    _quiet = quiet


def quiet() -> bool:
    """Whether `-q/--quiet` asked for errors only on standard error."""
    return _quiet


def _width(stream: TextIO) -> int | None:
    """The width of a console on `stream`: when it is not a terminal, `console_width()` (no
    limit at all when no standard stream is a terminal and COLUMNS is not set, so a CI log
    gets whole paths); else None, for rich to decide."""
    return plain_table.console_width() if plain_table.is_plain_stream(stream) else None


def stderr() -> Console:
    """The console for diagnostics (standard error), made on first use."""
    from rich.console import Console

    global _stderr
    width = _width(sys.stderr)
    stale = _stderr is not None and width is not None and _stderr.width != width
    if _stderr is None or _stderr.file is not sys.stderr or stale:
        _stderr = Console(file=sys.stderr, highlight=False, soft_wrap=True, width=width)
    return _stderr


def stdout() -> Console:
    """A console on the current standard output."""
    from rich.console import Console

    return Console(file=sys.stdout, highlight=False, soft_wrap=True, width=_width(sys.stdout))


def above_progress(console: Console | None) -> None:
    """Print every diagnostic through `console`, the one a live progress bar draws on (so each
    line goes above the bar, not after it), until called with None."""
    global _live
    _live = console


def error(message: str) -> None:
    """One line on standard error: `error: MESSAGE`."""
    if _live is None and plain_table.write_line(sys.stderr, f"error: {message}"):
        return
    from rich.text import Text

    (_live or stderr()).print(Text("error: ", style="bold red") + Text(message))


def warning(message: str) -> None:
    """One line on standard error: `warning: MESSAGE` (none with `-q`)."""
    if _quiet:
        return
    if _live is None and plain_table.write_line(sys.stderr, f"warning: {message}"):
        return
    from rich.text import Text

    (_live or stderr()).print(Text("warning: ", style="yellow") + Text(message))


def say(line: str, *, failure: bool = False) -> None:
    """One line on standard error, as `stderr().print(line, markup=False, highlight=False)`;
    with `-q` only a `failure` (a line that says why the command exits non-zero)."""
    if _quiet and not failure:
        return
    if _live is None and plain_table.write_line(sys.stderr, line, emoji=True):
        return
    (_live or stderr()).print(line, markup=False, highlight=False)


def print_totals_table(table: plain_table.Table) -> None:
    """`totals_table` of `table`'s parts printed on standard output, made to fit the console's
    width (`compactcli.table_fit`: the folder its files share on a line above it, columns left
    out, file names cut before their end)."""
    from compactcli import table_fit
    from compactcli.formats import session_title

    folder, table = table_fit.fit(table, plain_table.console_width() or 80, session_title)
    if folder is not None and not plain_table.write_line(sys.stdout, f"in {folder}"):
        stdout().print(f"in {folder}", markup=False, highlight=False)
    if plain_table.write_table(sys.stdout, table):
        return
    stdout().print(rich_totals_table(table))


def print_rows(table: plain_table.Table, separator: str, stream: TextIO | None = None) -> None:
    """`table`'s header and rows (not its total) on `stream` (standard output) as CSV
    (`separator` ",") or TSV ("\t"): every cell whole, numbers such as `19,491` as `19491`,
    and a number with its share, `19,491 (42%)`, as the number alone."""
    import csv

    stream = stream or sys.stdout
    writer = csv.writer(stream, delimiter=separator, lineterminator="\n")
    writer.writerow(table.columns)
    for row in table.rows:
        writer.writerow([_bare_number(cell) for cell in row])
    stream.flush()


def _bare_number(cell: str) -> str:
    import re

    found = re.fullmatch(r"(-?\d{1,3}(?:,\d{3})*|-?\d+)(?: \(-?\d+%\))?", cell)
    return found[1].replace(",", "") if found else cell


def rich_totals_table(table: plain_table.Table) -> Table:
    """`totals_table` of `table`'s parts."""
    return totals_table(
        table.columns, table.rows, table.total, right=sorted(table.right), fold=sorted(table.fold)
    )


def table(
    columns: Sequence[str], rows: Sequence[Sequence[str]], *, right: Sequence[int] = ()
) -> Table:
    """A plain rich table; columns whose positions are in `right` are right-aligned."""
    from rich.table import Table

    result = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for position, column in enumerate(columns):
        result.add_column(column, justify="right" if position in right else "left")
    for row in rows:
        result.add_row(*row)
    return result


def totals_table(
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    total: Sequence[str] | None,
    *,
    right: Sequence[int] = (),
    fold: Sequence[int] = (),
) -> Table:
    """A plain rich table whose last row, `total`, is set off by a rule and in bold.

    Columns in `right` are right-aligned; columns in `fold` (long paths) wrap anywhere instead
    of being cut, and every other column keeps its cells on one line.
    """
    from rich.table import Table

    result = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for position, column in enumerate(columns):
        result.add_column(
            column,
            justify="right" if position in right else "left",
            overflow="fold" if position in fold else "ellipsis",
            no_wrap=position not in fold,
            min_width=plain_table.FOLD_MIN_WIDTH if position in fold else None,
            ratio=1 if position in fold else None,
        )
    for row in rows:
        result.add_row(*row)
    if total is not None:
        result.add_section()
        result.add_row(*total, style="bold")
    return result
