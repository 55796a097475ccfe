"""`ClaudeCodeStreamer`: the claude-code dialect's views, fed one record at a time.

Each record's message is returned as its record arrives (a `Message` from `add`; plain values
from `add_light` and `feed`, equal to `light` of that message), and each chain record leaves a
compact entry (record index, parent node, kind, flags and usage in arrays, its timestamp, its
uuid in one map); `finish` rebuilds the context chain over those entries by the rules of
`claude_code_chain`, and gives the same context, usage and model as `ClaudeCodeDialect`'s views
of the whole transcript.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from compactcli.errors import InputError
from compactcli.formats.base import LightBlock, LightMessage, StreamedView, Streamer, light
from compactcli.formats.claude_code.records import (
    _DAG_TYPES,
    CHAIN_TYPES,
    LEGACY_TYPES,
    SYNTHETIC_MODEL,
    _light_block,
    _looks_json,
    _record_message,
    _ShapeError,
    _timestamp,
)
from compactcli.transcript import Message, Record, Usage

_USER, _ASSISTANT, _BOUNDARY, _OTHER = 1, 2, 3, 0
_SIDECHAIN, _REACHES, _RESULTS, _SYNTHETIC, _USAGE = 1, 2, 4, 8, 16
_ZERO4 = (0, 0, 0, 0)
_ROOT = -1  # no parent
_MISSING = -2  # a parent uuid that is not (or not yet) a chain record
_ABSENT = object()


class _Stamps:
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


class _Once(dict[str, str]):
    """Tool names by call id, each forgotten once a result has asked for it."""

    def get(self, key: str, default: Any = None) -> Any:
        return self.pop(key, default)


class ClaudeCodeStreamer(Streamer):
    """`ClaudeCodeDialect`'s views, fed one record at a time.

    Messages are returned as their records arrive (`add_light` gives the same messages as
    plain values, without building views). For the chain, each chain record leaves a few
    integers (its record index, parent, kind, flags, usage), its timestamp string and its uuid
    in one dict; progress records leave their bridge. `finish` rebuilds the chain exactly as
    `ClaudeCodeDialect.context` and `usage` do, over that skeleton.
    """

    light = True

    def __init__(self, source: str = "-") -> None:
        self.source = source
        self.names = _Once()
        self.node: dict[str, int] = {}  # uuid -> node (first-seen order, as the loader's map)
        self.record = array("l")
        self.parent = array("l")
        self.kind = array("b")
        self.flags = array("B")
        self.stamps = _Stamps()  # the raw timestamps (parsed when compared)
        self.usage = array("q")  # per node: total, input, output, cached
        self.unit: list[str | None] = []  # message.id of assistant nodes (interned)
        self.request: dict[int, str] = {}  # node -> usage key when there is no message.id
        self.pending: dict[int, str] = {}  # node -> parent uuid not seen yet
        self.bridge: dict[str, str | None] = {}  # progress uuid -> effective parent
        self.segments: dict[int, tuple[Any, Any, Any]] = {}  # boundary -> (head, anchor, tail)
        self.interned: dict[str, str] = {}
        self.model: str | None = None

    # ---- feeding

    def add(self, index: int, record: Record) -> Sequence[Message]:
        raw = record.raw
        if not isinstance(raw, dict):
            return ()
        try:
            message = _record_message(index, raw, self.names)
        except _ShapeError as error:
            raise InputError(self.source, record.lineno, str(error)) from None
        if message is not None and message.model and not message.model.startswith("<"):
            self.model = message.model
        self._skeleton(index, raw, message is not None, raw.get("type"))
        return (message,) if message is not None else ()

    def add_light(self, index: int, raw: Any, lineno: int) -> Sequence[LightMessage]:
        if not isinstance(raw, dict):
            return ()
        kind = raw.get("type")
        found: LightMessage | None = None
        if kind == "user" or kind == "assistant":
            found = self._light_message(index, raw, kind, lineno)
        elif kind == "attachment" or kind == "system":
            try:
                message = _record_message(index, raw, self.names)
            except _ShapeError as error:
                raise InputError(self.source, lineno, str(error)) from None
            found = light(message) if message is not None else None
        if isinstance(kind, str) and kind in _DAG_TYPES:
            self._skeleton(index, raw, found is not None, kind)
        return (found,) if found is not None else ()

    def _light_message(self, index: int, raw: Any, kind: str, lineno: int) -> LightMessage:
        """The message of a user or assistant record, as `_record_message` would make it."""
        message = raw.get("message")
        content = message.get("content", _ABSENT) if isinstance(message, dict) else _ABSENT
        blocks: list[LightBlock] = []
        if isinstance(content, str):
            blocks.append(("text", content, False, None, 0))
        elif isinstance(content, list):
            names = self.names
            for item in content:
                block = _light_block(item, names) if isinstance(item, dict) else None
                if block is None:  # an unusual shape: let the views decide (or raise)
                    return self._slow(index, raw, lineno)
                blocks.append(block)
        else:
            return self._slow(index, raw, lineno)
        if kind == "user":
            return (index, "user", None, tuple(blocks))
        model = message.get("model")
        if isinstance(model, str) and not model.startswith("<"):
            self.model = model
        unit = message.get("id") or raw.get("requestId") or raw.get("uuid")
        return (index, "assistant", unit if isinstance(unit, str) else None, tuple(blocks))

    def _slow(self, index: int, raw: Any, lineno: int) -> LightMessage:
        try:
            message = _record_message(index, raw, self.names)
        except _ShapeError as error:
            raise InputError(self.source, lineno, str(error)) from None
        assert message is not None  # user and assistant records are always messages
        if message.model and not message.model.startswith("<"):
            self.model = message.model
        return light(message)

    def _skeleton(self, index: int, raw: Mapping[str, Any], is_message: bool, kind: Any) -> None:
        uuid = raw.get("uuid")
        if type(uuid) is not str:
            return
        parent = raw.get("parentUuid")
        if type(parent) is not str:
            parent = None
        bridge = self.bridge
        if kind in LEGACY_TYPES:
            bridge[uuid] = bridge.get(parent) if parent is not None and parent in bridge else parent
            return
        if kind not in CHAIN_TYPES:
            return
        if parent is not None and bridge and parent in bridge:
            parent = bridge[parent]
        nodes = self.node
        node = nodes.get(uuid)
        if node is None:
            node = nodes[uuid] = len(self.record)
            self.record.append(index)
            self.parent.append(_ROOT)
            self.kind.append(_OTHER)
            self.flags.append(0)
            self.stamps.append(None)
            self.unit.append(None)
            self.usage.extend(_ZERO4)
        else:  # a later duplicate replaces the earlier record
            self.record[node] = index
            self.pending.pop(node, None)
            self.request.pop(node, None)
            self.segments.pop(node, None)
            self.unit[node] = None
            self.usage[node * 4 : node * 4 + 4] = array("q", _ZERO4)
        if parent is None:
            self.parent[node] = _ROOT
        else:
            found = nodes.get(parent)
            if found is None:
                self.parent[node] = _MISSING
                self.pending[node] = parent
            else:
                self.parent[node] = found
        flags = _REACHES if is_message and raw.get("isVirtual") is not True else 0
        code = _OTHER
        if kind == "user":
            code = _USER
            message = raw.get("message")
            content = message.get("content") if type(message) is dict else None
            if type(content) is list:
                for block in content:
                    if type(block) is dict and block.get("type") == "tool_result":
                        flags |= _RESULTS
                        break
        elif kind == "assistant":
            code = _ASSISTANT
            message = raw.get("message")
            if type(message) is dict:
                message_id = message.get("id")
                if type(message_id) is str and message_id:
                    self.unit[node] = self.interned.setdefault(message_id, message_id)
                else:
                    message_id = None
                if message.get("model") == SYNTHETIC_MODEL:
                    flags |= _SYNTHETIC
                    if raw.get("isApiErrorMessage") is True:
                        flags &= ~_REACHES
                usage = message.get("usage")
                if type(usage) is dict:
                    flags |= _USAGE
                    fresh = usage.get("input_tokens")
                    made = usage.get("cache_creation_input_tokens")
                    read = usage.get("cache_read_input_tokens")
                    out = usage.get("output_tokens")
                    fresh = fresh if type(fresh) is int else 0
                    read = read if type(read) is int else 0
                    out = out if type(out) is int else 0
                    total = fresh + read + out + (made if type(made) is int else 0)
                    slot = node * 4
                    usage_of = self.usage
                    usage_of[slot] = total
                    usage_of[slot + 1] = fresh
                    usage_of[slot + 2] = out
                    usage_of[slot + 3] = read
                    if message_id is None:
                        key = raw.get("requestId") or uuid
                        if isinstance(key, str):
                            self.request[node] = key
        elif kind == "system" and raw.get("subtype") == "compact_boundary":
            code = _BOUNDARY
            metadata = raw.get("compactMetadata")
            seg = metadata.get("preservedSegment") if isinstance(metadata, dict) else None
            if isinstance(seg, dict):
                self.segments[node] = (
                    seg.get("headUuid"),
                    seg.get("anchorUuid"),
                    seg.get("tailUuid"),
                )
        if raw.get("isSidechain") is True:
            flags |= _SIDECHAIN
        self.stamps[node] = raw.get("timestamp")
        self.kind[node] = code
        self.flags[node] = flags

    def feed(
        self,
        lines: Iterable[tuple[int, Any, Any]],
        take: Callable[[LightMessage], None],
        note: Callable[[int, int], None],
    ) -> int:
        """`add_light` over every (line number, parsed record, bytes) of a file, each message
        handed to `take` and each record's line to `note`; returns the number of records.

        The same work as calling `add_light` per record, in one loop: the common records (user
        and assistant records whose content blocks are text, thinking, tool calls and string
        tool results) are handled inline; everything else goes through `add_light`.
        """
        names = self.names
        nodes = self.node
        bridge = self.bridge
        record, parent_of, kinds, flag_of = self.record, self.parent, self.kind, self.flags
        stamps, units, usages = self.stamps, self.unit, self.usage
        blob = stamps.blob
        interned = self.interned
        offset = 1
        index = -1
        for index, (lineno, raw, _line) in enumerate(lines):
            if lineno - index != offset:
                offset = lineno - index
                note(index, lineno)
            if raw is None:
                continue
            kind = raw.get("type")
            if kind != "user" and kind != "assistant":
                if isinstance(kind, str) and kind in _DAG_TYPES:
                    for message in self.add_light(index, raw, lineno):
                        take(message)
                continue
            uuid = raw.get("uuid")
            message = raw.get("message")
            content = message.get("content", _ABSENT) if type(message) is dict else _ABSENT
            block: LightBlock | None
            if type(uuid) is not str or uuid in nodes:
                block = None
            elif type(content) is str:
                block = ("text", content, False, None, 0)
            elif type(content) is list and len(content) == 1 and type(content[0]) is dict:
                item = content[0]
                what = item.get("type")
                if what == "tool_result":
                    call_id = item.get("tool_use_id")
                    result = item.get("content")
                    if type(call_id) is str and type(result) is str:
                        name = names.pop(call_id, None)
                        block = ("tool_result", result, _looks_json(result), name, 0)
                    else:
                        block = None
                else:
                    block = _light_block(item, names)
            else:
                block = None
            if block is None:  # anything unusual: the general path
                for found in self.add_light(index, raw, lineno):
                    take(found)
                continue
            results = block[0] == "tool_result"
            parent = raw.get("parentUuid")
            if type(parent) is not str:
                parent = None
            elif bridge and parent in bridge:
                parent = bridge[parent]
            flags = _REACHES if raw.get("isVirtual") is not True else 0
            if raw.get("isSidechain") is True:
                flags |= _SIDECHAIN
            node = nodes[uuid] = len(record)
            record.append(index)
            if parent is None:
                parent_of.append(_ROOT)
            else:
                found_parent = nodes.get(parent)
                if found_parent is None:
                    parent_of.append(_MISSING)
                    self.pending[node] = parent
                else:
                    parent_of.append(found_parent)
            stamp = raw.get("timestamp")
            if type(stamp) is str and len(stamp) == 24 and stamp.isascii():
                blob += stamp.encode()  # `stamps.append`, inline
            else:
                stamps.append(stamp)
            if kind == "user":
                usages.extend(_ZERO4)
                kinds.append(_USER)
                flag_of.append(flags | _RESULTS if results else flags)
                units.append(None)
                take((index, "user", None, (block,)))
                continue
            kinds.append(_ASSISTANT)
            assert type(message) is dict
            message_id = message.get("id")
            if type(message_id) is str and message_id:
                units.append(interned.setdefault(message_id, message_id))
            else:
                units.append(None)
            model = message.get("model")
            if type(model) is str:
                if model == SYNTHETIC_MODEL:
                    flags |= _SYNTHETIC
                    if raw.get("isApiErrorMessage") is True:
                        flags &= ~_REACHES
                elif not model.startswith("<"):
                    self.model = model
            usage = message.get("usage")
            if type(usage) is dict:
                flags |= _USAGE
                fresh = usage.get("input_tokens")
                made = usage.get("cache_creation_input_tokens")
                read = usage.get("cache_read_input_tokens")
                out = usage.get("output_tokens")
                fresh = fresh if type(fresh) is int else 0
                read = read if type(read) is int else 0
                out = out if type(out) is int else 0
                total = fresh + read + out + (made if type(made) is int else 0)
                usages.extend((total, fresh, out, read))
                if not (type(message_id) is str and message_id):
                    key = raw.get("requestId") or uuid
                    if isinstance(key, str):
                        self.request[node] = key
            else:
                usages.extend(_ZERO4)
            flag_of.append(flags)
            unit = message_id or raw.get("requestId") or uuid
            if type(unit) is not str:
                unit = None
            take((index, "assistant", unit, (block,)))
        return index + 1

    def _stamp(self, node: int) -> float:
        value = _timestamp(self.stamps[node])
        return value if value is not None else float("-inf")

    # ---- the chain

    def finish(self) -> StreamedView:
        for node, uuid in self.pending.items():
            self.parent[node] = self.node.get(uuid, _MISSING)
        chain, zeroed = self._chain()
        flags, record, kinds, usage = self.flags, self.record, self.kind, self.usage
        context = array("l", [record[n] for n in chain if flags[n] & _REACHES])
        last: dict[str, int] = {}  # usage key -> its last node (in the key's first place)
        units, request = self.unit, self.request
        for node in chain:
            if kinds[node] != _ASSISTANT or node in zeroed:
                continue
            if flags[node] & _SYNTHETIC or not flags[node] & _USAGE or usage[node * 4] == 0:
                continue
            last[units[node] or request.get(node) or f"#{record[node]}"] = node
        found = [
            Usage(
                index=record[node],
                context=usage[node * 4],
                input=usage[node * 4 + 1],
                output=usage[node * 4 + 2],
                cached=usage[node * 4 + 3],
                key=key,
            )
            for key, node in last.items()
        ]
        return StreamedView(context=context, usage=found, model=self.model)

    def _chain(self) -> tuple[Sequence[int], set[int]]:
        alive = bytearray(b"\x01") * len(self.record)
        parent = self.parent  # mutated by the relink, as the loader does
        preserved = self._relink(alive, parent)
        leaf = self._leaf(alive, parent)
        if leaf is None:  # a subagent's transcript: every record is a sidechain
            leaf = self._leaf(alive, parent, sidechains=True)
        if leaf is None:
            return [], set()
        walk = array("l")
        seen = bytearray(len(self.record))  # on the walk (small, where a set of ints is not)
        current = leaf
        while current >= 0 and alive[current] and not seen[current]:
            seen[current] = 1
            walk.append(current)
            current = parent[current]
        walk.reverse()
        chain = self._recover(alive, parent, walk, seen)
        zeroed = {n for n in preserved if self.kind[n] == _ASSISTANT}
        return chain, zeroed

    def _sort_stamp(self, node: int) -> str:
        """The timestamp as the loader sorts recovered records: as a string."""
        value = self.stamps[node]
        return value if isinstance(value, str) else ""

    def _resolve(self, uuid: Any) -> int:
        if not isinstance(uuid, str):
            return _ROOT
        return self.node.get(uuid, _MISSING)

    def _relink(self, alive: bytearray, parent: array[int]) -> set[int]:
        last_seg: tuple[Any, Any, Any] | None = None
        last_seg_pos = last_boundary_pos = -1
        for node in range(len(self.record)):
            if self.kind[node] == _BOUNDARY:
                last_boundary_pos = node
                if node in self.segments:
                    last_seg, last_seg_pos = self.segments[node], node
        if last_seg is None:
            return set()
        head_uuid, anchor_uuid, tail_uuid = last_seg
        preserved: set[int] = set()
        if last_seg_pos == last_boundary_pos:
            head = self._resolve(head_uuid) if isinstance(head_uuid, str) else _MISSING
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
            for node in range(len(parent)):
                if node != head and self._same_parent(node, parent, anchor, anchor_uuid):
                    parent[node] = tail
        for node in range(last_boundary_pos):
            if node not in preserved:
                alive[node] = 0
        return preserved

    def _same_parent(self, node: int, parent: array[int], anchor: int, anchor_uuid: Any) -> bool:
        """Whether `node`'s parent is the anchor uuid (even one that is not a chain record)."""
        if not isinstance(anchor_uuid, str):
            return parent[node] == _ROOT
        if anchor >= 0:
            return parent[node] == anchor
        return parent[node] == _MISSING and self.pending.get(node) == anchor_uuid

    def _leaf(self, alive: bytearray, parent: array[int], sidechains: bool = False) -> int | None:
        has_child = bytearray(len(parent))
        for node, above in enumerate(parent):
            if above >= 0 and alive[node]:
                has_child[above] = 1
        terminals = [n for n, flag in enumerate(has_child) if not flag and alive[n]]
        best: int | None = None
        best_key = (float("-inf"), -1)
        for node in terminals:
            seen: set[int] = set()
            current = node
            while current >= 0 and alive[current] and current not in seen:
                seen.add(current)
                if self.kind[current] in (_USER, _ASSISTANT):
                    if sidechains or not self.flags[current] & _SIDECHAIN:
                        key = (self._stamp(current), self.record[current])
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
            if kind[node] == _ASSISTANT:
                if unit[node] in groups:
                    return True
            elif kind[node] == _USER and flags[node] & _RESULTS:
                above = parent[node]
                if above >= 0 and chain[above] and kind[above] == _ASSISTANT:
                    return True
                if above == _MISSING:
                    return True  # answers a record not seen: let the full search decide
        return False

    def _recover(
        self, alive: bytearray, parent: array[int], chain: Sequence[int], on_chain: bytearray
    ) -> Sequence[int]:
        unit = self.unit
        anchors: dict[str, int] = {}
        for node in chain:
            if self.kind[node] == _ASSISTANT and unit[node]:
                anchors[unit[node] or ""] = node
        if not anchors:
            return chain
        if not self._anything_lost(alive, parent, on_chain, set(anchors)):
            return chain
        seen = set(chain)
        siblings: dict[str, list[int]] = {}
        results: dict[Any, list[int]] = {}
        for node in range(len(self.record)):
            if not alive[node]:
                continue
            kind = self.kind[node]
            if kind == _ASSISTANT:
                message_id = unit[node]
                if message_id:
                    siblings.setdefault(message_id, []).append(node)
            elif kind == _USER and parent[node] != _ROOT and self.flags[node] & _RESULTS:
                key: Any = parent[node] if parent[node] >= 0 else self.pending.get(node)
                results.setdefault(key, []).append(node)
        inserts: dict[int, list[int]] = {}
        done: set[str] = set()
        for node in chain:
            message_id = unit[node] if self.kind[node] == _ASSISTANT else None
            if not message_id or message_id in done:
                continue
            done.add(message_id)
            group = siblings.get(message_id, [node])
            lost_siblings = [s for s in group if s not in seen]
            lost_results = [r for m in group for r in results.get(m, []) if r not in seen]
            if not lost_siblings and not lost_results:
                continue
            lost_siblings.sort(key=lambda n: self._sort_stamp(n))
            lost_results.sort(key=lambda n: self._sort_stamp(n))
            recovered = lost_siblings + lost_results
            seen.update(recovered)
            inserts[anchors[message_id]] = recovered
        if not inserts:
            return chain
        out: list[int] = []
        for node in chain:
            out.append(node)
            out.extend(inserts.get(node, ()))
        return out
