"""The skeletons of Claude Code records, the loader's uuid map of them, and their context chain.

A record's skeleton (`_skeleton`) holds the plain values of it that the chain rules, the views and
the checks read; `_add_node` maps one into a `ChainNodes` table (the loader's table and the
streamer's are filled by it alike). `_graph` builds the uuid map (`loadTranscriptFile`: a later
duplicate replaces an earlier one, legacy `progress` records bridged over, as `ChainNodes` bridges
them) that the checks and the writer read. `_build_chain` maps the skeletons into a `ChainNodes`
table in file order (kept with the uuid map) and builds its chain (`buildConversationChain`, by
the rules `ChainNodes.build` states): the `_Chain` it returns holds the record indexes in context
order and the records whose usage the loader zeroes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compactcli.formats.claude_code.chain_nodes import (
    ASSISTANT,
    BOUNDARY,
    OTHER,
    RESULTS,
    SIDECHAIN,
    USER,
    ChainNodes,
    bridge_over,
    bridged,
)
from compactcli.formats.claude_code.records import CHAIN_TYPES, LEGACY_TYPES, _reaches_model
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
        _reaches_model(raw),
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
    """The uuid map Claude Code's loader builds, with progress records bridged over; `nodes`
    is the `ChainNodes` table of the first `mapped` skeletons once a chain is asked for (a map
    that extends another starts with that one's)."""

    index: dict[str, int] = field(default_factory=dict)  # uuid -> record index (last wins)
    parent: dict[str, str | None] = field(default_factory=dict)  # effective parent
    raw_parent: dict[int, Any] = field(default_factory=dict)  # record index -> bridged parent
    bridge: dict[str, str | None] = field(default_factory=dict)  # progress uuid -> its parent
    count: int = 0  # how many skeletons it maps
    nodes: ChainNodes | None = None  # never changed once set (a longer one replaces it)
    mapped: int = 0  # how many skeletons `nodes` maps (0 while it is None)


def _graph(skeletons: Skeletons, base: _Graph | None = None) -> _Graph:
    """The uuid map of `skeletons`. `base`, the map of the first `base.count` of them, is
    copied and extended with the rest: the map is made in order, so that is the same map."""
    if base is None:
        graph, start = _Graph(), 0
    else:
        graph = _Graph(
            dict(base.index), dict(base.parent), dict(base.raw_parent), dict(base.bridge)
        )
        graph.nodes, graph.mapped = base.nodes, base.mapped
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
                bridge_over(bridge, uuid, parent)
            continue  # a type that is an array or object is no chain type
        if bridge:
            parent = bridged(bridge, parent)
        index[uuid] = i
        parents[uuid] = parent
        raw_parent[i] = parent
    graph.count = len(skeletons)
    return graph


@dataclass(frozen=True, slots=True)
class _Chain:
    records: tuple[int, ...]  # record indexes from the root to the leaf, in context order
    zeroed: frozenset[int]  # records whose usage Claude Code zeroes on load


def _add_node(
    nodes: ChainNodes,
    index: int,
    skeleton: Skeleton,
    flags: int = 0,
    interned: dict[str, str] | None = None,
) -> int | None:
    """Map record `index`, of `skeleton`, into `nodes`: a chain record as a node (its flag
    bits with `flags`, the filler's own, added), a progress record as a bridge. Returns the
    record's node, None for a record that is no chain record. `interned` keeps one string per
    `message.id`, shared by the nodes that name it."""
    uuid = skeleton[_SK_UUID]
    if uuid is None:
        return None
    kind = skeleton[_SK_KIND]
    if kind not in CHAIN_TYPES:
        if kind in LEGACY_TYPES:
            nodes.add_progress(uuid, skeleton[_SK_PARENT])
        return None  # a type that is an array or object is no chain type
    if skeleton[_SK_SIDECHAIN]:
        flags |= SIDECHAIN
    unit = None
    if kind == "user":
        code = USER
        if skeleton[_SK_RESULTS]:
            flags |= RESULTS
    elif kind == "assistant":
        code, unit = ASSISTANT, skeleton[_SK_MESSAGE_ID]
        if unit is not None and interned is not None:
            unit = interned.setdefault(unit, unit)
    else:
        code = BOUNDARY if skeleton[_SK_BOUNDARY] else OTHER
    return nodes.add(
        index,
        uuid,
        skeleton[_SK_PARENT],
        code,
        flags,
        skeleton[_SK_STAMP],
        unit,
        skeleton[_SK_SEGMENT],
    )


def _fill(nodes: ChainNodes, skeletons: Skeletons, start: int) -> None:
    """Map `skeletons[start:]` into `nodes`, in file order."""
    for i in range(start, len(skeletons)):
        skeleton = skeletons[i]
        if skeleton is not None:
            _add_node(nodes, i, skeleton)


def _chain_nodes(skeletons: Skeletons, graph: _Graph | None) -> ChainNodes:
    """The `ChainNodes` table of `skeletons`, kept in `graph` (their `_graph`) when there is
    one: made once, by extending a copy of the table of the skeletons they start with."""
    if graph is None:
        nodes = ChainNodes()
        _fill(nodes, skeletons, 0)
        return nodes
    if graph.nodes is None or graph.mapped != len(skeletons):
        nodes = graph.nodes.copy() if graph.nodes is not None else ChainNodes()
        _fill(nodes, skeletons, graph.mapped)
        graph.nodes, graph.mapped = nodes, len(skeletons)
    return graph.nodes


def _build_chain(skeletons: Skeletons, graph: _Graph | None = None) -> _Chain:
    """The context chain of `skeletons`; `graph` is their `_graph` when already made."""
    nodes = _chain_nodes(skeletons, graph)
    chain, zeroed = nodes.build()
    record = nodes.record
    return _Chain(
        records=tuple([record[n] for n in chain]), zeroed=frozenset([record[n] for n in zeroed])
    )
