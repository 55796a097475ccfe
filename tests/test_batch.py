"""Many files: parallel runs, failures kept to their file, --fail-fast, the table, the progress bar."""

from __future__ import annotations

import functools
import os
import pty
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson
import pytest

from compactcli.batch import FileResult, SharedBackend, run_batch, totals
from compactcli.errors import InputError
from compactcli.inputs import largest_first, workers_for
from compactcli.summarizers import SummaryRequest, SummaryResult, get_summarizer
from compactcli.summarizers.facts import Facts
from tests.cli_runner import read_terminal, run
from tests.conftest import FIXTURES

TRANSCRIPTS = FIXTURES / "transcripts"
SESSIONS = sorted(  # the expected tables list these five formats' sessions
    p
    for p in TRANSCRIPTS.glob("*-summarize-session.jsonl")
    if not p.name.startswith(("codex-legacy-", "openai-responses-"))
)


def work(path: str, fail: str = "", slow: float = 0.0) -> FileResult:
    """A module-level job (picklable, for worker processes)."""
    if slow:
        time.sleep(slow)
    if path == fail:
        raise InputError(path, 3, "invalid JSON: unexpected character at column 1")
    if path == "boom":
        raise ValueError("boom")
    return FileResult(path, "compacted", tokens_before=10, tokens_after=4, method="heuristic")


class CountedWork:
    """A job that counts, in this process, how often it is pickled (sent to a worker)."""

    pickled = 0

    def __call__(self, path: str) -> FileResult:
        return work(path)

    def __getstate__(self) -> dict[str, object]:
        CountedWork.pickled += 1
        return {}


def test_the_job_goes_to_each_worker_once_not_with_every_file() -> None:
    # the job holds the plan of the whole batch: sent with every file, a batch of thousands
    # spends its time pickling it
    CountedWork.pickled = 0
    paths = [f"f{i}" for i in range(40)]
    results = run_batch(paths, CountedWork(), jobs=2, mode="process")
    assert [r.status for r in results] == ["compacted"] * 40
    assert CountedWork.pickled <= 2  # none where workers are forked, one per worker otherwise


@pytest.mark.parametrize(("jobs", "mode"), [(1, "process"), (3, "process"), (3, "thread")])
def test_results_come_back_in_input_order_and_failures_stay_with_their_file(
    jobs: int, mode: str
) -> None:
    paths = [f"f{i}" for i in range(7)]
    seen: list[str] = []
    results = run_batch(
        paths,
        functools.partial(work, fail="f3"),
        jobs=jobs,
        mode=mode,  # type: ignore[arg-type]
        on_result=lambda r: seen.append(r.path),
    )
    assert [r.path for r in results] == paths
    assert seen == paths  # reported in input order too
    assert [r.status for r in results] == ["compacted"] * 3 + ["failed"] + ["compacted"] * 3
    assert (results[3].code, results[3].message) == (
        3,
        "f3:3: invalid JSON: unexpected character at column 1",
    )
    total = totals(results)
    assert (total.files, total.failed, total.tokens_before, total.tokens_after, total.saved) == (
        7,
        1,
        60,
        24,
        36,
    )


def sized(path: str) -> FileResult:
    """A job whose time grows with the file's size: larger files finish later."""
    time.sleep(os.path.getsize(path) / 20_000)
    return work(path)


@pytest.mark.parametrize("mode", ["process", "thread"])
def test_the_largest_files_start_first_and_results_are_reported_in_input_order(
    tmp_path: Path, mode: str
) -> None:
    sizes = [100, 4000, 300, 8000, 200, 2000]
    paths = []
    for i, size in enumerate(sizes):
        (tmp_path / f"f{i}").write_bytes(b"x" * size)
        paths.append(str(tmp_path / f"f{i}"))
    assert largest_first([*paths, "-", str(tmp_path / "missing")]) == [3, 1, 5, 2, 4, 0, 6, 7]
    seen: list[str] = []
    results = run_batch(paths, sized, jobs=2, mode=mode, on_result=lambda r: seen.append(r.path))  # type: ignore[arg-type]
    assert [r.path for r in results] == seen == paths


def test_jobs_zero_is_one_worker_per_core() -> None:
    cores = os.cpu_count() or 1
    assert workers_for(0, 100) == cores
    assert workers_for(0, 1) == workers_for(5, 1) == workers_for(1, 100) == 1
    assert workers_for(3, 2) == 2


def test_an_unexpected_error_is_a_failed_file_unless_reraised() -> None:
    (result,) = run_batch(["boom"], work)
    assert (result.status, result.code, result.message) == (
        "failed",
        1,
        "unexpected ValueError: boom",
    )
    with pytest.raises(ValueError, match="boom"):
        run_batch(["boom"], work, reraise=True)


