"""How the text that stands where content was cleared begins.

The prune stage replaces an old tool result, a duplicate one and an old image by one line of
text that says what was there (`CLEARED_RESULT`, `CLEARED_DUPLICATE`, `CLEARED_IMAGE`); Claude
Code's own microcompact writes `CLAUDE_CODE_CLEARED`. Whatever reads a transcript back (the
summary's facts, what counts as a prompt, `diff`, `export`, the evaluation's view) tells these
apart from written text by `CLEARED_PREFIXES`. Constants only.
"""

from __future__ import annotations

CLEARED_RESULT = "[Old tool result cleared:"
CLEARED_DUPLICATE = "[Duplicate tool result cleared:"
CLEARED_IMAGE = "[Old image cleared:"
CLAUDE_CODE_CLEARED = "[Old tool result content cleared]"

CLEARED_PREFIXES = (CLEARED_RESULT, CLEARED_DUPLICATE, CLAUDE_CODE_CLEARED, CLEARED_IMAGE)
"""How a cleared result or image starts: compactcli's placeholders, and Claude Code's own."""
