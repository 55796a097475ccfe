"""Making a summary fit: the kept tail, the cut and the summary size that bring a result in limits.

`summarize_to_fit(state)` runs the summarize stage on a round's pruned transcript (`FitState`,
from `compactcli.stages.compact`) and, with `fit`, tries again with other kept tails, cuts and
summary sizes until the result is within the threshold and the budget, or no try comes nearer;
it returns a `Fitted`: the summary used, its count, and what was tried. Tries are cheap without a
model, so a model is asked once, with what the extractive summary fitted with. `over_limits`
and `target_tokens` read a count against the limits; `summary_details`, `summarize_results` and
`stage_reason` read what the summarize stages of a result did."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from compactcli.estimate import EstimateReport
from compactcli.stages.summarize import (
    MAX_SUMMARY_TOKENS,
    MIN_SUMMARY_TOKENS,
    SummarizeOptions,
    SummarizeResult,
    SummaryInfo,
)
from compactcli.summarizers import Summarizer, get_summarizer
from compactcli.transcript import Transcript

__all__ = [
    "FIT_ATTEMPTS",
    "FitState",
    "Fitted",
    "Summaries",
    "over_limits",
    "stage_reason",
    "summarize_results",
    "summarize_to_fit",
    "summary_details",
    "target_tokens",
    "unsummarized",
]

FIT_ATTEMPTS = 4
"""How many smaller kept tails `fit` tries after the first summary."""

SHORTFALL_ROOM = 2
"""A result still over its budget after fitting has its summary made with this many times the
room (`_shortfall`)."""

REFILL_MIN_ROOM = 200
REFILL_ATTEMPTS = 2
"""A fitted result under its budget by this many tokens or more (and a tenth of the budget) has
its kept tail grown into the room, at most `REFILL_ATTEMPTS` times (`_refill`)."""


class FitOptions(Protocol):
    """What fitting reads of `compact`'s options."""

    @property
    def fit(self) -> bool: ...

    @property
    def max_tokens(self) -> int | None: ...

    @property
    def summarize(self) -> SummarizeOptions: ...


class FitState(Protocol):
    """A round of `compact` as fitting sees it: the pruned transcript, the options, the stage to
    run on it and the count to judge by."""

    @property
    def options(self) -> FitOptions: ...

    @property
    def pruned(self) -> Transcript: ...

    @property
    def summarizer(self) -> Summarizer: ...

    def summary(self, options: SummarizeOptions) -> Transcript:
        """The summarize stage run on the pruned transcript with `options`."""
        ...

    def count(self, transcript: Transcript) -> EstimateReport:
        """The context count of `transcript` (as `compactcli estimate` makes it)."""
        ...

    def after_prune(self) -> EstimateReport:
        """The pruned transcript's count."""
        ...

    def with_summarizer(self, summarizer: Summarizer) -> FitState:
        """The same round, summarized by `summarizer`."""
        ...

    def with_summarize(self, options: SummarizeOptions) -> FitState:
        """The same round, with these options of the summarize stage."""
        ...


@dataclass(frozen=True, slots=True)
class Summaries:
    """What the summaries in a result (one per round of `compact`) say together."""

    warnings: tuple[str, ...]  # each once, in order
    asked_a_model: bool  # whether a model was asked for any of them


def summary_details(result: Transcript) -> Summaries:
    """The warnings of the summaries in `result`, and whether a model was asked for any."""
    warnings: list[str] = []
    model = False
    for stage in summarize_results(result):
        if stage.summary is not None:
            warnings.extend(w for w in stage.summary.warnings if w not in warnings)
            model = model or stage.summary.asked_a_model
    return Summaries(tuple(warnings), model)


def over_limits(report: EstimateReport) -> list[tuple[str, int, int]]:
    """What `report` is over that compaction should fix: the threshold, the budget."""
    return [item for item in report.over if item[0] in ("threshold", "budget")]


def target_tokens(report: EstimateReport) -> int:
    """The largest count that is under the threshold and within the budget."""
    largest = report.threshold - 1
    if report.max_tokens is not None:
        largest = min(largest, report.max_tokens)
    return max(0, largest)


