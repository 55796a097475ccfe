"""`-v/--verbose` names, for each file, the policy file whose settings apply (found walking up
from the file's folder), the format and how the file was counted."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli_runner import run
from tests.conftest import FIXTURES

SESSION = FIXTURES / "transcripts" / "codex-session.jsonl"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "compactcli.toml").write_text("max_tokens = 100000\n")
    (tmp_path / "logs" / "today").mkdir(parents=True)
    shutil.copy(SESSION, tmp_path / "logs" / "today" / SESSION.name)
    monkeypatch.chdir(tmp_path / "logs")
    return tmp_path


def test_estimate_names_the_policy_format_and_counting(project: Path) -> None:
    done = run("estimate", "-v", f"today/{SESSION.name}")
    assert done.exit_code == 0
    assert done.stderr == (
        f"today/{SESSION.name}: policy {project / 'compactcli.toml'}; format codex; method "
        "heuristic; model gpt-5.5; window 258,400 (recorded in the transcript)\n"
    )
    quiet = run("estimate", f"today/{SESSION.name}")
    assert quiet.stderr == "" and quiet.stdout == done.stdout


def test_compact_names_the_policy(project: Path) -> None:
    done = run("compact", "--verbose", f"today/{SESSION.name}", "--dry-run", "--as", "csv")
    assert done.exit_code == 0
    assert done.stderr.splitlines()[0] == (
        f"today/{SESSION.name}: policy {project / 'compactcli.toml'}; counted heuristic"
    )


def test_without_a_policy_it_says_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(SESSION, tmp_path / SESSION.name)
    (tmp_path / ".git").mkdir()  # the repository root: the walk up stops here
    monkeypatch.chdir(tmp_path)
    done = run("estimate", "-v", SESSION.name)
    assert done.stderr.startswith(f"{SESSION.name}: policy none; format codex; method usage;")
