"""Interruption and faults, with real processes: Ctrl-C leaves no partial file and exits 130 (0
once the output is in place); a full disk or an unwritable folder is one clear line (exit 5)
with the input and the reports untouched; a killed run's temporary file is removed by the next
run; a closed pipe (`| head`) ends quietly; a rejected key is exit 4, and an answer too large to
use gives the extractive summary."""

from __future__ import annotations

import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from compactcli import get_dialect, read_transcript, validate
from compactcli.summarizers.llm import BREAKER
from tests.cli_runner import run
from tests.conftest import FIXTURES
from tests.llm_server import Reply, completion, error, ok, serve
from tests.test_llm_summarizer import ANSWER, MODEL
from tests.transcript_strategies import Call, Plan, Step, Turn, render

PI = FIXTURES / "transcripts" / "pi-summarize-session.jsonl"
COMMAND = [sys.executable, "-m", "compactcli"]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPACTCLI_")}
    env.update(NO_COLOR="1", COLUMNS="200", TERM="dumb", LITELLM_LOCAL_MODEL_COST_MAP="True")
    env.pop("COMPACTCLI_TRACEBACK", None)
    return env


def _wait_for(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.02)


def _reading_a_pipe(pid: int) -> bool:
    """Whether process `pid` is blocked reading a pipe (Linux: its wait channel says so)."""
    try:
        with open(f"/proc/{pid}/wchan") as channel:
            return "pipe" in channel.read()
    except OSError:  # no /proc: give it time instead
        time.sleep(1.0)
        return True


