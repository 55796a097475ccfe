"""The summarize stage: replace the old middle of a conversation with one structured summary.

`summarize` keeps the conversation's head and its newest tail (`compactcli.stages.cuts`), has the
summarizer write a summary of the middle between them, updating any earlier summary found there
rather than summarizing it again, and writes it in the format's native form
(`compactcli.injection`). The result keeps the tail as read and the last user prompt, keeps tool
calls paired, validates, and is smaller on the context view; when it would not be, the input
comes back unchanged with the reason. What the stage did is recorded as typed records: its
`StageStats.result` is a `SummarizeResult`, holding a `SummaryInfo` and the `SummaryBoundary`.
"""

from __future__ import annotations

import dataclasses
import itertools
import operator
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NotRequired, TypedDict

from compactcli import boundary
from compactcli.estimate import context_tokens
from compactcli.formats import get_dialect, summary_wrappers
from compactcli.formats.base import Dialect, atomic_units
from compactcli.injection import (
    Injection,
    Writer,
    frame,
    get_writer,
    has_preamble,
    quote_head,
    quote_request,
    raw_item,
    split_request,
    unframe,
)
from compactcli.redact import redact
from compactcli.redact_transcript import redact_value
from compactcli.stages.cuts import SOFT_CEILING, Cut, NoCut, find_cut, is_prompt
from compactcli.stages.earlier import Earlier, carry_files
from compactcli.stages.earlier import earlier as earlier_of
from compactcli.stats import StageStats
from compactcli.summarizers import (
    Summarizer,
    SummarizerDetails,
    SummaryMaking,
    SummaryRequest,
    SummaryResult,
)
from compactcli.summarizers.fact_record import FactsDict
from compactcli.tokens import TokenCounter
from compactcli.transcript import Message, Record, Transcript
from compactcli.validation import validate

MIN_SUMMARY_TOKENS = 400
MAX_SUMMARY_TOKENS = 12_000


class Where(TypedDict):
    """A message's place: its id and its input line (0 for a record a stage created)."""

    id: str | None
    line: int


class SummaryRange(TypedDict):
    """The first and last message summarized (None when the middle held only earlier summaries)."""

    first: Where | None
    last: Where | None


class KeptTailDict(TypedDict):
    """`KeptTail.to_dict()`."""

    head_messages: int
    tail_messages: int
    tail_tokens: int


class SummaryInfoDict(SummaryMaking):
    """`SummaryInfo.to_dict()`: `details["summarize"]`, and keys of the boundary details."""

    summarizer_details: SummarizerDetails
    messages_summarized: int
    summary_tokens: int
    updated_earlier_summary: bool
    range: SummaryRange
    kept: KeptTailDict
    pinned_prompt: NotRequired[Where]
    carried_request: NotRequired[bool]
    rewritten: NotRequired[list[int]]


class SummaryOptionsDict(TypedDict):
    """The options a summary's boundary records (`summary_tokens`: the budget used)."""

    keep_recent_tokens: int
    protect_first: int
    cut_turn: bool
    summary_tokens: int
    redact: bool


class SummaryBoundary(boundary.BoundaryDetails, SummaryInfoDict):
    """The boundary details of a summary: the common keys, the summary's, and these."""

    focus: str | None
    options: SummaryOptionsDict
    facts: FactsDict


class SummarizeDetails(TypedDict, total=False):
    """`StageStats.details` of the summarize stage (`SummarizeResult.to_details()`)."""

    reason: str
    summarize: SummaryInfoDict
    boundary: SummaryBoundary


@dataclass(frozen=True, slots=True)
class KeptTail:
    """What a summary kept around the middle it replaced."""

    head_messages: int
    tail_messages: int
    tail_tokens: int

    def to_dict(self) -> KeptTailDict:
        return {
            "head_messages": self.head_messages,
            "tail_messages": self.tail_messages,
            "tail_tokens": self.tail_tokens,
        }


