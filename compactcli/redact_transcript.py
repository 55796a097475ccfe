"""Redacting whole transcripts, record by record, and JSON values such as reports.

`redact_transcript(transcript)` returns a `Redaction`: the transcript with every secret in every
record's string values replaced by `[REDACTED:<kind>]` (`compactcli.redact`), how many records
changed and how many secrets of each kind were replaced; a record without a secret keeps its
exact bytes, and opaque payloads are never touched. `redact_value` is the same walk over any JSON
value (boundary details, stats), and `redact_file` is one file of `compactcli redact`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

import orjson

from compactcli import batch
from compactcli.errors import CompactError
from compactcli.redact import Counts, redact_kinds, redact_named
from compactcli.transcript import Record, Transcript

if TYPE_CHECKING:
    from compactcli.compact_file import Destination
    from compactcli.jsonl import OnBadLine

__all__ = ["Redaction", "RedactionDict", "redact_file", "redact_transcript", "redact_value"]

_OPAQUE_KEYS = frozenset({"signature", "encrypted_content"})
_MEDIA_KEYS = ("media_type", "mimeType", "mime_type")
_OPAQUE_TYPES = frozenset({"base64", "image", "redacted_thinking"})


class RedactionDict(TypedDict):
    """`Redaction.to_dict()`: the figures of one redacted transcript (`redact --json`, and
    `redacted` in a `compact --redact --json` row)."""

    records: int
    records_changed: int
    secrets: int
    kinds: dict[str, int]


@dataclass(frozen=True, slots=True)
class Redaction:
    """A redacted transcript and what was replaced in it."""

    transcript: Transcript
    records: int  # records changed
    counts: Mapping[str, int] = field(default_factory=dict)  # secrets replaced, by kind

    @property
    def secrets(self) -> int:
        return sum(self.counts.values())

    def to_dict(self) -> RedactionDict:
        return {
            "records": len(self.transcript.records),
            "records_changed": self.records,
            "secrets": self.secrets,
            "kinds": dict(sorted(self.counts.items())),
        }


def _add(total: Counts, counts: Counts) -> None:
    for kind, number in counts.items():
        total[kind] = total.get(kind, 0) + number


def _opaque(key: str, holder: Mapping[str, Any]) -> bool:
    """Whether the string at `key` of `holder` is an opaque payload, left as it is."""
    if key in _OPAQUE_KEYS:
        return True
    return key == "data" and (
        any(k in holder for k in _MEDIA_KEYS) or holder.get("type") in _OPAQUE_TYPES
    )


def _parses(text: str) -> bool:
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError:
        return False
    return True


SEEN_CHARS = 256
"""A string up to this long is redacted once per walk, however often it occurs (ids, paths,
names and types recur in most records: about two thirds of a real session's strings)."""

Seen = dict[tuple[str | None, str], tuple[str, Counts]]


def _string(
    value: str, key: str | None, counts: Counts, changes: dict[str, str], seen: Seen
) -> str:
    """`value` redacted (as the value of field `key`, when it is one); a `data:` URL as it is."""
    if value.startswith("data:") and ";base64," in value[:120]:
        return value
    known = seen.get((key, value)) if len(value) <= SEEN_CHARS else None
    if known is not None:
        redacted, found = known
    else:
        redacted, found = _redacted(value, key)
        if len(value) <= SEEN_CHARS:
            seen[(key, value)] = redacted, found
    if redacted == value:
        return value
    _add(counts, found)
    changes[value] = redacted
    return redacted


def _redacted(value: str, key: str | None) -> tuple[str, Counts]:
    if key is not None:
        redacted, found = redact_named(key, value)
    else:
        redacted, found = redact_kinds(value)
    if redacted == value:
        return value, found
    if value.startswith(("{", "[")) and _parses(value) and not _parses(redacted):
        # JSON inside a string (tool call arguments): redact its values, keep it JSON
        inner, found = redact_value(orjson.loads(value))
        redacted = orjson.dumps(inner).decode()
    return redacted, found


def _walk(
    value: Any, counts: Counts, changes: dict[str, str], seen: Seen, key: str | None = None
) -> Any:
    """`value` with its strings redacted: the same object when nothing changed. `seen` holds
    the short strings redacted so far (`SEEN_CHARS`)."""
    if isinstance(value, str):
        return _string(value, key, counts, changes, seen)
    if isinstance(value, dict):
        result: dict[str, Any] | None = None
        for k, item in value.items():
            if isinstance(item, str) and _opaque(k, value):
                new = item
            elif isinstance(item, (str, dict, list)):
                new = _walk(item, counts, changes, seen, k)
            else:
                new = item
            if new is not item and result is None:
                result = {}
                for earlier, kept in value.items():  # the keys before, in their order
                    if earlier == k:
                        break
                    result[earlier] = kept
            if result is not None:
                result[k] = new
        return value if result is None else result
    if isinstance(value, list):
        items = [_walk(item, counts, changes, seen) for item in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return items
    return value


def redact_value(value: Any) -> tuple[Any, Counts]:
    """`value` (any JSON value) with every secret in its strings redacted, and the counts by
    kind; the same object when it holds none."""
    counts: Counts = {}
    return _walk(value, counts, {}, {}), counts


def _line(record: Record, raw: Any, changes: Mapping[str, str]) -> bytes | None:
    """The record's bytes with each changed string replaced where it is written; None when that
    does not give exactly `raw` (the record is then written anew)."""
    if record.line is None:
        return None
    line = bytes(record.line)
    for old, new in changes.items():
        written = orjson.dumps(old)
        if written not in line:
            return None
        line = line.replace(written, orjson.dumps(new))
    try:
        same = orjson.loads(line) == raw
    except orjson.JSONDecodeError:
        return None
    return line if same else None


def redact_transcript(transcript: Transcript) -> Redaction:
    """`transcript` with the secrets in all its records redacted. Only string values change:

    - every string value of a record goes through `compactcli.redact`, and the value of a field
      whose name says secret (`"password": "hunter2"`) through `redact_named`; keys, numbers, the
      structure and the order of keys stay as they are;
    - a record without a secret keeps its exact bytes; a record with one keeps its bytes except
      for the strings that changed (each replaced where it is written: `_line`), or, when that
      cannot be done exactly, is written anew from its JSON;
    - a string holding JSON (OpenAI's tool call `arguments`) stays valid JSON;
    - opaque values are never touched (`_opaque`): thinking signatures (`signature`), encrypted
      reasoning and compaction items (`encrypted_content`), base64 payloads (`data` beside a
      `media_type`, `mimeType` or a `type` of `base64`, `image` or `redacted_thinking`) and
      `data:` URLs. Changing them would break the transcript, and they hold no text a secret
      could be read from.
    """
    counts: Counts = {}
    seen: Seen = {}
    records: list[Record] = []
    changed = 0
    for record in transcript.records:
        if record.raw is None or not isinstance(record.raw, (dict, list, str)):
            records.append(record)
            continue
        changes: dict[str, str] = {}
        raw = _walk(record.raw, counts, changes, seen)
        if raw is record.raw:
            records.append(record)
            continue
        changed += 1
        line = _line(record, raw, changes)
        records.append(Record(raw, line, record.lineno, record.eol or b"\n"))
    if not changed:
        return Redaction(transcript, 0, counts)
    return Redaction(transcript.evolve(records=tuple(records)), changed, counts)


def redact_file(
    path: str,
    destination: Destination,
    *,
    format: str | None = None,
    on_bad_line: OnBadLine = "error",
    final: bool = False,
    repair: bool = False,
) -> batch.FileResult:
    """Redact one transcript file and write the result, as `compactcli compact` writes its results
    (standard output, a file with the input's permission bits, in place with a backup, or nothing
    with `--dry-run`, as `destination` says); a `compactcli.batch.FileResult` whose
    `details["redact"]` holds the figures.

    An input that fails `validate` is refused (`InvalidTranscript`, nothing written), or with
    `repair` repaired first (`compactcli.repair`; the repairs under `details["repairs"]`).

    `final` says this is the run's only output. In place, a file that changed since it was read
    is left as it is (`compactcli.in_place`). A result that would not validate as well as the
    input did (a new error) raises `CompactError` (exit 1) and nothing is written.
    """
    from compactcli.compact_file import write_result
    from compactcli.in_place import file_identity
    from compactcli.jsonl import BadLines
    from compactcli.loading import read_transcript
    from compactcli.repair import admit
    from compactcli.validation import validate

    seen = file_identity(path) if destination.mode == "in_place" else None
    bad = BadLines()
    transcript = read_transcript(path, format, on_bad_line=on_bad_line, bad=bad)
    admitted = admit(transcript, repair=repair)
    transcript = admitted.transcript
    verb = "skipped" if on_bad_line == "skip" else "kept unparsed"
    warnings = tuple(f"{transcript.source}:{line}: {verb}: {why}" for line, why in bad.lines)
    redaction = redact_transcript(transcript)
    result = redaction.transcript
    if redaction.records:
        errors = validate(result).errors
        if errors and len(errors) > len(validate(transcript).errors):
            first = errors[0]
            raise CompactError(
                f"{transcript.source}: the redacted transcript would not validate (line "
                f"{first.line}: {first.code}: {first.message}); nothing written"
            )
    output, backup = write_result(
        transcript,
        result,
        destination,
        changed=redaction.records > 0 or bool(admitted.repairs),
        seen=seen,
        final=final,
    )
    return batch.FileResult(
        path=transcript.source,
        status="redacted" if redaction.records else "repaired" if admitted.repairs else "unchanged",
        output=output,
        backup=backup,
        warnings=warnings,
        details={
            "redact": redaction.to_dict(),
            **({"repairs": [r.to_dict() for r in admitted.repairs]} if admitted.repairs else {}),
        },
    )
