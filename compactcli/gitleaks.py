"""gitleaks' rule set, applied to text: `find(text)` gives the span and rule id of each secret.

The rules are those of gitleaks' default configuration (`config/gitleaks.toml`, MIT licensed),
vendored as data in `compactcli/gitleaks_rules.json` by `scripts/vendor_gitleaks.py`, which
records the upstream version, translates the expressions to Python and leaves out the rules that
do not apply to transcripts (see that script); `source()` says which version is vendored. A rule
finds a secret as gitleaks does (`_finding`), and a secret is never left half shown.
"""

from __future__ import annotations

import bisect
import functools
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import orjson

from compactcli.lazy_pattern import compile_lazily

__all__ = ["WINDOW", "Finding", "entropy", "find", "rule_ids", "source"]

WINDOW = 4096
"""The reach of a rule whose expression has no longest match, on either side of its keyword."""

_DATA = "gitleaks_rules.json"
_TOKEN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_WIDEN = 512  # the most characters a secret is widened by
_END_SNAP = 256  # how far a window's end is taken on to a blank or a quote
_ENDS = frozenset(" \t\n\r\"'`")


@dataclass(frozen=True, slots=True)
class Finding:
    """One secret: `text[start:end]`, found by rule `kind` (a gitleaks rule id)."""

    start: int
    end: int
    kind: str


@dataclass(frozen=True, slots=True)
class _Allowlist:
    target: str  # secret | match | line
    patterns: tuple[re.Pattern[str], ...]
    stopwords: tuple[str, ...]

    def allows(self, secret: str, match: re.Match[str], text: str) -> bool:
        if self.patterns:
            if self.target == "match":
                target = match.group(0)
            elif self.target == "line":
                start = text.rfind("\n", 0, match.start()) + 1
                end = text.find("\n", match.end())
                target = text[start : end if end >= 0 else len(text)]
            else:
                target = secret
            if any(p.search(target) for p in self.patterns):
                return True
        if self.stopwords:
            lowered = secret.lower()
            return any(word in lowered for word in self.stopwords)
        return False


@dataclass(frozen=True, slots=True)
class _Rule:
    id: str
    pattern: re.Pattern[str]
    group: int  # the secret's group; 0: the first group that matched
    keywords: tuple[str, ...]
    width: int  # the reach around a keyword
    entropy: float
    allowlists: tuple[_Allowlist, ...]


@dataclass(frozen=True, slots=True)
class _RuleSet:
    rules: tuple[_Rule, ...]
    allowlist: _Allowlist
    keywords: re.Pattern[str]  # every keyword, as one trie
    covers: Mapping[str, tuple[str, ...]]  # keyword -> the keywords that are its prefixes
    inner: Mapping[str, tuple[int, ...]]  # keyword -> offsets where another may start inside


def _data() -> dict[str, Any]:
    loaded: dict[str, Any] = orjson.loads(
        resources.files("compactcli").joinpath(_DATA).read_bytes()
    )
    return loaded


@functools.cache
def _source() -> dict[str, Any]:
    source: dict[str, Any] = _data()["source"]
    return source


def _allowlist(raw: Mapping[str, Any]) -> _Allowlist:
    return _Allowlist(
        target=str(raw.get("target", "secret")),
        patterns=tuple(compile_lazily(r, re.ASCII) for r in raw.get("regexes", ())),
        stopwords=tuple(raw.get("stopwords", ())),
    )


def _trie(words: list[str]) -> str:
    """One expression matching each of `words` (the longest one at a place)."""
    tree: dict[str, Any] = {}
    for word in words:
        node = tree
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def source(node: dict[str, Any]) -> str:
        branches = [re.escape(char) + source(node[char]) for char in sorted(node) if char]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if "" in node:
            return f"(?:{body})?"
        return body

    return source(tree)


@functools.cache
def _ruleset() -> _RuleSet:
    data = _data()
    rules = tuple(
        _Rule(
            id=raw["id"],
            pattern=compile_lazily(raw["regex"], re.ASCII),
            group=int(raw.get("secret_group", 0)),
            keywords=tuple(raw["keywords"]),
            width=min(int(raw["width"]), WINDOW) if raw.get("width") is not None else WINDOW,
            entropy=float(raw.get("entropy", 0.0)),
            allowlists=tuple(_allowlist(a) for a in raw.get("allowlists", ())),
        )
        for raw in data["rules"]
    )
    words = sorted({k for rule in rules for k in rule.keywords})
    known = frozenset(words)
    covers = {k: tuple(k[:n] for n in range(1, len(k) + 1) if k[:n] in known) for k in words}
    inner = {k: tuple(o for o in range(1, len(k)) if _overlaps(k[o:], words, known)) for k in words}
    return _RuleSet(
        rules=rules,
        allowlist=_allowlist(data["allowlist"]),
        keywords=compile_lazily(_trie(words)),
        covers=covers,
        inner=inner,
    )


def _overlaps(text: str, words: Sequence[str], known: frozenset[str]) -> bool:
    """Whether a keyword of `words` (sorted; `known`, the same as a set) starts with `text`, or
    `text` starts with one."""
    at = bisect.bisect_left(words, text)
    if at < len(words) and words[at].startswith(text):
        return True
    return any(text[:n] in known for n in range(1, len(text) + 1))


