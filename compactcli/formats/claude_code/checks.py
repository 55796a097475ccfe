"""The checks of `ClaudeCodeDialect.validate` (FORMATS.md §6), over a transcript's records.

`validate_transcript` takes the transcript and its parsed state (None when a record breaks the
parser; the records are then parsed one by one here) and returns its findings sorted by line
and code: record shapes, duplicate uuids, tool_use ids and results, parent links to uuids not
in the file, compact summaries that are not a boundary's child, tool results orphaned or not
hung off their call, and calls left unanswered, an error only when the conversation goes on
with a real user prompt. The codes and rules are those `ClaudeCodeDialect.validate` lists.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from compactcli.formats.base import Finding, check_unique
from compactcli.formats.claude_code.chain import (
    _SK_BOUNDARY,
    _SK_FIRST,
    _SK_KIND,
    _SK_LOGICAL,
    _SK_PARENT,
    _SK_SOURCE,
    _SK_SUMMARY,
    _SK_UUID,
    Skeletons,
    _Graph,
    _graph,
    _skeletons,
)
from compactcli.formats.claude_code.records import (
    _DAG_TYPES,
    _Lite,
    _message_id,
    _record_message,
    _ShapeError,
)
from compactcli.formats.claude_code.state import _State
from compactcli.transcript import Message, Transcript

INTERRUPT_PREFIX = "[Request interrupted by user"


def validate_transcript(transcript: Transcript, state: _State | None) -> list[Finding]:
    """The findings of `transcript`, whose parsed state is `state` (None when a record
    breaks the parser), sorted by line and code."""
    findings: list[Finding] = []
    parsed: dict[int, Message | _Lite] = {}
    all_uuids: set[str] = set()
    uuid_at: list[tuple[str, int]] = []  # (uuid, record index): lines only for duplicates
    records = transcript.records
    if state is not None:
        skeletons: Skeletons = state.skeletons
        messages, errors = state.messages, state.errors
        for i, skeleton in enumerate(skeletons):
            if skeleton is None:
                continue
            kind = skeleton[_SK_KIND]  # an array or object type reads as no chain type
            if kind in _DAG_TYPES:
                uuid = skeleton[_SK_UUID]
                if uuid is None or not skeleton[_SK_FIRST]:
                    record = records[i]
                    findings.extend(_shape(record.raw, record.lineno))
                if uuid is not None:
                    all_uuids.add(uuid)
                    uuid_at.append((uuid, i))
        if errors:
            for i, problem in errors.items():
                findings.append(Finding(records[i].lineno, "bad-shape", problem))
            parsed = {i: m for i, m in messages.items() if i not in errors}
        else:
            parsed = messages  # read only below
    else:
        skeletons = _skeletons(transcript)
        names: dict[str, str] = {}
        for i, record in transcript.objects():
            raw = record.raw
            kind = raw.get("type")
            kind = kind if isinstance(kind, str) else None
            uuid = raw.get("uuid")
            if isinstance(uuid, str) and kind in _DAG_TYPES:
                all_uuids.add(uuid)
            if kind in _DAG_TYPES:
                findings.extend(_shape(raw, record.lineno))
                if isinstance(uuid, str):
                    uuid_at.append((uuid, i))
            try:
                message = _record_message(i, raw, names)
            except _ShapeError as error:
                findings.append(Finding(record.lineno, "bad-shape", str(error)))
                continue
            if message is not None:
                parsed[i] = message
    if len(all_uuids) < len(uuid_at):  # some uuid is there twice
        uuid_items = [(uuid, records[i].lineno) for uuid, i in uuid_at]
        findings.extend(check_unique(uuid_items, "duplicate-id", "uuid"))
    duplicate_records = {f.line for f in findings if f.code == "duplicate-id"}
    graph = state.uuid_graph() if state is not None else _graph(skeletons)
    findings.extend(_chain_findings(transcript, skeletons, all_uuids, graph))
    findings.extend(_pairing(transcript, parsed, graph, duplicate_records, skeletons))
    return sorted(findings, key=lambda f: (f.line, f.code))


def _shape(raw: Mapping[str, Any], line: int) -> list[Finding]:
    kind = raw.get("type")
    uuid = raw.get("uuid")
    if not isinstance(uuid, str):
        return [Finding(line, "bad-shape", f"{kind} record has no uuid")]
    if "parentUuid" not in raw:
        return [Finding(line, "bad-shape", f"{kind} record {uuid} has no parentUuid key")]
    first = next(iter(raw))
    if first != "parentUuid":
        return [
            Finding(
                line,
                "bad-shape",
                f"{kind} record {uuid}: parentUuid is not the first key (found {first!r})",
            )
        ]
    return []


def _chain_findings(
    transcript: Transcript, skeletons: Skeletons, all_uuids: set[str], graph: _Graph
) -> Iterator[Finding]:
    boundaries: dict[str, int] = {}
    summary_children: set[str] = set()
    records = transcript.records
    for i, skeleton in enumerate(skeletons):
        if skeleton is not None and skeleton[_SK_BOUNDARY] and skeleton[_SK_UUID] is not None:
            boundaries[skeleton[_SK_UUID]] = records[i].lineno
    for i, skeleton in enumerate(skeletons):
        # the skeleton holds the type and the parent (when a string) as the record does
        if skeleton is None or skeleton[_SK_KIND] not in _DAG_TYPES:
            continue
        kind = skeleton[_SK_KIND]
        parent = skeleton[_SK_PARENT]
        logical = skeleton[_SK_LOGICAL]
        if parent is not None and parent not in all_uuids:
            yield Finding(
                records[i].lineno,
                "broken-chain",
                f"parentUuid {parent} of {kind} record {records[i].raw.get('uuid')} is not "
                "in the file",
            )
        if logical is not None and logical not in all_uuids:
            yield Finding(
                records[i].lineno,
                "broken-chain",
                f"logicalParentUuid {logical} of {kind} record {records[i].raw.get('uuid')} "
                "is not in the file",
            )
        if skeleton[_SK_BOUNDARY] and records[i].raw.get("parentUuid") is not None:
            raw = records[i].raw
            yield Finding(
                records[i].lineno,
                "broken-chain",
                f"compact_boundary {raw.get('uuid')} has parentUuid {raw.get('parentUuid')}; "
                "it must be null (the old parent goes in logicalParentUuid)",
            )
        if (
            skeleton[_SK_SUMMARY]
            and kind == "user"
            and records[i].raw.get("isCompactSummary") is True
        ):
            if parent is not None and parent in boundaries:
                summary_children.add(parent)
            else:
                raw = records[i].raw
                yield Finding(
                    records[i].lineno,
                    "summary-parent",
                    f"compact summary {raw.get('uuid')} has parent {raw.get('parentUuid')}, "
                    "not a compact_boundary",
                )
    for uuid, line in boundaries.items():
        if uuid not in summary_children:
            yield Finding(
                line,
                "summary-parent",
                f"compact_boundary {uuid} has no isCompactSummary child",
                "warning",
            )


def _pairing(
    transcript: Transcript,
    parsed: Mapping[int, Message | _Lite],
    graph: _Graph,
    duplicate_lines: set[int],
    skeletons: Skeletons,
) -> Iterator[Finding]:
    records = transcript.records
    # where each call lives: call id -> (record index, name)
    calls: dict[str, tuple[int, str]] = {}
    call_at: list[tuple[str, int]] = []  # (call id, record index): lines only for duplicates
    answering: list[tuple[int, list[str]]] = []  # user messages' results' call ids, in order
    for i, message in parsed.items():
        role = message.role
        if type(message) is _Lite:
            if role == "assistant":
                if duplicate_lines and records[i].lineno in duplicate_lines:
                    continue
                for call_id, name in message.calls:
                    call_at.append((call_id, i))
                    calls.setdefault(call_id, (i, name or "?"))
            elif role == "user" and message.items:
                ids = [call_id for call_id, _ in message.results]
                if ids:
                    answering.append((i, ids))
            continue
        assert isinstance(message, Message)
        if role == "assistant":
            if duplicate_lines and records[i].lineno in duplicate_lines:
                continue
            for block in message.blocks:
                if block.kind == "tool_call" and block.call_id is not None:
                    call_at.append((block.call_id, i))
                    calls.setdefault(block.call_id, (i, block.name or "?"))
        elif role == "user":
            ids = [b.call_id or "" for b in message.blocks if b.kind == "tool_result"]
            if ids:
                answering.append((i, ids))
    if len(calls) < len(call_at):  # some call id is there twice
        call_items = [(call_id, records[i].lineno) for call_id, i in call_at]
        yield from check_unique(call_items, "duplicate-id", "tool_use id")
    raw_parent = graph.raw_parent
    answered: dict[str, int] = {}  # call id -> the record index of its first result
    for i, results in answering:
        skeleton = skeletons[i]
        assert skeleton is not None
        if skeleton[_SK_KIND] != "user":
            continue
        if duplicate_lines and records[i].lineno in duplicate_lines:
            continue
        for call_id in results:
            if call_id in answered:
                yield Finding(
                    records[i].lineno,
                    "duplicate-id",
                    f"tool_use {call_id} is answered twice "
                    f"(first tool_result on line {records[answered[call_id]].lineno})",
                )
                continue
            answered[call_id] = i
            holder = calls.get(call_id)
            if holder is None:
                yield Finding(
                    records[i].lineno,
                    "orphan-result",
                    f"tool_result for {call_id} has no tool_use in the file",
                )
                continue
            holder_skeleton = skeletons[holder[0]]
            assert holder_skeleton is not None
            holder_uuid = holder_skeleton[_SK_UUID]
            if holder_uuid is None:  # not a string: as the record has it
                holder_uuid = records[holder[0]].raw.get("uuid")
            parent = raw_parent[i] if i in raw_parent else records[i].raw.get("parentUuid")
            if parent != holder_uuid:
                raw, holder_raw = records[i].raw, records[holder[0]].raw
                if not (
                    len(results) > 1 and _same_group(records, graph, parent, holder_raw)
                ) and not (
                    "sourceToolAssistantUUID" not in raw
                    and _after_group(records, graph, parent, holder_raw)
                ):
                    yield Finding(
                        records[i].lineno,
                        "result-not-adjacent",
                        f"tool_result for {call_id} has parentUuid {parent}, not "
                        f"{holder_uuid} (the assistant record holding the tool_use)",
                    )
                    continue
            source = skeleton[_SK_SOURCE]  # the record's when a string
            if isinstance(source, str) and source != holder_uuid and len(results) == 1:
                yield Finding(
                    records[i].lineno,
                    "result-not-adjacent",
                    f"tool_result for {call_id} has sourceToolAssistantUUID {source}, "
                    f"not {holder_uuid} (the assistant record holding the tool_use)",
                )
    unanswered = [(cid, where) for cid, where in calls.items() if cid not in answered]
    if unanswered:
        yield from _unanswered(transcript, graph, unanswered)


def _same_group(
    records: Sequence[Any], graph: _Graph, parent: Any, holder_raw: Mapping[str, Any]
) -> bool:
    if not isinstance(parent, str) or parent not in graph.index:
        return False
    parent_raw = records[graph.index[parent]].raw
    return parent_raw.get("type") == "assistant" and _message_id(parent_raw) == _message_id(
        holder_raw
    )


def _after_group(
    records: Sequence[Any], graph: _Graph, parent: Any, holder_raw: Mapping[str, Any]
) -> bool:
    """Whether the call's record is reached from `parent` through records of the same
    `message.id` and runs of tool results: how Claude Code 2.0 chained the results of parallel
    calls, all after the last call, each after the one before (with no
    `sourceToolAssistantUUID`)."""
    holder_uuid, group = holder_raw.get("uuid"), _message_id(holder_raw)
    seen: set[str] = set()
    while isinstance(parent, str) and parent in graph.index and parent not in seen:
        if parent == holder_uuid:
            return True
        seen.add(parent)
        i = graph.index[parent]
        raw = records[i].raw
        if raw.get("type") == "assistant":
            if group is None or _message_id(raw) != group:
                return False
        elif raw.get("type") != "user" or not _only_results(raw):
            return False
        parent = graph.raw_parent.get(i, raw.get("parentUuid"))
    return False


def _only_results(raw: Mapping[str, Any]) -> bool:
    message = raw.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    )


def _unanswered(
    transcript: Transcript, graph: _Graph, calls: Iterable[tuple[str, tuple[int, str]]]
) -> Iterator[Finding]:
    records = transcript.records
    children: dict[str, list[int]] = {}
    for i, parent in graph.raw_parent.items():
        if parent is not None:
            children.setdefault(parent, []).append(i)
    for call_id, (i, name) in calls:
        start = records[i].raw.get("uuid")
        first: int | None = None
        stack = list(children.get(start, [])) if isinstance(start, str) else []
        visited: set[int] = set()
        while stack:
            j = stack.pop()
            if j in visited:
                continue
            visited.add(j)
            raw = records[j].raw
            if _is_real_prompt(raw) or _is_interrupt(raw):
                if first is None or j < first:
                    first = j
                continue
            uuid = raw.get("uuid")
            if isinstance(uuid, str):
                stack.extend(children.get(uuid, []))
        line = records[i].lineno
        what = f"tool_use {call_id} ({name}) has no tool_result"
        if first is not None and _is_real_prompt(records[first].raw):
            yield Finding(
                line,
                "call-unanswered",
                f"{what}, and the conversation goes on with a user prompt on line "
                f"{records[first].lineno}",
            )
        elif first is not None:
            yield Finding(
                line,
                "call-unanswered",
                f"{what}: the turn was interrupted (Claude Code adds a placeholder result)",
                "warning",
            )
        else:
            yield Finding(
                line,
                "call-unanswered",
                f"{what}: its branch ends there (Claude Code adds a placeholder result)",
                "warning",
            )


def _is_real_prompt(raw: Mapping[str, Any]) -> bool:
    """A user turn typed by the person: not meta, not a summary, with content not a result."""
    if raw.get("type") == "attachment":
        attachment = raw.get("attachment")
        return isinstance(attachment, dict) and attachment.get("type") == "queued_command"
    if raw.get("type") != "user" or raw.get("isMeta") or raw.get("isCompactSummary"):
        return False
    message = raw.get("message")
    if not isinstance(message, dict):
        return False
    content = message.get("content")
    if isinstance(content, str):
        return bool(content.strip()) and not content.startswith(INTERRUPT_PREFIX)
    if isinstance(content, list):
        blocks = [b for b in content if isinstance(b, dict)]
        if not blocks or any(b.get("type") == "tool_result" for b in blocks):
            return False
        return not any(
            isinstance(b.get("text"), str) and b["text"].startswith(INTERRUPT_PREFIX)
            for b in blocks
        )
    return False


def _is_interrupt(raw: Mapping[str, Any]) -> bool:
    if raw.get("type") != "user":
        return False
    message = raw.get("message")
    if not isinstance(message, dict):
        return False
    content = message.get("content")
    if isinstance(content, str):
        return content.startswith(INTERRUPT_PREFIX)
    if isinstance(content, list):
        return any(
            isinstance(b, dict)
            and isinstance(b.get("text"), str)
            and b["text"].startswith(INTERRUPT_PREFIX)
            for b in content
        )
    return False
