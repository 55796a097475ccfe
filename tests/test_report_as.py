"""`--as table|json|csv|tsv`: every command that prints a results table prints the same results
as CSV or TSV rows (a header, one row per file, whole paths, bare numbers) or as JSON lines."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tests.cli_runner import run
from tests.conftest import FIXTURES

T = FIXTURES / "transcripts"
FILES = [str(T / "claude-code-session.jsonl"), str(T / "codex-session.jsonl")]


def _rows(text: str, separator: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text), delimiter=separator))


@pytest.mark.parametrize(("kind", "separator"), [("csv", ","), ("tsv", "\t")])
def test_estimate_rows_hold_the_figures_of_its_json(kind: str, separator: str) -> None:
    rows = run("estimate", *FILES, "--as", kind)
    lines = run("estimate", *FILES, "--json")
    assert rows.exit_code == lines.exit_code == 0
    table = _rows(rows.stdout, separator)
    objects = [json.loads(line) for line in lines.stdout.splitlines()]
    assert [r["file"] for r in table] == FILES  # whole paths, no total row
    for row, found in zip(table, objects, strict=True):
        assert int(row["tokens"]) == found["tokens"]
        assert int(row["file tokens"]) == found["file_tokens"]
        assert (row["method"], row["status"]) == (found["method"], found["status"])


def test_as_json_is_json() -> None:
    assert (
        run("estimate", *FILES, "--as", "json").stdout == run("estimate", *FILES, "--json").stdout
    )


def test_a_breakdown_follows_after_an_empty_line() -> None:
    done = run("estimate", FILES[0], "--as", "csv", "--by", "role")
    main, breakdown = done.stdout.split("\n\n")
    assert main.splitlines()[0].startswith("file,tokens,")
    assert breakdown.splitlines()[0] == "role (heuristic),tokens,share"


def test_compact_and_redact_rows(tmp_path: Path) -> None:
    done = run("compact", *FILES, "--force", "--out-dir", str(tmp_path / "out"), "--as", "csv")
    assert done.exit_code == 0
    table = _rows(done.stdout, ",")
    assert [r["file"] for r in table] == FILES
    assert all(int(r["after"]) <= int(r["before"]) for r in table)
    assert all(int(r["saved"]) == int(r["before"]) - int(r["after"]) for r in table)
    cleaned = run("redact", FILES[1], "-o", str(tmp_path / "clean.jsonl"), "--as", "tsv")
    assert _rows(cleaned.stdout, "\t")[0]["file"] == FILES[1]


def test_with_records_on_standard_output_the_rows_go_to_standard_error() -> None:
    done = run("compact", FILES[1], "--force", "-o", "-", "--as", "csv")
    assert done.exit_code == 0
    assert done.stdout.startswith("{")  # the records
    rows = done.stderr[done.stderr.index("file,before,") :]  # after the notes
    assert [r["file"] for r in _rows(rows, ",")] == [FILES[1]]
