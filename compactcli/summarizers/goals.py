"""Which user message is the session's goal: `goal_of` gives the first that states a task, not a
bare slash command, one that sets up the session (`sets_up`: `/model opus`, `SETTING_COMMANDS`),
a yes or a go-on, or a placeholder compaction left.
"""

from __future__ import annotations

from collections.abc import Sequence

from compactcli.lazy_pattern import compile_lazily
from compactcli.placeholders import CLEARED_PREFIXES

_PLACEHOLDER_GOALS = (*CLEARED_PREFIXES, "[Request interrupted")
SETTING_COMMANDS = frozenset(
    {
        *("add-dir", "agents", "approvals", "bug", "clear", "compact", "config", "context"),
        *("cost", "doctor", "effort", "exit", "export", "fast", "help", "hooks", "hotkeys"),
        *("ide", "login", "logout", "mcp", "memory", "model", "new", "output-style"),
        *("permissions", "plugin", "privacy-settings", "quit", "release-notes", "rename"),
        *("resume", "rewind", "sandbox", "session", "settings", "status", "statusline"),
        *("terminal-setup", "theme", "thinking", "upgrade", "usage", "vim"),
    }
)
"""The agents' slash commands that set up the session (its model, its settings, its view):
with whatever arguments, they state no task."""


_ASSENT = frozenset(
    {
        *("ahead", "alright", "cont", "continue", "contnue", "cool", "do", "go", "good"),
        *("great", "it", "k", "lgtm", "nice", "ok", "okay", "on", "perfect", "please"),
        *("pls", "proceed", "sounds", "sure", "thank", "thanks", "ty", "y", "yeah", "yep"),
        *("yes", "yez", "you", "yup"),
    }
)
"""Words that only say yes or go on (`yes`, `ok go ahead`, `continue`): no task on their own."""
_WORD = compile_lazily(r"[a-z]+")


def goal_of(messages: Sequence[str]) -> str:
    """The first user message that states a task: not a bare slash command (`/clear`), not one
    that sets up the session (`/model opus`, `SETTING_COMMANDS`), not only a yes or a go-on
    (`yes`, `continue`: `_ASSENT`), not a placeholder; the first message when none does."""
    for message in messages:
        text = message.strip()
        if text.startswith(_PLACEHOLDER_GOALS):
            continue
        if len(text) <= 40 and set(_WORD.findall(text.lower())) <= _ASSENT:
            continue
        if _slash_only(text):
            continue
        return message
    return messages[0] if messages else ""


def _slash_only(text: str) -> bool:
    """Whether a user message is a bare slash command (`/clear`, or a command of the user's that
    names no task: `/review`) or one that sets up the session (`sets_up`)."""
    return text.startswith("/") and (len(text.split()) == 1 or sets_up(text))


def sets_up(text: str) -> bool:
    """Whether a user message is a slash command that sets up the session (`/model opus`,
    `SETTING_COMMANDS`): whatever its arguments, it asks for no work."""
    return text.startswith("/") and text.split()[0][1:].lower() in SETTING_COMMANDS
