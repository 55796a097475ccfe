"""Files that mix formats: records that only one format writes, and then another's.

Format detection reads only the first records, so a file whose later records are another agent's
(a Codex rollout appended to a Claude Code session, two files concatenated) would be read as one
format with the rest passed through as unknown records. Each record whose shape only one family
of formats writes has that family (`family`), and a transcript's records all have the same one,
or none: `check_records` (a whole transcript) and `checked_lines` (a stream) raise `InputError`
at the first record of another family. The readers check only a detected format; a format named
with `--format` reads the file as that format.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TypeVar

from compactcli.errors import InputError
from compactcli.formats.claude_code.records import _DAG_TYPES
from compactcli.formats.codex.items import RECORD_TYPES, is_envelope
from compactcli.formats.pi.tree import ENTRY_TYPES, ROLES
from compactcli.transcript import Record

__all__ = ["Mixing", "check_records", "checked_lines", "family"]

_NAMES = {
    "claude-code": ("a Claude Code record", "Claude Code records"),
    "codex": ("a Codex record", "Codex records"),
    "pi": ("a pi entry", "pi entries"),
    "plain": ("a plain chat message (OpenAI or Anthropic)", "plain chat messages"),
}

_OTHER_KEYS = ("uuid", "parentUuid", "payload")

L = TypeVar("L", bound=tuple[Any, ...])


def family(raw: Mapping[str, Any]) -> str | None:
    """The family only `raw`'s shape belongs to, or None.

    - `claude-code`: a chain record (`user`, `assistant`, `system`, `attachment`, `progress`)
      with `parentUuid` and a string `uuid`;
    - `codex`: an envelope (string `timestamp` and `type`, object `payload`) of a Codex record
      type;
    - `pi`: the `session` header, a `message` entry whose `message` has a pi role, or another pi
      entry type with a string `id` and a `parentId`;
    - `plain`: a chat message (`role` with `content` or `tool_calls`, no `type`), as OpenAI and
      Anthropic message lists hold (and Responses lists may: the API takes them).

    Anything else (metadata records, Responses items, unknown types) has no family and goes with
    any.
    """
    kind = raw.get("type")
    if kind is not None and not isinstance(kind, str):
        return None  # an array or object: no family has such a type (nor can it be hashed)
    if kind in _DAG_TYPES and "parentUuid" in raw and isinstance(raw.get("uuid"), str):
        return "claude-code"
    if kind in RECORD_TYPES and is_envelope(raw):
        return "codex"
    if any(key in raw for key in _OTHER_KEYS):
        return None
    if "role" not in raw:
        if kind == "session":
            return "pi" if isinstance(raw.get("id"), str) else None
        if kind == "message":
            message = raw.get("message")
            role = message.get("role") if isinstance(message, Mapping) else None
            return "pi" if isinstance(role, str) and role in ROLES else None
        if kind in ENTRY_TYPES and isinstance(raw.get("id"), str) and "parentId" in raw:
            return "pi"
        return None
    if kind is None and ("content" in raw or "tool_calls" in raw):
        return "plain"
    return None


class Mixing:
    """Fed each record's parsed object in file order: the family of the first one that has a
    family, and the line where another family first appears."""

    __slots__ = ("first", "first_line")

    def __init__(self) -> None:
        self.first: str | None = None
        self.first_line = 0

    def other(self, raw: Mapping[str, Any], lineno: int) -> str | None:
        """The family of `raw` when it is not the file's first family, else None."""
        found = family(raw)
        if found is None or found == self.first:
            return None
        if self.first is None:
            self.first, self.first_line = found, lineno
            return None
        return found

    def error(self, path: str, lineno: int, found: str) -> InputError:
        """The error for line `lineno`, of family `found`."""
        assert self.first is not None
        return InputError(
            path,
            lineno,
            f"{_NAMES[found][0]} after {_NAMES[self.first][1]} (line {self.first_line} on): the "
            "file mixes formats; split it, or name the format to read it as with --format",
        )


def check_records(records: Iterable[Record], path: str) -> None:
    """Raise `InputError` at the first of `records` of another family than the first:

        mixed.jsonl:18: a Codex record after Claude Code records (line 2 on): the file mixes
        formats; split it, or name the format to read it as with --format

    Records of no family go with any.
    """
    mixing = Mixing()
    other = mixing.other
    for record in records:
        raw = record.raw
        if raw is not None and (found := other(raw, record.lineno)) is not None:
            raise mixing.error(path, record.lineno, found)


def checked_lines(lines: Iterable[L], path: str) -> Iterator[L]:
    """`lines` ((line number, parsed object or None, ...) as a streaming reader yields them)
    passed on as they are, until one of another family than the first: `InputError`."""
    mixing = Mixing()
    other = mixing.other
    for line in lines:
        raw = line[1]
        if raw is not None and (found := other(raw, line[0])) is not None:
            raise mixing.error(path, line[0], found)
        yield line