def big_transcript(turns: int = 60, size: int = 4000) -> bytes:
    """A Claude Code session with many turns of large tool output (about turns x 3 x size)."""
    body = "\n".join(
        f"{i:5d}  def handler_{i}(request): return render(request, 'page.html')"
        for i in range(size // 60)
    )
    plan = Plan(
        turns=tuple(
            Turn(
                prompt=f"step {t}: fix the failing test in src/app.py",
                steps=(
                    Step(
                        text=f"Reading the files for step {t}.",
                        calls=(
                            Call(0, f"src/module_{t}.py", body),
                            Call(1, f"pytest tests/test_{t}.py", body),
                        ),
                    ),
                    Step(text=f"Step {t} is done."),
                ),
            )
            for t in range(turns)
        ),
        seed=7,
    )
    return render(plan, "claude-code")


def _leftovers(folder: Path) -> list[str]:
    """Temporary files a write could have left behind."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".") or p.suffix == ".tmp")


# ---------------------------------------------------------------------------------------------
# Ctrl-C


def test_ctrl_c_while_reading_standard_input(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [*COMMAND, "compact", "-", "-o", str(tmp_path / "out.jsonl")],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
    )
    assert process.stdin is not None
    data = PI.read_bytes()
    process.stdin.write(data[: len(data) // 2])
    process.stdin.flush()
    _wait_for(lambda: _reading_a_pipe(process.pid))  # the command is up, waiting for the rest
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130
    assert err == b"error: interrupted\n"
    assert os.listdir(tmp_path) == []


def _llm_in_place(path: Path, api_base: str, *extra: str) -> list[str]:
    """`compact PATH --in-place --force --keep-recent-tokens 2000` with the LLM summarizer
    asking `api_base`."""
    llm = ["--summarizer", "llm", "--model", MODEL, "--api-base", api_base, "--no-cache"]
    compact = ["compact", str(path), "--in-place", "--force", "--keep-recent-tokens", "2000"]
    return [*COMMAND, *compact, *llm, *extra]


def test_ctrl_c_during_slow_llm_calls_in_place_does_not_wait_for_them(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        shutil.copy(PI, tmp_path / f"{name}.jsonl")
    with serve(Reply(200, completion(ANSWER), delay=60)) as server:
        process = subprocess.Popen(
            _llm_in_place(tmp_path, server.url, "--jobs", "3"),
            stderr=subprocess.PIPE,
            env=_env(),
        )
        _wait_for(lambda: len(server.requests) == 3)
        started = time.monotonic()
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    assert time.monotonic() - started < 10
    assert process.returncode == 130
    assert err == b"error: interrupted\n"
    assert sorted(os.listdir(tmp_path)) == ["a.jsonl", "b.jsonl", "c.jsonl"]  # no backup
    for name in ("a", "b", "c"):
        assert (tmp_path / f"{name}.jsonl").read_bytes() == PI.read_bytes()


def test_a_session_written_to_while_it_is_compacted_in_place_is_left_as_it_is(
    tmp_path: Path,
) -> None:
    target = tmp_path / "s.jsonl"
    shutil.copy(PI, target)
    appended = PI.read_bytes().splitlines(keepends=True)[-1]  # the agent writes one more line
    with serve(Reply(200, completion(ANSWER), delay=1.0)) as server:
        process = subprocess.Popen(
            _llm_in_place(target, server.url),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_env(),
        )
        _wait_for(lambda: len(server.requests) == 1)  # read, and waiting for the summary
        with open(target, "ab") as session:
            session.write(appended)
        out, err = process.communicate(timeout=60)
    assert (process.returncode, out) == (5, b"")
    assert err.decode() == (
        f"error: {target}: changed while it was being compacted (is an agent still writing to "
        "it?); left as it is\n"
    )
    assert target.read_bytes() == PI.read_bytes() + appended
    assert os.listdir(tmp_path) == ["s.jsonl"]  # no backup


def test_ctrl_c_in_a_process_batch_leaves_only_whole_files(tmp_path: Path) -> None:
    source = tmp_path / "in"
    source.mkdir()
    data = big_transcript()
    for i in range(24):  # more than a busy machine finishes between the first and the Ctrl-C
        (source / f"s{i}.jsonl").write_bytes(data)
    out = tmp_path / "out"
    args = [*COMMAND, "compact", str(source), "--out-dir", str(out), "--jobs", "2", "--force"]
    expected_run = subprocess.run(
        [*COMMAND, "compact", str(source / "s0.jsonl"), "--force"],
        capture_output=True,
        env=_env(),
        check=True,
    )
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_env())
    _wait_for(lambda: out.exists() and any(p.suffix == ".jsonl" for p in out.iterdir()))
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert err == b"error: interrupted\n"  # no traceback from the worker processes
    assert _leftovers(out) == []
    written = sorted(out.iterdir())
    assert 1 <= len(written) < 24
    for path in written:
        assert path.read_bytes() == expected_run.stdout


# ---------------------------------------------------------------------------------------------
# unwritable output, full disk


def _one_line_exit_5(done: subprocess.CompletedProcess[bytes], message: str) -> None:
    assert done.returncode == 5
    assert done.stderr.decode() == f"error: {message}\n"
    assert done.stdout == b""


def test_output_folder_that_cannot_be_made(tmp_path: Path) -> None:
    (tmp_path / "blocker").write_text("a file, not a folder")
    target = tmp_path / "blocker" / "out.jsonl"
    done = subprocess.run(
        [*COMMAND, "compact", str(PI), "--force", "-o", str(target)],
        capture_output=True,
        env=_env(),
    )
    _one_line_exit_5(done, f"{tmp_path / 'blocker'}: cannot create the output folder: File exists")


def test_out_dir_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "out").write_text("a file")
    done = subprocess.run(
        [*COMMAND, "compact", str(PI), "--out-dir", str(tmp_path / "out")],
        capture_output=True,
        env=_env(),
    )
    _one_line_exit_5(done, f"{tmp_path / 'out'}: --out-dir is a file, not a folder")


@pytest.mark.skipif(os.geteuid() == 0, reason="permissions do not bind the superuser")
def test_unwritable_folder_in_place(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    shutil.copy(PI, folder / "s.jsonl")
    folder.chmod(0o555)
    try:
        done = subprocess.run(
            [
                *COMMAND,
                "compact",
                str(folder / "s.jsonl"),
                "--in-place",
                "--force",
                "--keep-recent-tokens",
                "2000",
            ],
            capture_output=True,
            env=_env(),
        )
    finally:
        folder.chmod(0o755)
    _one_line_exit_5(done, f"{folder / 's.jsonl'}: cannot keep a backup: Permission denied")
    assert (folder / "s.jsonl").read_bytes() == PI.read_bytes()
    assert os.listdir(folder) == ["s.jsonl"]


def _disk_of(limit: int) -> Callable[[], None]:
    """A child process whose files cannot grow past `limit` bytes, as on a full disk."""

    def setup() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return setup


def test_full_disk_writing_a_file(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            *COMMAND,
            "compact",
            str(PI),
            "--force",
            "--keep-recent-tokens",
            "2000",
            "-o",
            str(tmp_path / "out.jsonl"),
        ],
        capture_output=True,
        env=_env(),
        preexec_fn=_disk_of(4096),
    )
    _one_line_exit_5(done, f"{tmp_path / 'out.jsonl'}: cannot write: File too large")
    assert _leftovers(tmp_path) == []
    assert os.listdir(tmp_path) == []


def test_full_disk_in_place_leaves_the_input_and_no_backup(tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    shutil.copy(PI, target)
    done = subprocess.run(
        [*COMMAND, "compact", str(target), "--in-place", "--force", "--keep-recent-tokens", "2000"],
        capture_output=True,
        env=_env(),
        preexec_fn=_disk_of(4096),
    )
    _one_line_exit_5(done, f"{target}: cannot write: File too large")
    assert target.read_bytes() == PI.read_bytes()
    assert os.listdir(tmp_path) == ["s.jsonl"]


def test_full_disk_in_a_batch_fails_each_file_and_keeps_going(tmp_path: Path) -> None:
    source = tmp_path / "in"
    source.mkdir()
    shutil.copy(PI, source / "big.jsonl")
    shutil.copy(FIXTURES / "transcripts" / "openai-no-final-newline.jsonl", source / "small.jsonl")
    out = tmp_path / "out"
    done = subprocess.run(
        [
            *COMMAND,
            "compact",
            str(source),
            "--out-dir",
            str(out),
            "--force",
            "--keep-recent-tokens",
            "2000",
            "--json",
        ],
        capture_output=True,
        env=_env(),
        preexec_fn=_disk_of(4096),
    )
    assert done.returncode == 5
    assert done.stderr.decode() == f"error: {out / 'big.jsonl'}: cannot write: File too large\n"
    assert sorted(os.listdir(out)) == ["small.jsonl"]
    assert validate(read_transcript(str(out / "small.jsonl"))).errors == ()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize(
    "args",
    [
        ("compact", str(PI), "--force", "--keep-recent-tokens", "2000", "-o", "-"),
        ("prune", str(PI)),
        ("estimate", str(PI), "--json"),
    ],
    ids=["compact-to-stdout", "prune", "estimate"],
)
def test_standard_output_on_a_full_disk_is_one_line(args: tuple[str, ...]) -> None:
    with open("/dev/full", "wb") as full:
        done = subprocess.run(
            [*COMMAND, *args], stdout=full, stderr=subprocess.PIPE, env=_env(), timeout=60
        )
    assert (done.returncode, done.stderr.decode()) == (
        5,
        "error: <stdout>: cannot write: No space left on device\n",
    )


# ---------------------------------------------------------------------------------------------
# a closed pipe


def test_head_closing_the_pipe_ends_quietly(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_bytes(big_transcript())
    process = subprocess.Popen(
        [*COMMAND, "compact", str(path), "--force"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
    )
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.read(100)
    process.stdout.close()  # what `| head -c 100` does
    err = process.stderr.read()
    assert process.wait(timeout=60) == 0
    assert err == b""
    assert len(first) == 100


def test_head_in_a_shell_pipe(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_bytes(big_transcript())
    bin_dir = os.path.dirname(sys.executable)
    done = subprocess.run(
        [
            "bash",
            "-c",
            f'"{bin_dir}/compactcli" compact "{path}" --force | head -n 1 >/dev/null; '
            'echo "${PIPESTATUS[0]}"',
        ],
        capture_output=True,
        env=_env(),
    )
    assert done.stdout == b"0\n"
    assert done.stderr == b""


# ---------------------------------------------------------------------------------------------
# reports on a full disk, what a killed run leaves, Ctrl-C once the output is in place

CLAUDE = FIXTURES / "transcripts" / "claude-code-session.jsonl"
STAGE_RUNS = {
    "prune": ("prune", str(CLAUDE), "--keep-recent", "0", "--min-chars", "50"),
    "compact": ("compact", str(PI), "--force", "--keep-recent-tokens", "2000"),
}


@pytest.mark.parametrize("command", STAGE_RUNS)
def test_full_disk_appending_stats_leaves_the_old_file_whole(tmp_path: Path, command: str) -> None:
    stats = tmp_path / "stats.jsonl"
    old = b'{"run": 1}\n' * 360  # 3,960 bytes: the next line does not fit under 4,096
    stats.write_bytes(old)
    done = subprocess.run(
        [*COMMAND, *STAGE_RUNS[command], "--stats", str(stats)],  # the transcript: a pipe
        capture_output=True,
        env=_env(),
        preexec_fn=_disk_of(4096),
    )
    assert done.returncode == 5
    assert done.stderr.decode() == f"error: {stats}: cannot write: File too large\n"
    assert stats.read_bytes() == old  # no cut line at its end
    assert os.listdir(tmp_path) == ["stats.jsonl"]


@pytest.mark.parametrize("command", STAGE_RUNS)
def test_full_disk_writing_the_boundary_keeps_the_old_one(tmp_path: Path, command: str) -> None:
    boundary = tmp_path / "boundary.json"
    boundary.write_bytes(b'{"old": true}\n')
    done = subprocess.run(
        [*COMMAND, *STAGE_RUNS[command], "--boundary", str(boundary)],
        capture_output=True,
        env=_env(),
        preexec_fn=_disk_of(256),
    )
    assert done.returncode == 5
    assert done.stderr.decode() == f"error: {boundary}: cannot write: File too large\n"
    assert boundary.read_bytes() == b'{"old": true}\n'
    assert os.listdir(tmp_path) == ["boundary.json"]


def _dead_pid() -> int:
    """The id of a process that has ended (and been waited for)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_run_killed_mid_write_leaves_a_temporary_file_that_the_next_run_removes(
    tmp_path: Path,
) -> None:
    stats = tmp_path / "stats.jsonl"
    with open(stats, "wb") as handle:  # a long report: its copy takes a while to write
        handle.truncate(64 << 20)
    out = tmp_path / "out.jsonl"
    args = [*COMMAND, *STAGE_RUNS["prune"], "-o", str(out), "--stats", str(stats)]
    leftover = None
    for _ in range(3):  # until a write is caught in progress (the first try does, in practice)
        process = subprocess.Popen(args, stdout=subprocess.DEVNULL, env=_env())
        temporary = tmp_path / f".stats.jsonl.compactcli-{process.pid}.tmp"
        while process.poll() is None and not temporary.exists():
            time.sleep(0.001)
        if process.poll() is None:
            process.kill()
            process.wait()
            leftover = temporary
            break
        process.wait()
    assert leftover is not None and leftover.exists(), "no write was caught in progress"
    size = stats.stat().st_size
    assert leftover.stat().st_size <= size  # cut off before the rename: the report is as it was
    again = subprocess.run(args, capture_output=True, env=_env())
    assert (again.returncode, again.stderr) == (0, b"")
    assert not leftover.exists()
    assert sorted(os.listdir(tmp_path)) == ["out.jsonl", "stats.jsonl"]
    with open(stats, "rb") as handle:
        handle.seek(size)
        assert orjson.loads(handle.read())["path"] == str(CLAUDE)  # one whole line added


def test_the_leftovers_of_runs_that_ended_are_removed_and_those_of_live_ones_kept(
    tmp_path: Path,
) -> None:
    dead = tmp_path / f".out.jsonl.compactcli-{_dead_pid()}.tmp"
    other = tmp_path / f".other.jsonl.compactcli-{_dead_pid()}.tmp"
    live = tmp_path / f".out.jsonl.compactcli-{os.getpid()}.tmp"  # this test's own process
    for path in (dead, other, live):
        path.write_bytes(b"half a transcript")
    done = subprocess.run(
        [*COMMAND, *STAGE_RUNS["compact"], "-o", str(tmp_path / "out.jsonl")],
        capture_output=True,
        env=_env(),
    )
    assert done.returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["out.jsonl", live.name])


