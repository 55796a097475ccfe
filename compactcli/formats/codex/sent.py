"""What Codex sends its model of a tool output (`compactcli.tokens.Costs.sent`): the output
whole up to `RESULT_BYTES` UTF-8 bytes, and a longer one as its head and tail of half as many
bytes each around Codex's marker (`…N tokens truncated…`, N the bytes left out at 4 a token);
the rollout holds the whole output.
"""

from __future__ import annotations

RESULT_BYTES = 48_000
"""The longest tool output Codex sends whole: 12,000 tokens of 4 bytes."""


def sent(text: str) -> str:
    """Tool output `text` as Codex sends it to the model."""
    limit = RESULT_BYTES
    if len(text) * 4 <= limit:  # at most 4 bytes a character: it fits
        return text
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    half = limit // 2
    head = data[:half].decode("utf-8", "ignore")
    tail = data[len(data) - half :].decode("utf-8", "ignore")
    removed = (len(data) - 2 * half + 3) // 4
    return f"{head}…{removed} tokens truncated…{tail}"
