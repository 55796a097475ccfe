"""The `pi` dialect: pi coding agent (badlogic/pi-mono) session files, v1 to v3 (FORMATS.md §4).

`PiDialect` reads the entries and their active branch with `compactcli.formats.pi.tree` and their
message views with `compactcli.formats.pi.views`, as pi builds them (`buildSessionContext`,
`convertToLlm`, `transformMessages`): every message-bearing entry, the context pi sends, the
usage pi measures, its compactions, and the validation rules of `compactcli.formats.pi.checks`.
The views never edit records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from compactcli.errors import InputError
from compactcli.formats.base import Dialect, Finding, UserShell, remembered
from compactcli.formats.pi.checks import check_compactions, check_header, check_ids, check_pairs
from compactcli.formats.pi.tree import ENTRY_TYPES, ROLES, _Tree, parent_of, read_tree
from compactcli.formats.pi.views import context_views, entry_view
from compactcli.formats.values import number
from compactcli.transcript import (
    Block,
    Compaction,
    Message,
    Record,
    Transcript,
    Usage,
    get_in,
    set_in,
)


class PiDialect(Dialect):
    """The `pi` dialect.

    A cleared toolResult's content becomes `[{"type":"text","text":…}]`; a cleared
    `bashExecution` keeps its command and exit code with the placeholder as its `output`; the
    prune boundary is a `custom` entry hung off the leaf, which pi keeps in the file and never
    sends to the model.
    """

    name = "pi"
    summary = "pi coding agent session (badlogic/pi-mono), v1 to v3"
    link_keys = ("id", "parentId")

    def append_parent(self, transcript: Transcript, context: Sequence[Message]) -> Any:
        """The branch's leaf: the last entry with an id (a compaction entry after the last
        context message, say), else the last context message's."""
        last = transcript.records[context[-1].index].get("id")
        return next(
            (
                r.raw.get("id")
                for r in reversed(transcript.records)
                if isinstance(r.raw, dict) and r.raw.get("type") != "session" and r.raw.get("id")
            ),
            last,
        )

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
        """Every message-bearing entry in file order, all branches."""
        found: list[Message] = []
        for index, record in transcript.objects():
            message = self._view(transcript, index, record.raw, in_context=False)
            if message is not None:
                found.append(message)
        return found

    def collect(self, transcript: Transcript) -> list[Record]:
        """What pi loads next and the metadata (`compactcli.formats.pi.collect`)."""
        from compactcli.formats.pi.collect import collect

        return collect(transcript)

    @remembered
    def context(self, transcript: Transcript) -> list[Message]:
        """The active branch as pi sends it, from its last compaction on."""
        return context_views(transcript)[0]

    @remembered
    def compactions(self, transcript: Transcript) -> list[Compaction]:
        """The `compaction` entries on the active branch, oldest first, ours carrying a top-level
        `compactcli` key.
        """
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
        """The assistant `usage` of the context messages after the last compaction, one per
        assistant message, as pi's `calculateContextTokens` measures it (`totalTokens`, or
        `input + output + cacheRead + cacheWrite` when that is 0 or missing), with `input` the
        whole prompt (`input + cacheRead + cacheWrite`) and `cached` = `cacheRead`; a measure of
        0 is left out.
        """
        messages, stale = context_views(transcript)
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

    def cwd(self, transcript: Transcript) -> str | None:
        """The `cwd` of the session header."""
        for record in transcript.records[:1]:
            raw = record.raw
            if isinstance(raw, dict) and raw.get("type") == "session":
                cwd = raw.get("cwd")
                return cwd if isinstance(cwd, str) else None
        return None

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
        """`bad-shape` for an entry whose view does not parse, and the rules of
        `compactcli.formats.pi.checks`.
        """
        records = transcript.records
        tree = self._tree(transcript)
        findings: list[Finding] = []
        findings += check_header(transcript, tree)

        shaped: list[int] = []  # entries whose view parsed
        for index in tree.entries:
            try:
                self._view(transcript, index, records[index].raw, in_context=False)
            except InputError as error:
                findings.append(Finding(records[index].lineno, "bad-shape", error.message))
                continue
            shaped.append(index)

        def parent(index: int) -> int | None:
            return parent_of(transcript, tree, index)

        if tree.version >= 2:
            findings += check_ids(transcript, tree)
        findings += check_compactions(transcript, tree, parent)
        findings += check_pairs(transcript, shaped, parent)
        return findings

    # ----------------------------------------------------------------------------- internals

    def _tree(self, transcript: Transcript) -> _Tree:
        """The entries of `transcript` and its active branch."""
        return read_tree(transcript)

    def _view(
        self, transcript: Transcript, index: int, raw: Mapping[str, Any], *, in_context: bool
    ) -> Message | None:
        """The message entry `raw` (record `index`) holds, or None; InputError if malformed."""
        return entry_view(transcript, index, raw, in_context=in_context)
