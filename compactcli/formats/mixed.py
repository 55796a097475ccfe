"""Files that mix formats: records that only one family of formats writes, and then another's.

Format detection reads only the first records, so a file whose later records are another agent's
(a Codex rollout appended to a Claude Code session, two files concatenated) would otherwise be
read as one format with the rest passed through as unknown records. A transcript's records must
all belong to one family (the registered formats' own `Format.family`, disjoint), or to none:
`check_records` (a whole transcript) and `checked_lines` (a stream) raise `InputError` at the
first record of another family. Only a detected format is checked; a format named with
`--format` reads the file as that format."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TypeVar

from compactcli.errors import InputError
from compactcli.formats import FORMATS
from compactcli.formats.base import RecordFamily
from compactcli.transcript import Record

__all__ = ["Mixing", "check_records", "checked_lines", "families", "family"]

L = TypeVar("L", bound=tuple[Any, ...])


def families() -> dict[str, RecordFamily]:
    """The registered formats' record families by name, in the order of the registry, each
    once (formats that share a family name the same)."""
    found: dict[str, RecordFamily] = {}
    for entry in FORMATS.values():
        kin = entry.record_family()
        if kin is not None:
            found.setdefault(kin.name, kin)
    return found


def family(raw: Mapping[str, Any], known: Iterable[RecordFamily] | None = None) -> str | None:
    """The family only `raw`'s shape belongs to (the first of `known`, the registered ones by
    default, that holds it, asked in the order of the registry), or None: a record with a `type`
    that is not a string, or of no family's shape (metadata records, Responses items, unknown
    types), has no family and goes with any."""
    kind = raw.get("type")
    if kind is not None and not isinstance(kind, str):
        return None  # an array or object: no family has such a type (nor can it be hashed)
    for kin in families().values() if known is None else known:
        if kin.holds(raw, kind):
            return kin.name
    return None


class Mixing:
    """Fed each record's parsed object in file order: the family of the first one that has a
    family, and the line where another family first appears."""

    __slots__ = ("families", "first", "first_line", "known")

    def __init__(self) -> None:
        self.families = families()
        self.known = tuple(self.families.values())
        self.first: str | None = None
        self.first_line = 0

    def other(self, raw: Mapping[str, Any], lineno: int) -> str | None:
        """The family of `raw` when it is not the file's first family, else None."""
        kind = raw.get("type")
        if kind is not None and not isinstance(kind, str):
            return None
        for kin in self.known:
            if kin.holds(raw, kind):
                found = kin.name
                break
        else:
            return None
        if found == self.first:
            return None
        if self.first is None:
            self.first, self.first_line = found, lineno
            # the families are disjoint: the file's own is asked first from here on
            self.known = (kin, *(k for k in self.known if k is not kin))
            return None
        return found

    def error(self, path: str, lineno: int, found: str) -> InputError:
        """The error for line `lineno`, of family `found`."""
        assert self.first is not None
        return InputError(
            path,
            lineno,
            f"{self.families[found].one} after {self.families[self.first].many} (line "
            f"{self.first_line} on): the file mixes formats; split it, or name the format to "
            "read it as with --format",
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
