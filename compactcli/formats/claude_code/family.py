"""The shape only Claude Code's records have, for telling a file that mixes formats
(`compactcli.formats.mixed`): `FAMILY`, a chain record (`user`, `assistant`, `system`,
`attachment`, `progress`) with `parentUuid` and a string `uuid`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compactcli.formats.base import RecordFamily
from compactcli.formats.claude_code.records import _DAG_TYPES


def _holds(raw: Mapping[str, Any], kind: str | None) -> bool:
    return kind in _DAG_TYPES and "parentUuid" in raw and isinstance(raw.get("uuid"), str)


FAMILY = RecordFamily("claude-code", "a Claude Code record", "Claude Code records", _holds)
