"""The openai dialect: OpenAI Chat Completions messages, one per JSONL line (FORMATS.md §3.1, §5).

Each line is a chat message `{"role", "content", …}`, read into one message view per line, its
content parts, reasoning and tool calls as blocks; lines that are not messages (a hermes-agent
`session_meta` line, Kimi CLI's `_`-role lines, unknown roles) pass through without a view. There
is no compaction record: the context is every message, a compaction rewrites the list, and a
message carrying our top-level `compactcli` key is a summary. `OpenAIDialect` also reads the
usage the file records and validates the list as the API would accept it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from compactcli.errors import InputError
from compactcli.formats.base import Finding, remembered
from compactcli.formats.plain.dialect import PlainDialect, parse_records
from compactcli.formats.values import json_text, kind_of, looks_json, number, parse_json
from compactcli.images import ImageSize, image_size
from compactcli.transcript import Block, JsonPath, Message, Role, Transcript, Usage

ROLES: dict[str, Role] = {
    "system": "system",
    "developer": "developer",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
    "function": "tool",
}

_Fail = Callable[[str], InputError]
_Line = Callable[[Message], int]


class OpenAIDialect(PlainDialect):
    """The `openai` dialect.

    Roles `system`, `developer`, `user`, `assistant` and `tool` map onto the same roles, and
    the deprecated `function` role is a `tool` message. Writing uses the contract's defaults:
    a cleared tool message's `content` becomes a string, an image part becomes a `text` part,
    and no boundary record is added (a plain list has no place for one; it goes to the stats
    report).
    """

    name = "openai"
    summary = "OpenAI chat messages, one per line (also hermes-agent and Kimi CLI)"

    @staticmethod
    def parse(transcript: Transcript, index: int, raw: Mapping[str, Any]) -> list[Message]:
        return _parse(transcript, index, raw)

    side = 0

    @remembered
    def usage(self, transcript: Transcript) -> list[Usage]:
        """A Kimi `{"role":"_usage","token_count":N}` line (the context size after a model
        step, Kimi's own measure) with `context = N`, and an assistant message that carries
        an API `usage` object, with `context = total_tokens`, or prompt + completion."""
        found: list[Usage] = []
        for index, record in transcript.objects():
            raw = record.raw
            role = raw.get("role")
            if role == "_usage" and number(raw.get("token_count")) > 0:
                found.append(Usage(index=index, context=number(raw["token_count"])))
            elif role == "assistant" and isinstance(raw.get("usage"), Mapping):
                usage = raw["usage"]
                prompt = number(usage.get("prompt_tokens"))
                completion = number(usage.get("completion_tokens"))
                context = number(usage.get("total_tokens")) or prompt + completion
                details = usage.get("prompt_tokens_details")
                cached = number(details.get("cached_tokens")) if isinstance(details, Mapping) else 0
                if context > 0:
                    found.append(
                        Usage(
                            index=index,
                            context=context,
                            input=prompt,
                            output=completion,
                            cached=cached,
                            key=raw.get("id") if isinstance(raw.get("id"), str) else None,
                        )
                    )
        return found

    def model(self, transcript: Transcript) -> str | None:
        """The last assistant message's `model`, else the hermes `session_meta` model."""
        found = super().model(transcript)
        if found is not None:
            return found
        for _, record in transcript.objects():
            if record.raw.get("role") == "session_meta" and isinstance(
                record.raw.get("model"), str
            ):
                return str(record.raw["model"])
        return None

    @remembered
    def validate(self, transcript: Transcript) -> list[Finding]:
        """The list read as the API reads it.

        Codes: `first-role` (an error when the list opens with a `tool` message; a warning
        when it opens with an assistant message, which the API accepts, or when a system or
        developer message exists but is not the first), `orphan-result` (a tool message
        answering an id no assistant made), `result-not-adjacent` (answering an id of an
        assistant that is not the one right before this run of tool messages),
        `call-unanswered` (an id not answered before the next non-tool message: an error, or a
        warning when nothing follows), `duplicate-id` (the same id twice in one assistant
        message or answered twice: errors; an id reused by a later assistant message: a
        warning, as pairing stays unambiguous with results right after their call),
        `bad-shape`.
        """
        messages, findings = parse_records(transcript, _parse, strict=False)
        records = transcript.records

        def line(message: Message) -> int:
            return records[message.index].lineno

        # Every call id, where it was made first; duplicates inside one message or reused later.
        made: dict[str, int] = {}
        for message in messages:
            own: set[str] = set()
            for block in message.tool_calls:
                if block.call_id is None:
                    continue
                if block.call_id in own:
                    findings.append(
                        Finding(
                            line(message),
                            "duplicate-id",
                            f"tool call id {block.call_id!r} appears twice in one message",
                        )
                    )
                elif block.call_id in made:
                    findings.append(
                        Finding(
                            line(message),
                            "duplicate-id",
                            f"tool call id {block.call_id!r} reused "
                            f"(first made on line {made[block.call_id]})",
                            "warning",
                        )
                    )
                else:
                    made[block.call_id] = line(message)
                own.add(block.call_id)

        findings += _check_roles(messages, line)

        open_call: Message | None = None  # the assistant whose tool messages may follow
        answered: dict[str, int] = {}
        for position, message in enumerate(messages):
            if message.role == "tool":
                if position == 0:
                    continue  # reported as first-role
                for block in message.tool_results:
                    findings += _check_result(message, block, open_call, answered, made, line)
                continue
            if open_call is not None:
                findings += _unanswered(open_call, answered, line, next_line=line(message))
            open_call = message if message.tool_calls else None
            answered = {}
        if open_call is not None:
            findings += _unanswered(open_call, answered, line, next_line=None)
        return findings


def _check_roles(messages: Sequence[Message], line: _Line) -> list[Finding]:
    if not messages:
        return []
    findings: list[Finding] = []
    first = messages[0]
    if first.role == "tool":
        findings.append(
            Finding(line(first), "first-role", "the list starts with a tool message, not a call")
        )
    elif first.role == "assistant":
        findings.append(
            Finding(
                line(first),
                "first-role",
                "the list starts with an assistant message, not a system or user message",
                "warning",
            )
        )
    if first.role not in ("system", "developer"):
        for message in messages:
            if message.role in ("system", "developer"):
                findings.append(
                    Finding(
                        line(message),
                        "first-role",
                        f"{message.role} message is not first (the list starts on line "
                        f"{line(first)})",
                        "warning",
                    )
                )
                break
    return findings


def _check_result(
    message: Message,
    block: Block,
    open_call: Message | None,
    answered: dict[str, int],
    made: Mapping[str, int],
    line: _Line,
) -> list[Finding]:
    here = line(message)
    if block.type == "function":
        return []  # the deprecated function role pairs by name, not by id
    call_id = block.call_id
    if call_id is None:
        return [Finding(here, "bad-shape", "tool message has no tool_call_id")]
    if open_call is not None and any(c.call_id == call_id for c in open_call.tool_calls):
        if call_id in answered:
            return [
                Finding(
                    here,
                    "duplicate-id",
                    f"second tool message for call {call_id!r} "
                    f"(the first is on line {answered[call_id]})",
                )
            ]
        answered[call_id] = here
        return []
    if call_id in made:
        return [
            Finding(
                here,
                "result-not-adjacent",
                f"tool message for call {call_id!r} does not follow the assistant message that "
                f"made the call (line {made[call_id]}) and its other results",
            )
        ]
    return [Finding(here, "orphan-result", f"tool message for unknown call {call_id!r}")]


def _unanswered(
    assistant: Message, answered: Mapping[str, int], line: _Line, *, next_line: int | None
) -> list[Finding]:
    missing = [b.call_id for b in assistant.tool_calls if b.call_id and b.call_id not in answered]
    if not missing:
        return []
    ids = ", ".join(repr(c) for c in dict.fromkeys(missing))
    if next_line is None:
        return [
            Finding(
                line(assistant),
                "call-unanswered",
                f"tool call {ids} has no tool message (end of file)",
                "warning",
            )
        ]
    return [
        Finding(
            line(assistant),
            "call-unanswered",
            f"tool call {ids} has no tool message before line {next_line}",
        )
    ]


def _parse(transcript: Transcript, index: int, raw: Mapping[str, Any]) -> list[Message]:
    """The message a record holds ([] for a non-message line). Raises InputError if malformed.

    Non-message lines: the hermes-agent `{"role":"session_meta",…}` first line, Kimi CLI's
    `_system_prompt` / `_checkpoint` / `_usage` lines (any role starting with `_`), and a role
    this dialect does not know. String content is one `text` block; content parts `text`,
    `image_url` (image), `file` (document), `refusal` (text), Kimi's `think` (thinking),
    anything else `other`. An assistant's `reasoning_content` / `reasoning` string (DeepSeek,
    hermes) comes first as a `thinking` block, its `refusal` string as text, then one
    `tool_call` block per `tool_calls` item (its `function.arguments` JSON string as the text,
    parsed into `arguments`; a `custom` tool's `input` as plain text) and the deprecated
    `function_call`. A `tool` message is one `tool_result` block whose path is the record
    itself; SWE-agent's `tool_call_ids` list gives one block per id, the content going to the
    first.
    """
    role = raw.get("role")
    if not isinstance(role, str) or role not in ROLES:
        return []
    line = transcript.records[index].lineno

    def fail(reason: str) -> InputError:
        return InputError(transcript.source, line, reason)

    model = raw.get("model")
    message_id = raw.get("id")
    common: dict[str, Any] = {
        "index": index,
        "id": message_id if isinstance(message_id, str) else None,
        "model": model if isinstance(model, str) else None,
        "summary": "compactcli" in raw,
    }
    if role in ("tool", "function"):
        return [Message(role="tool", blocks=_result_blocks(raw, role, fail), **common)]
    blocks: list[Block] = []
    if role == "assistant":
        for key in ("reasoning_content", "reasoning"):
            if isinstance(raw.get(key), str) and raw[key]:
                blocks.append(Block("thinking", raw[key], type=key, path=(key,)))
    blocks += _content_blocks(raw.get("content"), role, fail)
    if role == "assistant":
        if isinstance(raw.get("refusal"), str) and raw["refusal"]:
            blocks.append(Block("text", raw["refusal"], type="refusal", path=("refusal",)))
        blocks += _call_blocks(raw, fail)
    return [Message(role=ROLES[role], blocks=tuple(blocks), **common)]


def _content_blocks(content: Any, role: str, fail: _Fail) -> list[Block]:
    path: JsonPath = ("content",)
    if content is None:
        return []
    if isinstance(content, str):
        return [Block("text", content, type="text", path=path)]
    if not isinstance(content, list):
        raise fail(f"{role} content is {kind_of(content)}, not a string, a list or null")
    blocks: list[Block] = []
    for position, part in enumerate(content):
        where = (*path, position)
        if not isinstance(part, Mapping):
            raise fail(f"{role} content part {position} is {kind_of(part)}, not an object")
        kind = part.get("type")
        if kind == "text":
            blocks.append(Block("text", _text(part.get("text")), type="text", path=where))
        elif kind == "refusal":
            blocks.append(Block("text", _text(part.get("refusal")), type="refusal", path=where))
        elif kind == "think":
            blocks.append(Block("thinking", _text(part.get("think")), type="think", path=where))
        elif kind == "image_url":
            blocks.append(
                Block("image", type="image_url", path=where, images=(_image_url_size(part),))
            )
        elif kind == "file":
            blocks.append(Block("document", type="file", path=where, images=(None,)))
        else:
            blocks.append(Block("other", type=str(kind or ""), path=where))
    return blocks


def _call_blocks(raw: Mapping[str, Any], fail: _Fail) -> list[Block]:
    blocks: list[Block] = []
    calls = raw.get("tool_calls")
    if calls is not None and not isinstance(calls, list):
        raise fail(f"tool_calls is {kind_of(calls)}, not a list")
    for position, call in enumerate(calls or ()):
        where: JsonPath = ("tool_calls", position)
        if not isinstance(call, Mapping):
            raise fail(f"tool call {position} is {kind_of(call)}, not an object")
        call_id = call.get("id")
        if not isinstance(call_id, str):
            raise fail(f"tool call {position} has no string id")
        kind = call.get("type", "function")
        if kind == "custom" and isinstance(call.get("custom"), Mapping):
            custom = call["custom"]
            blocks.append(
                Block(
                    "tool_call",
                    _text(custom.get("input")),
                    call_id=call_id,
                    name=_name(custom.get("name")),
                    type="custom",
                    path=where,
                )
            )
            continue
        function = call.get("function")
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            raise fail(f"tool call {call_id!r} has no function name")
        blocks.append(_arguments_block(function, call_id, str(kind), where))
    function_call = raw.get("function_call")
    if isinstance(function_call, Mapping) and isinstance(function_call.get("name"), str):
        blocks.append(_arguments_block(function_call, None, "function_call", ("function_call",)))
    return blocks


def _arguments_block(
    function: Mapping[str, Any], call_id: str | None, kind: str, path: JsonPath
) -> Block:
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        text, parsed = arguments, parse_json(arguments)
    else:  # not what the API writes, but some exporters store the parsed object
        text, parsed = json_text(arguments if arguments is not None else {}), arguments
    return Block(
        "tool_call",
        text,
        json=True,
        call_id=call_id,
        name=str(function["name"]),
        arguments=parsed,
        type=kind,
        path=path,
    )


def _image_url_size(part: Mapping[str, Any]) -> ImageSize | None:
    """The size of an `image_url` part's image, when it is a `data:` URL whose header reads
    (`detail: low` noted)."""
    value = part.get("image_url")
    if isinstance(value, Mapping):
        return image_size(value.get("url"), low=value.get("detail") == "low")
    return image_size(value)


def _result_blocks(raw: Mapping[str, Any], role: str, fail: _Fail) -> tuple[Block, ...]:
    content = raw.get("content")
    texts: list[str] = []
    images: list[ImageSize | None] = []
    if isinstance(content, str):
        texts.append(content)
    elif isinstance(content, list):
        for position, part in enumerate(content):
            if not isinstance(part, Mapping):
                raise fail(f"{role} content part {position} is {kind_of(part)}, not an object")
            if part.get("type") == "text":
                texts.append(_text(part.get("text")))
            elif part.get("type") == "image_url":
                images.append(_image_url_size(part))
            elif part.get("type") == "file":
                images.append(None)
    elif content is not None:
        raise fail(f"{role} content is {kind_of(content)}, not a string, a list or null")
    text = "\n".join(texts)
    name = _name(raw.get("name"))
    if role == "function":
        return (Block("tool_result", text, json=looks_json(text), name=name, type="function"),)
    ids: list[str | None] = []
    if isinstance(raw.get("tool_call_id"), str):
        ids.append(raw["tool_call_id"])
    elif isinstance(raw.get("tool_call_ids"), list):
        ids += [c for c in raw["tool_call_ids"] if isinstance(c, str)]
    structured = looks_json(text)
    blocks = [
        Block(
            "tool_result",
            text if position == 0 else "",
            json=structured,
            call_id=call_id,
            name=name,
            type="tool",
            images=tuple(images) if position == 0 else (),
        )
        for position, call_id in enumerate(ids or [None])
    ]
    return tuple(blocks)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _name(value: Any) -> str | None:
    return value if isinstance(value, str) else None
