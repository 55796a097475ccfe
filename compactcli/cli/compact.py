"""`compactcli compact`: prune, summarize when still over the threshold, check; files in batch.

The command resolves the settings (options, then `COMPACTCLI_*` variables, then the policy file,
`compactcli.policy`), chooses where each result goes, runs `compactcli.compact_file.compact_file` on
every file (`compactcli.batch.run_batch`: in parallel with `--jobs`, failures kept to their
file) and reports: a progress bar on a terminal, one warning or error line per problem on
standard error, and a results table (or `--json` lines). Records only ever go to standard
output when a single transcript is written there; the report then goes to standard error.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NotRequired, TypedDict

import orjson
import typer

from compactcli.cli.admission import admission_lines
from compactcli.cli.options import (
    Address,
    ApiBase,
    Archive,
    As,
    BadLinePolicy,
    BoundaryFile,
    ContextWindow,
    CutTurn,
    Dedupe,
    DryRun,
    Engine,
    EngineName,
    FailOnThreshold,
    Focus,
    Format,
    Images,
    InPlace,
    Jobs,
    Json,
    KeepRecent,
    KeepRecentTokens,
    LlmModel,
    MaxTokens,
    MinChars,
    NoRedact,
    OnBadLine,
    OutDir,
    OutputFile,
    Paths,
    ProtectFirst,
    Quiet,
    Repair,
    ReportAs,
    StatsFile,
    SummarizerName,
    SummaryTokens,
    Threshold,
    Timeout,
    TokenMethod,
    Tools,
    Verbose,
    given_settings,
    report_kind,
)
from compactcli.cli.panels import LIMITS, RUNNING, SUMMARY, WHERE
from compactcli.cli.runner import guarded, stdin_hint
from compactcli.cli.stage_output import (
    append_json_lines,
    print_diff,
    refuse_folder,
    refuse_terminal,
    write_json,
)
from compactcli.errors import OutputError, UsageError
from compactcli.inputs import STDIN, expand_inputs

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

    from compactcli import plain_table
    from compactcli.batch import FileResult
    from compactcli.cache import CachedSummarizer
    from compactcli.compact_file import Destination, FilePlan
    from compactcli.diff import DiffDict
    from compactcli.errors import InvalidFinding
    from compactcli.formats.repairing import RepairDict
    from compactcli.redact_transcript import RedactionDict
    from compactcli.summarizers import Summarizer


@guarded
def compact_command(
    ctx: typer.Context,
    paths: Paths = None,
    *,
    output: OutputFile = None,
    out_dir: OutDir = None,
    in_place: InPlace = False,
    dry_run: DryRun = False,
    show_summary: Annotated[
        bool,
        typer.Option(
            "--show-summary",
            help="Print the summary each file's run writes (or, with --dry-run, would write), "
            "on standard output after a '== FILE' line (on standard error when the records go to "
            'standard output; under "summary" with --json).',
            rich_help_panel=WHERE,
        ),
    ] = False,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Summarize even when the context is under the threshold.",
            rich_help_panel=LIMITS,
        ),
    ] = False,
    threshold: Threshold = None,
    max_tokens: MaxTokens = None,
    context_window: ContextWindow = None,
    fail_on_threshold: FailOnThreshold = False,
    method: TokenMethod = "heuristic",
    summarizer: SummarizerName = "extractive",
    model: LlmModel = None,
    api_base: ApiBase = None,
    timeout: Timeout = None,
    summary_tokens: SummaryTokens = None,
    keep_recent_tokens: KeepRecentTokens = None,
    protect_first: ProtectFirst = 0,
    cut_turn: CutTurn = False,
    focus: Focus = None,
    no_redact: NoRedact = False,
    redact_records: Annotated[
        bool,
        typer.Option(
            "--redact",
            help="Redact secrets in every record kept too, as compactcli redact does (the "
            "archive stays verbatim).",
            rich_help_panel=SUMMARY,
        ),
    ] = False,
    keep_recent: KeepRecent = None,
    min_chars: MinChars = 200,
    tools: Tools = None,
    dedupe: Dedupe = True,
    images: Images = True,
    archive: Archive = None,
    format: Format = None,
    on_bad_line: OnBadLine = BadLinePolicy.error,
    jobs: Jobs = 0,
    engine: Engine = EngineName.local,
    address: Address = None,
    llm_jobs: Annotated[
        int,
        typer.Option(
            min=1,
            help="LLM requests in flight at once, across all files.",
            metavar="N",
            rich_help_panel=RUNNING,
        ),
    ] = 4,
    fail_fast: Annotated[
        bool,
        typer.Option(
            "--fail-fast", help="Start no new file after one fails.", rich_help_panel=RUNNING
        ),
    ] = False,
    cache: Annotated[
        bool,
        typer.Option(
            help="Reuse LLM summaries from the cache (COMPACTCLI_CACHE_DIR, else "
            "$XDG_CACHE_HOME/compactcli or ~/.cache/compactcli).",
            envvar="COMPACTCLI_CACHE",
            rich_help_panel=RUNNING,
        ),
    ] = True,
    json: Json = False,
    as_: As = ReportAs.table,
    stats: StatsFile = None,
    boundary: BoundaryFile = None,
    repair: Repair = False,
    verbose: Verbose = False,
    quiet: Quiet = False,
) -> None:
    """Compact transcripts: prune old tool output, then summarize the old turns while the context
    is over its threshold (or always with --force), then check the result.

    The result must validate and be smaller, or the input is kept (and the report says why);
    when it is still over the threshold or --max-tokens the report says by how much (exit 1 over
    --max-tokens, or over the threshold with --fail-on-threshold). Settings not given here come
    from COMPACTCLI_* variables, then compactcli.toml or [tool.compactcli] in pyproject.toml.

    Examples:

    \b
      compactcli compact session.jsonl -o compacted.jsonl
      compactcli compact ~/.claude/projects --out-dir compacted --max-tokens 100000
      compactcli compact session.jsonl --in-place --focus "the failing migration"
      compactcli compact sessions/ --out-dir compacted --engine ray --address auto
    """
    # the pipeline's modules (and rich) load here, so that other commands start without them
    from compactcli import console
    from compactcli.batch import run_batch
    from compactcli.compact_file import DEFAULTS, FilePlan, compact_file, file_settings
    from compactcli.policy import Policies
    from compactcli.summarizers import require_llm

    if summarizer not in ("extractive", "llm"):
        raise UsageError(f"--summarizer must be extractive or llm, not {summarizer!r}")
    if summarizer == "llm":
        require_llm()
    on_ray = engine is EngineName.ray
    if on_ray:
        from compactcli.ray_engine import require_ray

        require_ray()
    files = expand_inputs(paths or [])
    if on_ray and STDIN in files:
        raise UsageError("--engine ray reads files: standard input cannot be handed out")
    destinations = _destinations(paths or [], files, output, out_dir, in_place, dry_run)
    if boundary is not None and len(files) > 1:
        raise UsageError("--boundary takes one input; use --stats for many")
    stdin_hint(files)

    set_here = given_settings(ctx, [*DEFAULTS, "no_redact"])
    given = {name: ctx.params[name] for name in DEFAULTS if name in set_here}
    if "no_redact" in set_here:
        given["redact"] = not no_redact
    if no_redact and redact_records:
        raise UsageError("--redact and --no-redact cannot be used together")
    plan = FilePlan(
        given=given,
        policies=Policies(),
        destinations=destinations,
        format=format,
        on_bad_line=on_bad_line.value,
        dry_run=dry_run,
        stats=stats is not None and not dry_run,
        boundary=boundary is not None and not dry_run,
        repair=repair,
        summary=show_summary,
    )
    settings = {path: file_settings(plan, path) for path in files}
    online = any(s["summarizer"] == "llm" for s in settings.values())
    if online:  # named by a policy
        require_llm()
    if not dry_run:
        option = "--out-dir" if out_dir is not None else "-o"
        _refuse_overwrites(files, destinations, option, settings, stats, boundary)
    backends = _Backends(llm_jobs=llm_jobs, cache=cache) if online else None
    work: Callable[[str], FileResult]
    if backends is not None:
        work = functools.partial(compact_file, plan=plan, summarizer_for=backends.get)
    else:
        work = functools.partial(compact_file, plan=plan, summarizer_for=offline_summarizer)

    to_stdout = any(d.mode == "stdout" for d in destinations.values())
    kind = report_kind(json, as_)
    report = _Report(files, kind=kind, to_stdout=to_stdout, dry_run=dry_run, verbose=verbose)
    with report.progress():
        if on_ray:
            results = _on_ray(files, plan, online, cache, address, fail_fast, report.add)
        else:
            results = run_batch(
                files,
                work,
                jobs=1 if STDIN in files else jobs,
                mode="thread" if online else "process",
                fail_fast=fail_fast,
                on_result=report.add,
                reraise=os.environ.get("COMPACTCLI_TRACEBACK") == "1",
            )
    if backends is not None:
        for warning in backends.warnings():
            console.warning(warning)
    _write_reports(results, stats, boundary)
    report.finish(results)
    code = max((r.code for r in results), default=0)
    if any(r.status == "skipped" for r in results):
        console.stderr().print(
            f"stopped after a failure (--fail-fast): "
            f"{sum(1 for r in results if r.status == 'skipped')} files not compacted",
            markup=False,
            highlight=False,
        )
    if code:
        raise typer.Exit(code)


def _on_ray(
    files: Sequence[str],
    plan: FilePlan,
    online: bool,
    cache: bool,
    address: str | None,
    fail_fast: bool,
    on_result: Callable[[FileResult], None],
) -> list[FileResult]:
    """The files compacted by Ray workers (`compactcli.ray_engine.map_files`), written as the
    local run writes them: by the workers, or here when the result goes to standard output or
    with `fail_fast` (the files after a failure are then skipped, not written)."""
    from compactcli.batch import FileResult, failed_result
    from compactcli.cache import default_cache_dir
    from compactcli.compact_file import Remote, compact_file, compact_remote, write_remote
    from compactcli.in_place import file_identity
    from compactcli.ray_engine import Summarizers, connect, map_files, shared_breaker

    connect(address)
    seen = {p: file_identity(p) for p in files if plan.destinations[p].mode == "in_place"}
    summarizers = Summarizers(
        default_cache_dir(os.environ) if online and cache else None,
        shared_breaker() if online else None,
    )
    # the workers write the files themselves, as local worker processes do; the results come
    # here to be written only for standard output, or to leave unwritten what --fail-fast skips
    here = fail_fast or any(d.mode == "stdout" for d in plan.destinations.values())
    work: Callable[[str], Remote | FileResult] = functools.partial(
        compact_remote if here else compact_file, plan=plan, summarizer_for=summarizers
    )
    results: list[FileResult] = []
    stop = False

    def written(path: str, done: Remote | FileResult) -> None:
        nonlocal stop
        if isinstance(done, FileResult) or stop:
            result = done if isinstance(done, FileResult) else _skipped(path)
        else:
            try:
                result = write_remote(path, done, plan, seen.get(path))
            except Exception as error:
                result = failed_result(path, error)
        stop = stop or (fail_fast and result.failed)
        results.append(result)
        on_result(result)

    order = iter(files)  # results arrive in input order

    def arrived(outcome: Remote | FileResult) -> None:
        written(next(order), outcome)

    failed: Callable[[str, BaseException], Remote | FileResult] = failed_result
    map_files(files, work, failed, address=address, on_result=arrived)
    return results


def _skipped(path: str) -> FileResult:
    from compactcli.batch import FileResult

    return FileResult(path, "skipped", message="not run: --fail-fast")


def _destinations(
    arguments: Sequence[str],
    files: Sequence[str],
    output: str | None,
    out_dir: str | None,
    in_place: bool,
    dry_run: bool,
) -> dict[str, Destination]:
    from compactcli.compact_file import Destination, output_names

    chosen = [
        name
        for name, on in (
            ("-o", output is not None),
            ("--out-dir", out_dir),
            ("--in-place", in_place),
        )
        if on
    ]
    if len(chosen) > 1:
        raise UsageError(f"{' and '.join(chosen)} cannot be used together")
    if dry_run:
        return {path: Destination("none") for path in files}
    if in_place:
        if STDIN in files:
            raise UsageError("--in-place needs files: standard input cannot be replaced")
        return {path: Destination("in_place") for path in files}
    if out_dir is not None:
        if os.path.exists(out_dir) and not os.path.isdir(out_dir):
            raise OutputError(f"{out_dir}: --out-dir is a file, not a folder")
        found: dict[str, Destination] = {}
        for path, name in output_names(list(arguments), expand_inputs):
            found[path] = Destination("file", os.path.join(out_dir, name))
        return found
    if len(files) > 1:
        raise UsageError(
            f"{len(files)} inputs: choose where the results go with --out-dir DIR or --in-place "
            "(or --dry-run)"
        )
    if output is not None and output != "-":
        refuse_folder(output)
        return {files[0]: Destination("file", output)}
    refuse_terminal(output)
    return {files[0]: Destination("stdout")}


def file_destinations(
    paths: Sequence[str] | None,
    output: str | None,
    out_dir: str | None,
    in_place: bool,
    dry_run: bool,
    others: Sequence[tuple[str, str | None]] = (),
) -> tuple[list[str], dict[str, Destination]]:
    """The files `paths` name and where each one's result goes, for a command that writes one
    transcript per file (`redact`, `restore`), checked as `compact` checks its own: no output
    is an input or another output, `others` (option, path) included (`compactcli.overwrite`)."""
    from compactcli import overwrite

    files = expand_inputs(list(paths or []))
    destinations = _destinations(paths or [], files, output, out_dir, in_place, dry_run)
    if not dry_run:
        option = "--out-dir" if out_dir is not None else "-o"
        targets = [(option, d.path) for d in destinations.values() if d.mode == "file"]
        overwrite.check(files, [*targets, *others])
    stdin_hint(files)
    return files, destinations


def _refuse_overwrites(
    files: Sequence[str],
    destinations: Mapping[str, Destination],
    option: str,
    settings: Mapping[str, Mapping[str, Any]],
    stats: Path | None,
    boundary: Path | None,
) -> None:
    """The check every writing command makes (`compactcli.overwrite`): no output is an input
    or another output. Under --in-place the results replace the inputs on purpose."""
    from compactcli import overwrite

    outputs: list[tuple[str, str | None]] = [
        (option, d.path) for d in destinations.values() if d.mode == "file"
    ]
    outputs += [
        ("--stats", None if stats is None else str(stats)),
        ("--boundary", None if boundary is None else str(boundary)),
    ]
    archives = {s["archive"] for s in settings.values() if s.get("archive")}
    outputs += [("--archive", folder) for folder in sorted(archives)]
    overwrite.check(files, outputs)


# ---------------------------------------------------------------------------------------------
# summarizers


def offline_summarizer(settings: Mapping[str, Any]) -> Summarizer:
    """The extractive summarizer (built in each worker process)."""
    from compactcli.summarizers import get_summarizer

    return get_summarizer("extractive")


class _Backends:
    """One shared LLM summarizer per distinct setting, capped and cached; thread-safe."""

    def __init__(self, *, llm_jobs: int, cache: bool) -> None:
        from compactcli.cache import SummaryCache, default_cache_dir

        self.llm_jobs = llm_jobs
        self.cache = SummaryCache(default_cache_dir(os.environ)) if cache else None
        self._made: dict[tuple[Any, ...], Summarizer] = {}
        self._cached: list[CachedSummarizer] = []
        self._lock = threading.Lock()

    def get(self, settings: Mapping[str, Any]) -> Summarizer:
        from compactcli.batch import SharedBackend
        from compactcli.cache import CachedSummarizer
        from compactcli.compact_file import make_summarizer

        if settings["summarizer"] != "llm":
            return offline_summarizer(settings)
        key = (settings["model"], settings["api_base"], settings["timeout"])
        with self._lock:
            found = self._made.get(key)
            if found is None:
                inner = make_summarizer(settings, cache=self.cache)
                if isinstance(inner, CachedSummarizer):
                    self._cached.append(inner)
                found = self._made[key] = SharedBackend(inner, limit=self.llm_jobs)
            return found

    def warnings(self) -> list[str]:
        return [w for cached in self._cached for w in cached.warnings]


# ---------------------------------------------------------------------------------------------
# reporting


def _n(value: int) -> str:
    return f"{value:,}"


def _saved(before: int, after: int) -> str:
    saved = before - after
    share = f" ({saved / before:.0%})" if before else ""
    return f"{saved:,}{share}"


_TARGETS = {"threshold": "the threshold", "budget": "--max-tokens", "window": "the window"}


def status_text(result: FileResult) -> str:
    """The status column: what happened, and by how much the result is still over."""
    if result.status == "failed":
        return f"failed (exit {result.code})"
    text = {"kept": "input kept"}.get(result.status, result.status)
    if result.over and result.target is not None:
        what = _TARGETS.get(result.target_name, result.target_name)
        text += f"; over {what} ({result.target:,}) by {result.over:,}"
    return text


COLUMNS = ("file", "before", "after", "saved", "status")
DROP = (3,)
"""The columns left out, in this order, when the table is wider than the console: saved."""


def render_results(results: Sequence[FileResult]) -> plain_table.Table:
    """One row per file (tokens of the context), and a total row when there are several."""
    from compactcli import plain_table
    from compactcli.batch import totals

    rows = []
    for r in results:
        if r.status in ("failed", "skipped"):
            rows.append((r.path, "-", "-", "-", status_text(r)))
        else:
            rows.append(
                (
                    r.path,
                    _n(r.tokens_before),
                    _n(r.tokens_after),
                    _saved(r.tokens_before, r.tokens_after),
                    status_text(r),
                )
            )
    total = None
    if len(results) > 1:
        t = totals(results)
        failed = f", {t.failed} failed" if t.failed else ""
        skipped = f", {t.skipped} skipped" if t.skipped else ""
        total = (
            f"total ({t.files} files)",
            _n(t.tokens_before),
            _n(t.tokens_after),
            _saved(t.tokens_before, t.tokens_after),
            f"{sum(1 for r in results if r.status == 'compacted')} compacted{failed}{skipped}",
        )
    return plain_table.Table.of(COLUMNS, rows, total, right=(1, 2, 3), fold=(0,), drop=DROP)


class OverRow(TypedDict):
    """`over` in a `compact --json` row: the limit the result is still at or over."""

    what: str
    limit: int | None
    excess: int


class CompactRow(TypedDict):
    """The `compact --json` object of one file (`json_row`)."""

    path: str
    status: str
    tokens_before: int
    tokens_after: int
    saved: int
    method: str
    output: str | None
    backup: str | None
    summarized: bool
    llm_calls: int
    over: OverRow | None
    exit_code: int
    message: str | None
    warnings: list[str]
    notes: list[str]
    repairs: NotRequired[list[RepairDict]]
    findings: NotRequired[list[InvalidFinding]]
    keep_recent_tokens: NotRequired[int]
    cut_turn: NotRequired[bool]
    summary_tokens: NotRequired[int]
    rounds: NotRequired[int]
    diff: NotRequired[DiffDict]
    redacted: NotRequired[RedactionDict]
    policy: NotRequired[str]
    summary: NotRequired[str]


def json_row(result: FileResult) -> CompactRow:
    """The `--json` object of one file."""
    data: CompactRow = {
        "path": result.path,
        "status": result.status,
        "tokens_before": result.tokens_before,
        "tokens_after": result.tokens_after,
        "saved": result.saved,
        "method": result.method,
        "output": result.output,
        "backup": result.backup,
        "summarized": result.summarized,
        "llm_calls": result.llm_calls,
        "over": (
            {"what": result.target_name, "limit": result.target, "excess": result.over}
            if result.over
            else None
        ),
        "exit_code": result.code,
        "message": result.message or None,
        "warnings": list(result.warnings),
        "notes": list(result.notes),
    }
    details = result.details
    if "repairs" in details:
        data["repairs"] = details["repairs"]
    if "findings" in details:
        data["findings"] = details["findings"]
    check = details.get("check")
    if check is not None and result.summarized:
        data["keep_recent_tokens"] = check["keep_recent_tokens"]
        if check["cut_turn"]:
            data["cut_turn"] = True
        if check["summary_tokens"] is not None:
            data["summary_tokens"] = check["summary_tokens"]
        if check["rounds"] > 1:
            data["rounds"] = check["rounds"]
    if "diff" in details:
        data["diff"] = details["diff"].to_dict()
    if "redact" in details:
        data["redacted"] = details["redact"]
    if "policy" in details:
        data["policy"] = details["policy"]
    if "summary" in details:
        data["summary"] = details["summary"]
    return data


def json_line(result: FileResult) -> str:
    """The `--json` line of one file (`json_row`)."""
    return orjson.dumps(json_row(result)).decode()


class _Report:
    """Progress while the batch runs, problems as they come, the table at the end."""

    def __init__(
        self,
        files: Sequence[str],
        *,
        kind: ReportAs,
        to_stdout: bool,
        dry_run: bool,
        verbose: bool = False,
    ) -> None:
        self.files = files
        self.verbose = verbose
        self.kind = kind
        self.json = kind is ReportAs.json
        self.to_stdout = to_stdout
        self.dry_run = dry_run
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self.saved = 0
        self.calls = 0

    def progress(self) -> Any:
        import contextlib

        from compactcli import console

        if not sys.stderr.isatty() or console.quiet():
            return contextlib.nullcontext()
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self._progress = Progress(
            TextColumn("compacting"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("files  {task.fields[saved]} tokens saved  {task.fields[calls]} LLM calls"),
            console=console.stderr(),
            transient=True,
        )
        self._task = self._progress.add_task("files", total=len(self.files), saved="0", calls=0)
        return self._showing(self._progress)

    @staticmethod
    @contextlib.contextmanager
    def _showing(progress: Progress) -> Iterator[Progress]:
        """The bar shown, and every note, warning and error printed above it meanwhile."""
        from compactcli import console

        with progress:
            console.above_progress(progress.console)
            try:
                yield progress
            finally:
                console.above_progress(None)

    def add(self, result: FileResult) -> None:
        from compactcli import console

        for warning in result.warnings:
            console.warning(warning)
        if self.verbose and result.status != "failed":
            policy = result.details.get("policy") or "none"
            console.say(f"{result.path}: policy {policy}; counted {result.method or '-'}")
        for line in admission_lines(result):
            console.say(line)
        if result.status == "failed":
            console.error(result.message)
        elif result.code and result.over:
            console.say(f"{result.path}: {status_text(result)}", failure=True)
        if not self.json:  # after the line they explain
            for note in result.notes:
                console.say(note)
        summary = result.details.get("summary")
        if summary is not None and not self.json:
            out = sys.stderr if self.to_stdout else sys.stdout
            print(f"== {result.path}: summary\n{summary}", file=out, flush=True)
        if self.dry_run and "diff" in result.details and self.kind is ReportAs.table:
            out = sys.stdout
            if len(self.files) > 1:
                print(f"== {result.path}", file=out, flush=True)
            print_diff(result.details["diff"], file=out)
        self.saved += result.saved if result.status == "compacted" else 0
        self.calls += result.llm_calls
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, advance=1, saved=f"{self.saved:,}", calls=self.calls)

    def finish(self, results: Sequence[FileResult]) -> None:
        from compactcli import console

        if not self.json and len(results) == 1 and results[0].failed:
            return  # its error line says it all
        if self.kind in (ReportAs.csv, ReportAs.tsv):  # on standard error when records are out
            separator = "," if self.kind is ReportAs.csv else "\t"
            stream = sys.stderr if self.to_stdout else None
            console.print_rows(render_results(results), separator, stream)
            return
        if self.to_stdout:
            if self.json:
                for result in results:
                    console.stderr().print(json_line(result), markup=False, highlight=False)
            elif sys.stderr.isatty() and not console.quiet():
                console.stderr().print(console.rich_totals_table(render_results(results)))
            return
        if self.json:
            for result in results:
                typer.echo(json_line(result))
            return
        console.print_totals_table(render_results(results))


def _write_reports(
    results: Sequence[FileResult], stats: Path | None, boundary: Path | None
) -> None:
    """Append the stats reports and write the boundary, atomically, with the permission bits
    every input has (`compactcli.atomic`)."""
    from compactcli import atomic

    mode = atomic.shared_bits(r.path for r in results if r.path != "<stdin>")
    reports = [r.details["stats"] for r in results if "stats" in r.details]
    if stats is not None and reports:  # no file is made for runs that all failed
        append_json_lines(stats, reports, mode=mode)
    if boundary is not None and results and "boundary" in results[0].details:
        write_json(boundary, results[0].details["boundary"], mode=mode)
