"""One file of the `compact` command, from reading it to writing its result.

`compact_file(path, plan, summarizer_for)` reads one file, admits it (`compactcli.repair`),
resolves its settings (options over environment over the policy file: `compactcli.policy`),
compacts it, writes the result where the plan says and returns a `compactcli.batch.FileResult`;
outputs are written atomically, so an interrupt never leaves a partial file. `DEFAULTS` lists
every setting with its built-in default, `options_from_settings` turns resolved settings into
`compactcli.stages.compact.CompactOptions`, and `over_parts` and `standing_over` say where the
tokens of a result still over its limits are.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from compactcli import atomic, batch, in_place, interrupts, lifetime, undo
from compactcli.errors import OutputError, UsageError
from compactcli.estimate import context_tokens
from compactcli.formats import get_dialect
from compactcli.in_place import Identity, file_identity
from compactcli.injection import get_writer
from compactcli.jsonl import BadLines, OnBadLine, render, write_bytes
from compactcli.lifetime import collector_paused
from compactcli.loading import read_transcript
from compactcli.policy import Policies, Policy, resolve
from compactcli.redact_transcript import redact_transcript
from compactcli.repair import admit
from compactcli.stages.compact import (
    CompactOptions,
    compact,
    compact_check,
    settle,
    summary_details,
)
from compactcli.stages.prune import PruneOptions
from compactcli.stages.summarize import (
    MIN_SUMMARY_TOKENS,
    SummarizeOptions,
    quoted_request,
    summary_body,
)
from compactcli.stats import report
from compactcli.summarizers import Summarizer
from compactcli.summarizers.calls import counting_calls
from compactcli.tokens import TokenCounter, get_counter
from compactcli.transcript import Message, Transcript

if TYPE_CHECKING:
    from compactcli.cache import SummaryCache

__all__ = [
    "DEFAULTS",
    "Compacted",
    "Destination",
    "FilePlan",
    "Remote",
    "compact_file",
    "compact_input",
    "compact_remote",
    "file_settings",
    "make_summarizer",
    "options_from_settings",
    "output_names",
    "over_parts",
    "standing_over",
    "write_chunks",
    "write_remote",
    "write_result",
]

DEFAULTS: Mapping[str, Any] = {
    "threshold": None,
    "max_tokens": None,
    "context_window": None,
    "fail_on_threshold": False,
    "force": False,
    "method": "heuristic",
    # summarize
    "summarizer": "extractive",
    "model": None,
    "api_base": None,
    "timeout": None,
    "summary_tokens": None,
    "keep_recent_tokens": None,  # None: each stage's own default
    "protect_first": 0,
    "cut_turn": False,
    "focus": None,
    "redact": True,
    "redact_records": False,  # `--redact`: every kept record too
    # prune
    "keep_recent": None,
    "min_chars": 200,
    "tools": None,
    "dedupe": True,
    "images": True,
    "archive": None,
}
"""Every setting of `compact_file`, with its built-in default."""


def options_from_settings(settings: Mapping[str, Any], *, dry_run: bool = False) -> CompactOptions:
    """`CompactOptions` from resolved settings (see `DEFAULTS`).

    `keep_recent_tokens` goes to both stages when set, and each stage keeps its own default
    when not; the kept tail is fitted to the budget only when it was not set.
    """
    keep = settings.get("keep_recent_tokens")
    tools = settings.get("tools")
    prune_options = PruneOptions(
        keep_recent_tokens=keep if keep is not None else PruneOptions().keep_recent_tokens,
        keep_recent=settings.get("keep_recent"),
        min_chars=settings.get("min_chars", 200),
        tools=frozenset(t.strip() for t in tools.split(",") if t.strip()) if tools else None,
        dedupe=settings.get("dedupe", True),
        images=settings.get("images", True),
        archive=None if dry_run else settings.get("archive"),
    )
    summarize_options = SummarizeOptions(
        keep_recent_tokens=keep if keep is not None else SummarizeOptions().keep_recent_tokens,
        protect_first=settings.get("protect_first", 0),
        cut_turn=settings.get("cut_turn", False),
        summary_tokens=settings.get("summary_tokens"),
        focus=settings.get("focus"),
        redact=settings.get("redact", True),
    )
    return CompactOptions(
        prune=prune_options,
        summarize=summarize_options,
        force=bool(settings.get("force", False)),
        threshold=settings.get("threshold"),
        max_tokens=settings.get("max_tokens"),
        context_window=settings.get("context_window"),
        fit=keep is None,
    )


@dataclass(frozen=True, slots=True)
class Destination:
    """Where one file's result goes.

    `stdout`; `file` (`path`, written atomically); `in_place` (the input replaced atomically,
    the original kept as `backup_path(input)` first); `none` (`--dry-run`: nothing written).
    """

    mode: Literal["stdout", "file", "in_place", "none"]
    path: str | None = None


@dataclass(frozen=True, slots=True)
class FilePlan:
    """What `compact_file` needs besides the path; plain values, so it crosses processes."""

    given: Mapping[str, Any]  # settings from options and environment (they beat the policy)
    policies: Policies | None  # the policy file of each input; None: no policy file
    destinations: Mapping[str, Destination]
    format: str | None = None
    on_bad_line: OnBadLine = "error"
    dry_run: bool = False
    stats: bool = False  # return the stats report in `FileResult.details["stats"]`
    boundary: bool = False  # return the boundary details in `FileResult.details["boundary"]`
    repair: bool = False  # repair an invalid input (`compactcli.repair`) instead of refusing it
    summary: bool = False  # return the summary written in `FileResult.details["summary"]`


def make_summarizer(
    settings: Mapping[str, Any], *, cache: SummaryCache | None = None
) -> Summarizer:
    """The summarizer resolved `settings` name: the extractive one, or for `llm` the LLM
    summarizer of their `model`, `api_base` and `timeout`, answered from `cache` first when
    one is given (`compactcli.cache.CachedSummarizer`)."""
    from compactcli.summarizers import get_summarizer

    if settings.get("summarizer", "extractive") != "llm":
        return get_summarizer("extractive")
    extra: dict[str, Any] = {"api_base": settings.get("api_base")}
    if settings.get("timeout") is not None:
        extra["timeout"] = float(settings["timeout"])
    inner = get_summarizer("llm", model=settings.get("model"), **extra)
    if cache is None:
        return inner
    from compactcli.cache import CachedSummarizer

    chosen = {"model": settings.get("model"), "api_base": settings.get("api_base")}
    return CachedSummarizer(inner, cache, chosen)


def file_settings(plan: FilePlan, path: str) -> dict[str, Any]:
    """The settings for `path`: options and environment, then the policy, then `DEFAULTS`."""
    return resolve(plan.given, _policy(plan, path), path, DEFAULTS)


def _summary_text(transcript: Transcript) -> str:
    """The text of the newest summary in `transcript`'s context, as the model reads it."""
    context = get_dialect(transcript.format).context(transcript)
    newest = next((m for m in reversed(context) if m.summary), None)
    if newest is None:
        return ""
    return "\n".join(b.text for b in newest.blocks if b.kind == "text" and b.text)


