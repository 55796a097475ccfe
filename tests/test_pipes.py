"""Same bytes three ways: `prune | summarize` through real pipes, `compact`, and `compact()`.

Every bundled transcript goes through:

- `compactcli prune F OPTIONS | compactcli summarize OPTIONS` (two processes and a real pipe for
  one transcript of each format and each with images or non-ASCII text; for the others the same
  two commands in this process, the first's output given to the second as its input),
- `compactcli compact F --force OPTIONS` (one process),
- `compactcli.stages.compact.compact(...)` (the library, in this process),

and the three outputs are compared byte for byte (the library's with the undo the command records,
`compactcli.undo.record`; the pipe's records without the undo each command records, since a pipe
records one per stage and `compact` one for the whole run). `--force` (or an input over its threshold, as
with `--threshold 1`) makes `compact` run the summary as the pipe does; `--keep-recent-tokens`
set explicitly gives both stages the same tail (and turns off fitting the tail to the budget).
The one documented difference: `compact` checks the end result with the `estimate` count and
keeps the input when that count did not fall, which a pipe of stages does not do; then
`compact` must give the input back and the pipe's result must indeed not be smaller.
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import orjson
import pytest

from compactcli import get_dialect, read_transcript, to_bytes, undo
from compactcli.boundary import MARK
from compactcli.estimate import EstimateOptions, estimate
from compactcli.stages.compact import CompactOptions, compact, compact_check
from compactcli.stages.prune import PruneOptions
from compactcli.stages.summarize import SummarizeOptions
from compactcli.summarizers import get_summarizer
from compactcli.tokens import get_counter
from compactcli.undo import split_lines
from tests.cli_runner import read_terminal, run
from tests.conftest import FIXTURES, representative

FILES = sorted((FIXTURES / "transcripts").glob("*.jsonl"))
PIPED = representative(FILES)
"""The fixtures that go through a real pipe between two processes (one of each format, and
each with images or non-ASCII text)."""
KEEP = "300"
BIN = str(Path(sys.executable).parent / "compactcli")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPACTCLI_")}
    env.update(NO_COLOR="1", COLUMNS="200", TERM="dumb", LITELLM_LOCAL_MODEL_COST_MAP="True")
    return env


def _pipe(path: Path, cwd: Path, *options: str) -> bytes:
    prune = subprocess.Popen(
        [BIN, "prune", str(path), *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=cwd,
        env=_env(),
    )
    summarize = subprocess.run(
        [BIN, "summarize", *options],
        stdin=prune.stdout,
        capture_output=True,
        cwd=cwd,
        env=_env(),
        check=True,
    )
    assert prune.stdout is not None
    prune.stdout.close()
    assert prune.wait() == 0
    return summarize.stdout


def _compact(path: Path, cwd: Path, *options: str) -> bytes:
    done = subprocess.run(
        [BIN, "compact", str(path), *options],
        capture_output=True,
        cwd=cwd,
        env=_env(),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[bytes, bytes]]:
    """(pipe, compact) output of every fixture: one `compact` run over the whole folder (into
    --out-dir); the pipes of the representative fixtures (`PIPED`) run a few at a time, and the
    others' two commands run in this process, the first's output the second's input."""
    cwd = tmp_path_factory.mktemp("pipes")  # no policy file here
    keep = ("--keep-recent-tokens", KEEP)
    folder = FIXTURES / "transcripts"
    _compact(folder, cwd, "--force", *keep, "--out-dir", "out", "--jobs", "2")

    def both(path: Path) -> tuple[str, tuple[bytes, bytes]]:
        return path.name, (_pipe(path, cwd, *keep), (cwd / "out" / path.name).read_bytes())

    with ThreadPoolExecutor(max_workers=4) as pool:
        found = dict(pool.map(both, PIPED))
    for path in FILES:  # the others: the same two commands in this process, bytes between them
        if path.name not in found:
            pruned = run("prune", str(path), *keep)
            assert pruned.exit_code == 0, pruned.stderr
            piped = run("summarize", *keep, input=pruned.stdout_bytes)
            assert piped.exit_code == 0, piped.stderr
            found[path.name] = (piped.stdout_bytes, (cwd / "out" / path.name).read_bytes())
    return found


@pytest.mark.parametrize("name", ["pi-session.jsonl", "claude-code-summarize-session.jsonl"])
def test_standard_output_is_the_same_as_the_out_dir_file(
    name: str, outputs: dict[str, tuple[bytes, bytes]], tmp_path: Path
) -> None:
    path = FIXTURES / "transcripts" / name
    assert _compact(path, tmp_path, "--force", "--keep-recent-tokens", KEEP) == outputs[name][1]


def _library(path: Path, **changes: object) -> tuple[bytes, bool]:
    transcript = read_transcript(str(path))
    counter = get_counter(
        "heuristic",
        model=get_dialect(transcript.format).model(transcript),
        format=transcript.format,
    )
    options = CompactOptions(
        prune=PruneOptions(keep_recent_tokens=int(KEEP)),
        summarize=SummarizeOptions(keep_recent_tokens=int(KEEP)),
        **changes,  # type: ignore[arg-type]
    )
    result = compact(transcript, options, summarizer=get_summarizer("extractive"), counter=counter)
    check = compact_check(result)
    assert check is not None
    if check.changed:  # as the command writes it: with its undo
        result = undo.record(transcript, result, archive=None)
    return to_bytes(result), check.kept_input is not None


