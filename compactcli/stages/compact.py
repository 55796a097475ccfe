"""The compact pipeline: prune, summarize when still over the threshold, check.

`compact(transcript, options, summarizer=..., counter=...)` folds the prune and summarize stages
(`compactcli.stages.prune`, `compactcli.stages.summarize`) and a check over the input, and
returns a result that validates and is smaller, or the input unchanged with the reason. It
decides on the token figures `compactcli estimate` gives with the counter's method, and writes
the same bytes as `compactcli prune | compactcli summarize` with the same options whenever the
summary keeps the same tail. The result carries the stages' `StageStats` and one of its own
(stage `compact`), whose result is the check, a `CompactCheck` (`compact_check`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypedDict, cast

import orjson

from compactcli.estimate import (
    EstimateOptions,
    EstimateReport,
    context_tokens,
    estimate,
    note_context_tokens,
)
from compactcli.formats import get_dialect
from compactcli.repair import read_back_problem
from compactcli.stages.fitting import (
    FIT_ATTEMPTS,
    Fitted,
    Summaries,
    over_limits,
    stage_reason,
    summarize_to_fit,
    summary_details,
    unsummarized,
)
from compactcli.stages.prune import PruneOptions, prune
from compactcli.stages.summarize import (
    SummarizeOptions,
    summarize,
)
from compactcli.stats import StageStats
from compactcli.summarizers import Summarizer
from compactcli.summarizers.fact_folds import reading_once
from compactcli.tokens import HeuristicCounter, TiktokenCounter, TokenCounter
from compactcli.transcript import Line, Record, Transcript
from compactcli.validation import validate

__all__ = [
    "FIT_ATTEMPTS",
    "FIT_ROUNDS",
    "CompactCheck",
    "CompactCheckDict",
    "CompactDetails",
    "CompactOptions",
    "Summaries",
    "compact",
    "compact_check",
    "settle",
    "summary_details",
]


FIT_ROUNDS = 6
"""How many times `fit` compacts a result that is still over its limits again (see `compact`)."""


@dataclass(frozen=True, slots=True)
class CompactOptions:
    """The stages' options and what `compact` compares the result with."""

    prune: PruneOptions = field(default_factory=PruneOptions)
    summarize: SummarizeOptions = field(default_factory=SummarizeOptions)
    force: bool = False  # summarize even when under the threshold
    threshold: str | None = None  # preset, "80%" or tokens; None: the format's agent
    max_tokens: int | None = None  # the budget
    context_window: int | None = None  # overrides the model's window
    fit: bool = False  # lower the kept tail while the summary leaves the context over


class OverDict(TypedDict):
    """A limit the result is still over, and by how much."""

    what: str
    limit: int
    excess: int


class CompactCheckDict(TypedDict):
    """`CompactCheck.to_dict()`: the check as written (`details["compact"]`)."""

    tokens_before: int
    tokens_after: int
    tokens_pruned: int | None
    method: str
    threshold: int
    threshold_spec: str
    max_tokens: int | None
    summarized: bool
    reason: str
    keep_recent_tokens: int
    attempts: int
    kept_input: str | None
    over: list[OverDict]
    not_summarized: str | None
    cut_turn: bool
    summary_tokens: int | None
    rounds: int
    smaller_summary_total: int | None


class CompactDetails(TypedDict):
    """`StageStats.details` of the `compact` stage."""

    compact: CompactCheckDict


@dataclass(frozen=True, slots=True)
class CompactCheck:
    """What `compact` decided and found (the `compact` stage's result)."""

    tokens_before: int
    tokens_after: int
    tokens_pruned: int | None  # after the prune stage (None: not counted, with `force`)
    method: str
    threshold: int
    threshold_spec: str
    max_tokens: int | None
    summarized: bool
    reason: str  # why the summary ran or did not
    keep_recent_tokens: int  # the kept tail of the summary used
    attempts: int  # summaries made (0 when none ran)
    kept_input: str | None  # why the result was discarded and the input kept, if it was
    over: tuple[tuple[str, int, int], ...]  # (what, limit, excess) the result is still over
    not_summarized: str | None = None  # why a summary that ran changed nothing
    cut_turn: bool = False  # the summary used was allowed to cut the current turn
    summary_tokens: int | None = None  # the summary budget, when fitting lowered or raised it
    rounds: int = 1  # compactions that changed it, each of the one before's result (`fit`)
    smaller_summary_total: int | None = None  # the count with a smaller summary, still over

    @property
    def changed(self) -> bool:
        return self.kept_input is None and self.tokens_after != self.tokens_before

    def to_dict(self) -> CompactCheckDict:
        return {
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "tokens_pruned": self.tokens_pruned,
            "method": self.method,
            "threshold": self.threshold,
            "threshold_spec": self.threshold_spec,
            "max_tokens": self.max_tokens,
            "summarized": self.summarized,
            "reason": self.reason,
            "keep_recent_tokens": self.keep_recent_tokens,
            "attempts": self.attempts,
            "kept_input": self.kept_input,
            "over": [{"what": w, "limit": limit, "excess": e} for w, limit, e in self.over],
            "not_summarized": self.not_summarized,
            "cut_turn": self.cut_turn,
            "summary_tokens": self.summary_tokens,
            "rounds": self.rounds,
            "smaller_summary_total": self.smaller_summary_total,
        }

    def to_details(self) -> CompactDetails:
        return {"compact": self.to_dict()}


