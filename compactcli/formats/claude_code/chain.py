"""The resume-chain rules of Claude Code's loader: which records it loads, in which order.

The rules read a few plain values of each record, its skeleton (`_skeleton`). `_graph` builds the
uuid map (`loadTranscriptFile`: a later duplicate replaces an earlier one, legacy `progress` records
bridged over); `_build_chain` (`buildConversationChain`) splices in the newest preserved segment
(dropping the records before the last compact boundary that it does not keep), takes as leaf the
newest terminal user/assistant record that is not a sidechain (of any record, in a subagent's
transcript), walks from it to the root, stopping at a compact boundary, and puts back after their
group the siblings and tool results the walk missed. The `_Chain` it returns holds the record
indexes in context order and the records whose usage the loader zeroes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compactcli.formats.claude_code.records import (
    CHAIN_TYPES,
    LEGACY_TYPES,
    SYNTHETIC_MODEL,
    _timestamp,
)
from compactcli.transcript import Transcript

Skeleton = tuple[Any, ...]
"""What the chain rules read of one record, as plain values (see `_skeleton`)."""

Skeletons = Sequence["Skeleton | None"]
"""One skeleton per record, in file order (None for a record that is not a JSON object)."""

# positions in a skeleton
_SK_KIND, _SK_UUID, _SK_PARENT, _SK_BOUNDARY, _SK_SEGMENT = 0, 1, 2, 3, 4
_SK_SIDECHAIN, _SK_STAMP, _SK_MESSAGE_ID, _SK_RESULTS, _SK_REACHES = 5, 6, 7, 8, 9
_SK_SUMMARY, _SK_OURS, _SK_FIRST, _SK_LOGICAL, _SK_SOURCE = 10, 11, 12, 13, 14

_ALIKE: Any = object()  # a value of a type the chain rules treat alike (not a string, not null)
_ABSENT: Any = object()  # a key the record does not have
_UNHASHABLE = {"list": object(), "dict": object()}  # a record type that is an array or object


def _skeleton(raw: Mapping[str, Any]) -> Skeleton:
    """Everything of a record that the chain rules and `_reaches_model` read, as plain values,
    and what tells a compaction's records (so that finding them reads no record again).

    (type, uuid, parentUuid, is a compact_boundary, its preservedSegment (head, anchor, tail),
    isSidechain, timestamp, message.id, is a user record with tool results, reaches the model,
    isCompactSummary is set (truthy), holds our details (a `compactcli` key), parentUuid is its
    first key, logicalParentUuid when a string, sourceToolAssistantUUID (when a string; None
    when absent, `_ALIKE` otherwise); the last five for the checks of `validate`.)
    Values the rules treat alike are folded together: a type, a uuid or a parent that is not a
    string reads as any other such value (a type that is an array or object as one of two
    markers, no chain type either), a timestamp that is not a string as none.
    """
    get = raw.get
    kind = get("type")
    if not isinstance(kind, str):
        kind = _UNHASHABLE.get(type(kind).__name__, _ALIKE)
    uuid = get("uuid")
    parent = get("parentUuid")
    stamp = get("timestamp")
    segment: tuple[Any, ...] | None = None
    boundary = kind == "system" and get("subtype") == "compact_boundary"
    if boundary:
        metadata = get("compactMetadata")
        found = metadata.get("preservedSegment") if isinstance(metadata, dict) else None
        if isinstance(found, dict):
            segment = tuple(
                v if v is None or isinstance(v, str) else _ALIKE
                for v in (found.get("headUuid"), found.get("anchorUuid"), found.get("tailUuid"))
            )
    message = get("message")
    message_id: str | None = None
    results = False
    if isinstance(message, dict):
        value = message.get("id")
        if isinstance(value, str) and value:
            message_id = value
        if kind == "user":
            content = message.get("content")
            if isinstance(content, list):
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        results = True
                        break
    source = get("sourceToolAssistantUUID", _ABSENT)
    if get("isVirtual") is True:
        reaches = False
    elif kind == "assistant" and get("isApiErrorMessage") is True:
        reaches = not (isinstance(message, dict) and message.get("model") == SYNTHETIC_MODEL)
    else:
        reaches = True
    return (
        kind,
        uuid if isinstance(uuid, str) else None,
        parent if isinstance(parent, str) else None,
        boundary,
        segment,
        get("isSidechain") is True,
        stamp if isinstance(stamp, str) else None,
        message_id,
        results,
        reaches,
        bool(get("isCompactSummary")),
        "compactcli" in raw,
        next(iter(raw), None) == "parentUuid",
        logical if isinstance(logical := get("logicalParentUuid"), str) else None,
        source if isinstance(source, str) else None if source is _ABSENT else _ALIKE,
    )


def _skeletons(transcript: Transcript) -> list[Skeleton | None]:
    return [_skeleton(r.raw) if isinstance(r.raw, dict) else None for r in transcript.records]


@dataclass(slots=True)
class _Graph:
    """The uuid map Claude Code's loader builds, with progress records bridged over."""

    index: dict[str, int] = field(default_factory=dict)  # uuid -> record index (last wins)
    parent: dict[str, str | None] = field(default_factory=dict)  # effective parent
    raw_parent: dict[int, Any] = field(default_factory=dict)  # record index -> bridged parent
    bridge: dict[str, str | None] = field(default_factory=dict)  # progress uuid -> its parent
    count: int = 0  # how many skeletons it maps


