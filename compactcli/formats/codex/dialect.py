"""The `codex` dialect: OpenAI Codex CLI rollout files (FORMATS.md §2 and §6).

Every line is an envelope `{"timestamp", "type", "payload"}` of type `session_meta` (the first
line, once), `response_item` (what the model sees), `compacted` (a compaction), `turn_context`
(per-turn settings, including `model`) or `event_msg` (UI events); other types pass through.
`CodexDialect` reads the response items (`compactcli.formats.codex.items`), replays the rollout
as Codex resumes it for the context (`compactcli.formats.codex.replay`), reads the usage Codex
records and validates with the rules of `compactcli.formats.codex.checks`. The views never edit
records.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compactcli.errors import InputError
from compactcli.formats.base import Dialect, Finding, remembered
from compactcli.formats.codex.checks import check_envelopes, check_pairs
from compactcli.formats.codex.items import (
    RECORD_TYPES,
    BadShape,
    ItemReader,
    in_unit,
    is_envelope,
    summary_in_history,
    synthetic,
)
from compactcli.formats.codex.replay import Step, _apply, has_rollback, rolled_back
from compactcli.transcript import (
    Block,
    Compaction,
    JsonPath,
    Message,
    Record,
    Transcript,
    Usage,
    get_in,
    set_in,
)

_TIMELINE = "codex:timeline"
"""The view of what `CodexDialect._timeline` read and where it ended (`_Timeline`)."""
_RAW = operator.attrgetter("raw")


@dataclass(frozen=True, slots=True)
class _Item:
    """A response item as read: its `payload` object, the reader's model then, its message."""

    payload: Mapping[str, Any]
    model: str | None
    message: Message | None


@dataclass(frozen=True, slots=True)
class _Timeline:
    """A transcript's timeline with what made it: each record's JSON object (`raws`), each
    response item as read (by record index), and the reader's state after the last record
    (model, call names, the open unit)."""

    raws: tuple[Any, ...]
    items: Mapping[int, _Item]
    steps: tuple[Step, ...]
    model: str | None
    names: Mapping[str, str]
    unit: str | None