def compact_check(transcript: Transcript) -> CompactCheck | None:
    """The check of the last `compact` run on `transcript`, if any."""
    for stats in reversed(transcript.stats):
        if isinstance(stats.result, CompactCheck):
            return stats.result
    return None


# ---------------------------------------------------------------------------------------------
# the pipeline


def settle(transcript: Transcript) -> Transcript:
    """`transcript` as reading its written bytes back would give it.

    Records get their written bytes, consecutive line numbers and a line ending where another
    record follows; the sha256 is that of the bytes. An unchanged transcript comes back as it is.
    """
    records = transcript.records
    last = len(records) - 1
    if all(
        r.line is not None and r.lineno == i + 1 and (r.eol or i == last)
        for i, r in enumerate(records)
    ):
        return transcript
    digest = hashlib.sha256()
    settled: list[Record] = []
    for i, record in enumerate(records):
        line: Line
        if record.line is None:
            line = orjson.dumps(record.raw)
            raw = orjson.loads(line)
            if raw == record.raw:  # the same JSON: keep the object, and what views made of it
                raw = record.raw
            eol = record.eol or b"\n"
        else:
            line, raw = record.line, record.raw
            eol = record.eol if record.eol or i == last else b"\n"
        digest.update(line)
        digest.update(eol)
        if record.line is not None and record.lineno == i + 1 and eol == record.eol:
            settled.append(record)  # already as read back
        else:
            settled.append(Record(raw, line, i + 1, eol))
    return transcript.evolve(records=tuple(settled), sha256=digest.hexdigest())


class _Measure:
    """Counts a transcript's context the way `compactcli estimate --method heuristic|exact`
    does; the rest of the file, which compaction does not decide on, is not counted."""

    def __init__(self, options: CompactOptions, counter: TokenCounter) -> None:
        self.counter = counter
        method = "exact" if counter.method == "exact" else "heuristic"
        self.options = EstimateOptions(
            method=method,
            context_window=options.context_window,
            threshold=options.threshold,
            max_tokens=options.max_tokens,
        )

    def __call__(self, transcript: Transcript) -> EstimateReport:
        counter = cast(HeuristicCounter | TiktokenCounter, self.counter)
        report = estimate(
            transcript, self.options, counter=counter, whole_file=False, breakdown=False
        )
        note_context_tokens(transcript, counter, report.tokens)  # the stages count it alike
        return report


