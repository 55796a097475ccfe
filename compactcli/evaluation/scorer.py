"""Scoring probes against a view of a compacted transcript (EVAL.md §3.2-3.3).

`score(probes, view, cwd)` returns one `ProbeScore` per probe, for both scopes of the view (the
whole output, and the summary alone): a positive probe passes when its fact is found
(`compactcli.evaluation.matching`), a negative one (`decoy`, `superseded`) is violated when its
fact is found where it should not be. `found_at_origin(probe, raw, cwd)` says whether a positive
probe is found in the record it names as its origin (`origin.line`): in any string of its JSON,
strings that hold JSON read too, so a probe written from a tool call's arguments or a nested
result is found there as well.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

import orjson

from compactcli.evaluation.matching import Haystack, Hit, find, key_terms, occurrences, passes
from compactcli.evaluation.probes import Probe
from compactcli.evaluation.view import View, WhereDict


class OutcomeDict(TypedDict):
    """`Outcome.to_dict()`: a probe's result in one scope."""

    passed: bool
    level: str | None
    where: WhereDict | None
    near: bool


class ProbeScoreDict(TypedDict):
    """`ProbeScore.to_dict()`: a probe's result in the whole output, and in the summary alone
    (None when the output has no summary)."""

    id: str
    category: str
    passed: bool
    level: str | None
    where: WhereDict | None
    near: bool
    summary: OutcomeDict | None


@dataclass(frozen=True, slots=True)
class Outcome:
    """A probe's result in one scope."""

    passed: bool
    level: str | None = None
    where: WhereDict | None = None
    near: bool = False

    def to_dict(self) -> OutcomeDict:
        return {"passed": self.passed, "level": self.level, "where": self.where, "near": self.near}


@dataclass(frozen=True, slots=True)
class ProbeScore:
    """One probe scored in both scopes. For a negative probe `passed` means no violation."""

    probe: Probe
    whole: Outcome
    summary: Outcome | None  # None when the output has no summary

    @property
    def passed(self) -> bool:
        return self.whole.passed

    @property
    def violated(self) -> bool:
        return self.probe.negative and not self.whole.passed

    def to_dict(self) -> ProbeScoreDict:
        return {
            "id": self.probe.id,
            "category": self.probe.category,
            "passed": self.whole.passed,
            "level": self.whole.level,
            "where": self.whole.where,
            "near": self.whole.near,
            "summary": self.summary.to_dict() if self.summary else None,
        }


def score(probes: Sequence[Probe], view: View, cwd: str | None) -> list[ProbeScore]:
    """Every probe scored against `view`, in both scopes.

    - A positive probe passes when its fact is found at its configured level or a stricter one;
      `level` is the strictest level found, `where` the message and block of the match, and
      `near` says that a probe which failed would have passed on its key terms alone (paraphrase
      drift).
    - A `decoy` is violated when its fact is found at all.
    - A `superseded` value is violated when it appears somewhere that is neither within its
      window of the value that replaced it (`superseded_by`), in the same message block, nor
      followed, later in the text, by that new value: there it reads as current (with no
      `superseded_by`, every appearance does).
    """
    by_id = {p.id: p for p in probes}
    scores: list[ProbeScore] = []
    for probe in probes:
        whole = _outcome(probe, view.whole, view, cwd, by_id, summary=False)
        summary = (
            _outcome(probe, view.summary, view, cwd, by_id, summary=True)
            if view.has_summary
            else None
        )
        scores.append(ProbeScore(probe, whole, summary))
    return scores


def found_at_origin(probe: Probe, raw: Any, cwd: str | None) -> bool:
    """Whether positive `probe` is found in `raw`, the JSON of the record at its origin line."""
    return passes(find(probe, Haystack(list(_strings(raw))), cwd=cwd), probe.match.mode)


def _strings(value: Any) -> Iterator[str]:
    """Every string inside JSON `value`, depth first; a string that is a JSON object or array is
    also read as JSON."""
    if isinstance(value, str):
        yield value
        if value[:1] in ("{", "["):
            try:
                inner = orjson.loads(value)
            except orjson.JSONDecodeError:
                return
            yield from _strings(inner)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _outcome(
    probe: Probe,
    haystack: Haystack,
    view: View,
    cwd: str | None,
    by_id: dict[str, Probe],
    *,
    summary: bool,
) -> Outcome:
    if probe.category == "superseded":
        return _superseded(probe, haystack, view, by_id, summary=summary)
    hit = find(probe, haystack, cwd=cwd)
    if probe.category == "decoy":
        if hit is None:
            return Outcome(True)
        return Outcome(False, hit.level, _where(view, hit, summary))
    if passes(hit, probe.match.mode):
        assert hit is not None
        return Outcome(True, hit.level, _where(view, hit, summary))
    near = probe.match.mode != "key_terms" and key_terms(probe.match, haystack) is not None
    return Outcome(False, None, None, near)


def _superseded(
    probe: Probe, haystack: Haystack, view: View, by_id: dict[str, Probe], *, summary: bool
) -> Outcome:
    old = occurrences(probe.match, haystack)
    if not old:
        return Outcome(True)
    if probe.superseded_by is None:  # no replacement named: any appearance reads as current
        segment, position = old[0]
        return Outcome(
            False, "normalized", _where(view, Hit("normalized", segment, position), summary)
        )
    replacement = by_id.get(probe.superseded_by)
    new = occurrences(replacement.match, haystack) if replacement is not None else []
    window = probe.match.window
    for segment, position in old:
        followed = any(p > position for _, p in new)
        beside = any(s == segment and abs(p - position) <= window for s, p in new)
        if not (followed or beside):
            hit = Hit("normalized", segment, position)
            return Outcome(False, "normalized", _where(view, hit, summary))
    return Outcome(True, "normalized")


def _where(view: View, hit: Hit, summary: bool) -> WhereDict:
    return view.where(hit.segment, summary=summary)
