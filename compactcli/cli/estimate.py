"""`compactcli estimate`: token counts per transcript, and the CI size check.

The library is imported inside the functions that use it, so `compactcli --help` does not load
it and `compactcli estimate` loads only what counting needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from types import ModuleType
from typing import TYPE_CHECKING, Annotated

import orjson
import typer

from compactcli.cli.options import (
    Address,
    As,
    BadLinePolicy,
    ContextWindow,
    CountingModel,
    Engine,
    EngineName,
    EstimateMethod,
    FailOnThreshold,
    Format,
    Jobs,
    Json,
    MaxTokens,
    MethodName,
    OnBadLine,
    Paths,
    Quiet,
    ReportAs,
    Threshold,
    Verbose,
    given_settings,
    report_kind,
)
from compactcli.cli.panels import REPORTS
from compactcli.cli.runner import guarded, stdin_hint
from compactcli.errors import ExitCode, InputError, UsageError
from compactcli.inputs import STDIN, expand_inputs, largest_first, workers_for

if TYPE_CHECKING:
    from compactcli.estimate import EstimateOptions, EstimateReport
    from compactcli.jsonl import BadLines
    from compactcli.jsonl import OnBadLine as BadLineName
    from compactcli.plain_table import Table
    from compactcli.policy import Policies


class Breakdown(StrEnum):
    """Which breakdown table to show."""

    role = "role"
    block = "block"
    tool = "tool"


By = Annotated[
    Breakdown | None,
    typer.Option(
        "--by",
        help="Also show the context's tokens by role, block type or tool.",
        show_default=False,
        rich_help_panel=REPORTS,
    ),
]


@guarded
def estimate_command(
    ctx: typer.Context,
    paths: Paths = None,
    *,
    format: Format = None,
    method: EstimateMethod = MethodName.auto,
    model: CountingModel = None,
    context_window: ContextWindow = None,
    threshold: Threshold = None,
    max_tokens: MaxTokens = None,
    fail_on_threshold: FailOnThreshold = False,
    by: By = None,
    json: Json = False,
    as_: As = ReportAs.table,
    jobs: Jobs = 0,
    engine: Engine = EngineName.local,
    address: Address = None,
    on_bad_line: OnBadLine = BadLinePolicy.error,
    verbose: Verbose = False,
    quiet: Quiet = False,
) -> None:
    """Count the tokens of transcripts: the context the model would see now, and the whole file.

    Prints a table (one row per file and a total), or with --json one JSON object per file
    (--as csv or tsv: one row per file).
    With --max-tokens or --fail-on-threshold it is a CI check: exit 1 when any file is over,
    with one line per failing file on standard error. Unreadable input exits 3; a tokenizer that
    cannot be loaded exits 4.

    Examples:

    \b
      compactcli estimate session.jsonl
      compactcli estimate ~/.codex/sessions --json
      compactcli estimate logs/ --max-tokens 150000    # CI: exit 1 when over
      compactcli estimate sessions/ --engine ray --address auto --json
    """
    from compactcli.estimate import EstimateOptions, failures
    from compactcli.policy import BUDGET_KEYS, Policies
    from compactcli.policy import fail_on_threshold as policy_fail_on_threshold

    kind = report_kind(json, as_)
    json = kind is ReportAs.json
    on_ray = engine is EngineName.ray
    if on_ray:
        from compactcli.ray_engine import require_ray

        require_ray()
    files = expand_inputs(paths or [])
    if on_ray and STDIN in files:
        raise UsageError("--engine ray reads files: standard input cannot be handed out")
    stdin_hint(files)
    options = EstimateOptions(
        method=method.value,
        model=model,
        context_window=context_window,
        threshold=threshold,
        max_tokens=max_tokens,
        from_end=by is None,  # a breakdown needs the whole context
    )
    policies = Policies()
    for path in files:  # a bad policy file is a usage error before anything is counted
        policies.for_path(path)
    given = given_settings(ctx, BUDGET_KEYS)
    exit_code = ExitCode.OK
    reports: list[EstimateReport] = []
    failing: list[str] = []
    counted = (
        _count_on_ray(files, options, format, on_bad_line, address, policies, given)
        if on_ray
        else _count_all(files, options, format, on_bad_line, jobs, policies, given)
    )
    for outcome in counted:
        for warning in outcome.warnings:
            _console().warning(warning)
        if outcome.report is None:
            _console().error(outcome.error)
            exit_code = max(exit_code, ExitCode(outcome.code))
            continue
        report = outcome.report
        reports.append(report)
        policy = policies.for_path(outcome.path)
        if verbose:
            _console().say(verbose_line(report, policy.path if policy is not None else None))
        if json:
            row = report.to_dict()
            if policy is not None:
                row["policy"] = policy.path
            typer.echo(orjson.dumps(row).decode())
        fail = policy_fail_on_threshold(fail_on_threshold, outcome.path, policy, given)
        over = failures(report, fail_on_threshold=fail)
        if over:
            failing.append(check_line(report, over))
    if kind in (ReportAs.csv, ReportAs.tsv) and reports:
        separator = "," if kind is ReportAs.csv else "\t"
        _console().print_rows(render_table(reports), separator)
        if by is not None:  # after an empty line
            print(flush=True)
            _console().print_rows(render_breakdown(reports, by.value), separator)
    elif not json and reports:
        _console().print_totals_table(render_table(reports))
        if by is not None:
            _console().print_totals_table(render_breakdown(reports, by.value))
    for line in failing:
        _console().say(line, failure=True)
    if failing:
        exit_code = max(exit_code, ExitCode.CHECK_FAILED)
    if exit_code:
        raise typer.Exit(int(exit_code))


def _console() -> ModuleType:
    """`compactcli.console`, imported once there is something to print (it imports rich only
    for what it cannot print plainly): `--json` on files that pass needs neither."""
    from compactcli import console

    return console


# ---------------------------------------------------------------------------------------------
# counting, in this process or in parallel


@dataclass(frozen=True, slots=True)
class _Outcome:
    """One file's report, or why it has none; plain values only (they cross processes)."""

    path: str
    report: EstimateReport | None
    code: int = 0
    error: str = ""
    warnings: tuple[str, ...] = ()


