"""A totals table made to fit a console's width without folding a cell onto many lines.

`fit(table, width)` gives back the table unchanged when it fits (its cells' widest, two spaces
between columns, as `compactcli.console.totals_table` lays it out). Otherwise, in this order,
until it fits: the file names of its folding column are shown relative to the folder they share
(returned, to be printed above the table: `in FOLDER/`); the columns the table names in `drop`
are left out, first named first; and the file names keep their ends (the file itself), their
starts cut to `...`, no narrower than `MIN_NAME`. Nothing here imports rich.
"""

from __future__ import annotations

import os
from dataclasses import replace

from compactcli.plain_table import Table

MIN_NAME = 24
"""The least width a file name is cut to; a table narrower than that is left to fold."""
CUT = "..."
_GAP = 2  # between two columns


def width_of(table: Table) -> int:
    """The width the table takes laid out on one line per row."""
    rows = [table.columns, *table.rows, *([table.total] if table.total else [])]
    widths = [max(len(row[i]) for row in rows) for i in range(len(table.columns))]
    return sum(widths) + _GAP * (len(widths) - 1)


def fit(table: Table, width: int) -> tuple[str | None, Table]:
    """(the folder the file names are relative to, or None; the table as it fits `width`)."""
    if width_of(table) <= width or not table.fold:
        return None, table
    folder, table = _relative(table)
    for position in table.drop:
        if width_of(table) <= width:
            break
        table = _without(table, position)
    over = width_of(table) - width
    if over > 0:
        table = _cut_names(table, over)
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


def _cut_names(table: Table, over: int) -> Table:
    """The folding column's cells cut at their start by `over` columns (to `MIN_NAME` at least)."""
    column = min(table.fold)
    cells = [row[column] for row in table.rows]
    widest = max(len(c) for c in [table.columns[column], *cells])
    room = max(MIN_NAME, widest - over)

    def cut(cell: str) -> str:
        return cell if len(cell) <= room else CUT + cell[len(cell) - room + len(CUT) :]

    rows = tuple((*row[:column], cut(row[column]), *row[column + 1 :]) for row in table.rows)
    return replace(table, rows=rows)
