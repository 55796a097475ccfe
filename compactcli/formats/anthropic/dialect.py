"""The anthropic dialect: Anthropic Messages API messages, one per JSONL line (FORMATS.md §3.2).

Each line is `{"role": "user"|"assistant", "content": str | [blocks], …}`, read into one message
view per line; the system prompt is not a message and has no line, and records with another role,
or none, pass through without a view. There is no compaction record: the context is every
message, a compaction rewrites the list, and a message carrying our top-level `compactcli` key is
a summary. `AnthropicDialect` also reads the usage of saved API responses and validates the list
as the API reads it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from compactcli.errors import InputError
from compactcli.formats.base import Finding, remembered
from compactcli.formats.plain.dialect import PlainDialect, parse_records
from compactcli.formats.values import json_text, kind_of, looks_json, number
from compactcli.images import ImageSize, source_size
from compactcli.transcript import Block, Images, JsonPath, Message, Transcript, Usage

_Fail = Callable[[str], InputError]
_Line = Callable[[Message], int]

SERVER_CALLS = frozenset({"server_tool_use", "mcp_tool_use"})


class AnthropicDialect(PlainDialect):
    """The `anthropic` dialect.

    Writing uses the contract's defaults: a cleared `tool_result`'s `content` becomes a string,
    an image or document block becomes a `text` block, and no boundary record is added (a plain
    list has no place for one; it goes to the stats report).
    """

    name = "anthropic"
    summary = "Anthropic Messages API messages, one per line"

    @staticmethod
    def parse(transcript: Transcript, index: int, raw: Mapping[str, Any]) -> list[Message]:
        return _parse(transcript, index, raw)

    side = 1

    @remembered
    def usage(self, transcript: Transcript) -> list[Usage]:
        """The usage of lines that are saved API responses (`{"id":"msg_…","usage":{…}}`), once per
        message id: `context = input_tokens + cache_creation_input_tokens +
        cache_read_input_tokens + output_tokens`.
        """
        found: list[Usage] = []
        seen: set[str] = set()
        for index, record in transcript.objects():
            raw = record.raw
            usage = raw.get("usage")
            if raw.get("role") != "assistant" or not isinstance(usage, Mapping):
                continue
            key = raw.get("id") if isinstance(raw.get("id"), str) else None
            if key is not None:
                if key in seen:
                    continue
                seen.add(key)
            fresh = number(usage.get("input_tokens"))
            written = number(usage.get("cache_creation_input_tokens"))
            read = number(usage.get("cache_read_input_tokens"))
            output = number(usage.get("output_tokens"))
            context = fresh + written + read + output
            if context > 0:
                found.append(
                    Usage(
                        index=index,
                        context=context,
                        input=fresh + written + read,
                        output=output,
                        cached=read,
                        key=key,
                    )
                )
        return found

    @remembered
    def validate(self, transcript: Transcript) -> list[Finding]:
        """The list read as the API reads it: consecutive messages of one role are one turn
        (the first-party API merges them; Bedrock refuses them).

        Codes: `first-role` (the first message is not `user`), `role-order` (a warning for
        each message that continues a same-role turn), `call-unanswered` (a `tool_use` without
        a `tool_result` in the next turn: an error, or a warning when it is the file's last
        turn, as an interrupted session leaves it), `result-order` (a `tool_result` after other
        content in its turn: tool results must come first), `result-not-adjacent` (a
        `tool_result` for a `tool_use` of an earlier turn), `orphan-result` (for a `tool_use`
        that is nowhere), `duplicate-id` (a `tool_use` id used twice, or answered twice),
        `bad-shape` (a malformed message, or a call or result on the wrong side).
        """
        messages, findings = parse_records(transcript, _parse, strict=False)
        if not messages:
            return findings
        records = transcript.records

        def line(message: Message) -> int:
            return records[message.index].lineno

        if messages[0].role != "user":
            findings.append(
                Finding(
                    line(messages[0]),
                    "first-role",
                    f"the first message is {messages[0].role}, not user",
                )
            )
        turns: list[list[Message]] = []
        for message in messages:
            if turns and turns[-1][0].role == message.role:
                previous = turns[-1][-1]
                findings.append(
                    Finding(
                        line(message),
                        "role-order",
                        f"second {message.role} message in a row (after line {line(previous)}); "
                        "the API merges them into one turn",
                        "warning",
                    )
                )
                turns[-1].append(message)
            else:
                turns.append([message])

        made: dict[str, int] = {}
        for message in messages:
            for block in message.tool_calls:
                if message.role != "assistant":
                    findings.append(
                        Finding(line(message), "bad-shape", "tool_use block in a user message")
                    )
                elif block.call_id in made:
                    findings.append(
                        Finding(
                            line(message),
                            "duplicate-id",
                            f"tool_use id {block.call_id!r} used twice "
                            f"(first on line {made[block.call_id]})",
                        )
                    )
                elif block.call_id is not None:
                    made[block.call_id] = line(message)

        for position, turn in enumerate(turns):
            following = turns[position + 1] if position + 1 < len(turns) else None
            if turn[0].role == "assistant":
                findings += _check_calls(turn, following, line)
            else:
                before = turns[position - 1] if position > 0 else None
                findings += _check_results(turn, before, made, line)
        return findings


def _check_calls(
    turn: Sequence[Message], following: Sequence[Message] | None, line: _Line
) -> list[Finding]:
    """Every tool_use of an assistant turn is answered in the next (user) turn."""
    findings: list[Finding] = []
    answered = {b.call_id for message in following or () for b in message.tool_results if b.call_id}
    for message in turn:
        if message.tool_results:
            findings.append(
                Finding(line(message), "bad-shape", "tool_result block in an assistant message")
            )
        missing = [b.call_id for b in message.tool_calls if b.call_id not in answered]
        if not missing:
            continue
        ids = ", ".join(repr(c) for c in missing)
        if following is None:
            findings.append(
                Finding(
                    line(message),
                    "call-unanswered",
                    f"tool_use {ids} has no tool_result (end of file)",
                    "warning",
                )
            )
        else:
            findings.append(
                Finding(
                    line(message),
                    "call-unanswered",
                    f"tool_use {ids} has no tool_result in the next message "
                    f"(line {line(following[0])})",
                )
            )
    return findings


def _check_results(
    turn: Sequence[Message],
    previous: Sequence[Message] | None,
    made: Mapping[str, int],
    line: _Line,
) -> list[Finding]:
    """A user turn's tool_results answer the turn before, and come first."""
    findings: list[Finding] = []
    calls = {b.call_id for message in previous or () for b in message.tool_calls if b.call_id}
    answered: dict[str, int] = {}
    other_content = False
    for message in turn:
        here = line(message)
        for block in message.blocks:
            if block.kind != "tool_result":
                other_content = other_content or block.kind != "tool_call"
                continue
            call_id = block.call_id or ""
            if other_content:
                findings.append(
                    Finding(
                        here,
                        "result-order",
                        f"tool_result for {call_id!r} comes after other content; "
                        "tool_result blocks must come first",
                    )
                )
            if call_id in calls:
                if call_id in answered:
                    findings.append(
                        Finding(
                            here,
                            "duplicate-id",
                            f"second tool_result for {call_id!r} "
                            f"(the first is on line {answered[call_id]})",
                        )
                    )
                answered.setdefault(call_id, here)
            elif call_id in made:
                findings.append(
                    Finding(
                        here,
                        "result-not-adjacent",
                        f"tool_result for {call_id!r} is not in the message right after its "
                        f"tool_use (line {made[call_id]})",
                    )
                )
            else:
                findings.append(
                    Finding(here, "orphan-result", f"tool_result for unknown tool_use {call_id!r}")
                )
    return findings