class CodexDialect(Dialect):
    """The `codex` dialect.

    A tool result's content is its item's `output` (`clear_result` keeps the `{content, success}`
    shape); a text block is an `input_text` item; `prune_boundary` adds no record, as the edited
    outputs are what a resume reads.
    """

    name = "codex"
    summary = "OpenAI Codex CLI rollout (session_meta / response_item / event_msg lines)"

    @classmethod
    def sniff(cls, objects: Sequence[Mapping[str, Any]]) -> int:
        """100 when the first record is a `session_meta` envelope; 60 when at least half of the
        records are Codex envelopes of known types (a file whose head is missing); else 0."""
        if not objects:
            return 0
        first = objects[0]
        if is_envelope(first) and first["type"] == "session_meta":
            return 100
        known = sum(1 for o in objects if is_envelope(o) and o["type"] in RECORD_TYPES)
        return 60 if known and known * 2 >= len(objects) else 0

    # --- views -------------------------------------------------------------------------------

    @remembered
    def messages(self, transcript: Transcript) -> list[Message]:
        """One message per `response_item` in file order (`ItemReader`), each assistant one with the
        `model` of the latest `turn_context` before it, plus the messages inside a `compacted`
        line at that line's place (`_compacted`); `event_msg` mirrors are not messages.
        """
        out: list[Message] = []
        for step in self._steps(transcript):
            out.extend(step.messages)
        return out

    def collect(self, transcript: Transcript) -> list[Record]:
        """What Codex replays on resume and the metadata (`compactcli.formats.codex.collect`)."""
        from compactcli.formats.codex.collect import collect

        return collect(transcript)

    @remembered
    def context(self, transcript: Transcript) -> list[Message]:
        """The rollout replayed as Codex resumes it (`compactcli.formats.codex.replay`), the
        collected user messages being the original records' views.
        """
        history: list[Message] = []
        for step in self._steps(transcript):
            history = _apply(history, step)
        return history

    @remembered
    def compactions(self, transcript: Transcript) -> list[Compaction]:
        found: list[Compaction] = []
        for index, record in transcript.objects():
            if record.raw.get("type") != "compacted":
                continue
            payload = record.raw.get("payload")
            payload = payload if isinstance(payload, dict) else {}
            message = payload.get("message")
            summary = message if isinstance(message, str) else ""
            if not summary:
                summary = summary_in_history(payload.get("replacement_history"))
            found.append(Compaction(index, summary, None, "compactcli" in record.raw))
        return found

    @remembered
    def usage(self, transcript: Transcript) -> list[Usage]:
        """The `event_msg token_count` records with a non-null `info` after the last `compacted`
        line and outside turns a rollback removed: `context` =
        `last_token_usage.input_tokens + output_tokens`, `key` =
        `"total:<total_token_usage.total_tokens>"`. A `last_token_usage` with no input and no
        output (a post-compaction estimate), and an `info` equal to the previous one (Codex
        writes a request's `info` twice), are left out.
        """
        dropped = rolled_back(self._steps(transcript)) if has_rollback(transcript) else []
        found: list[Usage] = []
        previous: Any = None
        for index, record in transcript.objects():
            kind = record.raw.get("type")
            if kind == "compacted":  # what was recorded before it counts no more
                found, previous = [], None
                continue
            if kind != "event_msg":
                continue
            if any(low < index < high for low, high in dropped):
                continue
            payload = record.raw.get("payload")
            if not isinstance(payload, dict) or payload.get("type") != "token_count":
                continue
            info = payload.get("info")
            if not isinstance(info, dict):
                continue
            last = info.get("last_token_usage")
            if not isinstance(last, dict):
                continue
            if info == previous:
                continue
            previous = info
            total = info.get("total_token_usage")
            total_tokens = total.get("total_tokens") if isinstance(total, dict) else None
            input_tokens = _int(last.get("input_tokens"))
            output_tokens = _int(last.get("output_tokens"))
            if input_tokens + output_tokens == 0:  # an estimate, not a request's usage
                continue
            found.append(
                Usage(
                    index=index,
                    context=input_tokens + output_tokens,
                    input=input_tokens,
                    output=output_tokens,
                    cached=_int(last.get("cached_input_tokens")),
                    key=f"total:{total_tokens}" if isinstance(total_tokens, int) else None,
                )
            )
        return found

    # --- writing -----------------------------------------------------------------------------

    result_content_key = "output"

    def clear_result(self, record: Record, block: Block, text: str) -> Record:
        """`record` with tool result `block`'s output replaced by `text`.

        The old `{content, success}` output keeps its shape (and `success`); a
        `tool_search_output` (tool definitions, not output) is left as it is.
        """
        if block.type == "tool_search_output":
            return record
        item = get_in(record.raw, block.path)
        path: JsonPath = (*block.path, "output")
        if isinstance(item, dict) and isinstance(item.get("output"), dict):
            path = (*path, "content")
        return record.with_raw(set_in(record.raw, path, text))

    def text_block(self, text: str) -> dict[str, Any]:
        """A message content item holding `text` (`input_text`: images are in input)."""
        return {"type": "input_text", "text": text}

    def context_window(self, transcript: Transcript) -> int | None:
        """The `model_context_window` of the last `token_count` event that records one."""
        for record in reversed(transcript.records):
            if record.get("type") != "event_msg":
                continue
            payload = record.get("payload")
            info = payload.get("info") if isinstance(payload, dict) else None
            window = info.get("model_context_window") if isinstance(info, dict) else None
            if isinstance(window, int) and not isinstance(window, bool) and window > 0:
                return window
        return None

    def model(self, transcript: Transcript) -> str | None:
        for record in reversed(transcript.records):
            if record.get("type") == "turn_context":
                payload = record.get("payload")
                if isinstance(payload, dict) and isinstance(payload.get("model"), str):
                    model: str = payload["model"]
                    return model
        return None

    def cwd(self, transcript: Transcript) -> str | None:
        """The `cwd` of the last `turn_context`, else of the `session_meta`."""
        for record in reversed(transcript.records):
            if record.get("type") in ("turn_context", "session_meta"):
                payload = record.get("payload")
                if isinstance(payload, dict) and isinstance(payload.get("cwd"), str):
                    cwd: str = payload["cwd"]
                    return cwd
        return None

    # --- validation --------------------------------------------------------------------------

    @remembered
    def validate(self, transcript: Transcript) -> list[Finding]:
        findings: list[Finding] = []
        findings.extend(check_envelopes(transcript))
        try:  # the views' timeline, when no item has a bad shape
            steps = self._steps(transcript)
        except InputError:
            steps = self._timeline(transcript, findings)
        findings.extend(check_pairs(transcript, steps))
        return sorted(findings, key=lambda f: f.line)

    # --- the timeline ------------------------------------------------------------------------

    @remembered
    def _steps(self, transcript: Transcript) -> list[Step]:
        """The timeline of a transcript whose bad shapes raise (`_timeline`), made once for
        the views that read it."""
        return self._timeline(transcript, None)

    def _timeline(self, transcript: Transcript, findings: list[Finding] | None) -> list[Step]:
        """Replay steps in file order. With `findings`, bad shapes become `bad-shape` findings
        and the bad item is left out; without, they raise `InputError`.

        Without `findings`, what the transcript this one was made from (by `evolve`: a stage's
        result, or it settled) read is reused (`_Timeline`): when its records' JSON objects
        are the first of these in the same places, its steps are these steps' start and only
        the records after them are read; else a response item it read as the same JSON object
        at the same place, with the same model and call names before it, is not read again.
        A stage changes a few records of a large session, or adds a few at its end; the others
        cost a lookup."""
        builder = ItemReader()
        steps: list[Step] = []
        unit: str | None = None
        items: dict[int, _Item] = {}
        earlier: Mapping[int, _Item] = {}
        records = transcript.records
        begin = 0
        if findings is None:
            parent: _Timeline | None = transcript.inherited(_TIMELINE)
            if parent is not None and len(parent.raws) <= len(records):
                if all(map(operator.is_, parent.raws, map(_RAW, records))):
                    begin = len(parent.raws)
                    builder = ItemReader(model=parent.model, names=dict(parent.names))
                    steps, unit, items = list(parent.steps), parent.unit, dict(parent.items)
                else:
                    earlier = parent.items

        def bad(record: Record, problem: str) -> None:
            if findings is None:
                raise InputError(transcript.source, record.lineno, problem)
            findings.append(Finding(record.lineno, "bad-shape", problem))

        for index in range(begin, len(records)):
            record = records[index]
            if not isinstance(record.raw, dict):
                continue
            kind = record.raw.get("type")
            if not isinstance(kind, str) or kind not in RECORD_TYPES:
                continue
            payload = record.raw.get("payload")
            if not isinstance(payload, dict):
                if findings is None:
                    bad(record, f"{kind} record has no object 'payload'")
                continue  # reported by check_envelopes
            if kind == "turn_context":
                model = payload.get("model")
                if isinstance(model, str):
                    builder.model = model
            elif kind == "response_item":
                known = earlier.get(index)
                if (
                    known is not None
                    and known.payload is payload
                    and known.model == builder.model
                    and builder.again(payload, known.message)
                ):
                    message = known.message
                else:
                    try:
                        message = builder.item(payload, index, ("payload",))
                    except BadShape as error:
                        bad(record, f"response_item: {error}")
                        continue
                if findings is None:
                    items[index] = _Item(payload, builder.model, message)
                if message is None:
                    continue
                message, unit = in_unit(message, unit, str(index))
                steps.append(Step("item", index, (message,)))
            elif kind == "compacted":
                unit = None
                try:
                    step = self._compacted(builder, payload, index)
                except BadShape as error:
                    bad(record, f"compacted: {error}")
                    continue
                steps.append(step)
            elif kind == "event_msg":
                event = payload.get("type")
                if event == "thread_rolled_back":
                    turns = payload.get("num_turns")
                    if isinstance(turns, int) and not isinstance(turns, bool) and turns > 0:
                        steps.append(Step("rollback", index, turns=turns))
                elif event == "turn_aborted":
                    steps.append(Step("aborted", index))
        if findings is None:
            made = _Timeline(
                tuple(map(_RAW, records)),
                items,
                tuple(steps),
                builder.model,
                dict(builder.names),
                unit,
            )
            transcript.view(_TIMELINE, lambda: made)
        return steps

    def _compacted(self, builder: ItemReader, payload: Mapping[str, Any], index: int) -> Step:
        """The step of a `compacted` line: the messages of its `replacement_history`, each
        `synthetic=True`, with `index` the compacted record and the path of its item in that
        list, a user message there being a summary when its text is the line's `message`; without
        a `replacement_history`, one user summary message holding `message`, path `("payload",)`.
        """
        message = payload.get("message", "")
        if not isinstance(message, str):
            raise BadShape("'message' is not a string")
        history = payload.get("replacement_history")
        if history is None:
            block = Block("text", text=message, type="input_text", path=("payload", "message"))
            summary = Message(
                index=index,
                role="user",
                blocks=(block,),
                summary=True,
                synthetic=True,
                path=("payload",),
            )
            return Step("compacted", index, (summary,), replaced=False)
        if not isinstance(history, list):
            raise BadShape("'replacement_history' is not an array")
        messages: list[Message] = []
        unit: str | None = None
        for position, item in enumerate(history):
            path: JsonPath = ("payload", "replacement_history", position)
            try:
                view = builder.item(item, index, path)
            except BadShape as error:
                raise BadShape(f"replacement_history[{position}]: {error}") from None
            if view is None:
                continue
            view, unit = in_unit(view, unit, f"{index}.{position}")
            is_summary = view.summary or (
                view.role == "user" and bool(message) and view.text == message
            )
            messages.append(synthetic(view, is_summary))
        return Step("compacted", index, tuple(messages), replaced=True)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
