"""Invalid in, never invalid out: `compact`, `prune`, `summarize`, `redact` on damaged transcripts.

Mutants (`tests.mutations`: types flipped, keys dropped, ids duplicated, lines swapped,
duplicated, deleted, truncated, invalid JSON; seeded, so every run sees the same ones) of every
bundled fixture, valid and invalid, and of windows of the real sessions in ../shared/corpus
(when it is there) go through each command's own code in-process, as it is and with
`--repair`. For every run: no exception but a `CompactError`, with the exit code the README
documents (0, 1 when the input is refused, 3 when it cannot be read); the input file
unchanged; every output written validates and reads back as its format; an input refused as
invalid leaves no output. A valid input whose calls are all answered comes out of `--repair`
byte for byte as without it. The counts per outcome are printed (`pytest -s`) and each outcome
must occur. A few mutants also go through the real command line, in a process of its own.
"""

from __future__ import annotations

import collections
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compactcli import read_transcript, validate
from compactcli.cli.compact import offline_summarizer
from compactcli.cli.prune import prune_command
from compactcli.cli.summarize import summarize_command
from compactcli.compact_file import Destination, FilePlan, compact_file
from compactcli.errors import CompactError, InvalidTranscript
from compactcli.redact_transcript import redact_file
from compactcli.repair import admit
from tests.conftest import CORPUS, FIXTURES, ROOT
from tests.mutations import Mutant, corpus_windows, mutants, mutate
from tests.transcript_strategies import FORMAT_NAMES, Plan, plans, render

COUNT = 1000
SEED = 20_260_311
COMMANDS = ("compact", "prune", "summarize", "redact")


