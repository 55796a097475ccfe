"""No secret reaches what compactcli writes: every shape of tests/test_secrets_shapes.py is
planted in transcripts of every format (user prompts, shell commands, tool output, failed tool
output, assistant text, thinking), then each command runs on them, and no secret value may be
found in what it wrote: the summary and every other record it wrote or changed, the boundary
record, `--stats`, `--boundary`, `--json`, the `--dry-run` and `diff` output, and every request
sent to the LLM (tests/llm_server.py records them), a request of a run in several parts
included. Kept records stay verbatim (they may hold a secret) unless `--redact`, and then, as
with `compactcli redact`, nothing in the whole output may. The archive keeps cleared content
verbatim, readable by its owner only.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from compactcli.formats import get_dialect
from compactcli.loading import read_transcript
from compactcli.stages.summarize import SummarizeOptions, summarize
from compactcli.summarizers.llm import BREAKER, LLMSummarizer
from compactcli.tokens import get_counter
from compactcli.validation import validate
from tests.cli_runner import run
from tests.llm_server import ok, serve
from tests.test_llm_summarizer import ANSWER, MODEL
from tests.test_secrets_shapes import SHAPES
from tests.transcript_strategies import FORMAT_NAMES, TOOLS, Call, Plan, Step, Turn, render

SHELL_TOOLS = ("bash", "run_shell", "exec_command", "shell")


def _shell(fmt: str) -> int:
    return next(i for i, name in enumerate(TOOLS[fmt]) if name.lower() in SHELL_TOOLS)


def _reader(fmt: str) -> int:
    return next(i for i, name in enumerate(TOOLS[fmt]) if "read" in name.lower())


def planted(fmt: str) -> bytes:
    """A session of format `fmt` whose turns carry every secret shape, and a last turn without."""
    filler = "\n".join(f"   {i:3d}  building module {i} of 40 ... ok" for i in range(40))
    turns = []
    for n in range(0, len(SHAPES), 5):
        group = [s.text() for s in SHAPES[n : n + 5]]
        group += [group[0]] * (5 - len(group))
        prompt = (
            f"Task {n}: set up the deploy with this configuration.\n{group[0]}\nNever push to main."
        )
        calls = (
            Call(_shell(fmt), group[1], f"{filler}\nError: deploy failed: {group[2]}", True),
            Call(_reader(fmt), "config/settings.env", f"{group[3]}\n{filler}"),
        )
        step = Step(text=f"Decided to use this: {group[4]}", thinking=group[0], calls=calls)
        turns.append(Turn(prompt, (step, Step(text=f"Done with task {n}."))))
    turns.append(Turn("Now run the tests and report.", (Step(text="All 12 tests pass."),)))
    return render(Plan(tuple(turns), seed=11), fmt)


def _secrets() -> list[tuple[str, str]]:
    found = []
    for shape in SHAPES:
        found.append((shape.name, shape.secret))
        escaped = json.dumps(shape.secret)[1:-1]
        if escaped != shape.secret:  # as written in JSON, and in JSON inside JSON
            found.append((shape.name + " (escaped)", escaped))
            found.append((shape.name + " (escaped)", json.dumps(escaped)[1:-1]))
    return found


SECRETS = _secrets()


def leaks(text: str) -> list[str]:
    """The shapes whose secret value `text` holds."""
    return [name for name, secret in SECRETS if secret in text]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def written(before: bytes, after: bytes) -> str:
    """What a command wrote besides kept content: every string of the output's records that
    are not input records byte for byte, less the strings copied whole from the input (a
    format may repeat kept messages inside a record it writes: Codex's replacement history)."""
    old_lines = set(before.splitlines())
    old_strings = {s for line in old_lines if line.strip() for s in _strings(orjson.loads(line))}
    new: list[str] = []
    for line in after.splitlines():
        if line in old_lines or not line.strip():
            continue
        new.extend(s for s in _strings(orjson.loads(line)) if s not in old_strings)
    return "\n".join(new)


def test_every_shape_is_planted_in_every_format() -> None:
    for fmt in FORMAT_NAMES:
        data = planted(fmt).decode()
        assert leaks(data) == [n for n, s in SECRETS if s in data]
        names = {name.removesuffix(" (escaped)") for name in leaks(data)}
        assert names == {s.name for s in SHAPES}, fmt


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COMPACTCLI_CACHE_DIR", str(tmp_path / "cache"))
    BREAKER.reset()


TAIL = ["--keep-recent-tokens", "60"]


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_compact_prune_summarize_diff_write_no_secret(fmt: str, tmp_path: Path) -> None:
    source = tmp_path / f"{fmt}.jsonl"
    source.write_bytes(planted(fmt))
    before = source.read_bytes()
    reports = ["--stats", "stats.jsonl", "--boundary", "boundary.json"]

    done = run(
        "compact", str(source), "--force", *TAIL, "-o", "c.jsonl", *reports, "--json",
        "--archive", "archive",
    )  # fmt: skip
    assert done.exit_code == 0, done.stderr
    assert orjson.loads(done.stdout)["status"] == "compacted"
    out = Path("c.jsonl").read_bytes()
    assert out != before
    assert leaks(written(before, out)) == []
    assert leaks(Path("stats.jsonl").read_text()) == []
    assert leaks(Path("boundary.json").read_text()) == []
    assert leaks(done.stdout + done.stderr) == []
    summaries = [m.text for m in get_dialect(fmt).context(read_transcript("c.jsonl")) if m.summary]
    assert summaries and "[REDACTED:" in summaries[-1]
    # the archive: the cleared output, verbatim, readable by its owner only
    archived = [p for p in Path("archive").rglob("*") if p.is_file()]
    assert archived
    assert {stat.S_IMODE(p.stat().st_mode) for p in archived} == {0o600}
    assert leaks("\n".join(p.read_text() for p in archived))

    dry = run("compact", str(source), "--force", *TAIL, "--dry-run")
    assert dry.exit_code == 0, dry.stderr
    assert "records:" in dry.stdout and leaks(dry.stdout + dry.stderr) == []

    compared = run("diff", str(source), "c.jsonl")
    assert compared.exit_code == 0 and leaks(compared.stdout + compared.stderr) == []

    pruned = run("prune", str(source), *TAIL, "-o", "p.jsonl", "--stats", "ps.jsonl",
                 "--boundary", "pb.json")  # fmt: skip
    assert pruned.exit_code == 0, pruned.stderr
    assert Path("p.jsonl").read_bytes() != before
    assert leaks(written(before, Path("p.jsonl").read_bytes())) == []
    assert leaks(Path("ps.jsonl").read_text() + Path("pb.json").read_text()) == []

    summarized = run("summarize", str(source), *TAIL, "-o", "s.jsonl", "--stats", "ss.jsonl",
                     "--boundary", "sb.json")  # fmt: skip
    assert summarized.exit_code == 0, summarized.stderr
    assert Path("s.jsonl").read_bytes() != before
    assert leaks(written(before, Path("s.jsonl").read_bytes())) == []
    assert leaks(Path("ss.jsonl").read_text() + Path("sb.json").read_text()) == []


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_compact_redact_and_the_redact_command_leave_no_secret_anywhere(
    fmt: str, tmp_path: Path
) -> None:
    source = tmp_path / f"{fmt}.jsonl"
    source.write_bytes(planted(fmt))
    before = source.read_bytes()

    # a kept tail with secrets in it: verbatim without --redact, redacted with it
    tail = ["--keep-recent-tokens", "3000"]
    kept = run("compact", str(source), "--force", *tail, "-o", "k.jsonl")
    assert kept.exit_code == 0, kept.stderr
    assert leaks(Path("k.jsonl").read_text())
    done = run("compact", str(source), "--force", *tail, "--redact", "-o", "c.jsonl", "--json")
    assert done.exit_code == 0, done.stderr
    assert leaks(Path("c.jsonl").read_text()) == []
    assert orjson.loads(done.stdout)["redacted"]["secrets"] > 0
    assert validate(read_transcript("c.jsonl")).errors == ()

    redacted = run("redact", str(source), "-o", "r.jsonl", "--json")
    assert redacted.exit_code == 0, redacted.stderr
    report = orjson.loads(redacted.stdout)
    assert report["status"] == "redacted" and report["secrets"] >= len(SHAPES)
    out = Path("r.jsonl").read_bytes()
    assert leaks(out.decode()) == []
    assert validate(read_transcript("r.jsonl")).errors == ()
    old, new = before.splitlines(), out.splitlines()
    assert len(old) == len(new)
    for a, b in zip(old, new, strict=True):  # a record without a secret keeps its bytes
        assert (a == b) == (leaks(a.decode()) == []), (a[:120], b[:120])


@pytest.mark.llm
@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_the_llm_summarizer_is_sent_and_writes_no_secret(fmt: str, tmp_path: Path) -> None:
    source = tmp_path / f"{fmt}.jsonl"
    source.write_bytes(planted(fmt))
    before = source.read_bytes()
    # a model that repeats secret lines (as if it had seen them): the summary is redacted anyway
    echo = ANSWER + "".join(f"\n- {shape.text()}" for shape in SHAPES)
    llm = ["--summarizer", "llm", "--model", MODEL, "--no-cache"]
    reports = ["--stats", "stats.jsonl", "--boundary", "boundary.json", "--json"]
    with serve(ok(echo)) as server:
        done = run(
            "compact", str(source), "--force", *TAIL, *llm, "--api-base", server.url,
            "-o", "c.jsonl", *reports,
        )  # fmt: skip
        sent = [r.text for r in server.requests]
    assert done.exit_code == 0, done.stderr
    assert sent and all(leaks(text) == [] for text in sent)
    assert orjson.loads(done.stdout)["llm_calls"] >= 1
    out = Path("c.jsonl").read_bytes()
    assert leaks(written(before, out)) == []
    assert leaks(Path("stats.jsonl").read_text() + Path("boundary.json").read_text()) == []
    assert leaks(done.stdout + done.stderr) == []
    assert b"## Critical context" in out  # the model's summary was used


@pytest.mark.llm
def test_a_summary_in_several_parts_sends_no_secret_back() -> None:
    """A conversation too large for the model's window goes in parts, each part's summary sent
    with the next: a secret the model wrote in one part's answer is not sent on. (A model only
    sees redacted text, so here it makes the secrets up, each in its context: a value alone,
    a 32-digit hex token without its label, cannot be told from a hash.)"""
    Path("s.jsonl").write_bytes(planted("claude-code"))
    transcript = read_transcript("s.jsonl")
    counter = get_counter("heuristic", format=transcript.format)
    echo = ANSWER + "".join(f"\n- {shape.text()}" for shape in SHAPES)
    with serve(ok(echo)) as server:
        llm = LLMSummarizer(MODEL, api_base=server.url, context_window=12_000, retries=0)
        result = summarize(
            transcript,
            SummarizeOptions(keep_recent_tokens=60, summary_tokens=300),
            summarizer=llm,
            counter=counter,
        )
        sent = [r.text for r in server.requests]
    details = result.stats[-1].details["summarize"]
    assert details["summarizer"] == "llm"
    assert details["summarizer_details"]["llm_requests"] == len(sent) > 1
    assert all(leaks(text) == [] for text in sent)
    assert "## Critical context" in sent[1]  # the first part's summary went with the second
    summary = next(m.text for m in get_dialect("claude-code").context(result) if m.summary)
    assert leaks(summary) == []


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_an_earlier_summary_written_without_redaction_is_redacted_when_updated(
    fmt: str, tmp_path: Path
) -> None:
    """A transcript compacted with --no-redact holds secrets in its summary and its boundary's
    facts; compacting it again (redaction on) carries them into the new summary and boundary
    redacted."""
    source = tmp_path / f"{fmt}.jsonl"
    source.write_bytes(planted(fmt))
    first = run(
        "compact", str(source), "--force", *TAIL, "--no-redact", "-o", "first.jsonl",
        "--boundary", "first.json",
    )  # fmt: skip
    assert first.exit_code == 0, first.stderr
    earlier = Path("first.jsonl").read_bytes()
    summary = next(
        m.text for m in get_dialect(fmt).context(read_transcript("first.jsonl")) if m.summary
    )
    assert leaks(summary + Path("first.json").read_text())  # as asked
    reports = ["--stats", "stats.jsonl", "--boundary", "boundary.json"]
    again = run("compact", "first.jsonl", "--force", *TAIL, "-o", "second.jsonl", *reports)
    assert again.exit_code == 0, again.stderr
    assert leaks(written(earlier, Path("second.jsonl").read_bytes())) == []
    assert leaks(Path("stats.jsonl").read_text() + Path("boundary.json").read_text()) == []
