"""A real session cut into parts for its drift rounds: where to cut, and growing it back.

A real session cannot be continued, so its own later records are the new turns of its drift
rounds: the first part is compacted, the next part's records are appended byte for byte to that
output, and so on. `plan_parts` chooses the cuts, `prefix` and `extend` build a round's input,
`new_errors` and `context_problem` say whether a grown transcript is fit to compact against the
raw session at the same point, and `probes_seen` says which probes a round is scored on.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from compactcli.evaluation.probes import Probe
from compactcli.formats import get_dialect
from compactcli.formats.base import Finding, atomic_units
from compactcli.jsonl import dumps
from compactcli.stages.compact import settle
from compactcli.stages.cuts import can_start, is_prompt
from compactcli.transcript import Record, Transcript
from compactcli.validation import validate

CUT_TRIES = 12
"""Candidate cuts validated per part before giving up on it."""


@dataclass(frozen=True, slots=True)
class Parts:
    """Where each part after the first starts: record indexes, and their input lines."""

    starts: tuple[int, ...]
    lines: tuple[int, ...]


def _size(transcript: Transcript, index: int) -> int:
    record = transcript.records[index]
    return len(record.line) if record.line is not None else len(dumps(record.raw))


def _error_codes(transcript: Transcript) -> set[str]:
    return {f.code for f in validate(transcript).errors}


def prefix(transcript: Transcript, end: int) -> Transcript:
    """The session as it stood before record `end` (its first `end` records, as read)."""
    if end >= len(transcript.records):
        return transcript
    records = transcript.records[:end]
    digest = hashlib.sha256()
    for record in records:
        digest.update(record.line if record.line is not None else dumps(record.raw))
        digest.update(record.eol or b"\n")
    return settle(transcript.evolve(records=records, sha256=digest.hexdigest()))


def _candidates(transcript: Transcript) -> list[tuple[int, int]]:
    """(record index, 0 for a user prompt or 1 for another turn start) of every valid cut."""
    count = len(transcript.records)
    messages = get_dialect(transcript.format).messages(transcript)
    units = atomic_units(messages)
    inside = [0] * (count + 2)
    for unit in units:
        indexes = [messages[p].index for p in unit]
        low, high = min(indexes), max(indexes)
        if high > low:  # no cut before records low+1 .. high
            inside[low + 1] += 1
            inside[high + 1] -= 1
    blocked: set[int] = set()
    running = 0
    for boundary in range(count + 1):
        running += inside[boundary]
        if running > 0:
            blocked.add(boundary)
    found: dict[int, int] = {}
    for unit in units:
        message = messages[unit[0]]
        index = message.index
        if index <= 0 or index in blocked or message.synthetic:
            continue
        if is_prompt(message):
            found[index] = 0
        elif can_start(message):
            found.setdefault(index, 1)
    return sorted(found.items())


def plan_parts(transcript: Transcript, parts: int) -> Parts | str:
    """Where to cut `transcript` into `parts` pieces, or why not.

    The pieces are of about equal size in bytes, cut at record boundaries where a cut is valid:
    never inside an atomic unit (one streamed response, a tool call and its result:
    `compactcli.formats.base.atomic_units` over every message in file order), preferably right
    before the record of a user prompt (`cuts.is_prompt`) near each target, else before a
    message a turn may start with (`cuts.can_start`), and only where the records before the cut
    validate with no error code that the whole file does not have."""
    if parts < 2:
        return Parts((), ())
    count = len(transcript.records)
    offsets = [0]
    for index in range(count):
        offsets.append(offsets[-1] + _size(transcript, index))
    total = offsets[-1]
    candidates = _candidates(transcript)
    allowed = _error_codes(transcript)
    starts: list[int] = []
    for k in range(1, parts):
        target = total * k / parts
        window = total / (2 * parts)
        floor = starts[-1] if starts else 0
        ranked = sorted(
            (abs(offsets[index] - target) > window, kind, abs(offsets[index] - target), index)
            for index, kind in candidates
            if index > floor
        )
        chosen: int | None = None
        for *_, index in ranked[:CUT_TRIES]:
            if not _error_codes(prefix(transcript, index)) - allowed:
                chosen = index
                break
        if chosen is None:
            return f"no valid cut near {k}/{parts} of the file"
        starts.append(chosen)
    return Parts(tuple(starts), tuple(transcript.records[i].lineno for i in starts))


def _append(previous: Transcript, added: Sequence[Record]) -> Transcript:
    records = (*previous.records, *added)
    return settle(previous.evolve(records=records, stats=()))


def extend(
    previous: Transcript, transcript: Transcript, start: int, end: int
) -> tuple[Transcript, bool]:
    """`previous` with records `[start, end)` of `transcript` appended, and whether the first
    linked record was re-linked onto `previous`'s last context message.

    The records are appended byte for byte, as writing them after `previous` and reading the
    file back would give. In formats whose records name their parent (the dialect's
    `link_keys`: Claude Code `parentUuid`, pi `parentId`), the first appended record names the
    record before it in the session; when the loader no longer reaches that record after a
    compaction (Claude Code drops every record before its last compact boundary that is not in
    the preserved segment, such as a `system` record after the last kept message), the
    appended records would cut the compacted conversation off. That one record is then
    re-linked onto the record the dialect's `append_parent` names (the last message of
    `previous`'s context; pi: the branch's last entry, a compaction entry after that message),
    as the agent links a record it writes after a compaction; it is the only record whose
    bytes change."""
    added = list(transcript.records[start:end])
    grown = _append(previous, added)
    dialect = get_dialect(previous.format)
    keys = dialect.link_keys
    context = dialect.context(previous)
    if keys is None or not context or not _lost(previous, grown):
        return grown, False
    leaf = dialect.append_parent(previous, context)
    for i, record in enumerate(added):
        if isinstance(record.raw, dict) and record.raw.get(keys[1]) is not None:
            if not isinstance(leaf, str) or record.raw[keys[1]] == leaf:
                break
            added[i] = record.with_raw({**record.raw, keys[1]: leaf})
            return _append(previous, added), True
    return grown, False


def _lost(previous: Transcript, grown: Transcript) -> list[int]:
    """Record indexes of `previous`'s context messages that `grown`'s context lacks; none when
    the appended records hold a compaction of the agent's own (it replaces what came before)."""
    dialect = get_dialect(previous.format)
    if len(dialect.compactions(grown)) > len(dialect.compactions(previous)):
        return []
    kept = {m.index for m in dialect.context(grown)}
    return sorted({m.index for m in dialect.context(previous)} - kept)


