"""Writing a summary into a pi session (FORMATS.md §4, §6).

A pi session is append-only and so is `PiWriter`: every input line stays as it was, and one
`compaction` entry is appended on the active branch, as pi's own compaction does, naming the
first kept entry; pi then sends the summary, then the entries from that one on. The file keeps
its version, and the same input gives the same bytes. Protected head messages are quoted in the
summary (`quotes_head`), since pi keeps one run after a compaction.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

from compactcli.formats.pi.views import COMPACTION_PREFIX, COMPACTION_SUFFIX
from compactcli.injection import Injection, seed
from compactcli.transcript import Message, Record, Transcript

SUMMARY_WRAPPER = (COMPACTION_PREFIX, COMPACTION_SUFFIX)
"""What pi puts around the summary of a compaction it made (prefix, suffix)."""


class PiWriter:
    """Writes a summary as one `compaction` entry appended on the active branch.

    The entry is `{type, id, parentId, timestamp, summary, firstKeptEntryId, tokensBefore,
    details}`. Its parent is the branch's leaf (the last entry), so it becomes the new leaf;
    `firstKeptEntryId` names the first kept message, a user or assistant entry on that branch
    (never a tool result). `details` carries pi's own cumulative file lists (`readFiles`,
    `modifiedFiles`); our details go under a top-level `compactcli` key.

    A v2/v3 file gets an entry with an 8-hex `id` (derived from the input) and `parentId`; a v1
    file, which has neither, gets `firstKeptEntryIndex` (the kept entry's position among the
    file's JSON lines, header included, as pi's migration reads it) instead of
    `firstKeptEntryId`.
    """

    quotes_head = True
    refusal = "the kept tail cannot start on an entry of the active branch with an id"
    alternating = False

    def initial(self, context: Sequence[Message]) -> int:
        return 0

    def acceptor(
        self, transcript: Transcript, context: Sequence[Message]
    ) -> Callable[[int], bool] | None:
        """Accept a start on a real entry (not a synthetic summary) with an id where ids exist."""
        version = _version(transcript)
        records = transcript.records

        def accept(position: int) -> bool:
            message = context[position]
            if message.synthetic:
                return False
            raw = records[message.index].raw
            if raw.get("type") == "compaction":
                return False
            return version < 2 or isinstance(raw.get("id"), str)

        return accept

    def write(self, transcript: Transcript, injection: Injection) -> tuple[Record, ...]:
        records = transcript.records
        version = _version(transcript)
        entries = [i for i, r in transcript.objects() if r.raw.get("type") != "session"]
        leaf = records[entries[-1]].raw if entries else {}
        first = injection.tail[0]
        raw: dict[str, Any] = {"type": "compaction"}
        if version >= 2:
            ids = {r.raw.get("id") for _, r in transcript.objects()}
            key = seed(transcript.sha256, injection.text, first.id)
            entry_id = _short(key, ids)
            raw["id"] = entry_id
            raw["parentId"] = leaf.get("id")
        stamp = leaf.get("timestamp")
        raw["timestamp"] = stamp if isinstance(stamp, str) else "1970-01-01T00:00:00.000Z"
        raw["summary"] = injection.text
        if version >= 2:
            raw["firstKeptEntryId"] = first.id
        else:
            objects = [i for i, _ in transcript.objects()]
            raw["firstKeptEntryIndex"] = objects.index(first.index)
        raw["tokensBefore"] = injection.tokens_before
        raw["details"] = {
            "readFiles": list(injection.facts.files_read),
            "modifiedFiles": list(injection.facts.files_modified),
        }
        raw["compactcli"] = dict(injection.details)
        return (*records, Record(raw=raw))


def _version(transcript: Transcript) -> int:
    """The file's session version (1 when the header names none, as pi reads it)."""
    for _, record in transcript.objects():
        raw = record.raw
        if raw.get("type") == "session":
            value = raw.get("version")
            if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
                return value
            return 1
        return 3 if "parentId" in raw else 1
    return 1


def _short(key: str, taken: set[Any]) -> str:
    """An 8-hex id, as pi makes them, not yet used in the file."""
    salt = 0
    while True:
        entry_id = hashlib.sha256(f"{key}{salt}".encode()).hexdigest()[:8]
        if entry_id not in taken:
            return entry_id
        salt += 1


def writer(format: str) -> PiWriter:
    """The writer of format `format` (the registry's entry point)."""
    return PiWriter()
