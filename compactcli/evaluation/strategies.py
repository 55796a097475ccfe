"""The compaction strategies the evaluation compares, each aimed at a token budget.

`STRATEGIES` holds every `Strategy` by name: `drop-oldest`, `prune`, `head-tail`, `extractive`,
`compact` (the default pipeline, the one the gates apply to: `GATED`) and `llm-replay`. Each
compacts a transcript to a target context size in exact o200k tokens, and those that have a
default run also compact with compactcli's built-in settings and no token budget; all are scored
in the same harness, on the same probes. A strategy that cannot reach the budget returns its
smallest result: budget compliance is measured, not assumed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from compactcli.compact_file import DEFAULTS, options_from_settings
from compactcli.evaluation.measure import Counter, count
from compactcli.formats import get_dialect
from compactcli.stages.compact import compact
from compactcli.stages.prune import PruneOptions, prune
from compactcli.summarizers import Summarizer, SummaryRequest, SummaryResult, get_summarizer
from compactcli.summarizers.facts import Facts
from compactcli.tokens import get_counter
from compactcli.transcript import Transcript

DROPPED = "Earlier turns were dropped to fit the context budget; they are not summarized."
TRUNCATED = "[… {chars:,} characters of tool output truncated …]"

PRUNE_CHECKS = 4  # prunes tried after the estimate, each one lower while over
TRUNCATE_CHECKS = 4
MARKER_TOKENS = 16  # what the truncation marker costs, about

NO_PRUNE = PruneOptions(tools=frozenset(), dedupe=False, images=False)
"""Prune options that clear nothing (for strategies that must not prune)."""


@dataclass(frozen=True, slots=True)
class Backends:
    """What strategies run with: the exact counter, and the LLM summarizer when replaying."""

    exact: Counter
    llm: Summarizer | None = None


Run = Callable[[Transcript, int, Backends], Transcript]
RunDefault = Callable[[Transcript, Backends], Transcript]


@dataclass(frozen=True, slots=True)
class Strategy:
    """One strategy: `run(transcript, budget, backends) -> transcript`, where `budget` is the target
    context size in exact o200k tokens (as `compactcli estimate --method exact` counts).

    The `default` budget (`compactcli.evaluation.budgets.DEFAULT`) sets no token budget: a
    strategy that has a default (`run_default`) runs as `compactcli compact --force` does with
    its built-in settings (the heuristic count, the default kept tail, no `--max-tokens`):
    `compact`, and `extractive` and `llm-replay` with their summarizer and pruning choices.
    `drop-oldest`, `prune` and `head-tail` are defined by a budget and have no default run.
    """

    name: str
    description: str
    summarizes: bool  # whether its output has a summary to score on its own
    run: Run
    run_default: RunDefault | None = None  # the run with no token budget, when it has one


class DropSummarizer:
    """A summarizer that keeps nothing: the summary only says turns were dropped."""

    @property
    def name(self) -> str:
        return "none"

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        return SummaryResult(text=DROPPED, summarizer="none", facts=Facts())


def _pipeline(
    transcript: Transcript,
    budget: int,
    backends: Backends,
    summarizer: Summarizer,
    *,
    pruning: bool,
    keep: int | None = None,
) -> Transcript:
    settings = {**DEFAULTS, "max_tokens": budget, "method": "exact"}
    options = options_from_settings(settings)
    if not pruning:
        options = dataclasses.replace(options, prune=NO_PRUNE)
    if keep is not None:
        options = dataclasses.replace(
            options,
            summarize=dataclasses.replace(options.summarize, keep_recent_tokens=keep),
            fit=True,
        )
    return compact(transcript, options, summarizer=summarizer, counter=backends.exact)


def _defaults(transcript: Transcript, summarizer: Summarizer, *, pruning: bool) -> Transcript:
    """`compactcli compact --force` with every other setting at its default."""
    options = options_from_settings({**DEFAULTS, "force": True})
    if not pruning:
        options = dataclasses.replace(options, prune=NO_PRUNE)
    counter = get_counter(
        DEFAULTS["method"],
        model=get_dialect(transcript.format).model(transcript),
        format=transcript.format,
    )
    return compact(transcript, options, summarizer=summarizer, counter=counter)


def extractive_default(transcript: Transcript, backends: Backends) -> Transcript:
    return _defaults(transcript, get_summarizer("extractive"), pruning=False)


def compact_default(transcript: Transcript, backends: Backends) -> Transcript:
    return _defaults(transcript, get_summarizer("extractive"), pruning=True)


def llm_default(transcript: Transcript, backends: Backends) -> Transcript:
    if backends.llm is None:
        raise ValueError("the llm-replay strategy needs an LLM summarizer (a replay server)")
    return _defaults(transcript, backends.llm, pruning=True)


def drop_oldest(transcript: Transcript, budget: int, backends: Backends) -> Transcript:
    """`drop-oldest`: the newest turns that fit, the rest dropped with no summary (a one-line
    marker, `DROPPED`, in the format's summary slot says that earlier turns were dropped). Cut
    points are the summarize stage's, so tool calls stay paired and the output stays valid.
    """
    return _pipeline(
        transcript,
        budget,
        backends,
        DropSummarizer(),
        pruning=False,
        keep=max(0, budget - 200),
    )


def extractive(transcript: Transcript, budget: int, backends: Backends) -> Transcript:
    """`extractive`: the summarize stage with the extractive summarizer, no pruning."""
    return _pipeline(transcript, budget, backends, get_summarizer("extractive"), pruning=False)


def default_compact(transcript: Transcript, budget: int, backends: Backends) -> Transcript:
    """`compact`: the default `compactcli compact --max-tokens BUDGET --method exact`: prune, then
    the extractive summary while over the budget, the kept tail fitted to it.
    """
    return _pipeline(transcript, budget, backends, get_summarizer("extractive"), pruning=True)


def llm_replay(transcript: Transcript, budget: int, backends: Backends) -> Transcript:
    """`llm-replay`: the `compact` pipeline with the LLM summarizer, answered from recordings
    (`compactcli.evaluation.replay`); it needs `Backends.llm`.
    """
    if backends.llm is None:
        raise ValueError("the llm-replay strategy needs an LLM summarizer (a replay server)")
    return _pipeline(transcript, budget, backends, backends.llm, pruning=True)


def _result_costs(transcript: Transcript, counter: Counter) -> list[tuple[int, int]]:
    """(characters, tokens) of every tool result on the context view, oldest first."""
    return [
        (len(b.text), counter.block_tokens(b))
        for m in get_dialect(transcript.format).context(transcript)
        if not m.synthetic
        for b in m.blocks
        if b.kind == "tool_result"
    ]


def prune_only(transcript: Transcript, budget: int, backends: Backends) -> Transcript:
    """`prune`: the prune stage alone (clearing old tool output, observation masking): the newest N
    tool results kept whole and the rest cleared, with the largest N that fits.

    tokens(N) grows by about the cost of the N-th newest result; N is estimated from those costs
    and the fully pruned count, then checked by pruning (and lowered while over).
    """
    counter = backends.exact
    costs = [tokens for _, tokens in _result_costs(transcript, counter)]
    if count(transcript, counter) <= budget:
        return transcript

    def pruned(keep: int) -> tuple[Transcript, int]:
        result = prune(transcript, PruneOptions(keep_recent=keep), counter=counter)
        return result, count(result, counter)

    floor, floor_tokens = pruned(0)
    if floor_tokens > budget:
        return floor
    best = floor
    room = budget - floor_tokens
    keep, used = 0, 0
    for tokens in reversed(costs):  # newest first
        if used + tokens > room:
            break
        used += tokens
        keep += 1
    tried: set[int] = set()
    for _ in range(PRUNE_CHECKS):
        if keep == 0 or keep in tried:
            break
        tried.add(keep)
        candidate, tokens = pruned(keep)
        if tokens <= budget:
            best = candidate
            slack = budget - tokens
            while keep < len(costs) and costs[len(costs) - 1 - keep] <= slack:
                slack -= costs[len(costs) - 1 - keep]
                keep += 1  # older results whose cost still fits
            continue
        over = tokens - budget
        while keep > 0 and over > 0:  # give back the newest-kept results' cost
            keep -= 1
            over -= costs[len(costs) - 1 - keep]
    return best


def _truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = limit // 2
    tail = limit - head
    omitted = len(text) - head - tail
    return f"{text[:head]}\n{TRUNCATED.format(chars=omitted)}\n{text[len(text) - tail :]}"


def head_tail_at(transcript: Transcript, limit: int) -> Transcript:
    """Every tool result longer than `limit` characters cut to its head and tail."""
    dialect = get_dialect(transcript.format)
    records = list(transcript.records)
    changed = False
    for message in dialect.context(transcript):
        if message.synthetic:
            continue
        for block in message.blocks:
            if block.kind != "tool_result" or len(block.text) <= limit or block.images:
                continue
            record = records[message.index]
            records[message.index] = dialect.clear_result(
                record, block, _truncate(block.text, limit)
            )
            changed = True
    return transcript.evolve(records=tuple(records)) if changed else transcript


def head_tail(transcript: Transcript, budget: int, backends: Backends) -> Transcript:
    """`head-tail`: every tool result longer than a limit keeps its head and tail around a marker
    (as Codex truncates tool output), with the largest limit (in characters) that fits.

    The limit is estimated from each result's size and cost (a cut result costs its share of the
    characters kept), then corrected by a few secant steps on the measured count; the largest
    limit that fitted is kept.
    """
    counter = backends.exact
    total = count(transcript, counter)
    if total <= budget:
        return transcript
    costs = _result_costs(transcript, counter)
    if not costs:
        return transcript
    fixed = total - sum(tokens for _, tokens in costs)

    def estimated(limit: int) -> float:
        return fixed + sum(
            tokens if chars <= limit else tokens * limit / max(1, chars) + MARKER_TOKENS
            for chars, tokens in costs
        )

    low, high = 0, max(chars for chars, _ in costs)
    while low < high:  # the largest limit whose estimate fits
        middle = (low + high + 1) // 2
        if estimated(middle) <= budget:
            low = middle
        else:
            high = middle - 1
    limit = low
    best: tuple[int, Transcript] | None = None
    tried: set[int] = set()
    for _ in range(TRUNCATE_CHECKS):  # secant steps on the measured count
        if limit in tried:
            break
        tried.add(limit)
        candidate = head_tail_at(transcript, limit)
        tokens = count(candidate, counter)
        if tokens <= budget and (best is None or limit > best[0]):
            best = (limit, candidate)
        slope = sum(t / max(1, c) for c, t in costs if c > limit) or 1.0
        step = (budget - tokens) / slope
        if 0 <= step < max(16.0, limit * 0.01):
            break  # close enough under the budget
        limit = max(0, int(limit + step * (0.97 if step < 0 else 0.9)))
    if best is not None:
        return best[1]
    return head_tail_at(transcript, 0)


STRATEGIES: dict[str, Strategy] = {
    s.name: s
    for s in (
        Strategy("drop-oldest", "drop the oldest turns, no summary", False, drop_oldest),
        Strategy("prune", "clear old tool output only", False, prune_only),
        Strategy("head-tail", "truncate tool output to head and tail", False, head_tail),
        Strategy(
            "extractive",
            "extractive summary, no pruning",
            True,
            extractive,
            extractive_default,
        ),
        Strategy(
            "compact",
            "default compact: prune + extractive summary",
            True,
            default_compact,
            compact_default,
        ),
        Strategy(
            "llm-replay",
            "compact with the LLM summary, replayed",
            True,
            llm_replay,
            llm_default,
        ),
    )
}
GATED = "compact"
"""The strategy the gates apply to: the default `compact`."""

__all__ = [
    "DROPPED",
    "GATED",
    "NO_PRUNE",
    "STRATEGIES",
    "Backends",
    "DropSummarizer",
    "Strategy",
    "count",
    "head_tail_at",
]
