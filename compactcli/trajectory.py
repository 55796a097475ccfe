"""SWE-agent trajectories (`.traj`): read as OpenAI chat messages, written back as trajectories.

A `.traj` file is one JSON document whose `history` list holds the agent's messages in the
OpenAI chat shape (a tool message names its calls in a `tool_call_ids` list). `to_lines(data,
path)` gives the JSON Lines every reader reads instead: first a line that passes through without
a view (`{"role": "_trajectory", "compactcli_trajectory": {...}}`, holding the document's other
keys and how it was laid out), then one line per history message, a tool message given the
`tool_call_id` the openai format reads (its first `tool_call_ids` entry). `to_document(lines)`
turns JSON Lines written for a `.traj` path back into the document: the other keys in their
order, the messages as `history` (without the `tool_call_id` added), the input's indentation,
escaping and final newline, so a trajectory nothing changed comes back byte for byte. Lines
without that first line become `{"history": [...]}`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any

import orjson

from compactcli.errors import InputError

SUFFIX = ".traj"
ROLE = "_trajectory"
KEY = "compactcli_trajectory"


def is_trajectory(path: str | os.PathLike[str]) -> bool:
    """Whether `path` names a SWE-agent trajectory (by its suffix)."""
    return os.fspath(path).endswith(SUFFIX)


def _layout(data: bytes) -> tuple[int | None, bool, bool]:
    """(indent, ASCII only, final newline) of a JSON document as written."""
    start = data.find(b"\n")
    indent = None
    if start >= 0:
        rest = data[start + 1 :]
        indent = len(rest) - len(rest.lstrip(b" "))
    return indent, data.isascii(), data.endswith(b"\n")


def to_lines(data: bytes, path: str) -> bytes:
    """The JSON Lines a trajectory document reads as (see the module's docstring)."""
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        raise InputError(path, None, f"not a SWE-agent trajectory: invalid JSON: {error}") from None
    history = document.get("history") if isinstance(document, dict) else None
    if not isinstance(history, list) or not all(isinstance(m, dict) for m in history):
        raise InputError(path, None, "not a SWE-agent trajectory: no 'history' list of messages")
    indent, ascii_only, newline = _layout(data)
    layout = {
        "keys": list(document),
        "indent": indent,
        "ascii": ascii_only,
        "newline": newline,
        "rest": {k: v for k, v in document.items() if k != "history"},
    }
    lines = [orjson.dumps({"role": ROLE, KEY: layout})]
    for message in history:
        ids = message.get("tool_call_ids")
        if (
            message.get("role") == "tool"
            and "tool_call_id" not in message
            and isinstance(ids, list)
            and ids
        ):
            message = {**message, "tool_call_id": ids[0]}
        lines.append(orjson.dumps(message))
    return b"\n".join(lines) + b"\n"


def to_document(chunks: Iterable[bytes]) -> bytes:
    """The trajectory document of JSON Lines made by `to_lines` and the stages."""
    layout: dict[str, Any] = {"keys": ["history"], "indent": 2, "ascii": True, "newline": False}
    history: list[Any] = []
    for line in b"".join(chunks).splitlines():
        if not line.strip():
            continue
        item = orjson.loads(line)
        if isinstance(item, dict) and item.get("role") == ROLE and isinstance(item.get(KEY), dict):
            layout = {**layout, **item[KEY]}
            continue
        if isinstance(item, dict) and isinstance(item.get("tool_call_ids"), list):
            ids = item["tool_call_ids"]
            if ids and item.get("tool_call_id") == ids[0]:
                item = {k: v for k, v in item.items() if k != "tool_call_id"}
        history.append(item)
    rest = layout.get("rest") or {}
    document = {k: history if k == "history" else rest.get(k) for k in layout["keys"]}
    if "history" not in document:
        document["history"] = history
    text = json.dumps(document, indent=layout["indent"], ensure_ascii=bool(layout["ascii"]))
    return text.encode("utf-8") + (b"\n" if layout["newline"] else b"")
