"""The shape only Codex's records have, for telling a file that mixes formats
(`compactcli.formats.mixed`): `FAMILY`, an envelope (string `timestamp` and `type`, object
`payload`) of a Codex record type.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compactcli.formats.base import RecordFamily
from compactcli.formats.codex.items import RECORD_TYPES, is_envelope


def _holds(raw: Mapping[str, Any], kind: str | None) -> bool:
    return kind in RECORD_TYPES and is_envelope(raw)


FAMILY = RecordFamily("codex", "a Codex record", "Codex records", _holds)
