"""Probe files: the facts an evaluation looks for in a compacted transcript (EVAL.md §3.2).

A probe file holds one JSON object per line, next to the transcript it describes (`NAME.jsonl`
and `NAME.probes.jsonl`); each object is a `Probe`, whose docstring gives the schema. Positive
categories pass when their fact is found, negative ones (`decoy`, `superseded`) fail when it is.
`load_probes` and `dump_probes` read and write the format, `make_probe` fills in the category's
defaults, and `ProbeError` names the file, the line and what is wrong.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, NotRequired, TypedDict, get_args

import orjson

Category = Literal[
    "user_constraint",
    "pending_ask",
    "file_modified",
    "file_read",
    "error_string",
    "decision",
    "identifier",
    "superseded",
    "decoy",
]
Mode = Literal["exact", "normalized", "key_terms", "path"]

CATEGORIES: tuple[Category, ...] = get_args(Category)
POSITIVE: tuple[Category, ...] = CATEGORIES[:7]
NEGATIVE: tuple[Category, ...] = ("superseded", "decoy")
MODES: tuple[Mode, ...] = ("exact", "normalized", "key_terms", "path")
CARRIERS = (
    "user_text",
    "user_answer",
    "user_paste",
    "assistant_text",
    "plan",
    "report",
    "edit",
    "tool_input",
    "tool_result",
    "soft_failure",
    "earlier_summary",
    "skill",
    "todo",
    "system",
    "none",
)
"""Where a fact was found (`origin.carrier`), in the order reports list them: what the user
typed, answered (to a question tool) or pasted; the assistant's text, an accepted plan, an
end-of-turn change report, an edit's old or new value; a tool call's arguments, its output, an
error inside output that exited 0; an earlier summary the agent wrote; a skill's rules; a todo
item; a system record; none (a decoy). Other values are accepted and listed after these."""

DEFAULT_MODE: dict[Category, Mode] = {
    "user_constraint": "normalized",
    "pending_ask": "key_terms",
    "file_modified": "path",
    "file_read": "path",
    "error_string": "normalized",
    "decision": "key_terms",
    "identifier": "exact",
    "superseded": "normalized",
    "decoy": "normalized",
}
DEFAULT_WEIGHT: dict[Category, float] = {
    "user_constraint": 2.0,
    "pending_ask": 2.0,
    "file_modified": 1.5,
    "error_string": 1.5,
    "decision": 1.0,
    "identifier": 1.0,
    "file_read": 0.5,
    "superseded": 1.0,
    "decoy": 1.0,
}
"""Weights in the weighted overall retention, when a probe gives none."""

CASE_FOLDED: frozenset[Category] = frozenset({"user_constraint", "decision", "pending_ask"})
"""Categories compared case-folded by default (case carries no meaning in them: rules, choices
and requests, as opposed to paths, identifiers and error strings)."""

DEFAULT_WINDOW = 200


class ProbeError(ValueError):
    """A probe file that does not follow the schema: names the file and line."""


class MatchDict(TypedDict):
    """`Match.to_dict()`: a probe's `match` (`basename_ok` and `cwd` for the `path` mode only)."""

    mode: Mode
    any_of: list[str]
    key_terms: list[str]
    window: int
    case_sensitive: bool
    basename_ok: NotRequired[bool]
    cwd: NotRequired[str | None]


class OriginDict(TypedDict):
    """`Origin.to_dict()`: a probe's `origin`."""

    message_index: int | None
    line: int | None
    carrier: str
    depth: float | None


class ProbeDict(TypedDict):
    """`Probe.to_dict()`: one line of a probe file (`dump_probes`)."""

    id: str
    category: Category
    fact: str
    match: MatchDict
    origin: OriginDict
    weight: float
    must_survive: bool
    superseded_by: str | None


@dataclass(frozen=True, slots=True)
class Match:
    """How a probe is looked for."""

    mode: Mode
    any_of: tuple[str, ...] = ()
    key_terms: tuple[str, ...] = ()
    window: int = DEFAULT_WINDOW
    case_sensitive: bool = True
    basename_ok: bool = False
    cwd: str | None = None

    def to_dict(self) -> MatchDict:
        data: MatchDict = {
            "mode": self.mode,
            "any_of": list(self.any_of),
            "key_terms": list(self.key_terms),
            "window": self.window,
            "case_sensitive": self.case_sensitive,
        }
        if self.mode == "path":
            data["basename_ok"] = self.basename_ok
            data["cwd"] = self.cwd
        return data


