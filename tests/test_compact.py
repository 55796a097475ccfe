"""The compact pipeline (`compactcli.stages.compact`) and the `compact` command: when it summarizes, how it
checks, where it writes, the summary cache; and its safety properties on generated transcripts in
every format."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compactcli.stages.compact as compact_module
import compactcli.stages.fitting as fitting_module
from compactcli import get_dialect, read_transcript, to_bytes, undo, validate, write_transcript
from compactcli.cache import CachedSummarizer, SummaryCache, default_cache_dir, request_key
from compactcli.compact_file import over_parts
from compactcli.estimate import EstimateOptions, estimate
from compactcli.in_place import backup_path
from compactcli.injection import TASK_PREAMBLE, has_preamble
from compactcli.stages.compact import CompactOptions, compact, compact_check, settle
from compactcli.stages.cuts import SOFT_CEILING, is_prompt
from compactcli.stages.prune import PruneOptions, prune
from compactcli.stages.summarize import SummarizeOptions, summarize
from compactcli.summarizers import Summarizer, SummaryRequest, SummaryResult, get_summarizer
from compactcli.summarizers.llm import BREAKER
from compactcli.tokens import TokenCounter, get_counter
from compactcli.transcript import Transcript
from compactcli.user_text import typed_text
from tests.cli_runner import run
from tests.conftest import EVAL_FIXTURES, FIXTURES
from tests.llm_server import serve
from tests.test_llm_summarizer import ANSWER, MODEL
from tests.test_single_turn import summary_text
from tests.transcript_strategies import FORMAT_NAMES, Call, Plan, Step, Turn, plans, render

TRANSCRIPTS = FIXTURES / "transcripts"
PI = TRANSCRIPTS / "pi-summarize-session.jsonl"
CLAUDE = TRANSCRIPTS / "claude-code-summarize-session.jsonl"
EXTRACTIVE = get_summarizer("extractive")


@pytest.fixture(autouse=True)
def fresh_breaker() -> Iterator[None]:
    BREAKER.reset()
    yield
    BREAKER.reset()


@pytest.fixture(autouse=True)
def no_policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands run in an empty folder (no policy file), with a private cache folder."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("COMPACTCLI_CACHE_DIR", str(tmp_path / "cache"))


def counter_for(t: Transcript) -> TokenCounter:
    return get_counter("heuristic", model=get_dialect(t.format).model(t), format=t.format)


def library(path: Path | str, **changes: Any) -> Transcript:
    transcript = read_transcript(str(path))
    options = CompactOptions(**changes)
    return compact(transcript, options, summarizer=EXTRACTIVE, counter=counter_for(transcript))


def written(path: Path | str, **changes: Any) -> bytes:
    """The bytes `compactcli compact` writes for `library(path, **changes)`: with the undo it
    records when the run changed the transcript (`compactcli.undo.record`)."""
    result = library(path, **changes)
    check = compact_check(result)
    if check is not None and check.changed:
        result = undo.record(read_transcript(str(path)), result, archive=None)
    return to_bytes(result)


def keep(tokens: int, **changes: Any) -> dict[str, Any]:
    """Options with both stages' kept tokens set (as --keep-recent-tokens does)."""
    return {
        "prune": PruneOptions(keep_recent_tokens=tokens),
        "summarize": SummarizeOptions(keep_recent_tokens=tokens),
        **changes,
    }


# ---------------------------------------------------------------------------------------------
# the pipeline


def test_under_the_threshold_only_prune_runs() -> None:
    result = library(PI)
    check = compact_check(result)
    assert check is not None
    assert (check.summarized, check.attempts, check.reason) == (
        False,
        0,
        "under the threshold after pruning",
    )
    assert to_bytes(result) == PI.read_bytes()
    assert [s.stage for s in result.stats] == ["prune", "compact"]


def test_over_the_threshold_summarizes_and_records_the_check() -> None:
    result = library(PI, **keep(2000, threshold="3000"))
    check = compact_check(result)
    assert check is not None
    assert check.to_dict() == {
        "tokens_before": 5997,
        "tokens_after": 2410,
        "tokens_pruned": 3513,
        "method": "heuristic",
        "threshold": 3000,
        "threshold_spec": "3000",
        "max_tokens": None,
        "summarized": True,
        "reason": "over the threshold",
        "keep_recent_tokens": 2000,
        "attempts": 1,
        "kept_input": None,
        "over": [],
        "not_summarized": None,
        "cut_turn": False,
        "summary_tokens": None,
        "rounds": 1,
        "smaller_summary_total": None,
    }
    assert [s.stage for s in result.stats] == ["prune", "summarize", "compact"]
    assert validate(result).errors == ()


def test_a_single_turn_over_the_budget_is_cut_inside_its_turn_by_the_summary() -> None:
    # one prompt, then the agent's work on it: nothing before the prompt to summarize, so the
    # summary cuts the turn itself once the kept tail is small enough (the turn larger than 1.5
    # times it), with --cut-turn (which a budget allows) or without it
    path = TRANSCRIPTS / "claude-code-session.jsonl"
    plain = compact_check(library(path, max_tokens=900, summarize=SummarizeOptions()))
    assert plain is not None
    assert plain.not_summarized == (
        "nothing to summarize before the last user prompt (message 1 of 13), "
        "which is kept with everything after it; its turn (1,362 tokens) is within 1.5 times the "
        "kept tail (20,000 tokens)"
    )
    result = library(path, max_tokens=900, fit=True)
    check = compact_check(result)
    assert check is not None
    assert (check.over, check.cut_turn, check.tokens_before) == ((), True, 1811)
    assert check.keep_recent_tokens < 1362 / SOFT_CEILING
    assert validate(result).errors == ()
    summary = next(m for m in get_dialect("claude-code").context(result) if m.summary)
    assert TASK_PREAMBLE in summary.text
    # the same bytes as the two stages with the tail that fitted (and --cut-turn, as used)
    transcript = read_transcript(str(path))
    counter = counter_for(transcript)
    staged = summarize(
        settle(prune(transcript, PruneOptions(), counter=counter)),
        SummarizeOptions(keep_recent_tokens=check.keep_recent_tokens, cut_turn=check.cut_turn),
        summarizer=EXTRACTIVE,
        counter=counter,
    )
    assert to_bytes(staged) == to_bytes(result)


def test_fit_cuts_the_current_turn_when_no_tail_keeps_its_prompt_under_the_budget() -> None:
    # an earlier turn, then a skill's turn too large for any tail that keeps its command
    path = TRANSCRIPTS / "claude-code-skill.jsonl"
    result = library(path, max_tokens=1000, fit=True)
    check = compact_check(result)
    assert check is not None
    assert (check.over, check.cut_turn, check.tokens_before) == ((), True, 2376)
    assert validate(result).errors == ()
    # the same bytes as the two stages with the tail that fitted and --cut-turn; without it,
    # that tail keeps the command with its turn
    transcript = read_transcript(str(path))
    counter = counter_for(transcript)
    pruned = settle(prune(transcript, PruneOptions(), counter=counter))
    staged = [
        summarize(
            pruned,
            SummarizeOptions(keep_recent_tokens=check.keep_recent_tokens, cut_turn=cut_turn),
            summarizer=EXTRACTIVE,
            counter=counter,
        )
        for cut_turn in (True, False)
    ]
    assert to_bytes(staged[0]) == to_bytes(result) != to_bytes(staged[1])


