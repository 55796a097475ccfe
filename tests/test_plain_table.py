"""`compactcli.plain_table` writes what rich writes to a stream that is not a terminal: random
tables and lines compared with rich's output, the console's width and terminal detection
compared with rich's, and `estimate` in a pipe giving the same bytes with rich as without."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import TextIO

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text

from compactcli import console, plain_table
from compactcli.plain_table import (
    UNLIMITED,
    Table,
    console_width,
    is_plain_stream,
    line_text,
    table_text,
)
from tests.cli_runner import Run, run
from tests.conftest import FIXTURES

# Mostly what estimate's tables hold (digits, commas, paths, words, spaces), and now and then
# what the plain renderer must refuse: markup, emoji codes, wide and control characters.
_COMMON = st.sampled_from(list("0123456789,,,.%- /_()abcxyzABZ  ~!#$&*+;<=>?@^`{|}'\"\\]"))
_RARE = st.sampled_from(["[", ":", ":+1:", "é", "界", "\t", "\x1b", "\n", "\u200b"])
_CHAR = st.one_of(_COMMON, _COMMON, _COMMON, _COMMON, _COMMON, _COMMON, _COMMON, _COMMON, _RARE)


def _cells(char: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.lists(char, max_size=6).map("".join),
        st.lists(_COMMON, min_size=10, max_size=60).map("".join),
        st.integers(0, 10**9).map(lambda n: f"{n:,}"),
        st.lists(st.sampled_from(list("abcxyz0123456789/._-")), min_size=10, max_size=150).map(
            "".join
        ),
    )


_PLAIN_CELL = _cells(_COMMON)
_ANY_CELL = _cells(_CHAR)


@st.composite
def tables(draw: st.DrawFn) -> Table:
    """A table of 1 to 8 columns: three times in four of the characters the plain renderer
    writes (so that most examples are compared with rich), else now and then of what it must
    refuse."""
    count = draw(st.integers(1, 8))
    cell = draw(st.sampled_from([_PLAIN_CELL, _PLAIN_CELL, _PLAIN_CELL, _ANY_CELL]))
    row = st.lists(cell, min_size=count, max_size=count)
    positions = st.sets(st.integers(0, count - 1))
    return Table.of(
        draw(row),
        draw(st.lists(row, max_size=6)),
        draw(st.none() | row),
        right=sorted(draw(positions)),
        fold=sorted(draw(positions)),
    )


def rich_output(table: Table, width: int) -> str:
    """What `console.print_totals_table` prints through rich on a file `width` columns wide."""
    file = io.StringIO()
    out = Console(file=file, width=width, highlight=False, soft_wrap=True)
    out.print(
        console.totals_table(
            table.columns,
            table.rows,
            table.total,
            right=sorted(table.right),
            fold=sorted(table.fold),
        )
    )
    return file.getvalue()


@settings(max_examples=200, deadline=None)  # about half are compared with rich (others refused)
@given(tables(), st.one_of(st.integers(1, 200), st.integers(200, 1200)))
def test_plain_tables_are_rich_tables(table: Table, width: int) -> None:
    plain = table_text(table, width)
    if plain is not None:
        assert plain == rich_output(table, width)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(list("0123456789,. abcdefgh/_-()%")), max_size=10).map("".join),
        min_size=8,
        max_size=8,
    ),
    st.booleans(),
    st.integers(110, 200),
)
def test_estimate_shaped_tables_are_always_plain(
    cells: list[str], with_total: bool, width: int
) -> None:
    """Eight columns of plain cells within the width: the plain renderer always answers."""
    table = Table.of(
        ["file", "tokens", "method", "window", "used", "threshold", "status", "file tokens"],
        [["projects/demo/" + cells[0], *cells[1:]], ["projects/demo/" + cells[7], *cells[6::-1]]],
        ["total (2 files) here", *cells[1:]] if with_total else None,
        right=(1, 3, 4, 5, 7),
        fold=(0,),
    )
    plain = table_text(table, width)
    assert plain is not None
    assert plain == rich_output(table, width)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(list("abcdefgh/._-0123456789")), min_size=13, max_size=200).map(
        "".join
    ),
    st.integers(40, 120),
    st.booleans(),
)
def test_long_paths_fold_as_rich_folds_them(path: str, width: int, with_total: bool) -> None:
    table = Table.of(
        ["file", "tokens", "method", "window", "used", "threshold", "status", "file tokens"],
        [[path, "19,491", "usage", "200,000", "10%", "167,000", "ok", "1,811"]] * 2,
        ["total (2 files)", "38,982", "", "", "", "", "ok", "3,622"] if with_total else None,
        right=(1, 3, 4, 5, 7),
        fold=(0,),
    )
    plain = table_text(table, width)
    if width >= 84:  # the other columns take 68: 16 are left for the paths
        assert plain is not None
    if plain is not None:
        assert plain == rich_output(table, width)


def _renders_alike(table: Table, width: int, expected: str) -> None:
    """Both renderers print `expected` for `table` in `width` columns."""
    assert table_text(table, width) == expected
    assert rich_output(table, width) == expected


def test_a_folded_path() -> None:
    table = Table.of(
        ["file", "tokens", "used"], [["sessions/2026/01/a-long-name.jsonl", "1,234", "1%"]]
    )
    table = Table.of(table.columns, table.rows, right=(1, 2), fold=(0,))
    expected = (  # 31 columns, 13 of them for tokens and used: 17 for the path
        "file               tokens  used\n"
        "sessions/2026/01/   1,234    1%\n"
        "a-long-name.jsonl              \n"
    )
    _renders_alike(table, 31, expected)


def test_trailing_spaces_fold_column_and_total_row() -> None:
    table = Table.of(
        ["f", "n", "status"],
        [["a/b/c.jsonl", "1", "ok"], ["bb", "22", "compacted"]],
        ["total (2 files)", "23", "x"],
        right=(1,),
        fold=(0,),
    )
    expected = (
        "f                 n  status   \n"
        "a/b/c.jsonl       1  ok       \n"
        "bb               22  compacted\n"
        "total (2 files)  23  x        \n"
    )
    _renders_alike(table, 80, expected)


def test_a_folding_column_keeps_its_least_width() -> None:
    """12 columns and its padding: for a short cell, and when the others leave it less (the
    table is then wider than the console, as rich prints it)."""

    def first(cell: str, width: int = 80) -> str | None:
        return table_text(Table.of(["f", "n"], [[cell, "1"]], fold=(0,)), width)

    assert first("a") == "f             n\na             1\n"
    assert first("a" * 30, width=10) == (
        "f             n\n" + "a" * 12 + "  1\n" + "a" * 12 + "   \n" + "a" * 6 + "         \n"
    )
    for table in (
        Table.of(["f", "n"], [["a" * 30, "1"]], fold=(0,)),
        Table.of(["f", "n"], [["a", "1"]], fold=(0,)),
        Table.of(["f"], [["a" * 30]], fold=(0,)),
    ):
        for width in (10, 80):
            assert table_text(table, width) in (None, rich_output(table, width))
    middle = Table.of(["f", "n", "x"], [["a", "1", "2"]], fold=(1,))
    assert table_text(middle, 80) == "f  n             x\na  1             2\n"  # padding 2
    assert table_text(middle, 80) == rich_output(middle, 80)


def test_what_the_plain_renderer_refuses() -> None:
    def one(cell: str, width: int = 80) -> str | None:
        return table_text(Table.of(["name", "n"], [[cell, "1"]], right=(1,)), width)

    assert one("plain, 1,234 (x)") == "name              n\nplain, 1,234 (x)  1\n"
    assert one("[bold]x[/bold]") is None  # markup
    assert one("a:smile:b") is None  # emoji code
    assert one("naïve") is None  # not ASCII
    assert one("a\tb") is None
    assert one("a" * 78) is None  # 78 + 2 + 1 > 80: rich would cut the cell
    assert one("a" * 77) is not None
    assert table_text(Table.of(["a", "b"], [["1"]]), 80) is None  # a row of the wrong length


@settings(max_examples=500, deadline=None)
@given(
    st.text(st.characters(codec="utf-8"), max_size=120),
    st.sampled_from(["error", "warning", "say"]),
    st.integers(1, 200),
)
def test_plain_lines_are_rich_lines(message: str, kind: str, width: int) -> None:
    file = io.StringIO()
    out = Console(file=file, width=width, highlight=False, soft_wrap=True)
    if kind == "say":
        plain = line_text(message, emoji=True)
        out.print(message, markup=False, highlight=False)
    else:
        plain = line_text(f"{kind}: {message}")
        out.print(Text(f"{kind}: ", style="bold red") + Text(message))
    if plain is not None:
        assert plain == file.getvalue()


def test_what_lines_are_refused() -> None:
    assert line_text("error: no such file: a b.jsonl") == "error: no such file: a b.jsonl\n"
    assert line_text("error: 界 é") == "error: 界 é\n"
    assert line_text("two\nlines") is None
    assert line_text("tab\there") is None
    assert line_text("trailing ") is None
    assert line_text("a:fire:b", emoji=True) is None
    assert line_text("a:fire:b") == "a:fire:b\n"
    # a finding's line number is no emoji code; :100: and :1234: are
    finding = "s.jsonl:12: error bad-shape: line 3: x:y"
    assert line_text(finding, emoji=True) == finding + "\n"
    assert line_text("s.jsonl:2-emoji: x", emoji=True) == "s.jsonl:2-emoji: x\n"
    assert line_text("a:100:b", emoji=True) is None
    assert line_text("a:1234:b", emoji=True) is None
    assert line_text("a:12:fire:b", emoji=True) == "a:12:fire:b\n"  # as rich reads it


@pytest.mark.parametrize(
    "line",
    [
        "s.jsonl:12: error bad-shape: line 3: x:y",
        "s.jsonl:2-emoji: x:7-text: y",
        "a:100:b",
        "a:1234:b",
        "a:12:fire:b",
        "a:12::100:b",
        "::12:",
    ],
)
def test_number_codes_print_as_rich_prints_them(line: str) -> None:
    file = io.StringIO()
    Console(file=file, width=80, highlight=False, soft_wrap=True).print(
        line, markup=False, highlight=False
    )
    plain = line_text(line, emoji=True)
    assert plain is None or plain == file.getvalue()


def test_rich_has_no_other_emoji_named_by_a_number() -> None:
    from rich._emoji_codes import EMOJI

    assert {
        name for name in EMOJI if name.isascii() and name.isdigit()
    } <= plain_table._NUMBER_EMOJI


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize("tty", [False, True])
@pytest.mark.parametrize(
    "env",
    [
        {},
        {"TTY_COMPATIBLE": "0"},
        {"TTY_COMPATIBLE": "1"},
        {"FORCE_COLOR": ""},
        {"FORCE_COLOR": "1"},
    ],
)
def test_plain_streams_are_not_terminals_to_rich(
    tty: bool, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("TTY_COMPATIBLE", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    stream = _Stream(tty)
    plain = is_plain_stream(stream)
    assert plain == (not tty and env.get("TTY_COMPATIBLE") != "1" and "FORCE_COLOR" not in env)
    if plain:
        assert not Console(file=stream).is_terminal


def _no_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in a CI job: no standard stream is a terminal (whatever runs the tests)."""

    def no_size(fd: int = 0) -> os.terminal_size:
        raise OSError("not a terminal")

    monkeypatch.setattr(os, "get_terminal_size", no_size)


