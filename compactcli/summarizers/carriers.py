"""Where real agents record what matters, read from the structure they record it in.

Agents seldom say "we decided": they record decisions, rules and progress in places of their own.
Each public function here reads one such carrier and returns short, verbatim lines: the user's
answers and comments inside tool results (`user_answers`), what an edit changed and the names it
defines (`edit_notes`, `created_names`; `changes_text` joins a file's newest notes), and an
end-of-turn report (`report`). Plans are read in `compactcli.summarizers.plans`, the
binding lines of skills and instruction files in `compactcli.summarizers.rules`. Everything here
is a pure function of its arguments; nothing reads cue words from prose.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import orjson

from compactcli.lazy_pattern import compile_lazily
from compactcli.summarizers.plans import plan_steps, proposed_plans
from compactcli.summarizers.rules import LIST_ITEM
from compactcli.summarizers.sentences import DECISION_CHARS, rule_sentences
from compactcli.summarizers.spans import code_span
from compactcli.tools import base_name
from compactcli.trim import clip, head_tail, one_line

ANSWER_CHARS = 400
ANSWERED = "Answered "
SENT_BACK = "Said when sending back a call: "
ANSWER_PREFIXES = (ANSWERED, SENT_BACK)
"""How the lines of `user_answers` start."""
CHANGE_CHARS = 90  # one side of an `old -> new` change
REPORT_CHARS = 3000

# ---------------------------------------------------------------------------------------------
# The user's words inside tool results

_ANSWERED = compile_lazily(
    r"(?:User has answered your questions|Your questions have been answered)\s*:\s*(.*?)"
    r"(?:\.\s*You can now continue.*)?\Z",
    re.DOTALL,
)
_PAIR = compile_lazily(r'"((?:[^"\\]|\\.)+)"\s*=\s*"((?:[^"\\]|\\.)*)"')
_SAID = (
    "the user said",
    "the user provided the following reason for the rejection",
    "user feedback",
    "the user's feedback",
)
_USER_SAID = compile_lazily(
    rf"(?:{'|'.join(map(re.escape, _SAID))})\s*:\s*\n?(.+)", re.IGNORECASE | re.DOTALL
)
_FOLD_CHARS = "\u0130\u0131\u017f\u212a"
_FOLD = str.maketrans(_FOLD_CHARS, "iisk")
"""The characters besides ASCII letters that a case-insensitive expression takes for an ASCII
letter (İ, ı, ſ and the Kelvin sign): with these replaced, a lowercase text holds every phrase
such an expression can find."""
_BOILERPLATE_SAID = (
    "The user wants to clarify these questions.",
    "STOP what you are doing",
)
_QUESTION_TOOLS = frozenset({"askuserquestion", "request_user_input", "ask_user", "askuser"})


def _questions(arguments: Any) -> dict[str, str]:
    """A question tool's questions by id (Codex) and by their own text (Claude Code)."""
    found: dict[str, str] = {}
    items = arguments.get("questions") if isinstance(arguments, Mapping) else None
    if isinstance(items, list):
        for item in items:
            if isinstance(item, Mapping) and isinstance(item.get("question"), str):
                question = item["question"]
                found[question] = question
                if isinstance(item.get("id"), str):
                    found[item["id"]] = question
    return found


def _json_answers(result: str, questions: Mapping[str, str]) -> list[str]:
    """Answers of a Codex `request_user_input` result: `{"answers": {id: {"answers": [...]}}}`."""
    try:
        data = orjson.loads(result)
    except orjson.JSONDecodeError:
        return []
    answers = data.get("answers") if isinstance(data, Mapping) else None
    if not isinstance(answers, Mapping):
        return []
    lines: list[str] = []
    for key, value in answers.items():
        chosen = value.get("answers") if isinstance(value, Mapping) else value
        if isinstance(chosen, str):
            chosen = [chosen]
        if not isinstance(chosen, list):
            continue
        text = "; ".join(str(c) for c in chosen if isinstance(c, str) and c.strip())
        if text:
            lines.append(_answer_line(questions.get(str(key), str(key)), text))
    return lines


def _answer_line(question: str, answer: str) -> str:
    return f'{ANSWERED}"{clip(question, ANSWER_CHARS // 2)}": {clip(answer, ANSWER_CHARS)}'