def test_fit_lowers_the_summary_budget_when_that_brings_the_result_under() -> None:
    path = EVAL_FIXTURES / "codex-20k-s2.jsonl"
    # a budget the user gave is never lowered: the result stays over
    given = compact_check(
        library(path, max_tokens=2500, fit=True, summarize=SummarizeOptions(summary_tokens=9000))
    )
    assert given is not None and given.summary_tokens is None
    assert [(what, limit) for what, limit, _ in given.over] == [("budget", 2500)]
    assert given.over[0][2] > 0  # tokens over it
    # a session whose smallest tail leaves its summary over a tenth of it
    path = EVAL_FIXTURES / "openai-20k-s3.jsonl"
    result = library(path, max_tokens=2000, fit=True)
    check = compact_check(result)
    assert check is not None
    # under, with a summary budget of its own (set only when lowering it brought it under)
    assert check.summary_tokens is not None and check.cut_turn
    assert check.over == () and check.tokens_after <= 2000
    transcript = read_transcript(str(path))
    counter = counter_for(transcript)
    staged = summarize(
        settle(prune(transcript, PruneOptions(), counter=counter)),
        SummarizeOptions(
            keep_recent_tokens=check.keep_recent_tokens,
            summary_tokens=check.summary_tokens,
            cut_turn=check.cut_turn,
        ),
        summarizer=EXTRACTIVE,
        counter=counter,
    )
    assert to_bytes(staged) == to_bytes(result)


