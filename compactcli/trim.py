"""Trimming text to a line and a length: `one_line` puts text on one line, `clip` cuts it at its
end with an ellipsis, `head_tail` keeps its head and tail around a marker, redacting what it
cuts first (`compactcli.redact`), so no piece of a secret is left that no longer reads as one.
"""

from __future__ import annotations

from compactcli.redact import redact


def head_tail(text: str, limit: int) -> str:
    """`text` when it fits in `limit` characters, else its head and tail around a marker.

    A text that is cut is redacted first (`compactcli.redact`), whatever the caller's redaction
    setting: a secret the cut fell inside would leave a piece no longer recognisable as one, and a
    value cut off from its label would no longer be known for a secret.
    """
    if len(text) <= limit:
        return text
    text = redact(text)
    if len(text) <= limit:
        return text
    marker = " […] "
    keep = max(limit - len(marker), 2)
    head = keep * 2 // 3
    tail = keep - head
    return text[:head].rstrip() + marker + text[len(text) - tail :].lstrip()


def one_line(text: str) -> str:
    return " ".join(text.split())


def clip(text: str, limit: int) -> str:
    """`text` on one line, cut to `limit` characters with an ellipsis when longer."""
    text = one_line(text)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
