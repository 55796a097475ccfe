"""Claude Code record kinds, and the parsing of one record into its message (FORMATS.md §1).

The record-type sets (`CHAIN_TYPES`, `LEGACY_TYPES`, `METADATA_TYPES`, `SILENT_ATTACHMENTS`) and
the envelope keys a written record copies (`ENVELOPE_KEYS`); `_record_message`, which makes the
`Message` of one record, and its lighter readings, which agree with it record for record:
`_record_lite` (the same checks and errors without making the message), `_light_block` (common
blocks as plain values), `_reaches_model` (whether a record is sent to the model when it is on
the chain) and `_unit` (an assistant message's unit)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any, NamedTuple

import orjson

from compactcli.formats.base import LightBlock
from compactcli.images import ImageSize, source_size
from compactcli.transcript import Block, BlockKind, JsonPath, Message

CHAIN_TYPES = frozenset({"user", "assistant", "system", "attachment"})
"""Record types Claude Code loads into its uuid map (`isTranscriptMessage`)."""

LEGACY_TYPES = frozenset({"progress"})
"""Chain records written by older CLIs that the loader bridges over."""

_DAG_TYPES = CHAIN_TYPES | LEGACY_TYPES

META = "meta"
"""The `name` of a text block of a user record Claude Code marks `isMeta`: text it put there (a
skill's body, a command's expansion, a caveat), not what the person typed."""
METADATA_TYPES = frozenset(
    {
        "summary",
        "custom-title",
        "ai-title",
        "last-prompt",
        "task-summary",
        "tag",
        "agent-name",
        "agent-color",
        "agent-setting",
        "pr-link",
        "mode",
        "permission-mode",
        "worktree-state",
        "content-replacement",
        "file-history-snapshot",
        "attribution-snapshot",
        "queue-operation",
        "speculation-accept",
        "marble-origami-commit",
        "marble-origami-snapshot",
    }
)
"""Record types that live outside the chain (FORMATS.md §1.1)."""

SILENT_ATTACHMENTS = frozenset(
    {
        "already_read_file",
        "command_permissions",
        "edited_image_file",
        "hook_cancelled",
        "hook_error_during_execution",
        "hook_non_blocking_error",
        "hook_system_message",
        "structured_output",
        "hook_permission_decision",
        # legacy types the loader still accepts and drops
        "autocheckpointing",
        "background_task_status",
        "todo",
        "task_progress",
        "ultramemory",
    }
)
"""Attachment types that Claude Code never sends to the model."""

SYNTHETIC_MODEL = "<synthetic>"
ENVELOPE_KEYS = (
    "userType",
    "entrypoint",
    "cwd",
    "sessionId",
    "version",
    "gitBranch",
    "slug",
    "agentId",
)
"""The envelope fields a record we write copies from the record it follows."""
_CALL_TYPES = frozenset({"tool_use"})


# --------------------------------------------------------------------------------------------
# Small helpers


def _dump(value: Any) -> str:
    return orjson.dumps(value).decode("utf-8")


_JSON_SECOND = {"[": frozenset(' \t\n\r"{[]-0123456789tfn'), "{": frozenset(' \t\n\r"}')}
"""What may follow the opening bracket of a JSON array or object."""


def _looks_json(text: str) -> bool:
    """True when `text` is a JSON object or array (structured tool output)."""
    if not text or (text[0] not in "{[" and not text[0].isspace()):
        return False  # as below, without copying the text
    stripped = text.strip()
    if len(stripped) < 2 or stripped[0] not in "{[" or stripped[-1] not in "}]":
        return False
    if stripped[1] not in _JSON_SECOND[stripped[0]]:
        return False  # "[Tool result cleared ...]" and the like: no need to try parsing it
    try:
        return isinstance(orjson.loads(stripped), dict | list)
    except orjson.JSONDecodeError:
        return False


def _strings(value: Any) -> Iterator[str]:
    """The string leaves of a JSON value, depth first, leaving out `type` tags."""
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(v for k, v in reversed(item.items()) if k != "type")
        elif isinstance(item, list):
            stack.extend(reversed(item))


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _timestamp(value: Any) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value).timestamp()
    except ValueError:
        return None


def _attachment_reaches_model(attachment: Mapping[str, Any]) -> bool:
    """Whether Claude Code's `normalizeAttachmentForAPI` makes a message of this attachment.

    Unknown (newer) types count as reaching the model: new attachment types are injected
    context far more often than display-only, and over-counting context is the safe side.
    """
    if attachment.get("capsuleReceipt"):
        return False
    kind = attachment.get("type")
    if isinstance(kind, str) and kind in SILENT_ATTACHMENTS:
        return False
    if kind == "hook_success":
        return (
            attachment.get("hookEvent") in ("SessionStart", "UserPromptSubmit")
            and attachment.get("content") != ""
        )
    if kind == "hook_additional_context":
        return bool(attachment.get("content"))
    return True


def _unit(raw: Mapping[str, Any], message: Mapping[str, Any]) -> str | None:
    """The `Message.unit` of an assistant record: `message.id`, else `requestId`, else the
    uuid (None when the first of them that is set is not a string)."""
    unit = message.get("id") or raw.get("requestId") or raw.get("uuid")
    return unit if isinstance(unit, str) else None


def _message_id(raw: Mapping[str, Any]) -> str | None:
    message = raw.get("message")
    if isinstance(message, dict):
        value = message.get("id")
        if isinstance(value, str) and value:
            return value
    return None


# --------------------------------------------------------------------------------------------
# Blocks and messages


class _ShapeError(Exception):
    """A record of a known type with an impossible shape (line given by the caller)."""


def _tool_result_block(item: Mapping[str, Any], path: JsonPath, names: Mapping[str, str]) -> Block:
    call_id = item.get("tool_use_id")
    if not isinstance(call_id, str):
        raise _ShapeError(f"tool_result at {_where(path)} has no string tool_use_id")
    content = item.get("content")
    images: list[ImageSize | None] = []
    if content is None:
        text, is_json = "", False
    elif isinstance(content, str):
        text, is_json = content, _looks_json(content)
    elif isinstance(content, list):
        parts: list[str] = []
        for position, part in enumerate(content):
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict):
                kind = part.get("type")
                if kind == "text" and isinstance(part.get("text"), str):
                    parts.append(part["text"])
                elif kind in ("image", "document"):
                    images.append(source_size(part))
                else:
                    parts.append(_dump(part))
            else:
                raise _ShapeError(
                    f"tool_result content item {_where((*path, 'content', position))} "
                    f"is {_kind_of(part)}"
                )
        text = "\n".join(parts)
        is_json = _looks_json(text)
    else:
        raise _ShapeError(f"tool_result content at {_where(path)} is {_kind_of(content)}")
    return Block(
        kind="tool_result",
        text=text,
        json=is_json,
        call_id=call_id,
        name=names.get(call_id),
        is_error=item.get("is_error") is True,
        type="tool_result",
        path=path,
        images=tuple(images),
    )


def _block(item: Any, path: JsonPath, names: dict[str, str]) -> Block:
    if isinstance(item, str):
        return Block(kind="text", text=item, type="text", path=path)
    if not isinstance(item, dict):
        raise _ShapeError(f"content block {_where(path)} is {_kind_of(item)}")
    kind = item.get("type")
    if kind == "text":
        text = item.get("text", "")
        if not isinstance(text, str):
            raise _ShapeError(f"text block {_where(path)} has text that is {_kind_of(text)}")
        return Block(kind="text", text=text, type="text", path=path)
    if kind == "thinking":
        thinking = item.get("thinking", "")
        return Block(
            kind="thinking",
            text=thinking if isinstance(thinking, str) else "",
            type="thinking",
            path=path,
        )
    if kind == "redacted_thinking":
        data = item.get("data", "")
        return Block(
            kind="thinking",
            text=data if isinstance(data, str) else "",
            type="redacted_thinking",
            path=path,
        )
    if isinstance(kind, str) and kind in _CALL_TYPES:
        call_id = item.get("id")
        name = item.get("name")
        if not isinstance(call_id, str) or not isinstance(name, str):
            raise _ShapeError(f"tool_use {_where(path)} needs a string id and name")
        arguments = item.get("input")
        names[call_id] = name
        return Block(
            kind="tool_call",
            text=_dump(arguments if arguments is not None else {}),
            json=True,
            call_id=call_id,
            name=name,
            arguments=arguments,
            type="tool_use",
            path=path,
        )
    if kind == "tool_result":
        return _tool_result_block(item, path, names)
    if kind in ("image", "document"):
        block_kind: BlockKind = "image" if kind == "image" else "document"
        return Block(kind=block_kind, type=kind, path=path, images=(source_size(item),))
    # server_tool_use, web_search_tool_result, tool_reference, unknown: opaque, counted as JSON
    return Block(
        kind="other",
        text=_dump(item),
        json=True,
        type=kind if isinstance(kind, str) else "",
        path=path,
    )


def _where(path: JsonPath) -> str:
    return ".".join(str(p) for p in path)


def _blocks(content: Any, base: JsonPath, names: dict[str, str]) -> tuple[Block, ...]:
    if isinstance(content, str):
        return (Block(kind="text", text=content, type="text", path=base),)
    if isinstance(content, list):
        if len(content) == 1:  # the common case, made without a loop
            return (_block(content[0], (*base, 0), names),)
        return tuple([_block(item, (*base, i), names) for i, item in enumerate(content)])
    raise _ShapeError(f"{_where(base)} is {_kind_of(content)}, not a string or an array")


def _record_message(index: int, raw: Mapping[str, Any], names: dict[str, str]) -> Message | None:
    """The message of one user, assistant, attachment or `system/local_command` record, or None
    for any other record, or an attachment that never reaches the model. Each tool call's name
    is noted in `names`, so later results can be named; a record of a known type with an
    impossible shape raises `_ShapeError`."""
    kind = raw.get("type")
    uuid = raw.get("uuid") if isinstance(raw.get("uuid"), str) else None
    if kind in ("user", "assistant"):
        message = raw.get("message")
        if not isinstance(message, dict):
            raise _ShapeError(f"{kind} record: message is {_kind_of(message)}, not an object")
        if "content" not in message:
            raise _ShapeError(f"{kind} record: message has no content")
        blocks = _blocks(message["content"], ("message", "content"), names)
        if kind == "user":
            if raw.get("isMeta") is True:  # text Claude Code put there, not the person
                blocks = tuple(
                    replace(b, name=META) if b.kind == "text" and not b.name else b for b in blocks
                )
            return Message(
                index=index,
                role="user",
                blocks=blocks,
                id=uuid,
                summary=raw.get("isCompactSummary") is True,
                path=("message",),
            )
        model = message.get("model")
        return Message(
            index=index,
            role="assistant",
            blocks=blocks,
            id=uuid,
            unit=_unit(raw, message),
            model=model if isinstance(model, str) else None,
            path=("message",),
        )
    if kind == "attachment":
        attachment = raw.get("attachment")
        if not isinstance(attachment, dict):
            raise _ShapeError(f"attachment record: attachment is {_kind_of(attachment)}")
        if not _attachment_reaches_model(attachment):
            return None
        subtype = attachment.get("type")
        block = Block(
            kind="other",
            text="\n".join(_strings(attachment)),
            type="attachment",
            name=subtype if isinstance(subtype, str) else None,
            path=("attachment",),
        )
        return Message(index=index, role="user", blocks=(block,), id=uuid, path=())
    if kind == "system" and raw.get("subtype") == "local_command":
        content = raw.get("content", "")
        blocks = _blocks(content, ("content",), names)
        return Message(index=index, role="user", blocks=blocks, id=uuid, path=())
    return None


_Item = tuple[bool, str, "str | None"]
"""A tool call (True, id, name) or a tool result (False, call id, the tool name looked up)."""


class _Lite(NamedTuple):
    """A record's message left unmade (`_record_lite`): what the checks read of it, and what
    making it later needs. `items` are its tool calls and results in block order; a result's
    name is the one `_record_message` looks up (that of the last call with its id before)."""

    role: str
    model: str | None
    items: tuple[_Item, ...]

    @property
    def calls(self) -> list[tuple[str, str | None]]:
        return [(call_id, name) for call, call_id, name in self.items if call]

    @property
    def results(self) -> list[tuple[str, str | None]]:
        return [(call_id, name) for call, call_id, name in self.items if not call]

    def make(self, index: int, raw: Mapping[str, Any]) -> Message:
        """The message `_record_message` makes of `raw` at `index` (it was parsed the same)."""
        names = {call_id: name for call_id, name in self.results if name is not None}
        message = _record_message(index, raw, names)
        assert message is not None
        return message


def _record_lite(raw: Mapping[str, Any], names: dict[str, str]) -> _Lite | None:
    """What `_record_message` reads of a record, without making its message: the same
    `_ShapeError` for the same record, the same calls noted in `names`, None for the same
    records, and a `_Lite` for the others (`_Lite.make` makes their message when it is asked
    for). For the records that only the checks read, which need no text (tests compare the
    two on generated records)."""
    kind = raw.get("type")
    if kind == "user" or kind == "assistant":
        message = raw.get("message")
        if type(message) is not dict:
            raise _ShapeError(f"{kind} record: message is {_kind_of(message)}, not an object")
        if "content" not in message:
            raise _ShapeError(f"{kind} record: message has no content")
        items = _lite_blocks(message["content"], ("message", "content"), names)
        if kind == "user":
            return _Lite("user", None, items) if items else _USER_LITE
        model = message.get("model")
        if type(model) is not str:
            model = None
        if items:
            return _Lite("assistant", model, items)
        lite = _ASSISTANT_LITES.get(model)
        if lite is None:
            lite = _Lite("assistant", model, ())
            if len(_ASSISTANT_LITES) < _MODELS_KEPT:
                _ASSISTANT_LITES[model] = lite
        return lite
    if kind == "attachment":
        attachment = raw.get("attachment")
        if not isinstance(attachment, dict):
            raise _ShapeError(f"attachment record: attachment is {_kind_of(attachment)}")
        return _USER_LITE if _attachment_reaches_model(attachment) else None
    if kind == "system" and raw.get("subtype") == "local_command":
        items = _lite_blocks(raw.get("content", ""), ("content",), names)
        return _Lite("user", None, items) if items else _USER_LITE
    return None


_USER_LITE = _Lite("user", None, ())
_ASSISTANT_LITES: dict[str | None, _Lite] = {}
"""The lite of an assistant message without tool calls, by model (they are alike), for the
first `_MODELS_KEPT` models a process meets."""
_MODELS_KEPT = 64


def _lite_blocks(content: Any, base: JsonPath, names: dict[str, str]) -> tuple[_Item, ...]:
    """The calls and results of `_blocks(content, base, names)`, with its checks, in order."""
    if type(content) is not list:
        if isinstance(content, str):
            return ()
        if not isinstance(content, list):
            raise _ShapeError(f"{_where(base)} is {_kind_of(content)}, not a string or an array")
    items: tuple[_Item, ...] = ()
    for i, item in enumerate(content):
        if type(item) is not dict:
            if isinstance(item, str):
                continue
            if not isinstance(item, dict):
                raise _ShapeError(f"content block {_where((*base, i))} is {_kind_of(item)}")
        kind = item.get("type")
        if kind == "tool_result":
            call_id = item.get("tool_use_id")
            if type(call_id) is not str:
                raise _ShapeError(f"tool_result at {_where((*base, i))} has no string tool_use_id")
            parts = item.get("content")
            if type(parts) is list:
                for position, part in enumerate(parts):
                    if not isinstance(part, (str, dict)):  # (a tuple: faster than a union)
                        path = (*base, i, "content", position)
                        raise _ShapeError(
                            f"tool_result content item {_where(path)} is {_kind_of(part)}"
                        )
            elif parts is not None and not isinstance(parts, str):
                raise _ShapeError(
                    f"tool_result content at {_where((*base, i))} is {_kind_of(parts)}"
                )
            items += ((False, call_id, names.get(call_id)),)
        elif kind == "tool_use":  # (_CALL_TYPES, without hashing a type of any kind)
            call_id = item.get("id")
            name = item.get("name")
            if type(call_id) is not str or type(name) is not str:
                raise _ShapeError(f"tool_use {_where((*base, i))} needs a string id and name")
            names[call_id] = name
            items += ((True, call_id, name),)
        elif kind == "text":
            text = item.get("text", "")
            if not isinstance(text, str):
                raise _ShapeError(
                    f"text block {_where((*base, i))} has text that is {_kind_of(text)}"
                )
    return items


def _reaches_model(raw: Mapping[str, Any]) -> bool:
    """Whether a record with a message is sent to the model when it is on the chain."""
    if raw.get("isVirtual") is True:
        return False
    if raw.get("type") == "assistant" and raw.get("isApiErrorMessage") is True:
        message = raw.get("message")
        return not (isinstance(message, dict) and message.get("model") == SYNTHETIC_MODEL)
    return True


# --------------------------------------------------------------------------------------------
# The common blocks as plain values


def _light_block(item: Mapping[str, Any], names: dict[str, str]) -> LightBlock | None:
    """`_block` as plain values for the common block shapes (`LightBlock`, the same as `_block`
    makes of them); None for anything else."""
    kind = item.get("type")
    if kind == "text":
        text = item.get("text", "")
        return ("text", text, False, None, ()) if isinstance(text, str) else None
    if kind == "tool_result":
        call_id = item.get("tool_use_id")
        content = item.get("content")
        if not isinstance(call_id, str) or not isinstance(content, str):
            return None
        return ("tool_result", content, _looks_json(content), names.get(call_id), ())
    if kind == "tool_use":
        call_id = item.get("id")
        name = item.get("name")
        if not isinstance(call_id, str) or not isinstance(name, str):
            return None
        names[call_id] = name
        arguments = item.get("input")
        return ("tool_call", _dump(arguments if arguments is not None else {}), True, name, ())
    if kind == "thinking":
        thinking = item.get("thinking", "")
        return ("thinking", thinking if isinstance(thinking, str) else "", False, None, ())
    return None
