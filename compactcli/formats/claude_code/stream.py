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
from compactcli.formats.claude_code.chain import _SK_KIND, _SK_REACHES, _add_node, _skeleton
from compactcli.formats.claude_code.chain_nodes import ChainNodes
from compactcli.formats.claude_code.records import (
    _DAG_TYPES,
    _light_block,
    _record_message,
    _ShapeError,
    _unit,
)
from compactcli.formats.claude_code.usage import chain_usage, usage_entry
from compactcli.transcript import Message, Record

_REACHES, _USAGE = 4, 8  # flag bits of the streamer's own, beside the table's
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
        self._map(index, raw, message is not None)
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
            self._map(index, raw, found is not None)
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
        return (index, "assistant", _unit(raw, message), tuple(blocks))

    def _slow(self, index: int, raw: Any, lineno: int) -> LightMessage:
        try:
            message = _record_message(index, raw, self.names)
        except _ShapeError as error:
            raise InputError(self.source, lineno, str(error)) from None
        assert message is not None  # user and assistant records are always messages
        if message.model and not message.model.startswith("<"):
            self.model = message.model
        return light(message)

    def _map(self, index: int, raw: Mapping[str, Any], is_message: bool) -> None:
        """Map a chain or progress record into `nodes` (`_add_node`, as the loader maps it),
        and keep an assistant record's usage (`usage_entry`)."""
        skeleton = _skeleton(raw)
        flags = _REACHES if is_message and skeleton[_SK_REACHES] else 0
        node = _add_node(self.nodes, index, skeleton, flags, self.interned)
        if node is None:
            return
        entry = usage_entry(raw) if skeleton[_SK_KIND] == "assistant" else None
        values = _ZERO4 if entry is None else entry[1]
        slot = node * 4
        if slot == len(self.usage):
            self.usage.extend(values)
        else:  # a later duplicate replaces the earlier record
            self.usage[slot : slot + 4] = array("q", values)
            self.request.pop(node, None)
        if entry is not None:
            self.nodes.flags[node] |= _USAGE
            key = entry[0]
            if key is not None and self.nodes.unit[node] is None:
                self.request[node] = key

    def finish(self) -> StreamedView:
        nodes = self.nodes
        chain, zeroed = nodes.build()
        flags, record, usage = nodes.flags, nodes.record, self.usage
        context = array("l", [record[n] for n in chain if flags[n] & _REACHES])
        units, request = nodes.unit, self.request
        found = chain_usage(
            (
                record[node],
                units[node] or request.get(node),
                (usage[node * 4], usage[node * 4 + 1], usage[node * 4 + 2], usage[node * 4 + 3]),
            )
            for node in chain
            if flags[node] & _USAGE and node not in zeroed
        )
        return StreamedView(context=context, usage=found, model=self.model)
