"""What the facts read from prose, sentence by sentence.

`sentences(text)` splits text outside fenced code, pasted JSON and copied pages into one-line
sentences; a user sentence is a constraint when it sets a rule or a preference
(`constraint_sentences`), an assistant sentence a decision when it states a choice
(`decision_sentences`), and `condense` shortens a long message to what matters in it.
`setting_values` and `supersedes` say when a later sentence gives a setting another value, and
`fold_superseded` puts each replaced sentence next to its replacement, so an old value never
reads as current.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Mapping, Sequence

from compactcli.lazy_pattern import compile_lazily
from compactcli.outcomes import carries_error
from compactcli.trim import head_tail, one_line

SENTENCE_CHARS = 400  # a constraint or a pending question
DECISION_CHARS = 300

FENCE = compile_lazily(r"```.*?(```|$)", re.DOTALL)
NOT_AN_ABBREVIATION = "".join(
    rf"(?<!\b{re.escape(word)})"
    for word in ("e.g.", "E.g.", "i.e.", "I.e.", "vs.", "cf.", "approx.", "incl.", "esp.")
)
"""A lookbehind that holds after a full stop that ends a sentence, not an abbreviation the
sentence goes on after (`Use many hues (e.g. a diverging palette) in the scale`)."""
_SENTENCE_END = compile_lazily(rf"(?<=[.!?]){NOT_AN_ABBREVIATION}\s+(?=\S)")
_BULLET = compile_lazily(r"^\s*(?:[-*•>]+|\d+[.)])\s+")


class _Cue:
    """A case-blind pattern of lowercase words: `search` runs it case-sensitively on the
    lowercased text when the text is ASCII (the same match, several times faster than a
    case-blind search), else case-blind. Callers read the match's position, not its text."""

    __slots__ = ("_blind", "_lower")

    def __init__(self, source: str) -> None:
        self._blind = compile_lazily(source, re.IGNORECASE)
        self._lower = compile_lazily(source)

    def search(self, text: str) -> re.Match[str] | None:
        if text.isascii():
            return self._lower.search(text.lower())
        return self._blind.search(text)


_CONSTRAINT = _Cue(
    r"\b(?:don'?t|do\s+not|never|must|mustn'?t|always|(?<!-)only|without|instead|"
    r"avoid|prefer|make\s+sure|ensure|shouldn'?t|should\s+not|no\s+need\s+to|not\s+allowed|"
    r"stick\s+(?:to|with)|please\s+use|pls\s+use|keep\s+using|rather\s+than|"
    r"under\s+no\s+circumstances|remember\s+(?:to|that))\b"
)
_CONSTRAINT_START = compile_lazily(
    r"^(?:(?:please|pls|and|also|but|so|then|now|ok|okay|just)[, ]+)*"
    r"(?:use|stick|keep|avoid|leave|skip|no)\b",
    re.IGNORECASE,
)
_DECISION = _Cue(
    r"\b(?:decided|decide\s+to|decision(?=\s*:|\s+(?:is|was|to|here)\b)|"
    r"(?:the|a|my|our|this)\s+decision\b(?!\s+(?:loop|path|latency|logic|tree|point)s?\b)|"
    r"we'?ll\s+use|we\s+will\s+use|i'?ll\s+use|i\s+will\s+use|"
    r"let'?s\s+use|let\s+us\s+use|instead\s+of|going\s+with|go\s+with|stick(?:ing)?\s+with|"
    r"switch(?:ed|ing)?\s+(?:(?!to\b)[\w`'./-]+\s+){0,4}?to|"
    r"opt(?:ed|ing)?\s+for|chose|choosing|rather\s+than|will\s+use)\b"
)


