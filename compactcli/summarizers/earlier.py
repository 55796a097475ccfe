"""An earlier summary that an agent wrote, read into sections and fitted to a budget.

When a session was compacted before, by the agent itself (Claude Code's compact summary, pi's
compaction checkpoint, Codex's handoff) or by a summary in a format not read back into facts,
that summary is the only memory of everything before it. `parse_earlier(text)` reads it into
`Section`s of known kinds, and `fit_earlier(text, budget, count)` renders them back under a token
budget by priority, so that a summary carried through round after round keeps what matters rather
than only its head and tail; `earlier_room` says how much of a tight budget it gets first beside
the facts that came after it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from compactcli.lazy_pattern import compile_lazily

KINDS: tuple[tuple[str, str], ...] = (
    ("pending", r"pending|next step|todo|to do|remaining|open question|follow.?up|in progress"),
    ("rules", r"user message|constraint|preference|rule|requirement|instruction|must"),
    ("request", r"request|intent|goal|task|objective|ask"),
    ("errors", r"error|fix|bug|problem|issue|blocked|failure"),
    ("decisions", r"decision|design|approach|architecture|agreed|plan"),
    ("state", r"current|progress|status|done|completed|work|summary"),
    ("files", r"file|code|section|modified|created|key files"),
)
"""Section kinds by the words of their heading, tried in order; `context` when none matches."""

PRIORITY: dict[str, int] = {
    "pending": 0,
    "rules": 0,
    "request": 1,
    "errors": 1,
    "decisions": 2,
    "state": 2,
    "files": 3,
    "context": 4,
}
_DESCRIBED = frozenset({"files", "state", "errors"})
"""Sections that describe the work: a rule word in them (`always` a raw overwrite, `never`
touched) describes the code, not a rule the user set."""
CODE_PRIORITY = 6
LOW_PRIORITY = 5
LINE_CHARS = 400
SHORT_CHARS = 160
RULE_CHARS = 240
"""The short shape of a line that holds the user's words or a rule keeps this many characters."""
SAME_WORDS = 0.8
"""A line whose words are this share of a line already taken says nothing new at a tight budget."""

_RULE = compile_lazily(
    r"\b(?:never|must|always|do not|don't|without (?:an )?explicit)\b",
    re.IGNORECASE,
)
_USER_QUOTE = compile_lazily(r"^(?:[-*] )?(?:\*\*[^*]+\*\*:? )?[\"“]")
_NOTHING = compile_lazily(
    r"^(?:[-*] )?(?:none|nothing|no (?:pending|open|further|other)|n/a)\b", re.I
)
_BARE = compile_lazily(r"^[^\s`*-][^\s`]*$")
_ITEM = compile_lazily(r"^(?:[-*]|\d{1,2}\.) ")
_QUOTE_END = compile_lazily(r"^((?:[-*] )?(?:\*\*[^*]+\*\*:? )?[\"“].*?[\"”])\s*[—–(-]")
_WORD = compile_lazily(r"[a-z0-9_]{3,}")
_NAME = compile_lazily(r"`([^`\n]{2,80})`")
_PARENTHESES = compile_lazily(r"\([^)]*\)")

_WRAPPER_LINES = (
    "This session is being continued from a previous conversation",
    "Summary:",
    "If you need specific details from before compaction",
    "Continue the conversation from where it left off",
    "Please continue the conversation from where we left",
)
_MD_HEADING = compile_lazily(r"^#{1,6}\s+(.+?)\s*#*$")
_NUMBERED_HEADING = compile_lazily(r"^(\d{1,2})\.\s+([A-Z][\w ,/&'()-]{2,100}):\s*$")
_BOLD_HEADING = compile_lazily(r"^\*\*([^*]{2,80})\*\*:?\s*$")
_LABEL_HEADING = compile_lazily(r"^([A-Z][A-Za-z&'-]*(?: [A-Za-z&'/-]+){0,3}):\s*$")
_TABLE_RULE = compile_lazily(r"^\|?\s*:?-{2,}")
_TAG_LINE = compile_lazily(r"^</?[a-z-]+>$")
_FILE_TAGS = {"<read-files>": "Files read", "<modified-files>": "Files modified"}


