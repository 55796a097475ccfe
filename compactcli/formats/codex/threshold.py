"""Codex's own auto-compaction trigger, the `codex` threshold preset (`compactcli.limits`): 90%
of the window.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from compactcli.limits import Limits


def threshold(limits: Limits) -> tuple[int, str]:
    """(tokens, the rule in words) for a model with `limits`."""
    # codex-rs core openai_model_info.rs: auto_compact_token_limit = context_window * 9 / 10.
    return limits.context_window * 9 // 10, "90% of window"
