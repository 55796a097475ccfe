"""What a probe is searched in: a compacted transcript as the next model call would see it.

`build_view(transcript, boilerplate)` makes a `View`: one text segment per block of the format's
context view, searchable in two scopes (EVAL.md §3.3): `whole` (every segment: scores the
pipeline) and `summary` (the segments of summary messages only: scores the summarizer).
compactcli's own wording (`Boilerplate`) is cut out of what it wrote, so it can never satisfy a
probe.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypedDict

from compactcli import boundary
from compactcli.evaluation.matching import Haystack
from compactcli.formats import get_dialect
from compactcli.transcript import Block, Message, Transcript

_MARKERS = re.compile(r"^[\s#*_>\-=|`]+|[\s#*_>\-=|`:.]+$")


@dataclass(frozen=True, slots=True)
class Boilerplate:
    """compactcli's own wording, which must never count as a retained fact."""

    headings: frozenset[str] = frozenset()
    phrases: tuple[str, ...] = ()

    def merged(self, other: Boilerplate) -> Boilerplate:
        return Boilerplate(self.headings | other.headings, (*self.phrases, *other.phrases))

    def clean(self, text: str) -> str:
        """`text` without compactcli's framing phrases and heading lines: the framing text
        (`phrases`: the summary preamble, the placeholder wording) is cut out, and every line
        that is only a section heading (`headings`, compared by `heading_key`: without markdown
        markers, case and a trailing colon) is dropped. A cut leaves a line break, so text on
        either side never joins up into a match.
        """
        for phrase in sorted(self.phrases, key=len, reverse=True):
            if phrase and phrase in text:
                text = text.replace(phrase, "\n")
        if not self.headings:
            return text
        kept = [line for line in text.split("\n") if heading_key(line) not in self.headings]
        return "\n".join(kept)


def heading_key(line: str) -> str:
    """A line reduced to its words: no markdown markers, no trailing colon, case-folded."""
    return _MARKERS.sub("", line).strip().casefold()


def make_boilerplate(headings: Iterable[str], phrases: Iterable[str]) -> Boilerplate:
    return Boilerplate(
        frozenset(heading_key(h) for h in headings if heading_key(h)),
        tuple(p for p in phrases if p.strip()),
    )


def compactcli_boilerplate() -> Boilerplate:
    """compactcli's own wording: the summary framing of every format, the extractive and LLM
    summaries' headings, the prune placeholders, the drop-oldest marker."""
    from compactcli.evaluation.strategies import DROPPED
    from compactcli.formats import summary_wrappers
    from compactcli.injection import CLOSING, HEAD_HEADING, PREAMBLE, TASK_PREAMBLE
    from compactcli.placeholders import CLEARED_PREFIXES
    from compactcli.summarizers.extractive import SUMMARY_HEADINGS
    from compactcli.summarizers.prompt import FACTS_HEADING, HEADINGS, PROGRESS_PARTS

    return make_boilerplate(
        (*SUMMARY_HEADINGS, *HEADINGS, *PROGRESS_PARTS, FACTS_HEADING, HEAD_HEADING),
        (
            PREAMBLE,
            TASK_PREAMBLE,
            CLOSING,
            *(part.strip() for wrapper in summary_wrappers() for part in wrapper),
            DROPPED,
            *CLEARED_PREFIXES,
            *SUMMARY_HEADINGS,
        ),
    )


@dataclass(frozen=True, slots=True)
class Segment:
    """One searchable piece: a block's text and where it came from."""

    text: str
    message: int  # position in the context view
    record: int  # index of the record holding it
    role: str
    kind: str
    summary: bool


class WhereDict(TypedDict):
    """Where a probe's fact was found (`View.where`): in the eval's probe records and lost
    probes."""

    message: int
    record: int
    role: str
    block: str
    summary: bool


@dataclass(slots=True)
class View:
    """The searchable text of one transcript, in two scopes."""

    segments: list[Segment]
    whole: Haystack = field(init=False)
    summary: Haystack = field(init=False)
    summary_segments: list[Segment] = field(init=False)
    has_summary: bool = field(init=False)

    def __post_init__(self) -> None:
        self.whole = Haystack([s.text for s in self.segments])
        self.summary_segments = [s for s in self.segments if s.summary]
        self.summary = Haystack([s.text for s in self.summary_segments])
        self.has_summary = bool(self.summary_segments)

    def where(self, segment: int, *, summary: bool = False) -> WhereDict:
        """Where segment `segment` of a scope sits, for per-probe records."""
        found = (self.summary_segments if summary else self.segments)[segment]
        return {
            "message": found.message,
            "record": found.record,
            "role": found.role,
            "block": found.kind,
            "summary": found.summary,
        }


def block_text(block: Block) -> str | None:
    """The text of `block` as the model would read it; None for blocks without text."""
    if block.kind in ("text", "thinking", "tool_result"):
        return block.text
    if block.kind == "tool_call":
        return f"{block.name or 'tool'} {block.text}"
    return None


def build_view(transcript: Transcript, boilerplate: Boilerplate) -> View:
    """The view of `transcript`: its context view (the messages the model would see if the session
    resumed now), one segment per block (`block_text`): text and thinking as written, tool calls
    as their name and arguments (JSON, or the raw text of a freeform call such as `apply_patch`),
    tool results as kept (or as the placeholder that replaced them). Images, documents and
    encrypted items carry no text and are left out. In every summary message, every record
    compactcli wrote and every placeholder, the boilerplate is cut out (`Boilerplate.clean`).
    """
    dialect = get_dialect(transcript.format)
    return View(list(_segments(transcript, dialect.context(transcript), boilerplate)))


def _segments(
    transcript: Transcript, context: Sequence[Message], boilerplate: Boilerplate
) -> Iterable[Segment]:
    for position, message in enumerate(context):
        raw = transcript.records[message.index].raw
        ours = message.summary or boundary.is_ours(raw)
        for block in message.blocks:
            text = block_text(block)
            if not text:
                continue
            if ours or _placeholder(text):
                text = boilerplate.clean(text)
            yield Segment(text, position, message.index, message.role, block.kind, message.summary)


def _placeholder(text: str) -> bool:
    return text.startswith("[") and ("cleared" in text[:40] or "truncated" in text[:60])


def cwd_of(transcript: Transcript) -> str | None:
    """The session's working folder, from the first record that names one."""
    for _, record in transcript.objects():
        raw = record.raw
        for holder in (raw, raw.get("payload")):
            if isinstance(holder, dict) and isinstance(holder.get("cwd"), str):
                return str(holder["cwd"])
    return None
