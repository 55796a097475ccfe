"""Repairing a Claude Code session the way Claude Code reads one (FORMATS.md §1.3, §1.6).

`repair(transcript, findings)` fixes, in one pass (see `compactcli.formats.repairing`), what
`ClaudeCodeDialect.validate` found, as Claude Code's loader and its API view resolve it on
resume: a placeholder result for a call left without one, results that answer no call dropped or
hung back off their call, duplicate records and ids, broken chains and malformed records
resolved. Each finding code is fixed by the `_Fixer` method of its name.
"""

from __future__ import annotations

import re
import uuid as uuidlib
from collections.abc import Callable, Sequence
from typing import Any, TypeGuard

from compactcli.formats.base import Finding
from compactcli.formats.claude_code.records import (
    CHAIN_TYPES,
    ENVELOPE_KEYS,
    LEGACY_TYPES,
    _block,
    _ShapeError,
)
from compactcli.formats.repairing import Edits, Repair, dispatch, first_keys
from compactcli.transcript import Transcript

PLACEHOLDER = "[Tool result missing due to internal error]"
"""The content Claude Code gives the result it adds for a call that has none."""

_NAMESPACE = uuidlib.UUID("0b6f5a9e-7c2d-4e31-8f4a-5d9c2b1e7a63")
"""Namespace of the uuids of the records a repair adds (the same input gives the same bytes)."""

_DAG_TYPES = CHAIN_TYPES | LEGACY_TYPES
_ORDER = (
    "bad-shape",
    "duplicate-id",
    "broken-chain",
    "summary-parent",
    "orphan-result",
    "result-not-adjacent",
    "call-unanswered",
)
_FLAGGED = re.compile(r"^tool_result for (.+?) has (?:parentUuid|sourceToolAssistantUUID) ")


def repair(transcript: Transcript, findings: Sequence[Finding]) -> tuple[Transcript, list[Repair]]:
    """One pass of fixes for `findings`, each code by the `_Fixer` method of its name."""
    fixer = _Fixer(transcript)
    handlers: dict[str, Callable[[int, Finding], None]] = {
        "bad-shape": fixer.bad_shape,
        "duplicate-id": fixer.duplicate_id,
        "broken-chain": fixer.broken_chain,
        "summary-parent": fixer.summary_parent,
        "orphan-result": fixer.orphan_result,
        "result-not-adjacent": fixer.result_not_adjacent,
        "call-unanswered": fixer.call_unanswered,
    }
    dispatch(transcript, findings, handlers, _ORDER)
    return fixer.edits.apply(), fixer.edits.repairs


def _content(raw: Any) -> list[Any] | None:
    """A user or assistant record's content blocks (None when it has no list of them)."""
    message = raw.get("message") if isinstance(raw, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, list) else None


def _with_content(raw: dict[str, Any], content: list[Any]) -> dict[str, Any]:
    return {**raw, "message": {**raw["message"], "content": content}}


def _ids(content: Sequence[Any] | None, kind: str, key: str) -> list[str]:
    return [
        b[key]
        for b in content or ()
        if isinstance(b, dict) and b.get("type") == kind and isinstance(b.get(key), str)
    ]


