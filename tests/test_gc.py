"""`compactcli gc`: a Claude Code session cut down to what the CLI loads next, and its metadata.

On every Claude Code fixture and corpus session (skipped without ../shared/corpus): the result
validates, loads the same context, is never larger, keeps the metadata records and none of the
records gc leaves out; `restore --archive` gives the input back. The real Claude Code's first
request after a resume is compared in tests/agents/test_gc.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings

from compactcli import get_dialect, read_transcript, validate
from compactcli.formats.claude_code.collect import DROPPED_METADATA, UI_ONLY_KEYS
from compactcli.formats.claude_code.records import METADATA_TYPES
from tests.cli_runner import run
from tests.conftest import CORPUS, FIXTURES
from tests.mutations import Mutant, mutants
from tests.transcript_strategies import Plan, plans, render

FILES = sorted((FIXTURES / "transcripts").glob("claude-code-*.jsonl")) + sorted(
    CORPUS.glob("claude-code-*.jsonl")
)
PI = sorted((FIXTURES / "transcripts").glob("pi-*.jsonl")) + sorted(CORPUS.glob("pi-*.jsonl"))
CODEX = sorted((FIXTURES / "transcripts").glob("codex-*.jsonl")) + sorted(
    CORPUS.glob("codex-*.jsonl")
)


def _context(path: Path) -> list[tuple[str, list[tuple[str, str]]]]:
    transcript = read_transcript(str(path))
    return [
        (m.role, [(b.kind, b.text) for b in m.blocks])
        for m in get_dialect(transcript.format).context(transcript)
    ]


def _records(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_gc_keeps_the_context_and_the_metadata_and_validates(path: Path, tmp_path: Path) -> None:
    out = tmp_path / path.name
    done = run("gc", str(path), "-o", str(out), "--json")
    assert done.exit_code == 0, done.stderr
    row = orjson.loads(done.stdout)
    assert row["bytes_before"] == path.stat().st_size
    assert row["bytes_after"] == out.stat().st_size <= path.stat().st_size
    assert _context(out) == _context(path)
    assert validate(read_transcript(str(out))).errors == ()
    before, after = _records(path), _records(out)
    assert row["records_after"] == len(after)
    metadata = [r for r in before if r.get("type") in METADATA_TYPES - DROPPED_METADATA]
    assert [r for r in after if r.get("type") in METADATA_TYPES] == metadata
    assert not any(r.get("type") in DROPPED_METADATA | {"progress"} for r in after)
    assert not any(key in r for r in after for key in UI_ONLY_KEYS)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_restore_with_the_archive_gives_back_what_gc_left_out(path: Path, tmp_path: Path) -> None:
    out, back, archive = tmp_path / "gc.jsonl", tmp_path / "back.jsonl", tmp_path / "archive"
    done = run("gc", str(path), "-o", str(out), "--archive", str(archive), "--json")
    assert done.exit_code == 0, done.stderr
    if orjson.loads(done.stdout)["status"] == "unchanged":
        assert out.read_bytes() == path.read_bytes()
        return
    restored = run("restore", str(out), "--archive", str(archive), "-o", str(back))
    assert restored.exit_code == 0, restored.stderr
    assert back.read_bytes() == path.read_bytes()


def test_a_compacted_session_loses_the_history_before_its_boundary(tmp_path: Path) -> None:
    path = FIXTURES / "transcripts" / "claude-code-compacted.jsonl"
    out = tmp_path / "gc.jsonl"
    assert run("gc", str(path), "-o", str(out)).exit_code == 0
    after = _records(out)
    boundary = next(r for r in after if r.get("subtype") == "compact_boundary")
    assert boundary["parentUuid"] is None and boundary["logicalParentUuid"] is None
    uuids = [r.get("uuid") for r in after if r.get("uuid")]
    assert len(uuids) < len([r for r in _records(path) if r.get("uuid")])
    chain_types = {"user", "assistant", "system", "attachment"}
    assert not any(r.get("type") in chain_types for r in after[: after.index(boundary)])


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    source = FIXTURES / "transcripts" / "claude-code-sidechain.jsonl"
    target = tmp_path / "s.jsonl"
    target.write_bytes(source.read_bytes())
    done = run("gc", str(target), "--dry-run")
    assert done.exit_code == 0, done.stderr
    assert "collected" in done.stdout and "bytes before" in done.stdout
    assert target.read_bytes() == source.read_bytes()
    assert [p.name for p in tmp_path.iterdir()] == ["s.jsonl"]


def test_in_place_keeps_a_backup(tmp_path: Path) -> None:
    source = FIXTURES / "transcripts" / "claude-code-sidechain.jsonl"
    target = tmp_path / "s.jsonl"
    target.write_bytes(source.read_bytes())
    done = run("gc", str(target), "--in-place", "--json")
    assert done.exit_code == 0, done.stderr
    row = orjson.loads(done.stdout)
    assert row["status"] == "collected" and row["backup"] == f"{target}.bak"
    assert Path(row["backup"]).read_bytes() == source.read_bytes()
    assert target.stat().st_size < source.stat().st_size


def test_another_format_is_refused_with_the_reason(tmp_path: Path) -> None:
    path = FIXTURES / "transcripts" / "openai-session.jsonl"
    done = run("gc", str(path), "-o", str(tmp_path / "out.jsonl"))
    assert done.exit_code == 2
    assert done.stderr == (
        f"error: {path}: gc knows what Claude Code, Codex and pi load on resume, not what "
        "openai sessions need\n"
    )
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize("path", CODEX, ids=lambda p: p.name)
def test_a_codex_rollout_keeps_what_its_last_compaction_does_not_replace(
    path: Path, tmp_path: Path
) -> None:
    """Compacted by compactcli first (its compaction replaces the history), then collected:
    the same context, valid, and nothing before the compaction but the session's metadata,
    the settings in force and the user's turns."""
    compacted, out = tmp_path / "compacted.jsonl", tmp_path / "gc.jsonl"
    done = run("compact", str(path), "--force", "--max-tokens", "300", "-o", str(compacted))
    assert done.exit_code in (0, 1), done.stderr
    done = run("gc", str(compacted), "-o", str(out), "--json")
    assert done.exit_code == 0, done.stderr
    row = orjson.loads(done.stdout)
    assert _context(out) == _context(compacted)
    assert validate(read_transcript(str(out))).errors == ()
    after = _records(out)
    cuts = [
        i
        for i, r in enumerate(after)
        if r.get("type") == "compacted"
        and isinstance(r["payload"].get("replacement_history"), list)
    ]
    if not cuts:
        assert row["status"] == "unchanged"
        return
    before_cut = after[: cuts[-1]]
    for record in before_cut:
        kind, payload = record["type"], record.get("payload", {})
        assert kind not in ("response_item", "compacted"), record
        assert kind != "event_msg" or payload["type"] == "user_message", record
    assert sum(r["type"] == "turn_context" for r in before_cut) <= 1


