"""Format detection: which registered format a file's first records are written in.

`detect_format(objects, path)` picks the format whose dialect is surest about the first
`SNIFF_RECORDS` object records of a file, ties going to the order of the registry
(`compactcli.formats.PACKAGES`), and raises `InputError` when none recognises them (naming what
the file is instead when it is a known kind of JSON Lines: an agent's prompt history, whole
conversations one per line).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from compactcli.errors import InputError
from compactcli.formats import FORMATS, get_dialect
from compactcli.jsonl import STDIN, display_name

SNIFF_RECORDS = 64
"""How many object records format detection looks at."""

__all__ = ["SNIFF_RECORDS", "detect_format"]


def detect_format(objects: Sequence[Mapping[str, Any]], path: str) -> str:
    """The format of a file whose first object records are `objects`.

    Ties go to the order of the registry (a plain user/assistant list reads as `openai`, whose
    rules are the looser of the two plain formats).
    """
    best, best_score = "", 0
    for name in FORMATS:
        score = get_dialect(name).sniff(objects)
        if score > best_score:
            best, best_score = name, score
    if not best:
        first = objects[0] if objects else {}
        known = _not_a_transcript(first, path)
        if known is not None:
            raise InputError(path, None, known)
        keys = ", ".join(sorted(first)[:6]) or "none"
        raise InputError(
            path,
            None,
            f"unknown transcript format (first record's keys: {keys}); "
            f"name one with --format ({', '.join(FORMATS)})",
        )
    return best


_HISTORIES = (
    ({"display", "pastedContents"}, "Claude Code", "~/.claude/history.jsonl", "~/.claude/projects"),
    ({"session_id", "ts", "text"}, "Codex", "~/.codex/history.jsonl", "~/.codex/sessions"),
)
"""Agents' prompt histories (the keys of a record, agent, file, where its sessions are): files
next to the transcripts that a folder of them can hold."""


def _not_a_transcript(first: Mapping[str, Any], path: str) -> str | None:
    """What a file whose first record is `first` is, when it is a known kind of JSON Lines
    that is not a transcript: an agent's prompt history, a file of whole conversations."""
    for keys, agent, history, sessions in _HISTORIES:
        if keys <= first.keys():
            return (
                f"not a transcript: {agent}'s prompt history ({history}: one line per prompt "
                f"typed, in every session); its sessions are under {sessions}"
            )
    if isinstance(first.get("messages"), list):  # a fine-tuning dataset, a request log
        return _conversations_per_line(path)
    return None


def _conversations_per_line(path: str) -> str:
    """Why a file whose lines each hold a whole `messages` list is not a transcript, and how
    to make one of its conversations one."""
    import shlex  # only on this error path

    reason = (
        "not a transcript: each line holds a whole conversation in its 'messages' list (a "
        "fine-tuning dataset or a log of API requests), not one record per line"
    )
    if path in (STDIN, display_name(STDIN)):
        return reason
    first = f"head -n 1 {shlex.quote(path)} | jq -c '.messages[]'"
    return f"{reason} (the first as a transcript: {first})"
