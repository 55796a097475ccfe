"""The claude-code dialect: Claude Code session transcripts (FORMATS.md §1 and §6).

A Claude Code session file holds records of two families. Chain records (`user`, `assistant`,
`system`, `attachment`, and legacy `progress`) carry `uuid` and `parentUuid` and form a DAG;
metadata records (`summary`, `custom-title`, `ai-title`, `last-prompt`, `file-history-snapshot`,
`queue-operation`, `mode`, `permission-mode`, `content-replacement`, ...) sit outside it. Unknown
record types and unknown keys pass through: the views ignore them.

What each view means here:

- `messages(t)`: every message in file order, one `Message` per record, on every branch and
  sidechain (`isSidechain: true` records are listed too; they reach `context` only in a file that
  holds nothing else, a subagent's own transcript). A `user` record is a user message (string
  content is one text block; tool results are `tool_result` blocks of a user message); an
  `assistant` record is one streamed content block of an API response, and `Message.unit` is its
  `message.id` (else `requestId`, else the uuid), so the records of one response form one atomic
  unit. An `attachment` record is injected context that Claude Code sends to the model as a user
  message, except the attachment types its `normalizeAttachmentForAPI` turns into nothing
  (`SILENT_ATTACHMENTS`, `hook_success` other than SessionStart/UserPromptSubmit, empty hook
  output); it is a user message with one `other` block (`type` "attachment", `name` the attachment
  type, `text` its string fields). A `system/local_command` record is sent to the model as a user
  message, so it is one here; every other `system` record (`compact_boundary`, `turn_duration`,
  ...) and `progress` is not a message. A user record with `isCompactSummary: true` has
  `summary=True`. A tool result's `name` is the name of the `tool_use` it answers, looked up
  earlier in the file.
- `context(t)`: the messages of the chain Claude Code rebuilds on resume (`loadTranscriptFile` and
  `buildConversationChain`): every chain record goes into a map by uuid (a later duplicate
  replaces an earlier one), legacy `progress` records are bridged over, the newest
  `preservedSegment` is spliced in (head re-parented onto the summary, the summary's other
  children onto the tail, everything physically before the last boundary dropped), the leaf is the
  newest terminal user/assistant record that is not a sidechain (in a subagent's transcript,
  `subagents/agent-<id>.jsonl`, where every record is one, the newest of those), and the walk goes
  from the leaf back to the root; it stops at a `compact_boundary` (parentUuid null). Parallel
  siblings and tool results that the single-parent walk misses are put back after their group. Of
  that chain, the records that reach the model are returned: user and assistant records (not the
  `<synthetic>` API-error assistant records, not `isVirtual` ones), attachments that reach the
  model and `local_command` records, in chain order (Claude Code later moves attachments up past
  plain user prompts and merges same-role neighbours; the set of messages is the same).
- `usage(t)`: one `Usage` per `message.id` (else `requestId`) on the context chain, from the last
  record of the group (the streamed records repeat the usage, and older versions raise
  `output_tokens` on the later ones); `<synthetic>` records, all-zero usage and the records of a
  spliced preserved segment (whose stale usage Claude Code zeroes on load) are skipped.
- `compactions(t)`: each `system/compact_boundary` with the text of its `isCompactSummary` child
  (`ours` when it carries a top-level `compactcli` key), plus any other record of ours that is
  not such a child; `microcompact_boundary` records (cleared tool output, no summary) are not
  compactions.
- `validate(t)`: see `ClaudeCodeDialect.validate` for the codes and the rule on unanswered calls.

Writing: `clear_result` also replaces the record's `toolUseResult` (the UI copy of the output);
`prune_boundary` writes a `system/microcompact_boundary` record, Claude Code's own marker for
cleared tool output, hung off the current leaf, with our details under `compactcli`.

`messages()` raises `InputError` for a chain record of a known type with an impossible shape;
`validate()` reports the same as `bad-shape` findings instead.
"""

from __future__ import annotations

import itertools
import operator
import re
import uuid as uuidlib
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, NamedTuple

import orjson

from compactcli.dialects.base import (
    Dialect,
    Finding,
    LightBlock,
    LightMessage,
    StreamedView,
    Streamer,
    check_unique,
    light,
)
from compactcli.errors import InputError
from compactcli.transcript import (
    Block,
    BlockKind,
    Compaction,
    JsonPath,
    Message,
    Record,
    Transcript,
    Usage,
    new_block,
    new_message,
    set_in,
)

CHAIN_TYPES = frozenset({"user", "assistant", "system", "attachment"})
"""Record types Claude Code loads into its uuid map (`isTranscriptMessage`)."""

LEGACY_TYPES = frozenset({"progress"})
"""Chain records written by older CLIs that the loader bridges over."""

_DAG_TYPES = CHAIN_TYPES | LEGACY_TYPES

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
_BOUNDARY_NAMESPACE = uuidlib.UUID("6f0c3c1e-2d1b-4f7a-9a52-1c4e8f3b7d20")
"""Namespace for the uuids of the boundary records compactcli writes (reproducible, v4-shaped)."""
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
INTERRUPT_PREFIX = "[Request interrupted by user"
_CALL_TYPES = frozenset({"tool_use"})
_USAGE_KEYS = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
)


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


def _is_boundary(raw: Mapping[str, Any]) -> bool:
    return raw.get("type") == "system" and raw.get("subtype") == "compact_boundary"


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


def _usage_total(usage: Mapping[str, Any]) -> int:
    total = 0
    for key in _USAGE_KEYS:
        value = usage.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            total += value
    return total


