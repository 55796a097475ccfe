"""Reading Anthropic Messages API request bodies: what an agent sent the model after a resume.

The helpers take a request body (`{"model", "system", "messages", ...}`) as the fake server
recorded it. Content given as a string is one text block. Claude Code also puts `role: "system"`
messages inside `messages` (its per-turn context); they are not conversation and every helper
here skips them.

- `conversation(body)`: the user and assistant messages, each with its content as blocks.
- `items(messages)`: the conversation as a flat list of `Item`s: texts, signed thinking blocks
  (by signature), tool calls and tool results (by id), in order, so that a session's view and a
  request can be compared.
- `pairing_problems(body)`: every way the request breaks the API's tool pairing rule (each
  `tool_use` answered in the next message, each `tool_result` answering a call in the one
  before), as sentences; an empty list means the pairing holds.
- `request_tokens(body)`: the conversation's size counted as `compactcli estimate --method
  heuristic` counts an Anthropic message list, so two requests compare in the unit compactcli
  reports.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compactcli.estimate import EstimateOptions, estimate
from compactcli.transcript import Record, Transcript


@dataclass(frozen=True)
class Item:
    """One piece of a conversation: `kind` is "text", "thinking" (by its signature), "call" or
    "result"; `key` the signature or id, or the
    text without its surrounding white space (Claude Code ends a user text it merges with the
    next user message with a newline)."""

    role: str
    kind: str
    key: str


def blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A message's content as a list of blocks."""
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def conversation(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The user and assistant messages of a request, in order."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return []
    return [m for m in messages if isinstance(m, dict) and m.get("role") in ("user", "assistant")]


def result_text(block: Mapping[str, Any]) -> str:
    """A tool result's content as text (its text parts joined)."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def items(messages: Iterable[Mapping[str, Any]]) -> list[Item]:
    """Texts, tool calls and tool results of `messages`, in order."""
    out: list[Item] = []
    for message in messages:
        role = str(message.get("role"))
        for block in blocks(message):
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                out.append(Item(role, "text", block["text"].strip()))
            elif kind == "thinking" and isinstance(block.get("signature"), str):
                out.append(Item(role, "thinking", block["signature"]))
            elif kind == "tool_use" and isinstance(block.get("id"), str):
                out.append(Item(role, "call", block["id"]))
            elif kind == "tool_result" and isinstance(block.get("tool_use_id"), str):
                out.append(Item(role, "result", block["tool_use_id"]))
    return out


def texts(body: Mapping[str, Any]) -> str:
    """Every text the conversation holds (text blocks and tool results), joined by newlines."""
    parts: list[str] = []
    for message in conversation(body):
        for block in blocks(message):
            if block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif block.get("type") == "tool_result":
                parts.append(result_text(block))
    return "\n".join(parts)


def call_ids(body: Mapping[str, Any]) -> list[str]:
    """The ids of the request's tool calls, in order."""
    return [i.key for i in items(conversation(body)) if i.kind == "call"]


def result_ids(body: Mapping[str, Any]) -> list[str]:
    """The call ids the request's tool results answer, in order."""
    return [i.key for i in items(conversation(body)) if i.kind == "result"]


def last_user_text(body: Mapping[str, Any]) -> str | None:
    """The last text block of the last message, when that message is the user's."""
    messages = conversation(body)
    if not messages or messages[-1].get("role") != "user":
        return None
    found = [b for b in blocks(messages[-1]) if b.get("type") == "text"]
    return str(found[-1].get("text")) if found else None


def pairing_problems(body: Mapping[str, Any]) -> list[str]:
    """How the request breaks tool pairing: unanswered calls, results without their call."""
    problems: list[str] = []
    messages = conversation(body)
    for position, message in enumerate(messages):
        mine = [b for b in blocks(message)]
        calls = [str(b.get("id")) for b in mine if b.get("type") == "tool_use"]
        results = [str(b.get("tool_use_id")) for b in mine if b.get("type") == "tool_result"]
        if calls:
            following = messages[position + 1] if position + 1 < len(messages) else {}
            answered = {
                str(b.get("tool_use_id"))
                for b in blocks(following)
                if following.get("role") == "user" and b.get("type") == "tool_result"
            }
            problems.extend(
                f"message {position}: tool_use {call} has no tool_result in the next message"
                for call in calls
                if call not in answered
            )
        if results:
            previous = messages[position - 1] if position > 0 else {}
            made = {
                str(b.get("id"))
                for b in blocks(previous)
                if previous.get("role") == "assistant" and b.get("type") == "tool_use"
            }
            problems.extend(
                f"message {position}: tool_result {result} answers no tool_use of the message before"
                for result in results
                if result not in made
            )
            kinds = [b.get("type") for b in mine]
            first_other = next((i for i, k in enumerate(kinds) if k != "tool_result"), len(kinds))
            if "tool_result" in kinds[first_other:]:
                problems.append(f"message {position}: a tool_result comes after other content")
    return problems


def request_tokens(body: Mapping[str, Any]) -> int:
    """The conversation's size in heuristic tokens, as compactcli counts Anthropic messages."""
    records = tuple(Record(raw=dict(m)) for m in conversation(body))
    transcript = Transcript(records=records, format="anthropic")
    return estimate(transcript, EstimateOptions(method="heuristic")).tokens


def subsequence_gap(wanted: Sequence[Item], found: Sequence[Item]) -> Item | None:
    """The first item of `wanted` that `found` does not hold in the same order, or None."""
    position = 0
    for item in wanted:
        while position < len(found) and found[position] != item:
            position += 1
        if position == len(found):
            return item
        position += 1
    return None