def _count_one(
    path: str,
    options: EstimateOptions,
    format: str | None,
    policy: BadLineName,
    budgets: Policies | None = None,
    given: frozenset[str] = frozenset(),
) -> _Outcome:
    from compactcli.estimate import estimate_file
    from compactcli.jsonl import BadLines
    from compactcli.policy import estimate_options

    found = budgets.for_path(path) if budgets is not None else None
    options = estimate_options(options, path, found, given)
    bad = BadLines()
    try:
        report = estimate_file(path, options, format=format, on_bad_line=policy, bad=bad)
    except InputError as error:
        return _Outcome(path, None, int(error.exit_code), str(error), _warnings(path, policy, bad))
    return _Outcome(path, report, warnings=_warnings(path, policy, bad))


def _warnings(path: str, policy: BadLineName, bad: BadLines) -> tuple[str, ...]:
    verb = "skipped" if policy == "skip" else "kept unparsed"
    name = "<stdin>" if path == STDIN else path
    return tuple(f"{name}:{lineno}: {verb}: {reason}" for lineno, reason in bad.lines)


def _count_all(
    files: Sequence[str],
    options: EstimateOptions,
    format: str | None,
    on_bad_line: BadLinePolicy,
    jobs: int,
    budgets: Policies | None = None,
    given: frozenset[str] = frozenset(),
) -> Iterator[_Outcome]:
    """Outcomes in input order; files in parallel processes when there are several."""
    name = format
    policy: BadLineName = on_bad_line.value
    workers = workers_for(jobs, len(files))
    if workers <= 1 or STDIN in files:
        for path in files:
            yield _count_one(path, options, name, policy, budgets, given)
        return
    from concurrent.futures import Future, ProcessPoolExecutor  # only when files run in parallel

    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures: dict[int, Future[_Outcome]] = {
            index: pool.submit(_count_one, files[index], options, name, policy, budgets, given)
            for index in largest_first(files)
        }
        for index in range(len(files)):
            yield futures[index].result()