def sources() -> list[tuple[str, bytes]]:
    found = [
        (path.name, path.read_bytes())
        for folder in ("transcripts", "invalid")
        for path in sorted((FIXTURES / folder).glob("*.jsonl"))
    ]
    return found + corpus_windows(CORPUS)


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Path]:
    """A folder for inputs and outputs: in memory when the system has one (every output is
    written atomically, with an fsync each), else the test's temporary folder."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        folder = Path(tempfile.mkdtemp(prefix="compactcli-fuzz-", dir=shm))
        yield folder
        shutil.rmtree(folder, ignore_errors=True)
    else:
        yield tmp_path


@dataclass(frozen=True)
class Run:
    command: str
    repair: bool
    code: int
    refused: bool  # an InvalidTranscript: an invalid input, or one --repair could not fix
    output: bytes | None


def run(command: str, source: Path, output: Path, repair: bool) -> Run:
    """`compactcli COMMAND SOURCE -o OUTPUT [--repair]` in-process, through the command's own
    code (`compact`, `redact`: the function the command runs for each file)."""
    output.unlink(missing_ok=True)
    refused = False
    if command in ("compact", "redact"):
        destination = Destination("file", str(output))
        plan = FilePlan(
            given={}, policies=None, destinations={str(source): destination}, repair=repair
        )
        try:
            if command == "compact":
                code = compact_file(str(source), plan, offline_summarizer).code
            else:
                code = redact_file(str(source), destination, final=True, repair=repair).code
        except CompactError as error:  # the batch reports it as the file's failure
            code, refused = int(error.exit_code), isinstance(error, InvalidTranscript)
    else:
        function = prune_command if command == "prune" else summarize_command
        try:
            function(str(source), output=str(output), repair=repair)
            code = 0
        except typer.Exit as done:
            code = done.exit_code
            refused = code == 1  # the stages refuse nothing else (one error line each)
    written = output.read_bytes() if output.exists() else None
    return Run(command, repair, code, refused, written)


def check(mutant: Mutant, folder: Path) -> list[str]:
    """Run every command on `mutant`, as it is and with --repair; assert the invariants; the
    outcome of each run."""
    source = folder / "input.jsonl"
    source.write_bytes(mutant.data)
    try:
        transcript = read_transcript(str(source))
        state = "valid" if validate(transcript).ok else "invalid"
        needs = state == "invalid" or bool(admit(transcript, repair=True).repairs)
    except CompactError:
        state, needs = "unreadable", False
    where = f"{mutant.source} {mutant.mutations}"
    outcomes: list[str] = []
    written: dict[tuple[str, bool], bytes | None] = {}
    # outputs read back and found valid, in the input's format: the same bytes read the same,
    # so an output equal to one of them (or to the valid input) is not read again
    checked = {mutant.data} if state == "valid" else set()
    for repair in (False, True):
        for command in COMMANDS:
            output = folder / f"{command}-{repair}.jsonl"
            result = run(command, source, output, repair)
            assert source.read_bytes() == mutant.data, f"{command} changed its input: {where}"
            assert result.code in (0, 1, 3), f"{command} exit {result.code}: {where}"
            if result.output is not None:
                if result.output not in checked:
                    out = read_transcript(str(output))
                    errors = validate(out).errors
                    assert not errors, f"{command} wrote an invalid output: {errors}: {where}"
                    assert out.format == transcript.format, where
                    checked.add(result.output)
            else:
                assert result.code != 0, f"{command} exit 0 and no output: {where}"
            if result.refused:
                assert result.output is None, f"{command} refused but wrote: {where}"
            written[command, repair] = result.output
            outcomes.append(_outcome(state, needs, result))
    if state == "valid" and not needs:
        for command in COMMANDS:
            same = written[command, False] == written[command, True]
            assert same, f"--repair changed a valid input's {command} output: {where}"
    return outcomes


def _outcome(state: str, needs: bool, result: Run) -> str:
    written = result.output is not None
    if result.code == 3:
        return "unreadable: exit 3, nothing written"
    if not result.repair and state == "invalid" and result.refused:
        return "invalid: refused, exit 1, nothing written"
    if result.repair and result.refused:
        return "--repair: cannot be repaired, exit 1, nothing written"
    if result.code == 0 and written:
        if result.repair and needs:
            return "--repair: repaired, exit 0, valid output"
        return "valid: exit 0, valid output"
    return f"other: exit {result.code}, {'valid output' if written else 'nothing written'}"


def test_mutants_never_give_an_invalid_output(scratch: Path) -> None:
    counts: collections.Counter[str] = collections.Counter()
    made = 0
    for mutant in mutants(sources(), COUNT, SEED):
        counts.update(check(mutant, scratch))
        made += 1
    commands = ", ".join(COMMANDS)
    print(f"\n{made} mutants, {sum(counts.values())} runs ({commands}; as they are and --repair):")
    for outcome, count in sorted(counts.items()):
        print(f"  {count:5}  {outcome}")
    assert made >= 1000
    expected = {
        "unreadable: exit 3, nothing written",
        "invalid: refused, exit 1, nothing written",
        "--repair: cannot be repaired, exit 1, nothing written",
        "--repair: repaired, exit 0, valid output",
        "valid: exit 0, valid output",
    }
    assert expected <= counts.keys()
    # what is refused as it is is repaired far more often than not
    repaired = counts["--repair: repaired, exit 0, valid output"]
    assert repaired > 4 * counts["--repair: cannot be repaired, exit 1, nothing written"]


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(plan=plans(max_turns=3), seed=st.integers(0, 2**32 - 1))
def test_generated_transcripts_with_mutations(
    scratch: Path, fmt: str, plan: Plan, seed: int
) -> None:
    import random

    data, what = mutate(render(plan, fmt), random.Random(seed))
    check(Mutant(f"generated {fmt}", (what,), data), scratch)


def _first(wanted: str) -> Mutant:
    """The first mutant (of the seeded series) whose input is `wanted`: `repairable` (invalid,
    and --repair fixes it) or `unrepairable`."""
    for mutant in mutants(sources(), COUNT, SEED):
        path = Path(tempfile.mkstemp(suffix=".jsonl")[1])
        try:
            path.write_bytes(mutant.data)
            transcript = read_transcript(str(path))
            if validate(transcript).ok:
                continue
            try:
                admit(transcript, repair=True)
            except InvalidTranscript:
                if wanted == "unrepairable":
                    return mutant
                continue
            if wanted == "repairable":
                return mutant
        except CompactError:
            continue
        finally:
            path.unlink()
    raise AssertionError(f"no {wanted} mutant")


@pytest.mark.parametrize("wanted", ["repairable", "unrepairable"])
def test_a_few_mutants_through_the_command_line(wanted: str, tmp_path: Path) -> None:
    mutant = _first(wanted)
    source = tmp_path / "input.jsonl"
    source.write_bytes(mutant.data)
    env = {**os.environ, "COMPACTCLI_TRACEBACK": "0"}
    for repair in ([], ["--repair"]):
        for command in COMMANDS:
            output = tmp_path / f"{command}.jsonl"
            output.unlink(missing_ok=True)
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "compactcli",
                    command,
                    str(source),
                    "-o",
                    str(output),
                    *repair,
                ],
                capture_output=True,
                text=True,
                cwd=ROOT,
                env=env,
                check=False,
            )
            assert "Traceback" not in done.stderr and "unexpected" not in done.stderr
            assert source.read_bytes() == mutant.data
            if repair and wanted == "repairable":
                assert done.returncode == 0, done.stderr
                assert validate(read_transcript(str(output))).ok
                assert ": repaired " in done.stderr
            else:
                assert done.returncode == 1, done.stderr
                assert not output.exists()
                assert done.stderr.splitlines()[-1].startswith(f"error: {source}: ")
                message = "cannot be repaired" if repair else "invalid"
                assert message in done.stderr.splitlines()[-1]
                # the findings, as `compactcli validate` prints them, come first
                assert done.stderr.startswith(f"{source}:")
