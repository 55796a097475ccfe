"""The extractive summarizer: a structured summary built from the records, offline.

`ExtractiveSummarizer().summarize(request)` extracts the facts of `request.messages` (`facts`),
carried on from an earlier summary's, and `render_facts` renders them under fixed headings
(`SECTIONS`, in order; an empty one is left out) within the request's token budget. The same
request always gives the same text; `parse_summary` (`compactcli.summarizers.summary_text`)
reads such a summary back into facts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from compactcli.redact import redact
from compactcli.summarizers import ExtractiveDetails, SummaryRequest, SummaryResult
from compactcli.summarizers.carriers import SUBAGENT, changes_text, reports_reply
from compactcli.summarizers.earlier import earlier_room, fit_earlier
from compactcli.summarizers.facts import (
    GOAL_CHARS,
    PASTED,
    WHILE_WORKING,
    Command,
    ErrorFact,
    Facts,
    extract_facts,
)
from compactcli.summarizers.goals import sets_up, states_task
from compactcli.summarizers.identifiers import is_defined_name, named, said_once
from compactcli.summarizers.sentences import (
    STOP_WORDS,
    condense,
    fold_superseded,
    folded,
)
from compactcli.summarizers.spans import code_span
from compactcli.summarizers.summary_text import (
    ASK,
    CHANGED,
    COMMANDS,
    CONSTRAINTS,
    CURRENT,
    DECISIONS,
    EARLIER,
    ERRORS,
    FILES_MODIFIED,
    FILES_READ,
    GOAL,
    IDENTIFIERS,
    OMITTED,
    PASTED_LINE,
    PENDING,
    PLAN,
    PROGRESS,
    RESOLVED,
    RULE,
    SECTIONS,
    SEE_GOAL,
    SEE_PENDING,
    SEE_REQUEST,
    SUMMARY_HEADINGS,
    TODO,
    UNRESOLVED,
    UPDATE_LINE,
    USER_MESSAGES,
    escape_heading,
    grouped_rules,
    parse_summary,
    rule_source,
)
from compactcli.summarizers.tool_calls import command_key, passed_tests
from compactcli.trim import clip, head_tail, one_line
from compactcli.user_text import squeeze, undrawn

__all__ = ["SUMMARY_HEADINGS", "ExtractiveSummarizer", "parse_summary", "render_facts"]


# Character caps for the shapes an item can take, from roomy to tight.
_KEPT_CAPS = (400, 200, 100)
_GOAL_CAPS = (6000, 2000, 600, 300, 120)
_SHORT_MESSAGE = 240
_FULL_MESSAGE = 2000
_MESSAGE_CAPS = (6000, 2000, 480)
_REPORT_CAPS = (3000, 700, 240)
"""An end-of-turn report's shapes: cut in its middle, and at its shortest its head alone (what
was done comes first; a report's tail is mostly what the agent offers to do next)."""
_FOCUS_SHARE = 0.65
_SPARE_TOKENS = 24
"""Room the new facts leave that an earlier summary under a tight budget grows back into."""
_CURRENT_CAPS = (4000, 900, 400, 160, 80)
_CHANGE_NOTES = 4


# --------------------------------------------------------------------------------------------
# Superseded values


def _folded_shapes(
    item: str, olds: Sequence[str], caps: Sequence[int], prefix: str
) -> tuple[str, ...]:
    """Shapes of an item that replaces `olds`: with them while it fits the cap, else the item
    alone (never an earlier value cut loose from the one that replaced it)."""
    whole = folded(item, olds)
    found: list[str] = []
    for cap in caps:
        shape = prefix + (whole if len(whole) <= cap else head_tail(item, cap))
        if shape not in found:
            found.append(shape)
    return tuple(found)


def _later_changes(text: str, constraints: Sequence[str], changes: dict[int, int]) -> str:
    """The note to put after `text` for each superseded constraint it holds: what replaced it."""
    notes = [
        constraints[j]
        for i, j in sorted(changes.items())
        if constraints[i] in text and constraints[j] not in text
    ]
    return "".join(f" [later changed: {note}]" for note in notes)