@pytest.mark.parametrize("columns", [None, "200", "37", "0", "", "abc", "-5", "80x"])
@pytest.mark.parametrize("lines", [None, "30", "x"])
def test_console_width_is_rich_width(
    columns: str | None, lines: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in (("COLUMNS", columns), ("LINES", lines)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    _no_terminal(monkeypatch)
    width = console_width()
    if columns is not None and columns.isdigit():
        assert width == int(columns) == Console(file=io.StringIO()).width
    else:  # no standard stream is a terminal here: no limit
        assert width == UNLIMITED


@pytest.mark.parametrize("size", [123, 0])
def test_console_width_is_a_terminals_as_rich_takes_it(
    size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(os, "get_terminal_size", lambda fd=0: os.terminal_size((size, 40)))
    assert console_width() == Console(file=io.StringIO()).width == (size or 80)


def test_console_width_refuses_digits_rich_reads_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "²")
    assert console_width() is None


# ---------------------------------------------------------------------------------------------
# the command line in a pipe: the same bytes as rich's


def _both(
    monkeypatch: pytest.MonkeyPatch, *args: str, input: str | None = None
) -> tuple[Run, Run, list[bool]]:
    """The command run as it is, then with rich printing everything; and what the plain
    renderer answered for each table and line of the first run (True: it wrote it)."""
    answers: list[bool] = []
    write_table, write_line = plain_table.write_table, plain_table.write_line

    def table_spy(stream: TextIO, table: Table) -> bool:
        answers.append(write_table(stream, table))
        return answers[-1]

    def line_spy(stream: TextIO, line: str, emoji: bool = False) -> bool:
        answers.append(write_line(stream, line, emoji=emoji))
        return answers[-1]

    with monkeypatch.context() as patch:
        patch.setattr(plain_table, "write_table", table_spy)
        patch.setattr(plain_table, "write_line", line_spy)
        plain = run(*args, input=input)
    with monkeypatch.context() as patch:
        patch.setattr(plain_table, "write_table", lambda stream, table: False)
        patch.setattr(plain_table, "write_line", lambda stream, line, emoji=False: False)
        with_rich = run(*args, input=input)
    return plain, with_rich, answers


T = FIXTURES / "transcripts"


@pytest.mark.parametrize(
    "args",
    [
        (str(T / "claude-code-session.jsonl"),),
        (str(T / "claude-code-session.jsonl"), str(T / "codex-session.jsonl"), "--by", "role"),
        (str(T / "codex-session.jsonl"), "--by", "block"),
        (str(T / "claude-code-session.jsonl"), "--by", "tool"),
        (str(T / "claude-code-session.jsonl"), "--max-tokens", "1000", "--by", "role"),
        (str(T / "claude-code-session.jsonl"), str(FIXTURES / "broken" / "invalid-json.jsonl")),
        (str(T),),
    ],
    ids=["one", "two-by-role", "by-block", "by-tool", "over-budget", "unreadable", "folder"],
)
@pytest.mark.parametrize("columns", ["200", "80", "60"])
def test_estimate_in_a_pipe_writes_what_rich_writes(
    args: tuple[str, ...], columns: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    plain, with_rich, answers = _both(monkeypatch, "estimate", "--jobs", "1", *args)
    assert plain.exit_code == with_rich.exit_code
    assert plain.stdout == with_rich.stdout
    assert plain.stderr == with_rich.stderr
    assert plain.stdout  # a table was printed
    # the table is made to fit first (`compactcli.table_fit`): nothing is left to rich
    assert answers
    assert all(answers)


_SESSION = "fixtures/transcripts/claude-code-session.jsonl"


@pytest.mark.parametrize(
    ("columns", "files", "expected"),
    [
        (
            "80",
            1,
            "in fixtures/transcripts/\n"
            "file                       tokens  method   window  used  threshold  status\n"
            "claude-code-session.jsonl  19,491  usage   200,000   10%    167,000  ok    \n",
        ),
        (
            None,
            2,
            "file                                            tokens  method   window  used  threshold  status  file tokens\n"
            "fixtures/transcripts/claude-code-session.jsonl  19,491  usage   200,000   10%    167,000  ok            1,811\n"
            "fixtures/transcripts/claude-code-session.jsonl  19,491  usage   200,000   10%    167,000  ok            1,811\n"
            "total (2 files)                                 38,982                                    ok            3,622\n",
        ),
    ],
    ids=["fitted-in-80-columns", "whole-in-a-ci-log"],
)
def test_estimate_prints_a_long_path_as_rich_does_without_rich(
    columns: str | None, files: int, expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In 80 columns the table is fitted (the folder on a line above it, a column left out);
    in a CI log (no COLUMNS, no standard stream a terminal) the
    table is as wide as its cells."""
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
        _no_terminal(monkeypatch)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    monkeypatch.chdir(FIXTURES.parent)
    plain, with_rich, answers = _both(monkeypatch, "estimate", *[_SESSION] * files)
    assert all(answers)
    assert plain.stdout == with_rich.stdout == expected


def test_bad_lines_warn_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "bad.jsonl"
    lines = (T / "claude-code-session.jsonl").read_text().splitlines()
    path.write_text("\n".join([lines[0], "{not json", *lines[1:]]) + "\n")
    plain, with_rich, answers = _both(monkeypatch, "estimate", str(path), "--on-bad-line", "skip")
    assert plain.stderr == with_rich.stderr
    assert plain.stderr.startswith("warning: ")
    assert answers == [True, True]
    assert plain.stdout == with_rich.stdout
