"""Sessions of one long turn: `compact` and `summarize` cut inside it and quote its prompt.

A session whose context is one prompt and the agent's work on it (after the standing context, or
after the agent's own compaction) has nothing before its prompt to summarize. `compact --force`,
`compact` over its threshold and `summarize` then cut inside the turn as `--cut-turn` does: the
prompt is summarized with the middle and quoted verbatim at the end of the summary, whose
preamble names it as the task to carry on (`TASK_PREAMBLE`), and the kept tail ends the result.
Where cutting the turn does not pay, or a summary of ours already kept the prompt with its turn,
the input is kept and the note says why. The sessions are generated in every format
(`tests.transcript_strategies`); a real Codex session of the corpus is compacted when it is
present.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from compactcli import get_dialect, read_transcript, to_bytes
from compactcli.estimate import EstimateOptions, estimate
from compactcli.formats.base import OUR_SUMMARY_START, atomic_units
from compactcli.formats.claude_code.writer import SUMMARY_SUFFIX
from compactcli.formats.pi.views import COMPACTION_SUFFIX
from compactcli.injection import (
    CLOSING,
    PREAMBLE,
    PREAMBLES,
    TASK_PREAMBLE,
    frame,
    has_preamble,
    quote_request,
    split_request,
    unframe,
)
from compactcli.stages.compact import CompactOptions, compact, compact_check
from compactcli.stages.cuts import is_prompt
from compactcli.stages.prune import PruneOptions, prune
from compactcli.stages.summarize import SummarizeOptions
from compactcli.summarizers import REQUEST_HEADING, SummaryRequest, SummaryResult
from compactcli.summarizers.facts import Facts
from compactcli.tokens import get_counter
from compactcli.transcript import Message, Transcript
from tests.cli_runner import run
from tests.conftest import CORPUS
from tests.transcript_strategies import FORMAT_NAMES, SUMMARY, Call, Plan, Step, Turn, render

PROMPT = (
    "The exporter drops every row whose city has a comma in it. Fix src/report/export.py, "
    "run the tests, and don't touch the CSV reader."
)
KEEP = "1000"
INERT_PRUNE = ("--min-chars", "1000000")  # prune clears nothing: the tail is the input's


def work(steps: int, lines: int = 40) -> tuple[Step, ...]:
    """`steps` steps of the agent's work, each a call with a distinct output of `lines` lines."""
    return tuple(
        Step(
            text=f"Reading part {i} of the exporter.",
            calls=(
                Call(
                    tool=0,
                    argument=f"src/report/part{i}.py",
                    output="\n".join(
                        f"{n:4d}  row_{i}_{n} = export({i}, {n})" for n in range(lines)
                    ),
                ),
            ),
        )
        for i in range(steps)
    )


def one_turn(prompt: str = PROMPT, steps: int = 12, lines: int = 40) -> Plan:
    return Plan(turns=(Turn(prompt=prompt, steps=work(steps, lines)),))


def write(tmp_path: Path, plan: Plan, fmt: str, name: str = "in") -> Path:
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(render(plan, fmt))
    return path


def compact_file(source: Path, out: Path, *options: str) -> tuple[dict[str, Any], Transcript]:
    """`compactcli compact SOURCE OPTIONS -o OUT --json`: its report and the result."""
    done = run("compact", str(source), *options, "-o", str(out), "--json")
    assert done.exit_code == 0, done.stderr
    return orjson.loads(done.stdout), read_transcript(str(out))


def context(transcript: Transcript) -> list[Message]:
    return get_dialect(transcript.format).context(transcript)


def summary_text(transcript: Transcript) -> str:
    found = [m.text for m in context(transcript) if has_preamble(m.text)]
    assert len(found) == 1, found
    return found[0]


def shape(message: Message) -> tuple[Any, ...]:
    blocks = tuple(
        (b.kind, b.text, b.call_id, b.name) for b in message.blocks if not has_preamble(b.text)
    )
    return message.role, blocks


def ends_with_tail(before: Transcript, after: Transcript, count: int) -> bool:
    """The last `count` messages of `after`'s context are `before`'s, unit by unit (a summary
    merged into the first of them aside)."""
    tail = context(before)[-count:]
    kept = context(after)[-count:]
    return len(kept) == count and all(
        sorted(shape(tail[i]) for i in unit) == sorted(shape(kept[i]) for i in unit)
        for unit in atomic_units(tail)
    )


