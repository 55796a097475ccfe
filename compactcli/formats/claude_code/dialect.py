"""The claude-code dialect: `ClaudeCodeDialect`, for Claude Code session transcripts.

It reads, edits and checks the session files Claude Code writes (FORMATS.md §1 and §6); its
docstring states what each view means. The parsing of one record (`records`), the skeletons the
chain rules read (`chain`), the chain rules themselves, which the loader and the streamer share
(`chain_nodes`), the usage a record reports (`usage`), the parsed state of a transcript
(`state`), the checks (`checks`) and the streamed views (`stream`) are modules of this package.
"""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from compactcli.errors import InputError
from compactcli.formats.base import Dialect, Finding
from compactcli.formats.claude_code.chain import (
    _SK_BOUNDARY,
    _SK_KIND,
    _SK_OURS,
    _SK_PARENT,
    _SK_REACHES,
    _SK_SUMMARY,
    Skeletons,
    _build_chain,
    _Chain,
    _skeletons,
)
from compactcli.formats.claude_code.checks import validate_transcript
from compactcli.formats.claude_code.records import (
    _DAG_TYPES,
    ENVELOPE_KEYS,
    METADATA_TYPES,
)
from compactcli.formats.claude_code.state import (
    _chain_of,
    _scan_messages,
    _State,
    _state_of,
)
from compactcli.formats.claude_code.stream import ClaudeCodeStreamer
from compactcli.formats.claude_code.usage import chain_usage, usage_entry
from compactcli.transcript import Block, Compaction, Message, Record, Transcript, Usage, set_in

_CONTEXT = "claude-code.context"
_USAGE_VIEW = "claude-code.usage"
_COMPACTIONS = "claude-code.compactions"
_FINDINGS = "claude-code.validate"
_BOUNDARY_NAMESPACE = uuidlib.UUID("6f0c3c1e-2d1b-4f7a-9a52-1c4e8f3b7d20")
"""Namespace for the uuids of the boundary records compactcli writes (reproducible, v4-shaped)."""


def _content_blocks(raw: Mapping[str, Any]) -> list[Any]:
    """`message.content` of a user/assistant record as a list (empty when it is not one)."""
    message = raw.get("message")
    if isinstance(message, dict):
        content = message.get("content")
        if isinstance(content, list):
            return content
    return []


def _summary_text(raw: Mapping[str, Any]) -> str:
    message = raw.get("message")
    if isinstance(message, dict):
        content = message.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return "\n".join(
                b["text"]
                for b in content
                if isinstance(b, dict)
                and b.get("type") == "text"
                and isinstance(b.get("text"), str)
            )
    ours = raw.get("compactcli")
    if isinstance(ours, dict) and isinstance(ours.get("summary"), str):
        return str(ours["summary"])
    return ""


