"""Counting a transcript's context the way `compactcli estimate` does, for the evaluation.

`exact_counter(format)` is the exact counter (tiktoken `o200k_base`, loaded offline, with the
format's fixed costs per message, tool block and image, as `get_counter("exact")` builds it; a
`CachingCounter`, which remembers the count of each text it has counted);
`count(transcript, counter)` is the context size `compactcli estimate --method exact` (or
`heuristic`) reports. Every token figure of the evaluation (sizes, budgets, compression) comes
from here, so "10% of the input" means the same number to the strategies, the budget check and
the report.
"""

from __future__ import annotations

from collections.abc import Callable

from compactcli.estimate import EstimateOptions, estimate
from compactcli.tokens import (
    HeuristicCounter,
    TiktokenCounter,
    density_for,
    encoding_for_model,
    get_counter,
)
from compactcli.transcript import Transcript

Counter = TiktokenCounter | HeuristicCounter
CACHE_LIMIT = 500_000  # texts remembered before the memory is cleared


class CachingCounter(TiktokenCounter):
    """`TiktokenCounter` that remembers the count of every text it has counted."""

    def load(self) -> Callable[[str], int]:
        if self._counter is None:
            inner = super().load()
            cache: dict[str, int] = {}

            def counted(text: str) -> int:
                found = cache.get(text)
                if found is None:
                    if len(cache) >= CACHE_LIMIT:
                        cache.clear()
                    found = cache[text] = inner(text)
                return found

            self._counter = counted
        return self._counter


def exact_counter(format: str) -> Counter:
    """The exact (o200k) counter for transcripts of `format`."""
    return CachingCounter(encoding_for_model(None), costs=density_for(None, format).costs)


def heuristic_counter(format: str) -> Counter:
    """The heuristic counter `compactcli estimate --method heuristic` uses for `format`."""
    return get_counter("heuristic", format=format)


def count(transcript: Transcript, counter: Counter) -> int:
    """The context's tokens as `compactcli estimate` counts them with `counter`'s method."""
    method = "exact" if counter.method == "exact" else "heuristic"
    return estimate(transcript, EstimateOptions(method=method), counter=counter).tokens
