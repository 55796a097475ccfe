"""The `codex` dialect: OpenAI Codex CLI rollout files (FORMATS.md §2 and §6).

Every line is an envelope `{"timestamp", "type", "payload"}`. The types this module reads are
`session_meta` (the first line, once), `response_item` (what the model sees), `compacted` (a
compaction), `turn_context` (per-turn settings, including `model`) and `event_msg` (UI events);
any other type (`world_state`, …) passes through and is ignored by the views.

Messages (`messages`): one per `response_item`, in file order, plus the messages that live inside
a `compacted` line, at that line's place (`synthetic=True`, `index` = the compacted record, `path`
= `("payload", "replacement_history", i)`; without a `replacement_history`, one user message holding
the summary text, path `("payload",)`).

- `message` (role user / assistant / developer / system): one block per content item,
  `input_text` / `output_text` as text, `input_image` as image, any other item as `other`.
- `reasoning`: an assistant `thinking` block (the summary texts, then any raw `content` texts).
  `encrypted_content` is never counted as text; when present it adds an `other` block of type
  `encrypted_content` with empty text, path `("payload", "encrypted_content")`.
- `function_call`, `custom_tool_call`, `local_shell_call`, `tool_search_call`: an assistant
  `tool_call` block. `function_call.arguments` is a JSON string: `text` keeps the string and
  `arguments` holds it parsed (None when it is not valid JSON). `custom_tool_call.input` is free
  text (an `apply_patch` patch): `text` and `arguments` are that string. `local_shell_call` and
  `tool_search_call` carry objects: `text` = their JSON, `arguments` = the object.
- `function_call_output`, `custom_tool_call_output`, `tool_search_output`: a `tool` message with
  one `tool_result` block; `output` is a string, an array of `input_text` / `input_image` items
  (texts joined with newlines, images counted in `images`) or the old `{content, success}` object
  (`success: false` gives `is_error`). `name` is the matching call's tool name when known.
- `web_search_call`: an assistant `other` block (type `web_search_call`, name `web_search`, text =
  the action's JSON). It is a server-side tool: the model's history never holds an output for it,
  so it is not a `tool_call` that would wait for a result.
- `image_generation_call`: an assistant `other` block (one image). `compaction` /
  `compaction_summary` / `context_compaction` (the opaque result of a server-side compaction): an
  assistant message with one `other` block, `summary=True`.
- `ghost_snapshot` (never sent to the model) and unknown item types give no message.
- `event_msg` mirrors (`user_message`, `agent_message`, `agent_reasoning`, …) are not messages.
- `unit`: consecutive model-generated items (one model response: reasoning, message, calls) share
  a unit key, so a reasoning item is never cut from the item that follows it.
- `model`: the `model` of the latest `turn_context` before the item.
- A user message is a compaction summary (`summary=True`) when it starts with Codex's summary
  prefix, or when it sits in a `replacement_history` and its text is the `compacted` line's message.

Context (`context`): the rollout replayed as Codex does on resume. Response items are appended; a
`compacted` line with `replacement_history` replaces the history with those items; one without it
rebuilds `initial context (the messages before the first real user message) + the most recent
real user messages (up to Codex's 20,000-token budget, counted as UTF-8 bytes / 4) + the summary`.
The collected user messages are the original records' views (Codex copies their text into new
`input_text` messages, without images). `event_msg thread_rolled_back {num_turns}` drops the last
`num_turns` user turns (from the newest real user message on).

Usage (`usage`): `event_msg token_count` records with a non-null `info` after the last `compacted`
line. `context` = `last_token_usage.input_tokens + output_tokens` (input already includes cached
input). A `last_token_usage` with no input and no output is no request's usage and is left out:
Codex writes one whose only figure is `total_tokens` after a compaction (its estimate of the new
history), and so does our writer. Codex writes the same `info` twice for one request (once when
the response completes, again after the tool outputs); a record whose `info` repeats the
previous one exactly is dropped.
`key` = `"total:<total_token_usage.total_tokens>"`, which only grows from one request to the next.

Validation (`validate`), codes:
- `session-meta` (error): the first record is not `session_meta`, or a second one appears.
- `bad-shape` (error): an envelope missing `timestamp` / `type` / `payload`, a known record type
  whose payload is not an object, or a response item of a known type missing required fields.
- `duplicate-id` (error): a call id used by two calls, or answered twice, in one history.
- `orphan-result` (error): an output with no earlier call of a matching kind in the same history
  (`function_call_output` answers `function_call` / `local_shell_call`, `custom_tool_call_output`
  answers `custom_tool_call`). Each `compacted` line starts a new history, so an output inside a
  `replacement_history` whose call is not in it, or an output after a compaction whose call was
  before it, is an orphan.
- `call-unanswered` (always a warning): Codex's `ensure_call_outputs_present` (normalize.rs) puts
  an `"aborted"` output right after every unanswered call, wherever it is, each time it builds a
  prompt, so an unanswered call never breaks a resume. The message says where the call was left:
  at the end of the file, before an aborted turn, before the next user message, or before a
  compaction.

Writing: a tool result's content is its item's `output` (`clear_result` keeps the old
`{content, success}` shape); a text block is an `input_text` item. Codex has no record for tool
output cleared in place (the edited outputs are what a resume reads), so `prune_boundary` adds none.

The views never edit records; every view is linear in the transcript's size.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from compactcli.dialects.base import Dialect, Finding, remembered
from compactcli.errors import InputError
from compactcli.transcript import (
    Block,
    Compaction,
    JsonPath,
    Message,
    Record,
    Role,
    Transcript,
    Usage,
    get_in,
    set_in,
)

RECORD_TYPES = frozenset(
    {"session_meta", "response_item", "compacted", "turn_context", "event_msg"}
)
"""The envelope types this dialect knows; others pass through."""

SUMMARY_PREFIX = (
    "Another language model started to solve this problem and produced a summary of its "
    "thinking process."
)
"""The start of Codex's local compaction summary (templates/compact/summary_prefix.md)."""

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