def _int(usage: Mapping[str, Any], key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _content_blocks(raw: Mapping[str, Any]) -> list[Any]:
    """`message.content` of a user/assistant record as a list (empty when it is not one)."""
    message = raw.get("message")
    if isinstance(message, dict):
        content = message.get("content")
        if isinstance(content, list):
            return content
    return []


def _is_real_prompt(raw: Mapping[str, Any]) -> bool:
    """A user turn typed by the person: not meta, not a summary, with content not a result."""
    if raw.get("type") == "attachment":
        attachment = raw.get("attachment")
        return isinstance(attachment, dict) and attachment.get("type") == "queued_command"
    if raw.get("type") != "user" or raw.get("isMeta") or raw.get("isCompactSummary"):
        return False
    message = raw.get("message")
    if not isinstance(message, dict):
        return False
    content = message.get("content")
    if isinstance(content, str):
        return bool(content.strip()) and not content.startswith(INTERRUPT_PREFIX)
    if isinstance(content, list):
        blocks = [b for b in content if isinstance(b, dict)]
        if not blocks or any(b.get("type") == "tool_result" for b in blocks):
            return False
        return not any(
            isinstance(b.get("text"), str) and b["text"].startswith(INTERRUPT_PREFIX)
            for b in blocks
        )
    return False


def _is_interrupt(raw: Mapping[str, Any]) -> bool:
    if raw.get("type") != "user":
        return False
    message = raw.get("message")
    if not isinstance(message, dict):
        return False
    content = message.get("content")
    if isinstance(content, str):
        return content.startswith(INTERRUPT_PREFIX)
    if isinstance(content, list):
        return any(
            isinstance(b, dict)
            and isinstance(b.get("text"), str)
            and b["text"].startswith(INTERRUPT_PREFIX)
            for b in content
        )
    return False


# --------------------------------------------------------------------------------------------
# Blocks and messages


class _ShapeError(Exception):
    """A record of a known type with an impossible shape (line given by the caller)."""


def _tool_result_block(item: Mapping[str, Any], path: JsonPath, names: Mapping[str, str]) -> Block:
    call_id = item.get("tool_use_id")
    if not isinstance(call_id, str):
        raise _ShapeError(f"tool_result at {_where(path)} has no string tool_use_id")
    content = item.get("content")
    images = 0
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
                    images += 1
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
    return new_block(
        kind="tool_result",
        text=text,
        json=is_json,
        call_id=call_id,
        name=names.get(call_id),
        is_error=item.get("is_error") is True,
        type="tool_result",
        path=path,
        images=images,
    )


def _block(item: Any, path: JsonPath, names: dict[str, str]) -> Block:
    if isinstance(item, str):
        return new_block(kind="text", text=item, type="text", path=path)
    if not isinstance(item, dict):
        raise _ShapeError(f"content block {_where(path)} is {_kind_of(item)}")
    kind = item.get("type")
    if kind == "text":
        text = item.get("text", "")
        if not isinstance(text, str):
            raise _ShapeError(f"text block {_where(path)} has text that is {_kind_of(text)}")
        return new_block(kind="text", text=text, type="text", path=path)
    if kind == "thinking":
        thinking = item.get("thinking", "")
        return new_block(
            kind="thinking",
            text=thinking if isinstance(thinking, str) else "",
            type="thinking",
            path=path,
        )
    if kind == "redacted_thinking":
        data = item.get("data", "")
        return new_block(
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
        return new_block(
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
        return new_block(kind=block_kind, type=kind, path=path)
    # server_tool_use, web_search_tool_result, tool_reference, unknown: opaque, counted as JSON
    return new_block(
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
        return (new_block(kind="text", text=content, type="text", path=base),)
    if isinstance(content, list):
        if len(content) == 1:  # the common case, made without a loop
            return (_block(content[0], (*base, 0), names),)
        return tuple([_block(item, (*base, i), names) for i, item in enumerate(content)])
    raise _ShapeError(f"{_where(base)} is {_kind_of(content)}, not a string or an array")


def _record_message(index: int, raw: Mapping[str, Any], names: dict[str, str]) -> Message | None:
    """The message of one record, or None when the record is not a message."""
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
            return new_message(
                index=index,
                role="user",
                blocks=blocks,
                id=uuid,
                summary=raw.get("isCompactSummary") is True,
                path=("message",),
            )
        model = message.get("model")
        unit = message.get("id") or raw.get("requestId") or uuid
        return new_message(
            index=index,
            role="assistant",
            blocks=blocks,
            id=uuid,
            unit=unit if isinstance(unit, str) else None,
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
        block = new_block(
            kind="other",
            text="\n".join(_strings(attachment)),
            type="attachment",
            name=subtype if isinstance(subtype, str) else None,
            path=("attachment",),
        )
        return new_message(index=index, role="user", blocks=(block,), id=uuid, path=())
    if kind == "system" and raw.get("subtype") == "local_command":
        content = raw.get("content", "")
        blocks = _blocks(content, ("content",), names)
        return new_message(index=index, role="user", blocks=blocks, id=uuid, path=())
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
# The chain


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
    leaf: str | None  # the uuid the walk started from


def _appended_quietly(old: Skeletons, chain: _Chain, new: Skeletons) -> bool:
    """Whether `new` is `old` with records appended that leave `old`'s chain as it is.

    Quiet records are those the chain rules skip (not objects, without a uuid, of a type the
    loader does not map), and system or attachment records that are not a boundary and hang off
    the chain's leaf, under uuids no record of `old` names (as its own or as a parent) and that
    the leaf is no preserved segment's end or anchor. Such a record is a new terminal whose walk
    reaches the leaf at once: the leaf stays the newest candidate, the walk from it and the
    records it recovers are the same. (Compaction's prune marker is one.)
    """
    count = len(old)
    leaf = chain.leaf
    if leaf is None or len(new) <= count or new[:count] != tuple(old):
        return False
    added: set[str] = set()
    for skeleton in new[count:]:
        if skeleton is None or skeleton[_SK_UUID] is None:
            continue
        kind = skeleton[_SK_KIND]
        if not isinstance(kind, str) or kind in LEGACY_TYPES:
            return False
        if kind not in CHAIN_TYPES:
            continue
        if kind in ("user", "assistant") or skeleton[_SK_BOUNDARY] or skeleton[_SK_PARENT] != leaf:
            return False
        if skeleton[_SK_UUID] in added:
            return False
        added.add(skeleton[_SK_UUID])
    for skeleton in old:
        if skeleton is None:
            continue
        if skeleton[_SK_UUID] in added or skeleton[_SK_PARENT] in added:
            return False
        segment = skeleton[_SK_SEGMENT]
        if segment is not None and leaf in segment:
            return False
    return True


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


def _message_id(raw: Mapping[str, Any]) -> str | None:
    message = raw.get("message")
    if isinstance(message, dict):
        value = message.get("id")
        if isinstance(value, str) and value:
            return value
    return None


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
        return _Chain(records=(), zeroed=frozenset(), leaf=None)
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
    return _Chain(records=tuple(index[u] for u in chain), zeroed=zeroed, leaf=leaf)


# --------------------------------------------------------------------------------------------
# The views of one transcript, remembered (`Transcript.view`) and reused across edits

_STATE = "claude-code.state"
_CONTEXT = "claude-code.context"
_USAGE_VIEW = "claude-code.usage"
_COMPACTIONS = "claude-code.compactions"
_FINDINGS = "claude-code.validate"
_RECENT_CHAINS = 4
"""How many chains (with their skeletons and uuid maps) a lineage of edited transcripts
remembers."""


@dataclass(slots=True)
class _State:
    """One transcript's parsed records: messages by record index, records with an impossible
    shape (index -> problem, in file order), the skeletons of the chain, and the chain once
    it is asked for. `where` finds a record by the identity of its JSON (`records` keeps
    those objects alive); `recent` is shared with the transcripts of the same lineage.

    A message may be held unmade (a `_Lite`) until `message` is asked for it: those of the
    records before the last compact boundary, which the context rarely reaches and the checks
    read no text of. Making one puts it in its place: the map is shared only by states whose
    record at that index is the same JSON object, so it is the same message for each."""

    records: tuple[Record, ...]
    where: dict[int, int]  # id(raw) -> record index
    messages: dict[int, Message | _Lite]  # in record order
    errors: dict[int, str]
    skeletons: tuple[Skeleton | None, ...]
    names: dict[str, str]  # tool name by call id, after every record
    recent: list[tuple[tuple[tuple[Any, ...] | None, ...], _Chain, _Graph]]
    chain: _Chain | None = None
    graph: _Graph | None = None  # the uuid map of `skeletons`, once made
    base: _Graph | None = None  # the uuid map of the skeletons these start with, if known

    def uuid_graph(self) -> _Graph:
        """The uuid map of `skeletons`, made once (the chain and the checks share it), by
        extending `base` when there is one."""
        if self.graph is None:
            self.graph = _graph(self.skeletons, self.base)
            self.base = None
        return self.graph

    def known_graph(self) -> _Graph | None:
        """The uuid map of these skeletons or of the ones they start with, if made."""
        return self.graph if self.graph is not None else self.base

    def message(self, index: int) -> Message | None:
        """The message of record `index` (None when it has none), made now if it was not."""
        entry = self.messages.get(index)
        if type(entry) is not _Lite:
            assert entry is None or isinstance(entry, Message)
            return entry
        message = entry.make(index, self.records[index].raw)
        self.messages[index] = message
        return message

    def all_messages(self) -> list[Message]:
        """Every record's message, in record order (the unmade ones made now)."""
        message = self.message
        return [made for i in self.messages if (made := message(i)) is not None]


def _calls_and_results(
    entry: Message | _Lite | None,
) -> tuple[list[tuple[str | None, str | None]], dict[str, str | None]]:
    """A message's tool calls as (id, name), in order, and its results' tool names by id."""
    if entry is None:
        return [], {}
    if type(entry) is _Lite:
        return [(i, n) for i, n in entry.calls], dict(entry.results)  # (as below: the last)
    assert isinstance(entry, Message)
    return _calls(entry), {
        b.call_id: b.name for b in entry.blocks if b.kind == "tool_result" and b.call_id is not None
    }


def _replay_lite(lite: _Lite, names: dict[str, str]) -> _Lite:
    """`_replay` for an unmade message: its calls noted, its results' tool names looked up,
    in block order."""
    items: list[_Item] | None = None
    for position, (call, call_id, name) in enumerate(lite.items):
        if call:
            assert name is not None
            names[call_id] = name
        elif names.get(call_id) != name:
            if items is None:
                items = list(lite.items)
            items[position] = (False, call_id, names.get(call_id))
    return lite if items is None else lite._replace(items=tuple(items))


def _replay(message: Message, index: int, names: dict[str, str]) -> Message:
    """`message` (parsed from the same JSON elsewhere) as `_record_message` makes it at
    `index` after the calls in `names`: its calls noted, its results' tool names looked up."""
    renamed: list[Block] | None = None
    blocks = message.blocks
    for position, block in enumerate(blocks):
        if block.kind == "tool_call":
            assert block.call_id is not None and block.name is not None
            names[block.call_id] = block.name
        elif block.kind == "tool_result":
            name = names.get(block.call_id or "")
            if name != block.name:
                if renamed is None:
                    renamed = list(blocks)
                renamed[position] = replace(block, name=name)
    if renamed is None and message.index == index:
        return message
    return replace(message, index=index, blocks=tuple(renamed) if renamed else blocks)


_RAW = operator.attrgetter("raw")


def _calls(message: Message | None) -> list[tuple[str | None, str | None]]:
    """The tool calls of `message`, as (id, name), in order."""
    if message is None:
        return []
    return [(b.call_id, b.name) for b in message.blocks if b.kind == "tool_call"]


def _patched(parent: _State, records: tuple[Record, ...]) -> _State | None:
    """The state of `records` when they are the parent's records with some replaced in place
    (what prune makes), made from the parent's by parsing only the replaced ones; None when that
    does not hold, and the records are parsed as usual.

    It holds when every replaced record is an object under a JSON object of its own (found
    nowhere else), parses, calls the same tools as the one it replaces, and answers only calls
    that one answered: then every other record's message, skeleton and tool names stay as they
    were, and the tool names a replaced record's results read are those the old one's read.
    """
    before = parent.records
    if parent.errors or len(records) != len(before):
        return None
    changed = list(
        itertools.compress(
            range(len(records)), map(operator.is_not, map(_RAW, records), map(_RAW, before))
        )
    )
    where = dict(parent.where)
    messages = dict(parent.messages)
    skeletons = list(parent.skeletons)
    same_skeletons = True
    for i in changed:
        old, new = before[i].raw, records[i].raw
        if not isinstance(old, dict) or not isinstance(new, dict):
            return None
        if where.get(id(old)) != i or id(new) in where:
            return None
        old_message = parent.messages.get(i)
        old_calls, answered = _calls_and_results(old_message)
        try:
            message = _record_message(i, new, {k: v for k, v in answered.items() if v})
        except _ShapeError:
            return None
        if _calls(message) != old_calls or (message is None) != (old_message is None):
            return None  # (a message where there was none would upset the order of `messages`)
        if message is not None and any(
            b.call_id not in answered for b in message.blocks if b.kind == "tool_result"
        ):
            return None
        del where[id(old)]
        where[id(new)] = i
        if message is None:
            messages.pop(i, None)
        else:
            messages[i] = message
        skeletons[i] = _skeleton(new)
        same_skeletons = same_skeletons and skeletons[i] == parent.skeletons[i]
    state = _State(
        records, where, messages, {}, tuple(skeletons), dict(parent.names), parent.recent
    )
    if same_skeletons:  # the uuid map is made of the skeletons alone: it is the parent's
        state.graph, state.base = parent.graph, parent.base
    return state


def _last_boundary(records: Sequence[Record], start: int) -> int:
    """The index of the last compact boundary among `records[start:]` (`start` when there is
    none). The context chain starts there, but for a preserved segment or a later record
    whose parent is older: the messages before it are mostly read only by the checks."""
    for i in range(len(records) - 1, start - 1, -1):
        raw = records[i].raw
        if (
            isinstance(raw, dict)
            and raw.get("subtype") == "compact_boundary"
            and raw.get("type") == "system"
        ):
            return i
    return start


def _build_state(transcript: Transcript) -> _State:
    """Parse every record, reusing what the transcript this one was made from parsed for the
    same JSON objects (their messages and skeletons depend on nothing else but their place and
    the tool names before them, which `_replay` settles). When this transcript holds that one's
    JSON objects in the same places, its state is that one's; when it only adds records after
    all of them, its state is carried over whole and only the new records are parsed; when it
    replaces some of that one's records in place, only those are (`_patched`)."""
    parent: _State | None = transcript.inherited(_STATE)
    records = transcript.records
    if parent is not None:
        before = parent.records
        if len(records) == len(before) and all(
            map(operator.is_, map(_RAW, records), map(_RAW, before))
        ):  # the same JSON objects in the same places (records read back, renumbered)
            return _State(
                records,
                parent.where,  # shared: a state's maps are never changed once made (but for
                parent.messages,  # an unmade message made in its place: the same for both)
                parent.errors,
                parent.skeletons,
                parent.names,
                parent.recent,
                parent.chain,
                parent.graph,
                parent.base,
            )
        patched = _patched(parent, records)
        if patched is not None:
            return patched
    earlier = parent or _State((), {}, {}, {}, (), {}, [])
    before, before_where, before_errors = earlier.records, earlier.where, earlier.errors
    before_messages, before_skeletons = earlier.messages, earlier.skeletons
    start = 0
    if (
        parent is not None
        and not before_errors
        and len(records) >= len(before)
        and all(map(operator.is_, map(_RAW, records), map(_RAW, before)))
    ):
        start = len(before)
        where = dict(before_where)
        messages = dict(before_messages)
        skeletons = list(before_skeletons)
        names = dict(earlier.names)
    else:
        where, messages, skeletons, names = {}, {}, [], {}
    errors: dict[int, str] = {}
    unmade = _last_boundary(records, start)  # the records before it: messages left unmade
    message: Message | _Lite | None
    for i in range(start, len(records)):
        raw = records[i].raw
        if not isinstance(raw, dict):
            skeletons.append(None)
            continue
        where[id(raw)] = i
        j = before_where.get(id(raw))
        if j is not None and before[j].raw is raw and j not in before_errors:
            skeleton = before_skeletons[j]
            message = before_messages.get(j)
            if type(message) is _Lite:
                message = _replay_lite(message, names)
            elif message is not None:
                assert isinstance(message, Message)
                message = _replay(message, i, names)
        else:
            try:
                message = _record_lite(raw, names) if i < unmade else _record_message(i, raw, names)
            except _ShapeError as error:
                errors[i] = str(error)  # parsed again each time: it may have noted some calls
                skeletons.append(_skeleton(raw))
                continue
            skeleton = _skeleton(raw)
        if message is not None:
            messages[i] = message
        skeletons.append(skeleton)
    state = _State(records, where, messages, errors, tuple(skeletons), names, earlier.recent)
    if start and parent is not None:  # these skeletons start with the parent's
        state.base = parent.known_graph()
    return state


def _state_of(transcript: Transcript) -> _State:
    """The transcript's parsed records, made once (`_build_state`)."""
    return transcript.view(_STATE, lambda: _build_state(transcript))


def _chain_of(transcript: Transcript, state: _State) -> _Chain:
    """The context chain, reused from a transcript of the same lineage with equal skeletons, or
    with skeletons that this one's extend quietly (`_appended_quietly`)."""
    if state.chain is None:
        for skeletons, chain, graph in reversed(state.recent):
            if skeletons == state.skeletons:
                state.chain = chain
                state.graph = state.graph or graph  # the same skeletons: the same uuid map
                break
            if _appended_quietly(skeletons, chain, state.skeletons):
                state.chain = chain
                break
        else:
            graph = state.uuid_graph()
            state.chain = _build_chain(state.skeletons, graph)
            state.recent.append((state.skeletons, state.chain, graph))
            del state.recent[:-_RECENT_CHAINS]
    return state.chain


def chain_parents(transcript: Transcript) -> Mapping[str, str | None]:
    """Each chain uuid's parent as Claude Code's loader sees it: progress records bridged over,
    a later record with the same uuid replacing an earlier one (the uuid map the chain is built
    from). Made once per transcript; the caller must not change it."""
    try:
        state = _state_of(transcript)
    except Exception:  # a record that breaks the parser: the map does not need it
        return _graph(_skeletons(transcript)).parent
    return state.uuid_graph().parent


def _scan_messages(transcript: Transcript) -> None:
    """Parse every record as `_build_state` does, raising what it raises (the first record
    with an impossible shape as an `InputError`)."""
    names: dict[str, str] = {}
    for i, record in transcript.objects():
        try:
            _record_message(i, record.raw, names)
        except _ShapeError as error:
            raise InputError(transcript.source, record.lineno, str(error)) from None


# --------------------------------------------------------------------------------------------
# The dialect


class ClaudeCodeDialect(Dialect):
    name = "claude-code"
    summary = "Claude Code session transcript (~/.claude/projects/<project>/<session>.jsonl)"
    one_message_per_record = True

    # ---- detection

    @classmethod
    def sniff(cls, objects: Sequence[Mapping[str, Any]]) -> int:
        """How sure these first records are a Claude Code session.

        100 for a chain record (`parentUuid` key, string `uuid`, a Claude Code chain type) with
        a `sessionId`, 90 without one; 60 when only Claude Code metadata records were seen (real
        files often start with several); else 0.
        """
        score = 0
        for raw in objects:
            kind = raw.get("type")
            if not isinstance(kind, str):
                continue
            if kind in _DAG_TYPES and "parentUuid" in raw and isinstance(raw.get("uuid"), str):
                if isinstance(raw.get("sessionId"), str):
                    return 100
                score = max(score, 90)
            elif kind in METADATA_TYPES and (
                "sessionId" in raw or "leafUuid" in raw or "messageId" in raw
            ):
                score = max(score, 60)
        return score

    # ---- views

    def _state(self, transcript: Transcript) -> _State:
        return _state_of(transcript)

    def _parsed(self, transcript: Transcript) -> _State:
        """The transcript's state, when every record parsed (else the first one's error)."""
        try:
            state = self._state(transcript)
        except Exception:  # a record that breaks the parser itself: fail as the loop does
            _scan_messages(transcript)
            raise
        if state.errors:
            index, problem = next(iter(state.errors.items()))
            raise InputError(transcript.source, transcript.records[index].lineno, problem)
        return state

    def _context_chain(self, transcript: Transcript) -> _Chain:
        try:
            state = self._state(transcript)
        except Exception:  # a record that breaks the parser: the chain does not need it
            return _build_chain(_skeletons(transcript))
        return _chain_of(transcript, state)

    def messages(self, transcript: Transcript) -> list[Message]:
        return self._parsed(transcript).all_messages()

    def model(self, transcript: Transcript) -> str | None:
        """As `Dialect.model`, reading unmade messages' model without making them."""
        for entry in reversed(self._parsed(transcript).messages.values()):
            if entry.model and not entry.model.startswith("<"):
                return entry.model
        return None

    def context(self, transcript: Transcript) -> list[Message]:
        return list(transcript.view(_CONTEXT, lambda: tuple(self._context(transcript))))

    def _context(self, transcript: Transcript) -> list[Message]:
        state = self._parsed(transcript)
        skeletons = state.skeletons
        out: list[Message] = []
        messages, message_at = state.messages, state.message
        for i in self._context_chain(transcript).records:
            skeleton = skeletons[i]
            if i in messages and skeleton is not None and skeleton[_SK_REACHES]:
                message = message_at(i)
                assert message is not None
                out.append(message)
        return out

    def usage(self, transcript: Transcript) -> list[Usage]:
        return list(transcript.view(_USAGE_VIEW, lambda: tuple(self._usage(transcript))))

    def _usage(self, transcript: Transcript) -> list[Usage]:
        chain = self._context_chain(transcript)
        found: dict[str, tuple[int, int, Mapping[str, Any]]] = {}
        for i in chain.records:
            raw = transcript.records[i].raw
            if raw.get("type") != "assistant" or i in chain.zeroed:
                continue
            message = raw.get("message")
            if not isinstance(message, dict) or message.get("model") == SYNTHETIC_MODEL:
                continue
            usage = message.get("usage")
            if not isinstance(usage, dict):
                continue
            total = _usage_total(usage)
            if total == 0:
                continue
            key = _message_id(raw) or raw.get("requestId") or raw.get("uuid")
            key = key if isinstance(key, str) else f"#{i}"
            found[key] = (i, total, usage)  # the last record of a request counts
        return [
            Usage(
                index=i,
                context=total,
                input=_int(usage, "input_tokens"),
                output=_int(usage, "output_tokens"),
                cached=_int(usage, "cache_read_input_tokens"),
                key=key,
            )
            for key, (i, total, usage) in found.items()
        ]

    def streamer(self, source: str = "-") -> ClaudeCodeStreamer:
        """The views of `context`, `usage`, `messages` and `model`, fed record by record."""
        return ClaudeCodeStreamer(source)

    def compactions(self, transcript: Transcript) -> list[Compaction]:
        return list(transcript.view(_COMPACTIONS, lambda: tuple(self._compactions(transcript))))

    def _compactions(self, transcript: Transcript) -> list[Compaction]:
        try:
            skeletons: Skeletons = self._state(transcript).skeletons
        except Exception:  # a record that breaks the parser: compactions do not need it
            skeletons = _skeletons(transcript)
        records = transcript.records
        summaries: dict[str, int] = {}
        for i, skeleton in enumerate(skeletons):
            if (
                skeleton is not None
                and skeleton[_SK_SUMMARY]
                and skeleton[_SK_KIND] == "user"
                and skeleton[_SK_PARENT] is not None
            ):
                summaries.setdefault(skeleton[_SK_PARENT], i)
        summary_records = set(summaries.values())
        out: list[Compaction] = []
        # the records that can be one: boundaries, and records holding our details
        for i, skeleton in enumerate(skeletons):
            if skeleton is None or not (skeleton[_SK_BOUNDARY] or skeleton[_SK_OURS]):
                continue
            raw = records[i].raw
            ours = skeleton[_SK_OURS]
            if skeleton[_SK_BOUNDARY]:
                uuid = raw.get("uuid")
                child = summaries.get(uuid) if isinstance(uuid, str) else None
                text = _summary_text(transcript.records[child].raw) if child is not None else ""
                out.append(Compaction(index=i, summary=text, summary_index=child, ours=ours))
            elif (
                ours and i not in summary_records and raw.get("subtype") != "microcompact_boundary"
            ):
                out.append(
                    Compaction(index=i, summary=_summary_text(raw), summary_index=i, ours=True)
                )
        return out

    # ---- writing

    def clear_result(self, record: Record, block: Block, text: str) -> Record:
        """Replace one tool result's content by `text`, and its `toolUseResult` copy with it.

        `toolUseResult` is the tool's own output kept for the UI (never sent to the model); when
        the record answers just this one call it becomes `text` too, the shape Claude Code
        itself writes for a failed call (its renderer skips a result that does not fit the
        tool's output schema).
        """
        raw = set_in(record.raw, (*block.path, self.result_content_key), text)
        results = [
            b
            for b in _content_blocks(record.raw)
            if isinstance(b, dict) and b.get("type") == "tool_result"
        ]
        if "toolUseResult" in raw and len(results) == 1:
            raw = {**raw, "toolUseResult": text}
        return record.with_raw(raw)

    def prune_boundary(self, transcript: Transcript, details: Mapping[str, Any]) -> list[Record]:
        """A `system/microcompact_boundary` record, as Claude Code writes for its own clearing.

        It hangs off the current leaf (so the context view does not change), copies the leaf's
        envelope (sessionId, cwd, version, ...) and carries our details under `compactcli`. Its
        uuid and timestamp derive from the input, so the same input gives the same bytes.
        """
        chain = self._context_chain(transcript)
        leaf = transcript.records[chain.records[-1]].raw if chain.records else {}
        leaf_uuid = leaf.get("uuid") if isinstance(leaf.get("uuid"), str) else None
        before = details.get("tokens_before", 0)
        after = details.get("tokens_after", 0)
        cleared = details.get("cleared", [])
        tool_ids = [
            c["id"]
            for c in cleared
            if isinstance(cleared, list) and isinstance(c, dict) and isinstance(c.get("id"), str)
        ]
        seed = (leaf_uuid or "") + orjson.dumps(details, option=orjson.OPT_SORT_KEYS).decode()
        raw: dict[str, Any] = {
            "parentUuid": leaf_uuid,
            "isSidechain": leaf.get("isSidechain") is True,
            "type": "system",
            "subtype": "microcompact_boundary",
            "content": "Context microcompacted",
            "isMeta": False,
            "timestamp": leaf.get("timestamp", "1970-01-01T00:00:00.000Z"),
            "uuid": str(
                uuidlib.UUID(bytes=uuidlib.uuid5(_BOUNDARY_NAMESPACE, seed).bytes, version=4)
            ),
            "level": "info",
            "microcompactMetadata": {
                "trigger": "auto",
                "preTokens": before if isinstance(before, int) else 0,
                "tokensSaved": max(0, before - after)
                if isinstance(before, int) and isinstance(after, int)
                else 0,
                "compactedToolIds": tool_ids,
                "clearedAttachmentUUIDs": [],
            },
        }
        for key in ENVELOPE_KEYS:
            if key in leaf:
                raw[key] = leaf[key]
        raw["compactcli"] = dict(details)
        return [Record(raw=raw, line=None, lineno=0)]

    # ---- validation

    def validate(self, transcript: Transcript) -> list[Finding]:
        """Check Claude Code's invariants (FORMATS.md §6).

        Codes: `bad-shape` (chain record without uuid or parentUuid, parentUuid not the first
        key, a record of a known type with an impossible shape), `duplicate-id` (uuid, tool_use
        id, or a second tool_result for one call), `broken-chain` (parentUuid or
        logicalParentUuid naming a uuid not in the file; a compact_boundary whose parentUuid is
        not null), `summary-parent` (an isCompactSummary record that is not the child of a
        compact_boundary; a boundary without a summary child is a warning), `orphan-result`,
        `result-not-adjacent` (a tool_result record whose parentUuid, after bridging legacy
        progress records, or whose sourceToolAssistantUUID is not the assistant record holding
        the tool_use; a record answering several calls may hang off any record of that
        message.id, and one without a sourceToolAssistantUUID off an earlier result that leads
        back to its call, as Claude Code 2.0 chained parallel results), `call-unanswered`.

        The rule for `call-unanswered`: Claude Code adds a placeholder result for every
        unanswered call when it builds a request (`ensureToolResultPairing`), and real files end
        with one when a session stops mid-turn. Among the records that descend from the call's
        record, the first (in file order) that is a real user prompt, an interrupt marker
        ("[Request interrupted by user…") or a queued prompt decides: a real prompt is an error
        (the conversation went on past a call that never got its result, which only a broken
        write or an edit produces), anything else (end of the branch, an interrupt, a
        compaction) is a warning.
        """
        return list(transcript.view(_FINDINGS, lambda: tuple(self._validate(transcript))))

    def _validate(self, transcript: Transcript) -> list[Finding]:
        try:
            state: _State | None = self._state(transcript)
        except Exception:  # a record that breaks the parser itself: fail as the loop does
            state = None
        findings: list[Finding] = []
        parsed: dict[int, Message | _Lite] = {}
        all_uuids: set[str] = set()
        uuid_at: list[tuple[str, int]] = []  # (uuid, record index): lines only for duplicates
        records = transcript.records
        if state is not None:
            skeletons: Skeletons = state.skeletons
            messages, errors = state.messages, state.errors
            for i, skeleton in enumerate(skeletons):
                if skeleton is None:
                    continue
                kind = skeleton[_SK_KIND]  # an array or object type reads as no chain type
                if kind in _DAG_TYPES:
                    uuid = skeleton[_SK_UUID]
                    if uuid is None or not skeleton[_SK_FIRST]:
                        record = records[i]
                        findings.extend(self._shape(record.raw, record.lineno))
                    if uuid is not None:
                        all_uuids.add(uuid)
                        uuid_at.append((uuid, i))
            if errors:
                for i, problem in errors.items():
                    findings.append(Finding(records[i].lineno, "bad-shape", problem))
                parsed = {i: m for i, m in messages.items() if i not in errors}
            else:
                parsed = messages  # read only below
        else:
            skeletons = _skeletons(transcript)
            names: dict[str, str] = {}
            for i, record in transcript.objects():
                raw = record.raw
                kind = raw.get("type")
                kind = kind if isinstance(kind, str) else None
                uuid = raw.get("uuid")
                if isinstance(uuid, str) and kind in _DAG_TYPES:
                    all_uuids.add(uuid)
                if kind in _DAG_TYPES:
                    findings.extend(self._shape(raw, record.lineno))
                    if isinstance(uuid, str):
                        uuid_at.append((uuid, i))
                try:
                    message = _record_message(i, raw, names)
                except _ShapeError as error:
                    findings.append(Finding(record.lineno, "bad-shape", str(error)))
                    continue
                if message is not None:
                    parsed[i] = message
        if len(all_uuids) < len(uuid_at):  # some uuid is there twice
            uuid_items = [(uuid, records[i].lineno) for uuid, i in uuid_at]
            findings.extend(check_unique(uuid_items, "duplicate-id", "uuid"))
        duplicate_records = {f.line for f in findings if f.code == "duplicate-id"}
        graph = state.uuid_graph() if state is not None else _graph(skeletons)
        findings.extend(self._chain_findings(transcript, skeletons, all_uuids, graph))
        findings.extend(self._pairing(transcript, parsed, graph, duplicate_records, skeletons))
        return sorted(findings, key=lambda f: (f.line, f.code))

    @staticmethod
    def _shape(raw: Mapping[str, Any], line: int) -> list[Finding]:
        kind = raw.get("type")
        uuid = raw.get("uuid")
        if not isinstance(uuid, str):
            return [Finding(line, "bad-shape", f"{kind} record has no uuid")]
        if "parentUuid" not in raw:
            return [Finding(line, "bad-shape", f"{kind} record {uuid} has no parentUuid key")]
        first = next(iter(raw))
        if first != "parentUuid":
            return [
                Finding(
                    line,
                    "bad-shape",
                    f"{kind} record {uuid}: parentUuid is not the first key (found {first!r})",
                )
            ]
        return []

    @staticmethod
    def _chain_findings(
        transcript: Transcript, skeletons: Skeletons, all_uuids: set[str], graph: _Graph
    ) -> Iterator[Finding]:
        boundaries: dict[str, int] = {}
        summary_children: set[str] = set()
        records = transcript.records
        for i, skeleton in enumerate(skeletons):
            if skeleton is not None and skeleton[_SK_BOUNDARY] and skeleton[_SK_UUID] is not None:
                boundaries[skeleton[_SK_UUID]] = records[i].lineno
        for i, skeleton in enumerate(skeletons):
            # the skeleton holds the type and the parent (when a string) as the record does
            if skeleton is None or skeleton[_SK_KIND] not in _DAG_TYPES:
                continue
            kind = skeleton[_SK_KIND]
            parent = skeleton[_SK_PARENT]
            logical = skeleton[_SK_LOGICAL]
            if parent is not None and parent not in all_uuids:
                yield Finding(
                    records[i].lineno,
                    "broken-chain",
                    f"parentUuid {parent} of {kind} record {records[i].raw.get('uuid')} is not "
                    "in the file",
                )
            if logical is not None and logical not in all_uuids:
                yield Finding(
                    records[i].lineno,
                    "broken-chain",
                    f"logicalParentUuid {logical} of {kind} record {records[i].raw.get('uuid')} "
                    "is not in the file",
                )
            if skeleton[_SK_BOUNDARY] and records[i].raw.get("parentUuid") is not None:
                raw = records[i].raw
                yield Finding(
                    records[i].lineno,
                    "broken-chain",
                    f"compact_boundary {raw.get('uuid')} has parentUuid {raw.get('parentUuid')}; "
                    "it must be null (the old parent goes in logicalParentUuid)",
                )
            if (
                skeleton[_SK_SUMMARY]
                and kind == "user"
                and records[i].raw.get("isCompactSummary") is True
            ):
                if parent is not None and parent in boundaries:
                    summary_children.add(parent)
                else:
                    raw = records[i].raw
                    yield Finding(
                        records[i].lineno,
                        "summary-parent",
                        f"compact summary {raw.get('uuid')} has parent {raw.get('parentUuid')}, "
                        "not a compact_boundary",
                    )
        for uuid, line in boundaries.items():
            if uuid not in summary_children:
                yield Finding(
                    line,
                    "summary-parent",
                    f"compact_boundary {uuid} has no isCompactSummary child",
                    "warning",
                )

    @staticmethod
    def _pairing(
        transcript: Transcript,
        parsed: Mapping[int, Message | _Lite],
        graph: _Graph,
        duplicate_lines: set[int],
        skeletons: Skeletons,
    ) -> Iterator[Finding]:
        records = transcript.records
        # where each call lives: call id -> (record index, name)
        calls: dict[str, tuple[int, str]] = {}
        call_at: list[tuple[str, int]] = []  # (call id, record index): lines only for duplicates
        answering: list[tuple[int, list[str]]] = []  # user messages' results' call ids, in order
        for i, message in parsed.items():
            role = message.role
            if type(message) is _Lite:
                if role == "assistant":
                    if duplicate_lines and records[i].lineno in duplicate_lines:
                        continue
                    for call_id, name in message.calls:
                        call_at.append((call_id, i))
                        calls.setdefault(call_id, (i, name or "?"))
                elif role == "user" and message.items:
                    ids = [call_id for call_id, _ in message.results]
                    if ids:
                        answering.append((i, ids))
                continue
            assert isinstance(message, Message)
            if role == "assistant":
                if duplicate_lines and records[i].lineno in duplicate_lines:
                    continue
                for block in message.blocks:
                    if block.kind == "tool_call" and block.call_id is not None:
                        call_at.append((block.call_id, i))
                        calls.setdefault(block.call_id, (i, block.name or "?"))
            elif role == "user":
                ids = [b.call_id or "" for b in message.blocks if b.kind == "tool_result"]
                if ids:
                    answering.append((i, ids))
        if len(calls) < len(call_at):  # some call id is there twice
            call_items = [(call_id, records[i].lineno) for call_id, i in call_at]
            yield from check_unique(call_items, "duplicate-id", "tool_use id")
        raw_parent = graph.raw_parent
        answered: dict[str, int] = {}  # call id -> the record index of its first result
        for i, results in answering:
            skeleton = skeletons[i]
            assert skeleton is not None
            if skeleton[_SK_KIND] != "user":
                continue
            if duplicate_lines and records[i].lineno in duplicate_lines:
                continue
            for call_id in results:
                if call_id in answered:
                    yield Finding(
                        records[i].lineno,
                        "duplicate-id",
                        f"tool_use {call_id} is answered twice "
                        f"(first tool_result on line {records[answered[call_id]].lineno})",
                    )
                    continue
                answered[call_id] = i
                holder = calls.get(call_id)
                if holder is None:
                    yield Finding(
                        records[i].lineno,
                        "orphan-result",
                        f"tool_result for {call_id} has no tool_use in the file",
                    )
                    continue
                holder_skeleton = skeletons[holder[0]]
                assert holder_skeleton is not None
                holder_uuid = holder_skeleton[_SK_UUID]
                if holder_uuid is None:  # not a string: as the record has it
                    holder_uuid = records[holder[0]].raw.get("uuid")
                parent = raw_parent[i] if i in raw_parent else records[i].raw.get("parentUuid")
                if parent != holder_uuid:
                    raw, holder_raw = records[i].raw, records[holder[0]].raw
                    if not (
                        len(results) > 1 and _same_group(records, graph, parent, holder_raw)
                    ) and not (
                        "sourceToolAssistantUUID" not in raw
                        and _after_group(records, graph, parent, holder_raw)
                    ):
                        yield Finding(
                            records[i].lineno,
                            "result-not-adjacent",
                            f"tool_result for {call_id} has parentUuid {parent}, not "
                            f"{holder_uuid} (the assistant record holding the tool_use)",
                        )
                        continue
                source = skeleton[_SK_SOURCE]  # the record's when a string
                if isinstance(source, str) and source != holder_uuid and len(results) == 1:
                    yield Finding(
                        records[i].lineno,
                        "result-not-adjacent",
                        f"tool_result for {call_id} has sourceToolAssistantUUID {source}, "
                        f"not {holder_uuid} (the assistant record holding the tool_use)",
                    )
        unanswered = [(cid, where) for cid, where in calls.items() if cid not in answered]
        if unanswered:
            yield from _unanswered(transcript, graph, unanswered)


def _same_group(
    records: Sequence[Any], graph: _Graph, parent: Any, holder_raw: Mapping[str, Any]
) -> bool:
    if not isinstance(parent, str) or parent not in graph.index:
        return False
    parent_raw = records[graph.index[parent]].raw
    return parent_raw.get("type") == "assistant" and _message_id(parent_raw) == _message_id(
        holder_raw
    )


def _after_group(
    records: Sequence[Any], graph: _Graph, parent: Any, holder_raw: Mapping[str, Any]
) -> bool:
    """Whether the call's record is reached from `parent` through records of the same
    `message.id` and runs of tool results: how Claude Code 2.0 chained the results of parallel
    calls, all after the last call, each after the one before (with no
    `sourceToolAssistantUUID`)."""
    holder_uuid, group = holder_raw.get("uuid"), _message_id(holder_raw)
    seen: set[str] = set()
    while isinstance(parent, str) and parent in graph.index and parent not in seen:
        if parent == holder_uuid:
            return True
        seen.add(parent)
        i = graph.index[parent]
        raw = records[i].raw
        if raw.get("type") == "assistant":
            if group is None or _message_id(raw) != group:
                return False
        elif raw.get("type") != "user" or not _only_results(raw):
            return False
        parent = graph.raw_parent.get(i, raw.get("parentUuid"))
    return False


def _only_results(raw: Mapping[str, Any]) -> bool:
    message = raw.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    )


def _unanswered(
    transcript: Transcript, graph: _Graph, calls: Iterable[tuple[str, tuple[int, str]]]
) -> Iterator[Finding]:
    records = transcript.records
    children: dict[str, list[int]] = {}
    for i, parent in graph.raw_parent.items():
        if parent is not None:
            children.setdefault(parent, []).append(i)
    for call_id, (i, name) in calls:
        start = records[i].raw.get("uuid")
        first: int | None = None
        stack = list(children.get(start, [])) if isinstance(start, str) else []
        visited: set[int] = set()
        while stack:
            j = stack.pop()
            if j in visited:
                continue
            visited.add(j)
            raw = records[j].raw
            if _is_real_prompt(raw) or _is_interrupt(raw):
                if first is None or j < first:
                    first = j
                continue
            uuid = raw.get("uuid")
            if isinstance(uuid, str):
                stack.extend(children.get(uuid, []))
        line = records[i].lineno
        what = f"tool_use {call_id} ({name}) has no tool_result"
        if first is not None and _is_real_prompt(records[first].raw):
            yield Finding(
                line,
                "call-unanswered",
                f"{what}, and the conversation goes on with a user prompt on line "
                f"{records[first].lineno}",
            )
        elif first is not None:
            yield Finding(
                line,
                "call-unanswered",
                f"{what}: the turn was interrupted (Claude Code adds a placeholder result)",
                "warning",
            )
        else:
            yield Finding(
                line,
                "call-unanswered",
                f"{what}: its branch ends there (Claude Code adds a placeholder result)",
                "warning",
            )


def _summary_text(raw: Mapping[str, Any]) -> str:
    message = raw.get("message")
    if isinstance(message, dict):
        content = message.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return "\n".join(
                b["text"]
                for b in content
                if isinstance(b, dict)
                and b.get("type") == "text"
                and isinstance(b.get("text"), str)
            )
    ours = raw.get("compactcli")
    if isinstance(ours, dict) and isinstance(ours.get("summary"), str):
        return str(ours["summary"])
    return ""


# --------------------------------------------------------------------------------------------
# Streaming: the chain rebuild over a compact skeleton (one small entry per chain record)

_USER, _ASSISTANT, _BOUNDARY, _OTHER = 1, 2, 3, 0
_SIDECHAIN, _REACHES, _RESULTS, _SYNTHETIC, _USAGE = 1, 2, 4, 8, 16
_ZERO4 = (0, 0, 0, 0)
_ROOT = -1  # no parent
_MISSING = -2  # a parent uuid that is not (or not yet) a chain record


_ABSENT = object()


_LEADING_SPACE = re.compile(r"\s*")  # `\s` is what `str.strip()` strips


def _maybe_json(text: str) -> bool:
    """`_looks_json` without copying the text when its first non-space character already says
    no (a line-numbered file listing starts with spaces and a digit)."""
    if not text:
        return False
    if text[0] not in "{[":
        if not text[0].isspace():
            return False
        found = _LEADING_SPACE.match(text)  # always matches, maybe empty
        first = found.end() if found else 0
        if first == len(text) or text[first] not in "{[":
            return False
    return _looks_json(text)


def _light_block(item: Mapping[str, Any], names: dict[str, str]) -> LightBlock | None:
    """`_block` as plain values for the common block shapes; None for anything else."""
    kind = item.get("type")
    if kind == "text":
        text = item.get("text", "")
        return ("text", text, False, None, 0) if isinstance(text, str) else None
    if kind == "tool_result":
        call_id = item.get("tool_use_id")
        content = item.get("content")
        if not isinstance(call_id, str) or not isinstance(content, str):
            return None
        return ("tool_result", content, _maybe_json(content), names.get(call_id), 0)
    if kind == "tool_use":
        call_id = item.get("id")
        name = item.get("name")
        if not isinstance(call_id, str) or not isinstance(name, str):
            return None
        names[call_id] = name
        arguments = item.get("input")
        return ("tool_call", _dump(arguments if arguments is not None else {}), True, name, 0)
    if kind == "thinking":
        thinking = item.get("thinking", "")
        return ("thinking", thinking if isinstance(thinking, str) else "", False, None, 0)
    return None


_UI_COPY = b',"toolUseResult":'
_AFTER_UI_COPY = b',"sourceToolAssistantUUID":'


def trim_line(line: bytes) -> bytes:
    """`line` without its `toolUseResult` value, when that can be cut out safely by bytes.

    `toolUseResult` is the UI's copy of a tool's output (never sent to the model) and often
    the largest part of a tool-result record, so skipping it saves parsing. Claude Code writes
    it just before `sourceToolAssistantUUID`; the cut is made only when both keys are there in
    that order (inside a JSON string the quotes would be escaped, so these byte patterns are
    keys), and only in lines that say `"type":"user"` near their start (the envelope comes
    first), so other lines are not scanned. The caller parses the whole line when the trimmed
    one does not parse.
    """
    cut = _cut_ui_copy(line, 0, len(line))
    return line if cut is None else cut


_WORTH_TRIMMING = 4096
"""Shorter lines are parsed whole: looking for a copy to cut costs more than it saves."""


def trim_span(data: bytes, start: int, end: int) -> bytes | None:
    """`trim_line` for the line `data[start:end]` (read in a larger block) without copying it:
    the trimmed bytes, or None when there is nothing to cut (or the line is short)."""
    if end - start < _WORTH_TRIMMING:
        return None
    return _cut_ui_copy(data, start, end)


def _cut_ui_copy(data: bytes, start: int, end: int) -> bytes | None:
    if data.find(b'"type":"user"', start, min(end, start + 512)) < 0:
        return None  # only user records carry the copy
    cut = data.find(_UI_COPY, start, end)
    if cut < 0:
        return None
    resume = data.rfind(_AFTER_UI_COPY, cut, end)
    if resume <= cut:
        return None
    view = memoryview(data)
    return b"".join((view[start:cut], view[resume:end]))


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
    trim = staticmethod(trim_line)
    trim_span = staticmethod(trim_span)

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
        take_one: Callable[..., None] | None = None,
    ) -> int:
        """`add_light` over every (line number, parsed record, bytes) of a file, each message
        handed to `take` and each record's line to `note`; returns the number of records.
        `take_one(index, role, unit, *block)`, when given, takes the messages of one block
        instead of `take` (no tuple of blocks to build).

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
                        block = ("tool_result", result, _maybe_json(result), name, 0)
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
                if take_one is not None:
                    take_one(index, "user", None, block[0], block[1], block[2], block[3], 0)
                else:
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
            if take_one is not None:
                take_one(index, "assistant", unit, block[0], block[1], block[2], block[3], 0)
            else:
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
