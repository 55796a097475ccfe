"""Tables and lines for a stream that is not a terminal, written without importing rich.

For a stream that rich would treat as not a terminal, `table_text` and `line_text` return
exactly the text (character for character, trailing spaces included) that the console
`compactcli.console` makes for such a stream prints for the same table or line, or None
whenever they cannot be sure of that; `write_table` and `write_line` write it, or leave the
stream to rich (also for one that may be a terminal), and the caller then prints with rich.
The layout copied is that of the rich versions pyproject.toml accepts; nothing here imports rich
or typer, and tests/test_plain_table.py compares the two renderers on random tables."""

from __future__ import annotations

import builtins
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TextIO

FOLD_MIN_WIDTH = 12
"""The least width of a folding column (the `min_width` `console.totals_table` gives it)."""

_PLAIN_CELL = re.compile(r"[ -Z\\\]-~]*")  # printable ASCII except "[" (rich markup)
_EMOJI_CODE = re.compile(r":\S*:")  # what rich may read as an emoji code, such as :smile:
_RICH_EMOJI_CODE = re.compile(r"(:(\S*?)(?:(?:\-)(emoji|text))?:)")  # rich's own expression
_NUMBER_EMOJI = frozenset({"100", "1234"})
"""The names of rich's emoji that are numbers (tests/test_plain_table.py checks rich's table)."""
_TRAILING_SPACE = re.compile(r"\s$")