@dataclass(frozen=True, slots=True)
class SummaryInfo:
    """One summary the stage made, used or not, and how (written as `details["summarize"]`)."""

    summarizer: str
    model: str | None
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: float
    fallback: str | None
    warnings: tuple[str, ...]
    summarizer_details: SummarizerDetails
    messages_summarized: int
    summary_tokens: int  # of the summary's text as written (framing and quotes included)
    updated_earlier_summary: bool
    range: SummaryRange
    kept: KeptTail
    pinned_prompt: Where | None = None  # the current turn's prompt, cut and quoted
    carried_request: bool = False  # a request an earlier summary of ours quoted, quoted again
    rewritten: tuple[int, ...] = ()  # input lines of kept records the format made us rewrite

    @property
    def asked_a_model(self) -> bool:
        return self.summarizer == "llm" or self.llm_calls > 0

    def to_dict(self) -> SummaryInfoDict:
        data: SummaryInfoDict = {
            "summarizer": self.summarizer,
            "model": self.model,
            "llm_calls": self.llm_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost": self.cost,
            "fallback": self.fallback,
            "warnings": list(self.warnings),
            "summarizer_details": self.summarizer_details.copy(),
            "messages_summarized": self.messages_summarized,
            "summary_tokens": self.summary_tokens,
            "updated_earlier_summary": self.updated_earlier_summary,
            "range": self.range,
            "kept": self.kept.to_dict(),
        }
        if self.pinned_prompt is not None:
            data["pinned_prompt"] = self.pinned_prompt
        elif self.carried_request:
            data["carried_request"] = True
        if self.rewritten:
            data["rewritten"] = list(self.rewritten)
        return data

    def redacted(self) -> SummaryInfo:
        """This with the secrets in its strings redacted (warnings and fallback reasons may
        quote a provider's answer), as `compactcli.redact_transcript.redact_value` redacts
        its JSON."""
        data: SummaryInfoDict = redact_value(self.to_dict())[0]
        kept = data["kept"]
        return SummaryInfo(
            summarizer=data["summarizer"],
            model=data["model"],
            llm_calls=data["llm_calls"],
            prompt_tokens=data["prompt_tokens"],
            completion_tokens=data["completion_tokens"],
            cost=data["cost"],
            fallback=data["fallback"],
            warnings=tuple(data["warnings"]),
            summarizer_details=data["summarizer_details"],
            messages_summarized=data["messages_summarized"],
            summary_tokens=data["summary_tokens"],
            updated_earlier_summary=data["updated_earlier_summary"],
            range=data["range"],
            kept=KeptTail(kept["head_messages"], kept["tail_messages"], kept["tail_tokens"]),
            pinned_prompt=data.get("pinned_prompt"),
            carried_request=data.get("carried_request", False),
            rewritten=tuple(data.get("rewritten", ())),
        )


@dataclass(frozen=True, slots=True)
class SummarizeResult:
    """What the summarize stage did (`StageStats.result`)."""

    summary: SummaryInfo | None  # the summary made, used or not (None: none was made)
    reason: str | None = None  # why the input came back unchanged (None: it changed)
    boundary: SummaryBoundary | None = None  # our boundary details, when the summary was used

    def to_details(self) -> SummarizeDetails:
        details: SummarizeDetails = {}
        if self.reason is not None:
            details["reason"] = self.reason
        if self.summary is not None:
            details["summarize"] = self.summary.to_dict()
        if self.boundary is not None:
            details["boundary"] = self.boundary.copy()
        return details


@dataclass(frozen=True, slots=True)
class SummarizeOptions:
    """What the summarize stage keeps and how big a summary it asks for."""

    keep_recent_tokens: int = 20_000
    protect_first: int = 0
    cut_turn: bool = False  # the current turn may be cut, its prompt quoted (`stages.cuts`)
    summary_tokens: int | None = None  # None: scaled with what the summary replaces
    focus: str | None = None
    redact: bool = True
    trigger: str = "manual"


