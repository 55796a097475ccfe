"""What changed between two transcripts of the same session.

`diff(before, after, counter=...)` aligns the records of two transcripts by identity (Claude Code
`uuid`, pi `id`, a tool output's call id, else the record's bytes) and sorts every record into
kept (byte-identical), cleared (same record, a tool output replaced by a placeholder), edited
(same record, other changes), removed and added. It also gives the context tokens before and
after, and the first changed record: where a provider's prompt cache stops matching.
`DiffReport.to_dict()` (a `DiffDict`) is its `--json` object.
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypedDict

from compactcli.estimate import context_tokens
from compactcli.jsonl import dumps
from compactcli.placeholders import CLEARED_PREFIXES
from compactcli.tokens import TokenCounter
from compactcli.transcript import Record, Transcript


class ChangeDict(TypedDict):
    """`Change.to_dict()`: one changed record in the `--json` object of a diff."""

    kind: str
    before_line: int | None
    after_line: int | None
    what: str
    bytes_before: int
    bytes_after: int


@dataclass(frozen=True, slots=True)
class Change:
    """One record that is not kept as it was."""

    kind: str  # cleared | edited | removed | added
    before_line: int | None
    after_line: int | None
    what: str
    bytes_before: int = 0
    bytes_after: int = 0

    def to_dict(self) -> ChangeDict:
        return {
            "kind": self.kind,
            "before_line": self.before_line,
            "after_line": self.after_line,
            "what": self.what,
            "bytes_before": self.bytes_before,
            "bytes_after": self.bytes_after,
        }


class DiffDict(TypedDict):
    """`DiffReport.to_dict()`: the `compactcli diff --json` object, and `diff` in a
    `compact --dry-run --json` row."""

    before: str
    after: str
    format: str
    records_before: int
    records_after: int
    kept: int
    cleared: int
    edited: int
    removed: int
    added: int
    tokens_before: int
    tokens_after: int
    method: str
    first_change: ChangeDict | None
    changes: list[ChangeDict]


@dataclass(frozen=True, slots=True)
class DiffReport:
    """The difference between two transcripts."""

    before: str
    after: str
    format: str
    records_before: int
    records_after: int
    kept: int
    tokens_before: int
    tokens_after: int
    method: str
    changes: tuple[Change, ...] = field(default=())

    def count(self, kind: str) -> int:
        return sum(1 for c in self.changes if c.kind == kind)

    @property
    def first_change(self) -> Change | None:
        return self.changes[0] if self.changes else None

    @property
    def identical(self) -> bool:
        return not self.changes

    def to_dict(self) -> DiffDict:
        first = self.first_change
        return {
            "before": self.before,
            "after": self.after,
            "format": self.format,
            "records_before": self.records_before,
            "records_after": self.records_after,
            "kept": self.kept,
            "cleared": self.count("cleared"),
            "edited": self.count("edited"),
            "removed": self.count("removed"),
            "added": self.count("added"),
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "method": self.method,
            "first_change": first.to_dict() if first else None,
            "changes": [c.to_dict() for c in self.changes],
        }


def _bytes(record: Record) -> bytes:
    return bytes(record.line) if record.line is not None else dumps(record.raw)


def identity(record: Record) -> Hashable:
    """What makes a record the same record in another version of the transcript."""
    raw = record.raw
    if isinstance(raw, Mapping):
        if isinstance(raw.get("uuid"), str):
            return ("uuid", raw["uuid"])
        if isinstance(raw.get("id"), str) and "parentId" in raw:
            return ("id", raw["id"])
        payload = raw.get("payload")
        if isinstance(payload, Mapping) and isinstance(payload.get("call_id"), str):
            return (str(payload.get("type")), payload["call_id"])
        if raw.get("role") == "tool" and isinstance(raw.get("tool_call_id"), str):
            return ("tool", raw["tool_call_id"])
        content = raw.get("content")
        if isinstance(content, list):
            ids = tuple(
                b.get("tool_use_id")
                for b in content
                if isinstance(b, Mapping) and b.get("type") == "tool_result"
            )
            if ids:
                return ("tool_result", ids)
    return ("bytes", hashlib.sha256(_bytes(record)).digest())


def describe(record: Record) -> str:
    """A few words naming a record: its type and role."""
    raw = record.raw
    if not isinstance(raw, Mapping):
        return "unparsed line"
    parts: list[str] = []
    for key in ("type", "subtype", "role"):
        value = raw.get(key)
        if isinstance(value, str):
            parts.append(value)
    for holder in ("message", "payload"):
        inner = raw.get(holder)
        if isinstance(inner, Mapping):
            for key in ("type", "role"):
                value = inner.get(key)
                if isinstance(value, str) and value not in parts:
                    parts.append(value)
    return " ".join(parts) or "record"


def _cleared(after: Record) -> bool:
    text = _bytes(after).decode("utf-8", "replace")
    return any(prefix in text for prefix in CLEARED_PREFIXES)


def diff(before: Transcript, after: Transcript, *, counter: TokenCounter) -> DiffReport:
    """Compare two transcripts of the same session."""
    old = before.records
    new = after.records
    matcher = difflib.SequenceMatcher(
        a=[identity(r) for r in old], b=[identity(r) for r in new], autojunk=False
    )
    changes: list[Change] = []
    kept = 0
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            for a, b in zip(range(a0, a1), range(b0, b1), strict=True):
                if _bytes(old[a]) == _bytes(new[b]):
                    kept += 1
                    continue
                kind = "cleared" if _cleared(new[b]) and not _cleared(old[a]) else "edited"
                changes.append(
                    Change(
                        kind,
                        old[a].lineno,
                        b + 1,
                        describe(old[a]),
                        len(_bytes(old[a])),
                        len(_bytes(new[b])),
                    )
                )
            continue
        changes.extend(
            Change("removed", old[a].lineno, None, describe(old[a]), len(_bytes(old[a])), 0)
            for a in range(a0, a1)
        )
        changes.extend(
            Change("added", None, b + 1, describe(new[b]), 0, len(_bytes(new[b])))
            for b in range(b0, b1)
        )
    changes.sort(key=_order)
    return DiffReport(
        before=before.source,
        after=after.source,
        format=before.format,
        records_before=len(old),
        records_after=len(new),
        kept=kept,
        tokens_before=_tokens(before, counter),
        tokens_after=_tokens(after, counter),
        method=counter.method,
        changes=tuple(changes),
    )


def _order(change: Change) -> tuple[int, int]:
    line = change.before_line if change.before_line is not None else 1 << 60
    return (line, change.after_line or 0)


def _tokens(transcript: Transcript, counter: TokenCounter) -> int:
    return context_tokens(transcript, counter)


def summary_lines(report: DiffReport) -> Sequence[str]:
    """The plain-text rendering of a diff, for pipes (the terminal adds colour and alignment)."""
    saved = report.tokens_before - report.tokens_after
    share = f" ({-saved / report.tokens_before:+.1%})" if report.tokens_before else ""
    lines = [
        f"records: {report.records_before:,} -> {report.records_after:,}  "
        f"kept {report.kept:,}, cleared {report.count('cleared'):,}, "
        f"edited {report.count('edited'):,}, removed {report.count('removed'):,}, "
        f"added {report.count('added'):,}",
        f"tokens:  {report.tokens_before:,} -> {report.tokens_after:,}{share} [{report.method}]",
    ]
    first = report.first_change
    if first is None:
        lines.append("no change: the transcripts are identical record for record")
        return lines
    where = f"line {first.before_line}" if first.before_line else f"new line {first.after_line}"
    lines.append(f"first change: {where} ({first.kind} {first.what}); prompt cache breaks here")
    for change in report.changes:
        before = f"{change.before_line}" if change.before_line else "-"
        after = f"{change.after_line}" if change.after_line else "-"
        size = f"{change.bytes_before:,} -> {change.bytes_after:,} bytes"
        lines.append(f"  {change.kind:<8} {before:>6} {after:>6}  {change.what}  {size}")
    return lines
