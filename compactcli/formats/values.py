"""Small helpers over raw JSON values that the pi, OpenAI and Anthropic dialects share.

They turn raw record values into what `Block`s and `Finding`s hold: compact JSON text for tool
arguments (`json_text`), whether tool output is structured JSON (`looks_json`), a lenient parse
of a JSON string (`parse_json`), token counts that tolerate junk (`number`), and the kind of a
value for one-line error messages (`kind_of`). Pure functions, no I/O.
"""

from __future__ import annotations

from typing import Any

import orjson


def json_text(value: Any) -> str:
    """`value` as compact JSON text (what a tool call's arguments look like to a tokenizer)."""
    return orjson.dumps(value).decode()


def looks_json(text: str) -> bool:
    """True when `text` is a JSON object or array (structured tool output)."""
    if text.lstrip()[:1] not in ("{", "["):
        return False
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError:
        return False
    return True


def parse_json(text: str) -> Any:
    """The JSON value in `text`, or None when it is not valid JSON."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None


def number(value: Any) -> int:
    """An integer token count; 0 for anything that is not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return int(value)


def kind_of(value: Any) -> str:
    """A JSON value's kind, for error messages ("a number", "null", …)."""
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
