"""Claude Code's own auto-compaction trigger, the `claude-code` threshold preset
(`compactcli.limits`): the window less the room kept for the summary and a buffer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from compactcli.limits import Limits


def threshold(limits: Limits) -> tuple[int, str]:
    """(tokens, the rule in words) for a model with `limits`."""
    # Claude Code services/compact/autoCompact.ts: effective window = window -
    # min(max output, MAX_OUTPUT_TOKENS_FOR_SUMMARY = 20,000); auto-compact threshold =
    # effective window - AUTOCOMPACT_BUFFER_TOKENS (13,000).
    reserve = min(limits.max_output, 20_000)
    return limits.context_window - reserve - 13_000, "window - min(max output, 20,000) - 13,000"
