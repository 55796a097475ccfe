"""The summarize stage: replace the old middle of a conversation with one structured summary.

`summarize(transcript, options, summarizer=..., counter=...)` cuts the context view into a kept
head, a middle and a kept tail (`compactcli.cuts`), has the summarizer write a summary of the
middle, and writes it in the format's native form (`compactcli.injection`). An earlier summary
in the middle (ours, or the agent's own: Claude Code `isCompactSummary`, Codex `compacted`, pi
`compaction`) is not summarized again: its body goes to the summarizer as `previous`, the facts
we recorded with it (or pi's own file lists) as `previous_facts`, and the new summary replaces
it; file lists carry over.

Guarantees:

- The kept tail is the input's: every record of it is written back byte for byte, and the
  context view of the result ends with it. Two exceptions, both forced by a format: an
  Anthropic list whose tail must open on a user message gets the summary merged into that
  message (`compactcli.injection.plain`), and a Claude Code tail that is not one run of the
  chain on disk has a few `parentUuid`s relinked, tool results moved right after their calls
  inside their unit (`compactcli.injection.claude_code`).
- Tool calls stay paired; the result validates. Before returning, the stage checks the result:
  it must validate (no error the input did not have), end with the kept tail, and be smaller on
  the context view. A result that fails a check is not returned: the input comes back
  unchanged, with the reason in the stats.
- The last user prompt is kept, in the tail or in the head. Only with `cut_turn`, when its turn
  alone is larger than the kept tail may grow (`compactcli.cuts`), is it pinned instead:
  summarized with the middle and quoted verbatim at the end of the summary, under
  `REQUEST_HEADING`, its place given in `details["summarize"]["pinned_prompt"]`; when that
  summary would not make the context smaller, the cut that keeps the prompt is used.
- Nothing worth summarizing (the context fits in what must be kept, or only an earlier summary
  is left to replace) gives the input back unchanged, byte for byte, with the reason.
- The stage appends one `StageStats` (stage "summarize"): tokens before and after on the
  context view, and under `details["summarize"]` the messages summarized, the summary's tokens,
  the summarizer, model, LLM calls, their tokens and cost, any fallback, the range summarized,
  and, when the format made us rewrite kept records, their input lines (`rewritten`);
  `details["boundary"]` holds our boundary details (`compactcli.boundary.details`,
  with the summary's facts), which the format's boundary record carries under `compactcli`.
"""

from __future__ import annotations

import dataclasses
import itertools
import operator
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compactcli import boundary
from compactcli.cuts import Cut, NoCut, find_cut
from compactcli.dialects import Dialect, atomic_units, get_dialect
from compactcli.dialects.pi import COMPACTION_PREFIX, COMPACTION_SUFFIX
from compactcli.injection import (
    PREAMBLE,
    Injection,
    Writer,
    frame,
    get_writer,
    quote_head,
    quote_request,
    raw_item,
    unframe,
)
from compactcli.injection.claude_code import SUMMARY_SUFFIX
from compactcli.injection.codex import SUMMARY_PREFIX as CODEX_PREFIX
from compactcli.stats import StageStats
from compactcli.summarizers import Summarizer, SummaryRequest, SummaryResult
from compactcli.summarizers.facts import Facts
from compactcli.tokens import TokenCounter
from compactcli.transcript import Message, Record, Transcript
from compactcli.validation import validate

MIN_SUMMARY_TOKENS = 400
MAX_SUMMARY_TOKENS = 8_000
_WRAPPERS = (
    (COMPACTION_PREFIX, COMPACTION_SUFFIX),
    (f"{CODEX_PREFIX}\n", ""),
    ("", f"\n\n{SUMMARY_SUFFIX}"),
)
"""The agents' own wrappers around a summary, taken off before it is updated."""


@dataclass(frozen=True, slots=True)
class SummarizeOptions:
    """What the summarize stage keeps and how big a summary it asks for."""

    keep_recent_tokens: int = 20_000
    protect_first: int = 0
    cut_turn: bool = False  # the current turn may be cut, its prompt quoted (`compactcli.cuts`)
    summary_tokens: int | None = None  # None: scaled with what the summary replaces
    focus: str | None = None
    redact: bool = True
    trigger: str = "manual"