def _records(data: bytes) -> bytes:
    """`data` without the undo each command records in its boundary (`compactcli.undo`): a
    pipe of stages records one per stage, `compact` one for the whole run."""
    lines = []
    for line in split_lines(data):
        if b'"undo"' in line:
            raw = orjson.loads(line)
            details = raw.get(MARK) or raw.get("payload", {}).get(MARK)
            if isinstance(details, dict) and details.pop("undo", None) is not None:
                line = orjson.dumps(raw) + b"\n"
        lines.append(line)
    return b"".join(lines)


def _counted(data: bytes, tmp_path: Path) -> int:
    path = tmp_path / "counted.jsonl"
    path.write_bytes(data)
    transcript = read_transcript(str(path))
    counter = get_counter(
        "heuristic",
        model=get_dialect(transcript.format).model(transcript),
        format=transcript.format,
    )
    return estimate(transcript, EstimateOptions(method="heuristic"), counter=counter).tokens


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_pipe_compact_and_library_give_the_same_bytes(
    path: Path, outputs: dict[str, tuple[bytes, bytes]], tmp_path: Path
) -> None:
    piped, command = outputs[path.name]
    library, kept = _library(path, force=True)
    assert command == library
    if not kept:
        assert _records(piped) == _records(command)
        return
    original = path.read_bytes()
    assert command == original
    assert piped != original
    assert _counted(piped, tmp_path) >= _counted(original, tmp_path)


def test_the_comparison_is_not_trivial(outputs: dict[str, tuple[bytes, bytes]]) -> None:
    changed = sorted(
        name
        for name, (_, command) in outputs.items()
        if command != (FIXTURES / "transcripts" / name).read_bytes()
    )
    summarized = [name for name in changed if b"compactcli summary" in outputs[name][1]]
    assert len(changed) >= 10, changed
    assert {n.split("-")[0] for n in summarized} == {"anthropic", "claude", "codex", "openai", "pi"}
    kept = [name for name in outputs if _library(FIXTURES / "transcripts" / name, force=True)[1]]
    # each stage counts the context as compact does, so none leaves a result that is larger
    assert kept == []


@pytest.mark.parametrize(
    "name",
    [p.name for p in FILES if "summarize-session" in p.name],
)
def test_over_the_threshold_without_force_is_the_same_pipe(name: str, tmp_path: Path) -> None:
    path = FIXTURES / "transcripts" / name
    keep = ("--keep-recent-tokens", "2000")
    piped = _pipe(path, tmp_path, *keep)
    command = _compact(path, tmp_path, "--threshold", "1", *keep)
    assert _records(command) == _records(piped) != path.read_bytes()
    transcript = read_transcript(str(path))
    counter = get_counter(
        "heuristic",
        model=get_dialect(transcript.format).model(transcript),
        format=transcript.format,
    )
    options = CompactOptions(
        prune=PruneOptions(keep_recent_tokens=2000),
        summarize=SummarizeOptions(keep_recent_tokens=2000),
        threshold="1",
    )
    result = compact(transcript, options, summarizer=get_summarizer("extractive"), counter=counter)
    assert to_bytes(undo.record(transcript, result, archive=None)) == command


def _on_a_terminal(*args: str) -> tuple[int, bytes, bytes]:
    """Run `compactcli ARGS` with standard output a terminal (a pseudo-terminal) and standard
    error a pipe: (exit code, what reached the terminal, standard error)."""
    import pty

    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPACTCLI_")}
    env.update(LITELLM_LOCAL_MODEL_COST_MAP="True", NO_COLOR="1", COLUMNS="100")
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "compactcli", *args],
        stdout=follower,
        stderr=subprocess.PIPE,
        env=env,
    )
    os.close(follower)
    seen = read_terminal(leader)
    _, errors = process.communicate(timeout=60)
    os.close(leader)
    return process.returncode, seen, errors


SESSION = str(FIXTURES / "transcripts" / "claude-code-summarize-session.jsonl")


@pytest.mark.parametrize(
    "args",
    [
        ["compact", SESSION, "--force"],
        ["prune", SESSION],
        ["summarize", SESSION],
        ["redact", SESSION],
    ],
    ids=["compact", "prune", "summarize", "redact"],
)
def test_a_transcript_is_not_written_to_a_terminal_unless_asked(args: list[str]) -> None:
    code, seen, errors = _on_a_terminal(*args)
    assert (code, seen) == (2, b"")
    assert errors.decode() == (
        "error: standard output is a terminal: write the transcript with -o FILE, --out-dir DIR "
        "or --in-place (-o - prints it here)\n"
    )
    code, seen, _ = _on_a_terminal(*args, "-o", "-")
    assert code in (0, 1) and seen.count(b'{"') > 10  # the records, since -o - says so
