"""What of a pi session `compactcli gc` keeps: what pi loads next, and the metadata.

`collect(transcript)` returns the records of a new session file: the session header, and the
entries of the active branch (from the root to the last entry) that pi's context still needs:
after the branch's last compaction, the entries from its first kept entry on; with no compaction,
the whole branch. The last `model_change` and `thinking_level_change` before the first kept entry
stay too (the settings in force), and every `session_info` entry (the session's name). Left out:
dead branches, the entries the last compaction summarized, earlier compactions (those inside the
kept part too: pi does not send them, and they name entries that went), labels of entries that
went, blank lines. A kept entry whose parent went gets the kept entry before it on the branch
as its parent (null for the first: the new root). In a version 1 file (no ids) each kept
compaction's `firstKeptEntryIndex` is moved to where its entry now is.
"""

from __future__ import annotations

from typing import Any

from compactcli.formats.pi.tree import read_tree
from compactcli.formats.pi.views import first_kept
from compactcli.transcript import Record, Transcript

SETTINGS_TYPES = ("model_change", "thinking_level_change")
"""Entry types whose last one before the first kept entry stays: the settings in force."""


def collect(transcript: Transcript) -> list[Record]:
    """The records of `transcript` a collected session keeps (see the module)."""
    records = transcript.records
    tree = read_tree(transcript)
    path = tree.path
    if tree.loop is not None or not path:
        return list(records)
    last = max(
        (p for p, i in enumerate(path) if records[i].raw.get("type") == "compaction"), default=None
    )
    start = 0 if last is None else first_kept(transcript, tree, last)
    keep = set(path[start:])
    if last is not None:  # an older compaction inside the kept part: pi does not send it
        keep -= {i for i in path[start:last] if records[i].raw.get("type") == "compaction"}
    for kind in SETTINGS_TYPES:
        before = [i for i in path[:start] if records[i].raw.get("type") == kind]
        if before:
            keep.add(before[-1])
    keep.update(i for i in tree.entries if records[i].raw.get("type") == "session_info")
    if tree.header is not None:
        keep.add(tree.header)
    kept_ids = {records[i].raw.get("id") for i in keep} - {None}
    for i in tree.entries:
        raw = records[i].raw
        if raw.get("type") == "label" and raw.get("targetId") in kept_ids:
            keep.add(i)
    on_path = [i for i in path if i in keep]
    previous: dict[int, Any] = {}
    for position, i in enumerate(on_path):
        previous[i] = records[on_path[position - 1]].raw.get("id") if position else None
    new_position = {old: new for new, old in enumerate(i for i in tree.objects if i in keep)}
    out: list[Record] = []
    for i, record in enumerate(records):
        if i not in keep:
            continue
        raw = record.raw
        changes: dict[str, Any] = {}
        parent = raw.get("parentId")
        if tree.version >= 2 and isinstance(parent, str) and parent not in kept_ids:
            changes["parentId"] = previous.get(i)
        if tree.version < 2 and raw.get("type") == "compaction":
            target = raw.get("firstKeptEntryIndex")
            if isinstance(target, int) and 0 <= target < len(tree.objects):
                later = [o for o in tree.objects[target:] if o in new_position]
                if later and new_position[later[0]] != target:
                    changes["firstKeptEntryIndex"] = new_position[later[0]]
        out.append(record.with_raw({**raw, **changes}) if changes else record)
    return out
