"""The pi dialect: pi coding agent (badlogic/pi-mono) session files (FORMATS.md §4).

A pi session file starts with a header `{"type":"session","version"?,"id",…}`; every other line
is an entry. Versions 2 and 3 give each entry an `id` (8 hex digits) and a `parentId`, so the
entries form a tree whose current leaf is the last entry; version 1 (no `version` key) is a
plain linear list without ids, and its compactions name their first kept entry by
`firstKeptEntryIndex`, an index into the file's JSON lines (header included, as pi's own
`migrateV1ToV2` reads it).

Views, as pi builds them (`buildSessionContext`, `convertToLlm`, `transformMessages`):

- `messages`: every message-bearing entry in file order, all branches. `message` entries by
  role: `user` and `custom` (v2 `hookMessage`) are user messages; `assistant` blocks are
  `text`, `thinking`, `toolCall` (arguments as JSON text); a `toolResult` is a `tool` message
  holding one `tool_result` block (call id `toolCallId`, name `toolName`, `isError`);
  `bashExecution` (a shell command the user ran with `!`) is a user message with one text block
  rendered the way pi sends it ("Ran `cmd`" and the output in a fence); `branchSummary` and
  `compactionSummary` are user messages with pi's summary wrapper. `custom_message` and
  non-empty `branch_summary` entries are user messages too. A `compaction` entry gives a
  synthetic user message (`summary=True`) holding pi's wrapped summary. Other entry types
  (`model_change`, `thinking_level_change`, `custom`, `label`, `session_info`, unknown ones)
  and message roles this module does not know pass through without a view.
- `context`: the active branch (from the last entry back through `parentId`; the whole file
  for v1). After the last compaction on that branch: its summary, then the entries from the
  first kept entry up to the compaction, then everything after it. Left out, as pi leaves them
  out of what it sends: `bashExecution` with `excludeFromContext`, and assistant messages whose
  `stopReason` is `aborted` or `error` (pi's provider layer skips them).
- `usage`: assistant `usage` on the context view, one per assistant message, as pi measures it
  (`calculateContextTokens`): `totalTokens`, or `input + output + cacheRead + cacheWrite` when
  that is 0 or missing. Only messages after the last compaction count: the usage of kept
  messages measured the context before compaction (pi's `getContextUsage` ignores it too).
  `Usage.input` is the whole prompt (`input + cacheRead + cacheWrite`), `cached` is
  `cacheRead`. A usage whose measure is 0 records nothing and is left out.
- `compactions`: the `compaction` entries on the active branch, oldest first; ours carry a
  top-level `compactcli` key.
- `validate` codes: `header` (no session header first, a header without a string id, a second
  header, an unusable version), `bad-shape` (an entry missing what its type requires),
  `duplicate-id` (entry ids or toolCall ids used twice), `broken-chain` (a `parentId` or
  `firstKeptEntryId` naming no entry, a `parentId` loop, a v1 index out of range), `bad-cut`
  (a compaction whose first kept entry is not an earlier entry on its own branch, or is a
  `toolResult`), `orphan-result` (a toolResult whose call is nowhere), `result-not-adjacent`
  (a toolResult not in the run of results after the assistant message that made the call), and
  `call-unanswered` as a warning only: pi answers a call left without result with a synthetic
  "No result provided" when it sends the context (calls of aborted or errored assistant
  messages are not reported, as pi drops those messages).

Writing: a cleared toolResult's content becomes `[{"type":"text","text":…}]`; a cleared
`bashExecution` (`user_shell`) keeps its command and exit code, with the placeholder as its
`output`; the prune boundary is a `custom` entry (`customType: "compactcli"`, details under
`compactcli`) hung off the leaf, which pi keeps in the file and never sends to the model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from compactcli.dialects.base import Dialect, Finding, UserShell, check_unique, remembered
from compactcli.dialects.values import json_text, kind_of, looks_json, number
from compactcli.errors import InputError
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

ENTRY_TYPES = frozenset(
    {
        "message",
        "model_change",
        "thinking_level_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
    }
)
ROLES = frozenset(
    {
        "user",
        "assistant",
        "toolResult",
        "bashExecution",
        "custom",
        "hookMessage",
        "branchSummary",
        "compactionSummary",
    }
)
CURRENT_VERSION = 3

# The text pi wraps summaries in when it sends them to the model (core/messages.ts).
COMPACTION_PREFIX = (
    "The conversation history before this point was compacted into the following summary:"
    "\n\n<summary>\n"
)
COMPACTION_SUFFIX = "\n</summary>"
BRANCH_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUFFIX = "</summary>"

_SKIPPED_STOPS = frozenset({"aborted", "error"})

_Fail = Callable[[str], InputError]
_Parent = Callable[[int], "int | None"]


def bash_execution_text(message: Mapping[str, Any]) -> str:
    """A `bashExecution` message as pi sends it to the model (a user text message)."""
    text = f"Ran `{message.get('command', '')}`\n"
    output = message.get("output")
    text += f"```\n{output}\n```" if output else "(no output)"
    exit_code = message.get("exitCode")
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif isinstance(exit_code, int) and exit_code != 0:
        text += f"\n\nCommand exited with code {exit_code}"
    if message.get("truncated") and message.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {message['fullOutputPath']}]"
    return text


@dataclass(frozen=True, slots=True)
class _Tree:
    """The entries of a pi file and its active branch."""

    version: int
    header: int | None  # record index of the session header
    entries: tuple[int, ...]  # record indices of entries (object records but the header)
    objects: tuple[int, ...]  # record indices of all object records (v1 indices point here)
    by_id: dict[str, int]
    path: tuple[int, ...]  # the active branch, root first
    loop: int | None  # the record where the walk from the leaf met itself


class PiDialect(Dialect):
    name = "pi"
    summary = "pi coding agent session (badlogic/pi-mono), v1 to v3"

    @classmethod
    def sniff(cls, objects: Sequence[Mapping[str, Any]]) -> int:
        if not objects:
            return 0
        first = objects[0]
        if first.get("type") == "session":
            return 100 if isinstance(first.get("id"), str) else 90
        # No header: still pi when nearly every record is a pi entry (validate says `header`).
        entries = 0
        for raw in objects:
            kind = raw.get("type")
            if not isinstance(kind, str) or kind not in ENTRY_TYPES or "uuid" in raw:
                continue
            if "payload" in raw:
                continue
            if kind == "message":
                message = raw.get("message")
                role = message.get("role") if isinstance(message, Mapping) else None
                if not isinstance(role, str) or role not in ROLES:
                    continue
            entries += 1
        return 60 if entries * 5 >= len(objects) * 4 else 0

    # ----------------------------------------------------------------------------------- views

    @remembered
    def messages(self, transcript: Transcript) -> list[Message]:
        found: list[Message] = []
        for index, record in transcript.objects():
            message = self._view(transcript, index, record.raw, in_context=False)
            if message is not None:
                found.append(message)
        return found

    @remembered
    def context(self, transcript: Transcript) -> list[Message]:
        return self._context(transcript)[0]

    @remembered
    def compactions(self, transcript: Transcript) -> list[Compaction]:
        tree = self._tree(transcript)
        found: list[Compaction] = []
        for index in tree.path:
            raw = transcript.records[index].raw
            if raw.get("type") == "compaction":
                summary = raw.get("summary")
                found.append(
                    Compaction(
                        index=index,
                        summary=summary if isinstance(summary, str) else "",
                        ours="compactcli" in raw,
                    )
                )
        return found

    @remembered
    def usage(self, transcript: Transcript) -> list[Usage]:
        messages, stale = self._context(transcript)
        found: list[Usage] = []
        for message in messages[stale:]:
            if message.role != "assistant" or message.synthetic:
                continue
            raw = transcript.records[message.index].raw
            usage = raw["message"].get("usage")
            if not isinstance(usage, Mapping):
                continue
            fresh = number(usage.get("input"))
            output = number(usage.get("output"))
            read = number(usage.get("cacheRead"))
            write = number(usage.get("cacheWrite"))
            context = number(usage.get("totalTokens")) or fresh + output + read + write
            if context <= 0:
                continue
            found.append(
                Usage(
                    index=message.index,
                    context=context,
                    input=fresh + read + write,
                    output=output,
                    cached=read,
                    key=message.id,
                )
            )
        return found

    # ------------------------------------------------------------------------------- writing

    def result_text(self, text: str) -> Any:
        """A toolResult's content holding `text`: pi keeps it as a list of blocks."""
        return [{"type": "text", "text": text}]

    def user_shell(self, record: Record, block: Block) -> UserShell | None:
        """A `bashExecution` message (a command the user ran with `!`): its command, its output
        (empty when it has none) and whether it failed (cancelled, or a non-zero exit code)."""
        if block.type != "bashExecution":
            return None
        message = get_in(record.raw, block.path)
        output = message.get("output")
        code = message.get("exitCode")
        failed = message.get("cancelled") is True or (isinstance(code, int) and code != 0)
        return UserShell(
            str(message.get("command", "")), output if isinstance(output, str) else "", failed
        )

    def clear_user_shell(self, record: Record, block: Block, text: str) -> Record:
        """The `bashExecution` message with `text` as its output (its command, exit code and
        flags kept)."""
        return record.with_raw(set_in(record.raw, (*block.path, "output"), text))

    def prune_boundary(self, transcript: Transcript, details: Mapping[str, Any]) -> list[Record]:
        """A `custom` entry (pi's place for extension data, never sent to the model).

        It hangs off the current leaf, so the active branch and the context stay the same, has
        `customType: "compactcli"` and our details under `compactcli`. Its id (8 hex digits, as
        pi makes them) and timestamp derive from the input, so the same input gives the same
        bytes. A v1 file gets an entry without id and parentId, like its other entries.
        """
        tree = self._tree(transcript)
        leaf = transcript.records[tree.path[-1]].raw if tree.path else {}
        raw: dict[str, Any] = {"type": "custom"}
        if tree.version >= 2:
            import hashlib  # only here: importing it at start-up costs a few milliseconds

            leaf_id = leaf.get("id") if isinstance(leaf.get("id"), str) else None
            seed = (leaf_id or "") + orjson.dumps(details, option=orjson.OPT_SORT_KEYS).decode()
            entry_id = hashlib.sha256(seed.encode()).hexdigest()[:8]
            salt = 0
            while entry_id in tree.by_id:
                salt += 1
                entry_id = hashlib.sha256(f"{seed}{salt}".encode()).hexdigest()[:8]
            raw["id"] = entry_id
            raw["parentId"] = leaf_id
        timestamp = leaf.get("timestamp")
        raw["timestamp"] = timestamp if isinstance(timestamp, str) else "1970-01-01T00:00:00.000Z"
        raw["customType"] = "compactcli"
        raw["compactcli"] = dict(details)
        return [Record(raw=raw, line=None, lineno=0)]

    def model(self, transcript: Transcript) -> str | None:
        """The model pi would resume with: the last model change or assistant on the branch."""
        tree = self._tree(transcript)
        for index in reversed(tree.path):
            raw = transcript.records[index].raw
            kind = raw.get("type")
            if kind == "model_change" and isinstance(raw.get("modelId"), str):
                return str(raw["modelId"])
            message = raw.get("message")
            if kind == "message" and isinstance(message, Mapping):
                model = message.get("model")
                if message.get("role") == "assistant" and isinstance(model, str):
                    return model
        if tree.header is not None:
            model = transcript.records[tree.header].raw.get("modelId")
            if isinstance(model, str):
                return model
        return None

    # ------------------------------------------------------------------------------ validate

    @remembered
    def validate(self, transcript: Transcript) -> list[Finding]:
        records = transcript.records
        tree = self._tree(transcript)
        findings: list[Finding] = []
        findings += self._check_header(transcript, tree)

        shaped: list[int] = []  # entries whose view parsed
        for index in tree.entries:
            try:
                self._view(transcript, index, records[index].raw, in_context=False)
            except InputError as error:
                findings.append(Finding(records[index].lineno, "bad-shape", error.message))
                continue
            shaped.append(index)

        def parent(index: int) -> int | None:
            return self._parent(transcript, tree, index)

        if tree.version >= 2:
            findings += self._check_ids(transcript, tree)
        findings += self._check_compactions(transcript, tree, parent)
        findings += self._check_pairs(transcript, shaped, parent)
        return findings

    def _check_header(self, transcript: Transcript, tree: _Tree) -> list[Finding]:
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

    def _check_ids(self, transcript: Transcript, tree: _Tree) -> list[Finding]:
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

    def _check_compactions(
        self, transcript: Transcript, tree: _Tree, parent: _Parent
    ) -> list[Finding]:
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
            ancestors = set(_walk(parent(index), parent, len(records)))
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

    def _check_pairs(
        self, transcript: Transcript, shaped: Sequence[int], parent: _Parent
    ) -> list[Finding]:
        """toolResult ↔ toolCall pairing, along each result's own branch."""
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
            if records[index].raw["message"].get("stopReason") in _SKIPPED_STOPS:
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

    # ------------------------------------------------------------------------------ internals

    def _tree(self, transcript: Transcript) -> _Tree:
        records = transcript.records
        objects = tuple(index for index, _ in transcript.objects())
        header: int | None = None
        entries: list[int] = []
        for index in objects:
            if records[index].raw.get("type") == "session":
                if header is None:
                    header = index
                continue
            entries.append(index)
        version = 1
        if header is not None:
            value = records[header].raw.get("version")
            if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
                version = value
        elif any("parentId" in records[index].raw for index in entries):
            version = CURRENT_VERSION
        by_id: dict[str, int] = {}
        if version >= 2:
            for index in entries:
                entry_id = records[index].raw.get("id")
                if isinstance(entry_id, str):
                    by_id[entry_id] = index  # a later duplicate wins, as in pi's index
        tree = _Tree(version, header, tuple(entries), objects, by_id, (), None)
        if not entries:
            return tree
        if version < 2:
            return _replace_path(tree, tuple(entries), None)
        path: list[int] = []
        seen: set[int] = set()
        loop: int | None = None
        current: int | None = entries[-1]
        while current is not None:
            if current in seen:
                loop = current
                break
            seen.add(current)
            path.append(current)
            current = self._parent(transcript, tree, current)
        path.reverse()
        return _replace_path(tree, tuple(path), loop)

    def _parent(self, transcript: Transcript, tree: _Tree, index: int) -> int | None:
        if tree.version < 2:
            position = _position(tree.entries, index)
            return tree.entries[position - 1] if position > 0 else None
        parent_id = transcript.records[index].raw.get("parentId")
        return tree.by_id.get(parent_id) if isinstance(parent_id, str) else None

    def _context(self, transcript: Transcript) -> tuple[list[Message], int]:
        """The context messages, and how many leading ones predate the last compaction."""
        records = transcript.records
        tree = self._tree(transcript)
        path = tree.path
        last: int | None = None
        for position, index in enumerate(path):
            if records[index].raw.get("type") == "compaction":
                last = position
        if last is None:
            return self._views(transcript, path), 0
        compaction = path[last]
        raw = records[compaction].raw
        start = last  # nothing kept unless the first kept entry is found before the compaction
        if tree.version >= 2:
            first_kept = raw.get("firstKeptEntryId")
            for position in range(last):
                if records[path[position]].raw.get("id") == first_kept:
                    start = position
                    break
        else:
            target = raw.get("firstKeptEntryIndex")
            if isinstance(target, int) and 0 <= target < len(tree.objects):
                found = _position(path, tree.objects[target])
                if 0 <= found < last:
                    start = found
        summary = self._view(transcript, compaction, raw, in_context=True)
        head = [summary] if summary is not None else []
        head += self._views(transcript, path[start:last])
        return head + self._views(transcript, path[last + 1 :]), len(head)

    def _views(self, transcript: Transcript, indices: Iterable[int]) -> list[Message]:
        found: list[Message] = []
        for index in indices:
            raw = transcript.records[index].raw
            if raw.get("type") == "compaction":
                continue  # an older compaction inside the kept part: pi does not send it
            message = self._view(transcript, index, raw, in_context=True)
            if message is not None:
                found.append(message)
        return found

    def _view(
        self, transcript: Transcript, index: int, raw: Mapping[str, Any], *, in_context: bool
    ) -> Message | None:
        """The message an entry holds, or None. Raises InputError for a malformed entry."""
        kind = raw.get("type")
        entry_id = raw.get("id") if isinstance(raw.get("id"), str) else None
        line = transcript.records[index].lineno

        def fail(reason: str) -> InputError:
            return InputError(transcript.source, line, reason)

        if kind == "message":
            message = raw.get("message")
            if not isinstance(message, Mapping):
                raise fail(f"message entry's message is {kind_of(message)}, not an object")
            return self._message_view(index, entry_id, message, fail, in_context)
        if kind == "compaction":
            summary = raw.get("summary")
            if not isinstance(summary, str):
                raise fail("compaction entry has no string summary")
            return Message(
                index=index,
                role="user",
                blocks=(
                    Block(
                        "text",
                        COMPACTION_PREFIX + summary + COMPACTION_SUFFIX,
                        type="compaction",
                        path=("summary",),
                    ),
                ),
                id=entry_id,
                summary=True,
                synthetic=True,
            )
        if kind == "branch_summary":
            summary = raw.get("summary")
            if summary is not None and not isinstance(summary, str):
                raise fail("branch_summary entry summary is not a string")
            if not summary:
                return None  # pi sends an empty branch summary nowhere
            text = BRANCH_PREFIX + summary + BRANCH_SUFFIX
            block = Block("text", text, type="branch_summary", path=("summary",))
            return Message(index=index, role="user", blocks=(block,), id=entry_id)
        if kind == "custom_message":
            blocks = _content_blocks(raw.get("content"), ("content",), fail, "custom_message")
            return Message(index=index, role="user", blocks=blocks, id=entry_id)
        return None

    def _message_view(
        self,
        index: int,
        entry_id: str | None,
        message: Mapping[str, Any],
        fail: _Fail,
        in_context: bool,
    ) -> Message | None:
        role = message.get("role")
        if not isinstance(role, str):
            raise fail("message has no string role")
        base: JsonPath = ("message",)
        if role in ("user", "custom", "hookMessage"):
            blocks = _content_blocks(message.get("content"), (*base, "content"), fail, role)
            return Message(index=index, role="user", blocks=blocks, id=entry_id, path=base)
        if role == "assistant":
            if in_context and message.get("stopReason") in _SKIPPED_STOPS:
                return None
            model = message.get("model")
            return Message(
                index=index,
                role="assistant",
                blocks=_assistant_blocks(message.get("content"), (*base, "content"), fail),
                id=entry_id,
                model=model if isinstance(model, str) else None,
                path=base,
            )
        if role == "toolResult":
            text, images = _flatten(message.get("content"), fail)
            call_id = message.get("toolCallId")
            name = message.get("toolName")
            block = Block(
                "tool_result",
                text,
                json=looks_json(text),
                call_id=call_id if isinstance(call_id, str) else None,
                name=name if isinstance(name, str) else None,
                is_error=message.get("isError") is True,
                type="toolResult",
                path=base,
                images=images,
            )
            return Message(index=index, role="tool", blocks=(block,), id=entry_id, path=base)
        if role == "bashExecution":
            if not isinstance(message.get("command"), str):
                raise fail("bashExecution message has no string command")
            if in_context and message.get("excludeFromContext") is True:
                return None
            block = Block("text", bash_execution_text(message), type="bashExecution", path=base)
            return Message(index=index, role="user", blocks=(block,), id=entry_id, path=base)
        if role in ("branchSummary", "compactionSummary"):
            summary = message.get("summary")
            if not isinstance(summary, str):
                raise fail(f"{role} message has no string summary")
            if role == "branchSummary":
                text = BRANCH_PREFIX + summary + BRANCH_SUFFIX
            else:
                text = COMPACTION_PREFIX + summary + COMPACTION_SUFFIX
            block = Block("text", text, type=role, path=(*base, "summary"))
            return Message(
                index=index,
                role="user",
                blocks=(block,),
                id=entry_id,
                summary=role == "compactionSummary",
                path=base,
            )
        return None  # a role this version does not know: passed through


