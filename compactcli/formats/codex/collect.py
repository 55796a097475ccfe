"""What of a Codex rollout `compactcli gc` keeps: what Codex replays on resume, and the metadata.

`collect(transcript)` returns the records of a new rollout file. Codex replays a rollout in
order, and a `compacted` line that carries a `replacement_history` replaces the whole history
the lines before it built (FORMATS.md §2.3), so of the lines before the last such compaction
only those Codex still reads on resume, and lines of types it does not know, are kept; every
line from the compaction on is kept, and a rollout with no such compaction keeps every line."""

from __future__ import annotations

from compactcli.transcript import Record, Transcript

REPLACED_TYPES = frozenset({"response_item", "event_msg", "compacted", "turn_context"})
"""Line types whose lines before the last replacing compaction gc leaves out (the last
`turn_context` among them excepted)."""


def _replaces(record: Record) -> bool:
    payload = record.get("payload")
    return (
        record.get("type") == "compacted"
        and isinstance(payload, dict)
        and isinstance(payload.get("replacement_history"), list)
    )


KEPT_EVENTS = frozenset({"user_message"})
"""`event_msg` payload types gc keeps before the last replacing compaction."""


def _kept_event(record: Record) -> bool:
    payload = record.get("payload")
    return isinstance(payload, dict) and payload.get("type") in KEPT_EVENTS


def collect(transcript: Transcript) -> list[Record]:
    """The records of `transcript` a collected rollout keeps.

    Nothing before the last `compacted` line that carries a `replacement_history` is needed to
    rebuild the model's context, so before it only these are kept: the `session_meta` line, the
    last `turn_context` before that compaction (the settings in force), the `user_message`
    events (the user's turns: Codex reads from them what the session was told before, and
    renders the context it adds on resume from that), and every line of a type it does not know
    (passed through). The other `response_item`, `event_msg`, `compacted` and `turn_context`
    lines before it (the model's history the compaction replaced, and the UI events of that
    history) are dropped. Every line from the compaction on is kept; a rollout with no such
    compaction keeps every line.
    """
    records = transcript.records
    cut = next((i for i in range(len(records) - 1, -1, -1) if _replaces(records[i])), None)
    if cut is None:
        return list(records)
    settings = next(
        (i for i in range(cut - 1, -1, -1) if records[i].get("type") == "turn_context"), None
    )
    return [
        record
        for i, record in enumerate(records)
        if i >= cut
        or i == settings
        or (record.is_object and record.get("type") not in REPLACED_TYPES)
        or (record.get("type") == "event_msg" and _kept_event(record))
    ]
