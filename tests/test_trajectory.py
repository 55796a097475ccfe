"""SWE-agent trajectories (`.traj`): read natively by name and in folders, compacted, and written
back as trajectories whose other keys and layout are kept."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from compactcli.trajectory import to_document, to_lines
from tests.cli_runner import run
from tests.conftest import CORPUS, FIXTURES

TRAJ = FIXTURES / "trajectories" / "dates-fix.traj"
REAL = sorted(CORPUS.glob("*.traj"))


@pytest.mark.parametrize("path", [TRAJ, *REAL], ids=lambda p: p.name)
def test_a_trajectory_reads_as_lines_and_writes_back_byte_for_byte(path: Path) -> None:
    data = path.read_bytes()
    lines = to_lines(data, str(path))
    history = json.loads(data)["history"]
    assert len(lines.splitlines()) == 1 + len(history)
    assert to_document(lines.splitlines(keepends=True)) == data


@pytest.mark.parametrize("path", [TRAJ, *REAL], ids=lambda p: p.name)
def test_compact_writes_a_smaller_trajectory_with_its_other_keys(
    path: Path, tmp_path: Path
) -> None:
    out = tmp_path / path.name
    done = run("compact", str(path), "--force", "--keep-recent-tokens", "200", "-o", str(out))
    assert done.exit_code == 0, done.stderr
    before, after = json.loads(path.read_bytes()), json.loads(out.read_bytes())
    assert list(after) == list(before)
    assert {k: v for k, v in after.items() if k != "history"} == {
        k: v for k, v in before.items() if k != "history"
    }
    assert len(after["history"]) < len(before["history"])
    assert any("compactcli" in m for m in after["history"])  # the summary
    tools = [m for m in after["history"] if m.get("role") == "tool"]
    assert tools and all("tool_call_id" not in m and m["tool_call_ids"] for m in tools)
    assert run("validate", str(out)).exit_code == 0
    counted = run("estimate", "--method", "heuristic", "--json", str(out))
    assert (
        json.loads(counted.stdout)["tokens"]
        < json.loads(run("estimate", "--method", "heuristic", "--json", str(path)).stdout)["tokens"]
    )


def test_a_folder_takes_its_trajectories_and_an_unchanged_one_comes_back_whole(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copy(TRAJ, folder / TRAJ.name)
    shutil.copy(FIXTURES / "transcripts" / "codex-session.jsonl", folder / "codex.jsonl")
    done = run("estimate", str(folder), "--json")
    assert [json.loads(line)["path"] for line in done.stdout.splitlines()] == [
        str(folder / "codex.jsonl"),
        str(folder / TRAJ.name),
    ]
    same = tmp_path / "same.traj"
    assert run("compact", str(TRAJ), "-o", str(same)).exit_code == 0  # under the threshold
    assert same.read_bytes() == TRAJ.read_bytes()


def test_a_traj_file_that_is_not_a_trajectory_is_one_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "notes.traj"
    bad.write_text('{"steps": []}\n')
    done = run("estimate", str(bad))
    assert done.exit_code == 3
    assert (
        done.stderr == f"error: {bad}: not a SWE-agent trajectory: no 'history' list of messages\n"
    )
