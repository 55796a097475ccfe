"""The transcript data model: records are the truth, everything else is a view.

A `Transcript` is the tuple of `Record`s read from a JSONL file, in file order. A record keeps
its parsed JSON (`raw`, never mutated) and, while nothing has changed it, the exact bytes it was
read from, so an unchanged record is written back byte for byte; edits are copy-on-write
(`Record.with_raw`, `Transcript.evolve`). Messages and blocks (`Message`, `Block`) are typed
views a format's dialect derives from the records (`compactcli.formats`), pointing back at the
JSON object they were read from, and a transcript's views are memoized (`Transcript.view`). No
I/O here: reading and writing live in `compactcli.jsonl`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from compactcli.images import ImageSize

if TYPE_CHECKING:
    from compactcli.stats import StageStats

BlockKind = Literal["text", "thinking", "tool_call", "tool_result", "image", "document", "other"]
"""What a block is, across formats."""

Role = Literal["system", "developer", "user", "assistant", "tool"]
"""A message's role, normalised across formats (Claude Code tool results are `user`)."""

JsonPath = tuple[str | int, ...]

Images = tuple[ImageSize | None, ...]
"""The images or documents a block is or carries: each one's size when its header could be
read, else None (a URL, a file reference, a document, data that is cut or stripped)."""

V = TypeVar("V")

Line = bytes
"""A record's bytes as read, or a piece of the bytes written (`Record.line`)."""

_PARENT = "\0parent"
"""The key, in a transcript's views, of the views of the transcript it was made from."""


@dataclass(frozen=True, slots=True)
class Record:
    """One JSONL line: its parsed JSON and, while unchanged, its original bytes.

    `raw` is `None` for a line carried through without being parsed (a blank line, or a bad line
    kept with `--on-bad-line keep`); such a line is written back as it was. `eol` is its line
    ending. `with_raw` drops the original bytes, and the writer re-serialises that record alone.
    """

    raw: Any
    line: Line | None = None
    lineno: int = 0
    eol: bytes = b"\n"

    def __reduce__(self) -> tuple[Callable[..., Record], tuple[Any, ...]]:
        return (Record, (self.raw, self.line, self.lineno, self.eol))

    @property
    def changed(self) -> bool:
        """True when this record was edited or created, so it is re-serialised on write."""
        return self.line is None

    @property
    def is_object(self) -> bool:
        return isinstance(self.raw, dict)

    def get(self, key: str, default: Any = None) -> Any:
        """`raw[key]` for an object record, else `default`."""
        if isinstance(self.raw, dict):
            return self.raw.get(key, default)
        return default

    def with_raw(self, raw: Any) -> Record:
        """A copy holding new JSON; its bytes are re-serialised when written."""
        return Record(raw, None, self.lineno, self.eol or b"\n")


@dataclass(frozen=True, slots=True)
class Block:
    """One content block of a message, as a dialect sees it.

    `text` is the block's text for counting and summarizing: the text itself, a tool call's
    arguments as JSON text, or a tool result's content flattened to text. `json` says whether
    `text` is JSON (denser in tokens than prose). `path` locates the block's JSON object inside
    its record's `raw`. `images` holds one entry per image or document the block is (an
    `image` block) or carries (a tool result's screenshots), with the image's size when it
    could be read from its header.
    """

    kind: BlockKind
    text: str = ""
    json: bool = False
    call_id: str | None = None
    name: str | None = None  # a tool's name; on text, what put it there when not the person
    # typing (pi: an extension's message type; Claude Code: `meta`, an `isMeta` record)
    arguments: Any = None
    is_error: bool = False
    type: str = ""  # the format's own type name, e.g. "tool_use", "function_call_output"
    path: JsonPath = ()
    images: Images = ()  # the image it is, or the images and documents carried inside