def context_problem(
    previous: Transcript, grown: Transcript, raw: Transcript, start: int
) -> str | None:
    """What is wrong with `grown`'s context, or None; `grown` is `previous` with the records
    of `raw` from `start` on appended.

    Wrong: `previous`'s context messages are not all in it (the conversation cut off; not
    asked when the appended records hold a compaction the agent made itself, which replaces
    the context before it as it did in the session), or the appended records it shows are not
    those `raw`'s context shows (an agent's compaction that named the records it keeps by
    their position in the file would keep others once the records before it changed)."""
    lost = _lost(previous, grown)
    if lost:
        return (
            f"cuts the compacted conversation off ({len(lost)} of its context messages, from "
            f"line {lost[0] + 1}, are no longer in the context)"
        )
    dialect = get_dialect(grown.format)
    offset = len(previous.records) - start
    expected = {m.index + offset for m in dialect.context(raw) if m.index >= start}
    shown = {m.index for m in dialect.context(grown) if m.index >= len(previous.records)}
    if shown != expected:
        return (
            f"shows {len(shown)} of the appended messages in its context where the session "
            f"showed {len(expected)}"
        )
    return None


def new_errors(grown: Transcript, raw: Transcript) -> list[Finding]:
    """Errors of `grown` whose code the raw session `raw` does not have."""
    allowed = _error_codes(raw)
    return [f for f in validate(grown).errors if f.code not in allowed]


def probes_seen(probes: Sequence[Probe], line: int | None) -> list[Probe]:
    """The probes a round that has seen input lines before `line` is scored on.

    Those whose `origin.line` comes before `line` (every probe when `line` is None: the last
    round; a probe with no line, or line 0, only then), every decoy, and a superseded value
    only once the value that replaced it is seen too (until then it is current)."""
    seen = {
        p.id
        for p in probes
        if line is None or (p.origin.line is not None and 0 < p.origin.line < line)
    }
    found: list[Probe] = []
    for probe in probes:
        if probe.category == "decoy":
            found.append(probe)
        elif probe.id not in seen:
            continue
        elif probe.category == "superseded" and probe.superseded_by is not None:
            if probe.superseded_by in seen:  # before its replacement, the old value is current
                found.append(probe)
        else:
            found.append(probe)
    return found