@dataclass(frozen=True, slots=True)
class Line:
    text: str
    code: bool = False
    depth: int = 0  # how far it is indented under the line that heads it


@dataclass(frozen=True, slots=True)
class Section:
    heading: str
    kind: str
    lines: tuple[Line, ...]


def kind_of(heading: str) -> str:
    low = heading.lower()
    for kind, words in KINDS:
        if re.search(words, low):
            return kind
    return "context"


def _heading(line: str) -> tuple[str, str] | None:
    """(heading, text after it on the same line) when `line` opens a section."""
    for pattern in (_MD_HEADING, _BOLD_HEADING, _LABEL_HEADING):
        match = pattern.match(line)
        if match:
            return match.group(1).strip(), ""
    match = _NUMBERED_HEADING.match(line)
    if match and len(_PARENTHESES.sub("", match.group(2)).split()) <= 6:
        return match.group(2).strip(), ""
    return None


def _tidy(line: str) -> str:
    stripped = line.strip()
    if stripped.startswith("|"):
        cells = [cell.strip() for cell in stripped.strip("|").split("|")]
        stripped = " | ".join(cell for cell in cells if cell)
    if len(stripped) > LINE_CHARS:
        stripped = stripped[: LINE_CHARS - 1].rstrip() + "…"
    return stripped


def parse_earlier(text: str) -> list[Section]:
    """The sections of an earlier summary.

    Each heading (markdown `#`, Claude Code's numbered `1. Primary Request and Intent:`, a bold
    line) opens a section with its lines, list markers and table bars tidied, fenced code set
    apart. Each section gets a `kind` from its heading (`KINDS`): what the user asked and set
    (request, rules), what is left to do (pending), what went wrong (errors), what was decided,
    what the work is now (state), files (pi's `<read-files>` and `<modified-files>` lists too),
    and other context. The agents' own wrapper sentences
    (Claude Code's "This session is being continued ..." and its closing instructions) are
    dropped.
    """
    sections: list[Section] = []
    heading = ""
    lines: list[Line] = []
    fenced = False

    def close() -> None:
        if lines or heading:
            sections.append(
                Section(heading, kind_of(heading) if heading else "context", tuple(lines))
            )

    for raw in text.splitlines():
        stripped = raw.strip()
        if stripped.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            if stripped:
                lines.append(Line(_tidy(raw), code=True))
            continue
        if stripped in _FILE_TAGS:  # pi's file lists: a section of their own
            close()
            heading, lines = _FILE_TAGS[stripped], []
            continue
        if not stripped or _TABLE_RULE.match(stripped) or _TAG_LINE.match(stripped):
            continue
        if stripped.startswith(_WRAPPER_LINES):
            continue
        found = _heading(stripped) if not raw.startswith((" ", "\t")) else None
        if found is not None:
            close()
            heading, rest = found
            lines = [Line(_tidy(rest))] if rest else []
            continue
        indent = len(raw) - len(raw.lstrip())
        lines.append(Line(_tidy(raw), depth=1 if indent >= 4 else 0))
    close()
    return [s for s in sections if s.lines or s.heading]


def _ruled(text: str) -> bool:
    """Whether a line quotes the user or states a rule."""
    return bool(_USER_QUOTE.match(text) or _RULE.search(text))


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def _names(text: str) -> frozenset[str]:
    """The names a line sets in backticks (paths, commands, identifiers)."""
    return frozenset(_NAME.findall(text))