def _noted_shapes(text: str, notes: str, caps: Sequence[int], prefix: str = "") -> tuple[str, ...]:
    """`_shapes` of `text` with `notes` after it: the text is cut to the caps, never the notes."""
    if not notes:
        return _shapes(text, caps, prefix)
    found: list[str] = []
    for cap in caps:
        shape = prefix + head_tail(text, cap) + notes
        if shape not in found:
            found.append(shape)
    return tuple(found)


# --------------------------------------------------------------------------------------------
# Items and the budget


@dataclass(slots=True)
class _Item:
    section: str
    order: int
    shapes: tuple[str, ...]  # from fullest to shortest; the last one is the minimum
    kept: bool = False  # always in the summary
    rank: int = 0  # lower is added earlier
    focus: bool = False
    chosen: int = -1  # index into shapes, -1 when left out
    group: str = ""  # the instruction file or skill a rule came from, said once above its rules
    last_full: bool = False  # its fullest shape only once every other item has had its room


def _focus_terms(focus: str | None) -> tuple[str, ...]:
    if not focus:
        return ()
    words = [w for w in re.findall(r"[\w./-]{3,}", focus.lower()) if w not in STOP_WORDS]
    return tuple(dict.fromkeys(words))


def _shapes(text: str, caps: Sequence[int], prefix: str = "") -> tuple[str, ...]:
    found: list[str] = []
    for cap in caps:
        shape = prefix + head_tail(text, cap)
        if shape not in found:
            found.append(shape)
    return tuple(found)


def _condensed_shapes(text: str, caps: Sequence[int], prefix: str = "") -> tuple[str, ...]:
    """A user message's shapes, drawings left out, cut by `condense` (keeps rule, error lines)."""
    found: list[str] = []
    text = undrawn(text)
    for cap in caps:
        shape = prefix + one_line(condense(text, cap))
        if shape not in found:
            found.append(shape)
    return tuple(found)


def _file_shapes(path: str, notes: Sequence[str]) -> tuple[str, ...]:
    """Shapes of a modified file: with what changed in it while that fits, then the path."""
    if not notes:
        return (f"- {path}",)
    text = changes_text(notes, 300, _CHANGE_NOTES)
    return tuple(dict.fromkeys((f"- {path}{CHANGED}{text}", f"- {path}")))


def _command_line(command: Command) -> str:
    outcome = command.outcome
    if command.runs > 1:
        outcome += f", ran {command.runs} times"
    line = f"- {code_span(command.command)} ({outcome})"
    if command.detail:
        line += f": {command.detail}"
    return line


def _error_line(error: ErrorFact, where_cap: int | None) -> str:
    if error.tool == PASTED:
        return PASTED_LINE + error.text
    line = (RESOLVED if error.resolved else UNRESOLVED) + error.text
    if where_cap is None:
        return line
    if error.where and error.where not in error.text:  # not said twice
        return line + f" ({error.tool}: {head_tail(error.where, where_cap)})"
    return line + (f" ({error.tool})" if error.tool else "")