class _Fixer:
    """The fixes of one pass, planned on `edits` from what the records hold."""

    def __init__(self, transcript: Transcript) -> None:
        self.edits = Edits(transcript)
        self.records = transcript.records
        self.uuids: dict[str, list[int]] = {}  # uuid -> chain records holding it, file order
        self.children: dict[str, list[int]] = {}  # uuid -> records naming it as parent
        self.holder: dict[str, int] = {}  # call id -> first assistant record making it
        self.answers: dict[str, list[int]] = {}  # call id -> user records answering it
        for i, record in enumerate(self.records):
            raw = record.raw
            kind = raw.get("type") if isinstance(raw, dict) else None
            if not isinstance(kind, str) or kind not in _DAG_TYPES:
                continue
            uuid, parent = raw.get("uuid"), raw.get("parentUuid")
            if isinstance(uuid, str):
                self.uuids.setdefault(uuid, []).append(i)
            if isinstance(parent, str):
                self.children.setdefault(parent, []).append(i)
            content = _content(raw)
            if raw.get("type") == "assistant":
                for call_id in _ids(content, "tool_use", "id"):
                    self.holder.setdefault(call_id, i)
            elif raw.get("type") == "user":
                for call_id in dict.fromkeys(_ids(content, "tool_result", "tool_use_id")):
                    self.answers.setdefault(call_id, []).append(i)
        self.answered: set[str] = set()  # calls given a placeholder in this pass

    # ---- helpers

    def raw(self, index: int) -> dict[str, Any]:
        found = self.edits.raw(index)
        assert isinstance(found, dict)
        return found

    def unique(self, uuid: Any) -> TypeGuard[str]:
        return isinstance(uuid, str) and len(self.uuids.get(uuid, ())) == 1

    def drop_record(self, index: int, code: str, why: str) -> None:
        """Drop record `index`; its children (when its uuid is its own) hang off its parent."""
        raw = self.raw(index)
        self.edits.drop(index)
        uuid = raw.get("uuid")
        moved = 0
        if self.unique(uuid):
            parent = raw.get("parentUuid") if isinstance(raw.get("parentUuid"), str) else None
            for child in self.children.get(uuid, ()):
                if child != index and not self.edits.dropped(child):
                    self.edits.claim(child)
                    self.edits.replace(child, {**self.raw(child), "parentUuid": parent})
                    moved += 1
        kind = raw.get("type")
        hung = ""
        if moved:
            hung = (
                "; its child record now hangs"
                if moved == 1
                else f"; its {moved} child records hang"
            )
            hung += " off its parent"
        self.edits.note(index, code, f"dropped the {kind} record: {why}{hung}")

    def drop_blocks(self, index: int, positions: set[int], code: str, what: str) -> None:
        """Drop content blocks of record `index`; the record goes when none is left."""
        raw = self.raw(index)
        content = _content(raw) or []
        kept = [b for p, b in enumerate(content) if p not in positions]
        if not kept:
            self.drop_record(index, code, what)
            return
        self.edits.replace(index, _with_content(raw, kept))
        self.edits.note(index, code, f"dropped {what}")

    def ancestors(self, index: int) -> set[str]:
        """The uuids on record `index`'s parentUuid chain (itself included)."""
        found: set[str] = set()
        current: int | None = index
        while current is not None and len(found) <= len(self.records):
            uuid = self.records[current].raw.get("uuid")
            if not isinstance(uuid, str) or uuid in found:
                break
            found.add(uuid)
            parent = self.records[current].raw.get("parentUuid")
            holders = self.uuids.get(parent, []) if isinstance(parent, str) else []
            current = holders[-1] if holders else None
        return found

    # ---- one handler per code

    def bad_shape(self, index: int, finding: Finding) -> None:
        """A chain record without a uuid is dropped (no chain can hold it); one without a
        `parentUuid` key gets `parentUuid: null` first (the loader starts the chain there); a
        `parentUuid` that is not the first key is moved first; a content block of an impossible
        shape is dropped, and a record whose message cannot be read at all goes.
        """
        if not self.edits.claim(index):
            return
        raw = self.raw(index)
        kind = raw.get("type")
        if not isinstance(raw.get("uuid"), str):
            self.drop_record(index, finding.code, "it has no uuid, so no chain can hold it")
        elif "parentUuid" not in raw:
            self.edits.replace(index, {"parentUuid": None, **raw})
            self.edits.note(
                index,
                finding.code,
                "set parentUuid to null, first (the record had none: Claude Code's loader "
                "starts the chain there)",
            )
        elif next(iter(raw)) != "parentUuid":
            self.edits.replace(index, first_keys(raw, ["parentUuid"]))
            self.edits.note(index, finding.code, "moved parentUuid to the first key")
        elif kind in ("user", "assistant") and _content(raw):
            content = _content(raw) or []
            bad: set[int] = set()
            for position, block in enumerate(content):
                try:
                    _block(block, ("message", "content", position), {})
                except _ShapeError:
                    bad.add(position)
            if bad and len(bad) < len(content):
                where = ", ".join(str(p) for p in sorted(bad))
                self.drop_blocks(
                    index,
                    bad,
                    finding.code,
                    f"content block{'s' if len(bad) > 1 else ''} {where} of an impossible shape "
                    f"({finding.message})",
                )
            else:
                self.drop_record(index, finding.code, finding.message)
        else:
            self.drop_record(index, finding.code, finding.message)

    def duplicate_id(self, index: int, finding: Finding) -> None:
        """Of records sharing a uuid, keep the last, as the loader's map by uuid does (when all are
        the same record, the copies after the first go); drop a `tool_use` whose id an earlier
        call has, and a second `tool_result` for one call.
        """
        raw = self.raw(index)
        uuid = raw.get("uuid")
        group = self.uuids.get(uuid, []) if isinstance(uuid, str) else []
        if len(group) > 1:
            self._duplicate_uuid(group, finding)
            return
        if not self.edits.claim(index):
            return
        content = _content(raw) or []
        if raw.get("type") == "assistant":
            seen: set[str] = set()
            bad: set[int] = set()
            for position, block in enumerate(content):
                if not isinstance(block, dict) or block.get("type") != "tool_use":
                    continue
                call_id = block.get("id")
                if not isinstance(call_id, str):
                    continue
                if call_id in seen or self.holder.get(call_id, index) < index:
                    bad.add(position)
                seen.add(call_id)
            if bad:
                ids = ", ".join(str(content[p].get("id")) for p in sorted(bad))
                self.drop_blocks(
                    index, bad, finding.code, f"tool_use {ids}: an earlier call has the same id"
                )
        elif raw.get("type") == "user":
            seen = set()
            bad = set()
            for position, block in enumerate(content):
                if not isinstance(block, dict) or block.get("type") != "tool_result":
                    continue
                call_id = block.get("tool_use_id")
                if not isinstance(call_id, str):
                    continue
                if call_id in seen or self.answers.get(call_id, [index])[0] < index:
                    bad.add(position)
                seen.add(call_id)
            if bad:
                ids = ", ".join(str(content[p].get("tool_use_id")) for p in sorted(bad))
                self.drop_blocks(
                    index,
                    bad,
                    finding.code,
                    f"a second tool_result for {ids} (Claude Code keeps one)",
                )

    def _duplicate_uuid(self, group: list[int], finding: Finding) -> None:
        if any(self.edits.claimed(i) for i in group):
            return
        for i in group:
            self.edits.claim(i)
        raws = [self.records[i].raw for i in group]
        if all(r == raws[0] for r in raws):
            for i in group[1:]:
                self.edits.drop(i)
                self.edits.note(
                    i,
                    finding.code,
                    f"dropped a second copy of the record on line {self.edits.line(group[0])}",
                )
            return
        last = group[-1]
        for i in group[:-1]:
            self.edits.drop(i)
            self.edits.note(
                i,
                finding.code,
                f"dropped the record: the record on line {self.edits.line(last)} has its uuid, "
                "and Claude Code keeps the last",
            )

    def broken_chain(self, index: int, finding: Finding) -> None:
        """A `parentUuid` naming no record becomes null (the loader's walk stops there), and so does
        a `logicalParentUuid` naming none; a `compact_boundary` with a parent gets null, the old
        parent going to `logicalParentUuid`, as Claude Code writes a boundary.
        """
        if not self.edits.claim(index):
            return
        raw = dict(self.raw(index))
        parent = raw.get("parentUuid")
        logical = raw.get("logicalParentUuid")
        done: list[str] = []
        if raw.get("type") == "system" and raw.get("subtype") == "compact_boundary":
            if parent is not None:
                raw["parentUuid"] = None
                if logical is None:
                    raw["logicalParentUuid"] = logical = parent
                done.append("set the boundary's parentUuid to null")
        elif isinstance(parent, str) and parent not in self.uuids:
            raw["parentUuid"] = None
            done.append(
                f"set parentUuid {parent} (no record has it) to null: Claude Code's loader "
                "starts the chain there"
            )
        if logical is not None and (not isinstance(logical, str) or logical not in self.uuids):
            raw["logicalParentUuid"] = None
            done.append(f"set logicalParentUuid {logical} (no record has it) to null")
        if done:
            self.edits.replace(index, raw)
            self.edits.note(index, finding.code, "; ".join(done))

    def summary_parent(self, index: int, finding: Finding) -> None:
        """An `isCompactSummary` record whose parent is not a boundary (an error) loses the flag: it
        is read as the user message it is.
        """
        raw = self.raw(index)
        if finding.severity != "error" or raw.get("isCompactSummary") is not True:
            return
        if not self.edits.claim(index):
            return
        self.edits.replace(index, {k: v for k, v in raw.items() if k != "isCompactSummary"})
        self.edits.note(
            index,
            finding.code,
            "removed isCompactSummary: its parent is not a compact_boundary, so it is read as "
            "the user message it is",
        )

    def orphan_result(self, index: int, finding: Finding) -> None:
        """Drop a `tool_result` whose `tool_use` is nowhere, as Claude Code drops it on load; a
        record left with no content goes (its children are hung off its parent).
        """
        if not self.edits.claim(index):
            return
        content = _content(self.raw(index)) or []
        bad = {
            p
            for p, b in enumerate(content)
            if isinstance(b, dict)
            and b.get("type") == "tool_result"
            and isinstance(b.get("tool_use_id"), str)
            and b["tool_use_id"] not in self.holder
        }
        if bad:
            ids = ", ".join(str(content[p]["tool_use_id"]) for p in sorted(bad))
            self.drop_blocks(
                index,
                bad,
                finding.code,
                f"the tool_result for {ids}: no tool_use has its id (Claude Code drops it on load)",
            )

    def result_not_adjacent(self, index: int, finding: Finding) -> None:
        """Put a result back where Claude Code's loader puts it, or drop it.

        A result whose record hangs off an ancestor of the call's record (a sibling of the same
        response, a record before it) is hung off the call's record
        (`recoverOrphanedParallelToolResults`); a wrong `sourceToolAssistantUUID` is set to the
        call's record; a result anywhere else is dropped, as the API view drops a result that
        does not answer the message before it (the call then gets the placeholder).
        """
        if not self.edits.claim(index):
            return
        raw = self.raw(index)
        content = _content(raw) or []
        flagged = _FLAGGED.match(finding.message)
        results = [
            (p, b["tool_use_id"])
            for p, b in enumerate(content)
            if isinstance(b, dict)
            and b.get("type") == "tool_result"
            and isinstance(b.get("tool_use_id"), str)
            and b["tool_use_id"] in self.holder
            and (flagged is None or b["tool_use_id"] == flagged.group(1))
        ]
        if not results:
            return
        call_id = results[0][1]
        holder = self.holder[call_id]
        holder_uuid = self.records[holder].raw.get("uuid")
        if not self.unique(holder_uuid):
            return
        parent = raw.get("parentUuid")
        single = len(_ids(content, "tool_result", "tool_use_id")) == 1
        if single and parent == holder_uuid:
            self.edits.replace(index, {**raw, "sourceToolAssistantUUID": holder_uuid})
            self.edits.note(
                index,
                finding.code,
                f"set sourceToolAssistantUUID to {holder_uuid}, the record of the tool_use",
            )
        elif (
            single
            and isinstance(parent, str)
            and parent in (above := self.ancestors(holder))
            and isinstance(raw.get("uuid"), str)
            and raw["uuid"] not in above
        ):
            new = {**raw, "parentUuid": holder_uuid}
            if "sourceToolAssistantUUID" in raw:
                new["sourceToolAssistantUUID"] = holder_uuid
            self.edits.replace(index, new)
            self.edits.note(
                index,
                finding.code,
                f"hung the tool_result for {call_id} off the record of its tool_use (line "
                f"{self.edits.line(holder)}), where Claude Code's loader puts it back",
            )
        else:
            bad = {p for p, c in results}
            ids = ", ".join(c for _, c in results)
            self.drop_blocks(
                index,
                bad,
                finding.code,
                f"the tool_result for {ids}: it does not follow its tool_use (line "
                f"{self.edits.line(holder)}), and Claude Code drops a result that does not answer "
                "the message before it",
            )

    def call_unanswered(self, index: int, finding: Finding) -> None:
        """A `tool_result` for each call left without one, with Claude Code's own placeholder.

        `ensureToolResultPairing` sends "[Tool result missing due to internal error]",
        `is_error`, for such a call on resume. The result goes into the user record that already
        answers the call's other calls, else into a new user record right after the call's, hung
        off it, which takes over the call record's children (as Claude Code chains a result
        between a call and what follows).
        """
        raw = self.raw(index)
        content = _content(raw) or []
        calls = {
            b["id"]: str(b.get("name", "?"))
            for b in content
            if isinstance(b, dict) and b.get("type") == "tool_use" and isinstance(b.get("id"), str)
        }
        missing = [
            c
            for c in calls
            if c not in self.answers and c not in self.answered and self.holder.get(c) == index
        ]
        uuid = raw.get("uuid")
        if not missing or not self.unique(uuid) or self.edits.dropped(index):
            return
        blocks = [
            {"type": "tool_result", "tool_use_id": c, "content": PLACEHOLDER, "is_error": True}
            for c in missing
        ]
        names = ", ".join(f"{c} ({calls[c]})" for c in missing)
        answering = self._result_child(uuid, set(calls))
        if answering is not None:
            target = self.raw(answering)
            self.edits.claim(answering)
            self.edits.replace(
                answering, _with_content(target, [*(_content(target) or []), *blocks])
            )
            self.edits.note(
                index,
                finding.code,
                f"added a tool_result for {names} to the record on line "
                f"{self.edits.line(answering)}: {PLACEHOLDER!r}, as Claude Code answers a call "
                "left without one",
            )
        else:
            record = self._placeholder_record(raw, uuid, missing, blocks)
            for child in self.children.get(uuid, ()):
                if self.edits.dropped(child) or self._answers_of(child, set(calls)):
                    continue
                self.edits.claim(child)
                self.edits.replace(child, {**self.raw(child), "parentUuid": record["uuid"]})
            self.edits.insert_after(index, record)
            self.edits.note(
                index,
                finding.code,
                f"added a user record after it with a tool_result for {names}: {PLACEHOLDER!r}, "
                "as Claude Code answers a call left without one",
            )
        self.answered.update(missing)

    def _answers_of(self, index: int, calls: set[str]) -> bool:
        raw = self.raw(index)
        return raw.get("type") == "user" and bool(
            set(_ids(_content(raw), "tool_result", "tool_use_id")) & calls
        )

    def _result_child(self, uuid: str, calls: set[str]) -> int | None:
        """The user record hanging off the call's record that holds only results of its calls."""
        for child in self.children.get(uuid, ()):
            raw = self.raw(child)
            content = _content(raw)
            if (
                raw.get("type") == "user"
                and content
                and not self.edits.dropped(child)
                and all(
                    isinstance(b, dict)
                    and b.get("type") == "tool_result"
                    and isinstance(b.get("tool_use_id"), str)
                    and b["tool_use_id"] in calls
                    for b in content
                )
            ):
                return child
        return None

    @staticmethod
    def _placeholder_record(
        holder: dict[str, Any], uuid: str, missing: list[str], blocks: list[dict[str, Any]]
    ) -> dict[str, Any]:
        seed = uuid + ":" + ",".join(missing)
        record: dict[str, Any] = {
            "parentUuid": uuid,
            "isSidechain": holder.get("isSidechain") is True,
            "type": "user",
            "message": {"role": "user", "content": blocks},
            "uuid": str(uuidlib.UUID(bytes=uuidlib.uuid5(_NAMESPACE, seed).bytes, version=4)),
        }
        if isinstance(holder.get("timestamp"), str):
            record["timestamp"] = holder["timestamp"]
        record["sourceToolAssistantUUID"] = uuid
        for key in ENVELOPE_KEYS:
            if key in holder:
                record[key] = holder[key]
        return record