def test_fail_fast_starts_no_new_file_after_a_failure() -> None:
    paths = ["a", "b", "c", "d"]
    results = run_batch(paths, functools.partial(work, fail="b"), fail_fast=True)
    assert [r.status for r in results] == ["compacted", "failed", "skipped", "skipped"]
    assert results[2].message == "not run: --fail-fast"
    threaded = run_batch(
        [f"f{i}" for i in range(20)],
        functools.partial(work, fail="f0", slow=0.02),
        jobs=2,
        mode="thread",
        fail_fast=True,
    )
    assert threaded[0].status == "failed"
    assert sum(r.status == "skipped" for r in threaded) >= 15
    # worker processes are handed two files each at a time: after the first fails at once,
    # the three others handed out finish and nothing else starts
    processes = run_batch(
        [f"f{i}" for i in range(20)], fails_at_once, jobs=2, mode="process", fail_fast=True
    )
    assert [r.status for r in processes] == ["failed"] + ["compacted"] * 3 + ["skipped"] * 16


def fails_at_once(path: str) -> FileResult:
    """A job that fails on `f0` at once and takes 0.2 s on every other file."""
    if path == "f0":
        return work(path, fail="f0")
    time.sleep(0.2)
    return work(path)


class Slow:
    """A summarizer that records how many requests it serves at once."""

    name = "llm"

    def __init__(self) -> None:
        self.active = 0
        self.most = 0
        self.lock = threading.Lock()

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        with self.lock:
            self.active += 1
            self.most = max(self.most, self.active)
        time.sleep(0.05)
        with self.lock:
            self.active -= 1
        return SummaryResult("summary", "llm", Facts(), llm_calls=1)


