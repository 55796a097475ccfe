"""One counting rule: for one file and one method, every command and report gives the number
`estimate` gives for the same context.

Run on every fixture transcript and every corpus session (skipped without ../shared/corpus):
prune, summarize and compact (their stats, before and after, and the boundary details they
write into the transcript) and diff, against `estimate` of the input and of the output read back
from its bytes; and once through the command line (`prune --dry-run`, `diff`, `compact --json`
and `--stats`).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from compactcli import read_transcript
from compactcli.boundary import MARK
from compactcli.diff import diff
from compactcli.estimate import EstimateOptions, context_tokens, estimate
from compactcli.formats import get_dialect
from compactcli.stages.compact import CompactOptions, compact
from compactcli.stages.prune import PruneOptions, prune
from compactcli.stages.summarize import SummarizeOptions, summarize
from compactcli.summarizers import get_summarizer
from compactcli.tokens import get_counter
from compactcli.transcript import Transcript
from tests.cli_runner import run as run_cli
from tests.conftest import CORPUS, FIXTURES

FILES = sorted((FIXTURES / "transcripts").glob("*.jsonl")) + sorted(CORPUS.glob("*.jsonl"))
KEEP = 300


def _counter(transcript: Transcript, method: str = "heuristic") -> Any:
    model = get_dialect(transcript.format).model(transcript)
    return get_counter(method, model=model, format=transcript.format)


def _estimated(data: bytes, tmp_path: Path, method: str = "heuristic") -> int:
    """`estimate --method METHOD` of a transcript written out and read back."""
    path = tmp_path / "written.jsonl"
    path.write_bytes(data)
    transcript = read_transcript(str(path))
    counter = _counter(transcript, method)
    return estimate(transcript, EstimateOptions(method=method), counter=counter).tokens


def _bytes(transcript: Transcript) -> bytes:
    return b"".join(
        (r.line if r.line is not None else orjson.dumps(r.raw)) + (r.eol or b"\n")
        for r in transcript.records
    )


def _boundaries(transcript: Transcript) -> Iterator[dict[str, Any]]:
    """Our boundary details in the transcript's records, in order."""

    def walk(value: Any) -> Iterator[dict[str, Any]]:
        if isinstance(value, dict):
            found = value.get(MARK)
            if isinstance(found, dict) and "tokens_before" in found:
                yield found
            for item in value.values():
                yield from walk(item)
        elif isinstance(value, list):
            for item in value:
                yield from walk(item)

    for record in transcript.records:
        yield from walk(record.raw)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_stage_and_report_gives_the_estimate_of_the_same_context(
    path: Path, tmp_path: Path
) -> None:
    source = read_transcript(str(path))
    counter = _counter(source)
    before = estimate(source, EstimateOptions(method="heuristic"), counter=counter).tokens
    assert context_tokens(source, counter) == before
    old = len(list(_boundaries(source)))
    runs = {
        "prune": prune(source, PruneOptions(keep_recent_tokens=KEEP), counter=counter),
        "summarize": summarize(
            source,
            SummarizeOptions(keep_recent_tokens=KEEP),
            summarizer=get_summarizer("extractive"),
            counter=counter,
        ),
        "compact": compact(
            source,
            CompactOptions(
                prune=PruneOptions(keep_recent_tokens=KEEP),
                summarize=SummarizeOptions(keep_recent_tokens=KEEP),
                force=True,
            ),
            summarizer=get_summarizer("extractive"),
            counter=counter,
        ),
    }
    for name, result in runs.items():
        after = _estimated(_bytes(result), tmp_path)
        stats = result.stats[-1]
        assert (stats.tokens_before, stats.tokens_after) == (before, after), name
        report = diff(source, result, counter=counter)
        assert (report.tokens_before, report.tokens_after) == (before, after), name
        # each stage starts where the one before it ended; each boundary it wrote says so
        stages = result.stats[len(source.stats) :]
        counts = [(s.stage, s.tokens_before, s.tokens_after) for s in stages]
        inner = [c for c in counts if c[0] != "compact"]
        assert all(a[2] == b[1] for a, b in itertools.pairwise(inner)), counts
        if inner:
            assert (inner[0][1], inner[-1][2]) == (before, after), name
        for written in list(_boundaries(result))[old:]:
            mine = (written["stage"], written["tokens_before"], written["tokens_after"])
            assert mine in inner, (name, mine, counts)


CLI_FILES = [
    FIXTURES / "transcripts" / "codex-session.jsonl",
    *sorted(CORPUS.glob("codex-raze.jsonl")),
]


