"""`compactcli restore`: every compaction compactcli writes can be undone byte for byte, or the
restore is refused with its reason and writes nothing.

Round trips run on every fixture transcript and every corpus session (skipped without
../shared/corpus): prune + restore and compact + restore with an archive give back the input's
bytes; without one, a restore is exact or refused for content kept in no archive, never wrong.
Generated transcripts in every format (hypothesis) round-trip the same way.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings

from compactcli.undo import split_lines
from tests.cli_runner import run
from tests.conftest import CORPUS, FIXTURES
from tests.transcript_strategies import FORMAT_NAMES, Plan, plans, render

FILES = sorted((FIXTURES / "transcripts").glob("*.jsonl")) + sorted(CORPUS.glob("*.jsonl"))
SMALL = "300"  # a budget every file with history is over


def _compact(source: Path, out: Path, *extra: str) -> None:
    result = run("compact", str(source), "-o", str(out), "--max-tokens", SMALL, "-q", *extra)
    assert result.exit_code in (0, 1), result.stderr  # 1: still over so small a budget
    assert out.exists(), result.stderr


def _restore(path: Path, out: Path, *extra: str) -> tuple[int, str]:
    result = run("restore", str(path), "-o", str(out), "-q", *extra)
    return result.exit_code, result.stderr


def _changed(source: Path, out: Path) -> bool:
    return source.read_bytes() != out.read_bytes()


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_compact_then_restore_with_the_archive_gives_back_the_input(
    path: Path, tmp_path: Path
) -> None:
    out, back, archive = tmp_path / "out.jsonl", tmp_path / "back.jsonl", tmp_path / "archive"
    _compact(path, out, "--archive", str(archive))
    code, stderr = _restore(out, back, "--archive", str(archive))
    if not _changed(path, out):
        assert code == 1 and "no compaction by compactcli is recorded" in stderr
        assert not back.exists()
        return
    assert code == 0, stderr
    assert back.read_bytes() == path.read_bytes()


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_prune_then_restore_with_the_archive_gives_back_the_input(
    path: Path, tmp_path: Path
) -> None:
    out, back, archive = tmp_path / "out.jsonl", tmp_path / "back.jsonl", tmp_path / "archive"
    result = run(
        "prune", str(path), "-o", str(out), "--keep-recent", "1", "--archive", str(archive)
    )
    assert result.exit_code == 0, result.stderr
    code, stderr = _restore(out, back, "--archive", str(archive))
    if not _changed(path, out):
        assert code == 1
        return
    assert code == 0, stderr
    assert back.read_bytes() == path.read_bytes()


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_without_an_archive_a_restore_is_exact_or_refused_never_wrong(
    path: Path, tmp_path: Path
) -> None:
    out, back = tmp_path / "out.jsonl", tmp_path / "back.jsonl"
    _compact(path, out)
    code, stderr = _restore(out, back)
    if code == 0:
        assert back.read_bytes() == path.read_bytes()
    else:
        assert code == 1
        assert not back.exists()
        assert stderr.startswith(f"error: {out}: ")
        assert (
            "kept in no archive" in stderr
            or "give the archive with --archive" in stderr
            or "no compaction by compactcli is recorded" in stderr
        ), stderr


def _relinked_session() -> Path:
    """A Claude Code session whose compaction relinks records but clears no output."""
    return FIXTURES / "transcripts" / "claude-code-summarize-parallel.jsonl"


def test_an_append_only_session_is_restored_from_the_file_alone(tmp_path: Path) -> None:
    source = _relinked_session()
    out, back = tmp_path / "out.jsonl", tmp_path / "back.jsonl"
    _compact(source, out, "--keep-recent", "99")
    lines = split_lines(out.read_bytes())
    undo = next(orjson.loads(line)["compactcli"]["undo"] for line in lines if b'"undo"' in line)
    assert [op[0] for op in undo["ops"]].count("lines") == 0  # nothing left out
    assert all(isinstance(op[4], str) for op in undo["ops"] if op[0] == "patch")
    code, stderr = _restore(out, back)
    assert code == 0, stderr
    assert back.read_bytes() == source.read_bytes()


def test_restore_all_undoes_every_compaction_and_one_undoes_the_newest(tmp_path: Path) -> None:
    source = FIXTURES / "transcripts" / "claude-code-summarize-session.jsonl"
    archive = tmp_path / "archive"
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    result = run(
        "compact", str(source), "-o", str(first), "--max-tokens", "3000",
        "--archive", str(archive),
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    shutil.copy(first, tmp_path / "input.jsonl")
    _compact(tmp_path / "input.jsonl", second, "--archive", str(archive))
    assert _changed(first, second), result.stderr
    once, every = tmp_path / "once.jsonl", tmp_path / "every.jsonl"
    assert _restore(second, once, "--archive", str(archive))[0] == 0
    assert once.read_bytes() == first.read_bytes()
    result = run("restore", str(second), "-o", str(every), "--all", "--archive", str(archive))
    assert result.exit_code == 0, result.stderr
    assert every.read_bytes() == source.read_bytes()


def test_a_session_that_went_on_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    out, back = tmp_path / "out.jsonl", tmp_path / "back.jsonl"
    _compact(_relinked_session(), out, "--keep-recent", "99")
    with out.open("ab") as handle:
        handle.write(b'{"type":"user","uuid":"later"}\n')
    code, stderr = _restore(out, back)
    assert code == 1
    assert "1 lines follow what compactcli wrote" in stderr
    assert not back.exists()


def test_a_file_changed_after_the_compaction_is_refused(tmp_path: Path) -> None:
    out, back = tmp_path / "out.jsonl", tmp_path / "back.jsonl"
    _compact(_relinked_session(), out, "--keep-recent", "99")
    data = out.read_bytes()
    out.write_bytes(data.replace(b'"type":"user"', b'"type":"user" ', 1))
    code, stderr = _restore(out, back)
    assert code == 1
    assert "the file changed after compactcli wrote it" in stderr
    assert not back.exists()


def test_a_missing_archive_piece_is_named(tmp_path: Path) -> None:
    source = FIXTURES / "transcripts" / "codex-summarize-session.jsonl"
    out, back, archive = tmp_path / "out.jsonl", tmp_path / "back.jsonl", tmp_path / "archive"
    result = run(
        "prune", str(source), "-o", str(out), "--keep-recent", "0", "--min-chars", "1",
        "--archive", str(archive),
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    pieces = [p for p in archive.iterdir() if p.is_file()]
    assert pieces
    for piece in pieces:
        piece.unlink()
    code, stderr = _restore(out, back, "--archive", str(archive))
    assert code == 1
    assert f"the archive {archive} does not hold" in stderr
    assert not back.exists()


def test_an_input_compactcli_never_wrote_is_refused(tmp_path: Path) -> None:
    back = tmp_path / "back.jsonl"
    code, stderr = _restore(_relinked_session(), back)
    assert code == 1
    assert "no compaction by compactcli is recorded here" in stderr
    assert not back.exists()


def test_in_place_keeps_the_compacted_file_as_the_backup(tmp_path: Path) -> None:
    source = _relinked_session()
    target = tmp_path / "session.jsonl"
    _compact(source, target, "--keep-recent", "99")
    compacted = target.read_bytes()
    result = run("restore", str(target), "--in-place", "--json")
    assert result.exit_code == 0, result.stderr
    row = orjson.loads(result.stdout)
    assert row["status"] == "restored" and row["output"] == str(target)
    assert target.read_bytes() == source.read_bytes()
    assert Path(row["backup"]).read_bytes() == compacted
    assert row["undone"][0]["stage"] == "compact"
    assert row["bytes_before"] == len(compacted) and row["bytes_after"] == len(source.read_bytes())


def test_dry_run_writes_nothing_and_reports_what_it_would_undo(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    _compact(_relinked_session(), out, "--keep-recent", "99")
    before = out.read_bytes()
    result = run("restore", str(out), "--dry-run")
    assert result.exit_code == 0, result.stderr
    assert "compact" in result.stdout and "bytes before" in result.stdout
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]


def test_redacted_compaction_keeps_no_input_span_in_the_file(tmp_path: Path) -> None:
    source = FIXTURES / "transcripts" / "claude-code-summarize-parallel.jsonl"
    out, back, archive = tmp_path / "out.jsonl", tmp_path / "back.jsonl", tmp_path / "archive"
    _compact(source, out, "--redact", "--keep-recent", "99", "--archive", str(archive))
    undo = next(
        orjson.loads(line)["compactcli"]["undo"]
        for line in split_lines(out.read_bytes())
        if b'"undo"' in line
    )
    assert all(isinstance(op[-1], dict) for op in undo["ops"] if op[0] in ("patch", "lines"))
    assert _restore(out, back, "--archive", str(archive))[0] == 0
    assert back.read_bytes() == source.read_bytes()


def test_a_plain_format_summary_comes_back_from_the_archive(tmp_path: Path) -> None:
    source = FIXTURES / "transcripts" / "openai-summarize-session.jsonl"
    out, back, archive = tmp_path / "out.jsonl", tmp_path / "back.jsonl", tmp_path / "archive"
    result = run(
        "summarize", str(source), "-o", str(out), "--keep-recent-tokens", "10",
        "--archive", str(archive),
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert _changed(source, out)
    code, stderr = _restore(out, tmp_path / "no-archive.jsonl")
    assert code == 1 and "give the archive with --archive" in stderr
    assert _restore(out, back, "--archive", str(archive))[0] == 0
    assert back.read_bytes() == source.read_bytes()


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(plan=plans())
def test_generated_transcripts_round_trip_in_every_format(
    tmp_path: Path, fmt: str, plan: Plan
) -> None:
    source = tmp_path / f"{fmt}.jsonl"
    source.write_bytes(render(plan, fmt))
    out, back, archive = tmp_path / "out.jsonl", tmp_path / "back.jsonl", tmp_path / "archive"
    for path in (out, back):
        path.unlink(missing_ok=True)
    result = run(
        "compact", str(source), "-o", str(out), "--force", "--max-tokens", "50",
        "--keep-recent", "0", "--min-chars", "1", "--archive", str(archive), "-q",
    )  # fmt: skip
    assert result.exit_code in (0, 1), result.stderr
    code, stderr = _restore(out, back, "--archive", str(archive))
    if out.read_bytes() == source.read_bytes():
        assert code == 1
        return
    assert code == 0, stderr
    assert back.read_bytes() == source.read_bytes()
