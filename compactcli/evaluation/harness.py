"""The evaluation loop: fixtures x strategies x budgets, then rounds of compaction (drift).

`evaluate(fixtures, settings, boilerplate=...)` scores, for each fixture, the input itself, every
strategy at every budget of the sweep, and the drift over later rounds of compaction. Every
output is measured, checked for integrity and scored on the fixture's probes, and the result is
an `Evaluation` with one `RunMetrics` per run. An LLM strategy's run that needed a recording the
store lacks, or whose summary did not come from the LLM, raises `ReplayMiss`. Fixtures come from
`compactcli.evaluation.sources` (`load_fixtures` is re-exported here).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from compactcli.evaluation import integrity, parts
from compactcli.evaluation.budgets import DEFAULT, Budget, budget_tokens, is_default, label
from compactcli.evaluation.commands import read_only_cost
from compactcli.evaluation.generator import Fixture, probes_for, transcript_from_records
from compactcli.evaluation.measure import count, exact_counter, heuristic_counter
from compactcli.evaluation.metrics import RunMetrics, run_metrics
from compactcli.evaluation.probes import Probe, check_probes
from compactcli.evaluation.render import render_more
from compactcli.evaluation.replay import ReplayMiss
from compactcli.evaluation.scenario import continue_session
from compactcli.evaluation.scorer import ProbeScore, ProbeScoreDict, found_at_origin, score
from compactcli.evaluation.session_model import Fact, Session
from compactcli.evaluation.sources import FixtureError, load_fixtures
from compactcli.evaluation.strategies import STRATEGIES, Backends
from compactcli.evaluation.view import Boilerplate, build_view, cwd_of
from compactcli.formats import get_dialect
from compactcli.stages.compact import settle
from compactcli.summarizers import Summarizer
from compactcli.transcript import Record, Transcript

BUDGETS: tuple[Budget, ...] = (0.5, 0.25, 0.1, 0.05, 0.02)

__all__ = [
    "BUDGETS",
    "EvalSettings",
    "Evaluation",
    "FixtureError",
    "drift_budgets",
    "evaluate",
    "load_fixtures",
]


class BadProbe(TypedDict):
    """A probe that does not hold on its own input (`Evaluation.bad_probes`, `eval --json`): its
    fact is not found in the input (or, for a negative probe, is), or not in the record at the
    line its origin names (`problem` says which)."""

    fixture: str
    id: str
    fact: str
    problem: str


class ProbeRecord(ProbeScoreDict):
    """One probe's score in one run (`Evaluation.records`, a line of `eval --records FILE`):
    the fixture, the strategy, the budget and the round."""

    fixture: str
    strategy: str
    budget: Budget
    cycle: int


class PartsProbeRecord(ProbeRecord):
    """A `ProbeRecord` of a run that compacted a real session part by part."""

    parts: bool


@dataclass(frozen=True, slots=True)
class EvalSettings:
    budgets: tuple[Budget, ...] = BUDGETS
    strategies: tuple[str, ...] = tuple(STRATEGIES)
    rounds: int = 3
    drift_budget: float = 0.1
    new_turns: float = 0.3  # share of the input's tokens added before each later round
    records: bool = False  # keep one record per probe per run


@dataclass(slots=True)
class Evaluation:
    settings: EvalSettings
    fixtures: list[str] = field(default_factory=list)
    runs: list[RunMetrics] = field(default_factory=list)
    inputs: list[RunMetrics] = field(default_factory=list)
    bad_probes: list[BadProbe] = field(default_factory=list)
    records: list[ProbeRecord | PartsProbeRecord] = field(default_factory=list)
    parts: list[RunMetrics] = field(default_factory=list)  # the drift rounds of real sessions
    notes: list[str] = field(default_factory=list)  # rounds that could not run, and why


def drift_budgets(settings: EvalSettings) -> tuple[Budget, ...]:
    """The budgets the drift rounds run at: the drift budget, and `default` when swept."""
    return (settings.drift_budget, *((DEFAULT,) if DEFAULT in settings.budgets else ()))


def evaluate(
    fixtures: Sequence[Fixture],
    settings: EvalSettings,
    *,
    boilerplate: Boilerplate,
    llm: Summarizer | None = None,
    check_replay: Callable[[], list[str]] | None = None,
    on_fixture: Callable[[str], None] | None = None,
    progress: Callable[[str], None] | None = None,
) -> Evaluation:
    """Run the evaluation: for each fixture,

    1. the input itself, scored (the anchor of each curve; a probe not found in its own input,
       or not in the record its origin line names, is a bad probe and is listed in
       `Evaluation.bad_probes`);
    2. every strategy at every budget of the sweep (a share of the input's exact o200k tokens,
       or `default`: no token budget, for the strategies that have a default run;
       `compactcli.evaluation.budgets`);
    3. the drift, at `settings.drift_budget` (and at `default` when the sweep has it), over
       `settings.rounds` rounds: a generated fixture continues its session (runs 2..K of
       `Evaluation.runs`, run 1 being the sweep's), a real session is cut into parts
       (`Evaluation.parts`).

    Every output is measured (`measure.count`), checked (`integrity.check`) and scored
    (`scorer.score`), and the share of its summary spent on read-only commands that succeeded
    is counted (`compactcli.evaluation.commands`); with `settings.records`, one record per
    probe per run is kept (those of the parts rounds carry `"parts": true`).

    `llm` is the LLM summarizer of the `llm-replay` strategy (pointed at a replay server);
    `check_replay()` returns the requests with no recording since it was last called;
    `on_fixture(name)` is called before each fixture (where new recordings go).
    """
    evaluation = Evaluation(settings, [f.name for f in fixtures])
    for fixture in fixtures:
        if on_fixture:
            on_fixture(fixture.name)
        _Fixture(fixture, settings, boilerplate, llm, check_replay, progress, evaluation).run()
    return evaluation


class _Fixture:
    def __init__(
        self,
        fixture: Fixture,
        settings: EvalSettings,
        boilerplate: Boilerplate,
        llm: Summarizer | None,
        check_replay: Callable[[], list[str]] | None,
        progress: Callable[[str], None] | None,
        evaluation: Evaluation,
    ) -> None:
        self.fixture = fixture
        self.settings = settings
        self.boilerplate = boilerplate
        self.llm = llm
        self.check_replay = check_replay
        self.progress = progress
        self.evaluation = evaluation
        self.format = fixture.transcript.format
        self.exact = exact_counter(self.format)
        self.heuristic = heuristic_counter(self.format)
        self.cwd = cwd_of(fixture.transcript)
        self._cuts: parts.Parts | str | None = None

    def run(self) -> None:
        fixture, settings = self.fixture, self.settings
        check_probes(fixture.probes, fixture.name)
        source = fixture.transcript
        tokens_in = count(source, self.exact)
        heuristic_in = count(source, self.heuristic)
        scores = self._score(source, fixture.probes)
        lines = {record.lineno: record for record in source.records}
        for s in scores:
            if (not s.probe.negative and not s.passed) or s.violated:
                problem = "found in its own input" if s.violated else "not in its own input"
                self._bad(s.probe, problem)
            elif not s.probe.negative and s.probe.origin.line:
                record = lines.get(s.probe.origin.line)
                if record is None or not found_at_origin(s.probe, record.raw, self.cwd):
                    self._bad(s.probe, f"not at its origin, line {s.probe.origin.line}")
        self.evaluation.inputs.append(
            self._metrics(
                "input", 1.0, 0, source, source, (tokens_in, heuristic_in), tokens_in, scores, []
            )
        )
        drift = drift_budgets(settings) if settings.rounds > 1 else ()
        for name in settings.strategies:
            strategy = STRATEGIES[name]
            outputs: dict[Budget, Transcript] = {}
            budgets = list(settings.budgets)
            if settings.rounds > 1 and settings.drift_budget not in budgets:
                budgets.append(settings.drift_budget)
            for budget in budgets:
                if is_default(budget) and strategy.run_default is None:
                    continue  # a strategy defined by its budget has no default run
                output, metrics = self._run(
                    name,
                    budget,
                    1,
                    source,
                    fixture.probes,
                    (tokens_in, heuristic_in),
                    budget_tokens(budget, tokens_in),
                    frozenset(p.id for p in fixture.probes if not p.negative),
                )
                outputs[budget] = output
                self.evaluation.runs.append(metrics)
            for budget in drift:
                if budget not in outputs:
                    continue
                if fixture.session is not None:  # generated: its session goes on
                    self._rounds(name, outputs[budget], budget, tokens_in)
                else:
                    self._parts(name, budget)

    def _bad(self, probe: Probe, problem: str) -> None:
        self.evaluation.bad_probes.append(
            {"fixture": self.fixture.name, "id": probe.id, "fact": probe.fact, "problem": problem}
        )

    def _rounds(self, name: str, first: Transcript, budget: Budget, tokens_in: int) -> None:
        """Rounds 2..K of a generated fixture: its session continued.

        New turns of about `settings.new_turns` of the input's size are appended to the previous
        round's output (adding facts, and superseding one setting), and the strategy compacts
        again to the same token budget."""
        fixture = self.fixture
        session = fixture.session
        assert session is not None
        probes = list(fixture.probes)
        original = {p.id for p in probes if not p.negative}
        previous = first
        facts = list(session.facts)
        turns = list(session.turns)
        for cycle in range(2, self.settings.rounds + 1):
            state = Session(session.seed, session.project, turns, facts, session.image_png)
            new_turns, new_facts = continue_session(
                state, cycle, int(tokens_in * self.settings.new_turns), supersede=True
            )
            rendered = render_more(new_turns, previous, state, cycle)
            appended = _append(previous, rendered.records)
            offset = len(previous.records)
            anchors = {k: v + offset for k, v in rendered.anchors.items()}
            replaced = {f.id: f for f in new_facts if any(p.id == f.id for p in probes)}
            added = [f for f in new_facts if f.id not in replaced]
            located = probes_for(
                added, anchors, appended, self.exact, self.cwd or state.project.cwd
            )
            probes = [
                _superseded(p, replaced[p.id]) if p.id in replaced else p for p in probes
            ] + located
            original -= set(replaced)
            facts = [f for f in facts if f.id not in replaced] + new_facts
            turns = turns + new_turns
            check_probes(probes, f"{fixture.name} round {cycle}")
            round_in = count(appended, self.exact)
            round_heuristic = count(appended, self.heuristic)
            output, metrics = self._run(
                name,
                budget,
                cycle,
                appended,
                probes,
                (round_in, round_heuristic),
                budget_tokens(budget, tokens_in),
                frozenset(original),
            )
            self.evaluation.runs.append(metrics)
            previous = output

    def _plan(self) -> parts.Parts | str:
        if self._cuts is None:
            self._cuts = parts.plan_parts(self.fixture.transcript, self.settings.rounds)
            if isinstance(self._cuts, str):
                self.evaluation.notes.append(
                    f"{self.fixture.name}: no drift over parts: {self._cuts}"
                )
        return self._cuts

    def _parts(self, name: str, budget: Budget) -> None:
        """The drift rounds of a real session, part by part (`compactcli.evaluation.parts`).

        Round 1 compacts the first part; each later round appends the next part's records byte
        for byte to the previous output and compacts again, to the budget of the raw session
        seen so far. Round k is scored on the probes whose `origin.line` lies in the records
        seen so far, and every round also on the probes of the first part, the set drift is
        measured on. A grown transcript that is not fit to compact (`_unfit`: an error the raw
        session does not have, or a broken context) ends the fixture's rounds with a note in
        `Evaluation.notes`, as does a session with no valid cut."""
        plan = self._plan()
        if isinstance(plan, str):
            return
        fixture = self.fixture
        source = fixture.transcript
        ends = (*plan.starts, len(source.records))
        lines: tuple[int | None, ...] = (*plan.lines, None)
        first = frozenset(p.id for p in parts.probes_seen(fixture.probes, lines[0]))
        previous: Transcript | None = None
        for cycle, (end, line) in enumerate(zip(ends, lines, strict=True), 1):
            raw = parts.prefix(source, end)
            grown = raw
            if previous is not None:
                grown, _ = parts.extend(previous, source, ends[cycle - 2], end)
                problem = _unfit(previous, grown, raw, ends[cycle - 2])
                if problem:
                    self.evaluation.notes.append(
                        f"{fixture.name}: {name} at {label(budget)}, round {cycle}: the previous "
                        f"output with part {cycle}'s records appended {problem}; this and later "
                        "rounds skipped"
                    )
                    return
            probes = parts.probes_seen(fixture.probes, line)
            check_probes(probes, f"{fixture.name} round {cycle}")
            output, metrics = self._run(
                name,
                budget,
                cycle,
                grown,
                probes,
                (count(grown, self.exact), count(grown, self.heuristic)),
                budget_tokens(budget, count(raw, self.exact)),
                first,
                in_parts=True,
            )
            self.evaluation.parts.append(metrics)
            previous = output

    def _run(
        self,
        name: str,
        budget: Budget,
        cycle: int,
        source: Transcript,
        probes: Sequence[Probe],
        tokens: tuple[int, int],
        tokens_budget: int | None,
        original: frozenset[str],
        *,
        in_parts: bool = False,
    ) -> tuple[Transcript, RunMetrics]:
        strategy = STRATEGIES[name]
        if name == "llm-replay" and self.llm is None:
            raise ReplayMiss("the llm-replay strategy needs an LLM summarizer (a replay server)")
        backends = Backends(self.exact, self.llm)
        if self.progress:
            where = "part" if in_parts else "round"
            self.progress(f"{self.fixture.name}: {name} at {label(budget)}, {where} {cycle}")
        started = time.perf_counter()
        if tokens_budget is None:
            assert strategy.run_default is not None
            output = strategy.run_default(source, backends)
        else:
            output = strategy.run(source, tokens_budget, backends)
        seconds = time.perf_counter() - started
        if name == "llm-replay":
            self._check_llm(output, budget, cycle)
        output = settle(output)
        scores = self._score(output, probes)
        metrics = self._metrics(
            name,
            budget,
            cycle,
            source,
            output,
            tokens,
            tokens_budget,
            scores,
            integrity.check(source, output),
            original=original,
            seconds=seconds,
            summarizes=strategy.summarizes,
        )
        if self.settings.records:
            for s in scores:
                record: ProbeRecord = {
                    "fixture": self.fixture.name,
                    "strategy": name,
                    "budget": budget,
                    "cycle": cycle,
                    **s.to_dict(),
                }
                if in_parts:
                    self.evaluation.records.append({**record, "parts": True})
                else:
                    self.evaluation.records.append(record)
        return output, metrics

    def _check_llm(self, output: Transcript, budget: Budget, cycle: int) -> None:
        misses = self.check_replay() if self.check_replay else []
        where = f"{self.fixture.name} at {label(budget)}, round {cycle}"
        if misses:
            raise ReplayMiss(
                f"no recording for {len(misses)} LLM request(s) of {where} "
                f"(first key {misses[0]}); record them with `compactcli eval --record "
                "--upstream URL` and review the new recordings"
            )
        for stats in output.stats:
            if stats.stage != "summarize":
                continue
            details = stats.details.get("summarize", {})
            if details.get("fallback"):
                raise ReplayMiss(f"the LLM summary of {where} was not used: {details['fallback']}")

    def _score(self, transcript: Transcript, probes: Sequence[Probe]) -> list[ProbeScore]:
        view = build_view(transcript, self.boilerplate)
        return score(probes, view, self.cwd)

    def _summary_costs(self, output: Transcript) -> tuple[int, int]:
        """(read-only command tokens, tokens) of the summary messages of `output`'s context."""
        context = get_dialect(output.format).context(output)
        text = "\n".join(m.text for m in context if m.summary)
        return read_only_cost(text, self.exact.text_tokens)

    def _metrics(
        self,
        name: str,
        budget: Budget,
        cycle: int,
        source: Transcript,
        output: Transcript,
        tokens: tuple[int, int],
        tokens_budget: int | None,
        scores: Sequence[ProbeScore],
        failures: Sequence[str],
        *,
        original: frozenset[str] = frozenset(),
        seconds: float = 0.0,
        summarizes: bool = False,
    ) -> RunMetrics:
        if output is source:
            out = tokens
        else:
            out = (count(output, self.exact), count(output, self.heuristic))
        return run_metrics(
            fixture=self.fixture.name,
            format=self.format,
            strategy=name,
            budget=budget,
            cycle=cycle,
            tokens=(tokens[0], out[0], tokens[1], out[1]),
            budget_tokens=tokens_budget,
            scores=scores,
            integrity=failures,
            summarizes=summarizes,
            original=original,
            seconds=seconds,
            summary_costs=self._summary_costs(output) if summarizes else (0, 0),
        )


def _unfit(previous: Transcript, grown: Transcript, raw: Transcript, start: int) -> str | None:
    """Why `grown` (`previous` with the records of `raw` from `start` on appended) cannot be
    compacted next, or None."""
    broken = parts.new_errors(grown, raw)
    if broken:
        error = broken[0]
        return f"does not validate (line {error.line}: {error.code}: {error.message})"
    return parts.context_problem(previous, grown, raw, start)


def _superseded(probe: Probe, fact: Fact) -> Probe:
    """`probe` turned into a `superseded` probe: its value was replaced by `fact.superseded_by`."""
    from compactcli.evaluation.probes import make_probe

    return make_probe(
        probe.id,
        "superseded",
        probe.fact,
        origin=probe.origin,
        superseded_by=fact.superseded_by,
    )


def _append(transcript: Transcript, raws: Sequence[dict[str, Any]]) -> Transcript:
    """`transcript` with records for `raws` appended, as if written and read back."""
    rendered = transcript_from_records(raws, transcript.format, transcript.source)
    start = len(transcript.records)
    added = tuple(
        Record(raw=r.raw, line=r.line, lineno=start + i + 1) for i, r in enumerate(rendered.records)
    )
    return settle(transcript.evolve(records=(*transcript.records, *added)))
