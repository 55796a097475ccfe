"""Tables fit the console: file names relative to their shared folder, columns left out in the
order a table names, file names cut before their end (keeping their first folder); never a
cell folded onto many lines."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import shutil
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compactcli.plain_table import Table
from compactcli.table_fit import CUT, MIN_NAME, fit, width_of
from tests.cli_runner import read_terminal
from tests.conftest import CORPUS, FIXTURES

FOLDER = "/home/jane/.claude/projects/-Users-jane-Documents-pv-case-review"
NAMES = ("dbea81d5-9c8d-465e-934a-a8857a479d61.jsonl", "1b2c3d4e-9c8d-465e-934a-a8857a479d61.jsonl")
COLUMNS = ("file", "tokens", "method", "window", "used", "status", "file tokens")


PATHS = tuple(f"{FOLDER}/{name}" for name in NAMES)


def _table(paths: tuple[str, ...] = PATHS) -> Table:
    rows = [(p, "64,200", "usage+heuristic", "200,000", "32%", "ok", "256,608") for p in paths]
    total = (f"total ({len(paths)} files)", "94,207", "", "", "", "ok", "271,171")
    return Table.of(COLUMNS, rows, total, right=(1, 3, 4, 6), fold=(0,), drop=(6, 3, 2))


def test_a_table_that_fits_is_left_as_it_is() -> None:
    table = _table()
    assert fit(table, width_of(table)) == (None, table)


def test_file_names_are_shown_relative_to_the_folder_they_share_first() -> None:
    table = _table()
    folder, fitted = fit(table, width_of(table) - 1)
    assert folder == FOLDER + "/"
    assert [row[0] for row in fitted.rows] == list(NAMES)
    assert fitted.columns == COLUMNS  # that alone was enough


def test_columns_are_left_out_in_the_order_the_table_names_then_names_are_cut() -> None:
    folder, fitted = fit(_table(), 72)
    assert fitted.columns == ("file", "tokens", "used", "status")
    assert width_of(fitted) <= 72 and folder == FOLDER + "/"
    assert fitted.right == frozenset({1, 2}) and fitted.total is not None
    folder, narrow = fit(_table(), 50)
    assert narrow.columns == ("file", "tokens", "used", "status")
    assert width_of(narrow) <= 50
    for row, name in zip(narrow.rows, NAMES, strict=True):  # the ends kept: the file itself
        assert row[0].startswith(CUT) and name.endswith(row[0][len(CUT) :])
        assert len(row[0]) >= MIN_NAME


def test_a_cut_name_keeps_its_first_folder() -> None:
    name = "claude-code-pv-case-review.jsonl"
    paths = (f"./{name}", f"./out/{name}", f"./a-much-longer-folder-name/{name}")
    _, fitted = fit(_table(paths), 48)
    same, below, long = (row[0] for row in fitted.rows)
    assert same.startswith(CUT) and name.endswith(same[len(CUT) :])
    assert below.startswith("./out/" + CUT) and name.endswith(below[len("./out/" + CUT) :])
    assert long.startswith("./a-much" + CUT)  # a long first folder: a third of the room
    assert len({same, below, long}) == 3 and width_of(fitted) <= 48


@given(
    st.lists(
        st.lists(st.sampled_from(["a", "bb", "src", "-Users-x", "é"]), min_size=1, max_size=6),
        min_size=1,
        max_size=5,
    ),
    st.integers(min_value=40, max_value=200),
)
def test_a_fitted_table_is_as_narrow_as_the_console_or_its_names_are_at_their_least(
    parts: list[list[str]], width: int
) -> None:
    paths = tuple("/" + "/".join(p) + ".jsonl" for p in parts)
    folder, fitted = fit(_table(paths), width)
    assert width_of(fitted) <= width or all(len(row[0]) <= MIN_NAME for row in fitted.rows)
    assert len(fitted.rows) == len(paths)
    if folder is not None:  # every name joins back onto the folder
        assert {os.path.normpath(folder + row[0]) for row in fitted.rows} <= {
            os.path.normpath(p) for p in paths
        } or any(CUT in row[0] for row in fitted.rows)


@pytest.mark.skipif(not CORPUS.exists(), reason="../shared/corpus is not here")
def test_a_real_session_folder_fits_an_80_column_terminal(tmp_path: Path) -> None:
    project = tmp_path / ".claude" / "projects" / "-Users-jane-Documents-pv-case-review"
    project.mkdir(parents=True)
    for name, source in zip(NAMES, ("claude-code-hunch", "claude-code-raze-progress"), strict=True):
        shutil.copy(CORPUS / f"{source}.jsonl", project / name)
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPACTCLI_")}
    env.update(TERM="xterm", NO_COLOR="1", LITELLM_LOCAL_MODEL_COST_MAP="True")
    env.pop("COLUMNS", None)
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "compactcli", "estimate", str(tmp_path / ".claude" / "projects")],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=env,
    )
    os.close(follower)
    seen = read_terminal(leader).decode()
    assert process.wait(timeout=60) == 0
    os.close(leader)
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", seen).replace("\r", "")
    lines = [line for line in plain.split("\n") if line.strip()]
    assert lines[0] == f"in {project}/"
    assert all(len(line.rstrip()) <= 80 for line in lines[1:]), lines  # the folder may wrap
    # each row names its file by the start of its name; the one with a title by its title too
    rows = {line.split()[0][:8]: line for line in lines[2:4]}
    assert sorted(rows) == sorted(name[:8] for name in NAMES)
    assert "Apply for Superteam agentic engineering grant"[:20] in rows[NAMES[0][:8]]


def test_a_pipe_with_columns_set_gets_the_same_fitted_table(tmp_path: Path) -> None:
    folder = tmp_path / ("a-long-project-folder-name-" * 3)
    folder.mkdir()
    for name in NAMES:
        shutil.copy(FIXTURES / "transcripts" / "claude-code-session.jsonl", folder / name)
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPACTCLI_")}
    env.update(COLUMNS="80", NO_COLOR="1", LITELLM_LOCAL_MODEL_COST_MAP="True")
    done = subprocess.run(
        [sys.executable, "-m", "compactcli", "estimate", str(folder)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    lines = done.stdout.splitlines()
    assert lines[0] == f"in {folder}/"
    assert all(len(line) <= 80 for line in lines[1:]), lines
    header = lines[1].split()
    assert header[:2] == ["file", "tokens"] and header[-1] == "status"
    assert "file tokens" not in lines[1]  # the first column left out


def test_a_titled_session_is_named_by_its_title_cut_at_its_end() -> None:
    titles = {PATHS[0]: "Build the case review backend with merge logic and ops scripts"}
    folder, fitted = fit(_table(), 72, titles.get)
    assert folder == FOLDER + "/"
    first, second = (row[0] for row in fitted.rows)
    assert first.startswith("dbea81d5 Build the case review backend")
    assert first.endswith(CUT) or width_of(fitted) <= 72
    assert second == NAMES[1] or second.startswith(CUT)  # untitled: its name, cut at its start