def _graph(skeletons: Skeletons, base: _Graph | None = None) -> _Graph:
    """The uuid map of `skeletons`. `base`, the map of the first `base.count` of them, is
    copied and extended with the rest: the map is made in order, so that is the same map."""
    if base is None:
        graph, start = _Graph(), 0
    else:
        graph = _Graph(
            dict(base.index), dict(base.parent), dict(base.raw_parent), dict(base.bridge)
        )
        start = base.count
    bridge = graph.bridge
    index, parents, raw_parent = graph.index, graph.parent, graph.raw_parent
    for i in range(start, len(skeletons)):
        skeleton = skeletons[i]
        if skeleton is None:
            continue
        uuid = skeleton[_SK_UUID]
        if uuid is None:
            continue
        kind = skeleton[_SK_KIND]
        parent = skeleton[_SK_PARENT]
        if kind not in CHAIN_TYPES:
            if kind in LEGACY_TYPES:
                bridge[uuid] = (
                    bridge.get(parent) if parent is not None and parent in bridge else parent
                )
            continue  # a type that is an array or object is no chain type
        if parent is not None and parent in bridge:
            parent = bridge[parent]
        index[uuid] = i
        parents[uuid] = parent
        raw_parent[i] = parent
    graph.count = len(skeletons)
    return graph


@dataclass(frozen=True, slots=True)
class _Chain:
    records: tuple[int, ...]  # record indexes from the root to the leaf, in context order
    zeroed: frozenset[int]  # records whose usage Claude Code zeroes on load


def _relink_preserved(
    skeletons: Skeletons, index: dict[str, int], parent: dict[str, str | None]
) -> set[str]:
    """`applyPreservedSegmentRelinks`: splice the newest preserved segment, drop the rest.

    Mutates `index` and `parent`; returns the preserved uuids (empty when nothing applies).
    """
    last_seg: tuple[Any, ...] | None = None
    last_seg_pos = -1
    last_boundary_pos = -1
    for pos, i in enumerate(index.values()):
        skeleton = skeletons[i]
        assert skeleton is not None
        if skeleton[_SK_BOUNDARY]:
            last_boundary_pos = pos
            if skeleton[_SK_SEGMENT] is not None:
                last_seg, last_seg_pos = skeleton[_SK_SEGMENT], pos
    if last_seg is None:
        return set()
    head, anchor, tail = last_seg
    live = last_seg_pos == last_boundary_pos
    preserved: set[str] = set()
    if live:
        current = tail if isinstance(tail, str) else None
        reached = False
        while current is not None and current in index and current not in preserved:
            preserved.add(current)
            if current == head:
                reached = True
                break
            current = parent[current]
        if not reached:
            return set()
        assert isinstance(head, str)
        parent[head] = anchor if isinstance(anchor, str) else None
        for uuid, value in parent.items():
            if value == anchor and uuid != head:
                parent[uuid] = tail if isinstance(tail, str) else None
    for pos, uuid in enumerate(list(index)):
        if pos < last_boundary_pos and uuid not in preserved:
            del index[uuid]
            del parent[uuid]
    return preserved


def _leaf(
    skeletons: Skeletons,
    index: dict[str, int],
    parent: dict[str, str | None],
    *,
    sidechains: bool = False,
) -> str | None:
    """The newest terminal user/assistant record that is not a sidechain (any, with
    `sidechains`: a subagent's transcript holds nothing else)."""
    has_child = {p for p in parent.values() if p is not None}
    best: str | None = None
    best_key: tuple[float, int] = (float("-inf"), -1)
    for uuid in index:
        if uuid in has_child:
            continue
        seen: set[str] = set()
        current: str | None = uuid
        while current is not None and current in index and current not in seen:
            seen.add(current)
            skeleton = skeletons[index[current]]
            assert skeleton is not None
            if skeleton[_SK_KIND] in ("user", "assistant"):
                if sidechains or not skeleton[_SK_SIDECHAIN]:
                    stamp = _timestamp(skeleton[_SK_STAMP])
                    key = (stamp if stamp is not None else float("-inf"), index[current])
                    if best is None or key > best_key:
                        best, best_key = current, key
                break
            current = parent[current]
    return best