def _items(
    facts: Facts, earlier: str | None, terms: tuple[str, ...], quoted: Facts | None = None
) -> list[_Item]:
    """Every item the summary of `facts` may show, with its shapes and whether it is kept.

    Kept items, always shown: the earlier summary, the goal, every constraint (and the user's
    words from tool results) the request quoted after the summary does not hold, modified file,
    unresolved error, pending ask and open todo, and the current state. The rest rank, first
    added first: user messages (newest first, the full text of long ones last), the approved
    plan, end-of-turn reports, identifiers the goal does not name (newest first), decisions,
    mid-turn reports, failed commands and resolved errors, files read, other commands. What the
    quoted request gives is a reference to it; a command's error line the errors show is not
    said again at the command."""
    items: list[_Item] = []
    quoted_message = quoted.user_messages[-1] if quoted and quoted.user_messages else None
    quoted_ask = quoted.pending[-1] if quoted and quoted.pending else None

    def add(
        section: str,
        shapes: tuple[str, ...],
        *,
        kept: bool = False,
        rank: int = 0,
        group: str = "",
        last_full: bool = False,
    ) -> None:
        text = shapes[0].lower()
        focus = any(term in text for term in terms)
        items.append(
            _Item(section, len(items), shapes, kept, rank, focus, group=group, last_full=last_full)
        )

    if earlier:
        add(EARLIER, (earlier,), kept=True)
    changes = facts.replaced_constraints()

    def notes(text: str) -> str:
        return _later_changes(text, facts.constraints, changes) if changes else ""

    if facts.goal:
        goal = one_line(facts.goal)
        shapes = _noted_shapes(goal, notes(goal), _GOAL_CAPS)
        if not notes(goal):
            shapes = _condensed_shapes(facts.goal, _GOAL_CAPS)
        if quoted_message is not None and facts.goal == quoted_message:
            shapes = (SEE_REQUEST,)  # quoted whole after the summary
        add(GOAL, shapes, kept=True)
    # a command that sets up the session (`/compact`, `/model opus`) asks for nothing: not
    # listed, unless it is the latest message (it may be a skill of the user's)
    messages = [
        message
        for position, message in enumerate(facts.user_messages, start=1)
        if position == len(facts.user_messages) or not sets_up(message.strip())
    ]
    total = len(messages)
    last_task = max((n for n, m in enumerate(messages, start=1) if states_task(m)), default=0)
    seen_goal = False
    pending = {squeeze(ask) for ask in facts.pending}
    for number, message in enumerate(messages, start=1):
        text = one_line(message)
        shapes = _noted_shapes(text, notes(text), (_FULL_MESSAGE, _SHORT_MESSAGE), f"{number}. ")
        if not notes(text):
            shapes = _condensed_shapes(message, _MESSAGE_CAPS, f"{number}. ")
        if facts.goal and facts.goal in (message, head_tail(message, GOAL_CHARS)) and not seen_goal:
            seen_goal = True  # the goal is shown whole above
            shapes = (f"{number}. {SEE_GOAL}",)
        elif number == total and message == quoted_message:
            shapes = (f"{number}. {SEE_REQUEST}",)
        elif squeeze(message) in pending:
            shapes = (f"{number}. {SEE_PENDING}",)
        # newest first: a later message outranks an earlier one; the newest that states a task
        # is the one the turns after the summary carry on ("go ahead", "do the remaining
        # changes"): always shown, at 2,000 characters when there is room
        newest = number == last_task and len(shapes) > 1
        add(
            USER_MESSAGES,
            shapes[-2:] if newest else shapes,
            rank=100 + (total - number),
            kept=newest,
        )
    for constraint, olds in facts.folded_constraints():
        if not olds and quoted_message and _said(constraint, (quoted_message,)):
            continue  # the request quoted after the summary says it
        source = rule_source(constraint)
        if source and not olds:  # under the name of its file or skill, said once
            add(
                CONSTRAINTS, _shapes(source[1], (*_KEPT_CAPS, 60), RULE), kept=True, group=source[0]
            )
            continue
        add(CONSTRAINTS, _folded_shapes(constraint, olds, (*_KEPT_CAPS, 60), "- "), kept=True)
    for answer in facts.answers:
        add(CONSTRAINTS, _shapes(answer, (*_KEPT_CAPS, 60), "- "), kept=True)
    for position, step in enumerate(facts.plan):
        add(PLAN, (f"- {step}",), rank=5_000 + position)
    modified = set(facts.files_modified)
    for path in facts.files_read:
        if path not in modified:
            add(FILES_READ, (f"- {path}",), rank=28_000)
    edits: dict[str, list[str]] = {}
    for path, note in facts.changes:
        edits.setdefault(path, []).append(note)
    for path in facts.files_modified:
        add(FILES_MODIFIED, _file_shapes(path, edits.get(path, ())), kept=True)
    count = len(facts.commands)
    unresolved = {error.text for error in facts.errors if not error.resolved}
    tested = [i for i, command in enumerate(facts.commands) if passed_tests(command)]
    for position, command in enumerate(facts.commands):
        if command.detail in unresolved:  # the error it printed is under Errors, always shown
            command = replace(command, detail="")
        failed = command.outcome == "failed"
        rank = (30_000 if failed else 50_000) + (count - position)
        if tested and position == tested[-1]:  # the latest test count: where the work stands
            rank = 30_000 - 1
        short = replace(command, command=head_tail(command_key(command.command), 80))
        short = replace(short, detail=head_tail(short.detail, 120))
        shapes = tuple(dict.fromkeys((_command_line(command), _command_line(short))))
        add(COMMANDS, shapes, rank=rank)
    count = len(facts.errors)
    for position, error in enumerate(facts.errors):
        shapes = tuple(dict.fromkeys(_error_line(error, cap) for cap in (120, 40, None)))
        if error.resolved:
            add(ERRORS, shapes, rank=20_000 + (count - position))
        else:
            add(ERRORS, shapes, kept=True)
    reply = one_line(facts.last_reply)
    decisions = [(d, olds) for d, olds in fold_superseded(facts.decisions) if d not in reply]
    for position, (decision, olds) in enumerate(decisions):
        add(DECISIONS, (f"- {folded(decision, olds)}",), rank=20_000 + (len(decisions) - position))
    reports = list(facts.reports)
    if reports and facts.last_reply and reports_reply(reports[-1], facts.last_reply):
        reports.pop()  # the last one is shown whole below
    # what the agent said mid-turn and then said last is shown once, as the current state
    reports = [
        line
        for line in reports
        if not (
            line.startswith(WHILE_WORKING) and one_line(line.removeprefix(WHILE_WORKING)) in reply
        )
    ]
    for position, line in enumerate(reports):
        if line.startswith(WHILE_WORKING):  # said mid-turn: after the reports and decisions
            add(PROGRESS, _shapes(line, (800, 240), "- "), rank=25_000 + (len(reports) - position))
        else:  # a sub-agent's report whole only once every other item has had its room
            shapes = (*_shapes(line, _REPORT_CAPS[:-1], "- "), f"- {clip(line, _REPORT_CAPS[-1])}")
            add(
                PROGRESS,
                tuple(dict.fromkeys(shapes)),
                rank=8_000 + (len(reports) - position),
                last_full=line.startswith(SUBAGENT) and len(line) > _REPORT_CAPS[1],
            )
    # an identifier named only by a constraint that was replaced is no longer current
    replaced = [facts.constraints[i] for i in changes]
    current = [c for i, c in enumerate(facts.constraints) if i not in changes]
    names = [
        name
        for name in said_once(facts.identifiers)
        if named(name) not in facts.goal
        and not (
            any(named(name) in old for old in replaced)
            and not any(named(name) in new for new in current)
        )
    ]
    for position, name in enumerate(names):  # one no file holds before a name an edit defines
        later = len(names) if is_defined_name(name) else 0
        add(IDENTIFIERS, (f"- {name}",), rank=10_000 + later + (len(names) - position))
    for ask in facts.pending:
        if ask == quoted_ask:
            add(PENDING, (ASK + SEE_REQUEST,), kept=True)
        elif ask == facts.goal:  # the goal, still pending: shown once, above
            add(PENDING, (ASK + SEE_GOAL,), kept=True)
        else:
            add(PENDING, _condensed_shapes(ask, (1000, *_KEPT_CAPS), ASK), kept=True)
    for todo in facts.todos:
        add(PENDING, _shapes(todo, _KEPT_CAPS, TODO), kept=True)
    if facts.last_reply.strip():
        add(CURRENT, _condensed_shapes(facts.last_reply, _CURRENT_CAPS), kept=True)
    return items


