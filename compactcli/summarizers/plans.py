"""Plans an agent recorded: approved (Claude Code's `ExitPlanMode`) and proposed (Codex's
`<proposed_plan>`).

`accepted_plan` and `proposed_plans` give a plan's steps, read by `plan_steps` from its
structure: list items, labelled lines, and headings with the first sentence under them, outside
code, at most `PLAN_STEPS` of them. Pure functions of their arguments.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from compactcli.lazy_pattern import compile_lazily
from compactcli.summarizers.sentences import NOT_AN_ABBREVIATION
from compactcli.tools import base_name
from compactcli.trim import clip, one_line

PLAN_STEPS = 24
PLAN_STEP_CHARS = 200


_PLAN_TOOLS = frozenset({"exitplanmode", "exit_plan_mode"})
_APPROVED = ("User has approved your plan", "User has approved exiting plan mode")
_PROPOSED = compile_lazily(r"<proposed_plan>(.*?)(?:</proposed_plan>|\Z)", re.DOTALL)
_STEP = compile_lazily(r"^\s*(?:[-*•]|\d+[.)]|- \[[ xX]\])\s+(.+)$")
_HEADING = compile_lazily(r"^\s*#{1,6}\s+(.+)$")


_LABELLED = compile_lazily(r"^\s*\*\*([^*\n]{2,40}?):?\*\*:?\s+(\S.*)$")
_NOT_PROSE = compile_lazily(r"^\s*(?:\||[-=*_]{3,}\s*$|<)")
"""A line that is not a sentence: a table row, a rule, a tag."""
_BOLD_LINE = compile_lazily(r"^\s*\*\*([^*\n]{2,80}?):?\*\*:?\s*$")
"""A line that is only bold words (`**Summary**`): a heading."""
_BOLD = compile_lazily(r"\*\*([^*\n]+)\*\*")
_SENTENCE_END = compile_lazily(rf"(?<=[.!?]){NOT_AN_ABBREVIATION}\s+(?=[A-Z`*(\"])")


def _first_sentence(line: str) -> str:
    text = one_line(line).replace("**", "")
    found = _SENTENCE_END.search(text, 40)
    return text[: found.start()] if found else text


def plan_steps(text: str) -> list[str]:
    """The steps of a plan, outside code, in order: its list items, its labelled lines
    (`**Problem:** ...`), and its headings (and lines only bold), each with the first sentence
    of the prose under it when prose comes before any item (`Context: the dashboard ranks
    ...`): a heading alone says little."""
    steps: list[str] = []

    def add(step: str) -> None:
        step = clip(_BOLD.sub(r"\1", step).strip("*_ "), PLAN_STEP_CHARS)
        if len(step) > 3 and step not in steps:
            steps.append(step)

    fenced = False
    heading: str | None = None  # a heading whose prose is not seen yet
    for line in text.splitlines():
        if line.strip().startswith("```"):
            fenced = not fenced
            continue
        if fenced or not line.strip() or _NOT_PROSE.match(line):
            continue
        head = _HEADING.match(line) or _BOLD_LINE.match(line)
        step = None if head else _STEP.match(line)
        if heading is not None and (head or step):
            add(heading)
            heading = None
        if head:
            heading = head.group(1).strip("*_ ")
        elif step:
            add(step.group(1))
        elif heading is not None:
            add(f"{heading}: {_first_sentence(line)}")
            heading = None
        elif labelled := _LABELLED.match(line):
            add(f"{labelled.group(1)}: {_first_sentence(labelled.group(2))}")
    if heading is not None:
        add(heading)
    if not steps:  # a plan in prose: its first sentences
        prose = one_line(text)
        steps = [clip(prose, PLAN_STEP_CHARS * 2)] if prose else []
    return steps[:PLAN_STEPS]


def accepted_plan(name: str | None, arguments: Any, result: str) -> list[str]:
    """The steps of a plan the user approved (Claude Code `ExitPlanMode`), or [] (not a plan tool,
    or not approved).
    """
    if base_name(name) not in _PLAN_TOOLS or not result.lstrip().startswith(_APPROVED):
        return []
    plan = arguments.get("plan") if isinstance(arguments, Mapping) else None
    if not isinstance(plan, str):
        marker = "## Approved Plan:"
        plan = result.split(marker, 1)[1] if marker in result else None
    return plan_steps(plan) if isinstance(plan, str) else []


def proposed_plans(text: str) -> list[str]:
    """The steps of the last `<proposed_plan>` block of an assistant text (Codex plan mode)."""
    if "<proposed_plan>" not in text:
        return []
    blocks = _PROPOSED.findall(text)
    return plan_steps(blocks[-1]) if blocks else []


_NOT_APPROVED = compile_lazily(
    r"\b(?:no|not|don'?t|wrong|instead|redo|rewrite|change|fix|missing)\b", re.IGNORECASE
)
"""Words of a message that names a plan to have it changed, not carried out."""


def approved_by_name(files: Mapping[str, list[str]], message: str) -> list[str]:
    """The steps of the plan a user message approves by naming the file the agent wrote it to
    (`plan.001.md looks good. Execute.`; `files`: each file's base name, lowercase, and its
    steps); none when the message names none, or asks for a change (`_NOT_APPROVED`)."""
    low = message.lower()
    named = [steps for file, steps in files.items() if file in low]
    return named[-1] if named and not _NOT_APPROVED.search(message) else []
