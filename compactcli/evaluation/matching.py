"""Deterministic matching of probe facts in text (EVAL.md §3.3).

A `Haystack` is a searchable text made of segments (one per message block), and
`find(probe, haystack)` returns the strictest level at which the probe's fact is present
(`exact`, `normalized`, `path` or `key_terms`), or None; `passes` says whether a hit is at the
probe's configured mode or a stricter level. Both sides of a comparison go through `normalize`. A
match never spans two segments, and a fact that begins or ends with a letter or digit is not
found inside a longer word (`port 6543` is not in `port 65432`). `occurrences` gives every
position of a fact (for superseded values).
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from compactcli.evaluation.probes import Match, Probe

Level = str  # "exact" | "normalized" | "path" | "key_terms"

STRICTNESS: dict[str, int] = {"exact": 0, "normalized": 1, "path": 1, "key_terms": 2}
SEPARATOR = "\x00"

_READ_PREFIX = re.compile(r"^[ \t]*\d+(?:→|\t)", re.MULTILINE)
_EMPHASIS = re.compile(r"(?<!\w)(?:\*+|_+|~~)(?=\S)|(?<=\S)(?:\*+|_+|~~)(?!\w)")
_QUOTES = re.compile("[`\"'“”‘’«»]")
_SPACE = re.compile(r"\s+")
_TRAILING = ".,;:!?"
_PATH_CHAR = re.compile(r"[\w.\-/~]")
_PATH_AFTER = re.compile(r"[\w\-/]|\.\w")


@functools.lru_cache(maxsize=1 << 16)
def normalize(text: str, case_sensitive: bool = True) -> str:
    """`text` normalized for comparison: Unicode NFC; Claude Code Read line prefixes (`   12→`) and
    `cat -n` prefixes (`   12<TAB>`) dropped; markdown emphasis markers at word edges, backticks
    and quotes removed; whitespace collapsed; case-folded unless `case_sensitive`. Remembered:
    the runs of an evaluation search the same messages again and again.
    """
    text = unicodedata.normalize("NFC", text)
    if "→" in text or "\t" in text:
        text = _READ_PREFIX.sub("", text)
    text = _EMPHASIS.sub("", text)
    text = _QUOTES.sub("", text)
    text = _SPACE.sub(" ", text)
    return text if case_sensitive else text.casefold()


def normalize_needle(text: str, case_sensitive: bool = True) -> str:
    """A fact normalized for searching: as `normalize`, trimmed, trailing punctuation off."""
    return normalize(text, case_sensitive).strip().rstrip(_TRAILING).strip()


def relative_path(path: str, cwd: str | None) -> str:
    """`path` without `./`, doubled separators, or the `cwd` prefix; a Windows path (a `\\`
    separator, a drive letter) with `/` separators and its `cwd` prefix in any case."""
    path = _slashes(path.strip(), cwd)
    while "//" in path:
        path = path.replace("//", "/")
    if cwd:
        prefix = _slashes(cwd, cwd).rstrip("/") + "/"
        if path.startswith(prefix) or (_windows(cwd) and path.lower().startswith(prefix.lower())):
            path = path[len(prefix) :]
    while path.startswith("./"):
        path = path[2:]
    return path


@dataclass(frozen=True, slots=True)
class Hit:
    """Where a fact was found: its level, the segment, and the position in that level's text."""

    level: Level
    segment: int
    position: int