class ClaudeCodeDialect(Dialect):
    """Claude Code session transcripts (FORMATS.md §1 and §6).

    A Claude Code session file holds records of two families. Chain records (`user`, `assistant`,
    `system`, `attachment`, and legacy `progress`) carry `uuid` and `parentUuid` and form a DAG;
    metadata records (`summary`, `custom-title`, `ai-title`, `last-prompt`, `file-history-snapshot`,
    `queue-operation`, `mode`, `permission-mode`, `content-replacement`, ...) sit outside it.
    Unknown record types and unknown keys pass through: the views ignore them.

    What each view means here:

    - `messages(t)`: every message in file order, one `Message` per record, on every branch and
      sidechain (`isSidechain: true` records are listed too; they reach `context` only in a file
      that holds nothing else, a subagent's own transcript). A `user` record is a user message
      (string content is one text block; tool results are `tool_result` blocks of a user message);
      an `assistant` record is one streamed content block of an API response, and `Message.unit` is
      its `message.id` (else `requestId`, else the uuid), so the records of one response form one
      atomic unit. An `attachment` record is injected context that Claude Code sends to the model as
      a user message, except the attachment types its `normalizeAttachmentForAPI` turns into nothing
      (`SILENT_ATTACHMENTS`, `hook_success` other than SessionStart/UserPromptSubmit, empty hook
      output); it is a user message with one `other` block (`type` "attachment", `name` the
      attachment type, `text` its string fields). A `system/local_command` record is sent to the
      model as a user message, so it is one here; every other `system` record (`compact_boundary`,
      `turn_duration`, ...) and `progress` is not a message. A user record with
      `isCompactSummary: true` has `summary=True`. A tool result's `name` is the name of the
      `tool_use` it answers, looked up earlier in the file.
    - `context(t)`: the messages of the chain Claude Code rebuilds on resume (`loadTranscriptFile`
      and `buildConversationChain`): every chain record goes into a map by uuid (a later duplicate
      replaces an earlier one), legacy `progress` records are bridged over, the newest
      `preservedSegment` is spliced in (head re-parented onto the summary, the summary's other
      children onto the tail, everything physically before the last boundary dropped), the leaf is
      the newest terminal user/assistant record that is not a sidechain (in a subagent's transcript,
      `subagents/agent-<id>.jsonl`, where every record is one, the newest of those), and the walk
      goes from the leaf back to the root; it stops at a `compact_boundary` (parentUuid null).
      Parallel siblings and tool results that the single-parent walk misses are put back after their
      group. Of that chain, the records that reach the model are returned: user and assistant
      records (not the `<synthetic>` API-error assistant records, not `isVirtual` ones), attachments
      that reach the model and `local_command` records, in chain order (Claude Code later moves
      attachments up past plain user prompts and merges same-role neighbours; the set of messages is
      the same).
    - `usage(t)`: one `Usage` per `message.id` (else `requestId`) on the context chain, from the
      last record of the group (the streamed records repeat the usage, and older versions raise
      `output_tokens` on the later ones); `<synthetic>` records, all-zero usage and the records of a
      spliced preserved segment (whose stale usage Claude Code zeroes on load) are skipped.
    - `compactions(t)`: each `system/compact_boundary` with the text of its `isCompactSummary` child
      (`ours` when it carries a top-level `compactcli` key), plus any other record of ours that is
      not such a child; `microcompact_boundary` records (cleared tool output, no summary) are not
      compactions.
    - `validate(t)`: see `ClaudeCodeDialect.validate` for the codes and the rule on unanswered
      calls.

    Writing: `clear_result` also replaces the record's `toolUseResult` (the UI copy of the output);
    `prune_boundary` writes a `system/microcompact_boundary` record, Claude Code's own marker for
    cleared tool output, hung off the current leaf, with our details under `compactcli`.

    `messages()` raises `InputError` for a chain record of a known type with an impossible shape;
    `validate()` reports the same as `bad-shape` findings instead.
    """

    name = "claude-code"
    summary = "Claude Code session transcript (~/.claude/projects/<project>/<session>.jsonl)"
    link_keys = ("uuid", "parentUuid")
    one_message_per_record = True

    # ---- detection

    @classmethod
    def sniff(cls, objects: Sequence[Mapping[str, Any]]) -> int:
        """How sure these first records are a Claude Code session.

        100 for a chain record (`parentUuid` key, string `uuid`, a Claude Code chain type) with
        a `sessionId`, 90 without one; 60 when only Claude Code metadata records were seen (real
        files often start with several); else 0.
        """
        score = 0
        for raw in objects:
            kind = raw.get("type")
            if not isinstance(kind, str):
                continue
            if kind in _DAG_TYPES and "parentUuid" in raw and isinstance(raw.get("uuid"), str):
                if isinstance(raw.get("sessionId"), str):
                    return 100
                score = max(score, 90)
            elif kind in METADATA_TYPES and (
                "sessionId" in raw or "leafUuid" in raw or "messageId" in raw
            ):
                score = max(score, 60)
        return score

    # ---- views

    def _state(self, transcript: Transcript) -> _State:
        return _state_of(transcript)

    def _parsed(self, transcript: Transcript) -> _State:
        """The transcript's state, when every record parsed (else the first one's error)."""
        try:
            state = self._state(transcript)
        except Exception:  # a record that breaks the parser itself: fail as the loop does
            _scan_messages(transcript)
            raise
        if state.errors:
            index, problem = next(iter(state.errors.items()))
            raise InputError(transcript.source, transcript.records[index].lineno, problem)
        return state

    def _context_chain(self, transcript: Transcript) -> _Chain:
        try:
            state = self._state(transcript)
        except Exception:  # a record that breaks the parser: the chain does not need it
            return _build_chain(_skeletons(transcript))
        return _chain_of(transcript, state)

    def messages(self, transcript: Transcript) -> list[Message]:
        return self._parsed(transcript).all_messages()

    def collect(self, transcript: Transcript) -> list[Record]:
        """What the CLI loads next and the metadata (`compactcli.formats.claude_code.collect`)."""
        from compactcli.formats.claude_code.collect import collect

        return collect(transcript, self._context_chain(transcript).records)

    def cwd(self, transcript: Transcript) -> str | None:
        """The `cwd` of the first record that has one: the directory the session was started in.
        Claude Code writes the shell's directory on every message, which a `cd` moves, but a
        resumed session starts where it was started (and is filed under that directory)."""
        for record in transcript.records:
            raw = record.raw
            if isinstance(raw, dict) and isinstance(raw.get("cwd"), str):
                cwd: str = raw["cwd"]
                return cwd
        return None

    def model(self, transcript: Transcript) -> str | None:
        """As `Dialect.model`, reading unmade messages' model without making them."""
        for entry in reversed(self._parsed(transcript).messages.values()):
            if entry.model and not entry.model.startswith("<"):
                return entry.model
        return None

    def context(self, transcript: Transcript) -> list[Message]:
        return list(transcript.view(_CONTEXT, lambda: tuple(self._context(transcript))))

    def _context(self, transcript: Transcript) -> list[Message]:
        state = self._parsed(transcript)
        skeletons = state.skeletons
        out: list[Message] = []
        messages, message_at = state.messages, state.message
        for i in self._context_chain(transcript).records:
            skeleton = skeletons[i]
            if i in messages and skeleton is not None and skeleton[_SK_REACHES]:
                message = message_at(i)
                assert message is not None
                out.append(message)
        return out

    def usage(self, transcript: Transcript) -> list[Usage]:
        return list(transcript.view(_USAGE_VIEW, lambda: tuple(self._usage(transcript))))

    def _usage(self, transcript: Transcript) -> list[Usage]:
        chain = self._context_chain(transcript)
        records, zeroed = transcript.records, chain.zeroed
        return chain_usage(
            (i, *entry)
            for i in chain.records
            if i not in zeroed and (entry := usage_entry(records[i].raw)) is not None
        )

    def streamer(self, source: str = "-") -> ClaudeCodeStreamer:
        """The views of `context`, `usage`, `messages` and `model`, fed record by record."""
        return ClaudeCodeStreamer(source)

    def compactions(self, transcript: Transcript) -> list[Compaction]:
        return list(transcript.view(_COMPACTIONS, lambda: tuple(self._compactions(transcript))))

    def _compactions(self, transcript: Transcript) -> list[Compaction]:
        try:
            skeletons: Skeletons = self._state(transcript).skeletons
        except Exception:  # a record that breaks the parser: compactions do not need it
            skeletons = _skeletons(transcript)
        records = transcript.records
        summaries: dict[str, int] = {}
        for i, skeleton in enumerate(skeletons):
            if (
                skeleton is not None
                and skeleton[_SK_SUMMARY]
                and skeleton[_SK_KIND] == "user"
                and skeleton[_SK_PARENT] is not None
            ):
                summaries.setdefault(skeleton[_SK_PARENT], i)
        summary_records = set(summaries.values())
        out: list[Compaction] = []
        # the records that can be one: boundaries, and records holding our details
        for i, skeleton in enumerate(skeletons):
            if skeleton is None or not (skeleton[_SK_BOUNDARY] or skeleton[_SK_OURS]):
                continue
            raw = records[i].raw
            ours = skeleton[_SK_OURS]
            if skeleton[_SK_BOUNDARY]:
                uuid = raw.get("uuid")
                child = summaries.get(uuid) if isinstance(uuid, str) else None
                text = _summary_text(transcript.records[child].raw) if child is not None else ""
                out.append(Compaction(index=i, summary=text, summary_index=child, ours=ours))
            elif (
                ours and i not in summary_records and raw.get("subtype") != "microcompact_boundary"
            ):
                out.append(
                    Compaction(index=i, summary=_summary_text(raw), summary_index=i, ours=True)
                )
        return out

    # ---- writing

    def clear_result(self, record: Record, block: Block, text: str) -> Record:
        """Replace one tool result's content by `text`, and its `toolUseResult` copy with it.

        `toolUseResult` is the tool's own output kept for the UI (never sent to the model); when
        the record answers just this one call it becomes `text` too, the shape Claude Code
        itself writes for a failed call (its renderer skips a result that does not fit the
        tool's output schema).
        """
        raw = set_in(record.raw, (*block.path, self.result_content_key), text)
        results = [
            b
            for b in _content_blocks(record.raw)
            if isinstance(b, dict) and b.get("type") == "tool_result"
        ]
        if "toolUseResult" in raw and len(results) == 1:
            raw = {**raw, "toolUseResult": text}
        return record.with_raw(raw)

    def prune_boundary(self, transcript: Transcript, details: Mapping[str, Any]) -> list[Record]:
        """A `system/microcompact_boundary` record, as Claude Code writes for its own clearing.

        It hangs off the current leaf (so the context view does not change), copies the leaf's
        envelope (sessionId, cwd, version, ...) and carries our details under `compactcli`. Its
        uuid and timestamp derive from the input, so the same input gives the same bytes.
        """
        chain = self._context_chain(transcript)
        leaf = transcript.records[chain.records[-1]].raw if chain.records else {}
        leaf_uuid = leaf.get("uuid") if isinstance(leaf.get("uuid"), str) else None
        before = details.get("tokens_before", 0)
        after = details.get("tokens_after", 0)
        cleared = details.get("cleared", [])
        tool_ids = [
            c["id"]
            for c in cleared
            if isinstance(cleared, list) and isinstance(c, dict) and isinstance(c.get("id"), str)
        ]
        seed = (leaf_uuid or "") + orjson.dumps(details, option=orjson.OPT_SORT_KEYS).decode()
        raw: dict[str, Any] = {
            "parentUuid": leaf_uuid,
            "isSidechain": leaf.get("isSidechain") is True,
            "type": "system",
            "subtype": "microcompact_boundary",
            "content": "Context microcompacted",
            "isMeta": False,
            "timestamp": leaf.get("timestamp", "1970-01-01T00:00:00.000Z"),
            "uuid": str(
                uuidlib.UUID(bytes=uuidlib.uuid5(_BOUNDARY_NAMESPACE, seed).bytes, version=4)
            ),
            "level": "info",
            "microcompactMetadata": {
                "trigger": "auto",
                "preTokens": before if isinstance(before, int) else 0,
                "tokensSaved": max(0, before - after)
                if isinstance(before, int) and isinstance(after, int)
                else 0,
                "compactedToolIds": tool_ids,
                "clearedAttachmentUUIDs": [],
            },
        }
        for key in ENVELOPE_KEYS:
            if key in leaf:
                raw[key] = leaf[key]
        raw["compactcli"] = dict(details)
        return [Record(raw=raw, line=None, lineno=0)]

    # ---- validation

    def validate(self, transcript: Transcript) -> list[Finding]:
        """Check Claude Code's invariants (FORMATS.md §6).

        Codes: `bad-shape` (chain record without uuid or parentUuid, parentUuid not the first
        key, a record of a known type with an impossible shape), `duplicate-id` (uuid, tool_use
        id, or a second tool_result for one call), `broken-chain` (parentUuid or
        logicalParentUuid naming a uuid not in the file; a compact_boundary whose parentUuid is
        not null), `summary-parent` (an isCompactSummary record that is not the child of a
        compact_boundary; a boundary without a summary child is a warning), `orphan-result`,
        `result-not-adjacent` (a tool_result record whose parentUuid, after bridging legacy
        progress records, or whose sourceToolAssistantUUID is not the assistant record holding
        the tool_use; a record answering several calls may hang off any record of that
        message.id, and one without a sourceToolAssistantUUID off an earlier result that leads
        back to its call, as Claude Code 2.0 chained parallel results), `call-unanswered`.

        The rule for `call-unanswered`: Claude Code adds a placeholder result for every
        unanswered call when it builds a request (`ensureToolResultPairing`), and real files end
        with one when a session stops mid-turn. Among the records that descend from the call's
        record, the first (in file order) that is a real user prompt, an interrupt marker
        ("[Request interrupted by user…") or a queued prompt decides: a real prompt is an error
        (the conversation went on past a call that never got its result, which only a broken
        write or an edit produces), anything else (end of the branch, an interrupt, a
        compaction) is a warning.
        """
        return list(transcript.view(_FINDINGS, lambda: tuple(self._validate(transcript))))

    def _validate(self, transcript: Transcript) -> list[Finding]:
        try:
            state: _State | None = self._state(transcript)
        except Exception:  # a record that breaks the parser itself: fail as the loop does
            state = None
        return validate_transcript(transcript, state)