COMPACT_USER_MESSAGE_MAX_TOKENS = 20_000
"""How many tokens of recent user messages a local compaction keeps (compact.rs)."""

_ROLES: dict[str, Role] = {
    "user": "user",
    "assistant": "assistant",
    "developer": "developer",
    "system": "system",
}
_CALL_TYPES = frozenset(
    {"function_call", "custom_tool_call", "local_shell_call", "tool_search_call"}
)
_ANSWERS: dict[str, frozenset[str]] = {
    "function_call_output": frozenset({"function_call", "local_shell_call"}),
    "custom_tool_call_output": frozenset({"custom_tool_call"}),
    "tool_search_output": frozenset({"tool_search_call"}),
}
_COMPACTION_ITEMS = frozenset({"compaction", "compaction_summary", "context_compaction"})


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
    return text.startswith(SUMMARY_PREFIX)


def _is_contextual(text: str) -> bool:
    return text.lstrip()[:40].lower().startswith(CONTEXTUAL_USER_PREFIXES)


def _is_user_turn(message: Message) -> bool:
    """A real user message: Codex's user-turn boundary (not injected context, not a summary)."""
    if message.role != "user" or message.summary:
        return False
    texts = [b.text for b in message.blocks if b.kind == "text"]
    return not any(_is_contextual(text) for text in texts)


def _is_aborted_marker(message: Message) -> bool:
    return message.role == "user" and message.text.lstrip().lower().startswith("<turn_aborted>")


def _output_blocks(output: Any, what: str) -> tuple[str, bool, int, bool]:
    """(text, is_json, images, is_error) of a tool output in any of its shapes."""
    if isinstance(output, str):
        return output, _looks_like_json(output), 0, False
    if isinstance(output, list):
        texts: list[str] = []
        images = 0
        for item in output:
            if not isinstance(item, dict):
                raise BadShape(f"{what} output array holds a non-object item")
            kind = item.get("type")
            if kind in ("input_text", "output_text", "text"):
                text = item.get("text")
                if not isinstance(text, str):
                    raise BadShape(f"{what} output {kind} item has no string 'text'")
                texts.append(text)
            elif kind in ("input_image", "image", "input_file"):
                images += 1
        return "\n".join(texts), False, images, False
    if isinstance(output, dict):
        content = output.get("content_items", output.get("content"))
        if content is None:
            content = ""
        text, is_json, images, _ = _output_blocks(content, what)
        return text, is_json, images, output.get("success") is False
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
        """The message view of one response item (None for items the model never sees)."""
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
        elif kind in _ANSWERS:
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
            blocks = (Block("other", text=text, type=kind, path=path, images=1),)
        elif kind in _COMPACTION_ITEMS:
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
                blocks.append(Block("image", type=part_type, path=where))
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
        if kind == "tool_search_output":
            call_id = _optional_string(item, "call_id", kind) or ""
            tools = item.get("tools")
            text, is_json, images, is_error = _dumps(tools), True, 0, False
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