def _replace_path(tree: _Tree, path: tuple[int, ...], loop: int | None) -> _Tree:
    return _Tree(tree.version, tree.header, tree.entries, tree.objects, tree.by_id, path, loop)


def _position(indices: Sequence[int], index: int) -> int:
    """Where `index` sits in the sorted `indices`, or -1."""
    low, high = 0, len(indices)
    while low < high:
        middle = (low + high) // 2
        if indices[middle] < index:
            low = middle + 1
        else:
            high = middle
    return low if low < len(indices) and indices[low] == index else -1


def _walk(start: int | None, parent: _Parent, limit: int) -> Iterable[int]:
    current = start
    steps = 0
    while current is not None and steps <= limit:
        yield current
        current = parent(current)
        steps += 1


def _role(raw: Mapping[str, Any]) -> str | None:
    if raw.get("type") != "message":
        return None
    message = raw.get("message")
    if not isinstance(message, Mapping):
        return None
    role = message.get("role")
    return role if isinstance(role, str) else None


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


def _content_blocks(content: Any, path: JsonPath, fail: _Fail, role: str) -> tuple[Block, ...]:
    """User-side content: a string, or a list of text and image blocks."""
    if isinstance(content, str):
        return (Block("text", content, type="text", path=path),)
    if not isinstance(content, list):
        raise fail(f"{role} content is {kind_of(content)}, not a string or a list")
    blocks: list[Block] = []
    for position, block in enumerate(content):
        if not isinstance(block, Mapping):
            raise fail(f"{role} content block {position} is {kind_of(block)}, not an object")
        kind = block.get("type")
        where = (*path, position)
        if kind == "text":
            blocks.append(Block("text", _text(block.get("text")), type="text", path=where))
        elif kind == "image":
            blocks.append(Block("image", type="image", path=where))
        else:
            blocks.append(Block("other", type=str(kind or ""), path=where))
    return tuple(blocks)


