"""Every command that takes many files runs them in parallel with `--jobs` (one per core by
default), with the same outputs and the same report, in input order, as one at a time."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli_runner import run
from tests.conftest import FIXTURES


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.fixture
def sessions(tmp_path: Path) -> Path:
    folder = tmp_path / "in"
    for name in ("claude-code", "codex", "pi"):
        for path in sorted((FIXTURES / "transcripts").glob(f"{name}-*.jsonl")):
            (folder / name).mkdir(parents=True, exist_ok=True)
            shutil.copy(path, folder / name / path.name)
    return folder


@pytest.mark.parametrize("command", ["redact", "gc", "compact", "restore"])
def test_parallel_runs_write_and_report_what_one_at_a_time_does(
    command: str, sessions: Path, tmp_path: Path
) -> None:
    source = sessions
    if command == "restore":  # what compact wrote, with its archive
        source = tmp_path / "compacted"
        archive = tmp_path / "archive"
        done = run("compact", str(sessions), "--force", "--keep-recent-tokens", "100",
                   "--archive", str(archive), "--out-dir", str(source))  # fmt: skip
        assert done.exit_code == 0, done.stderr
    extra = ["--archive", str(tmp_path / "archive")] if command == "restore" else []
    found = {}
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}"
        done = run(command, str(source), "--out-dir", str(out), "--json", "-j", jobs, *extra)
        found[jobs] = (
            done.exit_code,
            done.stdout.replace(str(out), "OUT"),
            done.stderr,
            _tree(out),
        )
    assert found["1"] == found["2"]
    assert len(found["1"][3]) >= 10 and found["1"][1].count("\n") >= 10
