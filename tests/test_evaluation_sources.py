"""Where `compactcli eval` finds fixtures: the package's own, a folder with its transcripts
elsewhere (`--transcripts`), and a user's transcripts named one by one (`--probes`)."""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

import orjson
import pytest

from compactcli.evaluation.sources import default_folder
from tests.cli_runner import run
from tests.conftest import EVAL_FIXTURES, FIXTURES

NAMES = [
    "anthropic-20k-s4",
    "claude-code-100k-s5",
    "claude-code-20k-s1",
    "codex-100k-s6",
    "codex-20k-s2",
    "openai-20k-s3",
]
QUICK = ("--strategies", "compact", "--budgets", "0.1", "--rounds", "1")


def test_the_default_fixtures_ship_inside_the_package() -> None:
    folder = resources.files("compactcli.evaluation").joinpath("fixtures")
    assert Path(str(folder)) == EVAL_FIXTURES
    assert default_folder() == str(EVAL_FIXTURES)
    names = sorted(p.name[: -len(".probes.jsonl")] for p in EVAL_FIXTURES.glob("*.probes.jsonl"))
    assert names == NAMES
    for name in NAMES:
        assert (EVAL_FIXTURES / f"{name}.jsonl").is_file()
        assert (EVAL_FIXTURES / "recordings" / f"{name}.jsonl").is_file()
    for name in ("baseline.json", "report.txt", "README.md"):
        assert (EVAL_FIXTURES / name).is_file()


def test_eval_runs_the_default_fixtures_from_any_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run("eval", *QUICK)
    assert result.exit_code in (0, 1), result.stderr  # 1: a gate failed, figures are fine
    assert f"fixtures: {', '.join(NAMES)}\n" in result.stdout
    assert list(tmp_path.iterdir()) == []  # nothing written where it ran


def _split(tmp_path: Path, name: str = "codex-20k-s2") -> tuple[Path, Path]:
    probes, sessions = tmp_path / "probes", tmp_path / "sessions"
    probes.mkdir()
    sessions.mkdir()
    shutil.copy(EVAL_FIXTURES / f"{name}.probes.jsonl", probes)
    shutil.copy(EVAL_FIXTURES / f"{name}.jsonl", sessions)
    return probes, sessions


def test_a_transcript_not_beside_its_probes_is_looked_up_in_transcripts(tmp_path: Path) -> None:
    probes, sessions = _split(tmp_path)
    result = run(
        "eval", "--fixtures", str(probes), "--transcripts", str(sessions), "--json", *QUICK
    )
    data = orjson.loads(result.stdout)
    assert data["fixtures"] == ["codex-20k-s2"]
    assert data["bad_probes"] == []
    missing = run("eval", "--fixtures", str(probes), *QUICK)
    assert (missing.exit_code, missing.stderr) == (
        3,
        f"error: {probes / 'codex-20k-s2.jsonl'}: missing (its probe file is "
        "codex-20k-s2.probes.jsonl)\n",
    )
    elsewhere = run("eval", "--fixtures", str(probes), "--transcripts", str(tmp_path), *QUICK)
    assert (elsewhere.exit_code, elsewhere.stderr) == (
        3,
        f"error: {probes / 'codex-20k-s2.jsonl'}: missing, and so is "
        f"{tmp_path / 'codex-20k-s2.jsonl'} (its probe file is codex-20k-s2.probes.jsonl)\n",
    )
    nowhere = run("eval", "--fixtures", str(probes), "--transcripts", str(tmp_path / "x"))
    assert (nowhere.exit_code, nowhere.stderr) == (
        3,
        f"error: {tmp_path / 'x'}: no such folder (--transcripts)\n",
    )


def test_a_transcript_beside_its_probe_file_comes_first(tmp_path: Path) -> None:
    probes, sessions = _split(tmp_path)
    shutil.copy(EVAL_FIXTURES / "codex-20k-s2.jsonl", probes)
    (sessions / "codex-20k-s2.jsonl").write_text("not a transcript\n")
    result = run("eval", "--fixtures", str(probes), "--transcripts", str(sessions), *QUICK)
    assert result.exit_code in (0, 1), result.stderr


