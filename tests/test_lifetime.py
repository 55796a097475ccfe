"""`compactcli.lifetime`: what a finished command leaves to the system.

`keep` holds nothing unless enabled, and when enabled holds the last call's objects (freeing the
previous call's) out of the collector's sight; `exit_now` flushes the standard streams and ends
the process with the code given, and falls back to a normal exit (exit handlers run) while an
exit handler is registered or another thread runs, but for those `exit_past` named. The command
line's exit codes and output through `main()` are checked by every test that runs `compactcli`
in a subprocess."""

from __future__ import annotations

import gc
import os
import pathlib
import subprocess
import sys
import weakref
from collections.abc import Iterator

import orjson
import pytest

from compactcli import lifetime
from tests.conftest import FIXTURES, ROOT


class _Thing:
    pass


@pytest.fixture
def restored() -> Iterator[None]:
    saved = dict(lifetime._state)
    try:
        yield
    finally:
        lifetime._state.clear()
        lifetime._state.update(saved)
        gc.unfreeze()


def test_keep_holds_nothing_unless_enabled(restored: None) -> None:
    assert not lifetime.enabled()
    thing = _Thing()
    alive = weakref.ref(thing)
    lifetime.keep(thing)
    del thing
    assert alive() is None
    assert gc.get_freeze_count() == 0


def test_keep_holds_the_last_call_objects_out_of_the_collector(restored: None) -> None:
    lifetime.enable()
    assert lifetime.enabled()
    first, second = _Thing(), _Thing()
    first_alive, second_alive = weakref.ref(first), weakref.ref(second)
    lifetime.keep(first)
    del first
    assert first_alive() is not None
    assert gc.get_freeze_count() > 0
    lifetime.keep(second)  # replaces the first
    del second
    assert first_alive() is None
    assert second_alive() is not None
    assert gc.get_freeze_count() > 0


SCRIPT = """
import atexit, sys, threading, time
from compactcli import lifetime
mode = sys.argv[1]
if mode == "handler":
    atexit.register(lambda: print("handler ran", file=sys.stderr))
if mode == "thread":
    threading.Thread(target=time.sleep, args=(0.2,)).start()
if mode.startswith("past"):  # a client's thread and exit handler that exit_now may end past
    lifetime.enable()
    client = threading.Thread(target=time.sleep, args=(30,), daemon=True)
    client.start()
    atexit.register(lambda: print("handler ran", file=sys.stderr))
    lifetime.exit_past([client], 1)
if mode == "past+thread":  # and a thread no one named: a normal exit
    threading.Thread(target=time.sleep, args=(0.2,)).start()
if mode == "past+handler":  # and an exit handler no one named: a normal exit
    atexit.register(lambda: print("other handler ran", file=sys.stderr))
sys.stdout.write("partial line, not flushed")
sys.stderr.write("to stderr, not flushed")
try:
    lifetime.exit_now(3)
except SystemExit as done:
    print(f"SystemExit {done.code}", file=sys.stderr)
    raise
print("not reached")
"""


def _env() -> dict[str, str]:
    """The environment, with standard streams buffered (so an unflushed write would be lost)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env["PYTHONPATH"] = str(ROOT)
    return env


def _run(mode: str) -> subprocess.CompletedProcess[str]:
    env = _env()
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, mode],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("mode", "stderr"),
    [
        ("plain", "to stderr, not flushed"),  # flushed, then the process ends at once
        ("handler", "to stderr, not flushedSystemExit 3\nhandler ran\n"),  # a normal exit
        ("thread", "to stderr, not flushedSystemExit 3\n"),  # a normal exit: the thread ends
        ("past", "to stderr, not flushed"),  # ends at once, past the named thread and handler
        ("past+thread", "to stderr, not flushedSystemExit 3\nhandler ran\n"),
        ("past+handler", "to stderr, not flushedSystemExit 3\nother handler ran\nhandler ran\n"),
    ],
)
def test_exit_now_flushes_and_ends_with_the_code(mode: str, stderr: str) -> None:
    done = _run(mode)
    assert (done.returncode, done.stdout, done.stderr) == (3, "partial line, not flushed", stderr)


def test_exit_now_into_a_closed_pipe_ends_quietly() -> None:
    """A reader that went away: the flush fails, the process still ends with its code, and
    nothing is printed about it."""
    script = (
        "import sys\nfrom compactcli import lifetime\n"
        "sys.stdout.write('x' * 100)\nlifetime.exit_now(0)\n"
    )
    env = _env()
    with subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    ) as process:
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()  # the reader goes away before the write
        error = process.stderr.read()
        code = process.wait(timeout=60)
    assert (code, error) == (0, b"")


def test_compact_file_keeps_its_transcripts_when_enabled(
    restored: None, tmp_path: pathlib.Path
) -> None:
    """The one library call that does: `compact_file` hands its input and result to `keep`."""
    from compactcli.compact_file import Destination, FilePlan, compact_file
    from compactcli.summarizers import get_summarizer
    from compactcli.transcript import Transcript

    source = str(FIXTURES / "transcripts" / "claude-code-session.jsonl")
    out = tmp_path / "out.jsonl"
    plan = FilePlan(
        given={"force": True, "keep_recent_tokens": 100},
        policies=None,
        destinations={source: Destination("file", str(out))},
    )
    lifetime.enable()
    result = compact_file(source, plan, lambda settings: get_summarizer("extractive"))
    kept = lifetime._state["kept"]
    assert [type(k) for k in kept] == [Transcript, Transcript]
    assert kept[0].source == source
    assert kept[1].records[-1].raw == orjson.loads(out.read_bytes().splitlines()[-1])
    assert result.status == "compacted"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize(("code", "expected"), [(0, 5), (1, 1)])
def test_exit_now_onto_a_full_disk_says_so_in_one_line(code: int, expected: int) -> None:
    """Standard output that cannot take what is left to flush: one line on standard error,
    and a run that would have exited 0 exits 5 (the output could not be written)."""
    script = (
        "import sys\nfrom compactcli import lifetime\n"
        f"sys.stdout.write('report line')\nlifetime.exit_now({code})\n"
    )
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-c", script], stdout=full, stderr=subprocess.PIPE, env=_env()
        )
    assert (done.returncode, done.stderr) == (
        expected,
        b"error: <stdout>: cannot write: No space left on device\n",
    )