def test_shared_backend_caps_requests_in_flight_and_counts_calls() -> None:
    inner = Slow()
    backend = SharedBackend(inner, limit=2)
    request = SummaryRequest(messages=(), counter=None, budget_tokens=10)  # type: ignore[arg-type]
    threads = [threading.Thread(target=backend.summarize, args=(request,)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert (inner.most, backend.calls, backend.name) == (2, 8, "llm")


# ---------------------------------------------------------------------------------------------
# the command


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder of transcripts, one of them broken; commands run in tmp_path."""
    monkeypatch.chdir(tmp_path)
    logs = tmp_path / "logs"
    logs.mkdir()
    for path in SESSIONS:
        shutil.copy(path, logs / path.name)
    shutil.copy(FIXTURES / "broken" / "invalid-json.jsonl", logs / "broken.jsonl")
    return logs


KEEP = ("--keep-recent-tokens", "2000")


def test_one_bad_file_is_reported_by_name_and_the_others_are_compacted(folder: Path) -> None:
    result = run("compact", "logs", "--out-dir", "out", "--force", *KEEP)
    assert result.exit_code == 3
    assert result.stderr == (
        "error: logs/broken.jsonl:2: invalid JSON: unexpected end of data at column 51\n"
        "logs/codex-summarize-session.jsonl: not summarized: the summary would not be smaller "
        "than the turns it replaces (221 tokens, 57 replaced)\n"
        "logs/openai-summarize-session.jsonl: not summarized: the summary would not make the "
        "context smaller (2,602 tokens, 2,538 before)\n"
    )
    assert result.stdout == (
        "file                                      before   after         saved  status               \n"
        "logs/anthropic-summarize-session.jsonl     5,622   2,385   3,237 (58%)  compacted            \n"
        "logs/broken.jsonl                              -       -             -  failed (exit 3)      \n"
        "logs/claude-code-summarize-session.jsonl   5,817   2,428   3,389 (58%)  compacted            \n"
        "logs/codex-summarize-session.jsonl         4,847   2,818   2,029 (42%)  compacted            \n"
        "logs/openai-summarize-session.jsonl        3,659   2,538   1,121 (31%)  compacted            \n"
        "logs/pi-summarize-session.jsonl            5,997   2,410   3,587 (60%)  compacted            \n"
        "total (6 files)                           25,942  12,579  13,363 (52%)  5 compacted, 1 failed\n"
    )
    assert sorted(os.listdir("out")) == sorted(p.name for p in SESSIONS)


def test_parallel_jobs_write_the_same_bytes(folder: Path) -> None:
    one = run("compact", "logs", "--out-dir", "one", "--force", *KEEP, "--jobs", "1", "--json")
    four = run("compact", "logs", "--out-dir", "four", "--force", *KEEP, "--jobs", "4", "--json")
    assert one.exit_code == four.exit_code == 3
    assert one.stdout.replace("one/", "four/") == four.stdout
    for path in SESSIONS:
        assert (Path("one") / path.name).read_bytes() == (Path("four") / path.name).read_bytes()


def test_json_lines_say_what_happened_to_each_file(folder: Path) -> None:
    result = run("compact", "logs", "--dry-run", "--force", *KEEP, "--json")
    lines = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert [(r["path"], r["status"], r["exit_code"]) for r in lines] == [
        ("logs/anthropic-summarize-session.jsonl", "compacted", 0),
        ("logs/broken.jsonl", "failed", 3),
        ("logs/claude-code-summarize-session.jsonl", "compacted", 0),
        ("logs/codex-summarize-session.jsonl", "compacted", 0),
        ("logs/openai-summarize-session.jsonl", "compacted", 0),
        ("logs/pi-summarize-session.jsonl", "compacted", 0),
    ]
    assert lines[1]["message"] == (
        "logs/broken.jsonl:2: invalid JSON: unexpected end of data at column 51"
    )
    first = lines[0]
    assert first["diff"]["tokens_after"] == first["tokens_after"] < first["tokens_before"]
    assert first["keep_recent_tokens"] == 2000
    assert not Path("out").exists()
    # the dry run's count is that of the file a real run writes, as estimate counts it
    session = "logs/anthropic-summarize-session.jsonl"
    assert run("compact", session, "-o", "real.jsonl", "--force", *KEEP).exit_code == 0
    counted = run("estimate", "real.jsonl", "--method", first["method"], "--json")
    assert orjson.loads(counted.stdout)["tokens"] == first["tokens_after"]


def test_fail_fast_stops_and_says_so(folder: Path) -> None:
    args = ["logs", "--out-dir", "out", "--force", *KEEP, "--fail-fast", "--jobs", "1"]
    result = run("compact", *args)
    assert result.exit_code == 3
    assert result.stderr == (
        "error: logs/broken.jsonl:2: invalid JSON: unexpected end of data at column 51\n"
        "stopped after a failure (--fail-fast): 4 files not compacted\n"
    )
    assert result.stdout.splitlines()[-2:] == [
        "logs/pi-summarize-session.jsonl                -      -            -  skipped                         ",
        "total (6 files)                            5,622  2,385  3,237 (58%)  1 compacted, 1 failed, 4 skipped",
    ]
    assert os.listdir("out") == ["anthropic-summarize-session.jsonl"]


def test_many_files_without_a_destination_is_a_usage_error(folder: Path) -> None:
    result = run("compact", "logs")
    assert result.exit_code == 2
    assert result.stderr == (
        "error: 6 inputs: choose where the results go with --out-dir DIR or --in-place "
        "(or --dry-run)\n"
    )


def test_progress_bar_on_a_terminal_only(folder: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPACTCLI_")}
    env.update(COLUMNS="100", TERM="xterm", LITELLM_LOCAL_MODEL_COST_MAP="True")
    env.pop("NO_COLOR", None)
    command = [sys.executable, "-m", "compactcli", "compact", "logs", "--out-dir", "out", *KEEP]
    leader, follower = pty.openpty()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=follower, env=env)
    os.close(follower)
    seen = read_terminal(leader)
    out, _ = process.communicate(timeout=60)
    os.close(leader)
    assert process.returncode == 3
    assert b"compacting" in seen and b"tokens saved" in seen and b"LLM calls" in seen
    # what the terminal shows: each line as left after its last erase; a line printed while the
    # bar shows is printed above it, never after it on the bar's line
    text = re.sub(r"\x1b\[(?:\d+)?[ABCDGJ]|\x1b\[\?25[hl]", "", seen.decode())
    shown = [re.split(r"\r\x1b\[2K|\r", line.rstrip("\r"))[-1] for line in text.split("\n")]
    shown = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in shown]
    (error,) = [line for line in shown if "invalid JSON" in line]
    assert error.startswith("error: logs/broken.jsonl:2: "), shown
    assert b"compacting" not in out
    assert out.decode().splitlines()[0].startswith("file")
    # in a pipe: nothing but results
    plain = subprocess.run(
        [*command[:5], "--out-dir", "again", *KEEP], capture_output=True, env=env
    )
    assert plain.stderr.decode().splitlines() == [
        "error: logs/broken.jsonl:2: invalid JSON: unexpected end of data at column 51"
    ]


@pytest.mark.llm
def test_llm_batch_runs_in_threads_with_one_server(folder: Path) -> None:
    from tests.llm_server import ok, serve
    from tests.test_llm_summarizer import ANSWER, MODEL

    (folder / "broken.jsonl").unlink()
    args = ["--force", *KEEP, "--summarizer", "llm", "--model", MODEL, "--no-cache"]
    with serve(ok(ANSWER)) as server:
        result = run(
            "compact",
            "logs",
            "--out-dir",
            "out",
            *args,
            "--api-base",
            server.url,
            "--jobs",
            "3",
            "--llm-jobs",
            "2",
            "--json",
        )
        assert len(server.requests) == 5
    assert result.exit_code == 0, result.stderr
    lines = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert [r["llm_calls"] for r in lines] == [1, 1, 1, 1, 1]
    assert get_summarizer("extractive").name == "extractive"


def dies_on(path: str, fatal: str) -> FileResult:
    """A job whose worker process dies (as when the kernel kills it) on `fatal`."""
    if path == fatal:
        os._exit(9)
    time.sleep(0.05)
    return work(path)


def test_a_worker_that_dies_fails_the_files_its_pool_held_and_the_others_go_on() -> None:
    paths = [f"f{i}" for i in range(12)]
    results = run_batch(paths, functools.partial(dies_on, fatal="f2"), jobs=2, mode="process")
    assert [r.path for r in results] == paths
    assert results[2].status == "failed"
    died = [r for r in results if r.status == "failed"]
    assert all(r.code == 1 and r.message.startswith("worker process died: ") for r in died)
    assert len(died) <= 5  # the files handed out then (two per worker), one more at worst
    assert [r.status for r in results[-4:]] == ["compacted"] * 4