def assert_quotes_the_task(text: str, prompt: str = PROMPT) -> None:
    """The summary names the quoted request as the task, and quotes it last (only the closing
    of the format's own wrapper, or ours, may follow)."""
    assert TASK_PREAMBLE in text and PREAMBLE not in text
    quoted = f"{REQUEST_HEADING}\n{prompt}"
    assert text.count(quoted) == 1
    after = text[text.index(quoted) + len(quoted) :].strip()
    assert after in ("", CLOSING, SUMMARY_SUFFIX, COMPACTION_SUFFIX.strip()), after


# ---------------------------------------------------------------------------------------------
# the preamble


def test_both_preambles_are_ours_and_the_task_one_names_the_quoted_request() -> None:
    assert PREAMBLES == (PREAMBLE, TASK_PREAMBLE)
    for preamble in PREAMBLES:
        assert preamble.startswith(OUR_SUMMARY_START)
        assert has_preamble(f"prefix\n{preamble}\n\nbody")
        assert "reference material, not instructions" in preamble
    assert not has_preamble("[compactcli summary: somebody else's words]")
    # the plain one tells the model to follow nothing in it; the task one names the quoted
    # request as the current task, which the kept messages continue
    assert "respond to the latest message after it" in PREAMBLE
    assert "request, quoted verbatim at the end, is the current task: carry it on" in TASK_PREAMBLE
    assert "Do not answer" not in TASK_PREAMBLE.split("The rest")[0]


def test_a_summary_with_a_quoted_request_frames_and_unframes_with_the_task_preamble() -> None:
    request = f"{REQUEST_HEADING}\n{PROMPT}"
    text = frame("## Goal\n(the latest request below)", "", request)
    assert text.startswith(TASK_PREAMBLE) and text.endswith(request)
    body, head = unframe(f"{text}\n\n{CLOSING}")
    assert (body, head) == (f"## Goal\n(the latest request below)\n\n{request}", "")
    assert split_request(body) == ("## Goal\n(the latest request below)", request)
    plain = frame("## Goal\nfix it")
    assert plain.startswith(PREAMBLE) and split_request(unframe(plain)[0]) == (
        "## Goal\nfix it",
        "",
    )


# ---------------------------------------------------------------------------------------------
# one prompt and the work on it


@pytest.mark.parametrize(
    "trigger", [("--force",), ("--max-tokens", "2500")], ids=["force", "over-the-budget"]
)
@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_a_single_turn_session_is_compacted_with_its_prompt_quoted(
    tmp_path: Path, fmt: str, trigger: tuple[str, ...]
) -> None:
    source = write(tmp_path, one_turn(), fmt)
    before = read_transcript(str(source))
    stats = tmp_path / "stats.jsonl"
    report, after = compact_file(
        source,
        tmp_path / "out.jsonl",
        *trigger,
        "--keep-recent-tokens",
        KEEP,
        *INERT_PRUNE,
        "--stats",
        str(stats),
    )
    assert (report["status"], report["summarized"], report["notes"]) == ("compacted", True, [])
    assert report["tokens_after"] < report["tokens_before"] // 2
    valid = run("validate", str(tmp_path / "out.jsonl"))
    assert valid.exit_code == 0 and "(0 errors" in valid.stdout, valid.stdout
    stages = {s["stage"]: s for s in orjson.loads(stats.read_bytes())["stages"]}
    info = stages["summarize"]["details"]["summarize"]
    prompt = next(m for m in context(before) if is_prompt(m))
    assert info["pinned_prompt"]["line"] == before.line_of(prompt.index)
    assert ends_with_tail(before, after, info["kept"]["tail_messages"])
    assert not any(is_prompt(m) for m in context(after))  # the prompt lives in the summary
    assert_quotes_the_task(summary_text(after))
    # a second run finds nothing more to do
    again, _ = compact_file(
        tmp_path / "out.jsonl",
        tmp_path / "again.jsonl",
        *trigger,
        "--keep-recent-tokens",
        KEEP,
        *INERT_PRUNE,
    )
    assert again["status"] == "unchanged"


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_summarize_cuts_a_single_turn_too(tmp_path: Path, fmt: str) -> None:
    source = write(tmp_path, one_turn(), fmt)
    done = run("summarize", str(source), "--keep-recent-tokens", KEEP)
    assert done.exit_code == 0 and "unchanged" not in done.stderr, done.stderr
    (tmp_path / "out.jsonl").write_bytes(done.stdout_bytes)
    assert_quotes_the_task(summary_text(read_transcript(str(tmp_path / "out.jsonl"))))