@dataclass(slots=True)
class Haystack:
    """Segments of text searched as one (a match never spans two segments)."""

    segments: Sequence[str]
    raw: str = ""
    starts: list[int] = field(default_factory=list)
    _normalized: dict[bool, tuple[str, list[int]]] = field(default_factory=dict)
    _paths: dict[str, tuple[str, list[int]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.raw, self.starts = _join(self.segments)

    def normalized(self, case_sensitive: bool) -> tuple[str, list[int]]:
        cached = self._normalized.get(case_sensitive)
        if cached is None:
            cached = _join([normalize(s, case_sensitive) for s in self.segments])
            self._normalized[case_sensitive] = cached
        return cached

    def paths(self, cwd: str | None) -> tuple[str, list[int]]:
        key = cwd or ""
        cached = self._paths.get(key)
        if cached is None:
            cached = _join([_path_normalize(s, cwd) for s in self.segments])
            self._paths[key] = cached
        return cached


def _join(segments: Sequence[str]) -> tuple[str, list[int]]:
    starts: list[int] = []
    position = 0
    for segment in segments:
        starts.append(position)
        position += len(segment) + 1
    return SEPARATOR.join(segments), starts


def _segment_of(starts: list[int], position: int) -> int:
    return bisect.bisect_right(starts, position) - 1


_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


def _windows(cwd: str | None) -> bool:
    return cwd is not None and ("\\" in cwd or bool(_DRIVE.match(cwd)))


def _slashes(text: str, cwd: str | None) -> str:
    """`text` with `\\` as `/` when the session ran on Windows (`cwd` says so)."""
    return text.replace("\\", "/") if _windows(cwd) else text


def _path_normalize(text: str, cwd: str | None) -> str:
    text = _slashes(text.replace("\\/", "/"), cwd)  # JSON-escaped separators
    while "//" in text:
        text = text.replace("//", "/")
    if cwd:
        prefix = _slashes(cwd, cwd).rstrip("/")
        if _windows(cwd):
            text = re.sub(re.escape(prefix + "/"), "", text, flags=re.IGNORECASE)
        else:
            text = text.replace(prefix + "/", "")
    return re.sub(r"(?<![\w.])\./", "", text)


def _substring(text: str, needle: str) -> Iterator[int]:
    """Start positions of `needle` in `text`: not across a segment separator, and where the
    needle begins or ends with a letter or digit, not inside a longer word (`port 6543` is not
    found in `port 65432`)."""
    if not needle:
        return
    head_word = _is_word(needle[0])
    tail_word = _is_word(needle[-1])
    start = text.find(needle)
    while start != -1:
        end = start + len(needle)
        if (
            SEPARATOR not in text[start:end]
            and not (head_word and start > 0 and _is_word(text[start - 1]))
            and not (tail_word and end < len(text) and _is_word(text[end]))
        ):
            yield start
        start = text.find(needle, start + 1)


def _is_word(char: str) -> bool:
    """Whether `char` belongs to a word that spaces bound: not a character of a script written
    without spaces between words (Chinese, Japanese, Thai...), beside which a word such as
    `GitHub` stands whole (`上传到GitHub仓库`)."""
    return (char.isalnum() or char == "_") and not _unspaced(char)


def _unspaced(char: str) -> bool:
    code = ord(char)
    return 0x0E00 <= code <= 0x0EFF or 0x1000 <= code <= 0x109F or code >= 0x2E80


def _bounded(text: str, needle: str, *, allow_slash_before: bool = False) -> Iterator[int]:
    for start in _substring(text, needle):
        before = text[start - 1] if start > 0 else ""
        if before and _PATH_CHAR.match(before) and not (allow_slash_before and before == "/"):
            continue
        after = text[start + len(needle) : start + len(needle) + 2]
        if after and _PATH_AFTER.match(after):
            continue
        yield start


def occurrences(match: Match, haystack: Haystack) -> list[tuple[int, int]]:
    """(segment, position) of every normalized occurrence of `match.any_of` (path mode: of the
    relative path), in the case-sensitive or case-folded normalized text."""
    text, starts = haystack.normalized(match.case_sensitive)
    found: list[tuple[int, int]] = []
    for value in match.any_of:
        if match.mode == "path":
            needle = normalize_needle(relative_path(value, match.cwd), match.case_sensitive)
        else:
            needle = normalize_needle(value, match.case_sensitive)
        for position in _substring(text, needle):
            found.append((_segment_of(starts, position), position))
    return sorted(set(found), key=lambda item: item[1])


def find(probe: Probe, haystack: Haystack, *, cwd: str | None = None) -> Hit | None:
    """The strictest level at which `probe` is found, up to its configured mode; None if not.

    - `exact`: one of `any_of` is a raw substring;
    - `normalized`: one of `any_of` is a substring after normalization;
    - `path`: a file path, after taking off `./`, doubled separators and the session's `cwd`,
      bounded by characters that cannot belong to a path (so `src/app.py` is not found in
      `src/app.pyc` or `lib/src/app.py`); the bare file name only with `basename_ok`;
    - `key_terms`: every key term inside one window of `window` characters, within one segment.

    `cwd` is the session's working folder, used for path probes that name none.
    """
    match = probe.match
    hit = _exact(match, haystack)
    if hit is not None or match.mode == "exact":
        return hit
    if match.mode == "path":
        return _path(match, haystack, match.cwd or cwd)
    hit = _normalized(match, haystack)
    if hit is not None or match.mode == "normalized":
        return hit
    return key_terms(match, haystack)


def _exact(match: Match, haystack: Haystack) -> Hit | None:
    for value in match.any_of:
        if match.mode == "path":
            positions = _bounded(haystack.raw, value)
        else:
            positions = _substring(haystack.raw, value)
        for position in positions:
            return Hit("exact", _segment_of(haystack.starts, position), position)
    return None


def _normalized(match: Match, haystack: Haystack) -> Hit | None:
    text, starts = haystack.normalized(match.case_sensitive)
    for value in match.any_of:
        for position in _substring(text, normalize_needle(value, match.case_sensitive)):
            return Hit("normalized", _segment_of(starts, position), position)
    return None


def _path(match: Match, haystack: Haystack, cwd: str | None) -> Hit | None:
    text, starts = haystack.paths(cwd)
    for value in match.any_of:
        relative = relative_path(value, cwd)
        for position in _bounded(text, relative):
            return Hit("path", _segment_of(starts, position), position)
        if match.basename_ok:
            base = relative.rsplit("/", 1)[-1]
            for position in _bounded(text, base, allow_slash_before=True):
                return Hit("path", _segment_of(starts, position), position)
    return None


def key_terms(match: Match, haystack: Haystack) -> Hit | None:
    """A `key_terms` hit: every term inside one window of `match.window` characters, within
    one segment; None when the probe has no key terms or they are not found together."""
    if not match.key_terms:
        return None
    text, starts = haystack.normalized(match.case_sensitive)
    terms = [normalize_needle(t, match.case_sensitive) for t in match.key_terms]
    events: list[tuple[int, int, int]] = []  # (position, end, term)
    for index, term in enumerate(terms):
        positions = list(_substring(text, term))
        if not positions:
            return None
        events.extend((p, p + len(term), index) for p in positions)
    events.sort()
    need = len(terms)
    counts = [0] * need
    covered = 0
    left = 0
    for _, right_end, found in events:
        if counts[found] == 0:
            covered += 1
        counts[found] += 1
        while covered == need:
            start = events[left][0]
            window_end = max(right_end, events[left][1])
            if window_end - start <= match.window and _segment_of(starts, start) == _segment_of(
                starts, window_end - 1
            ):
                return Hit("key_terms", _segment_of(starts, start), start)
            left_term = events[left][2]
            counts[left_term] -= 1
            if counts[left_term] == 0:
                covered -= 1
            left += 1
    return None


def passes(hit: Hit | None, mode: str) -> bool:
    """True when `hit` is at the configured `mode` or a stricter level."""
    return hit is not None and STRICTNESS[hit.level] <= STRICTNESS[mode]
