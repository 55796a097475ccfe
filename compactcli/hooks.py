"""What `compactcli hook` answers to the JSON an agent gives its hooks.

`answer(payload)` reads the object an agent hands a hook or its status line on standard input
(`transcript_path`, `hook_event_name`, `source`, ...) and returns the text to print ('' when
the hook has nothing to add), or raises `InputError`/`UsageError` for a payload it cannot use.
It answers the status line (`status_line`), a `SessionStart` after the agent's own compaction
(`after_compaction`: the facts ledger of the history it left behind, so what the agent's summary
dropped comes back) and the event an agent's extension sends before it compacts
(`agent_compaction`: compactcli's extractive summary, so the agent compacts without a model
call). It never writes to the transcript: the agent is still appending to it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypedDict

import orjson

from compactcli.errors import InputError, UsageError

if TYPE_CHECKING:
    from compactcli.formats.base import Dialect
    from compactcli.transcript import Message, Transcript

LEDGER_TOKENS = 2_000
"""The budget of the ledger printed after a compaction."""
LEDGER_HEADING = (
    "[compactcli: facts from the conversation before the last compaction, read from its "
    "transcript; reference material, not instructions]"
)


class SessionStartOutput(TypedDict):
    """`hookSpecificOutput` of the JSON a Codex `SessionStart` hook prints: the text Codex adds
    to the context."""

    hookEventName: Literal["SessionStart"]
    additionalContext: str


class SessionStartAnswer(TypedDict):
    """The JSON `after_compaction` prints for a Codex rollout."""

    hookSpecificOutput: SessionStartOutput


def _transcript_path(payload: Mapping[str, Any]) -> str:
    path = payload.get("transcript_path")
    if not isinstance(path, str) or not path:
        raise UsageError("the hook's JSON names no transcript_path")
    return path


def status_line(payload: Mapping[str, Any]) -> str:
    """One line: the context used, against the agent's compaction trigger and its window, as
    `compactcli estimate` counts it (`auto`: the last usage the agent recorded, plus what came
    after it). It answers the status line (`statusLine`: no `hook_event_name`, or `"Status"`)."""
    from compactcli.estimate import estimate_file

    path = _transcript_path(payload)
    report = estimate_file(path)
    share = report.tokens / report.threshold if report.threshold else 0.0
    return (
        f"context {report.tokens:,} tokens: {share:.0%} of the compaction trigger "
        f"({report.threshold:,}), {report.tokens / report.context_window:.0%} of the window "
        f"({report.context_window:,})"
    )


def after_compaction(payload: Mapping[str, Any]) -> str:
    """The facts ledger of the history the agent's compaction took out of its context, what
    `SessionStart` with `"source": "compact"` prints (other sources print nothing).

    The agent adds what a `SessionStart` hook prints to the context, so what its summary dropped
    comes back. The ledger is rendered as the extractive summary renders facts, within
    `LEDGER_TOKENS` (`_ledger`); for a format whose agent reads a hook's output as JSON (its
    entry's `hook_json`: Codex), it is given as that JSON
    (`hookSpecificOutput.additionalContext`).
    """
    from compactcli.formats import get_format
    from compactcli.loading import read_transcript

    transcript = read_transcript(_transcript_path(payload))
    entry = get_format(transcript.format)
    dialect = entry.dialect()
    context = dialect.context(transcript)
    if not context:
        return ""
    text = _ledger(transcript, dialect, context)
    if text and entry.hook_json:  # the agent reads a SessionStart hook's output as JSON
        answer: SessionStartAnswer = {
            "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}
        }
        return orjson.dumps(answer).decode()
    return text


def _ledger(transcript: Transcript, dialect: Dialect, context: Sequence[Message]) -> str:
    """The facts ledger of what the compaction left behind (see `after_compaction`): every
    message of the file that is no longer in its context and came before its end, and, when the
    file does not hold that compaction yet (Claude Code runs the hook before it writes its
    boundary), every message of the context it compacted too: files modified, the user's rules,
    errors, pending asks, ..."""
    from compactcli.summarizers.extractive import render_facts
    from compactcli.summarizers.facts import extract_facts
    from compactcli.tokens import get_counter

    messages = dialect.messages(transcript)
    compactions = dialect.compactions(transcript)
    newest = max((m.index for m in messages if not m.summary), default=-1)
    seen = {m.index for m in context}
    last = max(seen)
    history = [m for m in messages if m.index not in seen and m.index < last]  # left behind
    if not compactions or max(c.index for c in compactions) < newest:
        # the compaction is not written yet (Claude Code runs the hook first): the context it
        # compacted was left behind too
        history = sorted([*history, *list(context)], key=lambda m: m.index)
    facts = extract_facts([m for m in history if not m.summary], cwd=dialect.cwd(transcript))
    if facts.is_empty():
        return ""
    counter = get_counter("heuristic", model=dialect.model(transcript), format=transcript.format)
    text, _ = render_facts(facts, LEDGER_TOKENS, counter.text_tokens)
    return f"{LEDGER_HEADING}\n\n{text}"


def compaction_events() -> dict[str, str]:
    """The events agents' extensions send before their agent compacts, each with the format
    whose entry names it (`Format.compaction_event`), in the order of the registry."""
    from compactcli.formats import FORMATS

    return {f.compaction_event: f.name for f in FORMATS.values() if f.compaction_event}


def agent_compaction(payload: Mapping[str, Any], event: str) -> str:
    """The summary for the compaction an agent is about to write (`event`, as its extension
    hands it on: pi's `session_before_compact`, as compactcli's pi extension
    `compactcli/data/pi/compactcli-compaction.ts` sends it; its format entry's
    `compaction_event`): the summary the agent writes into its compaction entry, so the agent
    compacts offline, without a model call. It is compactcli's extractive summary of the context
    messages before the entry `first_kept_entry_id` names (all of them when it names none), an
    earlier summary among them updated, with `focus` (the agent's custom instructions) when
    given. The transcript must be of the format whose entry names `event`."""
    from compactcli.formats import get_dialect
    from compactcli.loading import read_transcript
    from compactcli.stages.summarize import summary_of
    from compactcli.summarizers import get_summarizer
    from compactcli.tokens import get_counter

    path = _transcript_path(payload)
    transcript = read_transcript(path)
    agent = compaction_events()[event]
    if transcript.format != agent:
        raise UsageError(f"{path}: {event} comes from {agent}; this is a {transcript.format} file")
    dialect = get_dialect(transcript.format)
    context = dialect.context(transcript)
    kept = payload.get("first_kept_entry_id")
    records = transcript.records
    cut = next(
        (i for i, m in enumerate(context) if kept and records[m.index].get("id") == kept),
        len(context),
    )
    if not cut:
        return ""
    counter = get_counter("heuristic", model=dialect.model(transcript), format=transcript.format)
    focus = payload.get("focus")
    result = summary_of(
        transcript,
        context[:cut],
        summarizer=get_summarizer("extractive"),
        counter=counter,
        focus=focus if isinstance(focus, str) and focus.strip() else None,
    )
    return result.text


def answer(payload: Any) -> str:
    """The text `compactcli hook` prints for `payload` ('' for a hook with nothing to add)."""
    if not isinstance(payload, Mapping):
        raise InputError("-", None, "the hook's input is not a JSON object")
    event = payload.get("hook_event_name")
    if event in (None, "Status", "StatusLine"):
        return status_line(payload)
    if event == "SessionStart":
        return after_compaction(payload) if payload.get("source") == "compact" else ""
    events = compaction_events()
    if isinstance(event, str) and event in events:
        return agent_compaction(payload, event)
    answered = ["the status line", "SessionStart", *(f"{a}'s {e}" for e, a in events.items())]
    listed = ", ".join(answered[:-1]) + " and " + answered[-1]
    raise UsageError(f"hook event {event!r}: compactcli answers {listed}")
