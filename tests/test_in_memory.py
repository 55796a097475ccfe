"""The in-memory API gives, for the bytes of a file, what the commands give for the file: the
same output bytes, reports and errors, on every fixture and corpus session."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from compactcli.errors import InputError, InvalidTranscript, UsageError
from compactcli.estimate import EstimateOptions, estimate_file
from compactcli.in_memory import compact_bytes, estimate_bytes, prune_bytes, summarize_bytes
from compactcli.stages.prune import PruneOptions
from compactcli.stages.summarize import SummarizeOptions
from tests.cli_runner import run
from tests.conftest import FIXTURES
from tests.digest import CORPUS, _files, _without_timings

FILES = [path for _, path in _files(CORPUS if CORPUS.is_dir() else None)]
TRAJECTORIES = sorted((FIXTURES / "trajectories").glob("*.traj")) + sorted(CORPUS.glob("*.traj"))


def _json(text: str) -> Any:
    return json.loads(text.strip().splitlines()[-1])


@pytest.mark.parametrize("path", FILES + TRAJECTORIES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_compact_bytes_gives_what_compact_writes_and_reports(path: Path, tmp_path: Path) -> None:
    out, stats, boundary = tmp_path / f"out{path.suffix}", tmp_path / "s", tmp_path / "b"
    done = run(
        "compact", str(path), "--force", "-o", str(out), "--json", "--stats", str(stats),
        "--boundary", str(boundary), "--show-summary",
    )  # fmt: skip
    assert done.exit_code in (0, 1), done.stderr
    row = _json(done.stdout)
    result = compact_bytes(path.read_bytes(), name=str(path), settings={"force": True})
    assert result.data == out.read_bytes()
    assert (result.status, result.code, result.summarized) == (
        row["status"],
        row["exit_code"],
        row["summarized"],
    )
    assert (result.tokens_before, result.tokens_after, result.method) == (
        row["tokens_before"],
        row["tokens_after"],
        row["method"],
    )
    assert list(result.warnings) == row["warnings"] and list(result.notes) == row["notes"]
    assert result.summary == row.get("summary")
    assert _without_timings(result.stats) == _without_timings(_json(stats.read_text()))
    assert result.boundary == json.loads(boundary.read_text())
    assert result.changed == (result.data != path.read_bytes())


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_stage_bytes_give_what_prune_and_summarize_write(path: Path, tmp_path: Path) -> None:
    data = path.read_bytes()
    for stage, result in (
        ("prune", prune_bytes(data, PruneOptions(keep_recent_tokens=500), name=str(path))),
        (
            "summarize",
            summarize_bytes(data, SummarizeOptions(keep_recent_tokens=500), name=str(path)),
        ),
    ):
        out = tmp_path / f"{stage}.jsonl"
        done = run(stage, str(path), "--keep-recent-tokens", "500", "-o", str(out), "--json")
        assert done.exit_code == 0, done.stderr
        assert result.data == out.read_bytes(), stage
        row = _json(done.stdout)
        assert result.changed == row["changed"] == (result.data != data)
        assert _without_timings(result.stats) == _without_timings(
            {k: v for k, v in row.items() if k != "output"}
        )


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
@pytest.mark.parametrize("method", ["auto", "heuristic", "usage"])
def test_estimate_bytes_gives_the_estimate_of_the_file(path: Path, method: str) -> None:
    options = EstimateOptions(method=method)
    found = estimate_bytes(path.read_bytes(), options, name=str(path))
    assert found == estimate_file(str(path), replace(options, from_end=False))
    quick = estimate_file(str(path), options)  # usage and auto: maybe read from the end
    assert (found.tokens, found.method, found.status) == (quick.tokens, quick.method, quick.status)


def test_bad_bytes_raise_what_a_bad_file_raises(tmp_path: Path) -> None:
    good = (FIXTURES / "transcripts" / "codex-session.jsonl").read_bytes()
    lines = good.splitlines(keepends=True)
    broken = b"".join([*lines[:3], b"{not json\n", *lines[3:]])
    with pytest.raises(InputError) as raised:
        compact_bytes(broken, name="s.jsonl")
    assert str(raised.value).startswith("s.jsonl:4: invalid JSON")
    with pytest.raises(InputError) as empty:
        estimate_bytes(b"")
    assert str(empty.value) == "<bytes>: empty file: no records"
    invalid = (FIXTURES / "invalid" / "codex-orphan-result.jsonl").read_bytes()
    with pytest.raises(InvalidTranscript):
        prune_bytes(invalid, name="orphan.jsonl")
    repaired = compact_bytes(invalid, name="orphan.jsonl", repair=True)
    assert repaired.status in ("repaired", "compacted") and repaired.data != invalid
    with pytest.raises(UsageError) as unknown:
        compact_bytes(good, settings={"forse": True})
    assert str(unknown.value).startswith("unknown compact setting 'forse'; known settings: ")


def test_nothing_is_written_but_the_archive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    data = (FIXTURES / "transcripts" / "claude-code-summarize-session.jsonl").read_bytes()
    result = compact_bytes(data, settings={"force": True, "keep_recent_tokens": 2000})
    assert result.status == "compacted" and len(result.data) < len(data)
    assert list(tmp_path.iterdir()) == []
    archived = compact_bytes(
        data, settings={"force": True, "keep_recent_tokens": 200, "archive": "arch"}
    )
    assert [p.name for p in tmp_path.iterdir()] == ["arch"] and archived.data != result.data


def test_a_compaction_in_memory_is_undone_by_restore(tmp_path: Path) -> None:
    data = (FIXTURES / "transcripts" / "claude-code-summarize-session.jsonl").read_bytes()
    archive = str(tmp_path / "archive")
    result = compact_bytes(
        data,
        name="s.jsonl",
        settings={"force": True, "keep_recent_tokens": 200, "archive": archive},
    )
    assert result.status == "compacted"
    (tmp_path / "c.jsonl").write_bytes(result.data)
    back = tmp_path / "back.jsonl"
    done = run("restore", str(tmp_path / "c.jsonl"), "--archive", archive, "-o", str(back))
    assert done.exit_code == 0, done.stderr
    assert back.read_bytes() == data
