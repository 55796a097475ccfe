"""What every transcript renderer shares: the record list with fact anchors, a seeded clock, ids.

A renderer (`Renderer`) writes turns of a generated session into `AnchoredRecords`, whose
`add(record, facts)` appends a record and anchors each fact id to the first record that carries
it; with `existing` records (the transcript being appended to) it writes what follows them. Its
random draws come from `seeded_rng(session, format, salt)`: `Clock` stamps timestamps that
advance by a random step from `START` (when appending, from `latest_timestamp` of the existing
records), and `random_uuid`, `random_uuid7`, `random_token` and `random_blob` draw ids, tokens
and opaque blobs, so the same session, format and salt give the same records.
"""

from __future__ import annotations

import base64
import random
import string
import uuid as uuidlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from compactcli.evaluation.session_model import Session, Turn

START = datetime(2026, 5, 4, 9, 0, 0, tzinfo=UTC)

JsonObject = dict[str, Any]


class Clock:
    """Timestamps that advance by a random step (`low` to `high` seconds) at every tick."""

    def __init__(self, rng: random.Random, start: datetime) -> None:
        self.rng = rng
        self.now = start

    def tick(self, low: float = 0.2, high: float = 4.0) -> str:
        self.now += timedelta(milliseconds=self.rng.randint(int(low * 1000), int(high * 1000)))
        return self.now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.now.microsecond // 1000:03d}Z"


def random_uuid(rng: random.Random) -> str:
    """A version 4 UUID from `rng` bits."""
    return str(uuidlib.UUID(int=rng.getrandbits(128), version=4))


def random_uuid7(rng: random.Random) -> str:
    """A UUID shaped like version 7 (Codex ids), from `rng` bits."""
    value = rng.getrandbits(128)
    value = (value & ~(0xF << 76)) | (0x7 << 76)
    value = (value & ~(0x3 << 62)) | (0x2 << 62)
    return str(uuidlib.UUID(int=value))


def random_token(rng: random.Random, length: int) -> str:
    """`length` letters and digits, as in message and call ids."""
    alphabet = string.ascii_letters + string.digits
    return "".join(rng.choice(alphabet) for _ in range(length))


def random_blob(rng: random.Random, size: int) -> str:
    """`size` random bytes, URL-safe base64 without padding (signatures, encrypted content)."""
    return base64.urlsafe_b64encode(rng.randbytes(size)).decode().rstrip("=")


@dataclass(slots=True)
class AnchoredRecords:
    """Records in file order, and the index of the first record carrying each planted fact."""

    records: list[JsonObject]
    anchors: dict[str, int]

    def add(self, record: JsonObject, facts: Sequence[str] = ()) -> int:
        self.records.append(record)
        index = len(self.records) - 1
        for fact in facts:
            self.anchors.setdefault(fact, index)
        return index


def seeded_rng(session: Session, fmt: str, salt: int = 0) -> random.Random:
    """The generator every draw of one rendering comes from."""
    return random.Random(f"{session.seed}:{fmt}:{salt}")


def latest_timestamp(existing: Sequence[Mapping[str, Any]]) -> datetime:
    """The latest timestamp among `existing` records (START when none has one)."""
    latest = START
    for raw in existing:
        value = raw.get("timestamp")
        if isinstance(value, str):
            try:
                when = datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
            except ValueError:
                continue
            latest = max(latest, when)
    return latest


Renderer = Callable[
    [Session, list[Turn], AnchoredRecords, "Sequence[Mapping[str, Any]] | None", int], None
]
"""Writes `turns` of `session` into the records; `existing` are the records of the transcript
appended to (None for a whole session), `salt` tells rounds apart in the seeded draws."""

__all__ = [
    "START",
    "AnchoredRecords",
    "Clock",
    "JsonObject",
    "Renderer",
    "latest_timestamp",
    "random_blob",
    "random_token",
    "random_uuid",
    "random_uuid7",
    "seeded_rng",
]