def _render(items: Sequence[_Item], update: bool) -> str:
    by_section: dict[str, list[_Item]] = {}
    for item in items:
        by_section.setdefault(item.section, []).append(item)
    parts: list[str] = [UPDATE_LINE] if update else []
    said = [
        item.shapes[item.chosen]
        for item in items
        if item.section in (GOAL, USER_MESSAGES) and item.chosen >= 0
    ]
    for section in SECTIONS:
        members = by_section.get(section, [])
        shown = [item for item in members if item.chosen >= 0]
        if not shown:
            continue
        lines = [section]
        # a line said once: two errors cut short no longer name their calls and may read the
        # same; a constraint a user message shown above holds is not said again
        texts = dict.fromkeys((item.shapes[item.chosen], item.group) for item in shown)
        if section == CONSTRAINTS:
            texts = {
                (t, g): None
                for t, g in texts
                if not _said(t.removeprefix("- ").removeprefix(RULE), said)
            }
        if not texts:
            continue
        body = grouped_rules([(g, t) for t, g in texts])
        lines.extend(body if section == EARLIER else map(escape_heading, body))
        missing = len(members) - len(shown)
        if missing:
            lines.append(OMITTED.format(count=missing))
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _said(line: str, shown: Sequence[str]) -> bool:
    """Whether a constraint line is said whole by one of the `shown` user messages (a window of
    a long sentence, cut at either end with `…`, by its text inside the cuts)."""
    core = line.strip("… ")
    return len(core) > 12 and any(core in text for text in shown)


