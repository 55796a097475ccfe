"""`ChainNodes`: Claude Code's uuid map as a table of nodes, and the resume-chain rules over it.

The table is filled record by record, in file order, and holds a few compact values per uuid
(the loader's map entry: its record, parent, kind, flags, timestamp, response id and a
boundary's preserved segment), not the records themselves, so a large file is mapped without
holding it. `build` applies the rules of Claude Code's `buildConversationChain` to it and gives
the context chain the loader would walk on resume, and the preserved assistant records whose
usage the loader zeroes; the dialect's views and the streamer both read the chain from it."""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from typing import Any

from compactcli.formats.claude_code.records import _timestamp

USER, ASSISTANT, BOUNDARY, OTHER = 1, 2, 3, 0
SIDECHAIN, RESULTS = 1, 2
ROOT = -1  # no parent
MISSING = -2  # a parent uuid that is not (or not yet) a chain record

Segment = tuple[Any, Any, Any]
"""A preserved segment's (headUuid, anchorUuid, tailUuid), each a string when it names one."""


def bridged(bridge: Mapping[str, str | None], parent: str | None) -> str | None:
    """The parent a record naming `parent` has: for a progress record in `bridge` (progress
    uuid -> its own bridged parent), that record's parent."""
    if parent is not None and parent in bridge:
        return bridge[parent]
    return parent


def bridge_over(bridge: dict[str, str | None], uuid: str, parent: str | None) -> None:
    """Note in `bridge` a progress record `uuid` whose parent is `parent`."""
    bridge[uuid] = bridged(bridge, parent)