@pytest.mark.parametrize("command", STAGE_RUNS)
def test_ctrl_c_once_the_output_is_in_place_reports_success(tmp_path: Path, command: str) -> None:
    """The stats go to a named pipe that nobody reads yet: the run waits there, its output
    renamed into place, when Ctrl-C comes."""
    expected = subprocess.run(
        [*COMMAND, *STAGE_RUNS[command]], capture_output=True, env=_env(), check=True
    ).stdout
    pipe = tmp_path / "stats.pipe"
    os.mkfifo(pipe)
    out = tmp_path / "out.jsonl"
    process = subprocess.Popen(
        [*COMMAND, *STAGE_RUNS[command], "-o", str(out), "--stats", str(pipe)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
    )
    _wait_for(out.exists)
    time.sleep(0.3)  # on to the stats, which wait for a reader
    process.send_signal(signal.SIGINT)
    reader = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)  # lets the run go on
    try:
        _, err = process.communicate(timeout=60)
        line = os.read(reader, 1 << 20)
    finally:
        os.close(reader)
    assert (process.returncode, err) == (0, b"")
    assert out.read_bytes() == expected
    assert orjson.loads(line)["changed"] is True


# ---------------------------------------------------------------------------------------------
# the model's answers: a rejected key, an answer too large to use


