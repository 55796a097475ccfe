"""Generated coding sessions with planted facts: the first session, its later rounds, the check.

`build_session(seed, tokens)` writes work episodes (`episodes`) and plants the facts a compaction
must keep (EVAL.md §3.1) at depths spread over the session; `continue_session` writes the new
turns of a later round; `check_planted` raises `PlantingError` unless the planted facts are where
they should be. Every choice comes from one `random.Random` seeded by the seed (and the cycle),
so the same arguments give the same session.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from compactcli.evaluation import filler
from compactcli.evaluation.episodes import EpisodeWriter, estimate_tokens
from compactcli.evaluation.fact_catalogue import Catalogue
from compactcli.evaluation.session_model import (
    TINY_PNG,
    Call,
    Fact,
    Session,
    Step,
    Todo,
    Turn,
    session_text,
)

MIN_EPISODES = 2  # a superseded value needs a later episode to change it in
PLAN_SHARE = 0.93  # of the target size planned as episodes (the rest: framing, planted text)


class _Ids:
    def __init__(self, prefix: str = "p", start: int = 1) -> None:
        self.prefix = prefix
        self.n = start - 1

    def next(self) -> str:
        self.n += 1
        return f"{self.prefix}{self.n:03d}"


@dataclass(slots=True)
class _Slots:
    """Cumulative estimated position (0-1) of each turn's start."""

    starts: list[float]

    def turn_at(self, depth: float, low: int = 0, high: int | None = None) -> int:
        high = len(self.starts) - 1 if high is None else high
        best = low
        for i in range(low, high + 1):
            if self.starts[i] <= depth:
                best = i
        return best


def _spread(rng: random.Random, count: int, low: float = 0.02, high: float = 0.9) -> list[float]:
    """`count` depths spread evenly over [low, high], jittered."""
    if count <= 0:
        return []
    width = (high - low) / count
    return [low + width * (i + rng.uniform(0.15, 0.85)) for i in range(count)]