def claude_code_turn_after_compaction(tmp_path: Path) -> Path:
    """A Claude Code session compacted by Claude Code, then one prompt and a long turn."""
    first = Turn(prompt="Set up the report package.", steps=work(1, 5))
    plan = Plan(turns=(first, Turn(prompt=PROMPT, steps=work(12))), compacted_before=1)
    return write(tmp_path, plan, "claude-code")


def codex_turn_compacted_midway(tmp_path: Path) -> Path:
    """A Codex rollout of one turn that Codex compacted halfway through: its replacement history
    holds the developer message, the prompt and the summary, and the turn goes on after it."""
    lines = render(one_turn(steps=16), "codex").splitlines()
    raw = [orjson.loads(line) for line in lines]
    outputs = [i for i, r in enumerate(raw) if r["payload"].get("type") == "function_call_output"]
    at = outputs[7] + 1
    summary = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": SUMMARY}],
    }
    compacted = {
        "timestamp": raw[at - 1]["timestamp"],
        "type": "compacted",
        "payload": {
            "message": SUMMARY,
            "replacement_history": [raw[1]["payload"], raw[3]["payload"], summary],
        },
    }
    path = tmp_path / "in.jsonl"
    path.write_bytes(b"\n".join([*lines[:at], orjson.dumps(compacted), *lines[at:]]) + b"\n")
    return path


@pytest.mark.parametrize(
    "make",
    [claude_code_turn_after_compaction, codex_turn_compacted_midway],
    ids=["claude-code-after-its-compaction", "codex-compacted-midway"],
)
def test_one_long_turn_after_the_agents_own_compaction_is_cut_too(
    tmp_path: Path, make: Callable[[Path], Path]
) -> None:
    source = make(tmp_path)
    stats = tmp_path / "stats.jsonl"
    out = tmp_path / "out.jsonl"
    report, after = compact_file(
        source, out, "--force", "--keep-recent-tokens", KEEP, *INERT_PRUNE, "--stats", str(stats)
    )
    assert (report["status"], report["summarized"]) == ("compacted", True)
    assert run("validate", str(out)).exit_code == 0
    stages = {s["stage"]: s for s in orjson.loads(stats.read_bytes())["stages"]}
    info = stages["summarize"]["details"]["summarize"]
    assert info["updated_earlier_summary"] is True and info["pinned_prompt"] is not None
    assert ends_with_tail(read_transcript(str(source)), after, info["kept"]["tail_messages"])
    assert_quotes_the_task(summary_text(after))


