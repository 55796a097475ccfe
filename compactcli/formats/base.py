"""The contract every format dialect fulfils, and the checks that several formats share.

A `Dialect` turns a transcript's raw records into typed views (`Message`, `Block`) and knows its
format's rules: its reading methods (`sniff`, `messages`, `context`, `compactions`, `usage`,
`validate`) are pure functions of the transcript they are given and never edit records; its
writing methods for the stages (`clear_result`, `replace_with_text`, `prune_boundary`,
`append_parent`, `user_shell`, ...) return new records, by defaults here that fit most formats
and that a dialect overrides where its format differs. A `Streamer` reads a file one record at a
time for `estimate`, which must not hold a whole transcript, and a `TailCheck` judges a file by
its last records. Shared helpers: `atomic_units`, `check_unique`, `light` and `remembered`."""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypedDict, TypeVar

from compactcli.transcript import (
    Block,
    Compaction,
    Images,
    Message,
    Record,
    Transcript,
    Usage,
    set_in,
)

Severity = Literal["error", "warning"]

OUR_SUMMARY_START = "[compactcli summary:"
"""How a summary we write starts (each of `compactcli.injection.PREAMBLES`): where a format has
no place for our details (a message list the API reads as it is), this is how a reader knows it
is ours."""


@dataclass(frozen=True, slots=True)
class UserShell:
    """A shell command the user ran, as a block shows it: the command, its output, and whether it
    failed (a non-zero exit code, or cancelled)."""

    command: str
    output: str
    failed: bool


D = TypeVar("D", bound="Dialect")
T = TypeVar("T")


def summary_compactions(
    messages: Iterable[Message], ours: Callable[[Message], bool] = lambda _: True
) -> list[Compaction]:
    """The compactions of a format with no compaction record (a list the agent replays whole):
    each summary message is one, holding its own text."""
    return [
        Compaction(index=m.index, summary=m.text, summary_index=m.index, ours=ours(m))
        for m in messages
        if m.summary
    ]


def remembered(
    method: Callable[[D, Transcript], list[T]],
) -> Callable[[D, Transcript], list[T]]:
    """`method` (a view: a pure function of the transcript's records) computed once per
    transcript and remembered on it (`Transcript.view`), so the stages of one run that ask for
    the same view of the same transcript compute it once; every call returns a new list of the
    same items."""
    name = method.__qualname__

    @functools.wraps(method)
    def view(self: D, transcript: Transcript) -> list[T]:
        key = f"{self.name}:{name}"
        return list(transcript.view(key, lambda: tuple(method(self, transcript))))

    return view


class FindingDict(TypedDict):
    """`Finding.to_dict()`: a finding as `compactcli validate --json` lists it."""

    line: int
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class Finding:
    """One violation (`error`) or tolerated irregularity (`warning`) of a format's rules."""

    line: int
    code: str
    message: str
    severity: Severity = "error"

    def to_dict(self) -> FindingDict:
        return {"line": self.line, "code": self.code, "message": self.message}