def user_answers(name: str | None, arguments: Any, result: str) -> list[str]:
    """The user's own words in the result of a call: the answers to a question tool (Claude Code
    `AskUserQuestion`, Codex `request_user_input`), and the comment a user typed when rejecting
    or sending back a call or a plan ("the user said: ..."). These are rules and choices.
    """
    base = base_name(name)
    text = result.strip()
    if not text:
        return []
    lines: list[str] = []
    if (
        base in _QUESTION_TOOLS
        or "questions have been answered" in text[:80]
        or ("User has answered your questions" in text[:80])
    ):
        match = _ANSWERED.search(text)
        if match:
            for question, answer in _PAIR.findall(match.group(1)):
                lines.append(_answer_line(question.replace('\\"', '"'), answer.replace('\\"', '"')))
        elif text.startswith("{"):
            lines.extend(_json_answers(text, _questions(arguments)))
    rejected = text.startswith("The user doesn't want to proceed")  # read by `facts.outcome`
    said = None
    if not rejected:
        low = text.lower()
        # a plain search first: the expression, case-insensitive, is slow on a long output
        if "user" in low:
            folded = low
            if not text.isascii() and any(c in text for c in _FOLD_CHARS):
                folded = text.translate(_FOLD).lower()
            if any(phrase in folded for phrase in _SAID):
                said = _USER_SAID.search(text)
    if said:
        comment = said.group(1).strip()
        comment = comment.split("\n\nNote:", 1)[0].strip()
        if comment and not comment.startswith(_BOILERPLATE_SAID):
            lines.append(f"{SENT_BACK}{clip(comment, ANSWER_CHARS * 2)}")
    return lines


# ---------------------------------------------------------------------------------------------
# Edits: what changed in each file, and the names they define

_EDIT_TOOLS = frozenset({"edit", "multiedit", "str_replace_editor", "str_replace", "edit_file"})
_WRITE_TOOLS = frozenset({"write", "write_file", "create_file", "create"})
_PATCH_FILE = compile_lazily(r"^\*\*\* (Add|Update|Delete) File: (.+)$")


def _path(arguments: Mapping[str, Any]) -> str | None:
    for key in ("file_path", "path", "notebook_path", "filepath", "target_file"):
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


CHANGES_PER_EDIT = 2


INSERTED_LINES = 4
"""An insertion of at most this many lines is noted (`added ...`); a longer one is new code whose
names the identifiers carry."""
_COMMENT = compile_lazily(r"^(?://|#(?![!\[{])|/\*|\*(?!\*)|--|;;)\s*\S")
_SIGNATURE = compile_lazily(
    r"^(?:export\s+)?(?:default\s+)?(?:(?:public|private|protected|internal|static|async|"
    r"override|abstract|final|pub(?:\([^)]*\))?)\s+)*"
    r"(?:(?:def|fn|func|function|class|interface|struct|impl|trait|enum)\s+)?"
    r"([A-Za-z_][A-Za-z0-9_]{2,})\s*(?:<[^>]*>)?\s*\([^=]*\)[^=(]*[{:]$"
)
_NOT_SIGNATURES = frozenset({"if", "for", "while", "switch", "catch", "with", "return", "elif"})


def _enclosing(lines: Sequence[str], before: int) -> str | None:
    """The name of the last function, method or class whose signature line is among `lines`
    before `before`: where in the file an edit's change is."""
    for line in reversed(lines[:before]):
        found = _SIGNATURE.match(line) or _DEFINITION.match(line)
        if found and found.group(1) not in _NOT_SIGNATURES and found.group(1) not in _NOT_NAMES:
            return found.group(1)
    return None


