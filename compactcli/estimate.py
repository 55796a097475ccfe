"""Token accounting: how full a transcript's context is, and how much the whole file holds.

`estimate` counts a transcript already read, `estimate_file` a file, streamed and, where the
format allows, read from its end (keeping only what the format's `Streamer` needs and a few
integers per message, never the whole transcript), and `estimate_records` a stream of records;
each returns an `EstimateReport`, the same one for the same bytes, in which every number says
which method made it (`EstimateOptions`). `failures(report)` is the CI check: what is over the
budget and, when asked, the compaction threshold. The library never prints; errors are
`CompactError`s (`InputError` for unreadable input, `BackendError` for a tokenizer that cannot
be loaded, `UsageError` for bad options)."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, NotRequired, TypedDict, cast

from compactcli.errors import UsageError
from compactcli.estimate_ledger import Ledger, RecordLines, feed_ledger
from compactcli.estimate_reader import read_lines
from compactcli.estimate_tail import TailStats, read_from_end
from compactcli.estimate_usage import Analysis
from compactcli.formats import get_dialect
from compactcli.formats.base import StreamedView, streamed_view
from compactcli.formats.detect import SNIFF_RECORDS, detect_format
from compactcli.formats.mixed import checked_lines
from compactcli.jsonl import BadLines, OnBadLine, display_name
from compactcli.lifetime import collector_paused
from compactcli.limits import Limits, default_threshold, model_limits, parse_threshold, threshold
from compactcli.tokens import (
    METHODS,
    HeuristicCounter,
    TiktokenCounter,
    TokenCounter,
    density_for,
    get_counter,
)
from compactcli.transcript import Line, Record, Transcript

__all__ = [
    "METHODS",
    "STATUSES",
    "Calibration",
    "CalibrationDict",
    "EstimateDict",
    "EstimateOptions",
    "EstimateReport",
    "RecordedUsage",
    "UsageDict",
    "context_tokens",
    "estimate",
    "estimate_file",
    "estimate_records",
    "failures",
    "note_context_tokens",
]

STATUSES = ("ok", "over_threshold", "over_budget", "over_window")


@dataclass(frozen=True, slots=True)
class EstimateOptions:
    """What `estimate` counts with, and what it compares the count to.

    Methods (`method`); every number in the report says which one made it:

    - `heuristic`: the per-block rules of `compactcli.tokens.HeuristicCounter`.
    - `exact`: tiktoken's count of each text (`compactcli.tokens.TiktokenCounter`).
    - `usage`: what the agent recorded for its last request on the context view
      (`Dialect.usage`).
    - `calibrated`: the heuristic with its densities scaled by one factor, fitted so that the
      estimated growth between consecutive usage anchors of this transcript matches the recorded
      growth in aggregate; plus the fixed part the file does not hold (system prompt, tool
      definitions), fitted as the median of recorded minus estimated at each anchor.
    - `auto` (default): the last usage anchor plus the heuristic count of what the context view
      holds after it (how the agents measure themselves); the heuristic where nothing was
      recorded.

    `from_end`: `estimate_file` may count `usage` and `auto` from the end of the file
    (`compactcli.estimate_tail`): the same `tokens`, `method`, `after_usage` and usage figures,
    while what only the whole file tells (`file_tokens`, `records`, `messages`,
    `context_messages`, the breakdowns, the usage's `line` and `requests`) is None. False reads
    every line. `estimate` of a transcript already read ignores it.

    An assistant response counts as at least the `output_tokens` its usage anchor recorded
    (under every counting method): that figure includes thinking that the file often keeps only
    as a signature. What exceeds the counted text is reported under `by_block["thinking"]`.
    """

    method: str = "auto"
    model: str | None = None  # None: the model the transcript names
    context_window: int | None = None  # overrides the model's window
    threshold: str | None = None  # preset, "80%" or a token count; None: the format's agent
    max_tokens: int | None = None  # the CI budget
    from_end: bool = True

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            known = ", ".join(METHODS)
            raise UsageError(f"unknown method {self.method!r}; known methods: {known}")
        if self.threshold is not None:
            parse_threshold(self.threshold)
        if self.context_window is not None and self.context_window <= 0:
            raise UsageError("--context-window must be a positive number of tokens")
        if self.max_tokens is not None and self.max_tokens < 0:
            raise UsageError("--max-tokens must not be negative")


class UsageDict(TypedDict):
    """`RecordedUsage.to_dict()`: `usage` in the `estimate --json` object."""

    tokens: int
    input: int
    output: int
    cached: int
    line: int | None
    requests: int | None


@dataclass(frozen=True, slots=True)
class RecordedUsage:
    """The agent's own record of its last request on the context view."""

    tokens: int  # the context size as the agent measures it
    input: int
    output: int
    cached: int
    line: int | None  # the input line that carries it (None: read from the end)
    requests: int | None  # usage anchors on the context view (None: read from the end)

    def to_dict(self) -> UsageDict:
        return {
            "tokens": self.tokens,
            "input": self.input,
            "output": self.output,
            "cached": self.cached,
            "line": self.line,
            "requests": self.requests,
        }


class CalibrationDict(TypedDict):
    """`Calibration.to_dict()`: `calibration` in the `estimate --json` object."""

    factor: float
    chars_per_token: float
    deltas: int
    overhead: int


@dataclass(frozen=True, slots=True)
class Calibration:
    """The fit behind `calibrated`: densities scaled by `factor`, plus a fixed `overhead`."""

    factor: float  # text tokens per heuristic text token
    chars_per_token: float  # the fitted density of tool output (the bulk of a transcript)
    deltas: int  # consecutive anchor pairs fitted
    overhead: int  # tokens the agent sends that the file does not hold

    def to_dict(self) -> CalibrationDict:
        return {
            "factor": round(self.factor, 4),
            "chars_per_token": round(self.chars_per_token, 3),
            "deltas": self.deltas,
            "overhead": self.overhead,
        }


class EstimateDict(TypedDict):
    """`EstimateReport.to_dict()`: the `estimate --json` object of one file."""

    path: str
    format: str
    method: str
    tokens: int
    file_tokens: int | None
    file_tokens_method: str | None
    records: int | None
    messages: int | None
    context_messages: int | None
    by_role: dict[str, int] | None
    by_block: dict[str, int] | None
    by_tool: dict[str, int] | None
    breakdown_method: str | None
    usage: UsageDict | None
    after_usage: int | None
    calibration: CalibrationDict | None
    model: str | None
    context_window: int
    context_window_source: str
    max_output: int
    threshold: int
    threshold_spec: str
    threshold_rule: str
    max_tokens: int | None
    status: str
    policy: NotRequired[str]  # the policy file whose settings applied (added by the command)


@dataclass(frozen=True, slots=True)
class EstimateReport:
    """What `estimate` found for one transcript; `to_dict()` is the `--json` object.

    `tokens` is the context view (what the model would see if the session resumed now, after
    the last compaction) under the chosen method; `file_tokens` every message in the file.
    `by_role`, `by_block` (text, thinking, tool_call, tool_result, image, document, other, and
    `message` for per-message framing) and `by_tool` (calls and results by tool name) break the
    context view down, counted by `breakdown_method`. Read from the end of a file
    (`EstimateOptions.from_end`), what only the whole file tells is None: `file_tokens`,
    `file_tokens_method`, `records`, `messages`, `context_messages`, the breakdowns and their
    method, and the usage's `line` and `requests`.

    `status` is `over_window` when `tokens` exceed the context window, else `over_budget` when
    they exceed `max_tokens`, else `over_threshold` when they reach the compaction threshold,
    else `ok`.
    """

    path: str
    format: str
    method: str  # the method that made `tokens`
    tokens: int
    file_tokens: int | None
    file_tokens_method: str | None
    records: int | None
    messages: int | None
    context_messages: int | None
    by_role: Mapping[str, int] | None
    by_block: Mapping[str, int] | None
    by_tool: Mapping[str, int] | None
    breakdown_method: str | None
    usage: RecordedUsage | None
    after_usage: int | None  # `auto`: tokens estimated after the last usage anchor
    calibration: Calibration | None
    model: str | None
    context_window: int
    context_window_source: str
    max_output: int
    threshold: int
    threshold_spec: str
    threshold_rule: str
    max_tokens: int | None
    status: str

    @property
    def over(self) -> list[tuple[str, int, int]]:
        """(what, limit, excess) for every limit `tokens` is over: window, budget, threshold."""
        found: list[tuple[str, int, int]] = []
        if self.tokens > self.context_window:
            found.append(("window", self.context_window, self.tokens - self.context_window))
        if self.max_tokens is not None and self.tokens > self.max_tokens:
            found.append(("budget", self.max_tokens, self.tokens - self.max_tokens))
        if self.tokens >= self.threshold:
            found.append(("threshold", self.threshold, self.tokens - self.threshold))
        return found

    def to_dict(self) -> EstimateDict:
        return {
            "path": self.path,
            "format": self.format,
            "method": self.method,
            "tokens": self.tokens,
            "file_tokens": self.file_tokens,
            "file_tokens_method": self.file_tokens_method,
            "records": self.records,
            "messages": self.messages,
            "context_messages": self.context_messages,
            "by_role": None if self.by_role is None else dict(self.by_role),
            "by_block": None if self.by_block is None else dict(self.by_block),
            "by_tool": None if self.by_tool is None else dict(self.by_tool),
            "breakdown_method": self.breakdown_method,
            "usage": self.usage.to_dict() if self.usage else None,
            "after_usage": self.after_usage,
            "calibration": self.calibration.to_dict() if self.calibration else None,
            "model": self.model,
            "context_window": self.context_window,
            "context_window_source": self.context_window_source,
            "max_output": self.max_output,
            "threshold": self.threshold,
            "threshold_spec": self.threshold_spec,
            "threshold_rule": self.threshold_rule,
            "max_tokens": self.max_tokens,
            "status": self.status,
        }


_INDEX = operator.attrgetter("index")


def failures(
    report: EstimateReport, *, fail_on_threshold: bool = False
) -> list[tuple[str, int, int]]:
    """What fails the CI check for `report`: (what, limit, excess) for the budget (`max_tokens`)
    and, with `fail_on_threshold`, the compaction threshold."""
    return [
        item
        for item in report.over
        if item[0] == "budget" or (fail_on_threshold and item[0] == "threshold")
    ]


def estimate(
    transcript: Transcript,
    options: EstimateOptions = EstimateOptions(),
    *,
    counter: HeuristicCounter | TiktokenCounter | None = None,
    whole_file: bool = True,
    breakdown: bool = True,
) -> EstimateReport:
    """Count `transcript` (already read) under `options`.

    `counter` replaces the content counter the method would build (tests inject one).

    The format's views of `transcript` are counted (its messages, context and usage, made once
    per transcript and shared with the stages), not the records streamed again; the report is
    the one `estimate_file` gives for the same bytes.

    `whole_file=False` (with the `heuristic` and `exact` methods, whose figures for the context
    read nothing else) counts the context view only: `tokens`, the breakdowns and
    `context_messages` are the same, while `file_tokens` and `messages` then cover the context
    view and not the whole file. Compaction decides on the context alone.

    `breakdown=False` (with `whole_file=False`) leaves the breakdowns by role, block and tool
    empty; every other figure is the same.
    """
    records = transcript.records
    dialect = get_dialect(transcript.format)
    context_only = not whole_file and options.method in ("heuristic", "exact")
    # the context view of a format with one message per record holds every message of its
    # records: those are counted, and the others need not be made
    from_context = context_only and dialect.one_message_per_record
    view = streamed_view(dialect, transcript, messages=not from_context)
    content = counter or get_counter(
        "heuristic" if options.method in ("auto", "usage") else options.method,
        model=options.model or _peek_model(records[:SNIFF_RECORDS], transcript.format),
        format=transcript.format,
    )
    ledger = Ledger(content)
    ledger.lines = RecordLines(records)
    add = ledger.add
    if not context_only:
        breakdown = True
        for message in view.messages:
            add(message)
    elif from_context:
        last = -1
        for message in sorted(dialect.context(transcript), key=_INDEX):
            if message.index != last:  # each record once, in file order, as `view.messages`
                add(message)
                last = message.index
    else:
        wanted = set(view.context)
        for message in view.messages:
            if message.index in wanted:
                add(message)
    return _report(
        ledger,
        view,
        options,
        format=transcript.format,
        source=transcript.source,
        records=len(records),
        breakdown=breakdown,
    )


def context_tokens(transcript: Transcript, counter: TokenCounter) -> int:
    """The tokens of `transcript`'s context view under `counter`, as `estimate` counts them
    (`--method heuristic` or `exact`): every message's cost, and each response at least the
    output its usage anchor recorded. The one count every command and report gives for a
    context (prune, summarize, diff, the stats report, boundary records). Remembered per
    transcript and counter (`note_context_tokens` gives it a count made elsewhere)."""

    def count() -> int:
        method = "exact" if counter.method == "exact" else "heuristic"
        content = cast(HeuristicCounter | TiktokenCounter, counter)
        options = EstimateOptions(method=method)
        report = estimate(transcript, options, counter=content, whole_file=False, breakdown=False)
        return report.tokens

    made, tokens = transcript.view(_context_key(counter), lambda: (counter, count()))
    return tokens if made is counter else count()  # a counter that took a freed one's id


def note_context_tokens(transcript: Transcript, counter: TokenCounter, tokens: int) -> None:
    """Remember `tokens`, the `context_tokens` of `transcript` under `counter`, counted by an
    `estimate` of its context view (with any limits: they do not change the count)."""
    transcript.remember(_context_key(counter), (counter, tokens))


def _context_key(counter: TokenCounter) -> str:
    return f"context_tokens:{counter.method}:{id(counter)}"


def estimate_records(
    records: Iterable[Record],
    format: str,
    options: EstimateOptions = EstimateOptions(),
    *,
    source: str = "-",
    counter: HeuristicCounter | TiktokenCounter | None = None,
    model_hint: str | None = None,
) -> EstimateReport:
    """Count a stream of `records` of a known `format`, holding one record at a time.

    The content counter follows `options.model`, else `model_hint` (the model the first
    records name), else the format.
    """
    lines = ((r.lineno, r.raw, r.line) for r in records)
    return _estimate_lines(lines, format, options, source, counter, model_hint)


def _estimate_lines(
    lines: Iterable[tuple[int, Any, Line | None]],
    format: str,
    options: EstimateOptions,
    source: str,
    counter: HeuristicCounter | TiktokenCounter | None,
    model_hint: str | None,
) -> EstimateReport:
    content = counter or _content_counter(options, model_hint, format)
    ledger = Ledger(content)
    streamer = get_dialect(format).streamer(source)
    count = feed_ledger(lines, streamer, ledger)
    view = streamer.finish()
    for message in view.messages:
        ledger.add(message)
    return _report(ledger, view, options, format=format, source=source, records=count)


def _content_counter(
    options: EstimateOptions, model_hint: str | None, format: str
) -> HeuristicCounter | TiktokenCounter:
    return get_counter(
        "heuristic" if options.method in ("auto", "usage") else options.method,
        model=options.model or model_hint,
        format=format,
    )


def estimate_file(
    path: str,
    options: EstimateOptions = EstimateOptions(),
    *,
    format: str | None = None,
    on_bad_line: OnBadLine = "error",
    bad: BadLines | None = None,
    counter: HeuristicCounter | TiktokenCounter | None = None,
    tail: TailStats | None = None,
) -> EstimateReport:
    """Count the transcript in file `path` (`-` for standard input), streaming it
    (`compactcli.estimate_reader`) and keeping only what the format's `Streamer` needs to decide
    the context view and a few integers per message (`compactcli.estimate_ledger.Ledger`).

    The format is detected from the first records unless named. Raises `InputError` for
    unreadable input, as `read_transcript` does. With the `usage` and `auto` methods and
    `options.from_end`, a file (not standard input, bad lines an error) is first read from its
    end (`compactcli.estimate_tail`; `tail` records what that read did), the figures of the
    whole file then unknown; the forward read answers whenever its last records do not decide
    the figures. The agent's usage records are read by `compactcli.estimate_usage`.
    """
    if format is not None:
        get_dialect(format)
    stream = read_lines(path, on_bad_line=on_bad_line, bad=bad)
    head: list[tuple[int, Any, bytes | None]] = []
    objects: list[Any] = []
    for item in stream:
        head.append(item)
        if item[1] is not None:
            objects.append(item[1])
            if len(objects) >= SNIFF_RECORDS:
                break
    name = display_name(path)
    detected = format is None
    if format is None:
        format = detect_format(objects, name)
    peek = options.model is None and counter is None  # the counter follows the head's model
    if (
        options.from_end
        and options.method in ("usage", "auto")
        and on_bad_line == "error"
        and path != "-"
        and not path.endswith(".traj")
    ):
        report = _from_end(path, options, format, name, head, objects, counter, peek, tail)
        if report is not None:
            stream.close()
            return report
    hint = None
    if peek:
        hint = _peek_model([Record(raw=raw, lineno=lineno) for lineno, raw, _ in head], format)
    lines: Iterable[tuple[int, Any, bytes | None]] = itertools.chain(head, stream)
    if detected:  # a file that mixes formats is an error (compactcli.formats.mixed)
        lines = checked_lines(lines, name)
    del head, objects  # the chain lets go of the head once it is read
    with collector_paused():  # a format read whole holds a transcript of many containers
        return _estimate_lines(lines, format, options, name, counter, hint)


def _from_end(
    path: str,
    options: EstimateOptions,
    format: str,
    name: str,
    head: Sequence[tuple[int, Any, bytes | None]],
    objects: Sequence[Any],
    counter: HeuristicCounter | TiktokenCounter | None,
    peek: bool,
    tail: TailStats | None,
) -> EstimateReport | None:
    """The report of `path` read from its end (`compactcli.estimate_tail`), or None. With
    `peek`, the counter's density follows the model the head names, as in the forward read; that
    model is looked up only when the figures depend on it (a count beside the recorded usage)."""
    content = counter or _content_counter(options, None, format)
    found = read_from_end(path, format, objects, content, stats=tail)
    if found is None:
        return None
    report = _report(found.ledger, found.view, options, format=format, source=name, whole=False)
    if not peek or report.method == "usage":
        return report
    hint = _peek_model([Record(raw=raw, lineno=lineno) for lineno, raw, _ in head], format)
    if density_for(hint, format) is density_for(None, format):
        return report
    found = read_from_end(path, format, objects, _content_counter(options, hint, format))
    if found is None:
        return None
    return _report(found.ledger, found.view, options, format=format, source=name, whole=False)


def _peek_model(head: Sequence[Record], format: str) -> str | None:
    """The model the first records name, to choose the counter before streaming the rest."""
    transcript = Transcript(records=tuple(head), format=format)
    try:
        return get_dialect(format).model(transcript)
    except Exception:  # a partial head may not satisfy every view; the model is only a hint
        return None


def _report(
    ledger: Ledger,
    view: StreamedView,
    options: EstimateOptions,
    *,
    format: str,
    source: str,
    records: int | None = None,
    breakdown: bool = True,
    whole: bool = True,
) -> EstimateReport:
    """The report of a ledger and a view; `whole=False` for those of a file's last records
    (`compactcli.estimate_tail`): the figures of the whole file are then None."""
    analysis = Analysis(ledger, view)
    content_method = ledger.counter.method
    method = options.method
    factor = 1.0
    calibration: Calibration | None = None
    if method == "calibrated":
        fitted = analysis.fit()
        if fitted is not None:
            factor, pairs = fitted
            density = density_for(options.model or view.model, format)
            calibration = Calibration(
                factor=factor,
                chars_per_token=density.output / factor,
                deltas=pairs,
                overhead=analysis.overhead(factor),
            )
    breakdown_method = "calibrated" if calibration else content_method
    excess = analysis.excess(factor)
    content = analysis.context_cost(factor) + excess
    file_content = analysis.file_cost(factor) + excess if whole else 0
    last_usage = view.usage[-1] if view.usage else None
    last = analysis.anchors[-1] if analysis.anchors else None
    if last is not None and last.usage is not last_usage:
        last = None
    recorded = (
        RecordedUsage(
            tokens=last_usage.context,
            input=last_usage.input,
            output=last_usage.output,
            cached=last_usage.cached,
            line=ledger.lines.get(last_usage.index, 0) if whole else None,
            requests=len(view.usage) if whole else None,
        )
        if last_usage is not None
        else None
    )
    after: int | None = None
    if method == "auto" and last_usage is not None:
        after = sum(ledger.cost(analysis.context[s]) for s in analysis.after(last)) if last else 0
        tokens = last_usage.context + after
        resolved = "usage+heuristic" if after else "usage"
    elif method == "usage" and last_usage is not None:
        tokens, resolved = last_usage.context, "usage"
    elif calibration is not None:
        tokens, resolved = content + calibration.overhead, "calibrated"
    else:
        tokens, resolved = content, content_method
    if not whole and method not in ("auto", "usage"):
        raise ValueError("only the usage and auto figures are read from a file's end")
    by_role, by_block, by_tool = analysis.breakdown(factor) if breakdown and whole else ({}, {}, {})
    model = options.model or view.model
    window_override = options.context_window
    limits = model_limits(model, context_window=window_override)
    if window_override is None and options.model is None and view.context_window:
        limits = Limits(model, view.context_window, limits.max_output, "recorded in the transcript")
    spec = options.threshold or default_threshold(format)
    limit = threshold(spec, limits)
    report = EstimateReport(
        path=source,
        format=format,
        method=resolved,
        tokens=tokens,
        file_tokens=file_content if whole else None,
        file_tokens_method=breakdown_method if whole else None,
        records=records if whole else None,
        messages=len(ledger) if whole else None,
        context_messages=len(analysis.context) if whole else None,
        by_role=by_role if whole else None,
        by_block=by_block if whole else None,
        by_tool=by_tool if whole else None,
        breakdown_method=breakdown_method if whole else None,
        usage=recorded,
        after_usage=after,
        calibration=calibration,
        model=model,
        context_window=limits.context_window,
        context_window_source=limits.source,
        max_output=limits.max_output,
        threshold=limit.tokens,
        threshold_spec=limit.spec,
        threshold_rule=limit.rule,
        max_tokens=options.max_tokens,
        status="ok",
    )
    return _with_status(report)


def _with_status(report: EstimateReport) -> EstimateReport:
    over = {what for what, _, _ in report.over}
    status = "ok"
    if "window" in over:
        status = "over_window"
    elif "budget" in over:
        status = "over_budget"
    elif "threshold" in over:
        status = "over_threshold"
    return replace(report, status=status)
