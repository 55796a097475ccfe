"""Repairing a pi session the way pi reads one (FORMATS.md §4, §6).

`repair(transcript, findings)` fixes, in one pass (see `compactcli.formats.repairing`), what
`PiDialect.validate` found, as pi's loader and its `transformMessages` resolve it: a placeholder
result for a call left without one, misplaced results, duplicate ids, broken chains, compactions
that cut at an entry they cannot start from, malformed entries and a misplaced header. Each
finding code is fixed by a `_Fixer` method. A file without a header, or whose header has no id or
an unusable version, cannot be repaired (pi does not load it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

from compactcli.errors import InputError
from compactcli.formats.base import Finding
from compactcli.formats.pi.dialect import PiDialect
from compactcli.formats.pi.tree import _role, _Tree
from compactcli.formats.pi.views import skipped_stop
from compactcli.formats.repairing import Edits, Repair, dispatch
from compactcli.transcript import Transcript

PLACEHOLDER = "No result provided"
"""The content pi gives the result it adds for a call that has none."""

_ORDER = (
    "header",
    "bad-shape",
    "duplicate-id",
    "broken-chain",
    "bad-cut",
    "orphan-result",
    "result-not-adjacent",
    "call-unanswered",
)


def repair(transcript: Transcript, findings: Sequence[Finding]) -> tuple[Transcript, list[Repair]]:
    """One pass of fixes for `findings`, each code by a `_Fixer` method.

    In a version 1 file, where compactions name their first kept entry by its position, the
    positions are kept pointing at the same entries when records are added or dropped
    (`_Fixer.keep_positions`).
    """
    fixer = _Fixer(transcript)
    handlers: dict[str, Callable[[int, Finding], None]] = {
        "header": fixer.header,
        "bad-shape": fixer.bad_shape,
        "duplicate-id": fixer.duplicate_id,
        "broken-chain": fixer.broken_chain,
        "bad-cut": fixer.bad_cut,
        "orphan-result": fixer.drop_result,
        "result-not-adjacent": fixer.drop_result,
        "call-unanswered": fixer.call_unanswered,
    }
    dispatch(transcript, findings, handlers, _ORDER)
    if fixer.tree.version < 2:
        fixer.keep_positions()
    return fixer.edits.apply(), fixer.edits.repairs


class _Fixer:
    def __init__(self, transcript: Transcript) -> None:
        self.dialect = PiDialect()
        self.transcript = transcript
        self.edits = Edits(transcript)
        self.records = transcript.records
        self.tree: _Tree = self.dialect._tree(transcript)
        self.v2 = self.tree.version >= 2
        self.ids: dict[str, list[int]] = {}
        self.children: dict[str, list[int]] = {}
        self.answered: set[str] = set()
        self._loop: set[int] = set()  # the entries of a parentId loop, once looked at
        for i in self.tree.entries:
            raw = self.records[i].raw
            if self.v2:
                entry_id, parent = raw.get("id"), raw.get("parentId")
                if isinstance(entry_id, str):
                    self.ids.setdefault(entry_id, []).append(i)
                if isinstance(parent, str):
                    self.children.setdefault(parent, []).append(i)
            if _role(raw) == "toolResult":
                call_id = raw["message"].get("toolCallId")
                if isinstance(call_id, str):
                    self.answered.add(call_id)

    # ---- helpers

    def raw(self, index: int) -> dict[str, Any]:
        found = self.edits.raw(index)
        assert isinstance(found, dict)
        return found

    def parent(self, index: int) -> int | None:
        """The entry `index` hangs off (the one before it, in version 1)."""
        if not self.v2:
            entries = self.tree.entries
            position = entries.index(index) if index in entries else -1
            return entries[position - 1] if position > 0 else None
        parent = self.records[index].raw.get("parentId")
        found = self.ids.get(parent, []) if isinstance(parent, str) else []
        return found[-1] if found else None

    def ancestors(self, index: int) -> list[int]:
        """The entries above `index`, nearest first."""
        found: list[int] = []
        current = self.parent(index)
        while current is not None and current not in found and len(found) <= len(self.records):
            found.append(current)
            current = self.parent(current)
        return found

    def drop_entry(self, index: int, code: str, why: str) -> None:
        """Drop entry `index`; its children (when its id is its own) hang off its parent."""
        raw = self.raw(index)
        self.edits.drop(index)
        entry_id = raw.get("id")
        moved = 0
        if self.v2 and isinstance(entry_id, str) and len(self.ids.get(entry_id, ())) == 1:
            parent = raw.get("parentId") if isinstance(raw.get("parentId"), str) else None
            for child in self.children.get(entry_id, ()):
                if child != index and not self.edits.dropped(child):
                    self.edits.claim(child)
                    self.edits.replace(child, {**self.raw(child), "parentId": parent})
                    moved += 1
        hung = ""
        if moved:
            hung = "; its child entry now hangs" if moved == 1 else f"; its {moved} children hang"
            hung += " off its parent"
        kind = _role(raw) or raw.get("type")
        self.edits.note(index, code, f"dropped the {kind} entry: {why}{hung}")

    # ---- one handler per code

    def header(self, index: int, finding: Finding) -> None:
        """Move the file's session header first when another record comes before it; drop a second
        header.
        """
        headers = [i for i in self.tree.objects if self.records[i].raw.get("type") == "session"]
        first = self.tree.objects[0]
        if not headers:
            return
        if headers[0] != first and index in (first, headers[0]):
            if self.edits.claim(headers[0]):
                self.edits.move_first(headers[0])
                self.edits.note(
                    headers[0], finding.code, "moved the session header first, where pi reads it"
                )
        elif index in headers[1:] and self.edits.claim(index):
            self.edits.drop(index)
            self.edits.note(
                index,
                finding.code,
                "dropped a second session header (the first is line "
                f"{self.edits.line(headers[0])})",
            )

    def bad_shape(self, index: int, finding: Finding) -> None:
        """Drop an entry pi cannot read; give one without a `parentId`, or with one that is not an
        id, a null one; point a compaction with an unusable first kept entry at a valid one
        (`cut`).
        """
        if not self.edits.claim(index):
            return
        raw = self.raw(index)
        kind = raw.get("type")
        if self.v2 and not isinstance(raw.get("id"), str):
            self.drop_entry(index, finding.code, "it has no id, so no entry can hang off it")
        elif self.v2 and "parentId" not in raw:
            new: dict[str, Any] = {}
            for key, value in raw.items():
                new[key] = value
                if key == "id":
                    new["parentId"] = None
            self.edits.replace(index, new if "parentId" in new else {"parentId": None, **raw})
            self.edits.note(index, finding.code, "set parentId to null (the entry had none)")
        elif self.v2 and raw.get("parentId") is not None and not isinstance(raw["parentId"], str):
            self.edits.replace(index, {**raw, "parentId": None})
            self.edits.note(
                index, finding.code, f"set parentId {raw['parentId']!r} (not an id) to null"
            )
        elif kind == "compaction" and isinstance(raw.get("summary"), str):
            self.cut(index, finding.code)
        elif not self._readable(index, raw) or _role(raw) == "toolResult":
            self.drop_entry(index, finding.code, finding.message)

    def _readable(self, index: int, raw: dict[str, Any]) -> bool:
        try:
            self.dialect._view(self.transcript, index, raw, in_context=False)
        except InputError:
            return False
        return True

    def duplicate_id(self, index: int, finding: Finding) -> None:
        """Of entries sharing an id, keep the last, as pi's index does (when all are the same entry,
        the copies after the first go); drop a `toolCall` whose id an earlier call has.
        """
        raw = self.raw(index)
        entry_id = raw.get("id")
        group = self.ids.get(entry_id, []) if self.v2 and isinstance(entry_id, str) else []
        if len(group) > 1:
            self._duplicate_entries(group, finding)
            return
        if not self.edits.claim(index):
            return
        role = _role(raw)
        if role == "assistant":
            content = raw["message"].get("content")
            earlier = self._calls_before(index)
            kept: list[Any] = []
            gone: list[str] = []
            for block in content if isinstance(content, list) else ():
                call_id = block.get("id") if isinstance(block, dict) else None
                if isinstance(block, dict) and block.get("type") == "toolCall":
                    if isinstance(call_id, str) and call_id in earlier:
                        gone.append(call_id)
                        continue
                    if isinstance(call_id, str):
                        earlier.add(call_id)
                kept.append(block)
            if gone:
                message = {**raw["message"], "content": kept}
                self.edits.replace(index, {**raw, "message": message})
                self.edits.note(
                    index,
                    finding.code,
                    f"dropped toolCall {', '.join(gone)}: an earlier call has its id",
                )
        elif role == "toolResult":
            self.drop_entry(index, finding.code, "a second toolResult for its call")

    def _calls_before(self, index: int) -> set[str]:
        found: set[str] = set()
        for i in self.tree.entries:
            if i >= index:
                break
            raw = self.records[i].raw
            if _role(raw) == "assistant" and isinstance(raw["message"].get("content"), list):
                found.update(
                    b["id"]
                    for b in raw["message"]["content"]
                    if isinstance(b, dict)
                    and b.get("type") == "toolCall"
                    and isinstance(b.get("id"), str)
                )
        return found

    def _duplicate_entries(self, group: list[int], finding: Finding) -> None:
        if any(self.edits.claimed(i) for i in group):
            return
        for i in group:
            self.edits.claim(i)
        raws = [self.records[i].raw for i in group]
        if all(r == raws[0] for r in raws):
            first = self.edits.line(group[0])
            for i in group[1:]:
                self.edits.drop(i)
                self.edits.note(
                    i, finding.code, f"dropped a second copy of the entry on line {first}"
                )
            return
        last = self.edits.line(group[-1])
        for i in group[:-1]:
            self.edits.drop(i)
            self.edits.note(
                i,
                finding.code,
                f"dropped the entry: the entry on line {last} has its id, and pi keeps the last",
            )

    def broken_chain(self, index: int, finding: Finding) -> None:
        """A `parentId` naming no entry (or the entry itself, or closing a loop: `_loop_edge`)
        becomes null: the walk from the leaf stops there, as pi's does.
        """
        if self.v2 and index == self.tree.loop:
            index = self._loop_edge(index)
        raw = self.raw(index)
        parent = raw.get("parentId")
        if (
            self.v2
            and isinstance(parent, str)
            and (parent == raw.get("id") or parent not in self.ids or index in self._loop)
        ):
            if self.edits.claim(index):
                self.edits.replace(index, {**raw, "parentId": None})
                why = "pi's walk from the leaf stops there"
                if index in self._loop:
                    why = (
                        "it closed a loop of parentIds, which pi's walk from the leaf never leaves"
                    )
                self.edits.note(index, finding.code, f"set parentId {parent} to null: {why}")
        elif raw.get("type") == "compaction" and self.edits.claim(index):
            self.cut(index, finding.code)

    def _loop_edge(self, start: int) -> int:
        """The entry of the loop through `start` whose parent comes later in the file (which an
        append-only file cannot hold), else `start`: where the loop is cut."""
        members: list[int] = []
        current: int | None = start
        while current is not None and current not in members:
            members.append(current)
            current = self.parent(current)
        self._loop = set(members)
        later = [m for m in members if (self.parent(m) or -1) > m]
        return later[0] if later else start

    def bad_cut(self, index: int, finding: Finding) -> None:
        if self.edits.claim(index):
            self.cut(index, finding.code)

    def cut(self, index: int, code: str) -> None:
        """Point compaction `index` at the nearest entry before its cut that may start the kept part
        (not a toolResult: the call that result answers), or, when its first kept entry is
        missing or not on its branch, at the nearest such entry before the compaction.
        """
        raw = self.raw(index)
        above = self.ancestors(index)
        target = self._target(raw)
        start = above
        if target is not None and target in above:
            start = above[above.index(target) :]
        chosen = next((i for i in start if self._may_start(i)), None)
        if chosen is None:
            return
        if self.v2:
            entry_id = self.records[chosen].raw.get("id")
            if not isinstance(entry_id, str):
                return
            self.edits.replace(index, {**raw, "firstKeptEntryId": entry_id})
            what = f"firstKeptEntryId to {entry_id}"
        else:
            position = self.tree.objects.index(chosen)
            self.edits.replace(index, {**raw, "firstKeptEntryIndex": position})
            what = f"firstKeptEntryIndex to {position}"
        self.edits.note(
            index,
            code,
            f"set the compaction's {what} (line {self.edits.line(chosen)}), the nearest entry "
            "before its cut that is not a toolResult",
        )

    def _target(self, raw: dict[str, Any]) -> int | None:
        if self.v2:
            first_kept = raw.get("firstKeptEntryId")
            found = self.ids.get(first_kept, []) if isinstance(first_kept, str) else []
            return found[-1] if found else None
        position = raw.get("firstKeptEntryIndex")
        if isinstance(position, int) and not isinstance(position, bool) and position >= 0:
            return self.tree.objects[position] if position < len(self.tree.objects) else None
        return None

    def _may_start(self, index: int) -> bool:
        raw = self.records[index].raw
        return raw.get("type") in ("message", "custom_message") and _role(raw) != "toolResult"

    def drop_result(self, index: int, finding: Finding) -> None:
        """Drop a `toolResult` entry whose call is nowhere, that is not among the results right
        after its call, or that is a second result for one call (a result pi would send where its
        call is not right before it); its children hang off its parent, and the call gets the
        placeholder if it has no other result.
        """
        if _role(self.raw(index)) == "toolResult" and self.edits.claim(index):
            what = "no call has its id" if finding.code == "orphan-result" else "it is not among "
            if finding.code != "orphan-result":
                what += "the results right after its call"
            self.drop_entry(index, finding.code, what)

    def call_unanswered(self, index: int, finding: Finding) -> None:
        """A `toolResult` entry for each call of an assistant message left without one, as pi's
        `transformMessages` answers it ("No result provided", `isError`), added after the run of
        results that follows the call (the entries after it hang off it).
        """
        raw = self.raw(index)
        if _role(raw) != "assistant" or self.edits.dropped(index):
            return
        message = raw["message"]
        if skipped_stop(message):
            return
        content = message.get("content")
        calls = {
            b["id"]: str(b.get("name", ""))
            for b in (content if isinstance(content, list) else ())
            if isinstance(b, dict) and b.get("type") == "toolCall" and isinstance(b.get("id"), str)
        }
        missing = [c for c in calls if c not in self.answered]
        if not missing:
            return
        end = self._run_end(index, set(calls))
        if end is None:
            return
        previous = self.raw(end).get("id")
        made: list[dict[str, Any]] = []
        for call_id in missing:
            entry: dict[str, Any] = {"type": "message"}
            if self.v2:
                entry["id"] = self._new_id(f"{raw.get('id')}:{call_id}")
                entry["parentId"] = previous
                previous = entry["id"]
            if isinstance(self.raw(end).get("timestamp"), str):
                entry["timestamp"] = self.raw(end)["timestamp"]
            result: dict[str, Any] = {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": calls[call_id],
                "content": [{"type": "text", "text": PLACEHOLDER}],
                "isError": True,
            }
            if isinstance(message.get("timestamp"), int):
                result["timestamp"] = message["timestamp"]
            entry["message"] = result
            made.append(entry)
            self.answered.add(call_id)
        end_id = self.raw(end).get("id")
        if self.v2 and isinstance(end_id, str):
            for child in self.children.get(end_id, ()):
                if not self.edits.dropped(child):
                    self.edits.claim(child)
                    self.edits.replace(child, {**self.raw(child), "parentId": previous})
        for entry in made:
            self.edits.insert_after(end, entry)
        names = ", ".join(f"{c} ({calls[c]})" for c in missing)
        self.edits.note(
            index,
            finding.code,
            f"added a toolResult for {names} after line {self.edits.line(end)}: "
            f"{PLACEHOLDER!r}, as pi answers a call left without one",
        )

    def _run_end(self, index: int, calls: set[str]) -> int | None:
        """The last entry of the run of results that follows assistant `index`."""
        current = index
        if not self.v2:
            entries = self.tree.entries
            position = entries.index(index)
            for later in entries[position + 1 :]:
                if _role(self.records[later].raw) != "toolResult":
                    break
                current = later
            return current
        for _ in range(len(self.records)):
            current_id = self.records[current].raw.get("id")
            if not isinstance(current_id, str) or len(self.ids.get(current_id, ())) != 1:
                return None
            nxt = next(
                (
                    c
                    for c in self.children.get(current_id, ())
                    if not self.edits.dropped(c)
                    and _role(self.records[c].raw) == "toolResult"
                    and isinstance(self.records[c].raw["message"].get("toolCallId"), str)
                    and self.records[c].raw["message"]["toolCallId"] in calls
                ),
                None,
            )
            if nxt is None:
                return current
            current = nxt
        return None

    def _new_id(self, seed: str) -> str:
        counter = 0
        while True:
            found = hashlib.sha256(f"{seed}:{counter}".encode()).hexdigest()[:8]
            if found not in self.ids:
                self.ids[found] = []
                return found
            counter += 1

    def keep_positions(self) -> None:
        """Version 1: keep every compaction's `firstKeptEntryIndex` on the same entry."""
        order = self.edits.order()
        objects = self.tree.objects
        new_position: dict[int, int] = {}
        position = 0
        for old in order:
            if old is None or isinstance(self.edits.raw(old), dict):
                if old is not None:
                    new_position[old] = position
                position += 1
        for i in self.tree.entries:
            raw = self.edits.raw(i)
            if self.edits.dropped(i) or raw.get("type") != "compaction":
                continue
            kept = raw.get("firstKeptEntryIndex")
            if not isinstance(kept, int) or isinstance(kept, bool) or not 0 <= kept < len(objects):
                continue
            later = [o for o in objects[kept:] if o in new_position]
            if later and new_position[later[0]] != kept:
                self.edits.replace(i, {**raw, "firstKeptEntryIndex": new_position[later[0]]})