_TIER = 10_000
"""Optional items whose ranks share `rank // _TIER` are placed together (see `_fit`)."""

_FIRST_TIER_SHARE = 0.5
"""How much of the room the kept items leave the first tier (the user's messages and the
agent's reports) may take, widened, before the next tiers come in: a long pasted brief's full
text comes after the identifiers, decisions and resolved errors, before failed commands."""
_WIDENED_LATER = (FILES_MODIFIED,)
_LATER_RANK = 30_000
"""Kept items of `_WIDENED_LATER` sections take their fuller shapes only after the optional
items ranked below `_LATER_RANK` (the user's messages, plan, reports, identifiers, decisions and
resolved errors) have come in."""


def _tiers(items: Sequence[_Item]) -> list[list[_Item]]:
    """`items` (in rank order) grouped by tier."""
    tiers: dict[int, list[_Item]] = {}
    for item in items:
        tiers.setdefault(item.rank // _TIER, []).append(item)
    return [tiers[key] for key in sorted(tiers)]


@dataclass(frozen=True, slots=True)
class _Fit:
    text: str
    tokens: int
    over_budget: bool
    omitted: dict[str, int]


def _fit(items: list[_Item], budget: int, count: Callable[[str], int], update: bool) -> _Fit:
    """Choose a shape (or none) for every item so the rendered text fits `budget` tokens."""
    costs: dict[tuple[int, int], int] = {}

    def cost(item: _Item, shape: int) -> int:
        key = (item.order, shape)
        if key not in costs:
            costs[key] = count(item.shapes[shape]) + 1
        return costs[key]

    sections = {item.section for item in items}
    overhead = sum(count(s) + 2 for s in sections) + (count(UPDATE_LINE) + 2 if update else 0)
    overhead += sum(count(f"- {group}:") + 1 for group in {i.group for i in items if i.group})
    omitted_line = count(OMITTED.format(count=999)) + 1
    limit = budget
    result = _Fit("", 0, False, {})
    best: _Fit | None = None
    low, high = 0, budget * 10  # limits known to fit, and known to be too much
    grown = False
    for _attempt in range(8):
        for item in items:
            item.chosen = -1
        room = limit - overhead - omitted_line * len({i.section for i in items if not i.kept})
        kept = [item for item in items if item.kept]
        for item in kept:  # the shortest shape of every kept item first
            item.chosen = len(item.shapes) - 1
        used = sum(cost(item, item.chosen) for item in kept)
        # then widen them as far as the room allows (the goal, unless an ask, and EARLIER last)
        last = (EARLIER,) if any(i.shapes == (ASK + SEE_GOAL,) for i in kept) else (GOAL, EARLIER)
        # what changed in a modified file is widened after the decisions and resolved errors
        later = [item for item in kept if item.section in _WIDENED_LATER]
        for item in sorted(kept, key=lambda i: (i.section in last, i.order)):
            if item.section in _WIDENED_LATER:
                continue
            for shape in range(item.chosen):
                extra = cost(item, shape) - cost(item, item.chosen)
                if used + extra <= room:
                    used += extra
                    item.chosen = shape
                    break
        left = room - used
        optional = sorted((i for i in items if not i.kept), key=lambda i: (i.rank, i.order))
        focused = [i for i in optional if i.focus]
        others = [i for i in optional if not i.focus]

        def take(pool: list[_Item], allowance: float) -> float:
            spent = 0.0
            for item in pool:
                if item.chosen >= 0:
                    continue
                shape = len(item.shapes) - 1
                price = cost(item, shape)
                if spent + price <= allowance:
                    item.chosen = shape
                    spent += price
            return spent

        def widen(
            pool: list[_Item], spent: float, fullest: int, left: float, last: bool = False
        ) -> float:
            """Widen the items of `pool` in order, each to the fullest shape (not fuller than
            `fullest`; an item's fullest `last_full` shape only in the `last` pass) that still
            fits in `left`."""
            for item in pool:
                widest = fullest if last or not item.last_full else max(fullest, 1)
                for shape in range(min(widest, item.chosen), item.chosen):
                    extra = cost(item, shape) - cost(item, item.chosen)
                    if spent + extra <= left:
                        spent += extra
                        item.chosen = shape
                        break
            return spent

        if focused:
            spent = take(focused, left * _FOCUS_SHARE)
            if not spent:  # the share holds none of them: let the first that fits in
                for item in focused:
                    price = cost(item, len(item.shapes) - 1)
                    if price <= left:
                        item.chosen = len(item.shapes) - 1
                        spent = price
                        break
            spent += take(others, left - spent)
            spent += take(focused, left - spent)
        else:
            # tier by tier (`_TIER` ranks each): a tier's items at their shortest, then
            # widened (the first tier, the user's messages and the agent's reports, within
            # `_FIRST_TIER_SHARE` of the room; the others to their middle shape) before the
            # next tier's come in; before the tiers of `_LATER_RANK` and after, what changed
            # in the modified files, then the first tier at its fullest
            spent = 0.0
            first: list[_Item] = []
            for number, tier in enumerate(_tiers(others)):
                if tier[0].rank >= _LATER_RANK and (later or first):
                    spent = widen(first, widen(later, spent, 0, left), 0, left)
                    later = first = []
                spent += take(tier, left - spent)
                if number == 0:
                    spent = widen(tier, spent, 0, max(spent, left * _FIRST_TIER_SHARE))
                    first = tier
                else:
                    spent = widen(tier, spent, 1, left)
        spent = widen(later, spent, 0, left)
        # widen every optional item with a fuller shape, in rank order, as far as it fits
        spent = widen([*focused, *others], spent, 0, left)
        widen([*focused, *others], spent, 0, left, last=True)
        text = _render(items, update)
        tokens = count(text)
        omitted: dict[str, int] = {}
        for item in items:
            if item.chosen < 0:
                omitted[item.section] = omitted.get(item.section, 0) + 1
        result = _Fit(text, tokens, tokens > budget, omitted)
        if tokens > budget:  # too much: retry with less room
            if room < used:  # the kept items alone do not fit
                return best or result
            high = limit
            limit = (low + high) // 2 if best is not None else limit - (tokens - budget) - 2
            grown = True
        else:
            best, low = result, limit
            slack = budget - tokens
            if not omitted or slack <= max(4, budget // 100):
                return best
            limit = (low + high) // 2 if grown else limit + slack  # room to spare
        if high - low <= 2:
            break
    return best or result


# --------------------------------------------------------------------------------------------
# The summarizer


def _as_roomy(now: Mapping[int, int], before: Mapping[int, int]) -> bool:
    """Whether every item shown `before` (its shape by order; -1: left out) is shown `now` in
    the same shape or a fuller one (a lower index)."""
    return all(0 <= now.get(order, -1) <= shape for order, shape in before.items() if shape >= 0)


def render_facts(
    facts: Facts,
    budget_tokens: int,
    count: Callable[[str], int],
    *,
    focus: str | None = None,
    earlier: str | None = None,
    update: bool = False,
    quoted: Facts | None = None,
) -> tuple[str, ExtractiveDetails]:
    """The summary text of `facts` within `budget_tokens`, and details of how it was fitted.

    Kept items (`_items`) are always shown, cut shorter but never dropped when the budget is
    tight; the rest are added by rank while they fit, and a section that lost items says how
    many. When even the kept items do not fit, the text is as short as they allow and
    `details["over_budget"]` says so. With `focus`, items that mention one of its words are
    added first and may take about two thirds (`_FOCUS_SHARE`) of what is left after the kept
    items. `earlier`, an earlier summary not in this format, is shown under "Earlier summary",
    fitted (`fit_earlier`) to what the new facts leave, and at least its core (`core_tokens`:
    its requests, rules, pending work, errors, decisions and state) up to `EARLIER_SHARE` of
    the budget; room the new facts then leave goes back to it (its files and code) as long as
    every new fact keeps its shape; with `update` the text opens with `UPDATE_LINE`.

    A constraint or decision that a later one restates with another value is shown only next
    to it, as "(replaces earlier: …)", so it never reads as current; where the goal or a user
    message holds it, "[later changed: …]" follows. User messages keep their order and number.

    `quoted` holds the facts of the request quoted after the summary (`extract_facts` of that
    message alone): the user message and the pending ask it gives are shown as `SEE_REQUEST`.
    """
    room = budget_tokens
    if earlier:  # what the new facts leave it, and at least its core (`earlier_room`)
        fresh = _items(facts, None, (), quoted)
        need = sum((count(item.shapes[-1]) + 1) * (4 if item.kept else 1) for item in fresh) // 4
        need += sum(count(section) + 2 for section in {item.section for item in fresh})
        room = earlier_room(earlier, budget_tokens, need, count(EARLIER) + 2, count)
    best: _Fit | None = None
    shown: dict[int, int] = {}  # the shape of each newer fact in `best`
    for _attempt in range(4):
        fitted = fit_earlier(earlier, room - count(EARLIER) - 2, count) or None if earlier else None
        items = _items(facts, fitted, _focus_terms(focus), quoted)
        fit = _fit(items, budget_tokens, count, update)
        if fitted is None:
            best = fit
            break
        if fit.over_budget:
            if best is not None:  # the earlier summary grew too far: the last fit stands
                break
            best = fit
            room = max(1, room - (fit.tokens - budget_tokens) - 4)  # the earlier summary gives way
            continue
        now = {item.order: item.chosen for item in items if item.section != EARLIER}
        if best is not None and not best.over_budget and not _as_roomy(now, shown):
            break  # the room it grew into was a newer fact's
        best, shown = fit, now
        spare = budget_tokens - fit.tokens
        if spare < _SPARE_TOKENS or fitted == fit_earlier(earlier or "", budget_tokens, count):
            break  # nothing to grow into, or it is shown whole
        room += spare  # what the new facts left: the earlier summary's files and code
    assert best is not None
    fit = best
    details: ExtractiveDetails = {
        "summary_tokens": fit.tokens,
        "budget_tokens": budget_tokens,
        "over_budget": fit.over_budget,
        "omitted": dict(sorted(fit.omitted.items())),
    }
    return fit.text, details


class ExtractiveSummarizer:
    """The offline, deterministic summarizer.

    An earlier summary in this format (`request.previous`, or the last summary among the
    messages) is read back into facts (`parse_summary`) and carried on; any other earlier
    summary (an agent's own) is kept as text under "Earlier summary". Either way the summary
    opens with a line saying it updates an earlier one. With `request.redact`, the facts are
    redacted (`compactcli.redact`) before the summary is rendered and counted, so the markers
    are inside the budget.
    """

    def __init__(self, **settings: Any) -> None:
        self.settings = dict(settings)  # accepted and ignored: nothing to configure offline

    @property
    def name(self) -> str:
        return "extractive"

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        previous_text = request.previous
        messages = request.messages
        if previous_text is None:  # an agent's summary left among the messages
            summaries = [m for m in messages if m.summary and m.text.strip()]
            if summaries:
                previous_text = summaries[-1].text
        previous_facts = request.previous_facts
        earlier: str | None = None
        if previous_text and previous_text.strip():
            parsed = parse_summary(previous_text)
            if parsed is not None:
                own_facts, earlier = parsed
                previous_facts = previous_facts or own_facts
            elif previous_facts is None or previous_facts.files_only() or request.facts_replaced:
                earlier = previous_text.strip()
        facts = extract_facts(messages, previous_facts, cwd=request.cwd)
        if earlier is not None and (previous_facts is None or previous_facts.files_only()):
            facts = replace(facts, goal="")  # the earlier summary holds the goal
        quoted = extract_facts([q], cwd=request.cwd) if (q := request.quoted_request) else None
        if request.redact:
            facts = facts.map_text(redact)
            earlier = redact(earlier) if earlier else earlier
            quoted = quoted.map_text(redact) if quoted else None
        update = bool(previous_facts and not previous_facts.is_empty()) or earlier is not None
        text, details = render_facts(
            facts,
            request.budget_tokens,
            request.counter.text_tokens,
            focus=request.focus,
            earlier=earlier,
            update=update,
            quoted=quoted,
        )
        return SummaryResult(
            text=text, summarizer=self.name, facts=facts, details={"extractive": details}
        )
