"""Markdown code spans: a text put in one, and read back out.

`code_span(text)` puts a text (a command, a side of a code change) in a code span that stays
whole whatever backticks the text holds; `span_text(inner)` undoes it on what a reader took from
between the outermost backticks, so a summary that shows a command can be read back into the
same command.
"""

from __future__ import annotations

import re

__all__ = ["code_span", "span_text"]


def code_span(text: str) -> str:
    """`text` as a markdown code span: in single backticks, or, when it holds backticks itself
    (a JavaScript template literal), in a run of backticks longer than any in it, with a space
    inside each end (`` `${a}` ``), so that where the span ends stays clear."""
    if "`" not in text:
        return f"`{text}`"
    fence = "`" * (max(len(run) for run in re.findall(r"`+", text)) + 1)
    return f"{fence} {text} {fence}"


def span_text(inner: str) -> str:
    """The text of a code span read without its outermost backticks (`inner`): what
    `code_span` was given. A span of longer fences (text that holds backticks) has its other
    fence backticks and the space inside each end removed; a plain one is the text."""
    if not (inner.startswith("`") and inner.endswith("`")) or len(inner) < 4:
        return inner
    fence = len(inner) - len(inner.lstrip("`"))
    if len(inner) - len(inner.rstrip("`")) < fence or inner[fence] != " ":
        return inner
    return inner[fence + 1 : len(inner) - fence - 1]