class Stamps:
    """Timestamps by node, compactly: the usual 24-character ISO strings as fixed slots of one
    bytearray, anything else in a dict. Indexing gives back the value as written."""

    WIDTH = 24
    _BLANK = b" " * 24

    def __init__(self) -> None:
        self.blob = bytearray()
        self.odd: dict[int, Any] = {}

    def append(self, value: Any) -> None:
        if type(value) is str and len(value) == 24 and value.isascii():
            self.blob += value.encode()
        else:
            self.odd[len(self.blob) // 24] = value
            self.blob += self._BLANK

    def __setitem__(self, node: int, value: Any) -> None:
        self.odd.pop(node, None)
        if type(value) is str and len(value) == 24 and value.isascii():
            self.blob[node * 24 : node * 24 + 24] = value.encode()
        else:
            self.odd[node] = value

    def __getitem__(self, node: int) -> Any:
        if node in self.odd:
            return self.odd[node]
        return self.blob[node * 24 : node * 24 + 24].decode()


class ChainNodes:
    """The uuid map of one transcript as nodes, and its context chain (`build`).

    Each uuid is one node, numbered in the order its uuid first appears (the loader's map
    order); a later record with the same uuid takes the earlier one's node and replaces all it
    held; a parent that is a progress record is read as that record's own (bridged) parent. Per
    node it holds the record index, the parent node (`ROOT` for none, `MISSING` for a uuid that
    is no chain record), a kind (`USER`, `ASSISTANT`, `BOUNDARY`, `OTHER`), flag bits
    (`SIDECHAIN`, `RESULTS`; the other bits are the filler's own), the timestamp as written, the
    `message.id` of an assistant record and a boundary's preserved segment (head, anchor, tail).
    """

    __slots__ = (
        "bridge",
        "flags",
        "kind",
        "node",
        "parent",
        "pending",
        "record",
        "segments",
        "stamps",
        "unit",
    )

    def __init__(self) -> None:
        self.node: dict[str, int] = {}  # uuid -> node, in the order uuids first appear
        self.record = array("l")  # node -> record index (the last record with its uuid)
        self.parent = array("l")  # node -> parent node, ROOT or MISSING
        self.kind = array("b")
        self.flags = array("B")
        self.stamps = Stamps()
        self.unit: list[str | None] = []  # node -> message.id of an assistant record
        self.pending: dict[int, str] = {}  # node -> its parent uuid, when not mapped yet
        self.bridge: dict[str, str | None] = {}  # progress uuid -> its effective parent
        self.segments: dict[int, Segment] = {}  # boundary node -> its preserved segment

    def copy(self) -> ChainNodes:
        """A copy of the table, to be filled further without changing this one."""
        other = ChainNodes()
        other.node = dict(self.node)
        other.record = array("l", self.record)
        other.parent = array("l", self.parent)
        other.kind = array("b", self.kind)
        other.flags = array("B", self.flags)
        other.stamps.blob = bytearray(self.stamps.blob)
        other.stamps.odd = dict(self.stamps.odd)
        other.unit = list(self.unit)
        other.pending = dict(self.pending)
        other.bridge = dict(self.bridge)
        other.segments = dict(self.segments)
        return other

    def add_progress(self, uuid: str, parent: str | None) -> None:
        """A legacy progress record (`add` maps chain records): a record naming it as parent
        reads its parent instead."""
        bridge_over(self.bridge, uuid, parent)

    def add(
        self,
        index: int,
        uuid: str,
        parent: str | None,
        kind: int,
        flags: int,
        stamp: Any,
        unit: str | None,
        segment: Segment | None,
    ) -> int:
        """Map chain record `index`; returns its node (the earlier one's, for a uuid seen)."""
        if parent is not None and self.bridge:
            parent = bridged(self.bridge, parent)
        nodes = self.node
        node = nodes.get(uuid)
        if node is not None:
            self._replace(node, index, parent, kind, flags, stamp, unit, segment)
            return node
        node = nodes[uuid] = len(self.unit)
        if parent is None:
            self.parent.append(ROOT)
        else:
            above = nodes.get(parent, MISSING)
            self.parent.append(above)
            if above == MISSING:
                self.pending[node] = parent
        self.record.append(index)
        self.kind.append(kind)
        self.flags.append(flags)
        if type(stamp) is str and len(stamp) == 24 and stamp.isascii():
            self.stamps.blob += stamp.encode()  # `stamps.append`, inline
        else:
            self.stamps.append(stamp)
        self.unit.append(unit)
        if segment is not None:
            self.segments[node] = segment
        return node

    def _replace(
        self,
        node: int,
        index: int,
        parent: str | None,
        kind: int,
        flags: int,
        stamp: Any,
        unit: str | None,
        segment: Segment | None,
    ) -> None:
        """A later record with the uuid of `node`: it replaces all the node held."""
        self.pending.pop(node, None)
        self.segments.pop(node, None)
        above = ROOT if parent is None else self.node.get(parent, MISSING)
        if above == MISSING:
            assert parent is not None
            self.pending[node] = parent
        self.record[node] = index
        self.parent[node] = above
        self.kind[node] = kind
        self.flags[node] = flags
        self.stamps[node] = stamp
        self.unit[node] = unit
        if segment is not None:
            self.segments[node] = segment

    def resolved_parents(self) -> array[int]:
        """Each node's parent node, the uuids not mapped when its record came looked up now."""
        parent = array("l", self.parent)
        nodes = self.node
        for node, uuid in self.pending.items():
            parent[node] = nodes.get(uuid, MISSING)
        return parent

    def build(self) -> tuple[Sequence[int], set[int]]:
        """The context chain (nodes from the root to the leaf, in context order) and the
        nodes whose usage the loader zeroes (the preserved segment's assistant records).

        The rules of `buildConversationChain`: the newest preserved segment spliced in
        (`applyPreservedSegmentRelinks`, `_relink`; the records before the last compact boundary
        that it does not keep dropped), the leaf taken as the newest terminal user/assistant
        record that is not a sidechain (of any record, when all are sidechains), the walk from it
        to the root (stopping at a dropped or missing record), and the siblings and tool results
        the walk missed put back after their response (`recoverOrphanedParallelToolResults`,
        `_recover`).
        """
        count = len(self.record)
        alive = bytearray(b"\x01") * count
        parent = self.resolved_parents()
        preserved = self._relink(alive, parent)
        leaf = self._leaf(alive, parent)
        if leaf is None:  # a subagent's transcript: every record is a sidechain
            leaf = self._leaf(alive, parent, sidechains=True)
        if leaf is None:
            return [], set()
        walk = array("l")
        seen = bytearray(count)  # on the walk (small, where a set of ints is not)
        current = leaf
        while current >= 0 and alive[current] and not seen[current]:
            seen[current] = 1
            walk.append(current)
            current = parent[current]
        walk.reverse()
        chain = self._recover(alive, parent, walk, seen)
        kind = self.kind
        return chain, {n for n in preserved if kind[n] == ASSISTANT}

    # ---- the rules

    def _resolve(self, uuid: Any) -> int:
        if not isinstance(uuid, str):
            return ROOT
        return self.node.get(uuid, MISSING)

    def _relink(self, alive: bytearray, parent: array[int]) -> set[int]:
        """`applyPreservedSegmentRelinks`: splice the newest preserved segment (when it is the
        last boundary's and its tail reaches its head), drop the records before the last
        boundary that it does not keep. Changes `parent` and `alive`; returns the preserved
        nodes (none when nothing applies)."""
        last_seg: Segment | None = None
        last_seg_pos = last_boundary_pos = -1
        kind, segments = self.kind, self.segments
        for node in range(len(kind)):
            if kind[node] == BOUNDARY:
                last_boundary_pos = node
                if node in segments:
                    last_seg, last_seg_pos = segments[node], node
        if last_seg is None:
            return set()
        head_uuid, anchor_uuid, tail_uuid = last_seg
        preserved: set[int] = set()
        if last_seg_pos == last_boundary_pos:
            head = self._resolve(head_uuid) if isinstance(head_uuid, str) else MISSING
            current = self._resolve(tail_uuid)
            reached = False
            while current >= 0 and current not in preserved:
                preserved.add(current)
                if current == head:
                    reached = True
                    break
                current = parent[current]
            if not reached:
                return set()
            anchor = self._resolve(anchor_uuid)
            tail = self._resolve(tail_uuid)
            parent[head] = anchor
            for node in self._children(parent, anchor, anchor_uuid):
                if node != head:
                    parent[node] = tail
        for node in range(last_boundary_pos):
            if node not in preserved:
                alive[node] = 0
        return preserved

    def _children(self, parent: array[int], anchor: int, anchor_uuid: Any) -> list[int]:
        """The nodes whose parent is the anchor uuid (even one that is no chain record; the
        roots, for an anchor of null; none, for an anchor that is neither string nor null)."""
        if isinstance(anchor_uuid, str):
            if anchor >= 0:
                return [n for n, above in enumerate(parent) if above == anchor]
            return [n for n, uuid in self.pending.items() if uuid == anchor_uuid]
        if anchor_uuid is None:
            return [n for n, above in enumerate(parent) if above == ROOT]
        return []

    def _stamp(self, node: int) -> float:
        value = _timestamp(self.stamps[node])
        return value if value is not None else float("-inf")

    def _sort_stamp(self, node: int) -> str:
        """The timestamp as the loader sorts recovered records: as a string."""
        value = self.stamps[node]
        return value if isinstance(value, str) else ""

    def _leaf(self, alive: bytearray, parent: array[int], sidechains: bool = False) -> int | None:
        """The newest terminal user/assistant record that is not a sidechain (any, with
        `sidechains`): from each terminal record, the first such record up its chain."""
        has_child = bytearray(len(parent))
        for node, above in enumerate(parent):
            if above >= 0 and alive[node]:
                has_child[above] = 1
        kind, flags, record = self.kind, self.flags, self.record
        best: int | None = None
        best_key = (float("-inf"), -1)
        for node, flag in enumerate(has_child):
            if flag or not alive[node]:
                continue
            seen: set[int] = set()
            current = node
            while current >= 0 and alive[current] and current not in seen:
                seen.add(current)
                if kind[current] == USER or kind[current] == ASSISTANT:
                    if sidechains or not flags[current] & SIDECHAIN:
                        key = (self._stamp(current), record[current])
                        if best is None or key > best_key:
                            best, best_key = current, key
                    break
                current = parent[current]
        return best

    def _anything_lost(
        self, alive: bytearray, parent: array[int], chain: bytearray, groups: set[str]
    ) -> bool:
        """Whether a record off the chain is a sibling of a chain response, or a result
        answering one: only then is there anything to recover."""
        kind, unit, flags = self.kind, self.unit, self.flags
        for node, on in enumerate(chain):
            if on or not alive[node]:
                continue
            if kind[node] == ASSISTANT:
                if unit[node] in groups:
                    return True
            elif kind[node] == USER and flags[node] & RESULTS:
                above = parent[node]
                if above >= 0 and chain[above] and kind[above] == ASSISTANT:
                    return True
                if above == MISSING:
                    return True  # answers a record not mapped: let the full search decide
        return False

    def _recover(
        self, alive: bytearray, parent: array[int], chain: Sequence[int], on_chain: bytearray
    ) -> Sequence[int]:
        """`recoverOrphanedParallelToolResults`: for each response on the chain (a
        `message.id`; its anchor is its last record there), the live records off the chain
        that belong to it are inserted after the anchor: its other records (siblings), then
        the tool results whose parent is one of its records, each list in timestamp order,
        ties in map order (results by their parent's place, then their own)."""
        unit, kind = self.unit, self.kind
        anchors: dict[str, int] = {}
        for node in chain:
            message_id = unit[node]
            if kind[node] == ASSISTANT and message_id:
                anchors[message_id] = node
        if not anchors:
            return chain
        if not self._anything_lost(alive, parent, on_chain, set(anchors)):
            return chain
        seen = set(chain)
        siblings: dict[str, list[int]] = {}
        results: dict[int, list[int]] = {}
        flags = self.flags
        for node in range(len(kind)):
            if not alive[node]:
                continue
            if kind[node] == ASSISTANT:
                message_id = unit[node]
                if message_id:
                    siblings.setdefault(message_id, []).append(node)
            elif kind[node] == USER and parent[node] >= 0 and flags[node] & RESULTS:
                results.setdefault(parent[node], []).append(node)
        inserts: dict[int, list[int]] = {}
        for message_id, anchor in anchors.items():
            group = siblings[message_id]
            lost_siblings = [s for s in group if s not in seen]
            lost_results = [r for m in group for r in results.get(m, ()) if r not in seen]
            if not lost_siblings and not lost_results:
                continue
            lost_siblings.sort(key=self._sort_stamp)
            lost_results.sort(key=self._sort_stamp)
            inserts[anchor] = lost_siblings + lost_results
        if not inserts:
            return chain
        out: list[int] = []
        for node in chain:
            out.append(node)
            out.extend(inserts.get(node, ()))
        return out