def _llm(server_url: str) -> list[str]:
    return ["--summarizer", "llm", "--model", MODEL, "--api-base", server_url]


@pytest.mark.llm
@pytest.mark.parametrize("status", [401, 403])
@pytest.mark.parametrize("command", ["summarize", "compact"])
def test_a_rejected_key_ends_the_run_with_exit_4(tmp_path: Path, status: int, command: str) -> None:
    out = tmp_path / "out.jsonl"
    extra = ["--force", "--no-cache"] if command == "compact" else []
    with serve(error(status, "Incorrect API key provided")) as server:
        done = run(
            command,
            str(PI),
            "--keep-recent-tokens",
            "2000",
            *extra,
            *_llm(server.url),
            "-o",
            str(out),
        )
        asked = len(server.requests)
    assert (done.exit_code, done.stdout) == (4, "")
    assert done.stderr == (
        f"error: {MODEL} at {server.url} refused the API key (HTTP {status}): Incorrect API key "
        "provided; check the provider's key variable\n"
    )
    assert asked == 1  # not retried
    assert os.listdir(tmp_path) == []


def _summary(path: Path) -> str:
    transcript = read_transcript(str(path))
    (compaction,) = get_dialect(transcript.format).compactions(transcript)
    return compaction.summary


@pytest.mark.llm
@pytest.mark.parametrize("command", ["summarize", "compact"])
def test_an_answer_too_large_to_use_falls_back_to_the_extractive_summary(
    tmp_path: Path, command: str
) -> None:
    BREAKER.reset()
    big = ANSWER + "\n" + ("x" * 99 + "\n") * 200_000  # 20 MB
    extra = ["--force", "--no-cache"] if command == "compact" else []
    args = [command, str(PI), "--keep-recent-tokens", "2000", *extra]
    offline = run(*args, "-o", str(tmp_path / "offline.jsonl"))
    assert offline.exit_code == 0
    with serve(ok(big)) as server:
        done = run(*args, *_llm(server.url), "-o", str(tmp_path / "llm.jsonl"))
    BREAKER.reset()
    assert done.exit_code == 0
    found = re.search(
        r"llm summarizer: answer too large to use \(([\d,]+) characters for ([\d,]+) tokens\) "
        r"\(3 calls\); the extractive summary was used",
        done.stderr,
    )
    assert found is not None, done.stderr
    assert int(found.group(1).replace(",", "")) == len(big.strip())
    assert _summary(tmp_path / "llm.jsonl") == _summary(tmp_path / "offline.jsonl")


def test_a_ctrl_c_during_a_write_waits_for_it_and_counts_only_until_the_run_settles() -> None:
    from compactcli import interrupts

    signal.signal(signal.SIGINT, signal.default_int_handler)  # as a fresh process has it
    with pytest.raises(KeyboardInterrupt), interrupts.held():
        signal.raise_signal(signal.SIGINT)
        time.sleep(0.01)  # still inside: the write goes on
        reached = True
    assert reached
    interrupts.settle()  # outside a command run: does nothing
    assert not interrupts.settled()
    interrupts.begin()
    try:
        with interrupts.held():
            signal.raise_signal(signal.SIGINT)
            interrupts.settle()  # the output is in place: the Ctrl-C is dropped
        signal.raise_signal(signal.SIGINT)  # and so is one after it
        time.sleep(0.01)
        assert interrupts.settled()
    finally:
        interrupts.reset()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
