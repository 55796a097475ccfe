"""The prune stage: clear the content of old tool results, cheaply and without an LLM.

`prune(transcript, options, counter=...)` returns a new transcript in which old, long results of
compactable tools, outside a protected recent tail, have their content replaced by a one-line
digest placeholder, older copies of an identical output are cleared, and old images become a
marker where the marker costs fewer tokens than the image. A call keeps its result record and
id, nothing outside the context view is touched, a second run changes nothing, and with
`archive` every cleared content is kept under its hash. The stage appends one `StageStats` (its
result a `PruneResult`) and, when it changed anything, the format's boundary record, which holds
how to undo the step (`compactcli.undo.record`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

from compactcli import boundary, undo
from compactcli.archive import Archive, content_bytes, sha256
from compactcli.error_lines import error_line
from compactcli.estimate import context_tokens, note_context_tokens
from compactcli.formats import get_dialect
from compactcli.formats.base import Dialect, UserShell
from compactcli.outcomes import (
    CLEARED_FAILURE,
    CLEARED_SOFT,
    SOFT_LINES,
    outcome,
    reads_log,
    rejected,
)
from compactcli.placeholders import (
    CLEARED_DUPLICATE,
    CLEARED_IMAGE,
    CLEARED_PREFIXES,
    CLEARED_RESULT,
)
from compactcli.redact import redact
from compactcli.stats import StageStats
from compactcli.tokens import TokenCounter
from compactcli.tools import (
    COMPACTABLE,
    SOFT_ERROR_KINDS,
    SOFT_ERROR_LINES,
    CallReads,
    ToolKind,
    call_kind,
    call_reads,
    main_argument,
    polled_command,
    shell_command,
    still_running,
)
from compactcli.transcript import Block, Message, Record, Transcript, get_in


class ClearedResult(TypedDict):
    """A tool result (or a command the user ran) the stage cleared, in its boundary details."""

    id: str | None
    tool: str
    line: int
    chars: int
    sha256: str
    duplicate: bool
    user: NotRequired[bool]  # a command the user ran, not a tool call


class ClearedImage(TypedDict):
    """An image the stage cleared, in its boundary details."""

    id: None
    tool: None
    line: int
    chars: int
    sha256: str
    image: bool


class PruneOptionsDict(TypedDict):
    """The options a prune boundary records."""

    keep_recent_tokens: int
    keep_recent: int | None
    min_chars: int
    tools: list[str] | None


class PruneBoundary(boundary.BoundaryDetails):
    """The boundary details of a prune that changed the transcript."""

    cleared: list[ClearedResult | ClearedImage]
    options: PruneOptionsDict


class PruneDetails(TypedDict, total=False):
    """`StageStats.details` of the prune stage: the boundary, when it changed anything."""

    boundary: PruneBoundary


@dataclass(frozen=True, slots=True)
class PruneResult:
    """What the prune stage recorded (`StageStats.result`)."""

    boundary: PruneBoundary | None = None  # None: nothing was cleared

    def to_details(self) -> PruneDetails:
        return {} if self.boundary is None else {"boundary": self.boundary}


@dataclass(frozen=True, slots=True)
class PruneOptions:
    """How the prune stage chooses what to clear."""

    keep_recent_tokens: int = 40_000
    keep_recent: int | None = None  # keep the newest N results instead of a token budget
    min_chars: int = 200
    tools: frozenset[str] | None = None  # tool names (any case); None: the compactable kinds
    dedupe: bool = True
    images: bool = True
    archive: str | None = None
    trigger: str = "manual"


@dataclass(slots=True)
class _Result:
    position: int  # in the context view
    message: Message
    block: Block
    tool: str
    kind: ToolKind  # of the call (`compactcli.tools.call_kind`)
    call: Block | None  # the call it answers, when found
    command_call: Block | None  # the call whose command it gives the output of (a poll's: the
    # command it polls, `still_running`), else `call`
    text: str  # what a placeholder replaces: the result's text, a user command's output
    value: Any  # the content as parsed: its bytes (`content_bytes`) are hashed and archived
    digest: str
    tokens: int
    user: bool = False  # the output of a command the user ran (`Dialect.user_shell`)
    lines: dict[bool, str] = field(default_factory=dict)  # placeholders made (`_line`)
    # what a placeholder says, found when one is made (most results keep their content)
    argument: str | None = None  # the call's main argument
    error: str | None = None  # the distinctive error line when the result failed, else ""
    soft: bool = False  # the error was printed by a call that did not fail
    read: CallReads | None = None  # what the call reads (`reads`)

    def main_argument(self) -> str:
        if self.argument is None:
            call = self.call
            self.argument = main_argument(self.tool, call.arguments) if call else ""
        return self.argument

    def reads(self) -> CallReads | None:
        """What the call reads (`compactcli.tools.call_reads`, found once); None without a
        call."""
        if self.read is None and self.call is not None:
            self.read = call_reads(self.call.name, self.call.arguments)
        return self.read

    def failure(self) -> str:
        if self.error is None:
            shell = self.kind == "shell"
            command = ""
            if shell and self.command_call is not None:
                command = shell_command(self.command_call.name, self.command_call.arguments)
            soft = self.kind in SOFT_ERROR_KINDS
            read = self.reads()
            log = read is not None and reads_log(read.paths)
            lines = SOFT_ERROR_LINES.get(self.kind, SOFT_LINES)
            result = outcome(
                self.block, shell=shell, command=command, soft=soft, log=log, soft_lines=lines
            )
            self.error = result.error if result.status in ("failed", "ok") else ""
            self.soft = result.status == "ok" and bool(result.error)
        return self.error


@dataclass(slots=True)
class _Edits:
    records: list[Record]
    dialect: Dialect
    archive: Archive | None
    cleared: list[ClearedResult | ClearedImage] = field(default_factory=list)
    freed: dict[str, int] = field(default_factory=dict)
    results: int = 0
    duplicates: int = 0
    images: int = 0
    chars: int = 0

    def keep(self, value: Any) -> None:
        """Archive a cleared content (given as parsed: its bytes are made only here)."""
        if self.archive is not None:
            self.archive.put(content_bytes(value))


def prune(
    transcript: Transcript, options: PruneOptions = PruneOptions(), *, counter: TokenCounter
) -> Transcript:
    """Clear old tool output in `transcript` and append one `StageStats` (stage "prune").

    On the context view, tool results outside the protected tail (the newest
    `keep_recent_tokens` of tool output, or the newest `keep_recent` results), longer than
    `min_chars`, from compactable tools, have their content replaced by a one-line digest
    placeholder: tool, main argument, size, and the sha256 of what was cleared. For a result
    that failed (an error result, a non-zero exit code, a traceback: `compactcli.outcomes.outcome`)
    the placeholder also keeps its distinctive error line (`; failed: <line>`, at most
    `ERROR_CHARS`), and for one that did not fail but printed an error (a build piped through
    `head`, a wrapper that says "Script completed") that line too (`; printed an error: <line>`),
    so the model and a later summary still see what went wrong; secrets in a placeholder are
    redacted (`compactcli.redact`). The output of a shell command the user ran, where the format
    sends it to the model (pi's `!cmd`, `Dialect.user_shell`), counts as a result of the tool
    `bash`: its output is cleared by the same rules, its command and exit code stay; the latest
    user message is never cleared (it is what the user is asking now), nor is an instruction
    file a call read (`AGENTS.md`, `SKILL.md`...: the rules the agent works by). A placeholder
    must be smaller than what it replaces, in characters and tokens, or the result stays whole.
    Older copies of an identical output are cleared too (the newest stays whole), and old
    images become a marker, unless the marker would cost as many tokens as the image (a tiny
    one, whose size its header gives). With `archive`, every cleared content is written there
    under its hash, so nothing is lost.

    A call keeps its result record and id; thinking blocks and records outside the context view
    are never touched; results already cleared are left alone, so a second run changes nothing;
    when nothing qualifies the transcript comes back unchanged (byte for byte, no boundary
    record). The `StageStats` result is a `PruneResult`, with the boundary details
    (`PruneBoundary`) when anything changed; then the format's boundary record is appended too.
    """
    started = time.perf_counter()
    dialect = get_dialect(transcript.format)
    context = dialect.context(transcript)
    results = _results(transcript, dialect, context, counter)
    protected = _protected(results, options, counter) | _latest_user_runs(context, results)
    tail_start = _tail_start(context, results, protected)

    edits = _Edits(
        list(transcript.records),
        dialect,
        Archive(options.archive) if options.archive else None,
    )
    eligible = [
        i not in protected
        and _clearable(r)
        and _long_enough(r, options)
        and not rejected(r.text)  # the user's answer, which may give a reason
        and not _instructions(r)  # (last: it reads the call's arguments)
        for i, r in enumerate(results)
    ]
    cleared = {
        i
        for i, r in enumerate(results)
        if eligible[i] and _compactable(r, options) and _fits(r, counter, duplicate=False)
    }
    whole: dict[str, int] = {}  # digest -> newest copy that stays whole
    for i, result in enumerate(results):
        if i not in cleared and not result.text.startswith(CLEARED_PREFIXES):
            whole[result.digest] = i
    for i, result in enumerate(results):
        later_whole = whole.get(result.digest, -1) > i
        if (
            options.dedupe
            and eligible[i]
            and later_whole
            and _fits(result, counter, duplicate=True)
        ):
            _clear(edits, result, counter, duplicate=True)
        elif i in cleared:
            _clear(edits, result, counter, duplicate=False)
    if options.images:
        for message in context[:tail_start]:
            if message.synthetic:
                continue
            for block in message.blocks:
                if block.kind == "image":
                    _clear_image(edits, message, block, counter)

    changed = bool(edits.results or edits.duplicates or edits.images)
    tokens_before = context_tokens(transcript, counter)
    if changed:
        pruned = transcript.evolve(records=tuple(edits.records))
        tokens_after = context_tokens(pruned, counter)
        # placeholders each smaller than their result can still leave the context no smaller
        # (a record's form around them): then nothing is written
        changed = tokens_after < tokens_before
    if not changed:
        return transcript.evolve(
            stats=(
                *transcript.stats,
                _stats(
                    transcript,
                    transcript,
                    _Edits(list(transcript.records), dialect, None),
                    counter,
                    tokens_before,
                    tokens_before,
                    started,
                    dialect,
                    context,
                    context,
                    PruneResult(),
                ),
            )
        )
    after_context = dialect.context(pruned)
    info: PruneBoundary = {
        **boundary.details(
            stage="prune",
            trigger=options.trigger,
            source_sha256=transcript.sha256,
            method=counter.method,
            tokens_before=tokens_before,
            tokens_after=tokens_after,
        ),
        "cleared": edits.cleared,
        "options": {
            "keep_recent_tokens": options.keep_recent_tokens,
            "keep_recent": options.keep_recent,
            "min_chars": options.min_chars,
            "tools": sorted(options.tools) if options.tools is not None else None,
        },
    }
    marker = dialect.prune_boundary(pruned, info)
    if marker:  # how to undo this step, in its boundary record (`compactcli restore`)
        pruned = undo.record(
            transcript,
            pruned.evolve(records=(*pruned.records, *marker)),
            archive=options.archive,
            stage="prune",
            journal=False,
        )
        note_context_tokens(pruned, counter, tokens_after)  # a marker leaves the context be
    stats = _stats(
        transcript,
        pruned,
        edits,
        counter,
        tokens_before,
        tokens_after,
        started,
        dialect,
        context,
        after_context,
        PruneResult(info),
    )
    return pruned.evolve(stats=(*transcript.stats, stats))


def _results(
    transcript: Transcript, dialect: Dialect, context: Sequence[Message], counter: TokenCounter
) -> list[_Result]:
    calls: dict[str, Block] = {}
    for message in context:
        for block in message.blocks:
            if block.kind == "tool_call" and block.call_id:
                calls[block.call_id] = block
    found: list[_Result] = []
    records = transcript.records
    running: dict[tuple[str, str], Block] = {}  # commands still running, by what polls name
    for position, message in enumerate(context):
        for block in message.blocks:
            if block.kind != "tool_result":
                if message.role == "user" and block.kind == "text":
                    shell = dialect.user_shell(records[message.index], block)
                    if shell is not None:
                        found.append(_user_result(position, message, block, shell, counter))
                continue
            call = calls.get(block.call_id or "")
            tool = block.name or (call.name if call else None) or "tool"
            kind = call_kind(tool, call.arguments if call else None)
            command_call = call
            if call is not None and kind == "shell":  # a poll: the command it polls
                polled = polled_command(running, call.name, call.arguments, block.text, call)
                command_call = polled or call  # a poll that failed: its own failure
                started = still_running(block.text)
                if started is not None:
                    running[started] = command_call
            raw = transcript.records[message.index].raw
            try:
                value = get_in(raw, (*block.path, dialect.result_content_key))
            except (KeyError, IndexError, TypeError):
                value = block.text
            found.append(
                _Result(
                    position,
                    message,
                    block,
                    tool,
                    kind,
                    call,
                    command_call,
                    block.text,
                    value,
                    sha256(content_bytes(value)),  # the bytes go at once: memory is reused
                    counter.block_tokens(block),
                )
            )
    return found


USER_SHELL_TOOL = "bash"
"""The tool a command the user ran is named after in placeholders, `--tools` and the stats."""


def _user_result(
    position: int, message: Message, block: Block, shell: UserShell, counter: TokenCounter
) -> _Result:
    return _Result(
        position,
        message,
        block,
        USER_SHELL_TOOL,
        "shell",
        None,
        None,
        shell.output,
        shell.output,
        sha256(content_bytes(shell.output)),
        counter.text_tokens(shell.output),
        user=True,
        argument=shell.command,
        error=(error_line(shell.output) or "failed") if shell.failed else "",
    )


def _protected(
    results: Sequence[_Result], options: PruneOptions, counter: TokenCounter
) -> set[int]:
    if options.keep_recent is not None:
        return set(range(max(0, len(results) - options.keep_recent), len(results)))
    protected: set[int] = set()
    total = 0
    for i in range(len(results) - 1, -1, -1):
        total += results[i].tokens
        if total > options.keep_recent_tokens:
            break
        protected.add(i)
    return protected


def _latest_user_runs(context: Sequence[Message], results: Sequence[_Result]) -> set[int]:
    """The command the user ran, when it is the latest user message (tool results aside): what
    the user is asking now, never cleared."""
    for position in range(len(context) - 1, -1, -1):
        message = context[position]
        if message.role == "user" and any(b.kind != "tool_result" for b in message.blocks):
            return {i for i, r in enumerate(results) if r.user and r.position >= position}
    return set()


def _tail_start(context: Sequence[Message], results: Sequence[_Result], protected: set[int]) -> int:
    """The first context position of the recent part: images before it are old.

    Everything after the newest unprotected tool result is recent, and so is the latest user
    prompt; with no unprotected result nothing is old.
    """
    old = [r.position for i, r in enumerate(results) if i not in protected]
    if not old:
        return 0
    start = max(old) + 1
    for position in range(len(context) - 1, -1, -1):
        message = context[position]
        if message.role == "user" and any(b.kind != "tool_result" for b in message.blocks):
            return min(start, position)
    return start


def _clearable(result: _Result) -> bool:
    return not result.message.synthetic and not result.text.startswith(CLEARED_PREFIXES)


def _instructions(result: _Result) -> bool:
    """Whether the result is an instruction file a call read (`AGENTS.md`, `CLAUDE.md`, a
    skill's `SKILL.md`: `compactcli.tools.CallReads.instructions`): the rules the agent works by,
    kept whole however old."""
    if result.block.is_error:
        return False
    read = result.reads()
    return read is not None and read.instructions


def _long_enough(result: _Result, options: PruneOptions) -> bool:
    return len(result.text) > options.min_chars or bool(result.block.images)


def _compactable(result: _Result, options: PruneOptions) -> bool:
    if options.tools is not None:
        return result.tool.lower() in {t.lower() for t in options.tools}
    return result.kind in COMPACTABLE


def placeholder(
    result_tool: str, argument: str, text: str, digest: str, error: str = "", *, soft: bool = False
) -> str:
    """The one-line digest that replaces a cleared tool result (with its error line, if any:
    `; failed: ` for a call that failed, `; printed an error: ` for one that did not). Secrets
    in the argument and the error line are redacted (`compactcli.redact`)."""
    lines = text.count("\n") + 1 if text else 0
    what = redact(f"{result_tool} {argument}".strip())
    failed = _failure(error, soft=soft)
    return (
        f"{CLEARED_RESULT} {what} — {lines:,} lines, {len(text):,} chars, sha256:{digest}{failed}]"
    )


def _failure(error: str, *, soft: bool) -> str:
    """What a placeholder says after its digest of a call that failed (`; failed: `) or printed
    an error (`; printed an error: `), its error line redacted; "" for a call that did neither."""
    label = CLEARED_SOFT if soft else CLEARED_FAILURE
    return f"{label}{redact(' '.join(error.split()))}" if error.strip() else ""


def duplicate_placeholder(
    result_tool: str, text: str, digest: str, error: str = "", *, soft: bool = False
) -> str:
    """The line that replaces an older copy of an output that appears again later (with the
    error line of a call that failed or printed one, as `placeholder` writes it)."""
    return (
        f"{CLEARED_DUPLICATE} same output as a later {result_tool} call — "
        f"{len(text):,} chars, sha256:{digest}{_failure(error, soft=soft)}]"
    )


def _line(result: _Result, *, duplicate: bool) -> str:
    """The line that replaces `result` (made once per result and kind, then remembered)."""
    found = result.lines.get(duplicate)
    if found is None:
        text = result.text
        error = result.failure()
        if duplicate:
            found = duplicate_placeholder(result.tool, text, result.digest, error, soft=result.soft)
        else:
            found = placeholder(
                result.tool, result.main_argument(), text, result.digest, error, soft=result.soft
            )
        result.lines[duplicate] = found
    return found


def _fits(result: _Result, counter: TokenCounter, *, duplicate: bool) -> bool:
    """Whether the placeholder is smaller than what it replaces, in characters and tokens."""
    line = _line(result, duplicate=duplicate)
    return len(line) < len(result.text) and counter.text_tokens(line) < result.tokens


def _clear(edits: _Edits, result: _Result, counter: TokenCounter, *, duplicate: bool) -> None:
    text = result.text
    line = _line(result, duplicate=duplicate)
    index = result.message.index
    clear = edits.dialect.clear_user_shell if result.user else edits.dialect.clear_result
    edits.records[index] = clear(edits.records[index], result.block, line)
    edits.keep(result.value)
    freed = max(0, result.tokens - counter.text_tokens(line))
    edits.freed[result.tool] = edits.freed.get(result.tool, 0) + freed
    edits.chars += len(text)
    if duplicate:
        edits.duplicates += 1
    else:
        edits.results += 1
    entry: ClearedResult = {
        "id": result.block.call_id,
        "tool": result.tool,
        "line": edits.records[index].lineno,
        "chars": len(text),
        "sha256": result.digest,
        "duplicate": duplicate,
    }
    if result.user:
        entry["user"] = True  # a command the user ran, not a tool call
    edits.cleared.append(entry)


def _clear_image(edits: _Edits, message: Message, block: Block, counter: TokenCounter) -> None:
    """Replace an old image by a marker, when the marker costs fewer tokens than the image."""
    raw = get_in(edits.records[message.index].raw, block.path)
    data = content_bytes(raw)
    digest = sha256(data)
    media = _media_type(raw)
    line = f"{CLEARED_IMAGE} {media}, {len(data):,} bytes, sha256:{digest}]"
    if counter.text_tokens(line) >= counter.block_tokens(block):
        return
    index = message.index
    edits.records[index] = edits.dialect.replace_with_text(edits.records[index], block, line)
    edits.keep(raw)
    edits.images += 1
    edits.cleared.append(
        {
            "id": None,
            "tool": None,
            "line": edits.records[index].lineno,
            "chars": len(data),
            "sha256": digest,
            "image": True,
        }
    )


def _media_type(raw: Any) -> str:
    if isinstance(raw, dict):
        source = raw.get("source")
        if isinstance(source, dict) and isinstance(source.get("media_type"), str):
            return str(source["media_type"])
        for key in ("mimeType", "media_type", "mime_type"):
            if isinstance(raw.get(key), str):
                return str(raw[key])
        url = raw.get("image_url")
        url = url.get("url") if isinstance(url, dict) else url
        if isinstance(url, str) and url.startswith("data:"):
            return url[5:].split(";", 1)[0]
    return "image"


def _stats(
    before: Transcript,
    after: Transcript,
    edits: _Edits,
    counter: TokenCounter,
    tokens_before: int,
    tokens_after: int,
    started: float,
    dialect: Dialect,
    context_before: Sequence[Message],
    context_after: Sequence[Message],
    result: PruneResult,
) -> StageStats:
    return StageStats(
        stage="prune",
        method=counter.method,
        tokens_before=tokens_before,
        tokens_after=tokens_after,
        records_before=len(before.records),
        records_after=len(after.records),
        messages_before=len(context_before),
        messages_after=len(context_after),
        seconds=time.perf_counter() - started,
        changed=after.records is not before.records,
        results_cleared=edits.results,
        duplicates_cleared=edits.duplicates,
        images_cleared=edits.images,
        chars_cleared=edits.chars,
        tokens_freed_by_tool=dict(sorted(edits.freed.items())),
        result=result,
    )