def default_summary_tokens(replaced: int) -> int:
    """The summary budget when none is given: a tenth of what it replaces, 400 to 12,000 tokens,
    and never more than half of it. A summary that updates an earlier one gets at least the
    earlier one's size plus this budget for the turns after it, so memory never shrinks by a
    round of compaction the user did not size."""
    budget = min(MAX_SUMMARY_TOKENS, max(MIN_SUMMARY_TOKENS, replaced // 10))
    return max(1, min(budget, replaced // 2))


def summarize(
    transcript: Transcript,
    options: SummarizeOptions = SummarizeOptions(),
    *,
    summarizer: Summarizer,
    counter: TokenCounter,
) -> Transcript:
    """Summarize the old middle of `transcript` and append one `StageStats` (stage "summarize").

    The context view is cut into a kept head, a middle and a kept tail
    (`compactcli.stages.cuts.find_cut`); the summarizer writes a summary of the middle, written in
    the format's native form. An earlier summary in the middle (ours, or the agent's own: Claude
    Code `isCompactSummary`, Codex `compacted`, pi `compaction`) is not summarized again: its
    body goes to the summarizer as `previous`, the facts we recorded with it (or pi's own file
    lists) as `previous_facts`, and the new summary replaces it; file lists carry over.

    - The kept tail is the input's: every record of it is written back byte for byte, and the
      context view of the result ends with it. Two exceptions, both forced by a format: an
      Anthropic list whose tail must open on a user message gets the summary merged into that
      message (`compactcli.formats.plain.writer`), and a Claude Code tail that is not one run of
      the chain on disk has a few `parentUuid`s relinked, tool results moved right after their
      calls inside their unit (`compactcli.formats.claude_code.writer`).
    - Tool calls stay paired; the result validates. Before returning, the result is checked
      (`_check`): it must validate (no error the input did not have), end with the kept tail,
      and be smaller on the context view. A result that fails a check is not returned: the
      input comes back unchanged, with the reason in the stats.
    - The last user prompt is kept, in the tail or in the head. When its turn alone is larger
      than the kept tail may grow (`find_cut`), it is pinned instead, with `cut_turn` or when
      nothing before it could be summarized (the `NoCut` is `turn_only`: a session of one prompt
      and the work on it, also after the agent's own compaction, but not after a summary of
      ours, whose run kept the prompt with its turn, so that a second run changes nothing:
      `_kept_turn`): summarized with the middle and quoted verbatim at the end of the summary,
      under `REQUEST_HEADING`, its place given in `details["summarize"]["pinned_prompt"]`, and
      the summary's preamble names it as the current task (`compactcli.injection.TASK_PREAMBLE`).
      When that summary would not make the context smaller, the cut that keeps the prompt is
      used, or, when there is none, the input comes back unchanged with both reasons. A request
      an earlier summary of ours quoted stays quoted, with that preamble, in the summary that
      replaces it while no prompt follows it (`details["summarize"]["carried_request"]`).
    - Nothing worth summarizing (the context fits in what must be kept, or only an earlier
      summary is left to replace) gives the input back unchanged, byte for byte, with the reason.
    - With `redact` (the default), what the stage writes besides the kept records has its
      secrets replaced (`compactcli.redact`): the summary, with its quoted request and head, and
      the boundary and stats details (facts carried from an earlier boundary, warnings).

    The `StageStats` holds tokens before and after on the context view, and its result, a
    `SummarizeResult`: the summary made (`SummaryInfo`, written under `details["summarize"]`),
    why the input came back unchanged (`details["reason"]`), and our boundary details
    (`SummaryBoundary`, under `details["boundary"]`: `compactcli.boundary.details` with the
    summary's facts), which the format's boundary record carries under `compactcli`.
    """
    started = time.perf_counter()
    dialect = get_dialect(transcript.format)
    writer = get_writer(transcript.format)
    context = dialect.context(transcript)
    tokens = [counter.message_tokens(m) for m in context]
    before = context_tokens(transcript, counter)
    stage = _Stage(transcript, options, dialect, counter, context, before, started)
    initial = writer.initial(context)
    accept = writer.acceptor(transcript, context)

    def cut_at(pin: bool) -> Cut | NoCut:
        return find_cut(
            context,
            tokens,
            keep_recent_tokens=options.keep_recent_tokens,
            protect_first=options.protect_first,
            initial=initial,
            alternating=writer.alternating,
            accept=accept,
            refusal=writer.refusal,
            pin=pin,
        )

    cut = cut_at(pin=options.cut_turn)
    alone: NoCut | None = None  # nothing but the current turn to summarize: it is cut instead
    uncut = ""  # why the current turn is not cut after all
    if isinstance(cut, NoCut) and cut.turn_only:
        uncut = _kept_turn(context, tokens, options.keep_recent_tokens, options.cut_turn)
        turn = cut_at(pin=True) if not uncut and not options.cut_turn else None
        if isinstance(turn, Cut):
            alone, cut = cut, turn
    if isinstance(cut, NoCut):
        return stage.unchanged(f"{cut.reason}; {uncut}" if uncut else cut.reason)
    done = _summarize_at(cut, stage, writer, summarizer, tokens)
    if isinstance(done, _Unused) and cut.pinned is not None and alone is None:
        # cutting the current turn did not pay: keep its prompt in the tail instead
        other = cut_at(pin=False)
        if isinstance(other, Cut):
            done = _summarize_at(other, stage, writer, summarizer, tokens)
    if isinstance(done, _Unused):
        reason = (
            done.reason if alone is None else f"{alone.reason}; with its turn cut, {done.reason}"
        )
        return stage.unchanged(reason, done.info)
    return done


def _kept_turn(context: Sequence[Message], tokens: Sequence[int], keep: int, cut_turn: bool) -> str:
    """Why the turn of the last user prompt, when nothing before it could be summarized, is not
    cut: it is within the kept tail's soft ceiling, or (without `cut_turn`) the newest summary
    before it is ours (the run that wrote it kept the prompt with its turn, and the same options
    keep deciding so). "" when it may be cut."""
    prompt = next((i for i in range(len(context) - 1, -1, -1) if is_prompt(context[i])), None)
    if prompt is None:
        return ""
    turn = sum(tokens[prompt:])
    if turn <= keep * SOFT_CEILING:
        return f"its turn ({turn:,} tokens) is within 1.5 times the kept tail ({keep:,} tokens)"
    summary = next((m for m in reversed(context[:prompt]) if m.summary), None)
    if cut_turn or summary is None:
        return ""
    if any(b.kind == "text" and has_preamble(b.text) for b in summary.blocks):
        return "an earlier summary of ours kept it with its turn (--cut-turn cuts the turn)"
    return ""


@dataclass(frozen=True, slots=True)
class _Unused:
    """A summary that was made but not used: why, and what it was."""

    reason: str
    info: SummaryInfo


def _summarize_at(
    cut: Cut,
    stage: _Stage,
    writer: Writer,
    summarizer: Summarizer,
    tokens: Sequence[int],
) -> Transcript | _Unused:
    """Summarize `cut`'s middle: the result, or why it is not used."""
    transcript, options, dialect = stage.transcript, stage.options, stage.dialect
    context, counter, before = stage.context, stage.counter, stage.before
    earlier = earlier_of(transcript, dialect, context[cut.head : cut.start])
    head_text = earlier.head
    if writer.quotes_head and cut.head:
        head_text = quote_head(context[: cut.head])
    replaced = sum(tokens[cut.head : cut.start])
    budget = _budget(
        options.summary_tokens,
        replaced,
        earlier.text,
        lambda: sum(tokens[i] for i in cut.middle if context[i].summary),
        counter,
    )
    quoted = context[cut.pinned] if cut.pinned is not None else None
    result = summarizer.summarize(
        _request(earlier, transcript, counter, budget, options.focus, options.redact, quoted)
    )
    carried = earlier.facts
    if options.redact and carried is not None:  # read from an earlier boundary, as written
        carried = carried.map_text(redact)
    facts = carry_files(result.facts, carried)  # the summarizer's facts are redacted already
    request = ""
    if cut.pinned is not None:
        request = quote_request(context[cut.pinned])
    elif earlier.request and not any(is_prompt(m) for m in context[cut.start :]):
        request = earlier.request  # the task an earlier summary quoted is still the current one
    text = frame(result.text, head_text, request)
    if options.redact:  # the quoted request and head are written too, not only the summary
        text = redact(text)
    info = stage.info(result, earlier, cut, text, carried=bool(request))
    if options.redact:  # warnings and fallback reasons may quote a provider's answer
        info = info.redacted()
    draft = Injection(context, cut, text, {}, facts, before, 0)
    measured = transcript.evolve(records=writer.write(transcript, draft))
    rewritten = _rewritten(transcript.records, measured.records)
    if rewritten:
        info = dataclasses.replace(info, rewritten=tuple(rewritten))
    after = context_tokens(measured, counter)
    if after >= before:
        reason = (
            f"the summary would not make the context smaller ({after:,} tokens, {before:,} before)"
        )
        return _Unused(reason, info)
    # what the summary and its framing add, against the turns they replace, by their text: a
    # summary no smaller than those turns is not used, whatever their recorded output saves
    written = sum(map(counter.message_tokens, dialect.context(measured))) - (sum(tokens) - replaced)
    if written >= replaced:
        reason = (
            f"the summary would not be smaller than the turns it replaces ({written:,} tokens, "
            f"{replaced:,} replaced)"
        )
        return _Unused(reason, info)
    details: SummaryBoundary = {
        **boundary.details(
            stage="summarize",
            trigger=options.trigger,
            source_sha256=transcript.sha256,
            method=counter.method,
            tokens_before=before,
            tokens_after=after,
        ),
        **info.to_dict(),
        "focus": redact(options.focus) if options.redact and options.focus else options.focus,
        "options": {
            "keep_recent_tokens": options.keep_recent_tokens,
            "protect_first": options.protect_first,
            "cut_turn": options.cut_turn,
            "summary_tokens": budget,
            "redact": options.redact,
        },
        "facts": facts.to_dict(),
    }
    injection = dataclasses.replace(draft, details=details, tokens_after=after)
    result_transcript = transcript.evolve(records=writer.write(transcript, injection))
    problem = _check(transcript, result_transcript, dialect, injection)
    if problem:
        return _Unused(f"the result failed a check and was not used: {problem}", info)
    return stage.changed(result_transcript, after, info, details)


@dataclass(slots=True)
class _Stage:
    """The stats side of one run."""

    transcript: Transcript
    options: SummarizeOptions
    dialect: Dialect
    counter: TokenCounter
    context: Sequence[Message]
    before: int
    started: float

    def info(
        self, result: SummaryResult, earlier: Earlier, cut: Cut, text: str, *, carried: bool
    ) -> SummaryInfo:
        """What the summary of `cut` is; `carried`: it quotes a request (an earlier summary's,
        when no prompt of the middle is pinned)."""
        turns = earlier.turns
        pinned = cut.pinned
        return SummaryInfo(
            summarizer=result.summarizer,
            model=result.model,
            llm_calls=result.llm_calls,
            prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens,
            cost=result.cost,
            fallback=result.fallback,
            warnings=tuple(result.warnings),
            summarizer_details=result.details.copy(),
            messages_summarized=len(turns),
            summary_tokens=self.counter.text_tokens(text),
            updated_earlier_summary=earlier.text is not None,
            range={
                "first": self.where(turns[0]) if turns else None,
                "last": self.where(turns[-1]) if turns else None,
            },
            kept=KeptTail(cut.head, len(self.context) - cut.start, cut.tail_tokens),
            pinned_prompt=self.where(self.context[pinned]) if pinned is not None else None,
            carried_request=pinned is None and carried,
        )

    def where(self, message: Message) -> Where:
        return {"id": message.id, "line": self.transcript.line_of(message.index)}

    def unchanged(self, reason: str, info: SummaryInfo | None = None) -> Transcript:
        result = SummarizeResult(info, reason=reason)
        stats = self._stats(self.transcript, self.before, self.context, result)
        return self.transcript.evolve(stats=(*self.transcript.stats, stats))

    def changed(
        self, result: Transcript, after: int, info: SummaryInfo, details: SummaryBoundary
    ) -> Transcript:
        context = self.dialect.context(result)
        stats = self._stats(result, after, context, SummarizeResult(info, boundary=details))
        return result.evolve(stats=(*self.transcript.stats, stats))

    def _stats(
        self,
        result: Transcript,
        after: int,
        context: Sequence[Message],
        summarized: SummarizeResult,
    ) -> StageStats:
        return StageStats(
            stage="summarize",
            method=self.counter.method,
            tokens_before=self.before,
            tokens_after=after,
            records_before=len(self.transcript.records),
            records_after=len(result.records),
            messages_before=len(self.context),
            messages_after=len(context),
            seconds=time.perf_counter() - self.started,
            changed=result.records is not self.transcript.records,
            result=summarized,
        )


def _rewritten(before: Sequence[Record], after: Sequence[Record]) -> list[int]:
    """The input lines of the records of `after` that are not records of `before` (as read)
    but carry a line of it: the kept records a format made us rewrite. Records in the same
    place are compared first, so that a long transcript is not searched record by record."""
    moved = [
        after[i] for i in itertools.compress(range(len(after)), map(operator.is_not, after, before))
    ]
    moved.extend(after[len(before) :])
    candidates = [r for r in moved if r.lineno]
    if not candidates:
        return []
    kept_as_read = {id(r) for r in before}
    return [r.lineno for r in candidates if id(r) not in kept_as_read]


def _summary_parts(message: Message) -> tuple[str, str] | None:
    """(body, quoted request) of the summary this stage wrote in `message`, its framing and the
    agents' wrappers taken off; None when the message holds none."""
    ours = [b.text for b in message.blocks if b.kind == "text" and has_preamble(b.text)]
    return split_request(unframe("\n\n".join(ours), summary_wrappers())[0]) if ours else None


def summary_body(message: Message) -> str | None:
    """The body of the summary this stage wrote in `message` (its framing, its quoted request
    and the agents' wrappers taken off), or None when the message holds none."""
    parts = _summary_parts(message)
    return parts[0] if parts else None


def quoted_request(message: Message) -> str:
    """The request the summary this stage wrote in `message` quotes whole (under its heading),
    or "" when it quotes none."""
    parts = _summary_parts(message)
    return parts[1] if parts else ""


def _budget(
    given: int | None,
    replaced: int,
    earlier: str | None,
    summaries: Callable[[], int],
    counter: TokenCounter,
) -> int:
    """A summary's budget: `given`, else `default_summary_tokens` of the `replaced` tokens; when
    it updates an earlier summary (`earlier`), room for the whole of it and for the new turns as
    much as without it (`summaries`: the tokens of the earlier summaries among the replaced)."""
    budget = given or default_summary_tokens(replaced)
    if given is None and earlier:
        new_turns = default_summary_tokens(max(replaced - summaries(), 1))
        budget = max(budget, counter.text_tokens(earlier) + new_turns)
    return budget


def summary_of(
    transcript: Transcript,
    middle: Sequence[Message],
    *,
    summarizer: Summarizer,
    counter: TokenCounter,
    focus: str | None = None,
) -> SummaryResult:
    """The summary of context messages `middle` as the stage writes one (an earlier summary among
    them updated, not cut; the default budget for what they hold), for a caller that writes it
    itself: an agent's own compaction hook (`compactcli.hooks`)."""
    dialect = get_dialect(transcript.format)
    earlier = earlier_of(transcript, dialect, middle)
    tokens = [counter.message_tokens(m) for m in middle]
    summaries = sum(t for t, m in zip(tokens, middle, strict=True) if m.summary)
    budget = _budget(None, sum(tokens), earlier.text, lambda: summaries, counter)
    return summarizer.summarize(_request(earlier, transcript, counter, budget, focus))


def _request(
    earlier: Earlier,
    transcript: Transcript,
    counter: TokenCounter,
    budget: int,
    focus: str | None,
    redact: bool = True,
    quoted: Message | None = None,
) -> SummaryRequest:
    """The request for a summary of the turns after `earlier`'s summaries, which it updates."""
    return SummaryRequest(
        messages=earlier.turns,
        counter=counter,
        budget_tokens=budget,
        format=transcript.format,
        previous=earlier.text,
        previous_facts=earlier.facts,
        facts_replaced=earlier.replaced,
        focus=focus,
        redact=redact,
        quoted_request=quoted,
        cwd=get_dialect(transcript.format).cwd(transcript),
    )


def _check(
    before: Transcript, after: Transcript, dialect: Dialect, injection: Injection
) -> str | None:
    """Why `after` must not be used, or None when it is sound."""
    context = dialect.context(after)
    tail = injection.tail
    start = len(context) - len(tail)
    if start < 0:
        return "the context lost messages of the kept tail"
    kept = context[start:]
    for unit in atomic_units(tail):  # the order inside a unit may change (a Claude Code relink)
        found = [kept[i] for i in unit]
        for old in (tail[i] for i in unit):
            match = next((n for n in found if _same(before, old, after, n)), None)
            if match is None:
                line = before.line_of(old.index)
                return f"the context no longer ends with the kept tail (line {line})"
            found.remove(match)
    merged = context[start].summary
    if not merged and (start == 0 or not context[start - 1].summary):
        return "the summary is not right before the kept tail"
    report = validate(after)
    if report.errors:
        baseline = validate(before).errors
        if len(report.errors) > len(baseline):
            first = report.errors[0]
            return f"it does not validate ({first.code}: {first.message})"
    return None


def _same(before: Transcript, old: Message, after: Transcript, new: Message) -> bool:
    """Whether a kept message is still the same in the result (a merged summary aside)."""
    if old.role != new.role:
        return False
    if raw_item(before, old) == raw_item(after, new):
        return True
    if not new.summary:
        return False
    own = [b.text for b in new.blocks if not has_preamble(b.text)]
    return own == [b.text for b in old.blocks]