@dataclass(frozen=True, slots=True)
class Step:
    """One entry of the replay timeline, in file order.

    kind: `item` (a response item's message), `compacted` (messages = the new history's synthetic
    messages, `replaced` says whether they replace the history or are the rebuilt summary),
    `rollback` (drop `turns` user turns), `aborted` (a `turn_aborted` event).
    """

    kind: Literal["item", "compacted", "rollback", "aborted"]
    index: int
    messages: tuple[Message, ...] = ()
    replaced: bool = False
    turns: int = 0


def _model_generated(message: Message) -> bool:
    return message.role == "assistant"


class CodexDialect(Dialect):
    name = "codex"
    summary = "OpenAI Codex CLI rollout (session_meta / response_item / event_msg lines)"

    @classmethod
    def sniff(cls, objects: Sequence[Mapping[str, Any]]) -> int:
        """100 when the first record is a `session_meta` envelope; 60 when at least half of the
        records are Codex envelopes of known types (a file whose head is missing); else 0."""
        if not objects:
            return 0
        first = objects[0]
        if is_envelope(first) and first["type"] == "session_meta":
            return 100
        known = sum(1 for o in objects if is_envelope(o) and o["type"] in RECORD_TYPES)
        return 60 if known and known * 2 >= len(objects) else 0

    # --- views -------------------------------------------------------------------------------

    @remembered
    def messages(self, transcript: Transcript) -> list[Message]:
        out: list[Message] = []
        for step in self._timeline(transcript, None):
            out.extend(step.messages)
        return out

    @remembered
    def context(self, transcript: Transcript) -> list[Message]:
        history: list[Message] = []
        for step in self._timeline(transcript, None):
            history = _apply(history, step)
        return history

    @remembered
    def compactions(self, transcript: Transcript) -> list[Compaction]:
        found: list[Compaction] = []
        for index, record in transcript.objects():
            if record.raw.get("type") != "compacted":
                continue
            payload = record.raw.get("payload")
            payload = payload if isinstance(payload, dict) else {}
            message = payload.get("message")
            summary = message if isinstance(message, str) else ""
            if not summary:
                summary = _summary_in_history(payload.get("replacement_history"))
            found.append(Compaction(index, summary, None, "compactcli" in record.raw))
        return found

    @remembered
    def usage(self, transcript: Transcript) -> list[Usage]:
        start = 0
        for index, record in transcript.objects():
            if record.raw.get("type") == "compacted":
                start = index + 1
        dropped = (
            _rolled_back(self._timeline(transcript, None)) if _has_rollback(transcript) else []
        )
        found: list[Usage] = []
        previous: Any = None
        for index, record in transcript.objects():
            if index < start or record.raw.get("type") != "event_msg":
                continue
            if any(low < index < high for low, high in dropped):
                continue
            payload = record.raw.get("payload")
            if not isinstance(payload, dict) or payload.get("type") != "token_count":
                continue
            info = payload.get("info")
            if not isinstance(info, dict):
                continue
            last = info.get("last_token_usage")
            if not isinstance(last, dict):
                continue
            if info == previous:
                continue
            previous = info
            total = info.get("total_token_usage")
            total_tokens = total.get("total_tokens") if isinstance(total, dict) else None
            input_tokens = _int(last.get("input_tokens"))
            output_tokens = _int(last.get("output_tokens"))
            if input_tokens + output_tokens == 0:  # an estimate, not a request's usage
                continue
            found.append(
                Usage(
                    index=index,
                    context=input_tokens + output_tokens,
                    input=input_tokens,
                    output=output_tokens,
                    cached=_int(last.get("cached_input_tokens")),
                    key=f"total:{total_tokens}" if isinstance(total_tokens, int) else None,
                )
            )
        return found

    # --- writing -----------------------------------------------------------------------------

    result_content_key = "output"

    def clear_result(self, record: Record, block: Block, text: str) -> Record:
        """`record` with tool result `block`'s output replaced by `text`.

        The old `{content, success}` output keeps its shape (and `success`); a
        `tool_search_output` (tool definitions, not output) is left as it is.
        """
        if block.type == "tool_search_output":
            return record
        item = get_in(record.raw, block.path)
        path: JsonPath = (*block.path, "output")
        if isinstance(item, dict) and isinstance(item.get("output"), dict):
            path = (*path, "content")
        return record.with_raw(set_in(record.raw, path, text))

    def text_block(self, text: str) -> dict[str, Any]:
        """A message content item holding `text` (`input_text`: images are in input)."""
        return {"type": "input_text", "text": text}

    def context_window(self, transcript: Transcript) -> int | None:
        """The `model_context_window` of the last `token_count` event that records one."""
        for record in reversed(transcript.records):
            if record.get("type") != "event_msg":
                continue
            payload = record.get("payload")
            info = payload.get("info") if isinstance(payload, dict) else None
            window = info.get("model_context_window") if isinstance(info, dict) else None
            if isinstance(window, int) and not isinstance(window, bool) and window > 0:
                return window
        return None

    def model(self, transcript: Transcript) -> str | None:
        for record in reversed(transcript.records):
            if record.get("type") == "turn_context":
                payload = record.get("payload")
                if isinstance(payload, dict) and isinstance(payload.get("model"), str):
                    model: str = payload["model"]
                    return model
        return None

    # --- validation --------------------------------------------------------------------------

    @remembered
    def validate(self, transcript: Transcript) -> list[Finding]:
        findings: list[Finding] = []
        findings.extend(_check_envelopes(transcript))
        steps = self._timeline(transcript, findings)
        findings.extend(check_pairs(transcript, steps))
        return sorted(findings, key=lambda f: f.line)

    # --- the timeline ------------------------------------------------------------------------

    def _timeline(self, transcript: Transcript, findings: list[Finding] | None) -> list[Step]:
        """Replay steps in file order. With `findings`, bad shapes become `bad-shape` findings
        and the bad item is left out; without, they raise `InputError`."""
        builder = ItemReader()
        steps: list[Step] = []
        unit: str | None = None

        def bad(record: Record, problem: str) -> None:
            if findings is None:
                raise InputError(transcript.source, record.lineno, problem)
            findings.append(Finding(record.lineno, "bad-shape", problem))

        for index, record in transcript.objects():
            kind = record.raw.get("type")
            if not isinstance(kind, str) or kind not in RECORD_TYPES:
                continue
            payload = record.raw.get("payload")
            if not isinstance(payload, dict):
                if findings is None:
                    bad(record, f"{kind} record has no object 'payload'")
                continue  # reported by _check_envelopes
            if kind == "turn_context":
                model = payload.get("model")
                if isinstance(model, str):
                    builder.model = model
            elif kind == "response_item":
                try:
                    message = builder.item(payload, index, ("payload",))
                except BadShape as error:
                    bad(record, f"response_item: {error}")
                    continue
                if message is None:
                    continue
                message, unit = in_unit(message, unit, str(index))
                steps.append(Step("item", index, (message,)))
            elif kind == "compacted":
                unit = None
                try:
                    step = self._compacted(builder, payload, index)
                except BadShape as error:
                    bad(record, f"compacted: {error}")
                    continue
                steps.append(step)
            elif kind == "event_msg":
                event = payload.get("type")
                if event == "thread_rolled_back":
                    turns = payload.get("num_turns")
                    if isinstance(turns, int) and not isinstance(turns, bool) and turns > 0:
                        steps.append(Step("rollback", index, turns=turns))
                elif event == "turn_aborted":
                    steps.append(Step("aborted", index))
        return steps

    def _compacted(self, builder: ItemReader, payload: Mapping[str, Any], index: int) -> Step:
        message = payload.get("message", "")
        if not isinstance(message, str):
            raise BadShape("'message' is not a string")
        history = payload.get("replacement_history")
        if history is None:
            block = Block("text", text=message, type="input_text", path=("payload", "message"))
            summary = Message(
                index=index,
                role="user",
                blocks=(block,),
                summary=True,
                synthetic=True,
                path=("payload",),
            )
            return Step("compacted", index, (summary,), replaced=False)
        if not isinstance(history, list):
            raise BadShape("'replacement_history' is not an array")
        messages: list[Message] = []
        unit: str | None = None
        for position, item in enumerate(history):
            path: JsonPath = ("payload", "replacement_history", position)
            try:
                view = builder.item(item, index, path)
            except BadShape as error:
                raise BadShape(f"replacement_history[{position}]: {error}") from None
            if view is None:
                continue
            view, unit = in_unit(view, unit, f"{index}.{position}")
            is_summary = view.summary or (
                view.role == "user" and bool(message) and view.text == message
            )
            messages.append(_synthetic(view, is_summary))
        return Step("compacted", index, tuple(messages), replaced=True)


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