def _parse(transcript: Transcript, index: int, raw: Mapping[str, Any]) -> list[Message]:
    """The message a record holds ([] for a non-message line). Raises InputError if malformed.

    String content is one `text` block. Blocks: `text`; `image` and `document`; `thinking`
    (its text) and `redacted_thinking` (no text) as thinking; `tool_use` as a tool call (its
    `input` as JSON text and as `arguments`); `tool_result` as a tool result (content flattened
    to text, images and documents counted, `is_error`). Server-side tools (`server_tool_use`,
    `mcp_tool_use`, and the `*_tool_result` blocks that answer them inside the same assistant
    message) are `other` blocks that keep their call id and name: the API runs and pairs them
    itself, so they are never cleared or re-paired.
    """
    role = raw.get("role")
    if role not in ("user", "assistant"):
        return []
    line = transcript.records[index].lineno

    def fail(reason: str) -> InputError:
        return InputError(transcript.source, line, reason)

    content = raw.get("content")
    path: JsonPath = ("content",)
    if isinstance(content, str):
        blocks: tuple[Block, ...] = (Block("text", content, type="text", path=path),)
    elif isinstance(content, list):
        blocks = tuple(_block(block, (*path, n), fail) for n, block in enumerate(content))
    else:
        raise fail(f"{role} content is {kind_of(content)}, not a string or a list of blocks")
    model, message_id = raw.get("model"), raw.get("id")
    return [
        Message(
            index=index,
            role="user" if role == "user" else "assistant",
            blocks=blocks,
            id=message_id if isinstance(message_id, str) else None,
            model=model if isinstance(model, str) else None,
            summary="compactcli" in raw,
        )
    ]


