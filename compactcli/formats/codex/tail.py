"""Whether the last records of a Codex rollout decide its last usage anchor.

`tail_check(records, streamer, view, first)` is the format's `TailCheck`: `records` are the
last records of a rollout, read by the dialect's streamer as a rollout of their own, `view` what
it made of them and `first` the record of the first item of the response the last usage anchor
measured (None: no usage). They decide the whole rollout's figures when they hold no `compacted`
line and no rollback (so the history after `first` is their items, appended in order), the
`token_count` event before the last one that counts is among them (Codex writes a request's
figures twice; the second is left out), the window Codex recorded is among them, and an item the
model did not write comes before `first` (so the response starts among them). A compaction or a
rollback: the file is read forward; the rest missing: read further back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from compactcli.formats.base import StreamedView, Streamer, TailVerdict


def _counts(raw: Mapping[str, Any]) -> bool:
    """A `token_count` event whose `info` the dialect's usage view compares with the next."""
    if raw.get("type") != "event_msg":
        return False
    payload = raw.get("payload")
    if not isinstance(payload, dict) or payload.get("type") != "token_count":
        return False
    info = payload.get("info")
    return isinstance(info, dict) and isinstance(info.get("last_token_usage"), dict)


def tail_check(
    records: Sequence[Mapping[str, Any]],
    streamer: Streamer,
    view: StreamedView,
    first: int | None,
) -> TailVerdict:
    """The `TailCheck` of Codex rollouts (see the module)."""
    for raw in records:
        kind = raw.get("type")
        if kind == "compacted":
            return TailVerdict.no("a compacted line in the records read")
        payload = raw.get("payload")
        rollback = isinstance(payload, dict) and payload.get("type") == "thread_rolled_back"
        if kind == "event_msg" and rollback:
            return TailVerdict.no("a rollback in the records read")
    if first is None:
        return TailVerdict.need("no usage in the records read")
    if view.context_window is None:
        return TailVerdict.need("no context window recorded in the records read")
    last = view.usage[-1].index
    if not any(_counts(records[i]) for i in range(last)):
        return TailVerdict.need("the token count before the last one is not read")
    if not any(m.role != "assistant" and m.index < first for m in view.messages):
        return TailVerdict.need("the last response may start before the records read")
    return TailVerdict.yes()