def _logical_lines(text: str) -> list[tuple[str, bool]]:
    """Lines of `text` outside fenced code, with hard-wrapped lines joined back together; each
    with whether it is a list item (its marker taken off)."""
    out: list[tuple[str, bool]] = []
    joinable = False
    for raw in FENCE.sub("\n\n", text).splitlines():
        line = raw.strip()
        if not line:
            joinable = False
            continue
        bullet = _BULLET.match(line)
        body = _BULLET.sub("", line).strip() if bullet else line
        continues = (
            joinable
            and not (bullet and not line.startswith(">"))
            and not line.startswith("#")
            and body[:1].islower()
            and not out[-1][0].endswith((".", "!", "?", ":", ";"))
        )
        if continues:
            out[-1] = (out[-1][0] + " " + body, out[-1][1])
        elif body:
            out.append((body, bool(bullet) and not line.startswith(">")))
        joinable = bool(body) and not body.startswith("#")
    return out


_JSON_VALUE = compile_lazily(r'":\s*["\[{\d]')
_CALL_OR_ASSIGNMENT = compile_lazily(r"\w+(?:\s*=|\()\S")
"""A call or an assignment at a line's start (`f(x)`, `x=1`), not a word before an aside
(`Models (UiState/Effect) go at the bottom`)."""


def _code_like(line: str) -> bool:
    """Whether `line` is code or pasted JSON, not prose: it opens with a bracket, holds `{"`, a
    JSON key and its value (`": "`, `": [`, `": 1`) or an escaped newline, opens with a call or
    an assignment (`x = 1`, `f(x)`), or ends with `;`. Literal parts are tested as substrings
    first, which on a long line is several times faster than one regular expression."""
    return (
        line.startswith(("[", "{", "<", "("))
        or '{"' in line
        or "\\n" in line
        or line.rstrip().endswith(";")
        or ('":' in line and _JSON_VALUE.search(line) is not None)
        or _CALL_OR_ASSIGNMENT.match(line) is not None
    )


LEAD_IN_ITEMS = 6
"""How many list items a sentence that introduces them (ending with `:`) is read with."""
LEAD_IN_ITEM_CHARS = 160
"""The longest list item read with the sentence that introduces it (longer ones are prose)."""


LABEL_WORDS = 4
"""The most words a line of a copied page's interface (`Request body`, `Cancel`) holds."""
PAGE_LABELS = 8
"""How many such labels, some in a run of `PAGE_RUN`, make a text a copied page."""
PAGE_RUN = 4


def _label(line: str, bullet: bool) -> bool:
    """Whether `line` reads as a label of a copied page: a few words, no sentence or lead-in
    punctuation, no heading or list marker, and no rule cue (`no sudo` is a rule)."""
    return (
        not bullet
        and len(line.split()) <= LABEL_WORDS
        and not line.endswith((".", "!", "?", ":", ";", ","))
        and not line.startswith("#")
        and _CONSTRAINT.search(line) is None
        and _CONSTRAINT_START.search(line) is None
    )


def _page_lines(lines: Sequence[tuple[str, bool]]) -> set[int]:
    """The lines of a copied page that sit between two of its labels (`URL scheme must be
    "http"` between `Network Failure` and `Responses` in a pasted API console): text the user
    pasted, not wrote. A text is a page when it holds at least `PAGE_LABELS` labels, `PAGE_RUN`
    of them in a row; a brief with one-line sections (`Stack` / `Use Postgres.`) is not."""
    if len(lines) <= PAGE_LABELS:  # too few lines for a page and a line inside it
        return set()
    labels = [_label(line, bullet) for line, bullet in lines]
    if sum(labels) < PAGE_LABELS:
        return set()
    run = longest = 0
    for is_label in labels:
        run = run + 1 if is_label else 0
        longest = max(longest, run)
    if longest < PAGE_RUN:
        return set()
    return {
        at
        for at in range(1, len(lines) - 1)
        if not labels[at] and labels[at - 1] and labels[at + 1]
    }


def sentences(text: str, *, lists: bool = False) -> list[str]:
    """The sentences of `text` outside fenced code, pasted JSON and copied pages, one line
    each, in order.

    With `lists` (a user's text), a line that ends by introducing a list (`Do not change:`) is
    read with the short items that follow it as one sentence (`Do not change: the Reader
    classes; embedder/base.py`): at most `LEAD_IN_ITEMS` of at most `LEAD_IN_ITEM_CHARS`.
    """
    return list(_sentences(text, lists))