def compact(
    transcript: Transcript,
    options: CompactOptions = CompactOptions(),
    *,
    summarizer: Summarizer,
    counter: TokenCounter,
) -> Transcript:
    """Prune, summarize when still over the threshold, check: the compacted transcript.

    A round folds these steps (`_STEPS`) over the input:

    1. **prune** (`compactcli.stages.prune`) clears old tool output;
    2. **summarize** (`compactcli.stages.summarize`) runs when the pruned context is at or over
       the threshold or over `max_tokens` (the same test as `compactcli estimate`), or always
       with `force`. When the result is still over and `fit` is set, the summary is made again
       from the pruned transcript with a smaller kept tail (`keep_recent_tokens` lowered by the
       excess, at most `FIT_ATTEMPTS` times), with a budget (`max_tokens`) allowed to cut the
       current turn from the first try, and without one, when no tail is small enough because
       the current turn is larger than the limit, once more with `cut_turn` (the turn is cut and
       its prompt quoted verbatim in the summary; the check records `cut_turn`). When a tail
       found so leaves the result well under a `max_tokens` budget (the tail shrinks in steps,
       and a step can drop a message of thousands of tokens), the tail is grown back into that
       room as far as the result stays within it (`_refill`), so the budget holds as much of the
       session as it can. When no tail and no smaller summary brings it within the budget (what
       compaction may not remove is over it already), the summary is made again with twice its
       room (`_shortfall`), as a smaller one would cut facts and buy nothing. A session whose
       context is that one turn (nothing before its prompt to summarize) has it cut so by the
       summarize stage itself, with `force` and over the threshold alike, unless that does not
       make the context smaller;
    3. **check**: the result must validate (no error the input did not have) and be smaller
       than the input; otherwise the input comes back unchanged and the check says why. Whether
       the result is under the threshold and the budget, and by how much it is over, is
       recorded.

    When the result is still over its limits after a round (with `fit`), it is compacted again
    as read back, as a second run would, until a round changes nothing (at most `FIT_ROUNDS`
    rounds; the check records `rounds`): a second `compact` then finds nothing to do. Not with a
    summary a model wrote (each round would ask it again).

    Between the stages the pruned transcript is settled (`settle`), as a pipe between
    `compactcli prune` and `compactcli summarize` leaves it, so `compact` gives the same bytes as
    `compactcli prune OPTIONS | compactcli summarize OPTIONS` whenever the summary runs with the
    same kept tail: with `force`, or when the input is over its threshold and the first summary
    fits. When `fit` lowered the tail, the stats give the value used (`keep_recent_tokens`), and
    the pipe with `--keep-recent-tokens` set to it gives the same bytes again.

    Token figures for the threshold decision and the check come from `compactcli.estimate` with
    the counter's method (heuristic or exact), so they match `compactcli estimate --method
    heuristic`. The result carries the stages' `StageStats` and one more, stage `compact`, whose
    result is the check (`CompactCheck`, written as `details["compact"]`); the steps read what a
    stage did from its typed result (`StageStats.result`), never from the JSON written.
    """
    started = time.perf_counter()
    result = _compact_once(transcript, options, summarizer, counter)
    check = compact_check(result)
    ran = 1
    # Over the limits after fitting: compact the result as read back again, as a second run
    # would, until a round changes nothing (so a second run does not). Not when a model wrote
    # the summary: each round would ask it again, up to a dozen times.
    while (
        options.fit
        and check is not None
        and check.over
        and check.changed
        and ran < FIT_ROUNDS
        and not summary_details(result).asked_a_model
    ):
        again = _compact_once(settle(result), options, summarizer, counter)
        ran += 1
        check = compact_check(again)
        if check is None or not check.changed:
            break
        result = again
    compacts = [(s, s.result) for s in result.stats if isinstance(s.result, CompactCheck)]
    if len(compacts) == 1:  # one per round kept
        return result
    # one `compact` stage for the whole run: from the input to the last round kept
    (first, first_check), (last, last_check) = compacts[0], compacts[-1]
    merged = dataclasses.replace(
        last_check,
        tokens_before=first_check.tokens_before,
        tokens_pruned=first_check.tokens_pruned,
        reason=first_check.reason,
        attempts=sum(c.attempts for _, c in compacts),
        summarized=True,
        rounds=len(compacts),
    )
    stats = dataclasses.replace(
        last,
        tokens_before=first.tokens_before,
        records_before=first.records_before,
        messages_before=first.messages_before,
        seconds=time.perf_counter() - started,
        changed=True,
        result=merged,
    )
    kept = tuple(s for s in result.stats if s.stage != "compact")
    return result.evolve(stats=(*kept, stats))


@dataclass(frozen=True, slots=True)
class _Round:
    """One round of `compact` as its steps fold over it: what it starts from, and what the
    steps so far made (`result`: the latest step's)."""

    transcript: Transcript  # the input
    options: CompactOptions
    summarizer: Summarizer
    counter: TokenCounter
    measure: _Measure
    started: float
    before: EstimateReport  # the input's count
    result: Transcript
    pruned: Transcript  # the prune step's result, settled (the input until it runs)
    reason: str = ""  # why the summary ran or did not
    fitted: Fitted | None = None  # what the summary step made, when it ran
    counted: list[EstimateReport] = field(default_factory=list)  # the pruned count, once made

    def after_prune(self) -> EstimateReport:
        """The pruned transcript's count, made once and only when it is needed."""
        if not self.counted:
            same = self.pruned.records is self.transcript.records
            self.counted.append(self.before if same else self.measure(self.pruned))
        return self.counted[0]

    def summary(self, options: SummarizeOptions) -> Transcript:
        """The summarize stage run on the pruned transcript with `options`."""
        return summarize(self.pruned, options, summarizer=self.summarizer, counter=self.counter)

    def count(self, transcript: Transcript) -> EstimateReport:
        return self.measure(transcript)

    def with_summarizer(self, summarizer: Summarizer) -> _Round:
        return dataclasses.replace(self, summarizer=summarizer)

    def with_summarize(self, options: SummarizeOptions) -> _Round:
        return dataclasses.replace(
            self, options=dataclasses.replace(self.options, summarize=options)
        )


