"""The Ray engine on a local Ray of 2 CPUs: the same outputs and reports as the local run on
every fixture and corpus session, a failing session failing alone, a killed worker's file run
again, the LLM summary cache and circuit breaker shared by the workers, and sessions read from
and written to a pyarrow filesystem with their stats rows (skipped where Ray Data is not
installed, never under CI)."""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.cli_runner import Run, run
from tests.conftest import CORPUS, FIXTURES, ROOT
from tests.digest import _without_timings
from tests.llm_server import error, ok, serve

# Ray is imported where a test uses it (importing it takes every collecting process a while)
if importlib.util.find_spec("ray") is None:
    if os.environ.get("CI"):
        raise ImportError("CI runs the Ray tests: Ray Data must be installed")
    pytest.skip(
        "Ray Data is not installed (pip install 'compactcli[ray]')", allow_module_level=True
    )

from compactcli import ray_engine

MODEL = "openai/gpt-4o-mini"


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every fixture and corpus session, trajectories included, in one tree of folders."""
    root = tmp_path_factory.mktemp("sessions")
    not_sessions = shutil.ignore_patterns("*.md", "*.probes.jsonl")
    for folder in ("transcripts", "real", "trajectories"):
        shutil.copytree(FIXTURES / folder, root / folder, ignore=not_sessions)
    if CORPUS.is_dir():
        shutil.copytree(CORPUS, root / "corpus", ignore=not_sessions)
    return root


def _session_count(root: Path) -> int:
    """How many sessions the tree holds (every `*.jsonl` and `*.traj` below it)."""
    return sum(1 for p in root.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".traj"))


FORCE = ["--force", "--keep-recent-tokens", "300"]
"""The forced compaction the engines are compared on: a small kept tail, so that the bundled
fixtures are summarized too (with the default tail most of them fit in it whole)."""


@pytest.fixture(scope="module")
def forced_locally(sessions: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Run]:
    """Every session compacted with `--force` by the local engine on one job: its output folder
    and the run (`--json` rows), which the tests of the Ray engine compare with."""
    out = tmp_path_factory.mktemp("forced") / "local"
    done = run("compact", str(sessions), *FORCE, "--out-dir", str(out), "--json", "-j", "1")
    assert done.exit_code in (0, 1), done.stderr
    return out, done


def _rows(text: str, out: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in text.splitlines()]
    for row in rows:
        row["output"] = row["output"] and os.path.relpath(row["output"], out)
    return rows


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.mark.parametrize("options", [FORCE, ["--max-tokens", "3000", "--stats", "STATS"]])
def test_compact_on_ray_writes_and_reports_what_the_local_run_does(
    local_ray: None,
    sessions: Path,
    forced_locally: tuple[Path, Run],
    tmp_path: Path,
    options: list[str],
) -> None:
    found = {}
    for engine in ("ray", "local"):
        out = tmp_path / engine
        stats = tmp_path / f"{engine}.stats"
        given = [str(stats) if o == "STATS" else o for o in options]
        jobs = ["--engine", "ray"] if engine == "ray" else ["--jobs", "1"]
        if engine == "local" and options == FORCE:
            out, done = forced_locally
        else:
            done = run("compact", str(sessions), "--out-dir", str(out), "--json", *given, *jobs)
        assert done.exit_code in (0, 1), done.stderr
        stats_lines = stats.read_text().splitlines() if stats.exists() else []
        found[engine] = (
            _tree(out),
            _rows(done.stdout, out),
            done.exit_code,
            [_without_timings(json.loads(line)) for line in stats_lines],
        )
    ray_tree, ray_rows, _ray_code, _ray_stats = found["ray"]
    assert len(ray_tree) == _session_count(sessions) > 40  # one output per session
    assert any(r["status"] == "compacted" for r in ray_rows)
    assert found["ray"] == found["local"]


def test_a_command_that_joined_a_running_ray_ends_at_once_and_its_job_with_it(
    local_ray: None, tmp_path: Path
) -> None:
    """The command line joined to a running Ray (`--address`) ends without disconnecting
    (`lifetime.exit_past`): it exits with its code and its output written, and the cluster ends
    its job and workers."""
    session = FIXTURES / "transcripts" / "claude-code-summarize-session.jsonl"
    local = run("compact", str(session), "--force", "-o", str(tmp_path / "local.jsonl"))
    import ray

    address = ray.get_runtime_context().gcs_address
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    out = tmp_path / "ray.jsonl"
    command = ["compact", str(session), "--force", "-o", str(out), "--engine", "ray"]
    with subprocess.Popen(
        [sys.executable, "-m", "compactcli", *command, "--address", address],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    ) as process:
        _, stderr = process.communicate(timeout=120)
    assert (process.returncode, stderr) == (local.exit_code, local.stderr)
    assert out.read_bytes() == (tmp_path / "local.jsonl").read_bytes()
    ended = time.monotonic() + 30
    while True:  # the cluster notices the driver gone
        known = ray._private.state.jobs()  # type: ignore[no-untyped-call]
        jobs = [j for j in known if j.get("DriverPid") == process.pid]
        if (jobs and all(j["IsDead"] for j in jobs)) or time.monotonic() > ended:
            break
        time.sleep(0.2)
    assert jobs and all(j["IsDead"] for j in jobs)


def test_estimate_on_ray_reports_what_the_local_run_does(local_ray: None, sessions: Path) -> None:
    on_ray = run("estimate", str(sessions), "--json", "--engine", "ray")
    local = run("estimate", str(sessions), "--json", "--jobs", "1")
    assert (on_ray.exit_code, on_ray.stdout, on_ray.stderr) == (
        local.exit_code,
        local.stdout,
        local.stderr,
    )
    assert len(on_ray.stdout.splitlines()) == _session_count(sessions) > 40


def test_a_failing_session_fails_alone(local_ray: None, tmp_path: Path) -> None:
    source = tmp_path / "in"
    source.mkdir()
    shutil.copy(FIXTURES / "transcripts" / "codex-summarize-session.jsonl", source / "good.jsonl")
    shutil.copy(FIXTURES / "invalid" / "codex-orphan-result.jsonl", source / "invalid.jsonl")
    (source / "broken.jsonl").write_bytes(b'{"type": "session_meta"\n')
    done = run("compact", str(source), "--out-dir", str(tmp_path / "out"), "--engine", "ray")
    assert done.exit_code == 3  # the worst file's code: unreadable input
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["good.jsonl"]
    assert f"error: {source / 'broken.jsonl'}:1: " in done.stderr
    assert f"{source / 'invalid.jsonl'}:" in done.stderr
    table = run("compact", str(source), "--dry-run", "--engine", "ray", "--json")
    statuses = {
        Path(r["path"]).name: r["status"] for r in map(json.loads, table.stdout.split("\n")[:-1])
    }
    assert statuses == {
        "broken.jsonl": "failed",
        "good.jsonl": "unchanged",
        "invalid.jsonl": "failed",
    }


def _dies_once(marks: str, path: str) -> str:
    """Kill this worker the first time `path` is run; the second time, say so."""
    mark = Path(marks) / Path(path).name
    if not mark.exists():
        mark.write_text("died")
        os._exit(1)
    return f"{Path(path).name} done after {mark.read_text()}"


def test_a_killed_worker_is_run_again(local_ray: None, tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    paths = [str(tmp_path / f"s{n}.jsonl") for n in range(3)]
    work = functools.partial(_dies_once, str(marks))
    done = ray_engine.map_files(paths, work, lambda path, error: f"{path} failed: {error}")
    assert done == [f"s{n}.jsonl done after died" for n in range(3)]


def _raises_for_one(path: str) -> str:
    if path.endswith("s1.jsonl"):
        raise ValueError("scripted failure")
    return "ok"


def test_an_exception_is_the_files_result_and_the_others_go_on(local_ray: None) -> None:
    got = ray_engine.map_files(
        ["s0.jsonl", "s1.jsonl", "s2.jsonl"], _raises_for_one, lambda p, e: f"{p}: {e!r}"
    )
    assert got == ["ok", "s1.jsonl: ValueError('scripted failure')", "ok"]


@pytest.mark.parametrize(
    ("megabytes", "cpus"),
    [([50, 40, 30, 20, 10, 5, 1, 1, 1], 2), ([3] * 40, 2), ([0.01] * 300, 8), ([200], 4), ([], 2)],
)
def test_batches_hold_every_file_once_and_shrink_as_the_work_runs_out(
    tmp_path: Path, megabytes: list[float], cpus: int
) -> None:
    paths = []
    for n, size in enumerate(megabytes):
        path = tmp_path / f"s{n}.jsonl"
        with open(path, "wb") as f:
            f.truncate(int(size * 1e6))  # sparse: the size is what counts
        paths.append(str(path))
    batches = ray_engine._batches(paths, cpus)
    assert sorted(i for batch in batches for i in batch) == list(range(len(paths)))
    sizes = [sum(os.path.getsize(paths[i]) for i in batch) for batch in batches]
    total = sum(sizes)
    if batches:
        assert max(batches[0], key=lambda i: megabytes[i]) == megabytes.index(max(megabytes))
    for done, (batch, size) in enumerate(zip(batches, sizes, strict=True)):
        before = sum(sizes[:done])
        share = max((total - before) // (2 * cpus), ray_engine.MIN_BATCH_BYTES)
        last = max(os.path.getsize(paths[i]) for i in batch)
        # a batch stops at the file that brings it to its share of what is left (the last batch
        # may hold less): never a task per small file, never one worker left with the rest
        assert size - last < share
        assert size >= share or done == len(batches) - 1
    assert len(batches) <= max(1, len(paths))


def _llm_sessions(tmp_path: Path, count: int) -> Path:
    folder = tmp_path / "llm"
    folder.mkdir()
    data = (FIXTURES / "transcripts" / "pi-summarize-session.jsonl").read_bytes()
    for n in range(count):  # each its own content: the cache keys differ
        prompt = f"The CSV export (number {n})".encode()
        (folder / f"s{n}.jsonl").write_bytes(data.replace(b"The CSV export", prompt))
    return folder


def _llm_run(folder: Path, out: Path, url: str) -> Any:
    return run(
        "compact", str(folder), "--out-dir", str(out), "--force", "--keep-recent-tokens", "50",
        "--summarizer", "llm", "--model", MODEL, "--api-base", url, "--engine", "ray", "--json",
    )  # fmt: skip


def test_the_summary_cache_serves_every_worker(
    local_ray: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.test_llm_summarizer import ANSWER

    monkeypatch.setenv("COMPACTCLI_CACHE_DIR", str(tmp_path / "cache"))
    folder = _llm_sessions(tmp_path, 4)
    with serve(ok(ANSWER)) as server:
        first = _llm_run(folder, tmp_path / "first", server.url)
        asked = len(server.requests)
        again = _llm_run(folder, tmp_path / "again", server.url)
    assert first.exit_code == again.exit_code == 0, first.stderr + again.stderr
    assert asked == 4 and len(server.requests) == 4  # the second run asked nothing
    assert [r["llm_calls"] for r in map(json.loads, first.stdout.splitlines())] == [1] * 4
    assert [r["llm_calls"] for r in map(json.loads, again.stdout.splitlines())] == [0] * 4
    assert _tree(tmp_path / "first") == _tree(tmp_path / "again")


def test_the_circuit_breaker_stops_every_worker(
    local_ray: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPACTCLI_CACHE", "false")
    folder = _llm_sessions(tmp_path, 8)
    with serve(error(500, "overloaded")) as server:
        done = _llm_run(folder, tmp_path / "out", server.url)
    assert done.exit_code == 0, done.stderr
    # each session that asks makes 3 attempts (2 retries); alone, 8 sessions would make 24
    assert 9 <= len(server.requests) <= 15
    # the breaker opened at 3 failures in a row (4 when the two workers failed at once)
    assert re.search(r"not called after [34] consecutive failures", done.stderr)
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert all(r["status"] == "compacted" for r in rows)  # the extractive summary instead


def test_sessions_from_a_filesystem_with_their_stats_rows(
    local_ray: None, sessions: Path, forced_locally: tuple[Path, Run], tmp_path: Path
) -> None:
    import pyarrow.parquet

    local, done = forced_locally
    expected = {json.loads(line)["path"]: json.loads(line) for line in done.stdout.splitlines()}
    tree = tmp_path / "tree"
    shutil.copytree(sessions, tree / "s")
    (tree / "broken").mkdir()
    (tree / "broken" / "bad.jsonl").write_bytes(b"not json\n")
    output, stats = tmp_path / "out", tmp_path / "stats"
    found = ray_engine.compact_sessions(
        f"file://{tree}",
        output=str(output),
        stats=str(stats),
        settings={"force": True, "keep_recent_tokens": 300},
    )
    rows = {r["path"]: r for r in ray_engine.rows(found)}
    assert sorted(p.name for p in output.iterdir()) == ["s"]  # nothing for the broken one
    assert _tree(output / "s") == _tree(local)
    bad = rows.pop(str(tree / "broken" / "bad.jsonl"))
    assert (bad["status"], bad["code"], bad["output"]) == ("failed", 3, "")
    assert bad["error"].startswith(f"{tree / 'broken' / 'bad.jsonl'}:1: ")
    assert len(rows) == len(expected)
    for path, row in expected.items():
        got = rows[str(tree / "s" / Path(path).relative_to(sessions))]
        assert (got["status"], got["tokens_before"], got["tokens_after"], got["code"]) == (
            row["status"],
            row["tokens_before"],
            row["tokens_after"],
            row["exit_code"],
        )
        assert got["output"] == str(output / "s" / Path(path).relative_to(sessions))
        assert got["error"] == ""
    table = pyarrow.parquet.read_table(str(stats))
    assert table.num_rows == len(expected) + 1
    assert sorted(table.column("path").to_pylist()) == sorted([*rows, bad["path"]])


def test_estimates_from_a_filesystem_as_json_lines(
    local_ray: None, sessions: Path, tmp_path: Path
) -> None:
    done = run("estimate", str(sessions), "--json", "-j", "1", "--method", "heuristic")
    expected = {
        json.loads(line)["path"]: json.loads(line)["tokens"] for line in done.stdout.splitlines()
    }
    from compactcli.estimate import EstimateOptions

    found = ray_engine.estimate_sessions(
        str(sessions),
        options=EstimateOptions(method="heuristic"),
        stats=str(tmp_path / "stats"),
        stats_format="json",
    )
    assert {r["path"]: r["tokens_before"] for r in ray_engine.rows(found)} == expected
    written = [
        json.loads(line)
        for part in sorted((tmp_path / "stats").iterdir())
        for line in part.read_text().splitlines()
    ]
    assert sorted(r["path"] for r in written) == sorted(expected)


def test_a_dataset_of_paths_and_bytes_is_compacted_as_given(
    local_ray: None, tmp_path: Path
) -> None:
    import ray.data

    names = ["codex-summarize-session.jsonl", "pi-summarize-session.jsonl"]
    items = [
        {"path": f"archive/{name}", "bytes": (FIXTURES / "transcripts" / name).read_bytes()}
        for name in names
    ]
    items.append({"path": "archive/empty.jsonl", "bytes": b""})
    found = ray_engine.compact_sessions(
        ray.data.from_items(items), settings={"force": True, "keep_recent_tokens": 300}
    )
    rows = {r["path"]: r for r in ray_engine.rows(found)}
    for name in names:
        local = run("compact", str(FIXTURES / "transcripts" / name), "--force",
                    "--keep-recent-tokens", "300", "--json", "-o", str(tmp_path / name))  # fmt: skip
        row = json.loads(local.stdout)
        got = rows[f"archive/{name}"]
        assert (got["status"], got["tokens_after"], got["output"]) == (
            row["status"],
            row["tokens_after"],
            "",  # no output given: nothing written
        )
    assert rows["archive/empty.jsonl"]["error"] == "archive/empty.jsonl: empty file: no records"


def _folder() -> str:
    return os.getcwd()


def test_relative_paths_are_the_callers_not_the_workers(
    local_ray: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workers run in the folder their Ray was started in; the outputs and stats of a
    relative path land in the caller's folder all the same."""
    import ray

    workers = ray.get(ray.remote(_folder).remote())
    caller = tmp_path / "caller"
    shutil.copytree(FIXTURES / "transcripts", caller / "in", ignore=shutil.ignore_patterns("[!c]*"))
    monkeypatch.chdir(caller)
    assert os.path.realpath(workers) != os.path.realpath(caller)
    rows = ray_engine.compact_sessions("in", output="out", stats="stats", stats_format="json")
    written = sorted(p.name for p in (caller / "out").iterdir())
    assert written == sorted(p.name for p in (caller / "in").iterdir())
    assert rows.count() == len(written) and any((caller / "stats").iterdir())
    assert all(row["output"].startswith(f"{caller}/out/") for row in ray_engine.rows(rows))
    assert not (Path(workers) / "out").exists() and not (Path(workers) / "stats").exists()


def test_the_cluster_script_of_the_docs_runs_on_folders_in_place_of_buckets(
    local_ray: None, tmp_path: Path
) -> None:
    text = (FIXTURES.parent / "docs" / "ray.md").read_text()
    script = text.split("```py\n# compact_archive.py\n", 1)[1].split("```", 1)[0]
    shutil.copytree(FIXTURES / "transcripts", tmp_path / "in" / "2026" / "11")
    local = script.replace("s3://acme-agent-sessions/", f"file://{tmp_path}/in/")
    local = local.replace("s3://acme-agent-sessions-compacted/", f"file://{tmp_path}/out/")
    assert "s3://" not in local and 'address="auto"' in local
    exec(compile(local.replace('address="auto"', "address=None"), "compact_archive.py", "exec"), {})
    written = sorted(p.name for p in (tmp_path / "out" / "2026" / "11").iterdir())
    assert written == sorted(p.name for p in (FIXTURES / "transcripts").glob("*.jsonl"))
    assert any((tmp_path / "out" / "stats" / "2026-11").glob("*.parquet"))
