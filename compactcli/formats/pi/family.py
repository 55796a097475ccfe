"""The shape only pi's entries have, for telling a file that mixes formats
(`compactcli.formats.mixed`): `FAMILY`, the `session` header (a string `id`), a `message` entry
whose `message` has a pi role, or another pi entry type with a string `id` and a `parentId`;
never a record with a `role`, or with the `uuid`, `parentUuid` or `payload` of other agents'
records.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compactcli.formats.base import RecordFamily
from compactcli.formats.pi.tree import ENTRY_TYPES, ROLES

OTHER_KEYS = ("uuid", "parentUuid", "payload")
"""Keys of other agents' records (Claude Code's chain, Codex's envelope), never of a pi entry."""


def _holds(raw: Mapping[str, Any], kind: str | None) -> bool:
    if "role" in raw or any(key in raw for key in OTHER_KEYS):
        return False
    if kind == "session":
        return isinstance(raw.get("id"), str)
    if kind == "message":
        message = raw.get("message")
        role = message.get("role") if isinstance(message, Mapping) else None
        return isinstance(role, str) and role in ROLES
    return kind in ENTRY_TYPES and isinstance(raw.get("id"), str) and "parentId" in raw


FAMILY = RecordFamily("pi", "a pi entry", "pi entries", _holds)