def _policy(plan: FilePlan, path: str) -> Policy | None:
    return plan.policies.for_path(path) if plan.policies is not None else None


@collector_paused()
def compact_file(
    path: str, plan: FilePlan, summarizer_for: Callable[[Mapping[str, Any]], Summarizer]
) -> batch.FileResult:
    """Compact one file and write its result.

    Read and compact it (`compact_input`), then write the output (standard output, a file with
    the input's permission bits, or in place with a backup: `compactcli.in_place`) and return
    its `compactcli.batch.FileResult`. Outputs are written only through
    `compactcli.batch.WRITES`; the output of a run of one file settles the run
    (`compactcli.interrupts.settle`). In place, a file that changed since it was read
    (`file_identity`: an agent still writing to its session) is left as it is (`OutputError`).
    """
    destination = plan.destinations.get(path, Destination("stdout"))
    seen = file_identity(path) if destination.mode == "in_place" else None
    done = compact_input(path, plan, summarizer_for, written=destination.mode != "none")
    output, backup = write_result(
        done.before,
        done.after,
        destination,
        changed=done.changed,
        seen=seen,
        final=len(plan.destinations) == 1,
    )
    lifetime.keep(done.before, done.after)  # a process about to exit need not free them
    return dataclasses.replace(done.result, output=output, backup=backup)


@dataclass(frozen=True, slots=True)
class Remote:
    """One file compacted where it cannot be written (another process or machine): its
    `FileResult` and the bytes to write, if any (`compact_remote`, then `write_remote`)."""

    result: batch.FileResult
    data: bytes | None
    changed: bool