def _change(old: str, new: str) -> str | None:
    """What an edit changed, in at most `CHANGES_PER_EDIT` short parts joined by `; `: `old ->
    new` for lines it replaced one for one, `added ...` for a few lines it inserted, changed
    comments first (they say why); led by `in NAME:` when the edit's text shows the signature of
    the function, method or class the change is in. None when no line is short enough to show.
    """
    old_lines = [line.strip() for line in old.strip().splitlines() if line.strip()]
    new_lines = [line.strip() for line in new.strip().splitlines() if line.strip()]
    found: list[tuple[str, str | None]] = []
    first: int | None = None
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        olds, news = old_lines[i1:i2], new_lines[j1:j2]
        if tag == "insert" and len(news) <= INSERTED_LINES:
            first = i1 if first is None else first
            found.extend((line, None) for line in news)
            continue
        if tag != "replace":
            continue
        first = i1 if first is None else first
        if len(olds) == len(news) and len(olds) <= 2:
            found.extend(zip(olds, news, strict=True))
            continue
        # lines rewritten among others: each with the new line most like it, a comment with
        # the first new comment
        comments = [n for n in news if _COMMENT.match(n)]
        for o in olds:
            like = difflib.get_close_matches(o, news, n=1, cutoff=0.75)
            if not like and _COMMENT.match(o) and comments:
                like = [comments.pop(0)]
            if like and like[0] != o:
                found.append((o, like[0]))
    shown = [
        (o, n) for o, n in found if len(o) <= CHANGE_CHARS and (n is None or len(n) <= CHANGE_CHARS)
    ]
    shown.sort(key=lambda pair: not _COMMENT.match(pair[1] if pair[1] is not None else pair[0]))
    parts: list[str] = []
    added: list[str] = []
    for o, n in shown[:CHANGES_PER_EDIT]:
        if n is None:
            added.append(code_span(o))
        else:
            parts.append(f"{code_span(o)} -> {code_span(n)}")
    if added:
        parts.append("added " + ", ".join(added))
    if not parts:
        return None
    where = _enclosing(old_lines, first) if first is not None else None
    return (f"in `{where}`: " if where else "") + "; ".join(parts)


def _patch_text(arguments: Any) -> str | None:
    if isinstance(arguments, str):
        return arguments if "*** Begin Patch" in arguments else None
    if isinstance(arguments, Mapping):
        for key in ("input", "patch", "command", "cmd"):
            value = arguments.get(key)
            if isinstance(value, list):
                value = "\n".join(v for v in value if isinstance(v, str))
            if isinstance(value, str) and "*** Begin Patch" in value:
                return value
    return None


def _patch_notes(patch: str) -> Iterator[tuple[str, str]]:
    path: str | None = None
    removed: list[str] = []
    added: list[str] = []

    def flush() -> Iterator[tuple[str, str]]:
        if path and removed and added:
            note = _change("\n".join(removed), "\n".join(added))
            if note:
                yield path, note
        removed.clear()
        added.clear()

    for line in patch.splitlines():
        header = _PATCH_FILE.match(line)
        if header:
            yield from flush()
            action, path = header.group(1), header.group(2).strip()
            if action == "Add":
                yield path, "created"
            elif action == "Delete":
                yield path, "deleted"
            continue
        if line.startswith("@@") or line.startswith("*** "):
            yield from flush()
        elif line.startswith("-"):
            if added:
                yield from flush()
            removed.append(line[1:])
        elif line.startswith("+"):
            added.append(line[1:])
        else:
            yield from flush()
    yield from flush()


def changes_text(notes: Sequence[str], limit: int, most: int) -> str:
    """What the edits of one file changed, from its notes (oldest first), in `limit` characters:
    its newest `most` notes whole when they fit; else each without the old sides of its `old` ->
    `new` changes (the new side is what the file holds now), newest first while they fit, the
    next one cut in the room left (`head_tail`, when there is `_NOTE_ROOM`); and how many more
    edits there were."""
    recent = list(notes[-most:])
    more = len(notes) - len(recent)
    text = "; ".join(recent) + (f"; {more} more edits" if more else "")
    if len(text) <= limit:
        return text
    shown: list[str] = []
    for note in reversed([_OLD_SIDE.sub("", note) for note in recent]):
        room = limit - len("; ".join(shown)) - 2 - len(f"; {len(notes)} more edits")
        if len(note) > room:
            if room >= _NOTE_ROOM or not shown:
                shown.insert(0, head_tail(note, max(room, _NOTE_ROOM)))
            break
        shown.insert(0, note)
    more = len(notes) - len(shown)
    return head_tail("; ".join(shown) + (f"; {more} more edits" if more else ""), limit)


_NOTE_ROOM = 60
"""The least room in which an older edit's note is shown cut rather than left out."""
_OLD_SIDE = compile_lazily(r"(?<!`)(`+)(?!`)(?:[^`]|(?!\1(?!`))`+(?!`))*?\1(?!`) -> (?=`)")
"""The old side of an `old` -> `new` change and its arrow (each side a `code_span`)."""