@dataclass(frozen=True, slots=True)
class Origin:
    """Where the fact was planted: the context message, the input line, the carrier, the
    depth (0 = the first token of the context, 1 = the last)."""

    message_index: int | None = None
    line: int | None = None
    carrier: str = "none"
    depth: float | None = None

    def to_dict(self) -> OriginDict:
        return {
            "message_index": self.message_index,
            "line": self.line,
            "carrier": self.carrier,
            "depth": self.depth,
        }


@dataclass(frozen=True, slots=True)
class Probe:
    """One fact to look for, one line of a probe file:

        {"id": "p017", "category": "error_string",
         "fact": "ECONNREFUSED 127.0.0.1:6379",
         "match": {"mode": "normalized", "any_of": ["ECONNREFUSED 127.0.0.1:6379"],
                   "key_terms": ["ECONNREFUSED", "6379"], "window": 200},
         "origin": {"message_index": 412, "line": 871, "carrier": "tool_result", "depth": 0.31},
         "weight": 1.5, "must_survive": false, "superseded_by": null}

    `mode` is the loosest level at which the probe passes: `exact` (a raw substring),
    `normalized` (a substring after normalization), `key_terms` (every term inside a window of
    `window` characters), or `path` (a file path, with the session's `cwd` prefix and `./` taken
    off; the bare file name counts only with `basename_ok`). `case_sensitive` defaults by
    category (`CASE_FOLDED`).

    Categories: positive ones (`user_constraint`, `pending_ask`, `file_modified`, `file_read`,
    `error_string`, `decision`, `identifier`) pass when found; negative ones fail when found:
    `decoy` (a plausible fact that never occurred) and `superseded` (an old value that a later
    probe, `superseded_by`, replaced; it may appear only next to, or before, the new value; with
    no `superseded_by`, it may not appear at all).

    Only `id`, `category` and `fact` are required: `match` defaults to the category's mode
    (`DEFAULT_MODE`) on the fact itself, normalized instead of key terms when no key terms are
    given; `weight`, `must_survive` and the case rule default by category (`make_probe`).
    """

    id: str
    category: Category
    fact: str
    match: Match
    origin: Origin = field(default_factory=Origin)
    weight: float = 1.0
    must_survive: bool = False
    superseded_by: str | None = None

    @property
    def negative(self) -> bool:
        return self.category in NEGATIVE

    def to_dict(self) -> ProbeDict:
        return {
            "id": self.id,
            "category": self.category,
            "fact": self.fact,
            "match": self.match.to_dict(),
            "origin": self.origin.to_dict(),
            "weight": self.weight,
            "must_survive": self.must_survive,
            "superseded_by": self.superseded_by,
        }

    def with_origin(self, origin: Origin) -> Probe:
        return replace(self, origin=origin)


def make_probe(
    id: str,
    category: Category,
    fact: str,
    *,
    any_of: Sequence[str] | None = None,
    key_terms: Sequence[str] = (),
    mode: Mode | None = None,
    window: int = DEFAULT_WINDOW,
    cwd: str | None = None,
    basename_ok: bool = False,
    origin: Origin | None = None,
    weight: float | None = None,
    must_survive: bool | None = None,
    superseded_by: str | None = None,
) -> Probe:
    """A probe with the category's defaults for what is not given."""
    return Probe(
        id=id,
        category=category,
        fact=fact,
        match=Match(
            mode=mode or DEFAULT_MODE[category],
            any_of=tuple(any_of) if any_of is not None else (fact,),
            key_terms=tuple(key_terms),
            window=window,
            case_sensitive=category not in CASE_FOLDED,
            basename_ok=basename_ok,
            cwd=cwd,
        ),
        origin=origin or Origin(),
        weight=DEFAULT_WEIGHT[category] if weight is None else weight,
        must_survive=(category in ("user_constraint", "pending_ask"))
        if must_survive is None
        else must_survive,
        superseded_by=superseded_by,
    )


