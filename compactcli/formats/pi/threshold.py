"""pi's own auto-compaction trigger, the `pi` threshold preset (`compactcli.limits`): the window
less the tokens pi reserves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from compactcli.limits import Limits


def threshold(limits: Limits) -> tuple[int, str]:
    """(tokens, the rule in words) for a model with `limits`."""
    # pi-mono coding-agent docs/compaction.md: compact when context > window - reserveTokens,
    # reserveTokens defaulting to 16,384.
    return limits.context_window - 16_384, "window - 16,384"
