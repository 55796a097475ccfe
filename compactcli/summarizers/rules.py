"""The binding lines of a loaded skill, an instruction file, or a document the user pointed to.

`skill_rules(text)` reads a skill body an agent loaded (Claude Code's `Base directory for this
skill:`, pi's `<skill>`) into its name and its lines: the task and workflow steps first, the rule
lines (must, never, always, do not...) next, the names it gives (URLs, time zones, file names)
last. `instruction_rules(path, text)` does the same for a file a tool read: a skill's `SKILL.md`,
an instruction file (`AGENTS.md`, `CLAUDE.md`, `MEMORY.md`, ...), and with `pointed` any document
the user named, of which only the lines that direct are kept; `template_rules(template)` those of
a Spec Kit command's template. At most `SKILL_RULES` lines each,
verbatim but for markdown marks and read tools' line numbers. Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from compactcli.lazy_pattern import compile_lazily
from compactcli.shell_text import unnumbered
from compactcli.tools import RULE_FILES
from compactcli.trim import clip
from compactcli.user_text import pi_skill

__all__ = ["LIST_ITEM", "SKILL_RULES", "instruction_rules", "skill_rules", "template_rules"]

SKILL_RULES = 12
LIST_ITEM = compile_lazily(r"^\s*(?:[-*•]|\d+[.)])\s+(.+)$")
"""A list item's line: its mark or number, then its text."""


_SKILL_NAME = compile_lazily(r"^name:\s*(\S.*)$", re.MULTILINE)
_SKILL_DIR = compile_lazily(r"Base directory for this skill:\s*(\S+)")
_RULE = compile_lazily(
    r"\b(?:must|never|always|do\s+not|don'?t|required|important|only|avoid|ensure)\b",
    re.IGNORECASE,
)


_DIRECTING = compile_lazily(
    r"^(?:never|always|do\s+not|don'?t|must|only|avoid|ensure)\b|\bhow to apply:",
    re.IGNORECASE,
)
"""A rule line that directs, not one that describes with a rule word in it (`... stays acyclic
... never a leaf`)."""


def instruction_rules(
    path: str, text: str, *, pointed: bool = False
) -> tuple[str, list[str]] | None:
    """The name and binding lines (must, never, always, do not...) of an instruction file a tool
    read (`RULE_FILES`: `SKILL.md`, `AGENTS.md`, `CLAUDE.md`, `MEMORY.md`, ...), or with `pointed`
    the lines that direct (`_directs`) of any document the user pointed the agent to (a status
    page or a report says `only` and `must` in passing): a skill by its name (front matter, else
    its folder), another file by its file name.
    """
    parts = path.replace("\\", "/").rstrip("/").split("/")
    base = parts[-1].lower()
    if base not in RULE_FILES:
        if not pointed:
            return None
        directing = [rule for rule in _rules(text, directing_first=True) if _directs(rule)]
        return parts[-1], list(map(_readable, directing))
    if base == "skill.md":
        named = _SKILL_NAME.search(text[:2000])
        name = named.group(1).strip() if named else (parts[-2] if len(parts) > 1 else "skill")
        return f"Skill {name}", _skill_lines(text)
    return parts[-1], list(map(_readable, _rules(text, directing_first=True)))


_RULE_LABEL = compile_lazily(r"^(?:[\w'-]+ ){0,3}rules?\b[^:\n]{0,20}:\s", re.IGNORECASE)
"""A line's label that names it a rule (`The Golden Rule: ...`, `Rule 3: ...`)."""


_NOTE_LABEL = compile_lazily(r"^(?:note|important|warning|caution|nb)\s*:\s*", re.IGNORECASE)
_BINDS = compile_lazily(r"\b(?:must|never|always|do\s+not|don'?t)\b", re.IGNORECASE)


def _directs(rule: str) -> bool:
    """Whether a rule line directs (`_DIRECTING`: `Never ...`, `Do not ...`; labelled a rule:
    `_RULE_LABEL`; or a note that binds: `Note: This must also be applied on the server`),
    after its list mark or number."""
    item = LIST_ITEM.match(rule)
    line = item.group(1) if item else rule
    note = _NOTE_LABEL.match(line)
    if note and _BINDS.search(line, note.end()):
        return True
    return _DIRECTING.match(line) is not None or _RULE_LABEL.match(line) is not None


def template_rules(template: str) -> list[str]:
    """The binding lines of a command's template (`user_text.command_template`), those that
    direct first, at most `SKILL_RULES`: as a skill's, the rules of the work it runs."""
    return list(map(_readable, _rules(template, directing_first=True)))