def _synthetic(message: Message, summary: bool) -> Message:
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


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def is_envelope(raw: Mapping[str, Any]) -> bool:
    return (
        isinstance(raw.get("timestamp"), str)
        and isinstance(raw.get("type"), str)
        and isinstance(raw.get("payload"), dict)
    )


def _summary_in_history(history: Any) -> str:
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


# --- replay ----------------------------------------------------------------------------------


def _apply(history: list[Message], step: Step) -> list[Message]:
    """The history after one timeline step (Codex's resume replay)."""
    if step.kind == "item":
        history.append(step.messages[0])
        return history
    if step.kind == "compacted":
        if step.replaced:
            return list(step.messages)
        return _rebuild(history, step.messages[0])
    if step.kind == "rollback":
        return _drop_turns(history, step.turns)
    return history


def _rebuild(history: Sequence[Message], summary: Message) -> list[Message]:
    """A compaction without replacement_history: initial context + recent user messages +
    the summary (compact.rs `build_compacted_history`)."""
    first_turn = next((i for i, m in enumerate(history) if _is_user_turn(m)), len(history))
    initial = list(history[:first_turn])
    collected = [m for m in history if _is_user_turn(m) or _is_aborted_marker(m)]
    kept: list[Message] = []
    remaining = COMPACT_USER_MESSAGE_MAX_TOKENS
    for message in reversed(collected):
        if remaining == 0:
            break
        tokens = (len(message.text.encode()) + 3) // 4
        kept.append(message)  # a message over the budget is kept truncated by Codex
        if tokens > remaining:
            break
        remaining -= tokens
    kept.reverse()
    return [*initial, *kept, summary]