def compact_remote(
    path: str, plan: FilePlan, summarizer_for: Callable[[Mapping[str, Any]], Summarizer]
) -> Remote:
    """`compact_input` on file `path`, with its output rendered as bytes for `write_remote`
    (none for a dry run)."""
    destination = plan.destinations.get(path, Destination("stdout"))
    done = compact_input(path, plan, summarizer_for, written=destination.mode != "none")
    data = None if destination.mode == "none" else b"".join(render(done.after.records))
    return Remote(done.result, data, done.changed)


def write_remote(
    path: str, remote: Remote, plan: FilePlan, seen: Identity | None
) -> batch.FileResult:
    """Write what `compact_remote` made for `path` where the plan says, as `compact_file`
    writes it; `seen` is the input's `file_identity` taken before it was read (in place)."""
    destination = plan.destinations.get(path, Destination("stdout"))
    if remote.data is None:
        return remote.result
    output, backup = write_chunks(
        path,
        [remote.data],
        destination,
        changed=remote.changed,
        seen=seen,
        final=len(plan.destinations) == 1,
    )
    return dataclasses.replace(remote.result, output=output, backup=backup)


@dataclass(frozen=True, slots=True)
class Compacted:
    """One input compacted, before anything is written: its `FileResult` (no output or backup
    yet), the transcripts before and after, and whether replacing the file in place would
    change it (`changed`)."""

    result: batch.FileResult
    before: Transcript
    after: Transcript
    changed: bool


@collector_paused()
def compact_input(
    path: str,
    plan: FilePlan,
    summarizer_for: Callable[[Mapping[str, Any]], Summarizer],
    *,
    data: bytes | None = None,
    written: bool = True,
) -> Compacted:
    """Read and compact one input: the file `path`, or `data` as the bytes of a file so named.

    Read, admit (an input that fails `validate` is refused with `InvalidTranscript` unless the
    plan says to repair it), resolve the settings, compact, redact every kept record too with
    `redact_records` (`--redact`: `compactcli.redact_transcript`; the archive stays verbatim)
    and, when the result is to be `written` and changed, record how to undo it
    (`compactcli.undo.record`). Nothing is written but the archive.
    """
    bad = BadLines()
    transcript = read_transcript(
        path, plan.format, on_bad_line=plan.on_bad_line, bad=bad, data=data
    )
    verb = "skipped" if plan.on_bad_line == "skip" else "kept unparsed"
    warnings = [f"{transcript.source}:{line}: {verb}: {reason}" for line, reason in bad.lines]
    admitted = admit(transcript, repair=plan.repair)  # an invalid input goes no further
    settings = file_settings(plan, path)
    options = options_from_settings(settings, dry_run=plan.dry_run)
    dialect = get_dialect(transcript.format)
    counter = get_counter(
        settings["method"], model=dialect.model(admitted.transcript), format=transcript.format
    )
    transcript = admitted.staged(counter)
    if admitted.repairs:  # as read back once written: the stages compare records with it
        transcript = settle(transcript).evolve(sha256=transcript.sha256)
    summarizer = summarizer_for(settings)
    with counting_calls() as made:  # every request sent, fit attempts and retries included
        result = compact(transcript, options, summarizer=summarizer, counter=counter)
    check = compact_check(result)
    assert check is not None
    redaction = redact_transcript(result) if settings.get("redact_records") else None
    if redaction is not None:  # `--redact`: the kept records too (the archive stays verbatim)
        result = redaction.transcript
    summary = summary_details(result)
    for warning in summary.warnings:
        warnings.append(f"{transcript.source}: {warning}")
    notes = []
    if check.not_summarized:
        notes.append(f"{transcript.source}: not summarized: {check.not_summarized}")
        if check.over:
            standing = standing_over(result, counter, min(limit for _, limit, _ in check.over))
            if standing:
                notes.append(f"{transcript.source}: {standing}")
    if check.kept_input is not None:
        warnings.append(f"{transcript.source}: input kept: {check.kept_input}")
    elif check.over and check.summarized:
        limit = min(limit for _, limit, _ in check.over)
        parts = over_parts(result, counter, limit, smaller_total=check.smaller_summary_total)
        if parts:
            notes.append(f"{transcript.source}: still over: {parts}")
    if check.changed and not plan.dry_run and written:
        result = undo.record(
            transcript, result, archive=settings.get("archive"), inline=redaction is None
        )
    status = "compacted" if check.changed else ("kept" if check.kept_input else "unchanged")
    if status == "unchanged" and admitted.repairs:
        status = "repaired"
    if status == "unchanged" and redaction is not None and redaction.records:
        status = "redacted"
    fail_on = bool(settings["fail_on_threshold"])
    failing = [o for o in check.over if o[0] == "budget" or (fail_on and o[0] == "threshold")]
    code = 1 if failing or (check.kept_input and "validate" in check.kept_input) else 0
    details: batch.FileDetails = {"check": check.to_dict()}
    policy = _policy(plan, path)
    if policy is not None:
        details["policy"] = policy.path
    if admitted.repairs:
        details["repairs"] = [r.to_dict() for r in admitted.repairs]
    if plan.dry_run:  # its token line gives the figures of the check, as the table does
        from compactcli.diff import diff

        details["diff"] = dataclasses.replace(
            diff(transcript, result, counter=counter),
            tokens_before=check.tokens_before,
            tokens_after=check.tokens_after,
            method=check.method,
        )
    if plan.stats:
        details["stats"] = report(result)
    if redaction is not None:
        details["redact"] = redaction.to_dict()
        if plan.stats:
            details["stats"]["redact"] = details["redact"]
    if plan.boundary:
        found = [s.details["boundary"] for s in result.stats if "boundary" in s.details]
        details["boundary"] = found[-1] if found else None
    if plan.summary and check.summarized:
        details["summary"] = _summary_text(result)
    over_what = check.over[-1] if check.over else None
    file_result = batch.FileResult(
        path=transcript.source,
        status=status,
        tokens_before=check.tokens_before,
        tokens_after=check.tokens_after,
        method=check.method,
        code=code,
        message=check.kept_input or "",
        target=over_what[1] if over_what else None,
        target_name=over_what[0] if over_what else "",
        over=over_what[2] if over_what else 0,
        llm_calls=made.calls,
        summarized=check.summarized,
        warnings=tuple(warnings),
        notes=tuple(notes),
        details=details,
    )
    changed = check.changed or bool(admitted.repairs) or bool(redaction and redaction.records)
    return Compacted(file_result, transcript, result, changed)


