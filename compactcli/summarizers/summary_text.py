"""The extractive summary's text: its headings and fixed lines, and reading it back.

The extractive summary is markdown under fixed headings (`SECTIONS`, in this order) with fixed
lines for what refers elsewhere (`SEE_GOAL`, `SEE_REQUEST`, ...). The rules of an instruction
file or a skill stand under its name, once (`rule_source`, `grouped_rules`): `- Skill deploy:`,
then `  - Never push to main.`. `parse_summary(text)` reads such a summary back into facts,
each grouped rule with its source's name in front again, so that a summary carried through
round after round keeps what it showed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from compactcli.lazy_pattern import compile_lazily
from compactcli.summarizers import REQUEST_HEADING
from compactcli.summarizers.carriers import ANSWER_PREFIXES
from compactcli.summarizers.facts import PASTED, Command, ErrorFact, Facts
from compactcli.summarizers.sentences import constraint_sentences
from compactcli.summarizers.spans import span_text
from compactcli.tools import RULE_FILES

__all__ = [
    "SECTIONS",
    "SUMMARY_HEADINGS",
    "escape_heading",
    "grouped_rules",
    "parse_summary",
    "rule_source",
]

UPDATE_LINE = (
    "This summary updates an earlier summary of this conversation: "
    "what the earlier one recorded is kept below, and newer turns are added."
)
EARLIER = "## Earlier summary"
GOAL = "## Goal"
USER_MESSAGES = "## User messages (oldest first)"
CONSTRAINTS = "## Constraints and preferences"
FILES_READ = "## Files read"
FILES_MODIFIED = "## Files modified"
COMMANDS = "## Commands"
ERRORS = "## Errors"
DECISIONS = "## Decisions"
PLAN = "## Approved plan"
PROGRESS = "## Progress (oldest first)"
IDENTIFIERS = "## Identifiers"
PENDING = "## Pending asks and todos"
CURRENT = "## Current state (the agent's last message)"

SECTIONS = (
    EARLIER,
    GOAL,
    USER_MESSAGES,
    CONSTRAINTS,
    PLAN,
    FILES_MODIFIED,
    FILES_READ,
    ERRORS,
    COMMANDS,
    DECISIONS,
    PROGRESS,
    IDENTIFIERS,
    CURRENT,
    PENDING,
)
SUMMARY_HEADINGS: tuple[str, ...] = (UPDATE_LINE, *SECTIONS)
"""Every fixed line the extractive summary writes (to exclude from probe matching)."""

ASK = "- Ask: "
TODO = "- Todo "
UNRESOLVED = "- Unresolved: "
RESOLVED = "- Resolved: "
PASTED_LINE = "- Pasted by the user: "
OMITTED = "- ({count} more not shown)"
SEE_GOAL = "(the goal above)"
SEE_REQUEST = "(the latest request below)"
SEE_PENDING = "(pending: see the asks below)"
CHANGED = " — "
"""Between a modified file and what changed in it."""

RULE = "  - "
"""The start of a rule shown under the name of the file or skill it came from."""
_SOURCE = compile_lazily(
    r"^(Skill [^:\n]{1,80}|"
    + "|".join(re.escape(name) for name in sorted(RULE_FILES))
    + r"): (?=\S)",
    re.IGNORECASE,
)
_GROUP = compile_lazily(r"^- (.+):$")


def rule_source(constraint: str) -> tuple[str, str] | None:
    """(source, rule) of a constraint that an instruction file or a skill set (`Skill deploy:
    Never push to main.`, `AGENTS.md: Run the tests first.`); None for any other."""
    match = _SOURCE.match(constraint)
    return (match.group(1), constraint[match.end() :]) if match else None


def grouped_rules(lines: Sequence[tuple[str, str]]) -> list[str]:
    """The lines of the constraints section from (source, line) pairs in order: the lines of a
    source (rules, each `RULE` + text) together under a `- source:` line, where its first one
    was; a line of no source (`- text`) where it was."""
    rules: dict[str, list[str]] = {}
    for source, line in lines:
        if source:
            rules.setdefault(source, []).append(line)
    out: list[str] = []
    for source, line in lines:
        if not source:
            out.append(line)
        elif source in rules:
            out.extend((f"- {source}:", *rules.pop(source)))
    return out


def _ungrouped(lines: Sequence[str]) -> list[str]:
    """The constraints section's lines as constraints (`- ` taken off), each rule with the name
    of its source in front again (`grouped_rules` read back)."""
    out: list[str] = []
    source = ""
    for at, line in enumerate(lines):
        group = _GROUP.match(line)
        if group and at + 1 < len(lines) and lines[at + 1].startswith(RULE):
            source = group.group(1)
        elif line.startswith(RULE) and source:
            out.append(f"{source}: {line.removeprefix(RULE)}")
        else:
            source = ""
            out.append(line.removeprefix("- "))
    return out


_OMITTED = compile_lazily(r"^- \(\d+ more not shown\)$")
_NUMBERED = compile_lazily(r"^\d+\. (.*)$")
_COMMAND = compile_lazily(
    r"^- `(.*)` \((ok|failed|rejected|unknown|printed an error)(?:, ran (\d+) times)?\)(?:: (.*))?$"
)
_ERROR = compile_lazily(r"^- (Unresolved|Resolved): (.*?)(?: \(([^:()]*): (.*)\))?$")


def escape_heading(line: str) -> str:
    """A line of a section that would read as a heading (a goal that starts `## User Input`),
    its `#` escaped as markdown escapes it, so the summary reads back with its own sections
    (`parse_summary` takes the escape off)."""
    return "\\" + line if line.startswith("#") else line


def parse_summary(text: str) -> tuple[Facts, str | None] | None:
    """Facts (and any earlier-summary text) read back from a summary in our own format.

    None when `text` is not one of ours (it has none of our section headings at line start).
    Items a budget left out cannot be recovered; what was shown is (a command's error line shown
    only under Errors, at the command it names, is its detail again). A request quoted after the
    summary (under `REQUEST_HEADING`) stands in for the items that refer to it (`SEE_REQUEST`).
    """
    lines = text.splitlines()
    start = next(
        (i for i, line in enumerate(lines) if line == UPDATE_LINE or line in SECTIONS), None
    )
    if start is None or len("\n".join(lines[:start])) > 1000:
        return None
    lines = lines[start:]
    request = ""
    if REQUEST_HEADING in lines:
        at = lines.index(REQUEST_HEADING)
        request = "\n".join(lines[at + 1 :]).strip()
        lines = lines[:at]
    current_section: str | None = None
    headings = 0
    for line in lines:
        if line in SECTIONS:
            current_section = line
            headings += 1
        elif line.startswith("## ") and current_section != EARLIER:
            return None  # a heading of some other format
    if headings < 2 and lines[0] != UPDATE_LINE:
        return None
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for line in lines:
        if line in SECTIONS:
            current = line
            sections.setdefault(current, [])
        elif (
            current is not None
            and not _OMITTED.match(line)
            and (line.strip() or current in (EARLIER, CURRENT))
        ):
            escaped = current != EARLIER and line.startswith("\\#")
            sections[current].append(line[1:] if escaped else line)
    bullets = {name: [line.removeprefix("- ") for line in body] for name, body in sections.items()}
    goal = " ".join(sections.get(GOAL, []))
    if goal == SEE_REQUEST and request:
        goal = request
    messages = []
    for line in sections.get(USER_MESSAGES, []):
        match = _NUMBERED.match(line)
        if match:
            if match.group(1) == SEE_GOAL and goal:
                messages.append(goal)
            else:
                messages.append(
                    request if match.group(1) == SEE_REQUEST and request else match.group(1)
                )
    commands = []
    for line in sections.get(COMMANDS, []):
        match = _COMMAND.match(line)
        if match:
            command, outcome, runs, detail = match.groups()
            commands.append(Command(span_text(command), outcome, detail or "", int(runs or 1)))
    errors = []
    for line in sections.get(ERRORS, []):
        match = _ERROR.match(line)
        if match:
            errors.append(
                ErrorFact(
                    text=match.group(2),
                    resolved=match.group(1) == "Resolved",
                    tool=match.group(3) or "",
                    where=match.group(4) or "",
                )
            )
    for line in sections.get(ERRORS, []):
        if line.startswith(PASTED_LINE):
            errors.append(
                ErrorFact(text=line.removeprefix(PASTED_LINE), resolved=False, tool=PASTED)
            )
    # a command whose error line the errors show (and name it at) had that line as its detail
    printed = {error.where: error.text for error in errors if not error.resolved and error.where}
    commands = [
        replace(c, detail=printed[c.command]) if not c.detail and c.command in printed else c
        for c in commands
    ]
    modified: list[str] = []
    changes: list[tuple[str, str]] = []
    for line in bullets.get(FILES_MODIFIED, []):
        path, _, notes = line.partition(CHANGED)
        modified.append(path)
        changes.extend(
            (path, note) for note in notes.split("; ") if note and "more edits" not in note
        )
    said = _ungrouped(sections.get(CONSTRAINTS, []))
    constraints = [c for c in said if not c.startswith(ANSWER_PREFIXES)]
    answers = [c for c in said if c.startswith(ANSWER_PREFIXES)]
    pending = [line.removeprefix(ASK) for line in sections.get(PENDING, []) if line.startswith(ASK)]
    pending = [{SEE_REQUEST: request, SEE_GOAL: goal}.get(ask) or ask for ask in pending]
    asks = iter(pending)  # a message shown as pending is the pending ask of its turn
    messages = [next(asks, m) if m == SEE_PENDING else m for m in messages]
    todos = [line.removeprefix(TODO) for line in sections.get(PENDING, []) if line.startswith(TODO)]
    earlier = "\n".join(sections.get(EARLIER, [])).strip() or None
    # the rules a user message shown whole held (the summary does not repeat them)
    spoken = [*sections.get(GOAL, []), *messages]
    constraints = list(
        dict.fromkeys([*(c for text in spoken for c in constraint_sentences(text)), *constraints])
    )
    facts = Facts(
        goal=goal,
        user_messages=tuple(messages),
        constraints=tuple(constraints),
        files_read=tuple(bullets.get(FILES_READ, [])),
        files_modified=tuple(modified),
        commands=tuple(commands),
        errors=tuple(errors),
        decisions=tuple(bullets.get(DECISIONS, [])),
        pending=tuple(pending),
        todos=tuple(todos),
        identifiers=tuple(bullets.get(IDENTIFIERS, [])),
        answers=tuple(answers),
        changes=tuple(changes),
        plan=tuple(bullets.get(PLAN, [])),
        reports=tuple(bullets.get(PROGRESS, [])),
        last_reply="\n".join(sections.get(CURRENT, [])).strip(),
    )
    return facts, earlier