def test_a_tail_fitted_in_steps_is_grown_back_into_the_room_the_budget_leaves(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = EVAL_FIXTURES / "codex-20k-s2.jsonl"
    budget = 5061  # a quarter of the session: the step that fits it leaves a fifth unused
    monkeypatch.setattr(fitting_module, "REFILL_ATTEMPTS", 0)
    stepped = compact_check(library(path, max_tokens=budget, fit=True))
    monkeypatch.undo()
    result = library(path, max_tokens=budget, fit=True)
    check = compact_check(result)
    assert stepped is not None and check is not None
    assert stepped.tokens_after < check.tokens_after <= budget and check.over == ()
    assert stepped.keep_recent_tokens < check.keep_recent_tokens
    assert budget - check.tokens_after < budget // 10  # no room left that a refill could use
    # the stats name the tail used, and the pipe with it gives the same bytes
    transcript = read_transcript(str(path))
    counter = counter_for(transcript)
    staged = summarize(
        settle(prune(transcript, PruneOptions(), counter=counter)),
        SummarizeOptions(keep_recent_tokens=check.keep_recent_tokens, cut_turn=check.cut_turn),
        summarizer=EXTRACTIVE,
        counter=counter,
    )
    assert to_bytes(staged) == to_bytes(result)


def test_a_budget_cuts_a_current_turn_that_would_leave_the_summary_crumbs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With --max-tokens the current turn may be cut from the first try: at under an eighth of
    this session, keeping the turn whole leaves the summary of everything before it less room than
    cutting it (its prompt quoted, its newest messages kept); both fit the budget."""
    path = EVAL_FIXTURES / "claude-code-20k-s1.jsonl"
    cut = library(path, max_tokens=2900, fit=True)
    monkeypatch.setattr(
        compact_module, "summarize_to_fit", lambda state: fitting_module._fitted(state, False)
    )
    whole = library(path, max_tokens=2900, fit=True)
    checks = compact_check(cut), compact_check(whole)
    assert checks[0] is not None and checks[1] is not None
    assert [(c.over, c.cut_turn) for c in checks] == [((), True), ((), False)]
    summaries = [
        next(m for m in get_dialect("claude-code").context(t) if m.summary) for t in (cut, whole)
    ]
    assert TASK_PREAMBLE in summaries[0].text and TASK_PREAMBLE not in summaries[1].text
    assert len(summaries[0].text) > len(summaries[1].text)


def test_a_smaller_summary_that_leaves_the_result_over_is_not_used() -> None:
    check = compact_check(library(EVAL_FIXTURES / "codex-20k-s2.jsonl", max_tokens=1500, fit=True))
    assert check is not None
    assert (check.summary_tokens, check.cut_turn) == (None, True)  # a budget may cut the turn
    assert check.over == (("budget", 1500, check.tokens_after - 1500),)


def test_over_the_budget_is_a_reason_too() -> None:
    check = compact_check(library(PI, **keep(2000, max_tokens=3000)))
    assert check is not None
    assert (check.reason, check.summarized, check.over) == ("over the budget", True, ())


def test_still_over_says_by_how_much() -> None:
    check = compact_check(library(PI, **keep(2000, threshold="1000", max_tokens=2000)))
    assert check is not None
    # each limit with the excess over it, the budget first
    after = check.tokens_after
    assert after > 2000
    assert check.over == (("budget", 2000, after - 2000), ("threshold", 1000, after - 1000))
    assert after < check.tokens_before  # the summary was used, and it still is over
    Path("result.jsonl").write_bytes(written(PI, **keep(2000, threshold="1000", max_tokens=2000)))
    counted = run("estimate", "result.jsonl", "--method", "heuristic", "--json")
    assert orjson.loads(counted.stdout)["tokens"] == after  # what estimate says of the file


def test_fit_lowers_the_kept_tail_until_the_result_is_under() -> None:
    unfitted = compact_check(library(PI, threshold="3000", summarize=SummarizeOptions()))
    assert unfitted is not None and unfitted.over == (("threshold", 3000, 2997),)
    result = library(PI, threshold="3000", fit=True)
    check = compact_check(result)
    assert check is not None
    # under, after smaller tails were tried: the one kept is under the default
    assert check.over == () and check.attempts > 1
    assert 0 < check.keep_recent_tokens < SummarizeOptions().keep_recent_tokens
    assert check.tokens_after < 3000
    # the same bytes as the two stages run with the tail that fitted
    transcript = read_transcript(str(PI))
    counter = counter_for(transcript)
    staged = summarize(
        settle(prune(transcript, PruneOptions(), counter=counter)),
        SummarizeOptions(keep_recent_tokens=check.keep_recent_tokens),
        summarizer=EXTRACTIVE,
        counter=counter,
    )
    assert to_bytes(staged) == to_bytes(result)


def test_force_summarizes_under_the_threshold_and_says_why_nothing_changed() -> None:
    check = compact_check(library(PI, force=True))
    assert check is not None
    assert (check.reason, check.summarized, check.not_summarized) == (
        "forced",
        False,
        "nothing to summarize: the whole conversation fits in the kept tail",
    )


def test_a_result_that_is_not_smaller_is_discarded() -> None:
    path = TRANSCRIPTS / "pi-branched.jsonl"
    result = library(path, **keep(300, force=True))
    check = compact_check(result)
    assert check is not None
    # summarize counts as compact does: its summary is not used, and the input comes back
    assert check.not_summarized == (
        "the summary would not make the context smaller (696 tokens, 690 before)"
    )
    assert to_bytes(result) == path.read_bytes()
    assert (check.tokens_before, check.tokens_after, check.summarized) == (690, 690, False)


def test_a_result_that_does_not_validate_is_discarded(monkeypatch: pytest.MonkeyPatch) -> None:
    import compactcli.stages.compact as module

    def broken(t: Transcript, *args: Any, **kwargs: Any) -> Transcript:
        # drop the first tool result: its call is left unanswered mid-conversation
        dialect = get_dialect(t.format)
        index = next(
            m.index for m in dialect.context(t) if any(b.kind == "tool_result" for b in m.blocks)
        )
        return t.evolve(records=t.records[:index] + t.records[index + 1 :])

    monkeypatch.setattr(module, "summarize", broken)
    result = library(CLAUDE, **keep(2000, force=True))
    check = compact_check(result)
    assert check is not None
    assert check.kept_input is not None
    assert check.kept_input.startswith("the result would not validate (line ")
    assert to_bytes(result) == CLAUDE.read_bytes()


def test_focus_reaches_the_summarizer() -> None:
    seen: list[SummaryRequest] = []

    class Recording:
        name = "extractive"

        def summarize(self, request: SummaryRequest) -> SummaryResult:
            seen.append(request)
            return EXTRACTIVE.summarize(request)

    transcript = read_transcript(str(PI))
    options = CompactOptions(
        prune=PruneOptions(),
        summarize=SummarizeOptions(keep_recent_tokens=2000, focus="geocoding"),
        force=True,
    )
    result = compact(transcript, options, summarizer=Recording(), counter=counter_for(transcript))
    assert [r.focus for r in seen] == ["geocoding"]
    boundary = [s.details["boundary"] for s in result.stats if "boundary" in s.details]
    assert boundary[-1]["focus"] == "geocoding"


def test_settle_is_what_writing_and_reading_back_gives(tmp_path: Path) -> None:
    transcript = read_transcript(str(TRANSCRIPTS / "claude-code-session.jsonl"))
    pruned = prune(
        transcript, PruneOptions(keep_recent=0, min_chars=50), counter=counter_for(transcript)
    )
    assert any(r.changed for r in pruned.records)
    written = tmp_path / "pruned.jsonl"
    write_transcript(pruned, str(written))
    read_back = read_transcript(str(written))
    settled = settle(pruned)
    assert settled.sha256 == read_back.sha256 != transcript.sha256
    assert [(r.raw, r.line, r.lineno, r.eol) for r in settled.records] == [
        (r.raw, r.line, r.lineno, r.eol) for r in read_back.records
    ]
    assert settle(read_back) is read_back


_MIXED_LINES = (
    b'\xef\xbb\xbf{"n":0,"type":"x"}\r\n'
    + b"".join(b'{"n":%d,"type":"x","pad":"%s"}\n' % (n, b"p" * (n * 7 % 50)) for n in range(1, 40))
    + b"\n"
    + b'{"n":40,"type":"x"}\r\n'
    + b"not json\n"
    + b"".join(b'{"n":%d,"type":"x"}\n' % n for n in range(41, 60))
)


@pytest.mark.parametrize("block", [16, 100, 1 << 20])
@pytest.mark.parametrize("policy", ["keep", "skip"])
@pytest.mark.parametrize("edited", [0, 5, 38, 41, 55])
def test_settle_hashes_what_a_second_read_hashes(
    block: int, policy: Any, edited: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After an edit, settle gives the sha256 of the bytes the transcript stands for, whatever
    the size of the blocks the input was read in and whichever bad lines it kept or left out."""
    monkeypatch.setattr("compactcli.jsonl._BLOCK", block)
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(_MIXED_LINES)
    transcript = read_transcript(str(path), "openai", on_bad_line=policy)
    records = list(transcript.records)
    records[edited] = records[edited].with_raw({"n": "edited", "type": "x"})
    settled = settle(transcript.evolve(records=tuple(records)))
    written = tmp_path / "settled.jsonl"
    write_transcript(settled, str(written))
    assert settled.sha256 == hashlib.sha256(written.read_bytes()).hexdigest()
    assert settled.sha256 == read_transcript(str(written), "openai", on_bad_line="keep").sha256


def test_a_second_run_changes_nothing() -> None:
    once = library(PI, **keep(2000, threshold="3000"))
    twice = compact(
        settle(once.evolve(stats=())),
        CompactOptions(**keep(2000, threshold="3000")),
        summarizer=EXTRACTIVE,
        counter=counter_for(once),
    )
    assert to_bytes(twice) == to_bytes(once)
    check = compact_check(twice)
    assert check is not None and check.reason == "under the threshold after pruning"


# ---------------------------------------------------------------------------------------------
# the summary cache


class Counting:
    """A summarizer that counts its calls and answers like the extractive one."""

    name = "llm"

    def __init__(self, fallback: str | None = None) -> None:
        self.calls = 0
        self.fallback = fallback

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        self.calls += 1
        result = EXTRACTIVE.summarize(request)
        return dataclasses.replace(
            result,
            summarizer="extractive" if self.fallback else "llm",
            model="test",
            llm_calls=1,
            fallback=self.fallback,
        )


def _summarize_with(summarizer: Summarizer, path: Path = PI) -> bytes:
    transcript = read_transcript(str(path))
    options = CompactOptions(**keep(2000, force=True))
    return to_bytes(
        compact(transcript, options, summarizer=summarizer, counter=counter_for(transcript))
    )


def test_cache_answers_the_same_request_once(tmp_path: Path) -> None:
    inner = Counting()
    cached = CachedSummarizer(inner, SummaryCache(str(tmp_path / "c")), {"model": "test"})
    first = _summarize_with(cached)
    second = _summarize_with(cached)
    again = _summarize_with(
        CachedSummarizer(inner, SummaryCache(str(tmp_path / "c")), {"model": "test"})
    )
    assert first == second == again
    assert (inner.calls, cached.hits, cached.misses) == (1, 1, 1)
    (entry,) = (tmp_path / "c" / "summaries").glob("*/*.json")
    assert entry.parent.name == entry.stem[:2] and len(entry.stem) == 64


def test_cache_key_depends_on_content_and_settings(tmp_path: Path) -> None:
    inner = Counting()
    cache = SummaryCache(str(tmp_path / "c"))
    _summarize_with(CachedSummarizer(inner, cache, {"model": "a"}))
    _summarize_with(CachedSummarizer(inner, cache, {"model": "b"}))
    _summarize_with(CachedSummarizer(inner, cache, {"model": "a"}), CLAUDE)
    assert inner.calls == 3
    transcript = read_transcript(str(PI))
    request = SummaryRequest(
        messages=tuple(get_dialect("pi").context(transcript)[:4]),
        counter=counter_for(transcript),
        budget_tokens=400,
    )
    key = request_key(request, "llm", {"model": "a"})
    assert key == request_key(dataclasses.replace(request), "llm", {"model": "a"})
    assert key != request_key(dataclasses.replace(request, focus="x"), "llm", {"model": "a"})
    assert key != request_key(
        dataclasses.replace(request, budget_tokens=401), "llm", {"model": "a"}
    )
    assert key != request_key(request, "extractive", {"model": "a"})


def test_a_fallback_is_not_cached_and_a_broken_entry_is_a_miss(tmp_path: Path) -> None:
    failing = Counting(fallback="HTTP 500")
    cached = CachedSummarizer(failing, SummaryCache(str(tmp_path / "c")))
    _summarize_with(cached)
    _summarize_with(cached)
    assert (failing.calls, cached.hits) == (2, 0)
    assert not (tmp_path / "c").exists()
    good = Counting()
    cached = CachedSummarizer(good, SummaryCache(str(tmp_path / "c")))
    _summarize_with(cached)
    (entry,) = (tmp_path / "c" / "summaries").glob("*/*.json")
    entry.write_bytes(b"{not json")
    _summarize_with(cached)
    assert good.calls == 2


def test_an_unwritable_cache_is_a_warning_not_a_failure(tmp_path: Path) -> None:
    (tmp_path / "c").write_text("a file where the folder should be")
    cached = CachedSummarizer(Counting(), SummaryCache(str(tmp_path / "c")))
    assert _summarize_with(cached) == _summarize_with(Counting())
    assert cached.warnings == [f"summary cache {tmp_path / 'c'}: cannot write: Not a directory"]


def test_default_cache_dir() -> None:
    assert default_cache_dir({"COMPACTCLI_CACHE_DIR": "/x"}) == "/x"
    assert default_cache_dir({"XDG_CACHE_HOME": "/xdg"}) == "/xdg/compactcli"
    home = os.path.expanduser("~")
    assert default_cache_dir({"XDG_CACHE_HOME": "relative"}) == f"{home}/.cache/compactcli"
    assert default_cache_dir({}) == f"{home}/.cache/compactcli"


@pytest.mark.llm
def test_the_command_makes_no_llm_call_twice(tmp_path: Path) -> None:
    args = ["--force", "--keep-recent-tokens", "2000", "--summarizer", "llm", "--model", MODEL]
    with serve(*[__import__("tests.llm_server").llm_server.ok(ANSWER)]) as server:
        first = run("compact", str(PI), *args, "--api-base", server.url, "-o", "a.jsonl", "--json")
        second = run("compact", str(PI), *args, "--api-base", server.url, "-o", "b.jsonl", "--json")
        assert len(server.requests) == 1
        third = run(
            "compact", str(PI), *args, "--api-base", server.url, "-o", "c.jsonl", "--no-cache"
        )
        assert len(server.requests) == 2
    assert (first.exit_code, second.exit_code, third.exit_code) == (0, 0, 0)
    assert first.stderr == second.stderr == ""
    assert orjson.loads(first.stdout)["llm_calls"] == 1
    assert orjson.loads(second.stdout)["llm_calls"] == 0  # the cache answered: no request
    assert Path("a.jsonl").read_bytes() == Path("b.jsonl").read_bytes()
    assert Path("a.jsonl").read_bytes() == Path("c.jsonl").read_bytes()
    assert ANSWER.split("\n")[1].encode() in Path("a.jsonl").read_bytes()
    assert len(list((tmp_path / "cache" / "summaries").glob("*/*.json"))) == 1


@pytest.mark.llm
def test_llm_calls_count_every_request_the_run_sent() -> None:
    # a budget no summary meets: the tail and size are found with the extractive summary, the
    # model is asked once with them (fitting does not ask it again), and its request is retried
    codex = TRANSCRIPTS / "codex-summarize-session.jsonl"
    llm = ["--summarizer", "llm", "--model", MODEL, "--max-tokens", "500", "-o", "o.jsonl"]
    reply = __import__("tests.llm_server").llm_server
    with serve(reply.error(500), reply.ok(ANSWER)) as server:
        result = run("compact", str(codex), *llm, "--api-base", server.url, "--json")
        sent = len(server.requests)
    assert result.exit_code == 1
    assert sent == 2
    assert orjson.loads(result.stdout)["llm_calls"] == sent
    kept = [
        orjson.loads(line)["compactcli"]["llm_calls"]
        for line in Path("o.jsonl").read_bytes().splitlines()
        if b'"compactcli"' in line
    ]
    assert kept == [2]  # the boundary records the calls behind the summary it holds


@pytest.mark.llm
def test_a_model_is_asked_once_for_the_tail_the_extractive_summary_fits() -> None:
    """Fitting a budget tries several tails; with a model, the tries are extractive and the
    model is asked once, with the tail the last of them kept."""
    path = EVAL_FIXTURES / "claude-code-20k-s1.jsonl"
    tries = compact_check(library(path, max_tokens=2900, fit=True))
    assert tries is not None and tries.attempts > 1 and tries.over == ()
    llm = ["--summarizer", "llm", "--model", MODEL, "--max-tokens", "2900", "-o", "m.jsonl"]
    reply = __import__("tests.llm_server").llm_server
    with serve(*[reply.ok(ANSWER)] * 10) as server:
        result = run("compact", str(path), *llm, "--api-base", server.url, "--json")
        sent = len(server.requests)
    row = orjson.loads(result.stdout)
    assert (result.exit_code, sent, row["llm_calls"]) == (0, 1, 1)
    assert row["keep_recent_tokens"] == tries.keep_recent_tokens


# ---------------------------------------------------------------------------------------------
# the command: where results go


def test_one_file_to_a_file_prints_the_table() -> None:
    result = run("compact", str(PI), "--force", "--keep-recent-tokens", "2000", "-o", "out.jsonl")
    assert result.exit_code == 0
    assert result.stderr == ""
    assert result.stdout == (
        f"file{' ' * (len(str(PI)) - 2)}before  after        saved  status   \n"
        f"{PI}   5,997  2,410  3,587 (60%)  compacted\n"
    )
    assert validate(read_transcript("out.jsonl")).errors == ()


def test_one_file_to_standard_output_keeps_the_report_off_it() -> None:
    result = run("compact", str(PI), "--threshold", "3000", "--keep-recent-tokens", "2000")
    assert result.exit_code == 0
    assert result.stderr == ""
    assert result.stdout_bytes == written(PI, **keep(2000, threshold="3000"))


def test_standard_input_works_like_a_file() -> None:
    result = run("compact", "-", "--force", "--keep-recent-tokens", "2000", input=PI.read_bytes())
    assert result.exit_code == 0
    assert result.stdout_bytes == written(PI, **keep(2000, force=True))


def test_out_dir_keeps_relative_names(tmp_path: Path) -> None:
    source = tmp_path / "in"
    (source / "a" / "b").mkdir(parents=True)
    shutil.copy(PI, source / "a" / "b" / "pi.jsonl")
    shutil.copy(CLAUDE, source / "top.jsonl")
    shutil.copy(TRANSCRIPTS / "codex-session.jsonl", tmp_path / "single.jsonl")
    result = run(
        "compact",
        str(source),
        str(tmp_path / "single.jsonl"),
        "--out-dir",
        "out",
        "--force",
        "--keep-recent-tokens",
        "2000",
        "--json",
    )
    assert result.exit_code == 0, result.stderr
    written = sorted(str(p.relative_to("out")) for p in Path("out").rglob("*.jsonl"))
    assert written == ["a/b/pi.jsonl", "single.jsonl", "top.jsonl"]
    lines = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert [(r["status"], r["output"]) for r in lines] == [
        ("compacted", "out/top.jsonl"),
        ("compacted", "out/a/b/pi.jsonl"),
        ("unchanged", "out/single.jsonl"),
    ]
    assert Path("out/single.jsonl").read_bytes() == (tmp_path / "single.jsonl").read_bytes()


def test_out_dir_refuses_two_inputs_with_one_name(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    shutil.copy(PI, tmp_path / "x" / "pi-summarize-session.jsonl")
    result = run("compact", str(PI), str(tmp_path / "x"), "--out-dir", "out")
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {PI} and {tmp_path / 'x' / 'pi-summarize-session.jsonl'} would both be written "
        "to pi-summarize-session.jsonl in --out-dir\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["a", "b"],
            "2 inputs: choose where the results go with --out-dir DIR or --in-place (or --dry-run)",
        ),
        (["a", "-o", "x", "--in-place"], "-o and --in-place cannot be used together"),
        (["a", "--out-dir", "d", "--in-place"], "--out-dir and --in-place cannot be used together"),
        (["-", "--in-place"], "--in-place needs files: standard input cannot be replaced"),
        (["-", "--out-dir", "d"], "--out-dir needs files or folders, not standard input"),
        (["a", "-o", "a"], "a: -o would overwrite the input; use --in-place"),
        (["a", "--method", "auto"], "--method must be heuristic or exact, not 'auto'"),
        (["a", "--summarizer", "gpt"], "--summarizer must be extractive or llm, not 'gpt'"),
        (
            ["a", "b", "--out-dir", "d", "--boundary", "x"],
            "--boundary takes one input; use --stats for many",
        ),
    ],
)
def test_usage_errors(args: list[str], message: str) -> None:
    shutil.copy(PI, "a")
    shutil.copy(PI, "b")
    result = run("compact", *args)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == f"error: {message}\n"
    assert sorted(os.listdir()) == ["a", "b"]