def edit_notes(name: str | None, arguments: Any) -> list[tuple[str, str]]:
    """(path, note) pairs for what one call changed: `created`, `deleted`, or a short `old -> new`
    when one line became another (Claude Code `Edit` / `MultiEdit` / `Write`, pi `edit` /
    `write`, `apply_patch` hunks).
    """
    patch = _patch_text(arguments)
    if patch is not None:
        return list(dict.fromkeys(_patch_notes(patch)))
    if not isinstance(arguments, Mapping):
        return []
    base = base_name(name)
    path = _path(arguments)
    if path is None:
        return []
    if base in _WRITE_TOOLS:
        return [(path, "written")]
    if base not in _EDIT_TOOLS:
        return []
    edits: list[Any] = [arguments]
    if isinstance(arguments.get("edits"), list):
        edits = list(arguments["edits"])
    notes: list[tuple[str, str]] = []
    for edit in edits:
        if not isinstance(edit, Mapping):
            continue
        old = edit.get("old_string", edit.get("oldText", edit.get("old_str")))
        new = edit.get("new_string", edit.get("newText", edit.get("new_str")))
        if isinstance(old, str) and isinstance(new, str):
            note = _change(old, new)
            if note:
                notes.append((path, note))
        if arguments.get("command") == "create":
            notes.append((path, "written"))
    return notes


_DEFINITION = compile_lazily(
    r"^\s*(?:export\s+)?(?:default\s+)?(?:public\s+|private\s+|protected\s+)?"
    r"(?:abstract\s+|final\s+|static\s+|async\s+)*"
    r"(?:class|interface|enum|record|struct|trait|type|function|def|fn|func|"
    r"@Component\s*class)\s+([A-Za-z_][A-Za-z0-9_]{2,})|"
    r"^(?:\s*export\s+)?const\s+([A-Za-z_][A-Za-z0-9_]{2,})",  # a module's, not a local
    re.MULTILINE,
)
_NOT_NAMES = frozenset({"self", "this", "default", "async", "const", "let", "var", "main"})


def _written_text(arguments: Any) -> str:
    """The text an edit call writes: its new text, or the added lines of its patch (the `+`
    lines; a patch given as the whole input, as Codex's `apply_patch`, too)."""
    if not isinstance(arguments, Mapping):
        text = arguments if isinstance(arguments, str) else ""
        return _added_lines(text) if "*** Begin Patch" in text else text
    parts: list[str] = []
    for key in ("content", "new_string", "newText", "new_str", "file_text"):
        value = arguments.get(key)
        if isinstance(value, str):
            parts.append(value)
    edits = arguments.get("edits")
    if isinstance(edits, list):
        parts.extend(_written_text(edit) for edit in edits)
    patch = _patch_text(arguments)
    if patch:
        parts.append(_added_lines(patch))
    return "\n".join(parts)


def _added_lines(patch: str) -> str:
    return "\n".join(line[1:] for line in patch.splitlines() if line.startswith("+"))


def created_names(name: str | None, arguments: Any) -> list[str]:
    """The classes, functions, components, types and constants an edit defines, which the rest of
    the session refers to: a `const` only at the start of a line or exported (a module's, not a
    function's local); not a protocol method every class may have (`__init__`, `__repr__`).
    """
    base = base_name(name)
    if base not in _EDIT_TOOLS | _WRITE_TOOLS and _patch_text(arguments) is None:
        return []
    text = _written_text(arguments)
    if "\n" not in text and len(text) < 20:
        return []
    found: list[str] = []
    for match in _DEFINITION.finditer(text):
        word = match.group(1) or match.group(2)
        plain = word.isalpha() and word.islower()  # `result`, `data`: a local, not a name
        if (
            not plain
            and not (word.startswith("__") and word.endswith("__"))
            and word.lower() not in _NOT_NAMES
            and word not in found
            and not word.isupper()
        ):
            found.append(word)
    return found[:20]


_PLAN_FILE = compile_lazily(r"(?:^|[-_.])plan(?:[-_.][^/\\]*)?\.(?:md|txt)$", re.IGNORECASE)
"""A file named as a plan (`plan.md`, `plan.001.md`, `implementation-plan.md`), by its base name."""


