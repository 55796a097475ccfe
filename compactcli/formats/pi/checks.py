"""Validation rules of the `pi` dialect over a session file's entry tree.

`check_header`, `check_ids`, `check_compactions` and `check_pairs` each return the findings of
one family of rules, in the codes `PiDialect.validate` reports: the session header, entry ids and
`parentId` links, each compaction's summary and first kept entry, and the pairing of tool calls
and results along each branch. They never edit records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from compactcli.formats.base import Finding, check_unique
from compactcli.formats.pi.tree import CURRENT_VERSION, Parent, _role, _Tree, walk
from compactcli.formats.pi.views import skipped_stop
from compactcli.transcript import Transcript


def check_header(transcript: Transcript, tree: _Tree) -> list[Finding]:
    """`header` findings: a first record that is not the session header, a header without a string
    id or with a version that is not a positive integer, and a second header (a version newer
    than `CURRENT_VERSION` is a warning).
    """
    records = transcript.records
    objects = tree.objects
    if not objects:
        return []
    findings: list[Finding] = []
    first = records[objects[0]]
    if tree.header != objects[0]:
        findings.append(
            Finding(
                first.lineno,
                "header",
                f"first record is a {_describe(first.raw)}, not the session header "
                '({"type":"session","id":…})',
            )
        )
    else:
        header = first.raw
        if not isinstance(header.get("id"), str):
            findings.append(Finding(first.lineno, "header", "session header has no string id"))
        version = header.get("version")
        if "version" in header and (
            isinstance(version, bool) or not isinstance(version, int) or version < 1
        ):
            findings.append(
                Finding(
                    first.lineno,
                    "header",
                    f"session header version {version!r} is not a positive integer",
                )
            )
        elif isinstance(version, int) and version > CURRENT_VERSION:
            findings.append(
                Finding(
                    first.lineno,
                    "header",
                    f"session header version {version} is newer than {CURRENT_VERSION}",
                    "warning",
                )
            )
    for index in objects[1:]:
        if records[index].raw.get("type") == "session":
            findings.append(
                Finding(
                    records[index].lineno,
                    "header",
                    f"second session header (the first is on line {first.lineno})",
                )
            )
    return findings


def check_ids(transcript: Transcript, tree: _Tree) -> list[Finding]:
    """Entry ids and `parentId` links of a v2+ file: `bad-shape` for an entry without a string id or
    a `parentId`, `duplicate-id` for entry ids used twice, and `broken-chain` for a `parentId`
    naming itself or no entry and for a `parentId` loop.
    """
    records = transcript.records
    findings: list[Finding] = []
    ids: list[tuple[str | None, int]] = []
    for index in tree.entries:
        raw, line = records[index].raw, records[index].lineno
        entry_id = raw.get("id")
        kind = raw.get("type")
        if not isinstance(entry_id, str):
            findings.append(Finding(line, "bad-shape", f"{kind!s} entry has no string id"))
        else:
            ids.append((entry_id, line))
        parent_id = raw.get("parentId", ...)
        if parent_id is ...:
            findings.append(Finding(line, "bad-shape", f"{kind!s} entry has no parentId"))
        elif parent_id is not None and not isinstance(parent_id, str):
            findings.append(
                Finding(line, "bad-shape", f"parentId {parent_id!r} is not a string or null")
            )
        elif isinstance(parent_id, str):
            if parent_id == entry_id:
                findings.append(
                    Finding(line, "broken-chain", f"entry {entry_id!r} is its own parent")
                )
            elif parent_id not in tree.by_id:
                findings.append(
                    Finding(
                        line,
                        "broken-chain",
                        f"parentId {parent_id!r} of entry {entry_id!r} names no entry",
                    )
                )
    findings += check_unique(ids, "duplicate-id", "entry id")
    if tree.loop is not None:
        line = records[tree.loop].lineno
        findings.append(
            Finding(line, "broken-chain", "the parentId chain from the leaf loops back here")
        )
    return findings


def check_compactions(transcript: Transcript, tree: _Tree, parent: Parent) -> list[Finding]:
    """Each compaction's summary and first kept entry: `bad-shape` for a compaction without its
    string summary or first kept entry, `broken-chain` when that entry does not exist (a v1 index
    out of range or on the header), and `bad-cut` when it is not an earlier entry on the
    compaction's own branch or is a `toolResult`.
    """
    records = transcript.records
    findings: list[Finding] = []
    for index in tree.entries:
        raw = records[index].raw
        if raw.get("type") != "compaction":
            continue
        line = records[index].lineno
        if not isinstance(raw.get("summary"), str):
            findings.append(Finding(line, "bad-shape", "compaction has no string summary"))
        if tree.version >= 2:
            first_kept = raw.get("firstKeptEntryId")
            if not isinstance(first_kept, str):
                findings.append(
                    Finding(line, "bad-shape", "compaction has no string firstKeptEntryId")
                )
                continue
            target = tree.by_id.get(first_kept)
            name = f"firstKeptEntryId {first_kept!r}"
            if target is None:
                findings.append(Finding(line, "broken-chain", f"{name} names no entry"))
                continue
        else:
            position = raw.get("firstKeptEntryIndex")
            if isinstance(position, bool) or not isinstance(position, int):
                findings.append(
                    Finding(line, "bad-shape", "compaction has no integer firstKeptEntryIndex")
                )
                continue
            name = f"firstKeptEntryIndex {position}"
            if not 0 <= position < len(tree.objects) or tree.objects[position] == tree.header:
                findings.append(Finding(line, "broken-chain", f"{name} names no entry"))
                continue
            target = tree.objects[position]
        ancestors = set(walk(parent(index), parent, len(records)))
        if target not in ancestors:
            findings.append(
                Finding(
                    line,
                    "bad-cut",
                    f"{name} (line {records[target].lineno}) is not an earlier entry on "
                    "the compaction's branch",
                )
            )
        elif _role(records[target].raw) == "toolResult":
            findings.append(
                Finding(
                    line,
                    "bad-cut",
                    f"{name} points at a toolResult (line {records[target].lineno}); "
                    "the kept part must not start with a tool result",
                )
            )
    return findings


def check_pairs(transcript: Transcript, shaped: Sequence[int], parent: Parent) -> list[Finding]:
    """toolResult ↔ toolCall pairing, along each result's own branch, over the entries whose view
    parsed: `duplicate-id` for toolCall ids used twice and for a second result of one call,
    `orphan-result` for a result whose call is nowhere, `result-not-adjacent` for a result
    outside the run of results after the assistant message that made its call, and
    `call-unanswered` as a warning (pi answers such a call with "No result provided"), not for
    calls of messages pi drops.
    """
    records = transcript.records
    findings: list[Finding] = []
    calls: dict[int, dict[str, str]] = {}  # assistant record -> {call id: tool name}
    call_lines: list[tuple[str | None, int]] = []
    for index in shaped:
        message = records[index].raw.get("message")
        if _role(records[index].raw) != "assistant":
            continue
        content = message.get("content")
        own: dict[str, str] = {}
        for block in content if isinstance(content, list) else ():
            if isinstance(block, Mapping) and block.get("type") == "toolCall":
                call_id = block.get("id")
                if isinstance(call_id, str):
                    own[call_id] = str(block.get("name", ""))
                    call_lines.append((call_id, records[index].lineno))
        if own:
            calls[index] = own
    findings += check_unique(call_lines, "duplicate-id", "toolCall id")
    every_call = {call_id: index for index, own in calls.items() for call_id in own}

    owners: dict[int, int | None] = {}

    def owner(start: int | None) -> int | None:
        """The assistant message a run of tool results at `start` hangs from."""
        chain: list[int] = []
        current = start
        found: int | None = None
        while current is not None and len(chain) <= len(records):
            if current in owners:
                found = owners[current]
                break
            step = _pairing_step(records[current].raw)
            if step == "assistant":
                found = current
                break
            if step == "stop":
                break
            chain.append(current)
            current = parent(current)
        for index in chain:
            owners[index] = found
        return found

    answered: dict[int, dict[str, int]] = {}
    for index in shaped:
        raw = records[index].raw
        if _role(raw) != "toolResult":
            continue
        line = records[index].lineno
        call_id = raw["message"].get("toolCallId")
        if not isinstance(call_id, str):
            findings.append(Finding(line, "bad-shape", "toolResult has no string toolCallId"))
            continue
        assistant = owner(parent(index))
        if assistant is not None and call_id in calls.get(assistant, {}):
            seen = answered.setdefault(assistant, {})
            if call_id in seen:
                findings.append(
                    Finding(
                        line,
                        "duplicate-id",
                        f"second toolResult for call {call_id!r} "
                        f"(the first is on line {seen[call_id]})",
                    )
                )
            else:
                seen[call_id] = line
        elif call_id in every_call:
            findings.append(
                Finding(
                    line,
                    "result-not-adjacent",
                    f"toolResult for call {call_id!r} is not among the results right after "
                    f"the assistant message that made the call (line "
                    f"{records[every_call[call_id]].lineno})",
                )
            )
        else:
            findings.append(
                Finding(line, "orphan-result", f"toolResult for unknown call {call_id!r}")
            )
    for index, own in calls.items():
        if skipped_stop(records[index].raw["message"]):
            continue
        missing = [c for c in own if c not in answered.get(index, {})]
        if missing:
            names = ", ".join(f"{c!r} ({own[c]})" for c in missing)
            findings.append(
                Finding(
                    records[index].lineno,
                    "call-unanswered",
                    f"toolCall {names} has no toolResult; pi sends 'No result provided'",
                    "warning",
                )
            )
    return findings


def _pairing_step(raw: Mapping[str, Any]) -> str:
    """How the search for a result's call treats an entry: assistant, stop, or pass over."""
    kind = raw.get("type")
    if kind in ("custom_message", "branch_summary"):
        return "stop"
    role = _role(raw)
    if role == "assistant":
        return "assistant"
    if role == "bashExecution":
        return "pass" if raw["message"].get("excludeFromContext") is True else "stop"
    if role in ("toolResult", None):
        return "pass"
    return "stop"  # a user-side message ends the run of results


def _describe(raw: Mapping[str, Any]) -> str:
    kind = raw.get("type")
    return f"{kind!r} record" if isinstance(kind, str) else "record without a type"