@pytest.mark.parametrize("command", ["compact", "prune", "summarize", "diff"])
def test_every_stage_command_takes_the_same_counting_methods(command: str) -> None:
    """`--method` is one option with one check in every command that counts for a stage."""
    path = str(FIXTURES / "transcripts" / "pi-session.jsonl")
    inputs = [path, path] if command == "diff" else [path]
    result = run(command, *inputs, "--method", "usage")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == "error: --method must be heuristic or exact, not 'usage'\n"
    assert run(command, *inputs, "--method", "exact").exit_code in (0, 1)


def test_in_place_keeps_a_backup_and_never_overwrites_one() -> None:
    shutil.copy(PI, "s.jsonl")
    original = PI.read_bytes()
    args = ["compact", "s.jsonl", "--in-place", "--force", "--keep-recent-tokens", "2000", "--json"]
    first = run(*args)
    assert first.exit_code == 0
    assert orjson.loads(first.stdout)["backup"] == "s.jsonl.bak"
    assert Path("s.jsonl.bak").read_bytes() == original
    compacted = Path("s.jsonl").read_bytes()
    assert compacted == written(PI, **keep(2000, force=True))
    second = run(*args)  # nothing left to do: no write, no backup
    assert orjson.loads(second.stdout)["status"] == "unchanged"
    assert sorted(os.listdir()) == ["s.jsonl", "s.jsonl.bak"]
    shutil.copy(PI, "s.jsonl")
    third = run(*args)
    assert orjson.loads(third.stdout)["backup"] == "s.jsonl.1.bak"
    assert Path("s.jsonl.bak").read_bytes() == Path("s.jsonl.1.bak").read_bytes() == original
    assert backup_path("s.jsonl") == "s.jsonl.2.bak"


