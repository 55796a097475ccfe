"""Which user message is the session's goal: `goal_of` gives the first that states a task, not a
bare slash command, one that sets up the session (`sets_up`: `/model opus`, `SETTING_COMMANDS`),
a yes or a go-on, a placeholder compaction left, or a Spec Kit command's template; `moved_on`
names the Spec Kit commands a later message moved on from, and `settle_commands` says those in a
line and leaves out the rules of their templates.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from compactcli.lazy_pattern import compile_lazily
from compactcli.placeholders import CLEARED_PREFIXES
from compactcli.summarizers.sentences import constraint_sentences
from compactcli.user_text import BARE_COMMAND, bare_command, bare_command_line

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
    (`yes`, `continue`: `_ASSENT`), not a placeholder, not a Spec Kit command's template with
    no input (`user_text.bare_command`); the first message when none does."""
    for message in messages:
        if states_task(message):
            return message
    return messages[0] if messages else ""


def states_task(message: str) -> bool:
    """Whether a user message states a task (`goal_of`'s rule)."""
    text = message.strip()
    if not text or text.startswith((*_PLACEHOLDER_GOALS, BARE_COMMAND)) or bare_command(text):
        return False
    if len(text) <= 40 and set(_WORD.findall(text.lower())) <= _ASSENT:
        return False
    return not _slash_only(text)


SHORT_ANSWER = 6
"""The most characters of a reply that picks an option (`B`, `2`, `B, A`) and asks nothing
more."""


def moved_on(messages: Sequence[str]) -> set[int]:
    """The positions in `messages` of Spec Kit commands run without input (their templates,
    `user_text.bare_command`) that a later message moved on from: one that states a task
    (`goal_of`'s rule) and is more than a `SHORT_ANSWER` (a command's own questions are
    answered so), and those said in a line already (`user_text.bare_command_line`). Their
    templates' instructions were for that command alone."""
    done: set[int] = set()
    later_task = False
    for at in range(len(messages) - 1, -1, -1):
        text = messages[at].strip()
        if text.startswith(BARE_COMMAND):  # one said in a line already: moved on from
            done.add(at)
            later_task = True
        elif bare_command(text):
            if later_task:
                done.add(at)
            later_task = True
        elif len(text) > SHORT_ANSWER and states_task(text):
            later_task = True
    return done


def _slash_only(text: str) -> bool:
    """Whether a user message is a bare slash command (`/clear`, or a command of the user's that
    names no task: `/review`) or one that sets up the session (`sets_up`)."""
    return text.startswith("/") and (len(text.split()) == 1 or sets_up(text))


def sets_up(text: str) -> bool:
    """Whether a user message is a slash command that sets up the session (`/model opus`,
    `SETTING_COMMANDS`): whatever its arguments, it asks for no work."""
    return text.startswith("/") and text.split()[0][1:].lower() in SETTING_COMMANDS


def settle_commands(
    messages: Sequence[str], constraints: Iterable[str], turns: Mapping[str, int]
) -> tuple[tuple[str, ...], list[str]]:
    """`messages` with each Spec Kit command a later message moved on from (`moved_on`) said
    in a line (`user_text.bare_command_line`), and `constraints` without the rules its template
    gave (`turns`: the user message, counted from 1, that gave each), but for those the command
    still under way (a bare command no message moved on from) states too."""
    done = {at + 1 for at in moved_on(messages)}
    if not done:
        return tuple(messages), list(constraints)
    settled = tuple(
        bare_command_line(text) if turn in done and bare_command(text) else text
        for turn, text in enumerate(messages, start=1)
    )
    current = [text for text in settled if bare_command(text)]
    still = set(constraint_sentences(current[-1])) if current else set()
    return settled, [c for c in constraints if turns.get(c, 0) not in done or c in still]