def standing_over(result: Transcript, counter: TokenCounter, limit: int) -> str | None:
    """What the standing context (the leading messages the format always keeps: system and
    developer prompts, injected instructions) takes, when that alone is over `limit`; None
    otherwise. No summary can bring such a result under its limit."""
    context = get_dialect(result.format).context(result)
    head = get_writer(result.format).initial(context)
    taken = sum(counter.message_tokens(m) for m in context[:head])
    if not head or taken <= limit:
        return None
    what = "message" if head == 1 else f"{head} messages"
    return (
        f"the standing context (the first {what}: system and developer prompts, injected "
        f"instructions) alone takes {taken:,} tokens, over {limit:,}"
    )


def over_parts(
    result: Transcript, counter: TokenCounter, limit: int, *, smaller_total: int | None = None
) -> str | None:
    """Where the tokens of a summarized `result` that is over `limit` are: the messages kept
    before its newest summary (a head the format always keeps), the summary, and the kept tail
    after it, as the stages count them; and whether the messages kept around the summary leave
    it room: a summary's body is made no smaller than `MIN_SUMMARY_TOKENS` (or than it is), and
    its message holds more (the preamble, a quoted request, the closing line; a request that
    takes most of it is named). `smaller_total`
    is the count a smaller summary gave when fitting tried one and it was still over
    (`CompactCheck.smaller_summary_total`). The kept messages count what the count of the whole
    result counts (a response at least the output its usage recorded). None when its context
    holds no summary."""
    context = get_dialect(result.format).context(result)
    at = next((i for i in range(len(context) - 1, -1, -1) if context[i].summary), None)
    if at is None:
        return None
    tokens = [counter.message_tokens(m) for m in context]
    # a response costs at least the output its usage recorded (thinking the file leaves out),
    # as the count of the whole result has it: kept messages' tokens, the tail's when there is one
    extra = max(0, context_tokens(result, counter) - sum(tokens))
    kept_at = len(tokens) - 1 if at < len(tokens) - 1 else at - 1
    if extra and kept_at >= 0:
        tokens[kept_at] += extra
    kept = sum(tokens) - tokens[at]
    summary, tail = f"{tokens[at]:,}", f"({_messages(context[at + 1 :])}) {sum(tokens[at + 1 :]):,}"
    if at == 0:
        parts = f"the summary takes {summary} tokens and the kept tail {tail}"
    else:
        before = f"{sum(tokens[:at]):,} tokens"
        if at == 1:
            head = f"the message before the summary takes {before}"
        else:
            head = f"the {at} messages before the summary take {before}"
        parts = f"{head}, the summary {summary} and the kept tail {tail}"
    if kept >= limit:
        return f"{parts}; the kept messages alone are over {limit:,}"
    # no summary budget goes under MIN_SUMMARY_TOKENS, nor shrinks what the summary's message
    # holds besides the body
    body = summary_body(context[at])
    written = counter.text_tokens(body) if body is not None else tokens[at]
    smallest = tokens[at] - written + min(written, MIN_SUMMARY_TOKENS)
    if limit - kept < smallest:
        request = quoted_request(context[at])  # kept whole: the summary is no smaller
        quoted = counter.text_tokens(request) if request else 0
        why = (
            f", {quoted:,} of them the latest request it quotes whole"
            if quoted * 2 > smallest
            else ""
        )
        return (
            f"{parts}; the kept messages leave the summary {limit - kept:,} tokens, "
            f"less than its smallest ({smallest:,}{why})"
        )
    if smaller_total is not None:
        return f"{parts}; a smaller summary left it over too ({smaller_total:,} tokens)"
    return f"{parts}; a smaller summary (--summary-tokens) could bring it under"