@dataclass(frozen=True, slots=True)
class Fitted:
    """What `summarize_to_fit` made and used."""

    result: Transcript
    report: EstimateReport  # the result's count
    keep: int  # the kept tail it used
    attempts: int  # summaries made
    cut_turn: bool  # whether the current turn could be cut
    summary_tokens: int | None  # the summary budget, when it was lowered or raised
    smaller_total: int | None  # the count a smaller summary gave, when it was still over


def unsummarized(state: FitState) -> Fitted:
    """No summary made: the pruned transcript, with the options' kept tail."""
    options = state.options.summarize
    return Fitted(
        state.pruned,
        state.after_prune(),
        options.keep_recent_tokens,
        0,
        options.cut_turn,
        None,
        None,
    )


def summarize_to_fit(state: FitState) -> Fitted:
    """The summary of the pruned transcript, made to fit its limits with `fit`: by a model,
    `_fit_for_a_model`; else `_fit`.

    With `fit`, the summary is made again with smaller kept tails while the result is over the
    threshold or the budget, the current turn cut when that comes nearer, a smaller or a
    roomier summary when no tail is enough, and the tail grown back into room a budget leaves.
    """
    if state.options.fit and state.summarizer.name == "llm":
        return _fit_for_a_model(state)
    return _fit(state)


def _fit_for_a_model(state: FitState) -> Fitted:
    """The summary a model writes, asked for once: the kept tail, the cut and the summary size
    are those the extractive summary fits with (`_fit`, whose tries cost a few milliseconds
    where each of a model's costs seconds and money). When the model's summary leaves the result
    over the limits where the extractive one fit (it wrote more), the tries go on with the model
    from that tail; when the extractive summary summarized nothing, neither does the model."""
    sized = _fit(state.with_summarizer(get_summarizer("extractive")))
    if sized.result.records is state.pruned.records:
        return _fit(state)
    summary_options = dataclasses.replace(
        state.options.summarize,
        keep_recent_tokens=sized.keep,
        cut_turn=sized.cut_turn,
        summary_tokens=sized.summary_tokens,
    )
    asked = state.with_summarize(summary_options)
    result = asked.summary(summary_options)
    if result.records is state.pruned.records:
        return _fit(asked)
    report = state.count(result)
    attempts = sized.attempts + 1
    if over_limits(report) and not over_limits(sized.report):
        more = _fit(asked)
        return dataclasses.replace(more, attempts=attempts + more.attempts)
    return Fitted(result, report, sized.keep, attempts, sized.cut_turn, sized.summary_tokens, None)


def _fit(state: FitState) -> Fitted:
    """The summary of the pruned transcript, made again with smaller tails while it is over
    (with `fit`, `_fitted`). With a budget (`max_tokens`), the current turn may be cut from the
    first try (as `cut_turn`): a turn larger than the kept tail may grow is summarized with the
    rest, its prompt quoted, rather than leave the summary of everything before it the budget's
    crumbs; when that result is over the budget all the same, the one with the turn kept whole
    is used if it comes nearer (a quoted prompt can cost more than it frees)."""
    options = state.options
    if not (options.fit and options.max_tokens is not None) or options.summarize.cut_turn:
        return _fitted(state, options.summarize.cut_turn)
    cut = _fitted(state, True)
    if not over_limits(cut.report):
        return cut
    whole = _fitted(state, False)
    attempts = cut.attempts + whole.attempts
    if whole.report.tokens < cut.report.tokens:
        return dataclasses.replace(whole, attempts=attempts)
    return dataclasses.replace(cut, attempts=attempts)