def test_in_place_keeps_permissions() -> None:
    shutil.copy(PI, "s.jsonl")
    os.chmod("s.jsonl", 0o640)
    assert (
        run("compact", "s.jsonl", "--in-place", "--force", "--keep-recent-tokens", "2000").exit_code
        == 0
    )
    assert os.stat("s.jsonl").st_mode & 0o777 == 0o640
    assert os.stat("s.jsonl.bak").st_mode & 0o777 == 0o640


def test_dry_run_shows_the_diff_and_writes_nothing() -> None:
    shutil.copy(PI, "s.jsonl")
    result = run("compact", "s.jsonl", "--dry-run", "--force", "--keep-recent-tokens", "2000")
    assert result.exit_code == 0
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines == [
        "records: 21 -> 23  kept 19, cleared 2, edited 0, removed 0, added 2",
        "tokens:  5,997 -> 2,410 (-59.8%) [heuristic]",  # the figures of the table below
        "first change: line 5 (cleared message toolResult); prompt cache breaks here",
        "  cleared       5      5  message toolResult  5,048 -> 416 bytes",
        "  cleared       6      6  message toolResult  2,653 -> 551 bytes",
        "  added         -     22  custom  0 -> 981 bytes",
        "  added         -     23  compaction  0 -> 3,785 bytes",
        "file          before  after        saved  status   ",
        "s.jsonl        5,997  2,410  3,587 (60%)  compacted",
    ]
    assert sorted(os.listdir()) == ["s.jsonl"]
    assert Path("s.jsonl").read_bytes() == PI.read_bytes()


def test_stats_and_boundary_files() -> None:
    result = run(
        "compact",
        str(PI),
        "--force",
        "--keep-recent-tokens",
        "2000",
        "-o",
        "o.jsonl",
        "--stats",
        "stats.jsonl",
        "--boundary",
        "boundary.json",
    )
    assert result.exit_code == 0
    (report,) = [orjson.loads(line) for line in Path("stats.jsonl").read_bytes().splitlines()]
    assert [s["stage"] for s in report["stages"]] == ["prune", "summarize", "compact"]
    assert report["stages"][-1]["details"]["compact"]["summarized"] is True
    boundary = orjson.loads(Path("boundary.json").read_bytes())
    pruned = report["stages"][0]["tokens_after"]  # the summary starts where pruning ended
    assert (boundary["stage"], boundary["tokens_before"]) == ("summarize", pruned)
    assert (report["tokens_before"], report["tokens_after"]) == (
        report["stages"][0]["tokens_before"],
        boundary["tokens_after"],
    )


def test_fail_on_threshold_and_max_tokens_set_the_exit_code() -> None:
    base = ["compact", str(PI), "-o", "o.jsonl", "--keep-recent-tokens", "20000"]
    over = run(*base, "--threshold", "3000")
    assert over.exit_code == 0
    assert over.stdout.splitlines()[-1].endswith("unchanged; over the threshold (3,000) by 2,997")
    failing = run(*base, "--threshold", "3000", "--fail-on-threshold")
    assert failing.exit_code == 1
    why = f"{PI}: not summarized: nothing to summarize: the whole conversation fits in the kept tail\n"
    assert failing.stderr == f"{PI}: unchanged; over the threshold (3,000) by 2,997\n" + why
    budget = run(*base, "--max-tokens", "3000")
    assert budget.exit_code == 1
    assert budget.stderr == f"{PI}: unchanged; over --max-tokens (3,000) by 2,997\n" + why