def _drop_turns(history: list[Message], turns: int) -> list[Message]:
    positions = [i for i, m in enumerate(history) if _is_user_turn(m)]
    if not positions:
        return history
    cut = positions[0] if turns >= len(positions) else positions[len(positions) - turns]
    return history[:cut]


def _has_rollback(transcript: Transcript) -> bool:
    for _, record in transcript.objects():
        payload = record.raw.get("payload")
        if isinstance(payload, dict) and payload.get("type") == "thread_rolled_back":
            return True
    return False


def _rolled_back(steps: Sequence[Step]) -> list[tuple[int, int]]:
    """(first dropped record, rollback record) for each rollback: the records in between
    belong to turns the model no longer sees, and so does the usage recorded there."""
    windows: list[tuple[int, int]] = []
    history: list[Message] = []
    for step in steps:
        if step.kind == "rollback":
            kept = _drop_turns(list(history), step.turns)
            if len(kept) < len(history):
                windows.append((history[len(kept)].index, step.index))
        history = _apply(history, step)
    return windows


# --- checks ----------------------------------------------------------------------------------


def _check_envelopes(transcript: Transcript) -> list[Finding]:
    findings: list[Finding] = []
    first_meta: int | None = None
    first_object = True
    for _, record in transcript.objects():
        raw = record.raw
        line = record.lineno
        kind = raw.get("type")
        missing = [k for k in ("timestamp", "type", "payload") if k not in raw]
        if missing:
            findings.append(
                Finding(line, "bad-shape", f"record has no {', '.join(map(repr, missing))}")
            )
        elif not isinstance(kind, str):
            findings.append(Finding(line, "bad-shape", "record 'type' is not a string"))
        elif not isinstance(raw.get("timestamp"), str):
            findings.append(Finding(line, "bad-shape", "record 'timestamp' is not a string"))
        elif kind in RECORD_TYPES and not isinstance(raw.get("payload"), dict):
            findings.append(Finding(line, "bad-shape", f"{kind} record 'payload' is not an object"))
        if kind == "session_meta":
            if first_meta is None and first_object:
                first_meta = line
            elif first_meta is None:
                findings.append(
                    Finding(line, "session-meta", "session_meta is not the first record")
                )
                first_meta = line
            else:
                findings.append(
                    Finding(
                        line, "session-meta", f"second session_meta (first on line {first_meta})"
                    )
                )
        elif first_object:
            findings.append(
                Finding(line, "session-meta", f"first record is {kind!r}, not session_meta")
            )
        first_object = False
    return findings