def test_a_users_own_transcripts_with_their_probe_files(tmp_path: Path) -> None:
    mine = tmp_path / "mine.jsonl"
    shutil.copy(EVAL_FIXTURES / "openai-20k-s3.jsonl", mine)
    shutil.copy(EVAL_FIXTURES / "openai-20k-s3.probes.jsonl", tmp_path / "mine.probes.jsonl")
    other = tmp_path / "other.jsonl"
    shutil.copy(EVAL_FIXTURES / "codex-20k-s2.jsonl", other)
    probe_file = tmp_path / "facts.jsonl"
    shutil.copy(EVAL_FIXTURES / "codex-20k-s2.probes.jsonl", probe_file)

    beside = run("eval", str(mine), "--json", *QUICK)
    assert orjson.loads(beside.stdout)["fixtures"] == ["mine"]
    given = run("eval", str(mine), str(other), "--probes", str(tmp_path / "mine.probes.jsonl"))
    assert (given.exit_code, given.stderr) == (
        3,
        f"error: {tmp_path / 'mine.probes.jsonl'}: 1 probe file(s) for 2 transcript(s); give "
        "one --probes per transcript, in the same order, or keep NAME.probes.jsonl beside each "
        "NAME.jsonl\n",
    )
    both = run(
        "eval",
        str(mine),
        str(other),
        "--probes",
        str(tmp_path / "mine.probes.jsonl"),
        "--probes",
        str(probe_file),
        "--json",
        *QUICK,
    )
    data = orjson.loads(both.stdout)
    assert data["fixtures"] == ["mine", "other"]
    assert data["bad_probes"] == []
    assert "llm-replay" not in data["settings"]["strategies"]


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (
            ["--transcripts", "x"],
            2,
            "error: --transcripts DIR goes with --fixtures DIR (the probe files)\n",
        ),
        (
            ["--probes", "x.probes.jsonl"],
            2,
            "error: --probes FILE goes with the TRANSCRIPT files it describes\n",
        ),
    ],
)
def test_options_that_go_together(args: list[str], code: int, message: str) -> None:
    result = run("eval", *args)
    assert (result.exit_code, result.stdout, result.stderr) == (code, "", message)


def test_what_a_users_transcripts_cannot_be(tmp_path: Path) -> None:
    alone = tmp_path / "alone.jsonl"
    shutil.copy(FIXTURES / "transcripts" / "openai-session.jsonl", alone)
    result = run("eval", str(alone))
    assert (result.exit_code, result.stderr) == (
        3,
        f"error: {tmp_path / 'alone.probes.jsonl'}: no such file (the probe file of {alone}; "
        "or name one with --probes)\n",
    )
    folder = run("eval", str(tmp_path))
    assert folder.exit_code == 3
    assert folder.stderr.startswith(f"error: {tmp_path}: a folder; name transcript files")
    gone = run("eval", str(tmp_path / "gone.jsonl"))
    assert (gone.exit_code, gone.stderr) == (3, f"error: {tmp_path / 'gone.jsonl'}: no such file\n")


def test_two_fixtures_may_not_share_a_name(tmp_path: Path) -> None:
    probes, sessions = _split(tmp_path)
    mine = tmp_path / "codex-20k-s2.jsonl"
    shutil.copy(EVAL_FIXTURES / "codex-20k-s2.jsonl", mine)
    shutil.copy(EVAL_FIXTURES / "codex-20k-s2.probes.jsonl", tmp_path)
    result = run("eval", str(mine), "--fixtures", str(probes), "--transcripts", str(sessions))
    assert result.exit_code == 3
    assert result.stderr == (
        f"error: {mine}: a second fixture named 'codex-20k-s2'; evaluate transcripts with "
        "different file names\n"
    )