def probe_from_dict(data: Mapping[str, Any], where: str = "probe") -> Probe:
    """A probe from its JSON object; `ProbeError` (prefixed with `where`) when malformed."""
    if not isinstance(data, Mapping):
        raise ProbeError(f"{where}: a probe must be a JSON object")
    for key in ("id", "category", "fact"):
        if key not in data:
            raise ProbeError(f"{where}: missing {key!r}")
    category = data["category"]
    if category not in CATEGORIES:
        raise ProbeError(f"{where}: unknown category {category!r}; known: {', '.join(CATEGORIES)}")
    if not isinstance(data["id"], str) or not data["id"]:
        raise ProbeError(f"{where}: 'id' must be a non-empty string")
    if not isinstance(data["fact"], str):
        raise ProbeError(f"{where}: 'fact' must be a string")
    raw_match = data.get("match") or {}
    if not isinstance(raw_match, Mapping):
        raise ProbeError(f"{where}: 'match' must be an object")
    any_of = _strings(raw_match.get("any_of", [data["fact"]]), where, "match.any_of")
    key_terms = _strings(raw_match.get("key_terms", []), where, "match.key_terms")
    mode = raw_match.get("mode")
    if mode is None:  # the category's default; key terms only when some are given
        mode = DEFAULT_MODE[category]
        if mode == "key_terms" and not key_terms:
            mode = "normalized"
    if mode not in MODES:
        raise ProbeError(f"{where}: unknown match mode {mode!r}; known: {', '.join(MODES)}")
    if mode == "key_terms" and not key_terms:
        raise ProbeError(f"{where}: mode 'key_terms' needs match.key_terms")
    if mode != "key_terms" and not any_of:
        raise ProbeError(f"{where}: mode {mode!r} needs match.any_of")
    window = raw_match.get("window", DEFAULT_WINDOW)
    if not isinstance(window, int) or isinstance(window, bool) or window <= 0:
        raise ProbeError(f"{where}: match.window must be a positive integer")
    case_sensitive = raw_match.get("case_sensitive", category not in CASE_FOLDED)
    cwd = raw_match.get("cwd")
    raw_origin = data.get("origin") or {}
    if not isinstance(raw_origin, Mapping):
        raise ProbeError(f"{where}: 'origin' must be an object")
    weight = data.get("weight", DEFAULT_WEIGHT[category])
    if not isinstance(weight, int | float) or isinstance(weight, bool) or weight < 0:
        raise ProbeError(f"{where}: 'weight' must be a number >= 0")
    superseded_by = data.get("superseded_by")
    depth = raw_origin.get("depth")
    return Probe(
        id=data["id"],
        category=category,
        fact=data["fact"],
        match=Match(
            mode=mode,
            any_of=any_of,
            key_terms=key_terms,
            window=window,
            case_sensitive=bool(case_sensitive),
            basename_ok=bool(raw_match.get("basename_ok", False)),
            cwd=cwd if isinstance(cwd, str) and cwd else None,
        ),
        origin=Origin(
            message_index=_int_or_none(raw_origin.get("message_index")),
            line=_int_or_none(raw_origin.get("line")),
            carrier=str(raw_origin.get("carrier", "none")),
            depth=float(depth) if isinstance(depth, int | float) else None,
        ),
        weight=float(weight),
        must_survive=bool(data.get("must_survive", category in ("user_constraint", "pending_ask"))),
        superseded_by=str(superseded_by) if superseded_by else None,
    )


def _strings(value: Any, where: str, name: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ProbeError(f"{where}: {name} must be a list of non-empty strings")
    return tuple(value)


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def parse_probes(data: bytes, source: str = "-") -> list[Probe]:
    """Probes from the bytes of a probe file; checks ids are unique and references resolve."""
    probes: list[Probe] = []
    for lineno, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{source}:{lineno}"
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError as error:
            raise ProbeError(f"{where}: invalid JSON: {error}") from None
        probes.append(probe_from_dict(obj, where))
    check_probes(probes, source)
    return probes


def check_probes(probes: Sequence[Probe], source: str = "-") -> None:
    """`ProbeError` for a duplicate id or a `superseded_by` naming no probe of the set."""
    seen: set[str] = set()
    for probe in probes:
        if probe.id in seen:
            raise ProbeError(f"{source}: duplicate probe id {probe.id!r}")
        seen.add(probe.id)
    for probe in probes:
        if probe.superseded_by and probe.superseded_by not in seen:
            raise ProbeError(
                f"{source}: probe {probe.id!r} is superseded by {probe.superseded_by!r}, "
                "which is not in the file"
            )


def load_probes(path: str) -> list[Probe]:
    """The probes of file `path`."""
    with open(path, "rb") as handle:
        return parse_probes(handle.read(), path)


def dump_probes(probes: Iterable[Probe]) -> bytes:
    """Probe-file bytes: one object per line, keys in schema order."""
    return b"".join(orjson.dumps(p.to_dict()) + b"\n" for p in probes)
