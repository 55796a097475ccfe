"""The `codex-legacy` dialect: Codex CLI rollouts written before the envelope lines (mid-2025).

Codex CLI versions of May to August 2025 wrote `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`
without envelopes: a session meta line, then state lines and bare response items. Resuming such a
file parses the first line as the meta, skips state lines, and replays every item it can parse,
in order. `CodexLegacyDialect` reads the items as `compactcli.formats.codex.items` reads response
items, with the context every item in file order; there is no compaction record and no usage, so
a compaction rewrites the file (`compactcli.formats.codex_legacy.writer`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from compactcli.errors import InputError
from compactcli.formats.base import (
    OUR_SUMMARY_START,
    Finding,
    remembered,
    summary_compactions,
)
from compactcli.formats.codex.checks import check_pairs
from compactcli.formats.codex.dialect import CodexDialect
from compactcli.formats.codex.items import BadShape, ItemReader, in_unit, is_envelope
from compactcli.formats.codex.replay import Step
from compactcli.transcript import Compaction, Message, Transcript, Usage


def is_meta(raw: Mapping[str, Any]) -> bool:
    """A legacy session meta line: a string `id` and `timestamp`, no `type` or `payload`."""
    return (
        isinstance(raw.get("id"), str)
        and isinstance(raw.get("timestamp"), str)
        and "type" not in raw
        and "payload" not in raw
        and "role" not in raw
    )


def is_state(raw: Mapping[str, Any]) -> bool:
    """A line the resume skips as state (`record_type` set, no `type`)."""
    return "record_type" in raw and "type" not in raw


class CodexLegacyDialect(CodexDialect):
    """The `codex-legacy` dialect.

    The first line is the session meta `{"id", "timestamp", "instructions", "git"?}`; every other
    line is a state line `{"record_type": "state", …}` or one bare response item
    (`{"type": "message", "role": "user", "content": […]}`, `reasoning`, `function_call`,
    `function_call_output`, `local_shell_call`). Items give the same blocks, units and `path` as
    in `codex`, from the item itself (`()`). A user message that starts with Codex's summary
    prefix is a summary; `compactions` lists ours (`_ours`). `usage`, `model` and the context
    window are empty: these files record none. A tool result's output is cleared in place as in
    `codex`.
    """

    name = "codex-legacy"
    summary = "Codex CLI rollout of mid-2025 (a session meta line, then bare response items)"
    has_meta = True  # the first line is the session meta
    text_content = False  # a message's content may be a plain string

    @classmethod
    def sniff(cls, objects: Sequence[Mapping[str, Any]]) -> int:
        """100 when the first record is a meta line with `instructions` and the others are
        bare items (a string `type`, no envelope) or state lines; 80 for a meta line without
        `instructions`; else 0."""
        if not objects or not is_meta(objects[0]):
            return 0
        rest = objects[1:]
        if any(is_envelope(o) for o in rest):
            return 0
        if not all(is_state(o) or isinstance(o.get("type"), str) for o in rest):
            return 0
        return 100 if "instructions" in objects[0] else 80

    # --- views -------------------------------------------------------------------------------

    @remembered
    def context(self, transcript: Transcript) -> list[Message]:
        return self.messages(transcript)

    @remembered
    def compactions(self, transcript: Transcript) -> list[Compaction]:
        records = transcript.records
        return summary_compactions(
            self.messages(transcript), lambda m: _ours(records[m.index].raw, m)
        )

    def usage(self, transcript: Transcript) -> list[Usage]:
        return []

    def context_window(self, transcript: Transcript) -> int | None:
        return None

    def model(self, transcript: Transcript) -> str | None:
        return None

    # --- validation --------------------------------------------------------------------------

    @remembered
    def validate(self, transcript: Transcript) -> list[Finding]:
        """Codes: `session-meta` (the first record is not a meta line, or a later one is),
        `bad-shape` (a line that is neither a state line nor an item with a string `type`, or an
        item of a known type with a wrong shape), and the pairing codes of the `codex` dialect
        (`duplicate-id`, `orphan-result`, and `call-unanswered` as a warning), over the one
        history the file holds.
        """
        findings = _check_lines(transcript, self.has_meta)
        steps = self._timeline(transcript, findings)
        findings.extend(check_pairs(transcript, steps))
        return sorted(findings, key=lambda f: f.line)

    # --- the timeline ------------------------------------------------------------------------

    def _timeline(self, transcript: Transcript, findings: list[Finding] | None) -> list[Step]:
        """One step per item, in file order; the meta and state lines give none. With
        `findings`, bad shapes become `bad-shape` findings; without, they raise `InputError`."""
        builder = ItemReader(text_content=self.text_content)
        steps: list[Step] = []
        unit: str | None = None
        first = True
        for index, record in transcript.objects():
            raw = record.raw
            if (first and self.has_meta and is_meta(raw)) or is_state(raw):
                first = False
                continue
            first = False
            if not isinstance(raw.get("type"), str):
                if findings is None:
                    problem = _shape_problem(raw, self.has_meta)
                    raise InputError(transcript.source, record.lineno, problem)
                continue  # reported by _check_lines
            try:
                message = builder.item(raw, index, ())
            except BadShape as error:
                problem = f"{raw['type']}: {error}"
                if findings is None:
                    raise InputError(transcript.source, record.lineno, problem) from None
                findings.append(Finding(record.lineno, "bad-shape", problem))
                continue
            if message is None:
                continue
            if message.role == "user" and not message.summary and _ours(raw, message):
                message = dataclasses.replace(message, summary=True)
            message, unit = in_unit(message, unit, str(index))
            steps.append(Step("item", index, (message,)))
        return steps


def _ours(raw: Mapping[str, Any], message: Message) -> bool:
    """Whether a user message is a summary we wrote: it carries our details, or (in a Responses
    list, where it cannot) its text starts with our preamble."""
    return "compactcli" in raw or message.text.startswith(OUR_SUMMARY_START)


def _shape_problem(raw: Mapping[str, Any], has_meta: bool) -> str:
    if has_meta and is_meta(raw):
        return "a second session meta line"
    return "line is neither a response item (no string 'type') nor a state line"


def _check_lines(transcript: Transcript, has_meta: bool) -> list[Finding]:
    findings: list[Finding] = []
    first = has_meta
    for _, record in transcript.objects():
        raw = record.raw
        if first:
            first = False
            if not is_meta(raw):
                findings.append(
                    Finding(
                        record.lineno,
                        "session-meta",
                        "first record is not a session meta line ({id, timestamp, instructions})",
                    )
                )
                if is_state(raw) or isinstance(raw.get("type"), str):
                    continue
            else:
                continue
        if is_state(raw) or isinstance(raw.get("type"), str):
            continue
        code = "session-meta" if has_meta and is_meta(raw) else "bad-shape"
        findings.append(Finding(record.lineno, code, _shape_problem(raw, has_meta)))
    return findings
