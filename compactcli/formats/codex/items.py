"""Reading Codex rollout response items into message views (FORMATS.md §2).

This module holds the record vocabulary of a rollout (`RECORD_TYPES`, `SUMMARY_PREFIX`, the
prefixes of injected context in `CONTEXTUAL_USER_PREFIXES`, the output kinds and the calls each
answers in `ANSWERS`) and `ItemReader`, which turns one `response_item` payload into at most one
`Message` and raises `BadShape` (a one-line reason) when an item of a known type is malformed.
`in_unit` gives consecutive model-generated messages one unit key, so reasoning is never cut from
what follows it. Reading never edits records.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from compactcli.images import ImageSize, image_size
from compactcli.transcript import Block, Images, JsonPath, Message, Role

RECORD_TYPES = frozenset(
    {"session_meta", "response_item", "compacted", "turn_context", "event_msg"}
)
"""The envelope types this dialect knows; others pass through."""

SUMMARY_PREFIX = (
    "Another language model started to solve this problem and produced a summary of its "
    "thinking process. You also have access to the state of the tools that were used by that "
    "language model. Use this to build on the work that has already been done and avoid "
    "duplicating work. Here is the summary produced by the other language model, use the "
    "information in this summary to  assist with your own analysis:"
)
"""Codex's `templates/compact/summary_prefix.md`, word for word (two spaces included): what it
puts before a summary it wrote, and what compactcli puts before its own."""
SUMMARY_START = SUMMARY_PREFIX[: SUMMARY_PREFIX.index(".") + 1]
"""The first sentence of `SUMMARY_PREFIX`: a user message starting with it is a summary (the rest
of the template is not relied on)."""

CONTEXTUAL_USER_PREFIXES = (
    "# agents.md instructions for ",
    "<user_instructions>",
    "<environment_context>",
    "<skill>",
    "<skills_instructions>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<subagent_notification>",
)
"""User messages Codex injects as context, not typed by the user (compared case-insensitively)."""

_ROLES: dict[str, Role] = {
    "user": "user",
    "assistant": "assistant",
    "developer": "developer",
    "system": "system",
}
_CALL_TYPES = frozenset(
    {"function_call", "custom_tool_call", "local_shell_call", "tool_search_call"}
)
ANSWERS: dict[str, frozenset[str]] = {
    "function_call_output": frozenset({"function_call", "local_shell_call"}),
    "custom_tool_call_output": frozenset({"custom_tool_call"}),
    "tool_search_output": frozenset({"tool_search_call"}),
}
COMPACTION_ITEMS = frozenset({"compaction", "compaction_summary", "context_compaction"})


class BadShape(Exception):
    """A record of a known type whose shape is wrong; the message is one line."""


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


def _string(payload: Mapping[str, Any], key: str, what: str) -> str:
    value = payload.get(key)
    if not isinstance(value, str):
        raise BadShape(f"{what} has no string {key!r}")
    return value


def _optional_string(payload: Mapping[str, Any], key: str, what: str) -> str | None:
    value = payload.get(key)
    if value is not None and not isinstance(value, str):
        raise BadShape(f"{what} has a {key!r} that is not a string")
    return value


def _is_summary_text(text: str) -> bool:
    return text.startswith(SUMMARY_START)


def is_contextual(text: str) -> bool:
    return text.lstrip()[:40].lower().startswith(CONTEXTUAL_USER_PREFIXES)


def input_image_size(item: Mapping[str, Any]) -> ImageSize | None:
    """The size of an `input_image` item's image, when its `image_url` is a `data:` URL whose
    header reads (`detail: low` noted)."""
    return image_size(item.get("image_url"), low=item.get("detail") == "low")


def _output_blocks(output: Any, what: str) -> tuple[str, bool, Images, bool]:
    """(text, is_json, images, is_error) of a tool output in any of its shapes."""
    if isinstance(output, str):
        return output, _looks_like_json(output), (), False
    if isinstance(output, list):
        texts: list[str] = []
        images: list[ImageSize | None] = []
        for item in output:
            if not isinstance(item, dict):
                raise BadShape(f"{what} output array holds a non-object item")
            kind = item.get("type")
            if kind in ("input_text", "output_text", "text"):
                text = item.get("text")
                if not isinstance(text, str):
                    raise BadShape(f"{what} output {kind} item has no string 'text'")
                texts.append(text)
            elif kind in ("input_image", "image"):
                images.append(input_image_size(item))
            elif kind == "input_file":
                images.append(None)
        return "\n".join(texts), False, tuple(images), False
    if isinstance(output, dict):
        content = output.get("content_items", output.get("content"))
        if content is None:
            content = ""
        text, is_json, inner, _ = _output_blocks(content, what)
        return text, is_json, inner, output.get("success") is False
    raise BadShape(f"{what} output is neither a string, an array nor an object")


def _looks_like_json(text: str) -> bool:
    head = text.lstrip()[:1]
    if head not in ("{", "["):
        return False
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError:
        return False
    return True


@dataclass(slots=True)
class ItemReader:
    """Builds message views in file order, remembering call names and the current model.
    `text_content`: a message's content may be a plain string (the Responses API's short input
    form), read as one text block; Codex always writes an array."""

    model: str | None = None
    names: dict[str, str] = field(default_factory=dict)
    text_content: bool = False

    def item(self, item: Any, index: int, path: JsonPath) -> Message | None:
        """The message view of one response item (None for items the model never sees).

        - `message`: one block per content item (`input_text` / `output_text` text, `input_image`
          image, anything else `other`); a user message starting with `SUMMARY_START` is a
          summary, and an assistant message carries the reader's current `model`.
        - `reasoning`: a `thinking` block of its summary then content texts, plus an empty
          `other` block of type `encrypted_content` when that is present (never counted as text).
        - `function_call`, `custom_tool_call`, `local_shell_call` and `tool_search_call`: a
          `tool_call` block (`function_call.arguments` kept as text and parsed into `arguments`,
          None when not JSON; `custom_tool_call.input` as both; the object of the other two as
          its JSON and itself).
        - The outputs: a `tool` message with one `tool_result` block whose text comes from a
          string, an array of text / image items or the `{content, success}` object
          (`success: false` is an error), named after the matching call when known.
        - `web_search_call` and `image_generation_call`: an assistant `other` block (a
          server-side tool, never awaiting a result); `compaction`, `compaction_summary` and
          `context_compaction`: an assistant `other` block with `summary=True`.
        - `ghost_snapshot` and unknown types: nothing.
        """
        if not isinstance(item, dict):
            raise BadShape("response item is not an object")
        kind = item.get("type")
        if not isinstance(kind, str):
            raise BadShape("response item has no string 'type'")
        what = kind
        item_id = item.get("id") if isinstance(item.get("id"), str) else None
        if kind == "message":
            return self._message(item, index, path, item_id)
        role: Role = "assistant"
        blocks: tuple[Block, ...]
        summary = False
        if kind == "reasoning":
            blocks = self._reasoning(item, path)
        elif kind in _CALL_TYPES:
            blocks = (self._call(item, kind, path),)
        elif kind in ANSWERS:
            role = "tool"
            blocks = (self._result(item, kind, path),)
        elif kind == "web_search_call":
            action = item.get("action")
            text = _dumps(action) if action is not None else ""
            blocks = (
                Block("other", text=text, json=bool(text), name="web_search", type=kind, path=path),
            )
        elif kind == "image_generation_call":
            prompt = item.get("revised_prompt")
            text = prompt if isinstance(prompt, str) else ""
            image = image_size(item.get("result"))
            blocks = (Block("other", text=text, type=kind, path=path, images=(image,)),)
        elif kind in COMPACTION_ITEMS:
            _optional_string(item, "encrypted_content", what)
            blocks = (Block("other", type=kind, path=path),)
            summary = True
        else:  # ghost_snapshot, other and future item types: not part of the model's view
            return None
        return Message(
            index=index,
            role=role,
            blocks=blocks,
            id=item_id,
            model=self.model if role == "assistant" else None,
            summary=summary,
            path=path,
        )

    def again(self, item: Mapping[str, Any], message: Message | None) -> bool:
        """Whether `message`, what another reader with this reader's `model` read from this very
        `item` object at the same place, is what `item` reads as here: a tool result's name
        comes from the calls read before it, so it must resolve alike. When it is, this reader
        learns what reading `item` teaches it (the name of each call), as `item` would."""
        if message is None:
            return True
        for block in message.blocks:
            if block.kind == "tool_result":
                own = item.get("name")
                name = own if isinstance(own, str) else self.names.get(block.call_id or "")
                if name != block.name:
                    return False
        for block in message.blocks:
            if block.kind == "tool_call" and block.call_id and block.name is not None:
                self.names[block.call_id] = block.name
        return True

    def _message(
        self, item: Mapping[str, Any], index: int, path: JsonPath, item_id: str | None
    ) -> Message:
        role_name = item.get("role")
        role = _ROLES.get(role_name) if isinstance(role_name, str) else None
        if role is None:
            raise BadShape(f"message has an unknown role {role_name!r}")
        content = item.get("content")
        if isinstance(content, str) and self.text_content:
            block = Block("text", text=content, type="input_text", path=(*path, "content"))
            return Message(
                index=index,
                role=role,
                blocks=(block,),
                id=item_id,
                model=self.model if role == "assistant" else None,
                summary=role == "user" and _is_summary_text(content),
                path=path,
            )
        if not isinstance(content, list):
            raise BadShape("message content is not an array")
        blocks: list[Block] = []
        for position, part in enumerate(content):
            where = (*path, "content", position)
            if not isinstance(part, dict):
                raise BadShape(f"message content item {position} is not an object")
            part_type = part.get("type")
            part_type = part_type if isinstance(part_type, str) else ""
            if part_type in ("input_text", "output_text"):
                text = part.get("text")
                if not isinstance(text, str):
                    raise BadShape(f"message {part_type} item {position} has no string 'text'")
                blocks.append(Block("text", text=text, type=part_type, path=where))
            elif part_type == "input_image":
                image = input_image_size(part)
                blocks.append(Block("image", type=part_type, path=where, images=(image,)))
            else:
                text = part.get("text")
                blocks.append(
                    Block(
                        "other",
                        text=text if isinstance(text, str) else "",
                        type=part_type,
                        path=where,
                    )
                )
        return Message(
            index=index,
            role=role,
            blocks=tuple(blocks),
            id=item_id,
            model=self.model if role == "assistant" else None,
            summary=role == "user" and _is_summary_text(_first_text(blocks)),
            path=path,
        )

    def _reasoning(self, item: Mapping[str, Any], path: JsonPath) -> tuple[Block, ...]:
        texts: list[str] = []
        for key, required in (("summary", True), ("content", False)):
            parts = item.get(key)
            if parts is None and not required:
                continue
            if not isinstance(parts, list):
                raise BadShape(f"reasoning {key!r} is not an array")
            for part in parts:
                text = part.get("text") if isinstance(part, dict) else None
                if not isinstance(text, str):
                    raise BadShape(f"reasoning {key!r} item has no string 'text'")
                texts.append(text)
        blocks = [Block("thinking", text="\n".join(texts), type="reasoning", path=path)]
        encrypted = _optional_string(item, "encrypted_content", "reasoning")
        if encrypted:
            blocks.append(
                Block("other", type="encrypted_content", path=(*path, "encrypted_content"))
            )
        return tuple(blocks)

    def _call(self, item: Mapping[str, Any], kind: str, path: JsonPath) -> Block:
        name: str | None
        arguments: Any
        if kind == "function_call":
            call_id = _string(item, "call_id", kind)
            name = _string(item, "name", kind)
            text = _string(item, "arguments", kind)
            try:
                arguments = orjson.loads(text)
            except orjson.JSONDecodeError:
                arguments = None
            is_json = True
        elif kind == "custom_tool_call":
            call_id = _string(item, "call_id", kind)
            name = _string(item, "name", kind)
            text = _string(item, "input", kind)
            arguments, is_json = text, False
        elif kind == "local_shell_call":
            maybe_id = _optional_string(item, "call_id", kind)
            call_id = maybe_id if maybe_id is not None else ""
            name = "local_shell"
            arguments = item.get("action")
            if not isinstance(arguments, dict):
                raise BadShape("local_shell_call has no object 'action'")
            text, is_json = _dumps(arguments), True
        else:  # tool_search_call
            maybe_id = _optional_string(item, "call_id", kind)
            call_id = maybe_id if maybe_id is not None else ""
            name = "tool_search"
            arguments = item.get("arguments")
            text, is_json = _dumps(arguments), True
        if call_id:
            self.names[call_id] = name
        return Block(
            "tool_call",
            text=text,
            json=is_json,
            call_id=call_id or None,
            name=name,
            arguments=arguments,
            type=kind,
            path=path,
        )

    def _result(self, item: Mapping[str, Any], kind: str, path: JsonPath) -> Block:
        images: Images
        if kind == "tool_search_output":
            call_id = _optional_string(item, "call_id", kind) or ""
            tools = item.get("tools")
            text, is_json, images, is_error = _dumps(tools), True, (), False
        else:
            call_id = _string(item, "call_id", kind)
            if "output" not in item:
                raise BadShape(f"{kind} has no 'output'")
            text, is_json, images, is_error = _output_blocks(item["output"], kind)
        own_name = item.get("name")
        name = own_name if isinstance(own_name, str) else self.names.get(call_id)
        return Block(
            "tool_result",
            text=text,
            json=is_json,
            call_id=call_id or None,
            name=name,
            is_error=is_error,
            type=kind,
            path=path,
            images=images,
        )


def _first_text(blocks: Iterable[Block]) -> str:
    for block in blocks:
        if block.kind == "text":
            return block.text
    return ""


def _model_generated(message: Message) -> bool:
    return message.role == "assistant"


def in_unit(message: Message, unit: str | None, key: str) -> tuple[Message, str | None]:
    """`message` with the unit of the model response it is part of, and the unit that goes on:
    consecutive model-generated items share one (`key` starts a new one), any other item ends
    it."""
    if _model_generated(message):
        unit = unit or key
        return _with_unit(message, unit), unit
    return message, None


def _with_unit(message: Message, unit: str | None) -> Message:
    return Message(
        index=message.index,
        role=message.role,
        blocks=message.blocks,
        id=message.id,
        unit=unit,
        model=message.model,
        summary=message.summary,
        synthetic=message.synthetic,
        path=message.path,
    )


def synthetic(message: Message, summary: bool) -> Message:
    """`message` as one a `compacted` line holds: synthetic, a summary when `summary`."""
    return Message(
        index=message.index,
        role=message.role,
        blocks=message.blocks,
        id=message.id,
        unit=message.unit,
        model=message.model,
        summary=summary,
        synthetic=True,
        path=message.path,
    )


def is_envelope(raw: Mapping[str, Any]) -> bool:
    """A rollout envelope: a string `timestamp` and `type` and an object `payload`."""
    return (
        isinstance(raw.get("timestamp"), str)
        and isinstance(raw.get("type"), str)
        and isinstance(raw.get("payload"), dict)
    )


def summary_in_history(history: Any) -> str:
    """The summary text inside a replacement_history: its last summary-prefixed user message."""
    if not isinstance(history, list):
        return ""
    for item in reversed(history):
        if not isinstance(item, dict) or item.get("type") != "message":
            continue
        if item.get("role") != "user" or not isinstance(item.get("content"), list):
            continue
        for part in item["content"]:
            text = part.get("text") if isinstance(part, dict) else None
            if isinstance(text, str) and _is_summary_text(text):
                return text
    return ""