def _counts(episodes: int) -> dict[str, int]:
    def clamp(value: int, low: int, high: int) -> int:
        return max(low, min(high, value))

    return {
        "constraint": clamp(2 + episodes // 4, 3, 10),
        "deferred": clamp(1 + episodes // 12, 1, 4),
        "error": clamp(episodes // 2, 2, 14),
        "pasted_error": clamp(episodes // 10, 1, 4),
        "decision": clamp(episodes // 2, 2, 14),
        "identifier": clamp(episodes // 3, 3, 10),
        "setting": clamp(episodes // 8, 1, 4),
        "decoy": clamp(3 + episodes // 20, 4, 8),
    }


def build_session(seed: int, tokens: int) -> Session:
    """A session of about `tokens` tokens with planted facts, checked (`check_planted`).

    Work episodes, then a last, unfinished request; the facts are planted at depths spread over
    the session, each in a controlled carrier (`fact_catalogue` draws them): user constraints,
    pending asks (also tracked in todo-list calls) and settings later superseded, in user text;
    decisions in assistant text; error strings in failing test output, or pasted by the user;
    identifiers in user text, assistant text or a command; modified and read files in tool call
    arguments. A pasted screenshot is added as a distractor, and decoys that never occur.
    """
    rng = random.Random(seed)
    project = filler.make_project(rng)
    writer = EpisodeWriter(rng, project)
    catalogue = Catalogue(rng, project)
    ids = _Ids()

    turns: list[Turn] = []
    titles: list[str] = []
    budget = tokens * PLAN_SHARE
    while len(turns) < MIN_EPISODES or (
        estimate_tokens(turns) + estimate_tokens(turns[-1:]) / 2 < budget
    ):
        turn, title = writer.episode(len(turns))
        turns.append(turn)
        titles.append(title)
    counts = _counts(len(turns))
    facts: list[Fact] = []
    total = max(1, sum(t.chars() for t in turns))
    starts: list[float] = []
    position = 0
    for turn in turns:
        starts.append(position / total)
        position += turn.chars()
    slots = _Slots(starts)

    def plant_user(turn_index: int, sentence: str) -> None:
        turn = turns[turn_index]
        turn.user = f"{turn.user} {sentence}"

    # the branch the session works on, said once at the start
    branch_id = ids.next()
    turns[0].user = f"I'm on branch {project.branch}. {turns[0].user}"
    turns[0].facts.append(branch_id)
    facts.append(Fact(branch_id, "identifier", project.branch, "user_text", mode="exact"))

    for depth in _spread(rng, counts["constraint"]):
        sentence, terms = catalogue.constraint()
        index = slots.turn_at(depth)
        plant_user(index, sentence)
        fact_id = ids.next()
        turns[index].facts.append(fact_id)
        facts.append(Fact(fact_id, "user_constraint", sentence, "user_text", key_terms=terms))

    for depth in _spread(rng, counts["decision"]):
        sentence, terms = catalogue.decision()
        index = slots.turn_at(depth)
        step = next(s for s in turns[index].steps if any(c.kind == "edit" for c in s.calls))
        step.text = f"{step.text} {sentence}".strip()
        fact_id = ids.next()
        step.facts.append(fact_id)
        facts.append(Fact(fact_id, "decision", sentence, "assistant_text", key_terms=terms))

    error_turns: list[int] = []
    for depth in _spread(rng, counts["error"], 0.02, 0.95):
        index = slots.turn_at(depth)
        while index in error_turns and index + 1 < len(turns):
            index += 1
        if index in error_turns:
            continue
        error_turns.append(index)
        line, terms = catalogue.error()
        run = turns[index].steps[0].calls[1]
        writer.fail(run, line)
        fact_id = ids.next()
        run.output_facts.append(fact_id)
        facts.append(Fact(fact_id, "error_string", line, "tool_result", key_terms=terms))

    for depth in _spread(rng, counts["pasted_error"], 0.1, 0.8):
        line, terms = catalogue.error()
        index = slots.turn_at(depth)
        plant_user(index, f"I also see this in the logs when I try it locally:\n\n{line}\n")
        fact_id = ids.next()
        turns[index].facts.append(fact_id)
        facts.append(Fact(fact_id, "error_string", line, "user_text", key_terms=terms))

    for depth in _spread(rng, counts["identifier"], 0.05, 0.9):
        text, value, carrier = catalogue.identifier()
        index = slots.turn_at(depth)
        fact_id = ids.next()
        if carrier == "user_text":
            plant_user(index, text)
            turns[index].facts.append(fact_id)
        elif carrier == "assistant_text":
            step = turns[index].steps[-1]
            step.text = f"{step.text} {text}".strip()
            step.facts.append(fact_id)
        else:
            call = Call("bash", command=text, output=filler.test_log(rng, project, size=20))
            call.input_facts.append(fact_id)
            turns[index].steps[-2].calls.append(call)
        facts.append(Fact(fact_id, "identifier", value, carrier, mode="exact"))

    for depth in _spread(rng, counts["setting"], 0.05, 0.45):
        _, old, new = catalogue.setting()
        first = min(slots.turn_at(depth), len(turns) - 2)
        later = slots.turn_at(min(0.92, depth + rng.uniform(0.2, 0.4)), low=first + 1)
        old_id, new_id = ids.next(), ids.next()
        plant_user(first, f"FYI the staging setup uses {old}; keep that in mind.")
        turns[first].facts.append(old_id)
        plant_user(later, f"Update: ops changed it, it's {new} now.")
        turns[later].facts.append(new_id)
        facts.append(
            Fact(old_id, "superseded", old, "user_text", superseded_by=new_id, mode="normalized")
        )
        facts.append(Fact(new_id, "identifier", new, "user_text", mode="exact"))

    # requests left for later: said by the user, tracked in the todo list until the end
    todos: list[Todo] = []
    deferred_turns = [slots.turn_at(d) for d in _spread(rng, counts["deferred"], 0.1, 0.7)]
    todo_facts: dict[int, list[str]] = {}
    for index in deferred_turns:
        sentence, item, terms = catalogue.deferred_ask()
        fact_id = ids.next()
        plant_user(index, f"Also, once that's done, {sentence}.")
        turns[index].facts.append(fact_id)
        todo_facts.setdefault(index, []).append(fact_id)
        facts.append(Fact(fact_id, "pending_ask", sentence, "user_text", key_terms=terms))
        todos.append(Todo(item, "pending", item))
    _add_todo_calls(turns, titles, todos, deferred_turns, todo_facts)

    # the image a user pasted, as a distractor
    turns[rng.randrange(len(turns))].image = True

    # the last, unfinished request
    last_module = rng.choice(project.modules)
    last_path = project.source_path(last_module, rng.choice(project.parts))
    ask, terms = catalogue.final_ask(last_path)
    final_id = ids.next()
    final = Turn(
        user=ask,
        steps=[
            Step(
                thinking=f"Read {last_path} first.",
                text=f"I'll start with `{last_path}`.",
                calls=[writer.read(last_path)],
            ),
            Step(text=f"{filler.explanation(rng, project, last_path)} I'll make the change next."),
        ],
        facts=[final_id],
    )
    turns.append(final)
    facts.append(Fact(final_id, "pending_ask", ask, "user_text", key_terms=terms))

    _add_path_facts(turns, facts, ids)
    text = session_text(turns)
    for category, fact, _ in catalogue.decoys(counts["decoy"], text):
        facts.append(Fact(ids.next(), category, fact, "none"))
    session = Session(seed, project, turns, facts, TINY_PNG, todos)
    check_planted(session)
    return session


def _add_todo_calls(
    turns: list[Turn],
    titles: list[str],
    pending: list[Todo],
    deferred_turns: list[int],
    todo_facts: dict[int, list[str]],
) -> None:
    """A todo-list call at the start of every episode that adds a deferred item, and at the
    start of the last episode: finished episodes completed, the current one in progress, the
    deferred requests pending."""
    added: list[Todo] = []
    order = sorted(set(deferred_turns))
    marks = [*order, len(turns) - 1]
    for index in sorted(set(marks)):
        for position, turn_index in enumerate(deferred_turns):
            if turn_index <= index and pending[position] not in added:
                added.append(pending[position])
        items = [Todo(titles[i], "completed", titles[i]) for i in range(max(0, index - 2), index)]
        items.append(Todo(titles[index], "in_progress", titles[index]))
        items += [Todo(t.content, "pending", t.active) for t in added]
        call = Call("todo", todos=tuple(items), output="")
        call.input_facts.extend(
            fact for turn_index in order if turn_index <= index for fact in todo_facts[turn_index]
        )
        turns[index].steps.insert(0, Step(calls=[call]))


def _add_path_facts(turns: list[Turn], facts: list[Fact], ids: _Ids) -> None:
    """A `file_modified` fact for every edited or written file, a `file_read` one for every
    file only read, each anchored at its first call."""
    modified: dict[str, Call] = {}
    read: dict[str, Call] = {}
    for turn in turns:
        for step in turn.steps:
            for call in step.calls:
                if call.kind in ("edit", "write") and call.path not in modified:
                    modified[call.path] = call
                elif call.kind == "read" and call.path not in read:
                    read[call.path] = call
    for path, call in modified.items():
        fact_id = ids.next()
        call.input_facts.append(fact_id)
        facts.append(Fact(fact_id, "file_modified", path, "tool_input"))
    for path, call in read.items():
        if path in modified:
            continue
        fact_id = ids.next()
        call.input_facts.append(fact_id)
        facts.append(Fact(fact_id, "file_read", path, "tool_input"))


def _word(value: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w])" + re.escape(value) + r"(?![\w])")


class PlantingError(AssertionError):
    """A generated session whose planted facts are not where they should be."""


def check_planted(session: Session) -> None:
    """Positive facts occur in the session; decoys never do; a superseded value occurs once,
    before its replacement."""
    text = session_text(session.turns)
    for fact in session.facts:
        if fact.category == "decoy":
            if fact.fact in text:
                raise PlantingError(f"decoy {fact.id} occurs in the session: {fact.fact!r}")
        elif fact.fact not in text:
            raise PlantingError(f"fact {fact.id} is not in the session: {fact.fact!r}")
        if fact.superseded_by:
            new = session.fact(fact.superseded_by).fact
            places = [m.start() for m in _word(fact.fact).finditer(text)]
            if len(places) != 1 or places[0] > text.find(new):
                raise PlantingError(f"superseded {fact.id} must occur once, before {new!r}")


def continue_session(
    session: Session, cycle: int, tokens: int, *, supersede: bool = True
) -> tuple[list[Turn], list[Fact]]:
    """New turns for round `cycle` (2, 3, ...) of about `tokens` tokens, and their facts.

    The new turns add a constraint, a decision, an error and edits, and (with `supersede`)
    change one setting that is current so far: the new value gets an `identifier` fact and the
    old one comes back as a `superseded` fact with the same id. New ids are `r<cycle>p001`, ...
    """
    rng = random.Random(session.seed * 1000 + cycle)
    project = session.project
    writer = EpisodeWriter(rng, project)
    catalogue = Catalogue(rng, project)
    catalogue.numbers = {int(n) for n in _numbers(session_text(session.turns))}
    for fact in session.facts:
        if fact.category == "user_constraint":
            catalogue.used.setdefault("constraint", [])
    ids = _Ids(prefix=f"r{cycle}p")
    turns: list[Turn] = []
    while not turns or estimate_tokens(turns) < tokens * 0.95:
        turn, _ = writer.episode(len(turns))
        turns.append(turn)
    facts: list[Fact] = []

    sentence, terms = catalogue.constraint()
    known = {f.fact for f in session.facts}
    while sentence in known:
        sentence, terms = catalogue.constraint()
    fact_id = ids.next()
    turns[0].user = f"{turns[0].user} {sentence}"
    turns[0].facts.append(fact_id)
    facts.append(
        Fact(fact_id, "user_constraint", sentence, "user_text", key_terms=terms, cycle=cycle)
    )

    sentence, terms = catalogue.decision()
    step = next(s for s in turns[-1].steps if any(c.kind == "edit" for c in s.calls))
    step.text = f"{step.text} {sentence}".strip()
    fact_id = ids.next()
    step.facts.append(fact_id)
    facts.append(
        Fact(fact_id, "decision", sentence, "assistant_text", key_terms=terms, cycle=cycle)
    )

    line, terms = catalogue.error()
    run = turns[0].steps[0].calls[1]
    writer.fail(run, line)
    fact_id = ids.next()
    run.output_facts.append(fact_id)
    facts.append(Fact(fact_id, "error_string", line, "tool_result", key_terms=terms, cycle=cycle))

    current = [f for f in session.facts if f.category == "identifier" and "=" in f.fact]
    current += [f for f in session.facts if f.category == "identifier" and ".internal:" in f.fact]
    if current and supersede:
        target = current[-1]
        name = (
            target.fact.rsplit("=", 1)[0] if "=" in target.fact else target.fact.rsplit(":", 1)[0]
        )
        separator = "=" if "=" in target.fact else ":"
        new = f"{name}{separator}{catalogue.number(10000, 19999)}"
        fact_id = ids.next()
        last = turns[-1]
        last.user = f"{last.user} Update: it's {new} from now on."
        last.facts.append(fact_id)
        facts.append(Fact(fact_id, "identifier", new, "user_text", mode="exact", cycle=cycle))
        facts.append(
            Fact(
                target.id,
                "superseded",
                target.fact,
                target.carrier,
                mode="normalized",
                superseded_by=fact_id,
                cycle=target.cycle,
            )
        )

    seen = {f.fact for f in session.facts if f.category in ("file_modified", "file_read")}
    for turn in turns:
        for step in turn.steps:
            for call in step.calls:
                if call.kind in ("edit", "write") and call.path not in seen:
                    seen.add(call.path)
                    fact_id = ids.next()
                    call.input_facts.append(fact_id)
                    facts.append(
                        Fact(fact_id, "file_modified", call.path, "tool_input", cycle=cycle)
                    )
    return turns, facts


def _numbers(text: str) -> list[str]:
    return re.findall(r"\d+", text)


__all__ = [
    "PlantingError",
    "build_session",
    "check_planted",
    "continue_session",
]
