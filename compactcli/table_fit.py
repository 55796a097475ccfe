"""A totals table made to fit a console's width without folding a cell onto many lines.

`fit(table, width)` gives back the table unchanged when it fits (its cells' widest, two spaces
between columns, as `compactcli.console.totals_table` lays it out). Otherwise, in this order,
until it fits: the file names of its folding column are shown relative to the folder they share
(returned, to be printed above the table: `in FOLDER/`); the columns the table names in `drop`
are left out, first named first; and the file names keep their ends (the file itself) and
their first folder (the one that tells `out/a.jsonl` from `a.jsonl`; at most a third of the
room), what lies between cut to `...`, no narrower than `MIN_NAME`. Given `titles`, a session
file named by its id (a UUID) whose agent titled it is named by its folder, the start of its id
and its title when relative names are still too wide (before columns are left out), and cut at
its end. Nothing here imports rich.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import replace

from compactcli.plain_table import Table

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
"""A session file named by its id, as Claude Code names them: the ones a title names better."""
MIN_NAME = 24
"""The least width a file name is cut to; a table narrower than that is left to fold."""
CUT = "..."
_GAP = 2  # between two columns


def width_of(table: Table) -> int:
    """The width the table takes laid out on one line per row."""
    rows = [table.columns, *table.rows, *([table.total] if table.total else [])]
    widths = [max(len(row[i]) for row in rows) for i in range(len(table.columns))]
    return sum(widths) + _GAP * (len(widths) - 1)


def fit(
    table: Table, width: int, titles: Callable[[str], str | None] | None = None
) -> tuple[str | None, Table]:
    """(the folder the file names are relative to, or None; the table as it fits `width`).
    `titles` gives the title of the session in a file, where its agent gave one: when relative
    names are still too wide, such a file is named by its folder, the start of its name and
    its title (`proj/dbea81d5 Build the case review backend`)."""
    if width_of(table) <= width or not table.fold:
        return None, table
    original = table
    folder, table = _relative(table)
    titled: frozenset[int] = frozenset()
    if titles is not None and width_of(table) > width:
        table, titled = _titled(original, table, titles)
    for position in table.drop:
        if width_of(table) <= width:
            break
        table = _without(table, position)
    over = width_of(table) - width
    if over > 0:
        table = _cut_names(table, over, titled)
    return folder, table


def _relative(table: Table) -> tuple[str | None, Table]:
    """The table with its folding column's paths relative to their common folder."""
    column = min(table.fold)
    paths = [row[column] for row in table.rows]
    if not paths or not all(os.sep in p for p in paths):
        return None, table
    try:
        folder = os.path.commonpath([os.path.dirname(p) for p in paths])
    except ValueError:  # absolute and relative paths mixed
        return None, table
    if folder in ("", os.sep, "."):
        return None, table
    rows = tuple(
        (*row[:column], os.path.relpath(row[column], folder), *row[column + 1 :])
        for row in table.rows
    )
    return folder + os.sep, replace(table, rows=rows)


def _titled(
    original: Table, table: Table, titles: Callable[[str], str | None]
) -> tuple[Table, frozenset[int]]:
    """`table` with each file whose session has a title named by it (see `fit`), and the rows
    so named."""
    column = min(table.fold)
    rows = []
    named = set()
    for number, (before, row) in enumerate(zip(original.rows, table.rows, strict=True)):
        folder, name = os.path.split(row[column])
        stem = name.split(".", 1)[0]
        title = titles(before[column]) if _UUID.fullmatch(stem) else None
        if title is not None:
            short = f"{stem[:8]} {title}"
            row = (*row[:column], os.path.join(folder, short), *row[column + 1 :])
            named.add(number)
        rows.append(row)
    return replace(table, rows=tuple(rows)), frozenset(named)


def _without(table: Table, position: int) -> Table:
    """The table without column `position` (the positions it names after it move down)."""

    def cut(row: tuple[str, ...]) -> tuple[str, ...]:
        return row[:position] + row[position + 1 :]

    def moved(positions: frozenset[int] | tuple[int, ...]) -> list[int]:
        return [p - (p > position) for p in positions if p != position]

    return Table(
        cut(table.columns),
        tuple(cut(row) for row in table.rows),
        cut(table.total) if table.total else None,
        frozenset(moved(table.right)),
        frozenset(moved(table.fold)),
        tuple(moved(tuple(p for p in table.drop if p != position))),
    )


def _first_folder(path: str) -> str:
    """`path` up to and with the slash after its first folder that is not `.` or `..`, or ""
    when the file lies in none (`./out/a.jsonl` gives `./out/`, `./a.jsonl` "")."""
    parts = path.split("/")
    for index, part in enumerate(parts[:-1]):
        if part not in ("", ".", ".."):
            return "/".join(parts[: index + 1]) + "/"
    return ""


def _cut_names(table: Table, over: int, titled: frozenset[int] = frozenset()) -> Table:
    """The folding column's cells cut by `over` columns (to `MIN_NAME` at least): after their
    first folder (`_first_folder`, at most a third of them) and before their end, the file's
    own name; the rows in `titled` at their end, where the title is."""
    column = min(table.fold)
    cells = [row[column] for row in table.rows]
    widest = max(len(c) for c in [table.columns[column], *cells])
    room = max(MIN_NAME, widest - over)

    def cut(cell: str, end: bool) -> str:
        if len(cell) <= room:
            return cell
        if end:
            return cell[: room - len(CUT)].rstrip() + CUT
        head = _first_folder(cell)[: room // 3]
        return head + CUT + cell[len(cell) - room + len(head) + len(CUT) :]

    rows = tuple(
        (*row[:column], cut(row[column], number in titled), *row[column + 1 :])
        for number, row in enumerate(table.rows)
    )
    return replace(table, rows=rows)