def skill_rules(text: str) -> tuple[str, list[str]] | None:
    """A skill body's name and its binding lines, or None when `text` is no skill body."""
    pi = pi_skill(text)
    if pi:
        return pi[0], _skill_lines(pi[2])
    base = _SKILL_DIR.search(text[:400])
    if not base and "<skill>" not in text[:200]:
        return None
    named = _SKILL_NAME.search(text)
    name = (
        named.group(1).strip()
        if named
        else base.group(1).replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
        if (base)
        else "skill"
    )
    return name, _skill_lines(text)


_RULES_HEADING = compile_lazily(
    r"^#{1,6}\s+.*\b(?:important|notes?|rules?|requirements?|constraints?|guidelines?|"
    r"do not|don'?t|never|must)\b",
    re.IGNORECASE,
)
_ANY_HEADING = compile_lazily(r"^#{1,6}\s")


_TITLE = compile_lazily(r"^#\s+\S")
_STEP_HEADING = compile_lazily(r"^#{2,4}\s+((?:phase|step|stage)\s*\d+\b.*)$", re.IGNORECASE)
SKILL_STEPS = 8
"""A skill's workflow steps named, at most."""


def _skill_task(text: str) -> list[str]:
    """What a skill is for and the steps of its workflow, which are the work it asks for: the
    first paragraph under its title (the first `# ` heading), and one line that names its step
    headings (`Phase 1 — ...`, `Step 2: ...`, at most `SKILL_STEPS`) in order, each line at most
    240 characters; code left out."""
    found: list[str] = []
    steps: list[str] = []
    fenced = False
    titled = False
    lead: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        heading = _ANY_HEADING.match(line)
        if (heading or not line) and titled and lead and not found:
            found.append(clip(" ".join(lead).replace("**", ""), 240))
        if heading:
            lead = []
            titled = titled or bool(_TITLE.match(line))
            step = _STEP_HEADING.match(line)
            if step and len(steps) < SKILL_STEPS:
                steps.append(step.group(1).replace("**", "").strip())
        elif titled and not found and line:
            lead.append(line)
        elif not line:
            lead = []
    if steps:
        found.append(clip("Workflow: " + "; ".join(steps), 240))
    return found


def _skill_lines(text: str) -> list[str]:
    """A skill's task (`_skill_task`, else its front matter's description), then its rules
    (`_rules`), then the names it gives (`_skill_names`), each said once; read from its body
    (`_body`), each line of it mended first (`_readable`: before a long line is cut, which
    would leave half a character's bytes)."""
    if not text.isascii():
        text = "\n".join(map(_readable, text.split("\n")))
    body, description = _body(text)
    names = _skill_names(body)
    named = [f"Names: {', '.join(names)}"] if names else []
    task = _skill_task(body) or ([clip(description, 240)] if description else [])
    return list(dict.fromkeys(map(_readable, [*task, *_rules(body), *named])))


def _readable(line: str) -> str:
    """`line` with UTF-8 text that was decoded as Windows-1252 or -1251 (a UTF-8 file read by
    PowerShell's `Get-Content`: `â€”` or `вЂ”` for `—`) decoded again, when the whole line goes
    back to its bytes and reads as UTF-8; else as it is."""
    if line.isascii():
        return line
    for codec in ("cp1252", "cp1251"):
        try:
            return line.encode(codec).decode("utf-8")
        except UnicodeError:
            continue
    return line


_FRONT_KEY = compile_lazily(r"^[\w-]+:\s")
_DESCRIPTION = compile_lazily(r"^description:\s*(\S.*)$")
_SETUP_HEADING = compile_lazily(r"^(#{1,6})\s+.*\b(?:preamble|telemetry)\b", re.IGNORECASE)


def _body(text: str) -> tuple[str, str]:
    """An instruction text without what binds nothing once it has run: its front matter (the
    `---` block of `name:`, `description:`... before its first heading) and the sections under
    a preamble or telemetry heading (`## Preamble (run first)`: set-up steps and the one-time
    questions they ask, down to the next heading of the same level or higher); with the front
    matter's description."""
    lines = text.splitlines()
    kept: list[str] = []
    description = ""
    front = fenced = headed = False
    skipping = 0  # the level of the set-up heading whose section is skipped, or 0
    for position, raw in enumerate(lines):
        line = raw.strip()
        fenced = fenced != line.startswith("```")
        if front:
            front = line != "---"
            found = _DESCRIPTION.match(line)
            description = found.group(1).strip() if found else description
            continue
        if line == "---" and not headed:
            following = next((n.strip() for n in lines[position + 1 :] if n.strip()), "")
            if _FRONT_KEY.match(following):
                front = True
                continue
        if _ANY_HEADING.match(line) and not fenced:
            headed = True
            level = len(line) - len(line.lstrip("#"))
            if skipping and level <= skipping:
                skipping = 0
            setup = _SETUP_HEADING.match(line)
            if setup and not skipping:
                skipping = len(setup.group(1))
        if not skipping:
            kept.append(raw)
    return "\n".join(kept), description