def default_summary_tokens(replaced: int) -> int:
    """The summary budget when none is given: a tenth of what it replaces, 400 to 8,000 tokens,
    and never more than half of it."""
    budget = min(MAX_SUMMARY_TOKENS, max(MIN_SUMMARY_TOKENS, replaced // 10))
    return max(1, min(budget, replaced // 2))


@dataclass(frozen=True, slots=True)
class _Earlier:
    """What the middle holds of earlier summaries."""

    text: str | None
    head: str
    facts: Facts | None
    turns: tuple[Message, ...]  # the middle's messages to summarize, in order


def summarize(
    transcript: Transcript,
    options: SummarizeOptions = SummarizeOptions(),
    *,
    summarizer: Summarizer,
    counter: TokenCounter,
) -> Transcript:
    """Summarize the old middle of `transcript`; see the module docstring for the rules."""
    started = time.perf_counter()
    dialect = get_dialect(transcript.format)
    writer = get_writer(transcript.format)
    context = dialect.context(transcript)
    tokens = [counter.message_tokens(m) for m in context]
    before = sum(tokens)
    stage = _Stage(transcript, options, dialect, counter, context, before, started)

    def cut_at(pin: bool) -> Cut | NoCut:
        return find_cut(
            context,
            tokens,
            keep_recent_tokens=options.keep_recent_tokens,
            protect_first=options.protect_first,
            initial=writer.initial(context),
            alternating=writer.alternating,
            accept=writer.acceptor(transcript, context),
            refusal=writer.refusal,
            pin=pin,
        )

    cut = cut_at(pin=options.cut_turn)
    if isinstance(cut, NoCut):
        return stage.unchanged(cut.reason)
    done, changed = _summarize_at(cut, stage, writer, summarizer, tokens)
    if not changed and cut.pinned is not None:
        # cutting the current turn did not pay: keep its prompt in the tail instead
        other = cut_at(pin=False)
        if isinstance(other, Cut):
            return _summarize_at(other, stage, writer, summarizer, tokens)[0]
    return done


def _summarize_at(
    cut: Cut,
    stage: _Stage,
    writer: Writer,
    summarizer: Summarizer,
    tokens: Sequence[int],
) -> tuple[Transcript, bool]:
    """Summarize `cut`'s middle: (the result, whether it changed the transcript)."""
    transcript, options, dialect = stage.transcript, stage.options, stage.dialect
    context, counter, before = stage.context, stage.counter, stage.before
    earlier = _earlier(transcript, dialect, context[cut.head : cut.start])
    head_text = earlier.head
    if writer.quotes_head and cut.head:
        head_text = quote_head(context[: cut.head])
    replaced = sum(tokens[cut.head : cut.start])
    budget = options.summary_tokens or default_summary_tokens(replaced)
    result = summarizer.summarize(
        SummaryRequest(
            messages=earlier.turns,
            counter=counter,
            budget_tokens=budget,
            format=transcript.format,
            previous=earlier.text,
            previous_facts=earlier.facts,
            focus=options.focus,
            redact=options.redact,
            quoted_request=context[cut.pinned] if cut.pinned is not None else None,
        )
    )
    facts = _carry_files(result.facts, earlier.facts)
    body = result.text
    if cut.pinned is not None:
        body = f"{body.strip()}\n\n{quote_request(context[cut.pinned])}"
    text = frame(body, head_text)
    info = stage.info(result, earlier, cut, text)
    if cut.pinned is not None:
        info["pinned_prompt"] = stage.where(context[cut.pinned])
    draft = Injection(context, cut, text, {}, facts, before, 0)
    measured = transcript.evolve(records=writer.write(transcript, draft))
    rewritten = _rewritten(transcript.records, measured.records)
    if rewritten:
        info["rewritten"] = rewritten
    after_context = dialect.context(measured)
    after = sum(counter.message_tokens(m) for m in after_context)
    if after >= before:
        reason = (
            f"the summary would not make the context smaller ({after:,} tokens, {before:,} before)"
        )
        return stage.unchanged(reason, info), False
    details = boundary.details(
        stage="summarize",
        trigger=options.trigger,
        source_sha256=transcript.sha256,
        method=counter.method,
        tokens_before=before,
        tokens_after=after,
        **info,
        focus=options.focus,
        options={
            "keep_recent_tokens": options.keep_recent_tokens,
            "protect_first": options.protect_first,
            "cut_turn": options.cut_turn,
            "summary_tokens": budget,
            "redact": options.redact,
        },
        facts=_plain(facts.to_dict()),
    )
    injection = dataclasses.replace(draft, details=details, tokens_after=after)
    result_transcript = transcript.evolve(records=writer.write(transcript, injection))
    problem = _check(transcript, result_transcript, dialect, injection)
    if problem:
        return stage.unchanged(
            f"the result failed a check and was not used: {problem}", info
        ), False
    return stage.changed(result_transcript, after, info, details), True


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

    def info(self, result: SummaryResult, earlier: _Earlier, cut: Cut, text: str) -> dict[str, Any]:
        turns = earlier.turns
        return {
            "summarizer": result.summarizer,
            "model": result.model,
            "llm_calls": result.llm_calls,
            "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens,
            "cost": result.cost,
            "fallback": result.fallback,
            "warnings": list(result.warnings),
            "summarizer_details": dict(result.details),
            "messages_summarized": len(turns),
            "summary_tokens": self.counter.text_tokens(text),
            "updated_earlier_summary": earlier.text is not None,
            "range": {
                "first": self.where(turns[0]) if turns else None,
                "last": self.where(turns[-1]) if turns else None,
            },
            "kept": {
                "head_messages": cut.head,
                "tail_messages": len(self.context) - cut.start,
                "tail_tokens": cut.tail_tokens,
            },
        }

    def where(self, message: Message) -> dict[str, Any]:
        return {"id": message.id, "line": self.transcript.line_of(message.index)}

    def unchanged(self, reason: str, info: Mapping[str, Any] | None = None) -> Transcript:
        details: dict[str, Any] = {"reason": reason}
        if info is not None:
            details["summarize"] = dict(info)
        stats = self._stats(self.transcript, self.before, self.context, details)
        return self.transcript.evolve(stats=(*self.transcript.stats, stats))

    def changed(
        self, result: Transcript, after: int, info: Mapping[str, Any], details: Mapping[str, Any]
    ) -> Transcript:
        context = self.dialect.context(result)
        stats = self._stats(
            result, after, context, {"summarize": dict(info), "boundary": dict(details)}
        )
        return result.evolve(stats=(*self.transcript.stats, stats))

    def _stats(
        self,
        result: Transcript,
        after: int,
        context: Sequence[Message],
        details: Mapping[str, Any],
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
            details=details,
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


def summary_body(message: Message) -> str | None:
    """The body of the summary this stage wrote in `message` (its framing and the agents'
    wrappers taken off), or None when the message holds none."""
    ours = [b.text for b in message.blocks if b.kind == "text" and PREAMBLE in b.text]
    return unframe("\n\n".join(ours), _WRAPPERS)[0] if ours else None


def _earlier(transcript: Transcript, dialect: Dialect, middle: Sequence[Message]) -> _Earlier:
    """Split the middle into earlier summaries (their bodies, head quote and facts) and turns."""
    texts: list[str] = []
    head = ""
    facts: Facts | None = None
    turns: list[Message] = []
    compactions = dialect.compactions(transcript) if any(m.summary for m in middle) else []
    for message in middle:
        if not message.summary:
            turns.append(message)
            continue
        ours = [b for b in message.blocks if b.kind == "text" and PREAMBLE in b.text]
        if ours:
            rest = tuple(b for b in message.blocks if not any(b is o for o in ours))
            if rest:
                turns.append(dataclasses.replace(message, blocks=rest, summary=False))
            source = "\n\n".join(b.text for b in ours)
        else:
            source = message.text
        body, quoted = unframe(source, _WRAPPERS)
        if body:
            texts.append(body)
        head = quoted or head
        for compaction in compactions:
            if message.index in (compaction.index, compaction.summary_index):
                found = _recorded_facts(transcript.records[compaction.index].raw)
                if found is not None:
                    facts = found if facts is None else _carry_files(found, facts)
                break
    return _Earlier("\n\n".join(texts) if texts else None, head, facts, tuple(turns))


def _recorded_facts(raw: Any) -> Facts | None:
    """The facts recorded with an earlier compaction: ours, or pi's own file lists."""
    if not isinstance(raw, Mapping):
        return None
    ours = raw.get(boundary.MARK)
    if isinstance(ours, Mapping) and isinstance(ours.get("facts"), Mapping):
        try:
            return Facts.from_dict(dict(ours["facts"]))
        except (TypeError, ValueError):
            return None
    details = raw.get("details")
    if raw.get("type") == "compaction" and isinstance(details, Mapping):
        read = details.get("readFiles")
        modified = details.get("modifiedFiles")
        return Facts(
            files_read=_strings(read),
            files_modified=_strings(modified),
        )
    return None


def _plain(value: Any) -> Any:
    """`value` with its tuples as lists: what the details look like once written as JSON."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def _carry_files(facts: Facts, previous: Facts | None) -> Facts:
    """`facts` with the earlier file lists in front of its own (each path once)."""
    if previous is None:
        return facts
    return dataclasses.replace(
        facts,
        files_read=tuple(dict.fromkeys((*previous.files_read, *facts.files_read))),
        files_modified=tuple(dict.fromkeys((*previous.files_modified, *facts.files_modified))),
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
    own = [b.text for b in new.blocks if PREAMBLE not in b.text]
    return own == [b.text for b in old.blocks]