def _prune_step(state: _Round) -> _Round:
    """**prune**, its result settled as a pipe would leave it (the same JSON read back: the
    count of its context, which prune made, holds for it too)."""
    made = prune(state.transcript, state.options.prune, counter=state.counter)
    pruned = settle(made)
    if pruned is not made:
        note_context_tokens(pruned, state.counter, context_tokens(made, state.counter))
    return dataclasses.replace(state, result=pruned, pruned=pruned)


def _summarize_step(state: _Round) -> _Round:
    """**summarize**, with `force` or when the pruned context is over its limits (made to fit
    them, with `fit`)."""
    options = state.options
    over = [] if options.force else over_limits(state.after_prune())
    if options.force:
        reason = "forced"
    elif over:
        reason = "over the " + " and the ".join(
            "threshold" if w == "threshold" else "budget" for w, _, _ in over
        )
    else:
        return dataclasses.replace(state, reason="under the threshold after pruning")
    with reading_once():  # the heads each try summarizes are read once
        fitted = summarize_to_fit(state)
    return dataclasses.replace(state, result=fitted.result, reason=reason, fitted=fitted)


def _check_step(state: _Round) -> _Round:
    """**check**: the result replaces the input only when it is sound and smaller; the check is
    appended as stage `compact`."""
    transcript, pruned, result, before = state.transcript, state.pruned, state.result, state.before
    fitted = state.fitted or unsummarized(state)
    report = fitted.report
    not_summarized: str | None = None
    if fitted.attempts and result.records is pruned.records:
        not_summarized = stage_reason(result) or "the summary changed nothing"
    kept_input: str | None = None
    if result.records is not transcript.records:
        kept_input = _worse(transcript, result, before, report)
    final = result
    if kept_input is not None:
        final = transcript.evolve(stats=result.stats)
        report = before
    summarized = fitted.attempts > 0 and kept_input is None and result.records is not pruned.records
    check = CompactCheck(
        tokens_before=before.tokens,
        tokens_after=report.tokens,
        tokens_pruned=state.counted[0].tokens if state.counted else None,
        method=report.method,
        threshold=report.threshold,
        threshold_spec=report.threshold_spec,
        max_tokens=report.max_tokens,
        summarized=summarized,
        reason=state.reason,
        keep_recent_tokens=fitted.keep,
        attempts=fitted.attempts,
        kept_input=kept_input,
        over=tuple(over_limits(report)),
        not_summarized=not_summarized,
        cut_turn=fitted.cut_turn,
        summary_tokens=fitted.summary_tokens,
        smaller_summary_total=fitted.smaller_total if kept_input is None else None,
    )
    # `estimate` of a transcript already read counts every figure
    assert report.context_messages is not None and before.context_messages is not None
    messages_after = report.context_messages
    if kept_input is not None:
        messages_after = len(get_dialect(transcript.format).context(final))
    stats = StageStats(
        stage="compact",
        method=report.method,
        tokens_before=before.tokens,
        tokens_after=report.tokens,
        records_before=len(transcript.records),
        records_after=len(final.records),
        messages_before=before.context_messages,
        messages_after=messages_after,
        seconds=time.perf_counter() - state.started,
        changed=final.records is not transcript.records,
        result=check,
    )
    return dataclasses.replace(state, result=final.evolve(stats=(*final.stats, stats)))


_STEPS: tuple[Callable[[_Round], _Round], ...] = (_prune_step, _summarize_step, _check_step)
"""The steps of one round of `compact`, in order."""


def _compact_once(
    transcript: Transcript,
    options: CompactOptions,
    summarizer: Summarizer,
    counter: TokenCounter,
) -> Transcript:
    """One round of `compact`: `_STEPS` folded over the input."""
    started = time.perf_counter()
    measure = _Measure(options, counter)
    state = _Round(
        transcript,
        options,
        summarizer,
        counter,
        measure,
        started,
        before=measure(transcript),
        result=transcript,
        pruned=transcript,
    )
    for step in _STEPS:
        state = step(state)
    return state.result


def _worse(
    before: Transcript, after: Transcript, counted_before: EstimateReport, counted: EstimateReport
) -> str | None:
    """Why `after` must not replace `before` (None when it may)."""
    if counted.tokens >= counted_before.tokens:
        return (
            f"the result would not be smaller ({counted.tokens:,} tokens, "
            f"{counted_before.tokens:,} before)"
        )
    errors = validate(after).errors
    if errors and len(errors) > len(validate(before).errors):
        first = errors[0]
        return f"the result would not validate (line {first.line}: {first.code}: {first.message})"
    return read_back_problem(before, after)