@dataclass(frozen=True, slots=True)
class Table:
    """A table as `console.totals_table` takes it: header, rows, an optional total row, and
    the positions of the right-justified and of the folding columns."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    total: tuple[str, ...] | None = None
    right: frozenset[int] = frozenset()
    fold: frozenset[int] = frozenset()
    drop: tuple[int, ...] = ()  # columns that may be left out when it is too wide, first first

    @classmethod
    def of(
        cls,
        columns: Sequence[str],
        rows: Sequence[Sequence[str]],
        total: Sequence[str] | None = None,
        *,
        right: Sequence[int] = (),
        fold: Sequence[int] = (),
        drop: Sequence[int] = (),
    ) -> Table:
        return cls(
            tuple(columns),
            tuple(tuple(row) for row in rows),
            None if total is None else tuple(total),
            frozenset(right),
            frozenset(fold),
            tuple(drop),
        )


def is_plain_stream(stream: TextIO | None, environ: Mapping[str, str] = os.environ) -> bool:
    """True when rich would write to `stream` as to a file, not a terminal: no styles, no
    control codes. False also where rich does something this module does not copy (Windows
    consoles, Jupyter, IDLE, streams that proxy another) and where rich's versions differ
    (FORCE_COLOR, TTY_COMPATIBLE=1)."""
    if stream is None or sys.platform == "win32" or hasattr(builtins, "get_ipython"):
        return False
    if getattr(sys.stdin, "__module__", "").startswith("idlelib"):
        return False
    if hasattr(stream, "rich_proxied_file"):
        return False
    if environ.get("TTY_COMPATIBLE", "") == "1" or "FORCE_COLOR" in environ:
        return False  # a terminal to rich, or one depending on rich's version
    isatty = getattr(stream, "isatty", None)
    try:
        return isatty is not None and not isatty()
    except ValueError:  # a closed stream: rich takes it for a file too
        return True


UNLIMITED = 1_000_000
"""The width of a console when no standard stream is a terminal and COLUMNS is not set (a CI
log, a file written by a script): tables are as wide as their cells, and no path is folded."""


def console_width(environ: Mapping[str, str] = os.environ) -> int | None:
    """The width compactcli gives a console that is not a terminal: COLUMNS when it is a number,
    else the width of the first standard stream (input, output, error) that is a terminal (as
    rich takes it: 80 when it says 0), else `UNLIMITED`. None for values of COLUMNS or LINES
    that rich would read differently from this (the caller then leaves the width to rich)."""
    for name in ("COLUMNS", "LINES"):
        value = environ.get(name)
        if value is not None and value.isdigit() and not value.isascii():
            return None
    columns = environ.get("COLUMNS")
    if columns is not None and columns.isdigit():
        return int(columns)
    for stream, default in ((sys.__stdin__, 0), (sys.__stdout__, 1), (sys.__stderr__, 2)):
        try:
            descriptor = stream.fileno()  # type: ignore[union-attr]
        except Exception:
            descriptor = default
        try:
            width = os.get_terminal_size(descriptor).columns
        except (AttributeError, ValueError, OSError):
            continue
        return width or 80
    return UNLIMITED


def table_text(table: Table, width: int) -> str | None:
    """The table as rich prints it on a console `width` columns wide that is not a terminal,
    or None when this cannot be sure to match rich.

    The console is `rich.console.Console(file=stream, highlight=False, soft_wrap=True,
    width=console_width())`, as `compactcli.console` makes it for such a stream, and the table
    the one `compactcli.console.totals_table` builds from the same arguments (box=None,
    pad_edge=False, show_edge=False, a bold header, columns in `right` right-justified, columns
    in `fold` at least 12 wide and folding, the `total` row after a section break, in bold).
    None when the table is wider than the console and rich would do more than narrow its one
    folding column and cut that column's cells (without spaces) into lines, when a cell holds
    anything but printable ASCII, or when rich would read markup or emoji codes in it.
    """
    count = len(table.columns)
    rows = [table.columns, *table.rows]
    if table.total is not None:
        rows.append(table.total)
    if count == 0 or any(len(row) != count for row in rows):
        return None
    if not all(
        _PLAIN_CELL.fullmatch(cell) and not _EMOJI_CODE.search(cell) for cell in _cells(rows)
    ):
        return None
    left_pad = [0 if position == 0 else 1 for position in range(count)]
    right_pad = [0 if position == count - 1 else 1 for position in range(count)]
    widths = []
    for position in range(count):
        padding = left_pad[position] + right_pad[position]
        measured = max(len(row[position]) for row in rows) + padding
        if position in table.fold:
            measured = max(measured, FOLD_MIN_WIDTH + padding)
        widths.append(measured or 1)
    if sum(widths) > width:
        # rich narrows the folding column (when it is the only one) to what the others leave
        if len(table.fold) != 1:
            return None
        (fold,) = table.fold
        left = width - (sum(widths) - widths[fold])
        if left < 1 or fold in table.right:
            return None  # rich would narrow the other columns too
        # but not below the column's least width: the table is then wider than the console
        widths[fold] = max(left, FOLD_MIN_WIDTH + left_pad[fold] + right_pad[fold])
    inner = [widths[i] - left_pad[i] - right_pad[i] for i in range(count)]
    lines = []
    for number, row in enumerate(rows):
        parts = []
        below: list[str] = []  # a cell folded onto more lines: the lines after its first
        for position, cell in enumerate(row):
            text = cell
            if len(cell) > inner[position]:
                if number == 0 or re.search(r"\s", cell):
                    return None  # rich aligns a header's cells at the bottom, wraps at spaces
                text = cell[: inner[position]]
                below = [
                    cell[at : at + inner[position]]
                    for at in range(len(text), len(cell), inner[position])
                ]
            if position in table.right:
                text = text.rstrip().rjust(inner[position])
            else:
                text = text.ljust(inner[position])
            parts.append(" " * left_pad[position] + text + " " * right_pad[position])
        lines.append("".join(parts) + "\n")
        for piece in below:  # only the folding column can be cut, so `below` is its lines
            lines.append(
                "".join(
                    " " * left_pad[i] + piece.ljust(inner[i]) + " " * right_pad[i]
                    if i in table.fold
                    else " " * widths[i]
                    for i in range(count)
                )
                + "\n"
            )
    return "".join(lines)


def line_text(line: str, *, emoji: bool = False) -> str | None:
    """One line as rich prints it without wrapping (`soft_wrap=True`) to a stream that is not a
    terminal, or None when this cannot be sure to match: characters rich would strip, expand or
    break the line at, trailing whitespace, or (`emoji`: the line is a plain string, whose emoji
    codes rich replaces) text that looks like an emoji code other than a number rich has no
    emoji for."""
    if not line.isprintable() or _TRAILING_SPACE.search(line):
        return None
    if emoji and _EMOJI_CODE.search(line) and not _only_numbers(line):
        return None
    return line + "\n"


def _only_numbers(line: str) -> bool:
    """Whether every emoji code rich finds in `line` names a number that is no emoji, which
    rich leaves as it is: the line and column of a finding, as in `session.jsonl:12: error`."""
    for match in _RICH_EMOJI_CODE.finditer(line):
        name = match.group(2)
        if not (name.isascii() and name.isdigit()) or name in _NUMBER_EMOJI:
            return False
    return True


def write_table(stream: TextIO, table: Table) -> bool:
    """Write the table to `stream` as rich would and return True, or write nothing and return
    False when rich must print it."""
    if not is_plain_stream(stream):
        return False
    width = console_width()
    text = None if width is None else table_text(table, width)
    if text is None:
        return False
    stream.write(text)
    stream.flush()
    return True


def write_line(stream: TextIO, line: str, *, emoji: bool = False) -> bool:
    """Write one line to `stream` as rich would and return True, or write nothing and return
    False when rich must print it (`emoji` as in `line_text`)."""
    if not is_plain_stream(stream):
        return False
    text = line_text(line, emoji=emoji)
    if text is None:
        return False
    stream.write(text)
    stream.flush()
    return True


def _cells(rows: Sequence[Sequence[str]]) -> list[str]:
    return [cell for row in rows for cell in row]
