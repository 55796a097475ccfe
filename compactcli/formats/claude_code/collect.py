"""What of a Claude Code session `compactcli gc` keeps: what the CLI loads next, and the metadata.

`collect(transcript, chain)` returns the records of a new session file: the records on the
context chain the loader walks and the metadata records that live outside it, in file order,
each kept record unchanged but for the parent links the records left out make stale, which are
set to what the loader makes of them. Everything else (history before the last boundary, dead
branches, side chains, progress records, file-history snapshots, blank lines, the UI's copy of
each tool result) is left out, so resuming the new file gives the model the same context."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compactcli.formats.claude_code.records import CHAIN_TYPES, LEGACY_TYPES
from compactcli.transcript import Record, Transcript

DROPPED_METADATA = frozenset({"file-history-snapshot"})
"""Metadata records gc leaves out: the undo snapshots of files (the UI's rewind), which the
model never sees."""

UI_ONLY_KEYS = ("toolUseResult",)
"""Keys of a kept record that only the UI reads: the structured copy of a tool's result."""


_NOT_METADATA = CHAIN_TYPES | LEGACY_TYPES | DROPPED_METADATA


def _parent_of(raw: Any) -> Any:
    return raw.get("parentUuid") if isinstance(raw, dict) else None


def collect(transcript: Transcript, chain: Sequence[int]) -> list[Record]:
    """The records of `transcript` a collected session keeps.

    Kept: the records on the context chain (`chain`: from the newest compact boundary, or the
    first record, to the leaf, as the loader walks it) and the metadata records that live
    outside the chain (titles, tags, mode, last prompt, content replacements:
    `METADATA_TYPES`), in file order. Left out: the history before the last boundary, dead
    branches and side chains, legacy `progress` records, file-history snapshots, blank lines,
    and the `toolUseResult` copy of each tool result (the UI's, never sent to the model). A kept
    record whose parent was left out gets the record before it on the chain as its parent (null
    for the first: the chain's root), which is what the loader makes of it (it bridges over
    `progress` records and re-parents a preserved segment's head onto the summary); a
    boundary's `logicalParentUuid` that names a record left out becomes null. Nothing else in a
    kept record changes.
    """
    records = transcript.records
    on_chain = frozenset(chain)
    kept: list[int] = []
    for i, record in enumerate(records):
        kind = record.get("type")
        if i in on_chain:
            kept.append(i)
        elif record.is_object and kind not in _NOT_METADATA:
            kept.append(i)  # metadata (`METADATA_TYPES`), or a type passed through unread
    before: dict[int, Any] = {}  # a chain record -> the uuid of the one before it (or None)
    for at, i in enumerate(chain):
        before[i] = records[chain[at - 1]].get("uuid") if at else None
    kept_uuids = {records[i].get("uuid") for i in kept} - {None}
    out: list[Record] = []
    for i in kept:
        record = records[i]
        raw = record.raw
        changes: dict[str, Any] = {}
        parent = _parent_of(raw)
        if i in on_chain and isinstance(parent, str) and parent not in kept_uuids:
            changes["parentUuid"] = before[i]
        logical = raw.get("logicalParentUuid") if isinstance(raw, dict) else None
        if isinstance(logical, str) and logical not in kept_uuids:
            changes["logicalParentUuid"] = None
        dropped = [key for key in UI_ONLY_KEYS if isinstance(raw, dict) and key in raw]
        if not changes and not dropped:
            out.append(record)
            continue
        edited = {k: v for k, v in raw.items() if k not in dropped}
        edited.update(changes)
        out.append(record.with_raw(edited))
    return out
