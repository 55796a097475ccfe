"""The model requests a piece of work sent, counted where it runs.

`counting_calls()` opens a count for the work inside it (one file's compaction) and yields it;
`note_call()` adds one request to the count open in the current context, if any. The LLM
summarizer notes every request it sends, retries included; a summary the cache answers sends
none. Each thread (and each worker process) has its own context, so files compacted side by
side count their own requests.

The count is what a run cost. It differs from the `llm_calls` a summary records (in its
stats and boundary), which are the calls behind that summary, whichever run made them, and
leave out attempts whose summary was not used.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass

__all__ = ["CallCount", "counting_calls", "note_call"]


@dataclass(slots=True)
class CallCount:
    """How many model requests were sent."""

    calls: int = 0


_OPEN: ContextVar[CallCount | None] = ContextVar("compactcli_call_count", default=None)


@contextlib.contextmanager
def counting_calls() -> Iterator[CallCount]:
    """Count the requests sent inside the block (an enclosing count does not see them)."""
    count = CallCount()
    token = _OPEN.set(count)
    try:
        yield count
    finally:
        _OPEN.reset(token)


def note_call() -> None:
    """One request sent: add it to the open count."""
    count = _OPEN.get()
    if count is not None:
        count.calls += 1