def _fitted(state: FitState, cut_turn: bool) -> Fitted:
    """The summary of the pruned transcript, made again with smaller tails while it is over
    (with `fit`), the current turn allowed to be cut with `cut_turn`.

    When no kept tail brings it under and `cut_turn` is not set, the same is tried once more
    with the current turn allowed to be cut (its prompt quoted in the summary), kept when it
    brings the result within its limits or nearer to them. When the result is still over and
    no summary budget was given, once more with the summary's size lowered by the excess (to
    `MIN_SUMMARY_TOKENS` at least), kept only when that brings the result within its limits: a
    summary is never made poorer for nothing (the count it gave is returned, to say so), and
    when that leaves it over, once more with twice the room (`_shortfall`). When nothing was
    summarized, the result carries the reason of the last attempt.
    """
    options, pruned = state.options, state.pruned
    result, report, keep, attempts = _fit_tail(
        state, dataclasses.replace(options.summarize, cut_turn=cut_turn)
    )
    if options.fit and over_limits(report) and not cut_turn and not _pinned(result):
        other = _fit_tail(state, dataclasses.replace(options.summarize, cut_turn=True))
        attempts += other[3]
        if other[0].records is not pruned.records and _closer(other[1], report):
            result, report, keep, _ = other
            cut_turn = True
        elif result.records is pruned.records and other[0].records is pruned.records:
            result = other[0]  # nothing summarized either way: why the last resort failed
    summary_tokens: int | None = None
    smaller_total: int | None = None
    used = _summary_size(result) if result.records is not pruned.records else None
    if options.fit and over_limits(report) and options.summarize.summary_tokens is None and used:
        target = target_tokens(report)
        lower = max(MIN_SUMMARY_TOKENS, used - (report.tokens - target) - target // 20)
        if lower < used:
            candidate = state.summary(
                dataclasses.replace(
                    options.summarize,
                    keep_recent_tokens=keep,
                    cut_turn=cut_turn,
                    summary_tokens=lower,
                )
            )
            attempts += 1
            if candidate.records is not pruned.records:
                counted = state.count(candidate)
                if not over_limits(counted):
                    result, report, summary_tokens = candidate, counted, lower
                else:
                    smaller_total = counted.tokens
    if options.fit and any(what == "budget" for what, _, _ in over_limits(report)):
        result, report, summary_tokens, more = _shortfall(
            state,
            dataclasses.replace(options.summarize, keep_recent_tokens=keep, cut_turn=cut_turn),
            (result, report, summary_tokens),
        )
        attempts += more
    if options.fit and not over_limits(report) and report.max_tokens is not None:
        result, report, keep, more = _refill(
            state,
            dataclasses.replace(options.summarize, cut_turn=cut_turn),
            (result, report, keep),
        )
        attempts += more
    return Fitted(result, report, keep, attempts, cut_turn, summary_tokens, smaller_total)


def _refill(
    state: FitState,
    summary_options: SummarizeOptions,
    fitted: tuple[Transcript, EstimateReport, int],
) -> tuple[Transcript, EstimateReport, int, int]:
    """The fitted summary with the room a budget leaves given back to the kept tail. Smaller
    tails are tried in steps, and the step that brought the result within the budget can leave
    much of it unused: the tail is grown by that room (less a margin), at most `REFILL_ATTEMPTS`
    times, each result kept when it stays within the limits and is larger. Not for a summary a
    model wrote (each try would ask it again)."""
    result, report, keep = fitted
    attempts = 0
    if result.records is state.pruned.records or summary_details(result).asked_a_model:
        return result, report, keep, attempts
    most = state.options.summarize.keep_recent_tokens
    while attempts < REFILL_ATTEMPTS and keep < most:
        target = target_tokens(report)
        room = target - report.tokens - target // 20
        if room < max(REFILL_MIN_ROOM, target // 10):
            break
        larger = min(most, keep + room)
        candidate = state.summary(dataclasses.replace(summary_options, keep_recent_tokens=larger))
        attempts += 1
        if candidate.records is state.pruned.records:
            break
        counted = state.count(candidate)
        if over_limits(counted) or counted.tokens <= report.tokens:
            break
        result, report, keep = candidate, counted, larger
    return result, report, keep, attempts


def _shortfall(
    state: FitState,
    summary_options: SummarizeOptions,
    fitted: tuple[Transcript, EstimateReport, int | None],
) -> tuple[Transcript, EstimateReport, int | None, int]:
    """The fitted summary made again with `SHORTFALL_ROOM` times its size when no kept tail and
    no smaller summary brought the result within the budget (`max_tokens`; not the threshold
    alone, which a budget the result meets may be under): what compaction may not remove
    (instructions, the current turn, the least summary) is over it already, and the tokens a
    small summary saves buy nothing but the facts it cuts (a skill's rules and names, the
    user's rules at their shortest). Only for a summary of the default size made without a
    model (each try would ask it again), and never larger than `MAX_SUMMARY_TOKENS`."""
    result, report, summary_tokens = fitted
    used = _summary_size(result) if result.records is not state.pruned.records else None
    if (
        not used
        or summary_options.summary_tokens is not None
        or summary_tokens is not None
        or summary_details(result).asked_a_model
    ):
        return result, report, summary_tokens, 0
    roomy = min(MAX_SUMMARY_TOKENS, used * SHORTFALL_ROOM)
    if roomy <= used:
        return result, report, summary_tokens, 0
    candidate = state.summary(dataclasses.replace(summary_options, summary_tokens=roomy))
    larger = _summary_size(candidate) if candidate.records is not state.pruned.records else None
    if larger is None or larger <= used:  # the summary held everything already
        return result, report, summary_tokens, 1
    return candidate, state.count(candidate), roomy, 1


def _closer(candidate: EstimateReport, current: EstimateReport) -> bool:
    """Whether `candidate` is within the limits, or at least nearer to them than `current`."""
    return not over_limits(candidate) or candidate.tokens < current.tokens


def _fit_tail(
    state: FitState, summary_options: SummarizeOptions
) -> tuple[Transcript, EstimateReport, int, int]:
    """The summary made with smaller kept tails while it is over (with `fit`): the smallest; when
    no tail summarized anything, the refusal of the smallest tail tried (its reason is the one
    reported)."""
    pruned = state.pruned
    keep = summary_options.keep_recent_tokens
    result = state.summary(summary_options)
    report = state.count(result) if result.records is not pruned.records else state.after_prune()
    attempts = 1
    best = (result, report, keep)
    while state.options.fit and over_limits(report) and attempts <= FIT_ATTEMPTS and keep > 0:
        target = target_tokens(report)
        tail = _tail_tokens(result) if result.records is not pruned.records else None
        base = min(keep, tail if tail is not None else report.tokens)
        smaller = max(0, base - (report.tokens - target) - target // 10)
        keep = smaller if smaller < keep else keep // 2
        candidate = state.summary(dataclasses.replace(summary_options, keep_recent_tokens=keep))
        attempts += 1
        if candidate.records is pruned.records:
            if best[0].records is pruned.records:  # nothing summarized yet: keep the smallest
                best = (candidate, best[1], keep)  # tail's reason, with the count unchanged
            continue
        result, report = candidate, state.count(candidate)
        if report.tokens < best[1].tokens:
            best = (result, report, keep)
    result, report, keep = best
    return result, report, keep, attempts


def summarize_results(result: Transcript) -> Iterator[SummarizeResult]:
    """What each summarize stage `result` went through did, oldest first."""
    for stats in result.stats:
        if isinstance(stats.result, SummarizeResult):
            yield stats.result


def _last_summarize(result: Transcript) -> SummarizeResult | None:
    """What the last summarize stage of `result` did."""
    for stats in reversed(result.stats):
        if isinstance(stats.result, SummarizeResult):
            return stats.result
    return None


def _last_summary(result: Transcript) -> SummaryInfo | None:
    """The summary the last summarize stage of `result` made (used or not), if it made one."""
    last = _last_summarize(result)
    return last.summary if last is not None else None


def _summary_size(result: Transcript) -> int | None:
    """The tokens of the summary the last summarize stage of `result` wrote."""
    summary = _last_summary(result)
    return summary.summary_tokens if summary is not None else None


def _pinned(result: Transcript) -> bool:
    """Whether the last summarize stage of `result` cut the current turn (or tried to): the
    stage does so when nothing else could be summarized, and `cut_turn` would change nothing."""
    summary = _last_summary(result)
    return summary is not None and summary.pinned_prompt is not None


def _tail_tokens(result: Transcript) -> int | None:
    """The tokens of the tail the last summarize stage of `result` kept."""
    summary = _last_summary(result)
    return summary.kept.tail_tokens if summary is not None else None


def stage_reason(result: Transcript) -> str | None:
    """Why the last summarize stage of `result` gave its input back unchanged."""
    last = _last_summarize(result)
    return (last.reason or None) if last is not None else None