@dataclass(frozen=True, slots=True)
class Message:
    """One message of the conversation, derived from a record (or a part of one).

    `index` is the record's position in `Transcript.records`. `unit` groups messages that form
    one atomic unit the format must never split (Claude Code: one `message.id`, streamed as
    several records). `synthetic` marks a message that is not a record of its own but lives
    inside one (a Codex `replacement_history` item, a pi compaction summary).
    """

    index: int
    role: Role
    blocks: tuple[Block, ...]
    id: str | None = None
    unit: str | None = None
    model: str | None = None
    summary: bool = False  # a compaction summary (the agent's own or ours)
    synthetic: bool = False
    path: JsonPath = ()

    @property
    def tool_calls(self) -> tuple[Block, ...]:
        return tuple(b for b in self.blocks if b.kind == "tool_call")

    @property
    def tool_results(self) -> tuple[Block, ...]:
        return tuple(b for b in self.blocks if b.kind == "tool_result")

    @property
    def text(self) -> str:
        """The message's plain text blocks joined by newlines."""
        return "\n".join(b.text for b in self.blocks if b.kind == "text")


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage the agent recorded for one model request.

    `context` is the size of the context the model saw plus what it wrote, as the agent itself
    measures it (Claude Code: input + cache creation + cache read + output).
    """

    index: int  # the record that carries it
    context: int
    input: int = 0
    output: int = 0
    cached: int = 0
    key: str | None = None  # the request it belongs to (message.id / requestId); counted once


@dataclass(frozen=True, slots=True)
class Compaction:
    """An earlier compaction found in the transcript (the agent's own, or ours)."""

    index: int  # the boundary (or compaction) record
    summary: str
    summary_index: int | None = None  # the record holding the summary, when separate
    ours: bool = False


@dataclass(frozen=True, slots=True)
class Transcript:
    """A transcript: its records in file order, its format, and the stats of stages run on it."""

    records: tuple[Record, ...]
    format: str
    source: str = "-"
    sha256: str = ""
    stats: tuple[StageStats, ...] = field(default=())
    _views: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def evolve(self, **changes: Any) -> Transcript:
        """A copy with `changes`. Views carry over when the records and the format stay the same
        (the same tuple of records); otherwise the copy starts with none, and keeps a link to
        this transcript's views for `inherited` until it computes one of its own."""
        new = replace(self, **changes)
        if new.format == self.format:
            if new.records is self.records:
                object.__setattr__(new, "_views", self._views)
            else:
                new._views[_PARENT] = self._views
        return new

    def view(self, key: str, make: Callable[[], V]) -> V:
        """The view called `key`, made by `make()` the first time and remembered.

        `make` must be a pure function of the records and the format (not of `source`, `sha256`
        or `stats`, which `evolve` may change while keeping the views). An exception is not
        remembered. Computing a view drops the link to the parent's views.
        """
        views = self._views
        if key in views:
            value: V = views[key]
            return value
        value = make()
        views[key] = value
        views.pop(_PARENT, None)
        return value

    def remember(self, key: str, value: Any) -> None:
        """Keep `value`, made elsewhere, as the view called `key` (unless there is one). Unlike
        `view`, it keeps the link to the parent's views: nothing here was made from them yet."""
        self._views.setdefault(key, value)

    def inherited(self, key: str) -> Any:
        """The view `key` of the nearest transcript this one was made from by `evolve` with
        other records (None when there is none). Its records may differ from these: a caller
        reuses only what belongs to records that are the same objects here."""
        views = self._views.get(_PARENT)
        while views is not None:
            if key in views:
                return views[key]
            views = views.get(_PARENT)
        return None

    def objects(self) -> Iterator[tuple[int, Record]]:
        """(index, record) for every record that is a JSON object."""
        for i, record in enumerate(self.records):
            if isinstance(record.raw, dict):
                yield i, record

    def line_of(self, index: int) -> int:
        """The 1-based input line of record `index` (0 for a record a stage created)."""
        return self.records[index].lineno


def get_in(raw: Any, path: Sequence[str | int]) -> Any:
    """The value at `path` inside nested dicts and lists."""
    value = raw
    for key in path:
        value = value[key]
    return value


def set_in(raw: Any, path: Sequence[str | int], value: Any) -> Any:
    """A copy of `raw` with `path` set to `value`, copying only the containers along the path.

    Keys keep their order, and keys the path does not touch survive as they were.
    """
    if not path:
        return value
    key, rest = path[0], path[1:]
    if isinstance(raw, dict):
        copy: dict[str, Any] = dict(raw)
        assert isinstance(key, str)
        copy[key] = set_in(raw[key], rest, value)
        return copy
    if isinstance(raw, list):
        items = list(raw)
        assert isinstance(key, int)
        items[key] = set_in(raw[key], rest, value)
        return items
    raise TypeError(f"cannot set {key!r} inside {type(raw).__name__}")