@dataclass(slots=True)
class _Call:
    type: str
    name: str | None
    line: int
    answered: bool = False
    reported: bool = False


def check_pairs(transcript: Transcript, steps: Sequence[Step]) -> list[Finding]:
    """Call/output pairing per history (each compacted line starts a new one)."""
    findings: list[Finding] = []
    history: list[Message] = []
    calls: dict[str, _Call] = {}

    def report_open(reason: str, open_calls: Mapping[str, _Call]) -> None:
        for call_id, call in open_calls.items():
            if not call.answered and not call.reported:
                call.reported = True
                findings.append(
                    Finding(
                        call.line,
                        "call-unanswered",
                        f"{call.type} {call_id!r} ({call.name}) has no output {reason}; "
                        'Codex answers it with "aborted" on load',
                        "warning",
                    )
                )

    def take(message: Message) -> None:
        line = transcript.line_of(message.index)
        inside = ""
        if message.synthetic and len(message.path) > 2:
            inside = f" (replacement_history[{message.path[2]}])"
        for block in message.blocks:
            if not block.call_id:
                continue
            if block.kind == "tool_call":
                if block.call_id in calls:
                    findings.append(
                        Finding(
                            line,
                            "duplicate-id",
                            f"{block.type} call_id {block.call_id!r}{inside} is already used "
                            f"by the call on line {calls[block.call_id].line}",
                        )
                    )
                else:
                    calls[block.call_id] = _Call(block.type, block.name, line)
            elif block.kind == "tool_result":
                call = calls.get(block.call_id)
                allowed = _ANSWERS.get(block.type, frozenset())
                if call is None or call.type not in allowed:
                    findings.append(
                        Finding(
                            line,
                            "orphan-result",
                            f"{block.type} call_id {block.call_id!r}{inside} has no earlier "
                            f"{' or '.join(sorted(allowed))} in its history",
                        )
                    )
                elif call.answered:
                    findings.append(
                        Finding(
                            line,
                            "duplicate-id",
                            f"{block.type} call_id {block.call_id!r}{inside} answers the call "
                            f"on line {call.line} a second time",
                        )
                    )
                else:
                    call.answered = True

    for step in steps:
        line = transcript.line_of(step.index)
        if step.kind == "item":
            message = step.messages[0]
            if _is_user_turn(message):
                report_open(f"before the next user message on line {line}", calls)
            take(message)
            history.append(message)
        elif step.kind == "aborted":
            report_open(f"in the turn aborted on line {line}", calls)
        elif step.kind == "compacted":
            # a new history: calls it drops are reported here, the ones it keeps start over
            history = _apply(history, step)
            kept = {b.call_id for m in history for b in m.tool_calls if b.call_id}
            dropped = {k: v for k, v in calls.items() if k not in kept}
            report_open(f"before the compaction on line {line}", dropped)
            reported = {k for k, v in calls.items() if v.reported}
            calls.clear()
            for message in history:
                take(message)
            for call_id in reported & calls.keys():
                calls[call_id].reported = True
        else:  # rollback: the dropped turns' calls leave the history
            history = _apply(history, step)
            kept = {b.call_id for m in history for b in m.tool_calls if b.call_id}
            for call_id in calls.keys() - kept:
                del calls[call_id]
    report_open("by the end of the file", calls)
    return findings