@functools.lru_cache(maxsize=256)  # a text met again (a message quoted, repeated) is read once
def _sentences(text: str, lists: bool) -> tuple[str, ...]:
    """`sentences`, remembered per text and `lists`."""
    found: list[str] = []
    lines = _logical_lines(text)
    pasted = _page_lines(lines)
    at = 0
    while at < len(lines):
        line = lines[at][0]
        at += 1
        if _code_like(line) or at - 1 in pasted:
            continue
        parts = [part.strip() for part in _SENTENCE_END.split(line) if part.strip()]
        if lists and parts and parts[-1].endswith(":"):
            items: list[str] = []
            while at < len(lines) and len(items) < LEAD_IN_ITEMS:
                item, bullet = lines[at]
                if not bullet or len(item) > LEAD_IN_ITEM_CHARS or _code_like(item):
                    break
                items.append(item.rstrip(".;"))
                at += 1
            if items:
                parts[-1] = f"{parts[-1]} {'; '.join(items)}"
        found.extend(parts)
    return tuple(found)


def _window(sentence: str, match: re.Match[str], limit: int) -> str:
    """`sentence` cut to `limit` characters around `match`, at word boundaries."""
    if len(sentence) <= limit:
        return sentence
    start = max(0, match.start() - limit // 3)
    end = min(len(sentence), start + limit)
    start = max(0, end - limit)
    if start > 0:
        space = sentence.find(" ", start)
        start = space + 1 if 0 <= space < match.start() else start
    if end < len(sentence):
        space = sentence.rfind(" ", match.end(), end)
        end = space if space > 0 else end
    return (
        ("…" if start > 0 else "")
        + sentence[start:end].strip()
        + ("…" if end < len(sentence) else "")
    )


_SHOULD = _Cue(
    r"\bshould\b(?!\s+(?:be\s+(?:good|fine|ok(?:ay)?|enough|great|done|all\s+good|it)\b|"
    r"(?:do|work)\b(?!\s+with)))"
)
"""`should` as a rule, not a judgement (`that should be good`, `this should work`)."""
_AGENT_TALK = compile_lazily(
    r"(?:Thinking:|(?:(?:actually|now|ok(?:ay)?|so|first|next|but|and),?\s+)?let me\b(?!\s+know))",
    re.IGNORECASE,
)
"""How an agent speaks of its own next step (`Thinking: ...`, `Let me check ...`, not `let me
know`): in a user message, a pasted agent transcript's line, no rule of the user's."""
_CLAUSE = compile_lazily(r"[:;—–]\s+|\s-\s")
_STRONG = _Cue(
    r"\b(?:instead|never|always|must|rather\s+than|please\s+use|stick\s+(?:to|with)|avoid|"
    r"make\s+sure)\b"
)


def constraint_sentences(text: str) -> list[str]:
    """User sentences that set a rule or a preference (don't, never, must, always, only but not
    the end of an adjective such as read-only, avoid, prefer, make sure, use X...; questions only
    with a strong word), each cut around its cue to at most `SENTENCE_CHARS` (`as_constraint`).
    """
    return [found for found in map(as_constraint, sentences(text, lists=True)) if found]


_THINKING_LINE = compile_lazily(r"^\s*(?:Thinking:|✻ Thinking)", re.MULTILINE)


def before_pasted_session(text: str) -> str:
    """`text` up to the agent session pasted into it, when it holds one (two or more
    `Thinking:` lines): what the person wrote above it. The rest is another agent's thinking,
    commands and their output, no rule of the person's."""
    found = _THINKING_LINE.finditer(text)
    first = next(found, None)
    if first is None or next(found, None) is None:
        return text
    return text[: text.rfind("\n", 0, first.start()) + 1]


_RULES_TITLE = compile_lazily(
    r"^(?:#{1,6}\s+)?[^.!?]{0,40}\b(?:rules?|constraints?|must be followed|non-negotiables?|"
    r"guardrails?|do'?s and don'?ts|preferences|conventions)\b(?:[^.!?]|\.(?=\w)){0,30}:?$",
    re.IGNORECASE,
)
"""A heading, with `#` or on a line of its own, that names what follows rules (`## Hard Rules`,
`Constraints:`, `Hard Rules (Must be followed)`, `Project conventions (from MEMORY.md):`,
`User preferences:`): at most `TITLE_WORDS` words, no stop."""
TITLE_WORDS = 8
RULE_SECTION_LINES = 30
"""How many lines a rules heading covers at most (to the next heading or rule line before)."""
RULE_WORDS = 4
"""The fewest words a line of a rules section holds to say a rule (not a name or a label)."""


def rules_title(line: str) -> bool:
    """Whether a line is a heading that names what follows rules (`_RULES_TITLE`): a title, not
    a rule, whatever word it holds ("Hard Rules (Must be followed)")."""
    return len(line.split()) <= TITLE_WORDS and _RULES_TITLE.match(line.strip()) is not None


def _rule_section_lines(text: str) -> list[str]:
    """The lines under a heading that names them rules (`_RULES_TITLE`), their list marks off,
    to the next markdown heading, a horizontal rule (`===`, `---`) or `RULE_SECTION_LINES` lines:
    each the user's rule whether it says `must` or not ("After completing all items, write the
    report to ./.tmp/")."""
    low = text.lower()
    if not any(
        word in low for word in ("rule", "constraint", "must be", "preference", "convention")
    ):
        return []
    found: list[str] = []
    left = 0  # lines of the section still to read
    for raw in text.splitlines():
        line = raw.strip()
        if rules_title(line):
            left = RULE_SECTION_LINES
        elif left and (line.startswith("#") or (line and set(line) <= set("=-*_ "))):
            left = 0
        elif left and line:
            said = _BULLET.sub("", line)
            if len(said.split()) >= RULE_WORDS or as_constraint(said):
                found.append(said)
            left -= 1
    return found


def rule_sentences(text: str) -> set[str]:
    """The sentences of a user's text that state a rule because a rules heading is above them
    (`_rule_section_lines`): not a question, a label (`10.2 Method:`), an aside in brackets,
    nor a heading of its own (a few words with no stop: `Output Requirements`)."""
    found: set[str] = set()
    for sentence in sentences("\n\n".join(_rule_section_lines(text))):
        if sentence.endswith(("?", ":")) or sentence.startswith("("):
            continue
        if (
            sentence.endswith((".", "!"))
            or len(sentence.split()) > TITLE_WORDS
            or as_constraint(sentence)  # a short rule with no stop: "Keep responses concise"
        ):
            found.add(sentence)
    return found


_REVIEW_LABEL = compile_lazily(
    r"^(?:[-*•]\s+|\d+[.)]\s+)?(?:\*\*|__)?(?:"
    r"(?P<fix>(?:minimum\s+|required\s+|recommended\s+|suggested\s+|proposed\s+)?"
    r"(?:actionable\s+)?(?:fix(?:es)?|remediation|recommendations?|how\s+to\s+fix))|"
    r"(?:brief\s+)?rationale|evidence(?:/boundary)?|impact|why\s+it\s+matters|reviewed|executed|"
    r"location)(?:\*\*|__)?\s*:(?:\*\*|__)?\s+\S",
    re.IGNORECASE,
)
"""A labelled line of a review's finding: its fix (`Minimum actionable fix: ...`,
`Recommendation: ...`), which is what it asks for; or what only supports the finding
(`Brief rationale:`, `Evidence:`, `Impact:`), which sets no rule whatever words it uses."""


@functools.lru_cache(maxsize=1024)  # a sentence met again (a message quoted, repeated) is read once
def as_constraint(sentence: str) -> str | None:
    """`sentence` as a constraint (cut around its cue), or None when it sets no rule (nor does
    a sentence that only introduces what follows it, ending with `:`, read alone, nor an
    agent's word on its own next step, `_AGENT_TALK`, nor an error pasted in, unless a strong
    cue says a rule). Of a review pasted in, a finding's fix is a rule and its rationale,
    evidence and impact are none (`_REVIEW_LABEL`)."""
    if sentence.endswith(":") or _AGENT_TALK.match(sentence):
        return None
    review = _REVIEW_LABEL.match(sentence)
    if review:
        return head_tail(one_line(sentence), SENTENCE_CHARS) if review.group("fix") else None
    if carries_error(sentence) and not _STRONG.search(sentence):  # `Error: No tests found`
        return None  # an error pasted in, not a rule
    question = sentence.endswith("?")
    match = (_STRONG if question else _CONSTRAINT).search(sentence)
    if not match and not question:
        match = _SHOULD.search(sentence)
        if not match and (len(sentence.split()) >= 3 or sentence.endswith(".")):
            match = _CONSTRAINT_START.search(sentence)
            clause = _CLAUSE.search(sentence)  # "Change of plan: use port 6543"
            if not match and clause:
                rest = _CONSTRAINT_START.search(sentence[clause.end() :])
                if rest:
                    match = re.compile(re.escape(rest.group(0))).search(sentence, clause.end())
    return _window(one_line(sentence), match, SENTENCE_CHARS) if match else None


_OWN_MEANS = compile_lazily(
    r"^(?:i'?ll|i\s+will|we'?ll|let'?s)\s+use\s+(?:the\s+|a\s+|my\s+)?`?[\w./-]+`?\s+"
    r"(?:sub)?(?:agent|tool|skill)s?\b(?:\s+(?:for|to)\b[^.!]{0,40})?[.!]?$",
    re.IGNORECASE,
)
"""A sentence that only names the means the agent picks for its next step ("I'll use the
`worker` agent for this."): how it works, not a choice of the work."""


_FIX_LABEL = compile_lazily(
    r"^(?:\*\*|__)?(?:(?:the|my|our|la|le)\s+)?(?:fix|solution|correctif|correction)"
    r"\s?(?:\*\*|__)?\s?:(?:\*\*|__)?\s+\S|^(?:the|my|our)\s+fix\s+(?:is|was)\s+to\b",
    re.IGNORECASE,
)
"""A sentence that gives the fix chosen by its label (`**Fix:** ...`, `The fix: ...`, French
`**La fix :** ...`) or says it (`The fix is to ...`)."""


def decision_sentences(text: str) -> list[str]:
    """Assistant sentences that state a choice (decided, we'll use, instead of, going with, switch
    to...; the fix chosen: `_FIX_LABEL`), not questions nor the agent's pick of its own tool or
    agent (`_OWN_MEANS`), each cut around its cue to at most `DECISION_CHARS` (a table row read
    as its cells' text).
    """
    return list(_decision_sentences(text))


@functools.lru_cache(maxsize=256)  # a text met again (a message quoted, repeated) is read once
def _decision_sentences(text: str) -> tuple[str, ...]:
    """`decision_sentences`, remembered per text."""
    out: list[str] = []
    for sentence in sentences(text):
        sentence = _row_text(sentence)
        match = _DECISION.search(sentence) or _FIX_LABEL.match(sentence)
        if match and not sentence.endswith("?") and not _OWN_MEANS.match(sentence.strip()):
            out.append(_window(one_line(sentence), match, DECISION_CHARS))
    return tuple(out)


_PLAN_OPENS = compile_lazily(
    r"(?:^|[.!]\s+)(?:(?:here'?s|here\s+is)\s+(?:the|my|our)\s+|(?:the|my|our)\s+)?plan"
    r"\b[^.:!?]{0,40}:$",
    re.IGNORECASE,
)
PLAN_STEPS = 8
"""The most steps of a plan an assistant text announces that are kept as decisions."""


def planned_steps(text: str) -> list[str]:
    """The steps of the plan an assistant text announces before it carries it out ("Here's the
    plan:" then a list: "- Add a `backstop` service with a `testing` profile ..."): what it
    chose to do, each a decision (at most `PLAN_STEPS`, each cut to `DECISION_CHARS`)."""
    lines = _logical_lines(text)
    for at, (line, item) in enumerate(lines):
        if item or not _PLAN_OPENS.search(line.replace("*", "").strip()):
            continue
        steps: list[str] = []
        for step, is_item in lines[at + 1 :]:
            if not is_item or len(steps) == PLAN_STEPS:
                break
            steps.append(head_tail(one_line(step), DECISION_CHARS))
        return steps
    return []


def _row_text(sentence: str) -> str:
    """A markdown table row as its cells' text (`| **P1** | Fix imports |` reads "P1 | Fix
    imports"); other text as it is."""
    stripped = sentence.strip()
    if not (stripped.startswith("|") and stripped.endswith("|") and len(stripped) > 2):
        return sentence
    cells = [cell.strip().replace("**", "") for cell in stripped[1:-1].split("|")]
    return " | ".join(cell for cell in cells if cell)


CONDENSED_LINE_CHARS = 240
"""The longest line of a long message's middle that `condense` keeps."""


@functools.lru_cache(maxsize=1024)  # a message is condensed for the facts and for each shape
def condense(text: str, limit: int) -> str:
    """`text` when it fits in `limit` characters; else its head, the lines of its middle that
    set a rule or carry an error (a pasted stack trace's exception, a "never do X" in the
    middle of a long brief), then as room allows the lines outside its fenced blocks (what the
    user wrote between the logs they pasted) and its markdown headings (what a brief asks, part
    by part), in their order, and its tail, around markers."""
    if len(text) <= limit:
        return text
    marker = " […] "
    head_end = limit * 2 // 5
    tail_start = len(text) - limit // 5
    newline = text.rfind("\n", head_end // 2, head_end)
    head_end = newline if newline > 0 else head_end
    newline = text.find("\n", tail_start, tail_start + limit // 10)
    tail_start = newline + 1 if newline > 0 else tail_start
    room = limit - head_end - (len(text) - tail_start) - 2 * len(marker)
    fenced = text.count("```", 0, head_end) % 2 == 1
    pieces, typed = _fenced_pieces(text[head_end:tail_start], fenced)
    picked: dict[int, str] = {}
    wants: tuple[Callable[[int, str], object], ...] = (
        lambda _, line: _says_a_rule_or_an_error(line),
        lambda at, _: at in typed,  # what the user wrote between the logs they pasted
        lambda _, line: _HEADING.match(line),
    )
    for wanted in wants:
        for at, line in enumerate(pieces):
            if at in picked or not line or not wanted(at, line):
                continue
            line = head_tail(line, CONDENSED_LINE_CHARS)
            if len(line) + 3 > room:
                break
            picked[at] = line
            room -= len(line) + 3
    kept = [picked[at] for at in sorted(picked)]
    middle = marker + " … ".join(kept) + marker if kept else marker
    return text[:head_end].rstrip() + middle + text[tail_start:].lstrip()


_HEADING = compile_lazily(r"#{1,6} \S")
"""A markdown heading: what a long brief asks, part by part (`## Prompt 6 - Training
quizzes, spaced repetition queue`)."""


_VERDICT = compile_lazily(r"(?<![\w-])(?:FAIL(?:ED|S)?|VIOLATION|BLOCKER)(?![\w-])|❌")
"""A check a pasted review or audit says failed (`Demo credentials ...: **FAIL**`, `❌`):
what the work must still meet."""


@functools.lru_cache(maxsize=4096)  # `condense` reads the same lines for each of its limits
def _says_a_rule_or_an_error(line: str) -> bool:
    review = _REVIEW_LABEL.match(line)
    if review:  # a finding's fix, not what supports it
        return review.group("fix") is not None
    return (
        carries_error(line)
        or _CONSTRAINT.search(line) is not None
        or _VERDICT.search(line) is not None
    )


def _fenced_pieces(text: str, fenced: bool) -> tuple[list[str], set[int]]:
    """The pieces of `text` (`_pieces`), and which of them lie outside its fenced blocks when
    it has any (`fenced`: it starts inside one): the words of whoever wrote around a pasted
    log."""
    pieces: list[str] = []
    typed: set[int] = set()
    fences = fenced or "```" in text
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        for piece in _pieces(line):
            if fences and not fenced:
                typed.add(len(pieces))
            pieces.append(piece)
    return pieces, typed


def _pieces(text: str) -> Iterator[str]:
    """The lines of `text`, a long line in its sentences (dictated text has no line breaks)."""
    for line in text.splitlines():
        line = one_line(line)
        if len(line) <= CONDENSED_LINE_CHARS:
            yield line
        else:
            yield from (part.strip() for part in _SENTENCE_END.split(line))


# --------------------------------------------------------------------------------------------
# Settings: values the user gives (KEY=value, host:port, "the X is Y"), and changes to them

_ASSIGNMENT = compile_lazily(
    r"(?<![\w.$/?&=:@-])(--?[A-Za-z][\w-]*|[A-Za-z_][\w-]*)(?<![=!<>])=(?![=\s])"
    r"(\"[^\"]+\"|'[^']+'|[^\s,;`'\"()\[\]{}<>]+)"
)
_HOST_PORT = compile_lazily(
    r"(?<![\w.-])((?:[A-Za-z0-9][A-Za-z0-9-]*\.)+[A-Za-z][A-Za-z0-9-]*|"
    r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+):(\d{2,5})(?!\d|:\d)"
)
_IS_VALUE = compile_lazily(
    r"\b((?:[A-Za-z][\w.-]*\s+){0,2}?[A-Za-z][\w.-]*)\s+(?:is|are)\s+"
    r"(?:now\s+|still\s+|set\s+to\s+|changed\s+to\s+)?"
    r"(`[^`]+`|\"[^\"]+\"|'[^']+'|[^\s,;`'\"]*\d[^\s,;`'\"]*)"
)
# Last labels that make `name.ext:12` a file and line, not a host and port.
_FILE_SUFFIXES = frozenset(
    re.split(
        r"\s+",
        "ts tsx js jsx mjs cjs py pyi rb go rs java kt kts c h cc cpp hpp cs php swift scala md "
        "rst json jsonl yaml yml toml txt log sh bash zsh sql html htm css scss vue svelte lock "
        "cfg ini xml ipynb tf lua ex exs erl dart",
    )
)
_NOT_A_KEY = frozenset(
    re.split(
        r"\s+",
        "the a an our my your their its this that these those it there here which what who "
        "everything something nothing one value",
    )
)
_TRAILING = ".:!?)]}'\""
_IS_ARE = compile_lazily(r"\s(?:is|are)\s")
"""What every match of `_IS_VALUE` holds: found first, it spares most sentences that search."""


def setting_values(sentence: str) -> dict[str, frozenset[str]]:
    """The settings a sentence gives a value, by key: `KEY=value` (and `--flag=value`),
    `host:port` (the host is the key, loopback hosts are not), and "the X is Y" where Y is
    quoted or holds a digit (the last two words of X are the key). Keys are case-folded."""
    found: dict[str, set[str]] = {}

    def add(key: str, value: str) -> None:
        value = value.strip().rstrip(_TRAILING).strip("`'\"")
        if key and value:
            found.setdefault(key.lower(), set()).add(value)

    # each pattern runs only on a sentence holding what all its matches hold
    if "=" in sentence:
        for match in _ASSIGNMENT.finditer(sentence):
            add(match.group(1), match.group(2))
    if ":" in sentence:
        for match in _HOST_PORT.finditer(sentence):
            host = match.group(1).lower()
            last = host.rsplit(".", 1)[-1]
            if host != "localhost" and last not in _FILE_SUFFIXES:
                add(host + ":", match.group(2))
    if _IS_ARE.search(sentence):
        for match in _IS_VALUE.finditer(sentence):
            words = [w for w in match.group(1).lower().split() if w not in _NOT_A_KEY]
            if words and "=" not in match.group(2):
                add("the " + " ".join(words[-2:]), match.group(2))
    return {key: frozenset(values) for key, values in found.items()}


def changes_setting(new: Mapping[str, frozenset[str]], old: Mapping[str, frozenset[str]]) -> bool:
    """Whether `new` gives a key of `old` another value (not merely restating the same one)."""
    return any(
        key in old and bool(values - old[key]) and bool(old[key] - values)
        for key, values in new.items()
    )


_VALUE = compile_lazily(r"`[^`]+`|\"[^\"]+\"|'[^']+'|\b[\w.:/@-]*\d[\w.:/@-]*\b")
_WORD = compile_lazily(r"[a-z][a-z_-]{2,}")
STOP_WORDS = frozenset(  # words too common to say what a sentence is about
    re.split(
        r"\s+",
        "the and for with that this from into use using now then also but not our your you are "
        "was were will should must can could would just please instead only always never don't",
    )
)


def _values(text: str) -> set[str]:
    return {v.strip("`\"'").lower() for v in _VALUE.findall(text)}


def _words(text: str) -> set[str]:
    stripped = _VALUE.sub(" ", text.lower())
    return {w for w in _WORD.findall(stripped) if w not in STOP_WORDS}


_SOURCE = compile_lazily(r"^(?:Skill [\w.@/-]+|[\w.-]+\.md|\.cursorrules): ")
_LABEL = compile_lazily(r"^(?:Decision|Q):\s*")
"""The label of a decision written down (`carriers.written_decisions`): every such line has it,
so it says nothing of what two lines share."""


def supersedes(new: str, old: str) -> bool:
    """Whether `new` restates `old` with other values: it gives a setting of `old` another
    value (`setting_values`), or it shares most of its words with other numbers or names. A
    line of an instruction file (`Skill NAME: ...`, `AGENTS.md: ...`) never does: the lines of
    one file are all in force at once, one file's line changes nothing another file or the user
    set, and a file read later does not overrule the user."""
    if _SOURCE.match(new):
        return False
    new, old = _LABEL.sub("", new), _LABEL.sub("", old)
    if changes_setting(setting_values(new), setting_values(old)):
        return True
    old_values, new_values = _values(old), _values(new)
    if not old_values or not new_values or old_values <= new_values:
        return False
    old_words, new_words = _words(old), _words(new)
    shared = old_words & new_words
    return len(shared) >= 2 and len(shared) * 2 >= min(len(old_words), len(new_words))


def superseded(items: Sequence[str], groups: Sequence[int] | None = None) -> dict[int, int]:
    """For each superseded item, the later item that replaces it (positions); with `groups`
    (one per item), never an item of the same nonzero group (one user message)."""
    found: dict[int, int] = {}
    for i, old in enumerate(items):
        group = groups[i] if groups is not None else 0
        for j in range(len(items) - 1, i, -1):
            if group and groups is not None and groups[j] == group:
                continue
            if j not in found and supersedes(items[j], old):
                found[i] = j
                break
    return found


def fold_superseded(
    items: Sequence[str], groups: Sequence[int] | None = None
) -> list[tuple[str, list[str]]]:
    """Items with each superseded one folded into the later item that replaces it: (item, the
    earlier items it replaces); `groups` as `superseded` takes them."""
    replaced = superseded(items, groups)
    out: list[tuple[str, list[str]]] = []
    for j, item in enumerate(items):
        if j in replaced:
            continue
        out.append((item, [items[i] for i, k in replaced.items() if k == j]))
    return out


def folded(item: str, olds: Sequence[str]) -> str:
    """`item` with the earlier items it replaces after it, so none reads as current."""
    return item + "".join(f" (replaces earlier: {old})" for old in olds)