class Dialect(ABC):
    """One transcript format: how its records map onto messages, and what it requires."""

    name: ClassVar[str]
    summary: ClassVar[str]
    one_message_per_record: ClassVar[bool] = False
    """Whether a record holds at most one message (then the context view holds every message of
    the records it shows)."""

    @classmethod
    @abstractmethod
    def sniff(cls, objects: Sequence[Mapping[str, Any]]) -> int:
        """0 (not this format) to 100 (certainly this format), from the first object records."""

    @abstractmethod
    def messages(self, transcript: Transcript) -> list[Message]:
        """Every message in file order (all branches, sidechains included)."""

    @abstractmethod
    def context(self, transcript: Transcript) -> list[Message]:
        """The messages the model would see if the session resumed now, in order."""

    @abstractmethod
    def compactions(self, transcript: Transcript) -> list[Compaction]:
        """Earlier compactions found in the transcript (the agent's own, or ours), oldest
        first."""

    @abstractmethod
    def usage(self, transcript: Transcript) -> list[Usage]:
        """The token usage the agent recorded on the context view, in context order, one entry
        per model request."""

    @abstractmethod
    def validate(self, transcript: Transcript) -> list[Finding]:
        """The format's invariants (FORMATS.md §6), checked; errors and warnings in line
        order."""

    result_content_key: ClassVar[str] = "content"
    """The key of a tool result's content inside the result block's object."""

    def clear_result(self, record: Record, block: Block, text: str) -> Record:
        """`record` with the content of tool result `block` replaced by `text`; a dialect whose
        format keeps a copy of it (Claude Code's `toolUseResult`) replaces that too."""
        path = (*block.path, self.result_content_key)
        return record.with_raw(set_in(record.raw, path, self.result_text(text)))

    def result_text(self, text: str) -> Any:
        """A tool result's content holding just `text`, in the format's shape."""
        return text

    def text_block(self, text: str) -> dict[str, Any]:
        """A text content block in the format's shape."""
        return {"type": "text", "text": text}

    def replace_with_text(self, record: Record, block: Block, text: str) -> Record:
        """`record` with `block` (an image, a document) replaced by a text block of the format's
        own shape (`text_block`)."""
        return record.with_raw(set_in(record.raw, block.path, self.text_block(text)))

    def prune_boundary(self, transcript: Transcript, details: Mapping[str, Any]) -> list[Record]:
        """Records to append that mark a compaction that cleared tool output, in the format's
        native form, leaving the context view as it is (the count of the context stays the one
        made before them); none by default, and none where the format has no place for one."""
        return []

    def user_shell(self, record: Record, block: Block) -> UserShell | None:
        """The shell command the user ran (not a tool call) that `block` (of `record`) shows with
        its output, which the format sends to the model as part of a message (pi's `!cmd`): its
        command, output and whether it failed; None when it shows none (the default: only some
        formats record such commands)."""
        return None

    def clear_user_shell(self, record: Record, block: Block, text: str) -> Record:
        """`record` with the output of the command `block` shows replaced by `text` (not
        supported by default)."""
        raise NotImplementedError(f"{self.name} records no commands run by the user")

    link_keys: ClassVar[tuple[str, str] | None] = None
    """(the id key, the parent key) when the format's records name their parent (Claude Code's
    `uuid` and `parentUuid`, pi's `id` and `parentId`); None when they do not."""

    def append_parent(self, transcript: Transcript, context: Sequence[Message]) -> Any:
        """The id a record the agent appends after `transcript` names as its parent, in a format
        with `link_keys` (`context`, not empty, is the transcript's context view): by default
        the id of the last context message's record."""
        assert self.link_keys is not None
        return transcript.records[context[-1].index].get(self.link_keys[0])

    def collect(self, transcript: Transcript) -> list[Record] | None:
        """The records of a new session file holding only what the agent loads next and the
        metadata it needs (`compactcli gc`); None when the format has no such rule."""
        return None

    def model(self, transcript: Transcript) -> str | None:
        """The model the session used last, when the records name it."""
        for message in reversed(self.messages(transcript)):
            if message.model and not message.model.startswith("<"):
                return message.model
        return None

    def cwd(self, transcript: Transcript) -> str | None:
        """The agent's working directory as a resumed session has it, when the records name it
        (None when they do not): the summary names the files under it as the agent does,
        relative to it."""
        return None

    def context_window(self, transcript: Transcript) -> int | None:
        """The context window the agent recorded in the file (None when it records none)."""
        return None

    def streamer(self, source: str = "-") -> Streamer:
        """A fresh `Streamer` for one file named `source` (for error messages)."""
        return BufferingStreamer(self, source)


LightBlock = tuple[str, str, bool, "str | None", Images]
"""A block as plain values: (kind, text, json, name, images), the fields of `Block` that count."""

LightMessage = tuple[int, str, "str | None", tuple[LightBlock, ...]]
"""A message as plain values: (record index, role, unit, blocks)."""


def light(message: Message, names: dict[str, str | None] | None = None) -> LightMessage:
    """`message` as plain values. With `names` (tool name by call id, filled in as messages
    are read in order), a tool result that does not name its tool (the plain message formats)
    gets the name of the call it answers."""
    blocks: tuple[LightBlock, ...]
    if names is None:
        blocks = tuple((b.kind, b.text, b.json, b.name, b.images) for b in message.blocks)
    else:
        found: list[LightBlock] = []
        for b in message.blocks:
            name = b.name
            if b.kind == "tool_call":
                if b.call_id:
                    names[b.call_id] = name
            elif b.kind == "tool_result" and name is None and b.call_id:
                name = names.get(b.call_id)
            found.append((b.kind, b.text, b.json, name, b.images))
        blocks = tuple(found)
    return message.index, message.role, message.unit, blocks


@dataclass(frozen=True, slots=True)
class StreamedView:
    """What a `Streamer` knows once every record of a file has been fed to it."""

    # record indexes of the context view, in context order (each listed record contributes all
    # of its messages)
    context: Sequence[int]
    usage: Sequence[Usage]  # as `Dialect.usage`
    model: str | None = None
    context_window: int | None = None  # the window the agent recorded: `Dialect.context_window`
    messages: Sequence[Message] = ()  # messages `add` did not return, in file order


class Streamer(ABC):
    """Reads a transcript one record at a time, for `estimate` (which must not hold a whole
    transcript): `add(index, record)` returns the messages of that record that are already known
    (in file order); `finish()` returns the `StreamedView`: the context view, the recorded usage,
    the model, the window the agent recorded, and any messages not returned yet. A dialect's
    `Dialect.streamer` gives one; the default (`BufferingStreamer`) keeps the records, and a
    dialect overrides it to keep only what its context rules need."""

    light: ClassVar[bool] = False
    """True when `add_light` is implemented (a faster path that builds no views)."""

    @abstractmethod
    def add(self, index: int, record: Record) -> Sequence[Message]:
        """Take record `index`; return the messages of it that are known now, in order."""

    def add_light(self, index: int, raw: Any, lineno: int) -> Sequence[LightMessage]:
        """`add` for the parsed JSON of record `index` (read from line `lineno`), returning its
        messages as plain values; only for streamers whose `light` is true."""
        raise NotImplementedError

    @abstractmethod
    def finish(self) -> StreamedView:
        """The context view, usage and model, once every record has been added."""