def _assistant_blocks(content: Any, path: JsonPath, fail: _Fail) -> tuple[Block, ...]:
    if isinstance(content, str):
        return (Block("text", content, type="text", path=path),)
    if not isinstance(content, list):
        raise fail(f"assistant content is {kind_of(content)}, not a list")
    blocks: list[Block] = []
    for position, block in enumerate(content):
        if not isinstance(block, Mapping):
            raise fail(f"assistant content block {position} is {kind_of(block)}, not an object")
        kind = block.get("type")
        where = (*path, position)
        if kind == "text":
            blocks.append(Block("text", _text(block.get("text")), type="text", path=where))
        elif kind == "thinking":
            text = _text(block.get("thinking"))
            blocks.append(Block("thinking", text, type="thinking", path=where))
        elif kind == "toolCall":
            call_id, name = block.get("id"), block.get("name")
            if not isinstance(call_id, str) or not isinstance(name, str):
                raise fail(f"toolCall block {position} has no string id and name")
            arguments = block.get("arguments")
            blocks.append(
                Block(
                    "tool_call",
                    json_text(arguments if arguments is not None else {}),
                    json=True,
                    call_id=call_id,
                    name=name,
                    arguments=arguments,
                    type="toolCall",
                    path=where,
                )
            )
        elif kind == "image":
            blocks.append(Block("image", type="image", path=where))
        else:
            blocks.append(Block("other", type=str(kind or ""), path=where))
    return tuple(blocks)


def _flatten(content: Any, fail: _Fail) -> tuple[str, int]:
    """A toolResult's content as text, and the number of images in it."""
    if content is None:
        return "", 0
    if isinstance(content, str):
        return content, 0
    if not isinstance(content, list):
        raise fail(f"toolResult content is {kind_of(content)}, not a list")
    texts: list[str] = []
    images = 0
    for position, block in enumerate(content):
        if not isinstance(block, Mapping):
            raise fail(f"toolResult content block {position} is {kind_of(block)}, not an object")
        if block.get("type") == "text":
            texts.append(_text(block.get("text")))
        elif block.get("type") == "image":
            images += 1
    return "\n".join(texts), images


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
