"""Reading OpenAI Responses API request bodies: what Codex sent the model after a resume.

A body's `input` is a list of items (`message`, `reasoning`, `function_call`,
`function_call_output`, `custom_tool_call`, ...), the same items a Codex rollout stores in its
`response_item` lines and `replacement_history`.

- `key(item)`: what identifies an item across a rollout and a request: a message by its role and
  texts, a reasoning item by its encrypted content (else its summary), a call or an output by its
  call id, any other item by its type and action or encrypted content.
- `view_keys(path)`: the keys of compactcli's context view of a rollout (what it says Codex
  loads on resume), in order, each item once; `is_context(key)`: whether it is standing context
  Codex injects rather than conversation.
- `pairing_problems(body)`: every call without a later output of the same call id and every
  output without an earlier call, as sentences; an empty list means the pairing holds.
- `user_texts(body)`: the user messages' texts; `request_tokens(body)`: the input's size as
  compactcli counts it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from compactcli.estimate import EstimateOptions, estimate
from compactcli.formats import get_dialect
from compactcli.formats.codex.items import CONTEXTUAL_USER_PREFIXES
from compactcli.loading import read_transcript
from compactcli.transcript import Record, Transcript, get_in

CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call", "tool_search_call"})

Key = tuple[str, ...]


def _texts(item: Mapping[str, Any]) -> tuple[str, ...]:
    content = item.get("content")
    if isinstance(content, str):
        return (content,)
    if not isinstance(content, list):
        return ()
    return tuple(str(p.get("text", "")) for p in content if isinstance(p, dict))


def key(item: Mapping[str, Any]) -> Key:
    """What identifies `item` in a rollout and in a request alike."""
    kind = str(item.get("type"))
    if kind == "message":
        return ("message", str(item.get("role")), *_texts(item))
    if kind == "reasoning":
        encrypted = item.get("encrypted_content")
        return ("reasoning", encrypted if encrypted else json.dumps(item.get("summary")))
    if kind in CALLS:
        return ("call", str(item.get("call_id")))
    if kind.endswith("_output"):
        return ("output", str(item.get("call_id")))
    detail = item.get("action", item.get("encrypted_content"))
    return (kind, json.dumps(detail, sort_keys=True))


def items(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A request's input items."""
    found = body.get("input")
    return [i for i in found if isinstance(i, dict)] if isinstance(found, list) else []


def view_keys(path: Path) -> list[Key]:
    """The keys of compactcli's context view of the rollout at `path`, in order."""
    transcript = read_transcript(str(path))
    seen: set[int] = set()
    out: list[Key] = []
    for message in get_dialect(transcript.format).context(transcript):
        raw = get_in(transcript.records[message.index].raw, message.path)
        if id(raw) in seen:
            continue
        seen.add(id(raw))
        if isinstance(raw, dict) and "type" in raw:
            out.append(key(raw))
        else:  # the summary of a compaction without replacement_history: a user message
            texts = (b.text for b in message.blocks if b.kind == "text")
            out.append(("message", message.role, *texts))
    return out


def is_context(item: Key) -> bool:
    """Whether a message is standing context Codex injects (developer and system messages, and
    user messages such as `<environment_context>`), not conversation: Codex injects it afresh on
    resume and drops the old copies when it rebuilds a compacted history."""
    if item[0] != "message":
        return False
    if item[1] in ("developer", "system"):
        return True
    texts = item[2:]
    return (
        item[1] == "user"
        and bool(texts)
        and all(t.lstrip()[:40].lower().startswith(CONTEXTUAL_USER_PREFIXES) for t in texts)
    )


def subsequence_gap(wanted: Sequence[Key], found: Sequence[Key]) -> Key | None:
    """The first of `wanted` that `found` lacks in order, or None when all are there."""
    position = 0
    for item in wanted:
        try:
            position = list(found).index(item, position) + 1
        except ValueError:
            return item
    return None


def pairing_problems(body: Mapping[str, Any]) -> list[str]:
    """Calls without a later output and outputs without an earlier call."""
    problems: list[str] = []
    calls: dict[str, bool] = {}
    for item in items(body):
        kind = str(item.get("type"))
        call_id = str(item.get("call_id"))
        if kind in CALLS:
            calls[call_id] = False
        elif kind.endswith("_output"):
            if call_id not in calls:
                problems.append(f"{kind} {call_id} answers no earlier call")
            calls[call_id] = True
    problems += [f"call {c} has no output" for c, answered in calls.items() if not answered]
    return problems


def user_texts(body: Mapping[str, Any]) -> list[str]:
    """The texts of the user messages, in order."""
    return [
        text
        for item in items(body)
        if item.get("type") == "message" and item.get("role") == "user"
        for text in _texts(item)
    ]


def request_tokens(body: Mapping[str, Any]) -> int:
    """The input's size in heuristic tokens, as compactcli counts a list of Responses items
    (`compactcli estimate --method heuristic`), so two requests compare in the unit compactcli
    reports (an image counts as an image, whatever its bytes)."""
    records = tuple(Record(raw=dict(i)) for i in items(body))
    transcript = Transcript(records=records, format="openai-responses")
    return estimate(transcript, EstimateOptions(method="heuristic")).tokens
