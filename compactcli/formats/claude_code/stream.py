"""`ClaudeCodeStreamer`: the claude-code dialect's views, fed one record at a time.

Each record's message is returned as its record arrives (a `Message` from `add`; plain values
from `add_light`, equal to `light` of that message); each chain record and progress
record is mapped into a `ChainNodes` table as it arrives, and each assistant record's usage kept
by its node; `finish` builds the context chain of that table (`ChainNodes.build`, the rules the
dialect's views use) and gives the same context, usage and model as `ClaudeCodeDialect`'s views
of the whole transcript.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from typing import Any

from compactcli.errors import InputError
from compactcli.formats.base import LightBlock, LightMessage, StreamedView, Streamer, light
from compactcli.formats.claude_code.chain_nodes import (
    ASSISTANT,
    BOUNDARY,
    OTHER,
    RESULTS,
    SIDECHAIN,
    USER,
    ChainNodes,
    Segment,
)
from compactcli.formats.claude_code.records import (
    _DAG_TYPES,
    CHAIN_TYPES,
    LEGACY_TYPES,
    SYNTHETIC_MODEL,
    _light_block,
    _record_message,
    _ShapeError,
)
from compactcli.transcript import Message, Record, Usage

_REACHES, _SYNTHETIC, _USAGE = 4, 8, 16  # flag bits of the streamer's own, beside the table's
_ZERO4 = (0, 0, 0, 0)
_ABSENT = object()


class _Once(dict[str, str]):
    """Tool names by call id, each forgotten once a result has asked for it."""

    def get(self, key: str, default: Any = None) -> Any:
        return self.pop(key, default)


class ClaudeCodeStreamer(Streamer):
    """`ClaudeCodeDialect`'s views, fed one record at a time.

    Messages are returned as their records arrive (`add_light` gives the same messages as
    plain values, without building views). Each chain record and progress record is mapped
    into `nodes` (a few integers, its timestamp string and its uuid in one dict), and each
    assistant record's usage kept by its node; `finish` builds the chain of `nodes` by the
    rules `ClaudeCodeDialect.context` and `usage` use, and reads the views off it.
    """

    light = True

    def __init__(self, source: str = "-") -> None:
        self.source = source
        self.names = _Once()
        self.nodes = ChainNodes()
        self.usage = array("q")  # per node: total, input, output, cached
        self.request: dict[int, str] = {}  # node -> usage key when there is no message.id
        self.interned: dict[str, str] = {}  # message.id values, one string each
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
        if kind == "user" and raw.get("isMeta") is True:  # its text named as the views name it
            return self._slow(index, raw, lineno)
        message = raw.get("message")
        content = message.get("content", _ABSENT) if isinstance(message, dict) else _ABSENT
        blocks: list[LightBlock] = []
        if isinstance(content, str):
            blocks.append(("text", content, False, None, ()))
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
        """Map a chain or progress record into `nodes`, and keep an assistant record's usage."""
        uuid = raw.get("uuid")
        if type(uuid) is not str:
            return
        parent = raw.get("parentUuid")
        if type(parent) is not str:
            parent = None
        if kind in LEGACY_TYPES:
            self.nodes.add_progress(uuid, parent)
            return
        if kind not in CHAIN_TYPES:
            return
        flags = _REACHES if is_message and raw.get("isVirtual") is not True else 0
        code = OTHER
        unit: str | None = None
        segment: Segment | None = None
        usage: tuple[int, int, int, int] = _ZERO4
        request: Any = None
        if kind == "user":
            code = USER
            message = raw.get("message")
            content = message.get("content") if type(message) is dict else None
            if type(content) is list:
                for block in content:
                    if type(block) is dict and block.get("type") == "tool_result":
                        flags |= RESULTS
                        break
        elif kind == "assistant":
            code = ASSISTANT
            message = raw.get("message")
            if type(message) is dict:
                message_id = message.get("id")
                if type(message_id) is str and message_id:
                    unit = self.interned.setdefault(message_id, message_id)
                if message.get("model") == SYNTHETIC_MODEL:
                    flags |= _SYNTHETIC
                    if raw.get("isApiErrorMessage") is True:
                        flags &= ~_REACHES
                found = message.get("usage")
                if type(found) is dict:
                    flags |= _USAGE
                    usage = _usage_values(found)
                    if unit is None:
                        request = raw.get("requestId") or uuid
        elif kind == "system" and raw.get("subtype") == "compact_boundary":
            code = BOUNDARY
            metadata = raw.get("compactMetadata")
            seg = metadata.get("preservedSegment") if isinstance(metadata, dict) else None
            if isinstance(seg, dict):
                segment = (seg.get("headUuid"), seg.get("anchorUuid"), seg.get("tailUuid"))
        if raw.get("isSidechain") is True:
            flags |= SIDECHAIN
        node = self.nodes.add(index, uuid, parent, code, flags, raw.get("timestamp"), unit, segment)
        slot = node * 4
        if slot == len(self.usage):
            self.usage.extend(usage)
        else:  # a later duplicate replaces the earlier record
            self.usage[slot : slot + 4] = array("q", usage)
            self.request.pop(node, None)
        if isinstance(request, str):
            self.request[node] = request

    def finish(self) -> StreamedView:
        nodes = self.nodes
        chain, zeroed = nodes.build()
        flags, record, kinds, usage = nodes.flags, nodes.record, nodes.kind, self.usage
        context = array("l", [record[n] for n in chain if flags[n] & _REACHES])
        last: dict[str, int] = {}  # usage key -> its last node (in the key's first place)
        units, request = nodes.unit, self.request
        for node in chain:
            if kinds[node] != ASSISTANT or node in zeroed:
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


def _usage_values(usage: Mapping[str, Any]) -> tuple[int, int, int, int]:
    """(total, input, output, cache read) tokens of a `message.usage` object: the total is the
    context the request held, its input, cache writes, cache reads and output."""
    fresh = usage.get("input_tokens")
    made = usage.get("cache_creation_input_tokens")
    read = usage.get("cache_read_input_tokens")
    out = usage.get("output_tokens")
    fresh = fresh if type(fresh) is int else 0
    read = read if type(read) is int else 0
    out = out if type(out) is int else 0
    return fresh + read + out + (made if type(made) is int else 0), fresh, out, read
