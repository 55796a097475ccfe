"""docs/options.md, the table of every option's default and environment variable, is the one
the command line gives now; and every option that has a default reads its variable."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.cli_runner import run
from tests.conftest import FIXTURES, ROOT, script_module


def _script() -> ModuleType:
    return script_module("options_table")


def test_the_page_is_current() -> None:
    page = (ROOT / "docs" / "options.md").read_text(encoding="utf-8")
    assert page == _script().render(), "run: python scripts/options_table.py --write"


def test_every_option_but_where_results_go_has_its_variable() -> None:
    rows = [line for line in _script().render().splitlines() if line.startswith("| `--")]
    missing = [r.split("|")[1].strip() for r in rows if r.split("|")[2].strip() == "-"]
    allowed = {"--output", "--out-dir", "--in-place", "--dry-run"}
    eval_only = {r.split("|")[1].strip() for r in rows if r.rstrip(" |").endswith("(eval)")}
    assert {m.strip("`") for m in missing} - allowed - {e.strip("`") for e in eval_only} == set()


def test_a_variable_sets_its_option_and_an_option_beats_it(monkeypatch: pytest.MonkeyPatch) -> None:
    session = str(FIXTURES / "transcripts" / "codex-session.jsonl")
    monkeypatch.setenv("COMPACTCLI_AS", "csv")
    assert run("estimate", session).stdout.startswith("file,tokens,")
    assert run("estimate", session, "--as", "table").stdout.startswith("file ")
    monkeypatch.setenv("COMPACTCLI_MIN_CHARS", "not a number")
    bad = run("prune", session, "--dry-run")
    assert bad.exit_code == 2 and "COMPACTCLI_MIN_CHARS" not in bad.stdout