def _repeats(
    words: frozenset[str],
    names: frozenset[str],
    said: Sequence[frozenset[str]],
    named: set[str],
) -> bool:
    """Whether a line of `words` says again what one of the lines `said` says; never a line that
    names something (in backticks) no line taken named, such as the next of a list of files whose
    lines differ only in their paths."""
    if names - named:
        return False
    return bool(words) and any(len(words & t) >= SAME_WORDS * len(words) for t in said)


def priority(section: Section, line: Line) -> int:
    """Lower is kept first: by the section's kind, a nested line of files, decisions or state
    after the lines that head them, code last. Whatever its section, a line that quotes the
    user is kept first, as the user's rules are, and so is a line that states a rule (never,
    must, always, do not, without explicit ...) outside the sections that describe the work
    (`_DESCRIBED`); a line that only says there is nothing (none, no pending ...) or is one bare
    word (a path such as `.git/`, a stray line of code) is `LOW_PRIORITY`, shown only when the
    whole summary fits. Of the files, the lines that head them (an item, or a path in backticks)
    come first, the lines under them that name something next, the rest after those."""
    text = line.text
    if _NOTHING.match(text) or _BARE.match(text):
        return LOW_PRIORITY
    if line.code:
        return CODE_PRIORITY
    if _USER_QUOTE.match(text) or (_RULE.search(text) and section.kind not in _DESCRIBED):
        return 0
    rank = PRIORITY[section.kind]
    if section.kind == "files":
        if line.depth == 0 and (_ITEM.match(text) or "`" in text[:60]):
            return 1
        return 3 if "`" in text[:60] else 4
    if line.depth > 0 and rank >= 2:
        return rank + 1
    return rank


def _introduced(lines: Sequence[Line], chosen: Sequence[int], j: int) -> bool:
    """Whether the line before code line `j` that is not code (what the code belongs to) is
    shown: code is never shown without it."""
    for k in range(j - 1, -1, -1):
        if not lines[k].code:
            return chosen[k] >= 0
    return False


def _render(sections: Sequence[Section], chosen: Sequence[Sequence[int]]) -> str:
    """The sections with the chosen shape of each line (-1: left out); sections with nothing
    shown are named on one closing line."""
    parts: list[str] = []
    hidden: list[str] = []
    for section, shapes in zip(sections, chosen, strict=True):
        shown = [
            line.text if shape == 0 else _short(line.text)
            for line, shape in zip(section.lines, shapes, strict=True)
            if shape >= 0
        ]
        missing = len(section.lines) - len(shown)
        if not shown:
            if missing:
                hidden.append(_PARENTHESES.sub("", section.heading).strip() or "text")
            continue
        body = "\n".join(shown)
        if missing:
            body += f"\n({missing} more {'line' if missing == 1 else 'lines'} not shown)"
        parts.append(f"### {section.heading}\n{body}" if section.heading else body)
    if hidden:
        parts.append(f"(Not shown: {', '.join(hidden)}.)")
    return "\n\n".join(p for p in parts if p.strip())


def _hidden_count(sections: Sequence[Section]) -> str:
    lines = sum(len(s.lines) for s in sections)
    return f"(The earlier summary's {lines} lines are not shown.)"


def _short(text: str) -> str:
    """The line cut to `SHORT_CHARS` (`RULE_CHARS` for the user's words or a rule); a line that
    quotes the user keeps the quote and drops what the agent wrote after it."""
    quoted = _QUOTE_END.match(text)
    if quoted:
        text = quoted.group(1)
    cap = RULE_CHARS if _ruled(text) else SHORT_CHARS
    return text if len(text) <= cap else text[: cap - 1].rstrip() + "…"


CORE_PRIORITY = 2
"""The lines an earlier summary keeps before new facts: the user's requests and rules, pending
work, errors, decisions and the current state (`priority` at most this)."""


def core_tokens(text: str, count: Callable[[str], int]) -> int:
    """The tokens of an earlier summary's core (`CORE_PRIORITY`), every line at its short shape
    and under its heading: the least room it needs before the facts that came after it."""
    sections = parse_earlier(text)
    chosen = [
        [1 if priority(section, line) <= CORE_PRIORITY else -1 for line in section.lines]
        for section in sections
    ]
    return count(_render(sections, chosen))


