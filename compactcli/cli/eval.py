"""`compactcli eval`: measure what survives compaction, on fixtures with probe files."""

from __future__ import annotations

import os
from typing import Annotated

import orjson
import typer

from compactcli.cli.options import Json
from compactcli.cli.runner import guarded
from compactcli.errors import BackendError, ExitCode, InputError, OutputError, UsageError


def _input_error(error: Exception) -> InputError:
    """An evaluation error (`PATH: what is wrong`) as the command's input error (exit 3)."""
    where, _, message = str(error).partition(": ")
    return InputError(where, None, message)


@guarded
def eval_command(
    paths: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="TRANSCRIPT",
            help="Your own transcripts to evaluate, each with its probe file: "
            "NAME.probes.jsonl beside NAME.jsonl, or --probes.",
            show_default=False,
        ),
    ] = None,
    *,
    fixtures: Annotated[
        list[str] | None,
        typer.Option(
            "--fixtures",
            help="Folder of NAME.probes.jsonl probe files with their NAME.jsonl transcripts "
            "(repeatable; default: the synthetic fixtures that ship with compactcli).",
            show_default=False,
            metavar="DIR",
        ),
    ] = None,
    transcripts: Annotated[
        str | None,
        typer.Option(
            "--transcripts",
            help="Where a --fixtures probe file's transcript is looked up (DIR/NAME.jsonl) "
            "when it is not beside the probe file.",
            show_default=False,
            metavar="DIR",
        ),
    ] = None,
    probes: Annotated[
        list[str] | None,
        typer.Option(
            "--probes",
            help="The probe file of a TRANSCRIPT (repeatable: one per TRANSCRIPT, in order).",
            show_default=False,
            metavar="FILE",
        ),
    ] = None,
    generate: Annotated[
        list[str] | None,
        typer.Option(
            "--generate",
            help="Also evaluate a fixture generated now: FORMAT:SIZE:SEED, e.g. "
            "claude-code:500k:7 (repeatable).",
            show_default=False,
            metavar="FORMAT:SIZE:SEED",
        ),
    ] = None,
    strategies: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated strategies (default: all): drop-oldest, prune, head-tail, "
            "extractive, compact, llm-replay.",
            show_default=False,
            metavar="NAMES",
        ),
    ] = None,
    budgets: Annotated[
        str,
        typer.Option(
            help="Budgets as shares of each input's tokens, or the word default (compact "
            "--force with its built-in settings: no token budget).",
            metavar="SHARES",
        ),
    ] = "0.5,0.25,0.1,0.05,0.02",
    rounds: Annotated[
        int,
        typer.Option(
            min=1,
            help="Rounds of compaction at 10% (and default, when swept): new turns appended "
            "to a generated session, a real session cut into N parts appended one by one.",
            metavar="N",
        ),
    ] = 3,
    json: Json = False,
    records: Annotated[
        str | None,
        typer.Option(
            help="Write one JSON line per probe per run to this file.",
            show_default=False,
            metavar="FILE",
        ),
    ] = None,
    recordings: Annotated[
        str | None,
        typer.Option(
            help="Folder of recorded LLM answers for llm-replay (default: recordings/ in the "
            "first fixture folder). Unless named in --strategies, llm-replay runs only when "
            "that folder exists, no fixture is generated at run time and litellm is installed "
            "(compactcli[llm]).",
            show_default=False,
            metavar="DIR",
        ),
    ] = None,
    record: Annotated[
        bool,
        typer.Option(
            "--record",
            help="Record LLM answers that are missing, from --upstream (reaches that server).",
        ),
    ] = False,
    upstream: Annotated[
        str | None,
        typer.Option(
            help="OpenAI-compatible server (its /v1 URL) that answers requests being recorded.",
            show_default=False,
            metavar="URL",
        ),
    ] = None,
    llm_model: Annotated[
        str | None,
        typer.Option(
            help="Model the LLM requests name (default: the one the recordings were made with).",
            show_default=False,
            metavar="PROVIDER/MODEL",
        ),
    ] = None,
    baseline: Annotated[
        str | None,
        typer.Option(
            help="Compare the figures with this baseline file; any difference fails.",
            show_default=False,
            metavar="FILE",
        ),
    ] = None,
    write_baseline: Annotated[
        str | None,
        typer.Option(
            help="Write the figures to this baseline file.", show_default=False, metavar="FILE"
        ),
    ] = None,
) -> None:
    """Score compaction strategies by the facts that survive them, offline.

    Each strategy compacts every fixture to each budget (a share of the input's exact o200k
    tokens, or default); the probes say which facts must survive (and which must not appear).
    Prints retention and compression side by side (the whole context and the summary alone,
    per category and per carrier), the drift, the gates and the probes lost; exits 1 when a
    gate fails (the default compact at 10%: user constraints and pending asks 100%, modified
    files 95%, error strings and decisions 80%, weighted 90%, no negative-probe violation,
    integrity 100%), 4 when an LLM answer has no recording.

    Examples:

    \b
      compactcli eval
      compactcli eval --strategies compact --budgets 0.1
    """
    from compactcli import evaluation
    from compactcli.evaluation.baseline import compare, dumps, figures
    from compactcli.evaluation.report import render, to_json
    from compactcli.evaluation.strategies import STRATEGIES
    from compactcli.summarizers import llm_installed, require_llm

    if record and not upstream:
        raise UsageError("--record needs --upstream URL (the server that answers)")
    if transcripts and not fixtures:
        raise UsageError("--transcripts DIR goes with --fixtures DIR (the probe files)")
    if probes and not paths:
        raise UsageError("--probes FILE goes with the TRANSCRIPT files it describes")
    folders = tuple(fixtures) if fixtures else ()
    files = tuple(paths or ())
    _refuse_overwrites(
        [*files, *(probes or ()), *([baseline] if baseline else [])],
        [*folders, *([transcripts] if transcripts else [])],
        records,
        write_baseline,
    )
    specs = tuple(evaluation.parse_spec(g) for g in generate or ())
    if not folders and not specs and not files:
        try:
            folders = (evaluation.default_folder(),)
        except evaluation.FixtureError as error:
            raise _input_error(error) from None
    store = evaluation.recordings_for(recordings, folders)
    if strategies:
        chosen = tuple(s.strip() for s in strategies.split(",") if s.strip())
    else:  # the LLM strategy replays recordings: by default only where there are some
        recorded = not specs and store is not None and os.path.isdir(store)
        replayable = record or (recorded and llm_installed())
        chosen = tuple(s for s in STRATEGIES if s != "llm-replay" or replayable)
    unknown = [s for s in chosen if s not in STRATEGIES]
    if unknown:
        raise UsageError(f"unknown strategy {unknown[0]!r}; known: {', '.join(STRATEGIES)}")
    if "llm-replay" in chosen:
        require_llm("the llm-replay strategy")
    options = evaluation.EvalOptions(
        folders=folders,
        transcripts=transcripts,
        files=files,
        probes=tuple(probes or ()),
        generate=specs,
        settings=evaluation.EvalSettings(
            budgets=evaluation.parse_budgets(budgets),
            strategies=chosen,
            rounds=rounds,
            records=records is not None,
        ),
        recordings=store,
        upstream=upstream if record else None,
        llm_model=llm_model or evaluation.REPLAY_MODEL,
    )
    try:
        result, gates = evaluation.run(options)
    except evaluation.ReplayMiss as miss:
        raise BackendError(str(miss)) from None
    except (evaluation.FixtureError, evaluation.ProbeError) as error:
        raise _input_error(error) from None
    if records is not None:
        _write(records, [orjson.dumps(line) + b"\n" for line in result.records])
    if write_baseline:
        _write(write_baseline, [dumps(figures(result, gates))])
    if json:
        typer.echo(orjson.dumps(to_json(result, gates)).decode())
    else:
        typer.echo(render(result, gates), nl=False)
    exit_code = ExitCode.CHECK_FAILED if evaluation.failed(gates) else ExitCode.OK
    if baseline:
        with open(baseline, "rb") as handle:
            differences = compare(orjson.loads(handle.read()), figures(result, gates))
        for difference in differences[:20]:
            typer.echo(f"baseline: {difference}", err=True)
        if differences:
            typer.echo(
                f"baseline: {len(differences)} figure(s) differ from {baseline}; if the change "
                f"is intended, review it and rewrite the file with --write-baseline {baseline}",
                err=True,
            )
            exit_code = ExitCode.CHECK_FAILED
    if exit_code:
        raise typer.Exit(int(exit_code))


def _refuse_overwrites(
    files: list[str], folders: list[str], records: str | None, baseline: str | None
) -> None:
    """The check every writing command makes (`compactcli.overwrite`): neither output is a
    file this run reads (a transcript, a probe file, the baseline, a file of a fixture folder)
    or the other output."""
    from compactcli import overwrite

    read = list(files)
    for folder in folders:
        if os.path.isdir(folder):
            read += [entry.path for entry in os.scandir(folder) if entry.is_file()]
    overwrite.check(read, [("--records", records), ("--write-baseline", baseline)])


def _write(path: str, chunks: list[bytes]) -> None:
    """Write an output file atomically (`compactcli.atomic`)."""
    from compactcli import atomic

    try:
        atomic.write(path, chunks)
    except OSError as error:
        raise OutputError.cannot_write(path, error) from None