def _messages(messages: Sequence[Message]) -> str:
    return f"{len(messages)} message{'' if len(messages) == 1 else 's'}"


def write_result(
    before: Transcript,
    after: Transcript,
    destination: Destination,
    *,
    changed: bool,
    seen: Identity | None,
    final: bool = False,
) -> tuple[str | None, str | None]:
    """Write `after` where `destination` says; (output path, backup path). In place, `seen` is
    the input's `file_identity` when it was read (`compactcli.in_place.replace`). A file gets
    the input's permission bits. `final`: this is the run's only output, so the run settles
    once it is written (`compactcli.interrupts.settle`)."""
    if destination.mode == "none":
        return None, None
    chunks = list(render(after.records))
    return write_chunks(before.source, chunks, destination, changed=changed, seen=seen, final=final)


def write_chunks(
    source: str,
    chunks: list[bytes],
    destination: Destination,
    *,
    changed: bool,
    seen: Identity | None,
    final: bool = False,
) -> tuple[str | None, str | None]:
    """Write the bytes `chunks`, the result for input `source`, as `write_result` does."""
    if destination.mode == "none":
        return None, None
    if destination.mode == "in_place":
        if not changed:
            return None, None  # nothing to replace: no write, no backup
        return in_place.replace(source, chunks, seen, final=final)
    target = destination.path if destination.mode == "file" else "-"
    assert target is not None
    if target != "-":
        folder = os.path.dirname(os.path.abspath(target))
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as error:
            reason = error.strerror or str(error)
            raise OutputError(f"{folder}: cannot create the output folder: {reason}") from None
    with batch.WRITES.writing(), interrupts.held(target != "-"):
        write_bytes(chunks, target, mode=atomic.permission_bits(source))
        if final:
            interrupts.settle()
    return target, None


def output_names(
    arguments: Sequence[str], expand: Callable[[list[str]], list[str]]
) -> list[tuple[str, str]]:
    """(input file, name relative to `--out-dir`) for each file the arguments name.

    A folder's files keep their path below it; a file given by name keeps its file name. Two
    inputs that would share an output name raise `UsageError`.
    """
    pairs: list[tuple[str, str]] = []
    for argument in arguments:
        if argument == "-":
            raise UsageError("--out-dir needs files or folders, not standard input")
        if os.path.isdir(argument):
            for path in expand([argument]):
                pairs.append((path, os.path.relpath(path, argument)))
        else:
            for path in expand([argument]):
                pairs.append((path, os.path.basename(path)))
    seen: dict[str, str] = {}
    for path, name in pairs:
        if name in seen and os.path.abspath(seen[name]) != os.path.abspath(path):
            raise UsageError(
                f"{seen[name]} and {path} would both be written to {name} in --out-dir"
            )
        seen[name] = path
    return pairs
