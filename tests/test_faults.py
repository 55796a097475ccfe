"""Interruption and faults, with real processes: Ctrl-C leaves no partial file and exits 130; a
full disk or an unwritable folder is one clear line (exit 5) with the input untouched; a closed
pipe (`| head`) ends quietly."""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from compactcli import read_transcript, validate
from tests.conftest import FIXTURES
from tests.llm_server import Reply, completion, serve
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
    time.sleep(1.0)  # the command is up and waiting for the rest
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
    for i in range(8):
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
    assert 1 <= len(written) < 8
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
