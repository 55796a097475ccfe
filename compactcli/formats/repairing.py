"""What the per-format repairs share: the `Repair` they report and the `Edits` they make.

A format's repair (the `repair` its package's entry names) is a function `repair(transcript,
findings) -> (Transcript, list[Repair])`: given what its dialect's `validate` found, it fixes
what it can the way the agent that writes the format does when it loads a session, and says what
it did, one `Repair` per fix, planning its edits on an `Edits` applied at once.
`compactcli.repair` runs the passes until the transcript validates or nothing more can be done.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from compactcli.formats.base import Finding
from compactcli.transcript import Record, Transcript


class RepairDict(TypedDict):
    """`Repair.to_dict()`: one repair as the `--json` rows and the stats report list it."""

    line: int
    code: str
    action: str


@dataclass(frozen=True, slots=True)
class Repair:
    """One fix: the input line of the record it concerns, the `validate` code it answers, and
    what was done, in a few words."""

    line: int
    code: str
    action: str

    def to_dict(self) -> RepairDict:
        return {"line": self.line, "code": self.code, "action": self.action}


class Edits:
    """Record edits planned on one transcript, applied at once by `apply`.

    A record can be replaced (`replace`), dropped (`drop`) or moved to the front of the file
    (`move_first`), and new records go after an existing one (`insert_after`, or at the very
    start with index -1). `claim(i)` tells whether record `i` is still free in this pass, and
    takes it: each record is edited at most once per pass, and what depends on another fix waits
    for the next pass, on the transcript as fixed.

    `Edits` never changes the records it was given: edited records are copies (`Record.with_raw`,
    which keeps their input line), new records have line 0, and a record nothing touched stays
    the same object, so it is written back byte for byte.
    """

    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        self.repairs: list[Repair] = []
        self._raw: dict[int, Any] = {}
        self._dropped: set[int] = set()
        self._first: list[int] = []
        self._after: dict[int, list[Any]] = {}
        self._claimed: set[int] = set()

    def claim(self, index: int) -> bool:
        """Whether record `index` is free in this pass (then it is taken)."""
        if index in self._claimed:
            return False
        self._claimed.add(index)
        return True

    def claimed(self, index: int) -> bool:
        return index in self._claimed

    def raw(self, index: int) -> Any:
        """Record `index`'s JSON as planned so far."""
        if index in self._raw:
            return self._raw[index]
        return self.transcript.records[index].raw

    def line(self, index: int) -> int:
        return self.transcript.records[index].lineno

    def note(self, index: int, code: str, action: str) -> None:
        self.repairs.append(Repair(self.line(index) if index >= 0 else 0, code, action))

    def replace(self, index: int, raw: Any) -> None:
        self._raw[index] = raw

    def drop(self, index: int) -> None:
        self._dropped.add(index)

    def dropped(self, index: int) -> bool:
        return index in self._dropped

    def move_first(self, index: int) -> None:
        self._first.append(index)

    def insert_after(self, index: int, raw: Any) -> None:
        """A new record after record `index` (-1: before every record), after those already
        inserted there."""
        self._after.setdefault(index, []).append(raw)

    def order(self) -> list[int | None]:
        """The records `apply` gives, as the index each had here (None for a new record)."""
        moved = set(self._first)
        out: list[int | None] = [None for _ in self._after.get(-1, ())]
        out += [i for i in self._first if i not in self._dropped]
        for i in range(len(self.transcript.records)):
            if i not in self._dropped and i not in moved:
                out.append(i)
            out += [None for _ in self._after.get(i, ())]
        return out

    def apply(self) -> Transcript:
        """The transcript with every planned edit made (the same one when none was)."""
        if not (self._raw or self._dropped or self._first or self._after):
            return self.transcript
        records = self.transcript.records
        out: list[Record] = [Record(raw, None, 0) for raw in self._after.get(-1, ())]
        moved = set(self._first)
        out += [self._record(i) for i in self._first if i not in self._dropped]
        for i, record in enumerate(records):
            if i not in self._dropped and i not in moved:
                out.append(self._record(i) if i in self._raw else record)
            out += [Record(raw, None, 0) for raw in self._after.get(i, ())]
        return self.transcript.evolve(records=tuple(out))

    def _record(self, index: int) -> Record:
        record = self.transcript.records[index]
        return record.with_raw(self._raw[index]) if index in self._raw else record


def by_line(transcript: Transcript) -> dict[int, int]:
    """Record index by input line, for the records read from the input (line > 0)."""
    return {r.lineno: i for i, r in enumerate(transcript.records) if r.lineno > 0}


def located(
    transcript: Transcript, findings: Iterable[Finding], codes: Sequence[str]
) -> list[tuple[int, Finding]]:
    """(record index, finding) for the findings with one of `codes` on a record read from the
    input, in the order of `codes`, then of lines."""
    lines = by_line(transcript)
    found = [(lines[f.line], f) for f in findings if f.code in codes and f.line in lines]
    return sorted(found, key=lambda item: (codes.index(item[1].code), item[1].line))


def first_keys(raw: dict[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    """`raw` with `keys` (those it has) moved to the front, in that order."""
    front = {k: raw[k] for k in keys if k in raw}
    return {**front, **{k: v for k, v in raw.items() if k not in front}}


def without_items(items: Sequence[Any], positions: Iterable[int]) -> list[Any]:
    """`items` without those at `positions`."""
    gone = set(positions)
    return [item for i, item in enumerate(items) if i not in gone]


def dispatch(
    transcript: Transcript,
    findings: Iterable[Finding],
    handlers: Mapping[str, Callable[[int, Finding], None]],
    order: Sequence[str],
) -> None:
    """Calls the handler of each finding's code, in `order`, for findings on object records."""
    for index, finding in located(transcript, findings, order):
        if isinstance(transcript.records[index].raw, dict):
            handlers[finding.code](index, finding)