def rule_ids() -> tuple[str, ...]:
    """The id of every rule used, in order (each is a `[REDACTED:<id>]` kind)."""
    return tuple(rule.id for rule in _ruleset().rules)


def source() -> Mapping[str, Any]:
    """Where the vendored rules come from: project, url, version, commit, the config's sha256,
    the rules upstream and used, and those skipped by reason."""
    return _source()


def entropy(text: str) -> float:
    """Shannon entropy of `text`, in bits per character (as gitleaks computes it)."""
    if not text:
        return 0.0
    size = len(text)
    return -sum(n / size * math.log2(n / size) for n in _counts(text).values())


def _counts(text: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for char in text:
        counts[char] = counts.get(char, 0) + 1
    return counts


def _keyword_places(lowered: str, ruleset: _RuleSet) -> dict[str, list[int]]:
    """Where each keyword occurs in `lowered` (every place, overlapping ones included)."""
    places: dict[str, list[int]] = {}
    search = ruleset.keywords.finditer
    match_at = ruleset.keywords.match
    covers, inner = ruleset.covers, ruleset.inner
    for found in search(lowered):
        at = found.start()
        word = found.group(0)
        for covered in covers[word]:
            places.setdefault(covered, []).append(at)
        for offset in inner[word]:  # another keyword may start inside this one
            more = match_at(lowered, at + offset)
            if more is not None:
                for covered in covers[more.group(0)]:
                    places.setdefault(covered, []).append(at + offset)
    return places


def _windows(places: list[int], reach: int, text: str) -> Iterator[tuple[int, int]]:
    """The merged stretches of `text` within `reach` of a place, each end taken on to the next
    blank or quote."""
    size = len(text)
    start = end = -1
    for at in sorted(places):
        low, high = max(0, at - reach), min(size, at + reach)
        if start >= 0 and low <= end:
            end = max(end, high)
            continue
        if start >= 0:
            yield start, _snap(text, end)
        start, end = low, high
    if start >= 0:
        yield start, _snap(text, end)


def _snap(text: str, end: int) -> int:
    limit = min(len(text), end + _END_SNAP)
    while end < limit and text[end] not in _ENDS:
        end += 1
    return end


def find(text: str) -> list[Finding]:
    """Every secret the rules find in `text`, in order, without overlaps.

    Every keyword of every rule is found in one pass over the lowercased text (one expression, a
    trie of the keywords), and a rule's expression is only tried where one of its keywords
    occurs: within its longest match (`width`, at most `WINDOW` for a rule without a bound) on
    either side, the window's end taken on to the next blank or quote. A rule whose windows would
    cover half the text searches the whole text once instead.
    """
    ruleset = _ruleset()
    lowered = text.lower()
    if len(lowered) != len(text):  # a character whose lowercase is longer: ASCII only
        lowered = "".join(c.lower() if c.isascii() else c for c in text)
    places = _keyword_places(lowered, ruleset)
    if not places:
        return []
    found: list[Finding] = []
    for rule in ruleset.rules:
        at: list[int] = []
        for word in rule.keywords:
            at.extend(places.get(word, ()))
        if not at:
            continue
        if len(at) * 2 * rule.width >= len(text) // 2:
            stretches: list[tuple[int, int]] = [(0, len(text))]
        else:
            stretches = list(_windows(at, rule.width, text))
        for start, end in stretches:
            for match in rule.pattern.finditer(text, start, end):
                finding = _finding(rule, ruleset.allowlist, match, text)
                if finding is not None:
                    found.append(finding)
    return _merged(found)


def _finding(rule: _Rule, allowlist: _Allowlist, match: re.Match[str], text: str) -> Finding | None:
    """The secret `match` of `rule` finds, or None, as gitleaks decides it.

    The rule's keywords (lowercase) occur in the text (`find` looks only there); its expression's
    secret group (`secret_group`, else the first group that matched, else the whole match) is the
    secret; a secret whose Shannon entropy is not above the rule's `entropy` is left, and so is
    one that the global allowlist or one of the rule's allowlists accepts (an expression matching
    the secret, the whole match or its line; a stop word in the secret). A secret whose last
    character continues into more token characters (`[A-Za-z0-9_-]`) is widened to the end of
    that run (at most `_WIDEN` characters on), so that a longer token than a rule expects is
    never left half shown.
    """
    group = rule.group
    if not group:
        group = next((g for g in range(1, (match.re.groups or 0) + 1) if match.group(g)), 0)
    start, end = match.span(group)
    if start < 0 or start == end:
        return None
    secret = text[start:end]
    if rule.entropy and entropy(secret) <= rule.entropy:
        return None
    if allowlist.allows(secret, match, text) or any(
        a.allows(secret, match, text) for a in rule.allowlists
    ):
        return None
    if end < len(text) and text[end - 1] in _TOKEN and text[end] in _TOKEN:
        limit = min(len(text), end + _WIDEN)
        while end < limit and text[end] in _TOKEN:
            end += 1
    return Finding(start, end, rule.id)


def _merged(found: list[Finding]) -> list[Finding]:
    """`found` in order, overlapping findings joined (the first one's kind)."""
    found.sort(key=lambda f: (f.start, -f.end))
    merged: list[Finding] = []
    for finding in found:
        if merged and finding.start < merged[-1].end:
            last = merged[-1]
            if finding.end > last.end:
                merged[-1] = Finding(last.start, finding.end, last.kind)
            continue
        merged.append(finding)
    return merged