def test_a_result_still_over_its_budget_says_where_its_tokens_are() -> None:
    # over the budget either way: the turn is kept whole, which comes nearer than cutting it
    # (the quoted prompt would cost more than it frees)
    codex = TRANSCRIPTS / "codex-summarize-session.jsonl"
    result = run("compact", str(codex), "--max-tokens", "500", "-o", "o.jsonl")
    assert result.exit_code == 1
    assert result.stderr == (
        f"{codex}: compacted; over --max-tokens (500) by 260\n"
        f"{codex}: still over: the 3 messages before the summary take 120 tokens, the summary "
        "432 and the kept tail (4 messages) 208; the kept messages leave the summary 172 tokens, "
        "less than its smallest (432)\n"
    )
    listed = run("compact", str(codex), "--max-tokens", "500", "-o", "o.jsonl", "--json")
    assert json.loads(listed.stdout)["notes"] == [result.stderr.splitlines()[1]]


def test_a_standing_context_over_the_budget_is_named_as_the_reason() -> None:
    codex = TRANSCRIPTS / "codex-interrupted.jsonl"
    result = run("compact", str(codex), "--max-tokens", "50", "-o", "o.jsonl")
    assert result.exit_code == 1
    assert result.stderr == (
        f"{codex}: unchanged; over --max-tokens (50) by 232\n"
        f"{codex}: not summarized: the summary would not make the context smaller (426 tokens, "
        "282 before)\n"
        f"{codex}: the standing context (the first 2 messages: system and developer prompts, "
        "injected instructions) alone takes 92 tokens, over 50\n"
    )
    # a budget the standing context fits adds no such line
    fits = run("compact", str(codex), "--max-tokens", "100", "-o", "o.jsonl")
    assert "standing context" not in fits.stderr


def test_a_smaller_summary_that_left_it_over_is_not_used_and_the_note_counts_it_all() -> None:
    """A smaller summary that leaves the result over is not used (it would cut facts for a
    result over anyway). The note's parts add up to the count of the result: the kept tail
    with what its responses' usage recorded (thinking the file leaves out)."""
    path = EVAL_FIXTURES / "anthropic-20k-s4.jsonl"
    result = run("compact", str(path), "--max-tokens", "3900", "-o", "o.jsonl", "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert (report["tokens_after"], report["notes"]) == (
        4649,
        [
            f"{path}: still over: the summary takes 1,223 tokens and the kept tail (3 messages) "
            "3,426; the kept messages leave the summary 474 tokens, less than its smallest (571)"
        ],
    )
    parts = re.findall(
        r"takes ([\d,]+) tokens and the kept tail \(3 messages\) ([\d,]+)", report["notes"][0]
    )
    assert sum(int(n.replace(",", "")) for n in parts[0]) == report["tokens_after"]
    found = compact_check(library(path, max_tokens=3900, fit=True))
    assert found is not None
    assert (found.tokens_after, found.smaller_summary_total, found.summary_tokens) == (
        4649,
        3996,
        None,
    )