def _block(block: Any, path: JsonPath, fail: _Fail) -> Block:
    if not isinstance(block, Mapping):
        raise fail(f"content block {path[-1]} is {kind_of(block)}, not an object")
    kind = block.get("type")
    if not isinstance(kind, str):
        raise fail(f"content block {path[-1]} has no type")
    if kind == "text":
        return Block("text", _text(block.get("text")), type=kind, path=path)
    if kind == "image":
        return Block("image", type=kind, path=path, images=(source_size(block),))
    if kind == "document":
        return Block("document", type=kind, path=path, images=(None,))
    if kind == "thinking":
        return Block("thinking", _text(block.get("thinking")), type=kind, path=path)
    if kind == "redacted_thinking":
        return Block("thinking", type=kind, path=path)
    if kind == "tool_use":
        call_id, name = block.get("id"), block.get("name")
        if not isinstance(call_id, str) or not isinstance(name, str):
            raise fail(f"tool_use block {path[-1]} has no string id and name")
        arguments = block.get("input")
        return Block(
            "tool_call",
            json_text(arguments if arguments is not None else {}),
            json=True,
            call_id=call_id,
            name=name,
            arguments=arguments,
            type=kind,
            path=path,
        )
    if kind == "tool_result":
        call_id = block.get("tool_use_id")
        if not isinstance(call_id, str):
            raise fail(f"tool_result block {path[-1]} has no string tool_use_id")
        text, images = _flatten(block.get("content"), path, fail)
        return Block(
            "tool_result",
            text,
            json=looks_json(text),
            call_id=call_id,
            is_error=block.get("is_error") is True,
            type=kind,
            path=path,
            images=images,
        )
    call_id = block.get("id") if kind in SERVER_CALLS else block.get("tool_use_id")
    name = block.get("name")
    return Block(
        "other",
        call_id=call_id if isinstance(call_id, str) else None,
        name=name if isinstance(name, str) else None,
        type=kind,
        path=path,
    )


def _flatten(content: Any, path: JsonPath, fail: _Fail) -> tuple[str, Images]:
    """A tool_result's content as text, and the images and documents it holds."""
    if content is None:
        return "", ()
    if isinstance(content, str):
        return content, ()
    if not isinstance(content, list):
        raise fail(f"tool_result block {path[-1]} content is {kind_of(content)}")
    texts: list[str] = []
    images: list[ImageSize | None] = []
    for part in content:
        if not isinstance(part, Mapping):
            raise fail(f"tool_result block {path[-1]} holds {kind_of(part)}, not a block")
        kind = part.get("type")
        if kind == "text":
            texts.append(_text(part.get("text")))
        elif kind in ("image", "document"):
            images.append(source_size(part))
        elif kind == "search_result":
            for inner in part.get("content") or ():
                if isinstance(inner, Mapping) and inner.get("type") == "text":
                    texts.append(_text(inner.get("text")))
    return "\n".join(texts), tuple(images)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
