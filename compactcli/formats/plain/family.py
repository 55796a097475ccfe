"""The shape only plain message lists have, for telling a file that mixes formats
(`compactcli.formats.mixed`): `FAMILY`, a chat message (`role` with `content` or `tool_calls`,
no `type`, none of the `uuid`, `parentUuid` or `payload` of agents' records), as OpenAI and
Anthropic message lists hold (and Responses lists may: the API takes them). The family of both
`openai` and `anthropic`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compactcli.formats.base import RecordFamily

OTHER_KEYS = ("uuid", "parentUuid", "payload")
"""Keys of agents' records (Claude Code's chain, Codex's envelope), never of a chat message."""


def _holds(raw: Mapping[str, Any], kind: str | None) -> bool:
    return (
        kind is None
        and "role" in raw
        and ("content" in raw or "tool_calls" in raw)
        and not any(key in raw for key in OTHER_KEYS)
    )


FAMILY = RecordFamily(
    "plain", "a plain chat message (OpenAI or Anthropic)", "plain chat messages", _holds
)