def test_a_budget_under_the_request_the_summary_quotes_whole_names_it(tmp_path: Path) -> None:
    """The latest request is quoted whole when its turn is cut: when it takes most of the
    summary, the note says so, as the reason no summary comes smaller."""
    log = "\n".join(
        f"line {i}: INFO worker {i} started with config value {i * 7}" for i in range(120)
    )
    records: list[dict[str, Any]] = [
        {"role": "user", "content": "Set up the worker pool."},
        {"role": "assistant", "content": "Done: the pool starts four workers."},
        {"role": "user", "content": f"Here is the log of the last run:\n{log}\nWhy not 7?"},
    ]
    for i in range(6):
        call = {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": "ls"}}
        records.append({"role": "assistant", "content": [call]})
        done = {"type": "tool_result", "tool_use_id": f"t{i}", "content": "x" * 400}
        records.append({"role": "user", "content": [done]})
    records.append({"role": "assistant", "content": "Worker 7 never got a config value."})
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "o.jsonl"
    found = run("compact", str(path), "--max-tokens", "800", "--cut-turn", "--json", "-o", str(out))
    assert found.exit_code == 1
    (note,) = json.loads(found.stdout)["notes"]
    found_numbers = re.search(
        r"less than its smallest \(([\d,]+), ([\d,]+) of them the latest request it quotes "
        r"whole\)$",
        note,
    )
    assert found_numbers is not None, note
    smallest, request = (int(n.replace(",", "")) for n in found_numbers.groups())
    assert smallest / 2 < request < smallest
    assert "Why not 7?" in out.read_text()  # quoted whole in the summary, not cut


def test_where_the_tokens_are_says_whether_a_smaller_summary_could_fit() -> None:
    codex = TRANSCRIPTS / "codex-summarize-session.jsonl"
    assert run("compact", str(codex), "--max-tokens", "500", "-o", "o.jsonl").exit_code == 1
    result = read_transcript("o.jsonl")
    counter = counter_for(result)
    parts = (
        "the 3 messages before the summary take 120 tokens, the summary 432 and the kept tail "
        "(4 messages) 208"
    )
    assert over_parts(result, counter, 300) == f"{parts}; the kept messages alone are over 300"
    assert over_parts(result, counter, 328) == f"{parts}; the kept messages alone are over 328"
    # its body is under the smallest budget: the summary is as small as it gets
    assert over_parts(result, counter, 759) == (
        f"{parts}; the kept messages leave the summary 431 tokens, less than its smallest (432)"
    )
    assert over_parts(result, counter, 760) == (
        f"{parts}; a smaller summary (--summary-tokens) could bring it under"
    )
    assert over_parts(result, counter, 789, smaller_total=900) == (
        f"{parts}; a smaller summary left it over too (900 tokens)"
    )
    assert over_parts(read_transcript(str(codex)), counter, 500) is None  # no summary in it


# ---------------------------------------------------------------------------------------------
# proof of safety: every stage and compact, on generated transcripts, with random options


prune_options = st.builds(
    PruneOptions,
    keep_recent_tokens=st.integers(0, 3000),
    keep_recent=st.none() | st.integers(0, 4),
    min_chars=st.integers(0, 400),
    dedupe=st.booleans(),
    images=st.booleans(),
)
summarize_options = st.builds(
    SummarizeOptions,
    keep_recent_tokens=st.integers(0, 3000),
    protect_first=st.integers(0, 3),
    summary_tokens=st.none() | st.integers(20, 800),
    focus=st.none() | st.sampled_from(["auth", "src/app.py", "pnpm port"]),
)
compact_options = st.builds(
    CompactOptions,
    prune=prune_options,
    summarize=summarize_options,
    force=st.booleans(),
    threshold=st.none() | st.sampled_from(["1", "500", "2%", "claude-code", "codex"]),
    max_tokens=st.none() | st.integers(0, 5000),
    fit=st.booleans(),
)
SAFETY = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _run_stage(stage: str, t: Transcript, options: Any) -> Transcript:
    counter = counter_for(t)
    if stage == "prune":
        return prune(t, options, counter=counter)
    if stage == "summarize":
        return summarize(t, options, summarizer=EXTRACTIVE, counter=counter)
    return compact(t, options, summarizer=EXTRACTIVE, counter=counter)


def _read(data: bytes, path: Path) -> Transcript:
    path.write_bytes(data)
    return read_transcript(str(path))


def _unanswered(t: Transcript) -> set[str]:
    context = get_dialect(t.format).context(t)
    calls = {b.call_id for m in context for b in m.tool_calls if b.call_id}
    results = {b.call_id for m in context for b in m.tool_results if b.call_id}
    assert results <= calls, results - calls  # no orphan result
    return calls - results


def _ours(line: bytes) -> bool:
    return b"compactcli" in line or any(
        marker in line
        for marker in (
            b"[Old tool result cleared:",
            b"[Duplicate tool result cleared:",
            b"[Old image cleared:",
        )
    )


def _check_safety(stage: str, fmt: str, plan: Plan, options: Any, tmp_path: Path) -> None:
    data = render(plan, fmt)
    before = _read(data, tmp_path / "before.jsonl")
    result = _run_stage(stage, before, options)
    out = to_bytes(result)
    after = _read(out, tmp_path / "after.jsonl")
    dialect = get_dialect(fmt)

    # the output validates, with no warning the input did not have
    report = validate(after)
    assert report.errors == (), report.errors
    assert {w.code for w in report.warnings} <= {w.code for w in validate(before).warnings}

    # every record we did not write is byte-identical to a record of the input
    lines_before = set(data.splitlines())
    lines_after = out.splitlines()
    foreign = []
    for position, line in enumerate(lines_after):
        if line in lines_before or _ours(line):
            continue
        if fmt == "anthropic" and b"compactcli summary" in line:
            continue  # a summary merged into the first kept user message
        if (
            fmt == "codex"
            and b'"type":"turn_context"' in line
            and b"compactcli" in lines_after[position - 1]
        ):
            continue  # Codex writes a turn_context after its compacted line
        if (
            fmt == "codex"
            and b'"type":"token_count"' in line
            and b"compactcli" in lines_after[position - 2]
        ):
            continue  # and then a token_count with the compacted context's size
        if fmt == "claude-code" and _same_but_parent(line, lines_before):
            continue  # the kept tail relinked under the summary
        foreign.append(line)
    assert foreign == []

    # calls and results stay paired; no call loses a result it had
    assert _unanswered(after) <= _unanswered(before)

    # the last user message survives: as the last user message of the context, or quoted
    # verbatim at the end of the summary when its turn was cut, unless --protect-first put it
    # in the protected head (kept, or quoted verbatim in the summary); a message is what the
    # person typed (a skill's body after it is not)
    def user_texts(t: Transcript) -> list[str]:
        return [m.text for m in dialect.context(t) if is_prompt(m) or has_preamble(m.text)]

    last = user_texts(before)[-1]
    protected = getattr(getattr(options, "summarize", options), "protect_first", 0)
    if protected and stage != "prune":
        assert any(last in text for text in user_texts(after))
    else:
        assert last in user_texts(after)[-1]

    # tokens never grow
    counter = counter_for(before)
    tokens = [sum(counter.message_tokens(m) for m in dialect.context(t)) for t in (before, after)]
    assert tokens[1] <= tokens[0]
    if stage == "compact":
        counted = [
            estimate(t, EstimateOptions(method="heuristic"), counter=counter).tokens  # type: ignore[arg-type]
            for t in (before, after)
        ]
        assert counted[1] <= counted[0]

    # a second run of the same command changes nothing
    again = _run_stage(stage, after, options)
    assert to_bytes(again) == out


def _same_but_parent(line: bytes, lines_before: set[bytes]) -> bool:
    record = orjson.loads(line)
    for old in lines_before:
        raw = orjson.loads(old)
        if raw.get("uuid") == record.get("uuid") and record.get("uuid"):
            strip = ("parentUuid", "logicalParentUuid")
            return {k: v for k, v in raw.items() if k not in strip} == {
                k: v for k, v in record.items() if k not in strip
            }
    return False


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
@SAFETY
@given(plan=plans(), options=prune_options)
def test_prune_is_safe(tmp_path: Path, fmt: str, plan: Plan, options: PruneOptions) -> None:
    _check_safety("prune", fmt, plan, options, tmp_path)


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
@SAFETY
@given(plan=plans(), options=summarize_options)
def test_summarize_is_safe(tmp_path: Path, fmt: str, plan: Plan, options: SummarizeOptions) -> None:
    _check_safety("summarize", fmt, plan, options, tmp_path)


_QUIET = Step(text="fix", thinking="", calls=())
_READ = Step(text="fix", thinking="", calls=(Call(0, "src/app.py", "   0  fix", False),))
_UNREACHABLE = Plan(
    turns=(
        Turn("fix", (_QUIET,)),
        Turn("fix", (_QUIET,)),
        Turn("fix", (_QUIET, _QUIET, _QUIET)),
        Turn("fix fix fix fix", (_READ,)),
        Turn("fix", (_READ,)),
    ),
    compacted_before=1,
    interrupted=True,
    system="You are a careful coding agent.",
    seed=0,
    extra={},
)
"""An OpenAI chat session that a budget of 175 tokens cannot hold (see `_TOO_FEW`)."""
_TOO_FEW = CompactOptions(
    prune=PruneOptions(keep_recent_tokens=0, min_chars=0, dedupe=False, images=False),
    summarize=SummarizeOptions(keep_recent_tokens=458),
    max_tokens=175,
    fit=True,
)


class _ModelLike:
    """The extractive summary, reported as a model's answer (one call each)."""

    name = "llm"

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        found = EXTRACTIVE.summarize(request)
        return dataclasses.replace(found, summarizer="llm", llm_calls=1)


def test_a_summary_a_model_wrote_is_not_compacted_again_in_more_rounds(tmp_path: Path) -> None:
    before = _read(render(_UNREACHABLE, "openai"), tmp_path / "before.jsonl")
    offline = compact_check(_run_stage("compact", before, _TOO_FEW))
    assert offline is not None and offline.rounds == 2
    result = compact(before, _TOO_FEW, summarizer=_ModelLike(), counter=counter_for(before))
    check = compact_check(result)
    assert check is not None and check.changed and check.over
    assert check.rounds == 1
    assert [s.stage for s in result.stats] == ["prune", "summarize", "compact"]


def test_cutting_the_turn_is_kept_when_it_comes_nearer_a_budget_it_cannot_meet(
    tmp_path: Path,
) -> None:
    # an earlier turn, then a skill's turn: only a cut turn comes near 700 tokens, which no
    # tail meets
    path = TRANSCRIPTS / "claude-code-skill.jsonl"
    out = tmp_path / "out.jsonl"
    first = run("compact", str(path), "--max-tokens", "700", "--json", "-o", str(out))
    assert first.exit_code == 1
    report = json.loads(first.stdout)
    after = report["tokens_after"]
    assert 700 < after < 1000  # over the budget, but nearer to it than any kept tail comes
    (note,) = report["notes"]
    summary = int(re.search(r"the summary takes (\d+) tokens", note).group(1))
    assert report == {
        "path": str(path),
        "status": "compacted",
        "tokens_before": 2376,
        "tokens_after": after,
        "saved": 2376 - after,
        "method": "heuristic",
        "output": str(out),
        "backup": None,
        "summarized": True,
        "llm_calls": 0,
        "over": {"what": "budget", "limit": 700, "excess": after - 700},
        "exit_code": 1,
        "message": None,
        "warnings": [],
        "notes": [
            f"{path}: still over: the summary takes {summary} tokens and the kept tail (3 messages) "
            f"470; the kept messages leave the summary 230 tokens, less than its smallest ({summary})"
        ],
        "keep_recent_tokens": 0,
        "cut_turn": True,
    }
    assert validate(read_transcript(str(out))).errors == ()
    again = run(
        "compact", str(out), "--max-tokens", "700", "--json", "-o", str(tmp_path / "again.jsonl")
    )
    assert json.loads(again.stdout)["status"] == "unchanged"
    assert (tmp_path / "again.jsonl").read_bytes() == out.read_bytes()


def test_a_result_still_over_its_budget_is_compacted_again_until_a_second_run_changes_nothing(
    tmp_path: Path,
) -> None:
    # a budget no tail can meet: each compaction of the result shrinks it a little more
    plan, options = _UNREACHABLE, _TOO_FEW
    before = _read(render(plan, "openai"), tmp_path / "before.jsonl")
    result = _run_stage("compact", before, options)
    check = compact_check(result)
    assert check is not None
    assert (check.tokens_before, check.tokens_after, check.rounds) == (317, 302, 2)
    assert check.over == (("budget", 175, 127),)
    assert [s.stage for s in result.stats] == [
        "prune",
        "summarize",
        "prune",
        "summarize",
        "compact",
    ]
    after = _read(to_bytes(result), tmp_path / "after.jsonl")
    again = _run_stage("compact", after, options)
    assert to_bytes(again) == to_bytes(after)
    second = compact_check(again)
    assert second is not None and second.rounds == 1 and not second.changed
    # the command line reports the rounds, and a second run leaves the file as it is
    (tmp_path / "s.jsonl").write_bytes(render(plan, "openai"))
    first_run = run(
        "compact",
        str(tmp_path / "s.jsonl"),
        "--max-tokens",
        "175",
        "--json",
        "-o",
        str(tmp_path / "o.jsonl"),
    )
    assert first_run.exit_code == 1
    report = json.loads(first_run.stdout)
    assert (report["tokens_after"], report["over"], report["rounds"]) == (
        302,
        {"what": "budget", "limit": 175, "excess": 127},
        2,
    )
    second_run = run(
        "compact",
        str(tmp_path / "o.jsonl"),
        "--max-tokens",
        "175",
        "--json",
        "-o",
        str(tmp_path / "o2.jsonl"),
    )
    assert json.loads(second_run.stdout)["status"] == "unchanged"
    assert (tmp_path / "o2.jsonl").read_bytes() == (tmp_path / "o.jsonl").read_bytes()


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
@SAFETY
@given(plan=plans(), options=compact_options)
def test_compact_is_safe(tmp_path: Path, fmt: str, plan: Plan, options: CompactOptions) -> None:
    _check_safety("compact", fmt, plan, options, tmp_path)


def test_a_budget_no_tail_can_meet_gives_the_summary_twice_its_room(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the last prompt alone is over the budget: a summary cut to its least saves tokens that
    # cannot bring the result within it, and loses the rules of the skill it replaces
    rules = "\n".join(
        f"- Never skip check {i}: run `tools/check-{i}.sh` before uploading part {i}, and when it "
        f"fails stop, report the failing line to the user and wait for their answer before part {i}."
        for i in range(12)
    )
    skill = (
        "Base directory for this skill: /home/u/.claude/skills/ship\n\n---\nname: ship\n---\n"
        f"# Ship\n\nShip the build to the store.\n\n## Rules\n\n{rules}\n"
    )
    work = tuple(
        Step(text=f"Part {i} read.", calls=(Call(1, f"cat part{i}.txt", "data " * 200),))
        for i in range(8)
    )
    log = "\n".join(f"line {i} of the pasted upload log, status ok" for i in range(150))
    plan = Plan(
        turns=(
            Turn(prompt="Ship the build.", steps=work, skill=skill),
            Turn(prompt=f"Here is the log:\n{log}", steps=(Step(text="The log looks fine."),)),
        )
    )
    path = tmp_path / "in.jsonl"
    path.write_bytes(render(plan, "claude-code"))
    roomy = library(path, max_tokens=300, fit=True)
    monkeypatch.setattr(fitting_module, "SHORTFALL_ROOM", 1)
    least = library(path, max_tokens=300, fit=True)
    found, before = compact_check(roomy), compact_check(least)
    assert found is not None and before is not None
    assert found.over and before.over  # over the budget either way
    assert before.summary_tokens is None and found.summary_tokens is not None
    last_rule = "wait for their answer before part 11."
    assert last_rule in summary_text(roomy) and last_rule not in summary_text(least)
    # a budget that can be met is met
    fits = compact_check(library(path, max_tokens=5000, fit=True))
    assert fits is not None and not fits.over


def test_quiet_leaves_only_what_says_why_the_exit_code_is_not_0() -> None:
    args = [str(FIXTURES / "transcripts" / "codex-summarize-session.jsonl"), "--max-tokens", "500"]
    loud = run("compact", *args, "-o", "loud.jsonl")
    quiet = run("compact", *args, "-o", "quiet.jsonl", "-q")
    assert loud.exit_code == quiet.exit_code == 1
    failure = "codex-summarize-session.jsonl: compacted; over --max-tokens (500) by"
    assert len(loud.stderr.splitlines()) > 1  # the failure, then the note that explains it
    [line] = quiet.stderr.splitlines()
    assert failure in line and failure in loud.stderr
    assert Path("quiet.jsonl").read_bytes() == Path("loud.jsonl").read_bytes()
    estimated = run(
        "estimate",
        str(FIXTURES / "transcripts" / "claude-code-session.jsonl"),
        "--max-tokens",
        "15000",
        "--quiet",
    )
    assert (estimated.exit_code, estimated.stderr.count("\n")) == (1, 1)
    assert "over --max-tokens 15,000" in estimated.stderr


def test_an_attached_images_tags_and_placeholder_are_not_what_the_user_typed(
    tmp_path: Path,
) -> None:
    """Codex writes `<image>` and `</image>` around an image the user attached, and prune puts
    a line where an old image was: neither is a user message, an ask or the goal."""
    out = tmp_path / "out.jsonl"
    source = TRANSCRIPTS / "codex-image.jsonl"
    done = run("compact", str(source), "--force", "--keep-recent-tokens", "50", "-o", str(out))
    assert done.exit_code == 0, done.stderr
    context = get_dialect("codex").context(read_transcript(str(out)))
    summary = "\n".join(m.text for m in context if m.summary)
    assert "## User messages (oldest first)\n1. (the goal above)\n\n" in summary
    assert "- Ask: <image>" not in summary and "Ask: </image>" not in summary
    for line in ("<image>", "</image>", "[Old image cleared: image/png, 9 bytes, sha256:ab]"):
        assert typed_text(line) == (None, None)