class BufferingStreamer(Streamer):
    """The default streamer: keeps every record and answers from the dialect's views once
    `finish` is called."""

    def __init__(self, dialect: Dialect, source: str = "-") -> None:
        self.dialect = dialect
        self.source = source
        self.records: list[Record] = []

    def add(self, index: int, record: Record) -> Sequence[Message]:
        if index != len(self.records):
            raise ValueError(
                f"records must be added in order: got {index}, expected {len(self.records)}"
            )
        # the original bytes are not needed to read the views; keep only the parsed record
        self.records.append(Record(raw=record.raw, lineno=record.lineno, eol=record.eol))
        return ()

    def finish(self) -> StreamedView:
        transcript = Transcript(
            records=tuple(self.records), format=self.dialect.name, source=self.source
        )
        return streamed_view(self.dialect, transcript)


def streamed_view(
    dialect: Dialect, transcript: Transcript, *, messages: bool = True
) -> StreamedView:
    """What a `Streamer` would know of `transcript` once fed all of it, read from the dialect's
    views (every message in `messages`; none with `messages=False`, for a caller that reads
    only the context, which then costs no making of the others)."""
    order: list[int] = []
    for message in dialect.context(transcript):
        if not order or order[-1] != message.index:
            order.append(message.index)
    return StreamedView(
        context=order,
        usage=dialect.usage(transcript),
        model=dialect.model(transcript),
        context_window=dialect.context_window(transcript),
        messages=dialect.messages(transcript) if messages else (),
    )


def atomic_units(messages: Sequence[Message]) -> list[list[int]]:
    """Split `messages` into atomic units: runs that a cut must never separate.

    A unit holds messages that share a `unit` key (one streamed API response) together with
    the tool results that answer its calls. A new unit starts only where no call is waiting for
    its result and the unit key changes. A message that opens a new user turn with text (not only
    tool results) closes calls that were never answered, so an interrupted call does not swallow
    the rest of the conversation. Returns lists of positions into `messages`.
    """
    units: list[list[int]] = []
    open_calls: set[str] = set()
    previous_key: str | None = None
    for position, message in enumerate(messages):
        results = {b.call_id for b in message.blocks if b.kind == "tool_result" and b.call_id}
        user_turn = message.role == "user" and any(b.kind != "tool_result" for b in message.blocks)
        if user_turn and not results:
            open_calls.clear()
        continues = bool(units) and (
            bool(open_calls & results)
            or bool(open_calls)
            or (message.unit is not None and message.unit == previous_key)
        )
        if continues:
            units[-1].append(position)
        else:
            units.append([position])
        open_calls -= results
        open_calls.update(b.call_id for b in message.blocks if b.kind == "tool_call" and b.call_id)
        previous_key = message.unit
    return units


def check_unique(items: Iterable[tuple[str | None, int]], code: str, what: str) -> list[Finding]:
    """A `code` error for every id seen a second time; `items` are (id, line) pairs."""
    first: dict[str, int] = {}
    findings: list[Finding] = []
    for value, line in items:
        if value is None:
            continue
        if value in first:
            findings.append(
                Finding(line, code, f"duplicate {what} {value!r} (first on line {first[value]})")
            )
        else:
            first[value] = line
    return findings


@dataclass(frozen=True, slots=True)
class TailVerdict:
    """A format's answer on the last records of a file, read as a file of their own: whether
    they decide the whole file's last usage anchor and the context after its response's start
    (`decided`), else whether reading further back may (`more`), and why not."""

    decided: bool
    more: bool
    reason: str = ""

    @classmethod
    def yes(cls) -> TailVerdict:
        return cls(True, False)

    @classmethod
    def need(cls, reason: str) -> TailVerdict:
        return cls(False, True, reason)

    @classmethod
    def no(cls, reason: str) -> TailVerdict:
        return cls(False, False, reason)


TailCheck = Callable[
    [Sequence[Mapping[str, Any]], "Streamer", StreamedView, "int | None"], TailVerdict
]
"""A format's tail check, named by its entry (`Format.tail_check`) for a format whose usage can
be read from the end of a file: (the last records of a file, streamed as a file of their own, in
file order; the streamer fed them; its view; the index among them of the first record of the
last usage anchor's response, None when they hold no usage on their context) -> a `TailVerdict`
on whether they decide the whole file's last usage anchor and what follows it (never `decided`
without a usage)."""


@dataclass(frozen=True, slots=True)
class RecordFamily:
    """Records whose shape only one family of formats writes (`compactcli.formats.mixed`): its
    name, how an error names one record and several, and `holds(raw, kind)`: whether record
    `raw` (whose `type` is the string or None `kind`) has that shape. A format names its family
    in its entry (`Format.family`); formats that share one (`openai`, `anthropic`) name the same.
    Families are disjoint: no record's shape belongs to two of them.
    """

    name: str
    one: str  # "a Codex record"
    many: str  # "Codex records"
    holds: Callable[[Mapping[str, Any], str | None], bool]
