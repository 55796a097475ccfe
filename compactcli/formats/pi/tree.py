"""The entry tree of a pi session file and its active branch.

A pi file starts with a session header `{"type":"session","version"?,"id",…}`; every other object
record is an entry (`ENTRY_TYPES`; message roles in `ROLES`). In versions 2 and 3 each entry has
an `id` and a `parentId`, so the entries form a tree whose current leaf is the last entry; a
version 1 file is a linear list without ids. `read_tree` reads the tree and its active branch,
`parent_of` and `walk` follow parents up. Nothing here edits records.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compactcli.transcript import Transcript

ENTRY_TYPES = frozenset(
    {
        "message",
        "model_change",
        "thinking_level_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
    }
)
ROLES = frozenset(
    {
        "user",
        "assistant",
        "toolResult",
        "bashExecution",
        "custom",
        "hookMessage",
        "branchSummary",
        "compactionSummary",
    }
)
CURRENT_VERSION = 3
"""The newest session file version this dialect knows."""

Parent = Callable[[int], "int | None"]
"""The parent record of an entry record, or None."""


@dataclass(frozen=True, slots=True)
class _Tree:
    """The entries of a pi file and its active branch."""

    version: int
    header: int | None  # record index of the session header
    entries: tuple[int, ...]  # record indices of entries (object records but the header)
    objects: tuple[int, ...]  # record indices of all object records (v1 indices point here)
    by_id: dict[str, int]
    path: tuple[int, ...]  # the active branch, root first
    loop: int | None  # the record where the walk from the leaf met itself


def read_tree(transcript: Transcript) -> _Tree:
    """The entries of `transcript` and its active branch, as a `_Tree`: the version, the header's
    record, the entries, every object record (what a v1 `firstKeptEntryIndex` indexes, header
    included), the ids (a later duplicate wins, as in pi's index) and the active branch from the
    root to the last entry, with the record where a `parentId` loop was met, if any. A file with
    no `version` key is version 1, and so is one with no `parentId` anywhere when the header is
    missing.
    """
    records = transcript.records
    objects = tuple(index for index, _ in transcript.objects())
    header: int | None = None
    entries: list[int] = []
    for index in objects:
        if records[index].raw.get("type") == "session":
            if header is None:
                header = index
            continue
        entries.append(index)
    version = 1
    if header is not None:
        value = records[header].raw.get("version")
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            version = value
    elif any("parentId" in records[index].raw for index in entries):
        version = CURRENT_VERSION
    by_id: dict[str, int] = {}
    if version >= 2:
        for index in entries:
            entry_id = records[index].raw.get("id")
            if isinstance(entry_id, str):
                by_id[entry_id] = index  # a later duplicate wins, as in pi's index
    tree = _Tree(version, header, tuple(entries), objects, by_id, (), None)
    if not entries:
        return tree
    if version < 2:
        return _replace_path(tree, tuple(entries), None)
    path: list[int] = []
    seen: set[int] = set()
    loop: int | None = None
    current: int | None = entries[-1]
    while current is not None:
        if current in seen:
            loop = current
            break
        seen.add(current)
        path.append(current)
        current = parent_of(transcript, tree, current)
    path.reverse()
    return _replace_path(tree, tuple(path), loop)


def parent_of(transcript: Transcript, tree: _Tree, index: int) -> int | None:
    """The parent record of entry record `index`: the entry before it in v1, else the entry
    its `parentId` names (None for a root or an unknown id)."""
    if tree.version < 2:
        position = position_of(tree.entries, index)
        return tree.entries[position - 1] if position > 0 else None
    parent_id = transcript.records[index].raw.get("parentId")
    return tree.by_id.get(parent_id) if isinstance(parent_id, str) else None


def _replace_path(tree: _Tree, path: tuple[int, ...], loop: int | None) -> _Tree:
    return _Tree(tree.version, tree.header, tree.entries, tree.objects, tree.by_id, path, loop)


def position_of(indices: Sequence[int], index: int) -> int:
    """Where `index` sits in the sorted `indices`, or -1."""
    low, high = 0, len(indices)
    while low < high:
        middle = (low + high) // 2
        if indices[middle] < index:
            low = middle + 1
        else:
            high = middle
    return low if low < len(indices) and indices[low] == index else -1


def walk(start: int | None, parent: Parent, limit: int) -> Iterable[int]:
    """`start` and its ancestors, nearest first, at most `limit + 1` of them."""
    current = start
    steps = 0
    while current is not None and steps <= limit:
        yield current
        current = parent(current)
        steps += 1


def _role(raw: Mapping[str, Any]) -> str | None:
    """The role of a message entry, or None for any other record."""
    if raw.get("type") != "message":
        return None
    message = raw.get("message")
    if not isinstance(message, Mapping):
        return None
    role = message.get("role")
    return role if isinstance(role, str) else None