def _count_on_ray(
    files: Sequence[str],
    options: EstimateOptions,
    format: str | None,
    on_bad_line: BadLinePolicy,
    address: str | None,
    budgets: Policies | None = None,
    given: frozenset[str] = frozenset(),
) -> list[_Outcome]:
    """Outcomes in input order, each file counted by a Ray worker
    (`compactcli.ray_engine.map_files`)."""
    import functools

    from compactcli.ray_engine import map_files

    work = functools.partial(
        _count_one,
        options=options,
        format=format,
        policy=on_bad_line.value,
        budgets=budgets,
        given=given,
    )
    return map_files(files, work, _not_counted, address=address)


def _not_counted(path: str, error: BaseException) -> _Outcome:
    """The outcome of a file whose count raised `error` on a Ray worker."""
    from compactcli.errors import CompactError

    if isinstance(error, CompactError):
        return _Outcome(path, None, int(error.exit_code), str(error))
    return _Outcome(
        path, None, int(ExitCode.CHECK_FAILED), f"unexpected {type(error).__name__}: {error}"
    )


# ---------------------------------------------------------------------------------------------
# rendering


def _n(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _total(values: Iterable[int | None]) -> int | None:
    """The sum, or None when a value is not known (a file read from its end)."""
    total = 0
    for value in values:
        if value is None:
            return None
        total += value
    return total


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.0%}" if whole else "-"


COLUMNS = ("file", "tokens", "method", "window", "used", "threshold", "status", "file tokens")
DROP = (7, 5, 3, 2)
"""The columns left out, in this order, when the table is wider than the console: file
tokens, threshold, window, method."""


def verbose_line(report: EstimateReport, policy: str | None) -> str:
    """What `-v` says of one file: its policy, format, method, model and window."""
    return (
        f"{report.path}: policy {policy or 'none'}; format {report.format}; method "
        f"{report.method}; model {report.model or 'unknown'}; window {report.context_window:,} "
        f"({report.context_window_source})"
    )


def render_table(reports: Sequence[EstimateReport]) -> Table:
    """One row per file, and a total row when there are several files."""
    from compactcli.plain_table import Table

    rows = [
        (
            r.path,
            _n(r.tokens),
            r.method,
            _n(r.context_window),
            _share(r.tokens, r.context_window),
            _n(r.threshold),
            r.status,
            _n(r.file_tokens),
        )
        for r in reports
    ]
    total = None
    if len(reports) > 1:
        not_ok = sum(1 for r in reports if r.status != "ok")
        total = (
            f"total ({len(reports)} files)",
            _n(sum(r.tokens for r in reports)),
            "",
            "",
            "",
            "",
            f"{not_ok} not ok" if not_ok else "ok",
            _n(_total(r.file_tokens for r in reports)),
        )
    return Table.of(COLUMNS, rows, total, right=(1, 3, 4, 5, 7), fold=(0,), drop=DROP)


def breakdown_of(report: EstimateReport, by: str) -> Mapping[str, int]:
    found = {"role": report.by_role, "block": report.by_block, "tool": report.by_tool}[by]
    return found if found is not None else {}  # None: read from the end, without `--by`


def render_breakdown(reports: Sequence[EstimateReport], by: str) -> Table:
    """The context's tokens by `by`, summed over `reports`, largest first."""
    from compactcli.plain_table import Table

    totals: dict[str, int] = {}
    for report in reports:
        for key, value in breakdown_of(report, by).items():
            totals[key] = totals.get(key, 0) + value
    methods = sorted({r.breakdown_method for r in reports if r.breakdown_method is not None})
    whole = sum(totals.values())
    rows = [
        (key, _n(value), _share(value, whole))
        for key, value in sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    total = ("total", _n(whole), "100%" if whole else "-") if by != "tool" else None
    title = f"{by} ({', '.join(methods)})"
    return Table.of((title, "tokens", "share"), rows, total, right=(1, 2))


_WHAT = {"budget": "--max-tokens", "threshold": "threshold", "window": "context window"}


def check_line(report: EstimateReport, over: Sequence[tuple[str, int, int]]) -> str:
    """One line for a file failing the CI check: what is over, and by how much."""
    parts = []
    for what, limit, excess in over:
        if what == "threshold":
            name = f"the {report.threshold_spec} threshold"
            parts.append(f"at or over {name} of {limit:,} by {excess:,}")
        else:
            parts.append(f"over {_WHAT[what]} {limit:,} by {excess:,}")
    return f"{report.path}: {report.tokens:,} tokens ({report.method}) " + "; ".join(parts)
