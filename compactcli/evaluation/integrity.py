"""Integrity of a compacted transcript (EVAL.md §3.4): what must hold whatever was dropped.

`check(before, after)` returns the integrity failures of a compacted transcript, one line each
(empty: intact): a new validation error, a format that no longer reads back, tool calls and
results unpaired or duplicated on the context view, and kept code altered.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import orjson

from compactcli import boundary
from compactcli.formats import get_dialect
from compactcli.formats.detect import SNIFF_RECORDS, detect_format
from compactcli.loading import to_bytes
from compactcli.transcript import Message, Transcript
from compactcli.validation import validate

_FENCE = re.compile(r"^```[^\n]*\n.*?^```[ \t]*$", re.MULTILINE | re.DOTALL)


def fenced_blocks(text: str) -> list[str]:
    """The complete fenced code blocks in `text`, fences included."""
    return [m.group(0) for m in _FENCE.finditer(text)]


def _texts(messages: Iterable[Message]) -> Iterable[str]:
    for message in messages:
        for block in message.blocks:
            if block.kind in ("text", "tool_result", "thinking") and "```" in block.text:
                yield block.text


def check(before: Transcript, after: Transcript) -> list[str]:
    """The integrity failures of `after`, compacted from `before`, one line each:

    - `invalid`: the output has a validation error (FORMATS.md §6: JSON shape, role order, the
      `parentUuid` chain, ids) that the input did not have;
    - `format`: its bytes, read back, are not detected as the input's format;
    - `unpaired-call` / `orphan-result`: on the context view, a tool call without its result that
      was answered in the input, or a result whose call is gone (pairs are kept or removed
      whole);
    - `duplicate-id`: a tool call id used twice on the context view;
    - `code-block`: a fenced code block in a message compactcli did not write that is not, byte
      for byte, one of the input's fenced code blocks (kept code must not be altered).
    """
    failures: list[str] = []
    errors_before = {(f.code, f.message) for f in validate(before).errors}
    for finding in validate(after).errors:
        if (finding.code, finding.message) not in errors_before:
            failures.append(f"invalid: line {finding.line}: {finding.code}: {finding.message}")
            break
    objects = [orjson.loads(line) for line in to_bytes(after).splitlines() if line.strip()][
        :SNIFF_RECORDS
    ]
    try:
        detected = detect_format([o for o in objects if isinstance(o, dict)], after.source)
    except Exception as error:  # an unknown format is an integrity failure, reported as such
        detected = f"none ({error})"
    if detected != after.format:
        failures.append(f"format: read back as {detected}, not {after.format}")

    dialect = get_dialect(after.format)
    context_before = dialect.context(before) if before.format == after.format else []
    context = dialect.context(after)
    answered_before = {
        b.call_id for m in context_before for b in m.blocks if b.kind == "tool_result" and b.call_id
    }
    calls: list[str] = [
        b.call_id for m in context for b in m.blocks if b.kind == "tool_call" and b.call_id
    ]
    results = {
        b.call_id for m in context for b in m.blocks if b.kind == "tool_result" and b.call_id
    }
    seen: set[str] = set()
    for call in calls:
        if call in seen:
            failures.append(f"duplicate-id: tool call id {call} appears twice")
        seen.add(call)
        if call not in results and call in answered_before:
            failures.append(f"unpaired-call: tool call {call} lost its result")
    for result in sorted(results - set(calls)):
        failures.append(f"orphan-result: tool result {result} has no call")

    kept = set()
    for text in _texts(context_before or dialect.context(before)):
        kept.update(fenced_blocks(text))
    theirs = [
        m for m in context if not m.summary and not boundary.is_ours(after.records[m.index].raw)
    ]
    for text in _texts(theirs):
        for block in fenced_blocks(text):
            if block not in kept:
                first = block.split("\n", 1)[0]
                failures.append(f"code-block: a kept code block differs from the input ({first})")
                break
    return failures