@pytest.mark.parametrize("path", CLI_FILES, ids=lambda p: p.name)
def test_every_command_prints_the_estimate_of_the_same_context(path: Path, tmp_path: Path) -> None:
    def tokens(*args: str) -> int:
        done = run_cli("estimate", "--method", "heuristic", "--json", *args)
        assert done.exit_code == 0, done.stderr
        return int(json.loads(done.stdout)["tokens"])

    before = tokens(str(path))
    out = tmp_path / "out.jsonl"
    stats = tmp_path / "stats.jsonl"
    done = run_cli("compact", str(path), "--force", "-o", str(out), "--stats", str(stats), "--json")
    assert done.exit_code == 0, done.stderr
    after = tokens(str(out))
    reported = json.loads(done.stdout)
    assert (reported["tokens_before"], reported["tokens_after"]) == (before, after)
    line = json.loads(stats.read_text().splitlines()[-1])
    assert (line["tokens_before"], line["tokens_after"]) == (before, after)
    assert all(s["tokens_before"] == before for s in line["stages"][:1])
    dry = run_cli("compact", str(path), "--force", "--dry-run", "--json")
    assert (json.loads(dry.stdout)["tokens_before"], json.loads(dry.stdout)["tokens_after"]) == (
        before,
        after,
    )
    changed = run_cli("diff", str(path), str(out))
    shown = re.search(r"tokens:\s+([\d,]+) -> ([\d,]+)", changed.stdout)
    assert shown is not None, changed.stdout
    assert (int(shown[1].replace(",", "")), int(shown[2].replace(",", ""))) == (before, after)
    pruned = run_cli("prune", str(path), "--dry-run")
    shown = re.search(r"tokens:\s+([\d,]+) ->", pruned.stdout)
    assert shown is not None, pruned.stdout
    assert int(shown[1].replace(",", "")) == before
    for stage in ("prune", "summarize"):
        written = tmp_path / f"{stage}.jsonl"
        done = run_cli(
            stage, str(path), "--keep-recent-tokens", "2000", "-o", str(written), "--json"
        )
        assert done.exit_code == 0, done.stderr
        row = json.loads(done.stdout)
        assert (row["tokens_before"], row["tokens_after"]) == (before, tokens(str(written)))
        assert row["output"] == str(written) and row["stages"][0]["stage"] == stage
        dry = run_cli(stage, str(path), "--keep-recent-tokens", "2000", "--dry-run", "--json")
        seen = json.loads(dry.stdout)
        assert seen["output"] is None and seen["tokens_after"] == row["tokens_after"]
        assert seen["diff"]["records_before"] == row["stages"][0]["records_before"]


@pytest.mark.parametrize("stage", ["prune", "summarize"])
def test_stage_json_goes_to_standard_error_when_the_transcript_is_on_standard_output(
    stage: str,
) -> None:
    path = FIXTURES / "transcripts" / "codex-session.jsonl"
    done = run_cli(stage, str(path), "--keep-recent-tokens", "100", "--json")
    assert done.exit_code == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert records and all("stages" not in r for r in records)  # the transcript alone
    row = json.loads(done.stderr.strip().splitlines()[-1])
    assert row["output"] == "-" and row["changed"] is (records != _lines(path))


def _lines(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize(
    "path",
    sorted((FIXTURES / "transcripts").glob("*-summarize-session.jsonl")),
    ids=lambda p: p.name,
)
def test_compact_counts_each_context_once(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each context a compaction measures is counted by one `estimate`: the input, the pruned
    transcript (whether or not its format marks a prune with a record), each summary tried."""
    import compactcli.estimate as estimate_module
    import compactcli.stages.compact as compact_module

    counted: list[tuple[Any, ...]] = []  # the blocks of each context counted (held: ids stay)
    original = estimate_module.estimate

    def counting(transcript: Transcript, *args: Any, **kwargs: Any) -> Any:
        counted.append(tuple(m.blocks for m in get_dialect(transcript.format).context(transcript)))
        return original(transcript, *args, **kwargs)

    monkeypatch.setattr(estimate_module, "estimate", counting)
    monkeypatch.setattr(compact_module, "estimate", counting)
    source = read_transcript(str(path))
    counter = get_counter("heuristic", format=source.format)
    options = CompactOptions(
        prune=PruneOptions(keep_recent_tokens=KEEP, min_chars=50),
        summarize=SummarizeOptions(keep_recent_tokens=KEEP),
        force=True,
    )
    after = compact(source, options, summarizer=get_summarizer("extractive"), counter=counter)
    assert after.stats[0].tokens_after < after.stats[0].tokens_before  # prune changed something
    contexts = [tuple(map(id, blocks)) for blocks in counted]
    assert len(contexts) == len(set(contexts)), "a context was counted twice"