@pytest.mark.parametrize("path", PI, ids=lambda p: p.name)
@pytest.mark.parametrize("compact_first", [False, True], ids=["as-is", "compacted"])
def test_a_pi_session_keeps_its_branch_from_the_first_kept_entry(
    path: Path, compact_first: bool, tmp_path: Path
) -> None:
    """The same context, valid, the header first, and entries only of the active branch."""
    if compact_first:
        compacted = tmp_path / "compacted.jsonl"
        done = run("compact", str(path), "--force", "--max-tokens", "300", "-o", str(compacted))
        assert done.exit_code in (0, 1), done.stderr
        path = compacted
    out = tmp_path / "gc.jsonl"
    done = run("gc", str(path), "-o", str(out), "--json")
    assert done.exit_code == 0, done.stderr
    assert _context(out) == _context(path)
    assert validate(read_transcript(str(out))).errors == ()
    before, after = _records(path), _records(out)
    assert after[0] == before[0] and after[0]["type"] == "session"
    if "parentId" in str(after[1:]):  # a tree: every entry hangs on a kept entry or is the root
        ids = {r.get("id") for r in after}
        roots = [r for r in after[1:] if r.get("parentId") is None]
        assert len(roots) == 1 + sum(r["type"] == "session_info" for r in roots[1:])
        assert all(r.get("parentId") in ids for r in after[1:] if r.get("parentId") is not None)


GC_FORMATS = ["claude-code", "codex", "pi"]


@pytest.mark.parametrize("fmt", GC_FORMATS)
@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(plan=plans())
def test_generated_sessions_collect_to_the_same_context(
    tmp_path: Path, fmt: str, plan: Plan
) -> None:
    """Generated sessions, compacted by compactcli (so each holds a compaction) and as they are:
    gc exits 0, and what it writes validates and loads the same context."""
    source = tmp_path / f"{fmt}.jsonl"
    source.write_bytes(render(plan, fmt))
    compacted = tmp_path / "compacted.jsonl"
    compacted.unlink(missing_ok=True)
    done = run("compact", str(source), "-o", str(compacted), "--force", "--max-tokens", "50", "-q")
    assert done.exit_code in (0, 1), done.stderr
    for given_path in (source, compacted):
        out = tmp_path / "gc.jsonl"
        out.unlink(missing_ok=True)
        done = run("gc", str(given_path), "-o", str(out))
        assert done.exit_code == 0, done.stderr
        assert _context(out) == _context(given_path)
        assert validate(read_transcript(str(out))).errors == ()


SOURCES = [
    (p.name, p.read_bytes())
    for p in sorted((FIXTURES / "transcripts").glob("*.jsonl"))
    if p.name.startswith(("claude-code-", "codex-", "pi-")) and "legacy" not in p.name
]


@pytest.mark.parametrize(
    "mutant",
    list(mutants(SOURCES, 60, seed=26)),
    ids=lambda m: f"{m.source}:{'+'.join(m.mutations)}",
)
def test_a_damaged_session_is_collected_or_refused_never_made_worse(
    mutant: Mutant, tmp_path: Path
) -> None:
    """A damaged session file (`tests.mutations`): gc refuses it with one line and a documented
    exit code, or writes a file that loads the same context and validates no worse."""
    source = tmp_path / "damaged.jsonl"
    source.write_bytes(mutant.data)
    out = tmp_path / "gc.jsonl"
    done = run("gc", str(source), "-o", str(out))
    assert done.exit_code in (0, 1, 2, 3), done.stderr
    if done.exit_code:
        assert not out.exists()
        assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: "), done.stderr
        return
    if out.read_bytes() == source.read_bytes():
        return  # nothing to leave out: the input as it is
    assert _context(out) == _context(source)
    assert len(validate(read_transcript(str(out))).errors) <= len(
        validate(read_transcript(str(source))).errors
    )