EARLIER_SHARE = 0.7
"""The largest share of a tight budget an earlier summary's core is sure of."""


def earlier_room(
    text: str, budget: int, need: int, heading: int, count: Callable[[str], int]
) -> int:
    """The room an earlier summary gets first beside newer facts that need `need` tokens of
    `budget`: what they leave, and at least its core (`core_tokens`, plus its `heading`) up to
    `EARLIER_SHARE` of the budget. Its files and code come after the newer facts."""
    core = core_tokens(text, count) + heading
    return max(budget - need, min(int(budget * EARLIER_SHARE), core), 1)


def fit_earlier(text: str, budget: int, count: Callable[[str], int]) -> str:
    """`text` fitted to `budget` tokens, its sections in their order and under their headings: the
    lines that quote the user or state a rule, and pending work (`priority` 0), at their short
    shape first, then widened while room is left; then the same for the rest of the core
    (`CORE_PRIORITY`: requests, errors, decisions, the current state, the files' heads), in
    priority order (`priority`; within a section, in order); then for the rest (files, other
    context such as an agent's own analysis, and code last).
    When not every line fits, lines of `LOW_PRIORITY` are left out, and so is a line whose words
    are mostly those of a line already taken (`SAME_WORDS`: a request the summary quotes twice),
    and code whose line that says what it is was left out (`_introduced`). A section that lost
    lines says how many. The result is never larger than the original, and holds every line of
    it when that fits.
    """
    sections = parse_earlier(text)
    if not sections:
        return ""
    whole = _render(sections, [[0] * len(s.lines) for s in sections])
    if count(whole) <= budget:
        return whole
    chosen = [[-1] * len(s.lines) for s in sections]
    order = sorted(
        (priority(section, line), i, j)
        for i, section in enumerate(sections)
        for j, line in enumerate(section.lines)
    )
    used = count(_render(sections, chosen))  # the closing line that names every section
    opened: set[int] = set()
    said: list[frozenset[str]] = []
    named: set[str] = set()
    words_of_the_user = [entry for entry in order if entry[0] == 0]
    core = [entry for entry in order if 0 < entry[0] <= CORE_PRIORITY]
    rest = [entry for entry in order if entry[0] > CORE_PRIORITY]
    # the user's words and rules short, then whole, before the rest of the core comes in; the
    # core so before the rest
    for tier in (words_of_the_user, core, rest):
        for rank, i, j in tier:
            words = _words(sections[i].lines[j].text)
            names = _names(sections[i].lines[j].text)
            if rank == LOW_PRIORITY or _repeats(words, names, said, named):
                continue
            if rank == CODE_PRIORITY and not _introduced(sections[i].lines, chosen[i], j):
                continue
            price = count(_short(sections[i].lines[j].text)) + 1
            if i not in opened:  # the section's heading and its "more lines" line come with it
                price += count(sections[i].heading) + 8
            if used + price <= budget:
                chosen[i][j] = 1
                used += price
                opened.add(i)
                said.append(words)
                named.update(names)
        for _, i, j in tier:
            text_ = sections[i].lines[j].text
            if chosen[i][j] == 1 and len(text_) > SHORT_CHARS:
                extra = count(text_) - count(_short(text_))
                if used + extra <= budget:
                    chosen[i][j] = 0
                    used += extra
    rendered = _render(sections, chosen)
    while count(rendered) > budget:  # the estimate was short: drop the last lines taken
        taken = [(p, i, j) for p, i, j in order if chosen[i][j] >= 0]
        if not taken:
            short = _hidden_count(sections)  # not even the sections' names fit
            return short if count(short) <= budget else ""
        _, i, j = taken[-1]
        chosen[i][j] = -1
        rendered = _render(sections, chosen)
    return rendered