def written_plans(
    name: str | None, arguments: Any, written: Sequence[tuple[str, str]] = ()
) -> list[tuple[str, list[str]]]:
    """The plans a call wrote whole to files named as plans (`_PLAN_FILE`): each file's base
    name, lowercase, and its steps (`plans.plan_steps`), from a write tool's content, a patch's
    added file, or the `written` (path, text) of a shell command (`tools.shell_writes`). A plan
    changed in pieces (an edit, a patch that updates it) is not read again."""
    whole = list(written)
    if isinstance(arguments, Mapping) and base_name(name) in _WRITE_TOOLS:
        target, content = _path(arguments), arguments.get("content") or arguments.get("file_text")
        if target and isinstance(content, str):
            whole.append((target, content))
    patch = _patch_text(arguments)
    if patch and "*** Add File:" in patch:
        added: str | None = None  # the file the patch adds, while its lines are read
        lines: list[str] = []
        for line in [*patch.splitlines(), "*** End Patch"]:
            if line.startswith("*** "):
                if added is not None:
                    whole.append((added, "\n".join(lines)))
                found = _PATCH_FILE.match(line)
                added = found.group(2).strip() if found and found.group(1) == "Add" else None
                lines = []
            elif added is not None and line.startswith("+"):
                lines.append(line[1:])
    found_plans: list[tuple[str, list[str]]] = []
    for path, text in whole:
        base = path.replace("\\", "/").rsplit("/", 1)[-1]
        steps = plan_steps(text) if _PLAN_FILE.search(base) else []
        if steps:
            found_plans.append((base.lower(), steps))
    return found_plans


_WRITTEN_DECISION = compile_lazily(
    r"^[ \t]*(?:[-*+][ \t]+)?(?:\*\*)?Decision(?:\*\*)?[ \t]*:(?:\*\*)?[ \t]*(\S.{9,})$",
    re.MULTILINE,
)
_WRITTEN_ANSWER = compile_lazily(
    r"^[ \t]*(?:[-*+][ \t]+)?Q:[ \t]*(\S.{4,}?)[ \t]*(?:→|->)[ \t]*A:[ \t]*(\S.{1,})$", re.MULTILINE
)
"""A question settled and recorded in a file (a spec's `- Q: How are several new mails shown?
→ A: One at a time, queued.`): a decision."""


def written_decisions(name: str | None, arguments: Any, written: Sequence[str] = ()) -> list[str]:
    """The decisions a file the call wrote records, as `Decision: ...` lines (a plan's
    `research.md`, an architecture decision record) or questions it settled (`Q: ... → A:
    ...`, a spec's clarifications), in the text an edit tool wrote or the
    `written` texts of a shell command (`tools.shell_writes`): the agent's choices, set down."""
    base = base_name(name)
    texts = list(written)
    if base in _EDIT_TOOLS | _WRITE_TOOLS or _patch_text(arguments) is not None:
        texts.append(_written_text(arguments))
    found: list[str] = []
    for text in texts:
        for match in _WRITTEN_DECISION.finditer(text):
            line = "Decision: " + clip(match.group(1).strip(), DECISION_CHARS)
            if line not in found:
                found.append(line)
        for match in _WRITTEN_ANSWER.finditer(text):
            line = clip(f"Q: {match.group(1)} → A: {match.group(2).strip()}", DECISION_CHARS)
            if line not in found:
                found.append(line)
    return found


# ---------------------------------------------------------------------------------------------
# End-of-turn reports

_RULE_LINE = compile_lazily(r"^\s*(?:-{3,}|\*{3,}|_{3,}|={3,}|—{2,})\s*$")
"""A markdown horizontal rule (`---`), which separates parts of a message and says nothing."""
_BOLD = compile_lazily(r"(?<![\w/*])\*\*(?=[^\s*/])([^*\n]*?[^\s*/])\*\*(?![\w/*])")
"""Bold text (`**New section** — ...`), not a glob's `**` (`src/**/*.py`)."""
REPORT_MIN_CHARS = 60
_FILE_LINK = compile_lazily(r"\[([^\]\n]{1,300})\]\((?![a-z][a-z0-9+.-]*://(?!/))([^()\s]+)\)")


def unlinked(text: str) -> str:
    """`text` with each markdown link to a local file said by its text alone: Codex writes
    `[app/page.tsx](C:/Users/me/app/app/page.tsx)`, the path twice. A web link is kept."""
    return _FILE_LINK.sub(r"\1", text) if "](" in text else text