def _recover_orphans(
    skeletons: Skeletons,
    index: dict[str, int],
    parent: dict[str, str | None],
    chain: list[str],
) -> list[str]:
    """`recoverOrphanedParallelToolResults`: put back siblings and results the walk missed.

    For each response on the chain (a `message.id`; its anchor is its last record there), the
    records the walk did not reach that belong to it are inserted after the anchor: its other
    records (siblings), then the tool results answering any of its records, each list in
    timestamp order, ties in map order (results by their parent's place, then their own).
    """
    seen = set(chain)
    anchors: dict[str, str] = {}
    for uuid in chain:
        skeleton = skeletons[index[uuid]]
        assert skeleton is not None
        if skeleton[_SK_KIND] == "assistant" and skeleton[_SK_MESSAGE_ID]:
            anchors[skeleton[_SK_MESSAGE_ID]] = uuid
    if not anchors:
        return chain
    # only records off the chain can be lost: siblings by message.id, and results by their
    # parent when that is a record of a response on the chain
    lost_siblings: dict[str, list[str]] = {}
    lost_results: dict[str, list[str]] = {}
    holders: dict[str, str] = {}  # parent -> its message.id
    for uuid in index:
        if uuid in seen:
            continue
        found = skeletons[index[uuid]]
        assert found is not None
        kind = found[_SK_KIND]
        if kind == "assistant":
            message_id = found[_SK_MESSAGE_ID]
            if message_id in anchors:
                lost_siblings.setdefault(message_id, []).append(uuid)
        elif kind == "user" and found[_SK_RESULTS] and parent[uuid] is not None:
            holder = str(parent[uuid])
            position = index.get(holder)
            skeleton = skeletons[position] if position is not None else None
            if (
                skeleton is not None
                and skeleton[_SK_KIND] == "assistant"
                and skeleton[_SK_MESSAGE_ID] in anchors
            ):
                holders[holder] = skeleton[_SK_MESSAGE_ID]
                lost_results.setdefault(holder, []).append(uuid)
    if not lost_siblings and not lost_results:
        return chain
    # each response's lost results, by their parents' places in the map
    answers: dict[str, list[tuple[int, list[str]]]] = {}
    if lost_results:
        place = {uuid: n for n, uuid in enumerate(index)}
        for holder, found_results in lost_results.items():
            answers.setdefault(holders[holder], []).append((place[holder], found_results))

    def stamp(uuid: str) -> str:
        skeleton = skeletons[index[uuid]]
        assert skeleton is not None
        value = skeleton[_SK_STAMP]
        return value if isinstance(value, str) else ""

    inserts: dict[str, list[str]] = {}
    for message_id, anchor in anchors.items():
        siblings = sorted(lost_siblings.get(message_id, ()), key=stamp)
        results = [r for _, rs in sorted(answers.get(message_id, ())) for r in rs]
        results.sort(key=stamp)
        if siblings or results:
            inserts[anchor] = siblings + results
    out: list[str] = []
    for uuid in chain:
        out.append(uuid)
        out.extend(inserts.get(uuid, ()))
    return out


def _kind_at(skeletons: Skeletons, i: int) -> Any:
    skeleton = skeletons[i]
    return skeleton[_SK_KIND] if skeleton is not None else None


def _build_chain(skeletons: Skeletons, graph: _Graph | None = None) -> _Chain:
    """The context chain of `skeletons`; `graph` is their `_graph` when already made."""
    graph = graph if graph is not None else _graph(skeletons)
    index = dict(graph.index)
    parent = dict(graph.parent)
    preserved = _relink_preserved(skeletons, index, parent)
    leaf = _leaf(skeletons, index, parent)
    if leaf is None:  # a subagent's transcript: every record is a sidechain
        leaf = _leaf(skeletons, index, parent, sidechains=True)
    if leaf is None:
        return _Chain(records=(), zeroed=frozenset())
    walk: list[str] = []
    seen: set[str] = set()
    current: str | None = leaf
    while current is not None and current in index and current not in seen:
        seen.add(current)
        walk.append(current)
        current = parent[current]
    walk.reverse()
    chain = _recover_orphans(skeletons, index, parent, walk)
    zeroed = frozenset(index[u] for u in preserved if _kind_at(skeletons, index[u]) == "assistant")
    return _Chain(records=tuple(index[u] for u in chain), zeroed=zeroed)
