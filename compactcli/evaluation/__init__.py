"""Measuring compaction quality offline: which facts survive, at what compression (EVAL.md).

The parts, each in its own module:

- `probes`: the probe-file schema (what to look for, and how);
- `sources`: where fixtures come from (a folder of probe files, with the transcripts beside them
  or in another folder; transcripts named one by one; the synthetic set shipped in the package);
- `session_model`, `filler`, `episodes`, `fact_catalogue`, `scenario`: the seeded generator of
  realistic coding sessions with planted facts; `render` (with `render_common`, `render_claude`,
  `render_openai`) writes them as Claude Code, Codex, OpenAI chat or Anthropic Messages
  transcripts, and `generator` makes fixtures of them with their probes;
- `matching`, `view`, `scorer`: deterministic matching in the compacted transcript as the next
  model call would see it, in the whole output and in the summary alone;
- `integrity`, `measure`, `metrics`, `commands`: integrity checks, exact token counts, retention
  (per category and per carrier) and compression figures, the share of a summary spent on
  read-only commands;
- `budgets`, `strategies`: the budgets (shares of the input, or `default`: none) and the
  strategies compared (drop oldest turns, prune, head+tail truncation, extractive summary, the
  default `compact`, and `compact` with the LLM summary replayed);
- `parts`: a real session cut into parts, for its drift rounds;
- `replay`: the record-and-replay store and server for the LLM summary;
- `harness`, `gates`, `report`: the loop over fixtures, budgets and rounds, the gates, the
  table and JSON.

`run(options)` runs it all, as `compactcli eval` does, and returns the evaluation and the gate
results. With no fixture named (no folder, file or generated fixture), it evaluates the
synthetic fixtures shipped in the package (`sources.default_folder()`), with their recordings.
Importing this package imports neither litellm nor tiktoken; the LLM strategy imports litellm
when it first summarizes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from compactcli.errors import UsageError
from compactcli.evaluation.budgets import DEFAULT, Budget, parse_budgets
from compactcli.evaluation.gates import GateResult, check_gates, failed
from compactcli.evaluation.generator import SPECS, Fixture, Spec, generate, parse_spec
from compactcli.evaluation.harness import BUDGETS, EvalSettings, Evaluation, evaluate
from compactcli.evaluation.measure import exact_counter
from compactcli.evaluation.probes import ProbeError
from compactcli.evaluation.replay import REPLAY_MODEL, Cassettes, ReplayMiss, ReplayServer
from compactcli.evaluation.sources import (
    FixtureError,
    check_names,
    default_folder,
    load_files,
    load_fixtures,
)
from compactcli.evaluation.view import compactcli_boilerplate
from compactcli.summarizers import Summarizer

__all__ = [
    "BUDGETS",
    "DEFAULT",
    "REPLAY_MODEL",
    "SPECS",
    "Budget",
    "EvalOptions",
    "EvalSettings",
    "Evaluation",
    "FixtureError",
    "GateResult",
    "ProbeError",
    "ReplayMiss",
    "Spec",
    "default_folder",
    "failed",
    "parse_budgets",
    "parse_spec",
    "recordings_for",
    "run",
]


@dataclass(frozen=True, slots=True)
class EvalOptions:
    """What `run` evaluates, and where the LLM answers come from."""

    folders: tuple[str, ...] = ()  # fixture folders (NAME.probes.jsonl, NAME.jsonl beside)
    transcripts: str | None = None  # where a folder's missing NAME.jsonl is looked up
    files: tuple[str, ...] = ()  # transcripts named one by one
    probes: tuple[str, ...] = ()  # their probe files, in order (none: NAME.probes.jsonl beside)
    generate: tuple[Spec, ...] = ()  # fixtures generated at run time
    settings: EvalSettings = field(default_factory=EvalSettings)
    recordings: str | None = None  # the replay store's folder (`recordings_for`)
    upstream: str | None = None  # record: forward requests with no recording here
    llm_model: str = REPLAY_MODEL


def recordings_for(recordings: str | None, folders: tuple[str, ...]) -> str | None:
    """The replay store's folder: the one given, else `recordings/` in the first fixture
    folder; None when there is neither (fixtures generated at run time have no recordings)."""
    if recordings:
        return recordings
    if folders:
        return os.path.join(folders[0], "recordings")
    return None


def fixtures_for(options: EvalOptions) -> list[Fixture]:
    """The fixtures of every folder, then the transcripts named, then the generated ones."""
    fixtures: list[Fixture] = []
    for folder in options.folders:
        fixtures += load_fixtures(folder, options.transcripts)
    fixtures += load_files(options.files, options.probes)
    for spec in options.generate:
        fixtures.append(generate(spec, exact_counter(spec.format)))
    check_names(fixtures)
    return fixtures


@dataclass(frozen=True, slots=True)
class _Replay:
    summarizer: Summarizer | None = None
    misses: Callable[[], list[str]] | None = None
    where: Callable[[str], None] | None = None


@contextlib.contextmanager
def _llm(options: EvalOptions) -> Iterator[_Replay]:
    """The LLM summarizer of the `llm-replay` strategy, talking to a running replay server."""
    if "llm-replay" not in options.settings.strategies:
        yield _Replay()
        return
    from compactcli.summarizers.llm import CircuitBreaker, LLMSummarizer

    folder = recordings_for(options.recordings, options.folders)
    if options.upstream and not folder:
        raise UsageError("recording needs a folder to write to: --recordings DIR")
    cassettes = Cassettes(folder or "")  # no folder: nothing recorded, every request misses
    server = ReplayServer(cassettes, options.upstream).start()
    try:
        summarizer = LLMSummarizer(
            options.llm_model,
            api_base=server.url,
            retries=0,
            timeout=600.0,
            breaker=CircuitBreaker(),
        )

        def where(name: str) -> None:
            cassettes.file = name

        yield _Replay(summarizer, server.take_misses, where)
    finally:
        server.stop()


def run(
    options: EvalOptions, progress: Callable[[str], None] | None = None
) -> tuple[Evaluation, list[GateResult]]:
    """Evaluate every fixture of `options`; the evaluation and the gate results.

    Raises `ReplayMiss` when the LLM strategy needs a recording the store lacks.
    """
    if not (options.folders or options.files or options.generate):
        options = dataclasses.replace(options, folders=(default_folder(),))
    fixtures = fixtures_for(options)
    with _llm(options) as replay:
        evaluation = evaluate(
            fixtures,
            options.settings,
            boilerplate=compactcli_boilerplate(),
            llm=replay.summarizer,
            check_replay=replay.misses,
            on_fixture=replay.where,
            progress=progress,
        )
    return evaluation, check_gates(evaluation.runs, evaluation.parts)