"""A last message shorter than this (a greeting, a question back) reports nothing."""


REPLY_MATCH = 200
"""A report and a reply cut short (the facts keep the last reply's head and tail) are the same
message when they share this many first characters."""


def reports_reply(line: str, reply: str) -> bool:
    """Whether report `line` is the report of `reply`, which may have been cut short since."""
    found = report(reply)
    if found is None:
        return False
    size = min(REPLY_MATCH, len(found), len(line))
    return found == line or (size == REPLY_MATCH and found[:size] == line[:size])


def _step_key(step: str) -> str:
    return step.replace("**", "").strip("*_ ").rstrip("…")[:150]


SUBAGENT_TOOLS = frozenset({"task", "agent"})
"""Claude Code's tools that run a sub-agent, whose result is that agent's final message."""
SUBAGENT = "Sub-agent"
"""How a sub-agent's report starts among the reports (`subagent_report`)."""


def subagent_report(name: str | None, arguments: Any, result: str) -> str | None:
    """What a sub-agent reported back (`SUBAGENT_TOOLS`): its final message as one line
    (`report`), after the task it was given (its `description`); None for another tool or a
    short answer."""
    if base_name(name) not in SUBAGENT_TOOLS:
        return None
    found = report(result)
    if found is None:
        return None
    task = arguments.get("description") if isinstance(arguments, Mapping) else None
    return f"{SUBAGENT} ({clip(task, 80) if isinstance(task, str) else 'task'}): {found}"


def subagent_rules(name: str | None, arguments: Any) -> list[str]:
    """The rules an agent passed on to a sub-agent (`SUBAGENT_TOOLS`): the sentences of its
    brief under a heading that names them rules, preferences or conventions (`rule_sentences`:
    "## User preferences: Keep responses concise"), which hold for the session too; not the
    task's own steps, nor what the brief asks of the sub-agent alone ("Do not edit files")."""
    if base_name(name) not in SUBAGENT_TOOLS or not isinstance(arguments, Mapping):
        return []
    brief = arguments.get("prompt")
    if not isinstance(brief, str):
        return []
    asked = _BRIEF_STEPS.search(brief)  # what follows `Please:` is the sub-agent's own work
    brief = brief[: asked.start()] if asked else brief
    return sorted(rule_sentences(brief), key=brief.find)


_BRIEF_STEPS = compile_lazily(
    r"^\s*(?:please|steps|your task|tasks?|instructions|what to do)\b[^:\n]{0,40}:\s*$",
    re.IGNORECASE | re.MULTILINE,
)


def report(text: str) -> str | None:
    """An end-of-turn message (what was done or found) as one line: its prose and list lines
    outside code, markdown markers and rules (`---`) taken off, joined by `; ` (at most
    `REPORT_CHARS`; a long one keeps its head and its end, where agents flag what is open and
    ask); None for a short message.
    A Codex `<proposed_plan>` gives the plan its steps (`proposed_plans`): the report leaves out
    its tags and the steps the plan shows, and keeps the rest of it.
    """
    steps = proposed_plans(text)  # a heading's step holds the sentence under it too
    shown = {_step_key(part) for step in steps for part in (step, *step.split(": ", 1))}
    lines: list[str] = []
    fenced = False
    for raw in unlinked(text).splitlines():
        if raw.strip().startswith("```"):
            fenced = not fenced
            continue
        if fenced or not raw.strip() or raw.strip().startswith("|---") or _RULE_LINE.match(raw):
            continue
        if raw.strip() in ("<proposed_plan>", "</proposed_plan>"):
            continue
        item = LIST_ITEM.match(raw)
        line = item.group(1) if item else raw.strip().lstrip("#").strip()
        line = one_line(_BOLD.sub(r"\1", line).strip("*_ "))
        if shown and _step_key(line) in shown:
            continue
        lines.append(line)
    found = "; ".join(dict.fromkeys(line for line in lines if line))
    if len(found) < REPORT_MIN_CHARS:
        return None
    if len(found) <= REPORT_CHARS:  # else its head and its end: what it flags or asks last
        return found
    head = REPORT_CHARS * 2 // 3
    return found[:head].rstrip() + " […] " + found[len(found) - (REPORT_CHARS - head) :].lstrip()