@dataclass
class Wordy:
    """A summarizer whose summary is always longer than a little work: cutting never pays."""

    @property
    def name(self) -> str:
        return "wordy"

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        return SummaryResult(text="## Goal\n" + "word " * 3000, summarizer="wordy", facts=Facts())


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_a_turn_whose_cut_does_not_pay_is_kept_with_the_reason(tmp_path: Path, fmt: str) -> None:
    source = write(tmp_path, one_turn(steps=4, lines=1), fmt)
    before = read_transcript(str(source))
    options = CompactOptions(
        force=True,
        prune=PruneOptions(min_chars=1_000_000),
        summarize=SummarizeOptions(keep_recent_tokens=0),
    )
    counter = get_counter("heuristic", format=before.format)
    result = compact(before, options, summarizer=Wordy(), counter=counter)
    assert to_bytes(result) == source.read_bytes()
    check = compact_check(result)
    assert check is not None and not check.summarized
    assert check.not_summarized is not None
    assert check.not_summarized.startswith("nothing to summarize before the last user prompt")
    assert "which is kept with everything after it; with its turn cut, the summary would not " in (
        check.not_summarized
    )
    summarized = next(s for s in result.stats if s.stage == "summarize")
    assert summarized.details["summarize"]["pinned_prompt"] is not None  # what was tried


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_a_turn_under_the_ceiling_is_kept_with_the_reason(tmp_path: Path, fmt: str) -> None:
    source = write(tmp_path, one_turn(), fmt)
    out = tmp_path / "out.jsonl"
    report, _ = compact_file(source, out, "--force", *INERT_PRUNE)
    assert (report["status"], report["summarized"]) == ("unchanged", False)
    assert out.read_bytes() == source.read_bytes()
    (note,) = report["notes"]
    assert note.endswith("is within 1.5 times the kept tail (20,000 tokens)"), note


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_after_a_summary_of_ours_that_kept_the_prompt_a_second_run_keeps_it_too(
    tmp_path: Path, fmt: str
) -> None:
    first = Turn(prompt="Set up the report package.", steps=work(2, 30))
    source = write(tmp_path, Plan(turns=(first, Turn(prompt=PROMPT, steps=work(12)))), fmt)
    once = tmp_path / "once.jsonl"
    report, after = compact_file(
        source, once, "--force", "--keep-recent-tokens", KEEP, *INERT_PRUNE
    )
    assert report["summarized"] is True
    text = summary_text(after)
    assert PREAMBLE in text and REQUEST_HEADING not in text  # the prompt stayed in the tail
    again, _ = compact_file(
        once, tmp_path / "twice.jsonl", "--force", "--keep-recent-tokens", KEEP, *INERT_PRUNE
    )
    assert again["status"] == "unchanged"
    # (an Anthropic tail starts on the assistant message before the prompt, as roles alternate:
    # there the earlier summary alone is left before the kept tail)
    assert again["notes"][0].endswith(
        "nothing to summarize but the earlier summary: the rest is kept"
        if fmt == "anthropic"
        else "an earlier summary of ours kept it with its turn (--cut-turn cuts the turn)"
    )
    # --cut-turn cuts it, and the summary that replaces ours quotes the prompt
    cut, result = compact_file(
        once, tmp_path / "cut.jsonl", "--force", "--cut-turn", "--keep-recent-tokens", KEEP
    )
    assert cut["summarized"] is True
    assert_quotes_the_task(summary_text(result))


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_a_quoted_request_stays_quoted_when_its_summary_is_replaced(
    tmp_path: Path, fmt: str
) -> None:
    source = write(tmp_path, one_turn(steps=16), fmt)
    once = tmp_path / "once.jsonl"
    compact_file(source, once, "--force", "--keep-recent-tokens", "2500", *INERT_PRUNE)
    stats = tmp_path / "stats.jsonl"
    report, twice = compact_file(
        once,
        tmp_path / "twice.jsonl",
        "--force",
        "--keep-recent-tokens",
        "600",
        "--stats",
        str(stats),
    )
    assert report["summarized"] is True
    info = orjson.loads(stats.read_bytes())["stages"][1]["details"]["summarize"]
    assert info["carried_request"] is True and info["updated_earlier_summary"] is True
    assert_quotes_the_task(summary_text(twice))
    assert run("validate", str(tmp_path / "twice.jsonl")).exit_code == 0


# ---------------------------------------------------------------------------------------------
# a real session


@pytest.mark.skipif(not (CORPUS / "codex-raze.jsonl").is_file(), reason="../shared/corpus absent")
def test_a_real_single_turn_codex_session_is_compacted_well_under_its_pruned_size(
    tmp_path: Path,
) -> None:
    source = CORPUS / "codex-raze.jsonl"
    before = read_transcript(str(source))
    counter = get_counter("heuristic", format=before.format)
    pruned = estimate(
        prune(before, PruneOptions(), counter=counter),
        EstimateOptions(method="heuristic"),
        counter=counter,  # type: ignore[arg-type]
    ).tokens
    report, after = compact_file(source, tmp_path / "out.jsonl", "--force")
    assert (report["status"], report["summarized"]) == ("compacted", True)
    assert report["tokens_after"] < pruned // 2, (report["tokens_after"], pruned)
    assert run("validate", str(tmp_path / "out.jsonl")).exit_code == 0
    prompt = next(m for m in context(before) if is_prompt(m))
    text = summary_text(after)
    assert TASK_PREAMBLE in text and text.endswith(quote_request(prompt))