_SKILL_URL = compile_lazily(r"\bhttps?://[^\s<>()\[\]{}`'\"|\\*]+")
_TICKED = compile_lazily(r"`([^`\s<>]+)`")
_FILE_NAME = compile_lazily(r"^(?:~|\.{1,2})?/?[\w.-]+(?:/[\w.-]+)*/?$")
_ZONE = compile_lazily(
    r"\b(?:Africa|America|Antarctica|Asia|Atlantic|Australia|Europe|Indian|Pacific)"
    r"/[A-Z][A-Za-z_]+(?:/[A-Z][A-Za-z_]+)?\b"
)
SKILL_NAMES = 16
"""The names a skill gives, at most."""


def _skill_names(text: str) -> list[str]:
    """The names a skill's prose gives the agent to use, outside code: its URLs first, then IANA
    time zones (`Asia/Tokyo`), then the file and folder names it sets in backticks (a name
    with a `.` or `/` in it, not a bare extension, no placeholder), in order, each once, at
    most `SKILL_NAMES`. They are what the agent must get exactly right (where to send the
    user, which file to read or write) and what a line cut short loses first."""
    urls: list[str] = []
    zones: list[str] = []
    files: list[str] = []
    fenced = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced or not line:
            continue
        urls.extend(url.rstrip(".,;:!?_") for url in _SKILL_URL.findall(line))
        zones.extend(_ZONE.findall(line))
        for name in _TICKED.findall(line):
            bare = name.lstrip("./~")
            if _FILE_NAME.match(name) and len(bare) > 2 and ("." in bare or "/" in bare):
                files.append(name)
    return list(dict.fromkeys([*urls, *zones, *_most_specific(files)]))[:SKILL_NAMES]


def _most_specific(names: Sequence[str]) -> list[str]:
    """`names` but for one that another names more fully: `workflow-deep.md` beside
    `references/workflow-deep.md`, `search/projects` beside `/search/projects`."""
    keys = [name.lstrip("/") for name in names]
    return [
        name
        for name, key in zip(names, keys, strict=True)
        if not any(
            other.endswith("/" + key) or (other == key and len(full) > len(name))
            for full, other in zip(names, keys, strict=True)
            if full != name
        )
    ]


def _rules(text: str, *, directing_first: bool = False) -> list[str]:
    """The binding lines of an instruction text: every list item under a heading of rules
    (Important, Notes, Rules, Requirements...), and elsewhere the lines and table rows with a
    rule word and the headings that direct (`### Never kill -9 ...`); other headings, table
    headers and code left out; the first `SKILL_RULES`, or with `directing_first` (a project's
    file, such as a MEMORY.md whose notes describe the code with rule words in them), those that
    direct (`_DIRECTING`) before the others."""
    rules: list[str] = []
    directing: set[str] = set()
    fenced = False
    in_rules = False
    table = False  # the line before was a table row
    for raw in unnumbered(text).splitlines():
        line = raw.strip()
        was_table, table = table, line.startswith("|")
        row = table
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced or not line:
            continue
        if _ANY_HEADING.match(line):
            in_rules = bool(_RULES_HEADING.match(line))
            said = line.lstrip("#").strip().replace("**", "")
            if not _DIRECTING.match(said):  # a heading that is a rule (`### Never kill -9 ...`)
                continue
            line = said
        if row:
            cells = [c.strip().strip("*").strip() for c in line.strip("|").split("|")]
            if not was_table or all(set(c) <= set("-: ") for c in cells):
                continue  # a table's header, or the line under it
            line = " — ".join(c for c in cells if c)
        elif not (in_rules and LIST_ITEM.match(raw)) and not _RULE.search(line):
            continue
        if not _RULE.search(line) and not in_rules:
            continue
        whole = line.lstrip("-*•> ").replace("**", "")
        rule = clip(whole, 240)
        if len(rule) > 20 and rule not in rules:
            rules.append(rule)
            if _DIRECTING.search(whole) and not whole.endswith(":"):
                directing.add(rule)
        if len(rules) >= SKILL_RULES and not directing_first:
            break
    if len(rules) <= SKILL_RULES or not directing_first:
        return rules[:SKILL_RULES]
    # more than fit: the lines that direct first (`Never ...`, a memory's `How to apply:`),
    # then the others, each kept in the file's order
    chosen = set(sorted(rules, key=lambda rule: rule not in directing)[:SKILL_RULES])
    return [rule for rule in rules if rule in chosen]
