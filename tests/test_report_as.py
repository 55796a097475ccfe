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


@pytest.mark.parametrize("stage", ["prune", "summarize"])
def test_stage_rows_hold_the_figures_of_its_json(stage: str, tmp_path: Path) -> None:
    source = FILES[1]
    args = [stage, source, "--keep-recent-tokens", "100"]
    lines = run(*args, "-o", str(tmp_path / "a.jsonl"), "--json")
    rows = run(*args, "-o", str(tmp_path / "b.jsonl"), "--as", "csv")
    assert lines.exit_code == rows.exit_code == 0
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    (found,) = [s for s in json.loads(lines.stdout)["stages"] if s["stage"] == stage]
    (row,) = [r for r in _rows(rows.stdout, ",") if r["stage"] == stage]
    assert (int(row["tokens before"]), int(row["after"])) == (
        found["tokens_before"],
        found["tokens_after"],
    )
    assert int(row["saved"]) == found["tokens_before"] - found["tokens_after"]
    dry = run(*args, "--dry-run", "--as", "tsv")  # the rows in place of the diff
    assert _rows(dry.stdout, "\t") == _rows(rows.stdout, ",")
    piped = run(*args, "--as", "tsv")  # records on standard output, the rows on standard error
    assert _rows(piped.stderr, "\t") == _rows(rows.stdout, ",")
    assert all("stages" not in json.loads(line) for line in piped.stdout.splitlines())
