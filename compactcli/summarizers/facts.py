"""The facts a summary is built on, extracted from the records themselves.

`Facts` (the record, `fact_record`) is what survives any summary: the goal, every user message
(trimmed), the user's constraints, files read and modified, commands and their outcomes, errors
and whether a later step resolved them, decisions, identifiers, pending asks and open todos.
`extract_facts(messages, previous)` reads them from message views of any format, in order, and
carries on the facts of an earlier compaction, so file lists are cumulative. The extractive
summarizer renders them; the LLM summarizer is given them as ground truth and has what it dropped
appended. Thinking is never read. Within `fact_folds.reading_once()`, summaries of heads that
begin with the same messages read those messages once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from copy import deepcopy
from dataclasses import dataclass, field, replace
from typing import Any

from compactcli.lazy_pattern import compile_lazily
from compactcli.outcomes import (
    SOFT_LINES,
    aborted,
    one_line_answer,
    outcome,
    pasted_errors,
    reads_log,
    refused_call,
)
from compactcli.shell_text import shell_output
from compactcli.summarizers import carriers, fact_folds, plans, tool_calls
from compactcli.summarizers.error_ledger import PLACED_BY_ARGUMENT, ErrorLedger
from compactcli.summarizers.error_ledger import ErrorFact as ErrorFact  # part of `Facts`
from compactcli.summarizers.fact_record import Command as Command
from compactcli.summarizers.fact_record import Facts as Facts
from compactcli.summarizers.goals import goal_of, moved_on, sets_up, settle_commands, states_task
from compactcli.summarizers.identifiers import GIT_COMMIT_LINE, announced, identifiers, newest
from compactcli.summarizers.rules import instruction_rules, skill_rules, template_rules
from compactcli.summarizers.sentences import (
    FENCE,
    SENTENCE_CHARS,
    as_constraint,
    before_pasted_session,
    condense,
    decision_sentences,
    planned_steps,
    rule_sentences,
    rules_title,
    sentences,
    setting_values,
)
from compactcli.summarizers.tool_calls import (
    COMMAND_CHARS,
    command_key,
    command_text,
    commit_message,
    open_todos,
    raw_command,
    todo_items,
)
from compactcli.summarizers.user_shell import USER_SHELL, UserShell, pi_shell, printed
from compactcli.tools import (
    SOFT_ERROR_KINDS,
    SOFT_ERROR_LINES,
    and_chain,
    call_kind,
    given_read,
    local_path,
    main_argument,
    polled_command,
    read_only_command,
    shell_command,
    shell_deletes,
    shell_reads,
    shell_writes,
    still_running,
    touched_files,
)
from compactcli.transcript import Block, Message
from compactcli.trim import head_tail, one_line
from compactcli.user_text import (
    command_template,
    given_files,
    skill_file,
    squeeze,
    typed_block,
    typed_text,
)

# --------------------------------------------------------------------------------------------
# Limits (characters): long enough to keep what matters, short enough to bound the facts.

SPEC_KIT = "Skill Spec Kit command"  # the rules of the Spec Kit command under way
MESSAGE_CHARS = 6000  # a user message kept in the facts (`condense` beyond that)
REPLY_CHARS = 4000  # the assistant's last message kept in the facts
GOAL_CHARS = 600


# --------------------------------------------------------------------------------------------
# User text: what is injected, what is typed

_QUEUED_TAIL = frozenset({"prompt", "bash", "human", "agent", "system", "task-notification"})


def _queued_prompt(block: Block) -> str | None:
    """The prompt of a Claude Code `queued_command` attachment (its string fields joined)."""
    lines = block.text.split("\n")
    while len(lines) > 1 and lines[-1] in _QUEUED_TAIL:
        lines.pop()
    typed, _ = typed_text("\n".join(lines))
    return typed


# --------------------------------------------------------------------------------------------
# Extraction


@dataclass(slots=True)
class _Call:
    name: str
    arguments: Any
    kind: str
    read: tuple[str, ...]
    modified: tuple[str, ...]
    command: str = ""  # `command_text`
    whole: str = ""  # the command a shell call ran (`shell_command`), not cut to a line's room
    notes: tuple[tuple[str, str], ...] = ()  # what an edit changed, per file (`carriers`)
    fresh: tuple[str, ...] = ()  # the files it reads that no call read before


class _Unique:
    """Strings in the order they were first added, each once, empty ones left out: a list
    whose membership test is a lookup (the facts of a long session hold thousands)."""

    __slots__ = ("_items",)

    def __init__(self) -> None:
        self._items: dict[str, None] = {}

    def add(self, item: str) -> None:
        if item and item not in self._items:
            self._items[item] = None

    def discard(self, item: str) -> None:
        self._items.pop(item, None)

    def __contains__(self, item: object) -> bool:
        return item in self._items

    def extend(self, items: Iterable[str]) -> None:
        for item in items:
            self.add(item)

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


@dataclass(slots=True)
class _State:
    user_messages: list[str] = field(default_factory=list)
    constraints: _Unique = field(default_factory=_Unique)
    read: _Unique = field(default_factory=_Unique)
    modified: _Unique = field(default_factory=_Unique)
    commands: dict[str, Command] = field(default_factory=dict)  # by command, in last-run order
    errors: ErrorLedger = field(default_factory=ErrorLedger)  # in the order last seen
    decisions: _Unique = field(default_factory=_Unique)
    todos: dict[str, tuple[str, str]] = field(default_factory=dict)
    todo_seen: bool = False
    answered: bool = False  # the assistant's last act was text (a turn that completed)
    completed_turn: bool = False  # some turn completed in these messages
    since_answer: list[str] = field(default_factory=list)  # user messages not answered yet
    names: dict[str, None] = field(default_factory=dict)  # identifiers, by last mention
    # the user's sentences that gave a setting a value: key -> [(sentence, its values, turn)]
    settings: dict[str, list[tuple[str, frozenset[str], int]]] = field(default_factory=dict)
    turn: int = 0  # the number of the user message read last
    turns: dict[str, int] = field(default_factory=dict)  # a constraint's user message
    # commands still running when their result came (Codex), by what a later call names them
    running: dict[tuple[str, str], _Call] = field(default_factory=dict)
    answers: _Unique = field(default_factory=_Unique)
    changes: dict[tuple[str, str], None] = field(default_factory=dict)
    plan: list[str] = field(default_factory=list)
    reports: _Unique = field(default_factory=_Unique)
    turn_text: str = ""  # the assistant's latest text in the current turn
    erred: bool = False  # a call met an error since the assistant last spoke mid-turn
    attached: set[str] = field(default_factory=set)  # files the user attached (`given_files`)
    plan_files: dict[str, list[str]] = field(default_factory=dict)  # plans written, by file
    mentioned: set[str] = field(default_factory=set)  # documents the user pointed to, to read
    last_reply: str = ""
    shell: str = ""  # a command the user ran (Claude Code `<bash-input>`), until its output
    command_rules: list[str] = field(default_factory=list)  # the latest command template's
    slash: str = ""  # a slash command the user typed, until its template (Claude Code)
    cwd: str | None = None  # the session's working directory: paths under it are shown relative

    def local(self, path: str) -> str:
        return local_path(path, self.cwd)

    def add_user(self, text: str) -> None:
        if self.user_messages and one_line(self.user_messages[-1]) == one_line(text):
            return
        self.plan = plans.approved_by_name(self.plan_files, text) or self.plan
        self.close_turn()
        self.user_messages.append(condense(text, MESSAGE_CHARS))
        self.turn += 1
        self.since_answer.append(text)
        self._read_user_text(text)

    def add_attached(self, text: str) -> None:
        """The text of a file the user attached to their latest message, read by the agent: part
        of that message (a pasted brief), its rules the user's rules."""
        if not self.user_messages:
            return
        self.user_messages[-1] = condense(f"{self.user_messages[-1]}\n\n{text}", MESSAGE_CHARS)
        self._read_user_text(text)

    def _read_user_text(self, text: str) -> None:
        """What text the user wrote gives: its names, its rules and settings, the errors pasted
        into it."""
        self.add_identifiers(text)
        ruled = rule_sentences(text)
        for sentence in sentences(before_pasted_session(text), lists=True):
            constraint = None if ruled and rules_title(sentence) else as_constraint(sentence)
            if constraint is None and sentence in ruled:  # under a rules heading
                constraint = head_tail(one_line(sentence), SENTENCE_CHARS)
            self.add_sentence(sentence, constraint)
        for line in pasted_errors(text):
            self.errors.keep(ErrorFact(text=line, resolved=False, tool=PASTED))

    def add_answer(self, line: str) -> None:
        """The user's words from inside a tool result: a rule or a choice, not a new turn."""
        self.answers.add(line)
        self.add_identifiers(line)

    def add_sentence(self, sentence: str, constraint: str | None) -> None:
        """A user sentence: a constraint when it sets a rule, and also when it gives a setting
        another value than an earlier sentence did (the earlier one becomes a constraint too,
        so that the summary can show it only next to its replacement)."""
        line = constraint or head_tail(one_line(sentence), SENTENCE_CHARS)
        values = setting_values(sentence)
        replaced = [
            (earlier, turn)
            for key, new in values.items()
            for earlier, old, turn in self.settings.get(key, ())
            if new - old and old - new and turn != self.turn  # a message changes no value it sets
        ]
        for earlier, turn in replaced:
            self.add_constraint(earlier, turn)
        if constraint or replaced:
            self.add_constraint(line, self.turn)
        for key, new in values.items():
            self.settings.setdefault(key, []).append((line, new, self.turn))

    def add_constraint(self, line: str, turn: int = 0) -> None:
        """A constraint of user message `turn` (0: an instruction file's or a skill's)."""
        self.constraints.add(line)
        self.turns.setdefault(line, turn)

    def add_earlier(self, previous: Facts) -> None:
        """The constraints, their user messages, and the settings an earlier compaction's user
        messages and constraints gave."""
        self.turn = len(previous.user_messages)
        turns = previous.constraint_turns
        if len(turns) != len(previous.constraints):
            turns = (0,) * len(previous.constraints)
        for constraint, turn in zip(previous.constraints, turns, strict=True):
            self.add_constraint(constraint, turn)
            for key, new in setting_values(constraint).items():
                self.settings.setdefault(key, []).append((constraint, new, turn))
        for number, message in enumerate(previous.user_messages, start=1):
            for sentence in sentences(message, lists=True):
                line = as_constraint(sentence) or head_tail(one_line(sentence), SENTENCE_CHARS)
                for key, new in setting_values(sentence).items():
                    self.settings.setdefault(key, []).append((line, new, number))

    def add_identifiers(self, text: str) -> None:
        for name in identifiers(text):
            self.names.pop(name, None)
            self.names[name] = None

    def close_turn(self) -> None:
        """The assistant's turn ends here (a user message follows, or the messages end)."""
        if self.answered:
            for sentence in decision_sentences(self.turn_text):
                self.decisions.add(sentence)
            self.since_answer = []
            self.completed_turn = True
            found = carriers.report(self.turn_text)
            if found:
                self.reports.add(found)
        self.answered = False

    def add_command(self, command: str, status: str, detail: str = "") -> None:
        """A command's latest run; runs of the same command (`command_key`: another `cd`
        before it, another pipe to `head` after it) are counted as one, shown as the last. A
        test run's count (`tool_calls.passed_tests`) replaces the count an earlier one gave,
        which no longer holds."""
        key = command_key(command)
        earlier = self.commands.pop(key, None)
        runs = earlier.runs + 1 if earlier else 1
        made = Command(command, status, detail, runs)
        if tool_calls.passed_tests(made):
            for other, ran in self.commands.items():
                if tool_calls.passed_tests(ran):
                    self.commands[other] = replace(ran, detail="")
        self.commands[key] = made

    def resolve(self, call: _Call, where: str) -> None:
        """Mark earlier errors resolved by `call`, which succeeded: same command (or one of the
        commands it ran joined by `&&`, each of which succeeded), or same path with a tool of
        the same kind (a successful edit resolves a failed edit or read, and so does a command
        that patched or wrote that file)."""
        key = command_key(call.command) if call.command else ""
        self.errors.resolve(key, where, call.kind, tool=call.name)
        for path in call.modified if call.command else ():  # a patch or a write through the
            self.errors.resolve("", path, "edit")  # shell resolves its file's errors, as an edit
        chain = and_chain(call.command) if "&&" in call.command else []
        for part in chain if len(chain) > 1 else ():  # each the very command that failed
            self.errors.resolve(command_key(part), where, call.kind, exact=True)


IDENTIFIERS = 60
"""How many identifiers the facts keep (the most recently mentioned; `identifiers.newest`)."""
REPORTS = 80
"""How many reports (end of turn, mid-turn, commits) the facts keep (the newest)."""
PRINTED_ERROR = "printed an error"
"""The outcome of a command that did not fail (no error status, no failing exit code) but whose
output carries an error line (`compactcli.outcomes.outcome` with `soft`)."""
PASTED = "pasted by the user"
"""The `tool` of an error the user pasted into a message."""


def _add_error(state: _State, error: ErrorFact) -> None:
    """`error`, after the others: one error per line and place, at its latest."""
    state.errors.put(error)
    state.erred = True


def extract_facts(
    messages: Sequence[Message], previous: Facts | None = None, *, cwd: str | None = None
) -> Facts:
    """The facts of `messages` (in conversation order), carried on from `previous`.

    - User messages: the text a person typed (`compactcli.user_text.typed_block`: injected
      text, a pi extension's messages and compaction summaries are left out, a slash command
      keeps its name and arguments); a queued prompt and the reason a user gave when rejecting
      a tool call count; a shell command the user ran (pi `!`, Claude Code `<bash-input>`) is a
      command, not a message. The goal is the first user message that states a task
      (`goals.goal_of`).
    - Constraints: user sentences that set a rule or a preference, and a user sentence that
      gives a setting another value than an earlier one did, with or without a cue word
      (`_State.add_sentence`). Decisions: assistant text sentences that state a choice. The
      sentence rules are `compactcli.summarizers.sentences`.
    - Files: from tool call arguments (`compactcli.tools.touched_files`) and, for agents that
      read through the shell, `cat` / `sed -n` / `nl` / `head` / `tail` of a path; a skill's
      body (Claude Code's, or Codex's `<skill>`) counts as a read of its `SKILL.md`. A file
      counts as modified (also one a command deletes, noted so) unless its call failed or was
      rejected (the failure is then an error naming the file). With `cwd` (the session's
      working directory), a path under it is given relative to it, as the agent working there
      names it (`tools.local_path`; the earlier facts' paths too): one file has one name.
    - Commands: shell tool calls (also those a Codex code-mode script runs) with the outcome
      their result gives (`compactcli.outcomes.outcome`: `ok`, `failed`, `rejected`), or
      `unknown` without a result. A Codex command still running when its result came (a
      code-mode script's cell, a unified-exec session) takes its outcome from the result of the
      later `wait` or `write_stdin` call that polls it (`_polled`). A command run several times
      is listed once, at its last run, with its last outcome.
    - Errors: the distinctive line of every failed result, with the tool and the path or
      command it came from (not a run the user stopped, nor a call the tool refused to run as
      written: `compactcli.outcomes.refused_call`); `resolved` once a later call on the same
      path or command succeeds (`_State.resolve`). A result the prune stage cleared is failed
      when its placeholder kept an error line (`outcomes.cleared_error`), with that line.
    - Identifiers: the names user and assistant text give (`identifiers.identifiers`), those an
      edit defines (`carriers.created_names`) and a commit `git commit` printed, each once, at
      its last mention; past `IDENTIFIERS`, a name an edit defines goes before a URL or commit
      does (`identifiers.newest`). A `git log` is listed with the newest commit it printed.
    - Pending asks: the user messages after the last assistant text, and questions the user
      asked that got no assistant text before the next user message. Todos: the open items of
      the latest todo list (`compactcli.summarizers.tool_calls.open_todos`).

    With `previous`, the goal stays the earlier one and lists carry over: earlier items first,
    new ones after, duplicates once; earlier errors are marked resolved by later successes;
    earlier pending asks stay pending only while no assistant text follows; the todo list is
    the latest one.
    """
    folds = fact_folds.current()
    fold = fact_folds.resumable(folds, messages, previous, cwd) if folds else None
    if fold is not None:
        state, calls = deepcopy((fold.state, fold.calls))
        _read_messages(messages[len(fold.messages) :], state, calls)
    else:
        state, calls = _started(previous, cwd), {}
        _read_messages(messages, state, calls)
    if folds is not None:  # kept before the calls left without a result are counted
        fact_folds.keep(
            folds, fact_folds.Fold(tuple(messages), previous, cwd, *deepcopy((state, calls)))
        )
    for call in (*calls.values(), *state.running.values()):  # calls left without a result
        _add_paths(state, call, call.modified)
        if call.command:
            state.add_command(call.command, "unknown")
    return _finish(state, previous)


def _started(previous: Facts | None, cwd: str | None) -> _State:
    """The state facts are read into: empty, or carrying on `previous`."""
    state = _State(cwd=cwd)
    if previous is not None:
        state.add_earlier(previous)
        state.read.extend(map(state.local, previous.files_read))
        state.modified.extend(map(state.local, previous.files_modified))
        for command in previous.commands:
            state.commands[command_key(command.command)] = command
        state.errors.update(previous.errors)
        state.decisions.extend(previous.decisions)
        state.names.update(dict.fromkeys(previous.identifiers))
        state.answers.extend(previous.answers)
        state.changes.update(dict.fromkeys((state.local(p), n) for p, n in previous.changes))
        state.plan.extend(previous.plan)
        state.reports.extend(previous.reports)
    return state


def _read_messages(messages: Sequence[Message], state: _State, calls: dict[str, _Call]) -> None:
    for message in messages:
        if message.summary:
            continue
        if message.role == "user":
            _read_user(message, state)
        elif message.role == "assistant":
            _read_assistant(message, state, calls)
        for block in message.blocks:
            if block.kind == "tool_result":
                call = _polled(calls.pop(block.call_id or "", None), state, block.text)
                _read_result(block, call, state)


def _read_user(message: Message, state: _State) -> None:
    for block in message.blocks:
        if block.kind == "text":
            if block.type == "bashExecution":  # pi: a shell command the user ran with `!`
                _user_ran(state, pi_shell(block.text))
                continue
            ran = printed(block.text) if state.shell else None
            if ran is not None:  # Claude Code: what the `<bash-input>` before it printed
                _user_ran(state, replace(ran, command=state.shell), added=True)
            typed, shell = typed_block(block)
            state.shell = shell or ""
            skill = skill_file(block.text)
            if state.slash and block.name == "meta" and not skill:  # the command's template
                _command_rules(state, f"Skill {state.slash}", block.text)
            state.slash = ""
            if skill:
                state.read.add(skill)
                rules = skill_rules(block.text)
                if rules is not None:
                    for rule in rules[1]:
                        state.add_constraint(f"Skill {rules[0]}: {rule}")
            if shell:
                state.add_command(head_tail(one_line(shell), COMMAND_CHARS), "unknown")
            if typed:
                state.add_user(typed)
                template = command_template(block.text)
                if template:
                    _command_rules(state, SPEC_KIT, template)
                slash = _SLASH.match(typed)
                state.slash = slash.group(1) if slash else ""
                attached, mentioned = given_files(typed)
                state.attached.update(attached)
                state.mentioned.update(mentioned)
        elif (
            block.kind == "other" and block.type == "attachment" and block.name == "queued_command"
        ):
            typed = _queued_prompt(block)
            if typed:
                state.add_user(typed)


_SLASH = compile_lazily(r"^(/[\w:.-]+)(?:\s|$)")
"""A slash command the user typed (`/standards`, `/plugin:review 12`): Claude Code sends its
template next, in a record the user did not type."""


def _command_rules(state: _State, name: str, template: str) -> None:
    """The binding lines of a command's template (a Spec Kit command given input, a Claude Code
    slash command's), as the rules of `name`: they hold until the next command's."""
    for rule in state.command_rules:
        state.constraints.discard(rule)
    state.command_rules = [f"{name}: {rule}" for rule in template_rules(template)]
    for rule in state.command_rules:
        state.add_constraint(rule, state.turn)


def _user_ran(state: _State, ran: UserShell, *, added: bool = False) -> None:
    """A shell command the user ran (`added` already, awaiting what came of it): a failed one
    is an error of `USER_SHELL` until the command runs again and succeeds."""
    command = head_tail(one_line(ran.command), COMMAND_CHARS)
    key, outcome = command_key(command), "failed" if ran.failed else "ok"
    if added and key in state.commands:
        state.commands[key] = replace(state.commands[key], outcome=outcome, detail=ran.detail)
    else:
        state.add_command(command, outcome, ran.detail)
    if ran.failed:
        state.errors.put(ErrorFact(ran.detail, resolved=False, tool=USER_SHELL, where=command))
    else:
        state.errors.resolve(key, command, "shell")


def _read_assistant(message: Message, state: _State, calls: dict[str, _Call]) -> None:
    for block in message.blocks:
        if block.kind == "text" and block.text.strip():
            state.answered = True
            state.turn_text = state.last_reply = block.text
            state.add_identifiers(block.text)
            steps = plans.proposed_plans(block.text)
            if steps:
                state.plan = steps
        elif block.kind == "tool_call":
            if state.answered:  # what the assistant said before this call, mid-turn
                _add_statement(state, state.turn_text)
            state.answered = False  # the turn goes on
            name = block.name or ""
            kind = call_kind(name, block.arguments)
            line = shell_command(name, block.arguments, lines=True) if kind == "shell" else None
            touched = touched_files(name, block.arguments, command=line)
            read, written = touched.read, []
            notes = carriers.edit_notes(name, block.arguments) if kind == "edit" else ()
            if line is not None:  # files read, written whole (a heredoc, `Set-Content`), deleted
                read = (*read, *shell_reads(name, block.arguments, command=line))
                written = shell_writes(name, block.arguments, command=line)
                notes = [(path, "written") for path in dict.fromkeys(p for p, _ in written)]
                notes += [
                    (p, "deleted") for p in shell_deletes(name, block.arguments, command=line)
                ]
            if kind in ("edit", "shell"):
                texts = [text for _, text in written]
                for decision in carriers.written_decisions(name, block.arguments, texts):
                    state.decisions.add(decision)
                state.plan_files.update(carriers.written_plans(name, block.arguments, written))
            whole = shell_command(name, block.arguments) if kind == "shell" else ""
            call = _Call(
                name=name,
                arguments=block.arguments,
                kind=kind,
                read=tuple(map(state.local, read)),
                modified=tuple(map(state.local, touched.modified)),
                command=command_text(whole) if kind == "shell" else "",
                whole=whole,
                notes=tuple((state.local(path), note) for path, note in notes),
            )
            if kind == "edit":
                for created in carriers.created_names(name, block.arguments):
                    state.names.pop(created, None)
                    state.names[created] = None
            call.fresh = tuple(path for path in call.read if path not in state.read)
            for path in call.read:
                state.read.add(path)
            if kind == "todo" and not block.call_id:  # else once its result says it worked
                state.todo_seen |= todo_items(name, block.arguments, state.todos)
            if block.call_id:
                calls[block.call_id] = call
            else:
                _add_paths(state, call, call.modified)


STATEMENT_CHARS = 120
"""An assistant text said mid-turn (before a call) this long is a decision whole: agents state
their plan and findings there ("Now I'll restructure the roadmap: X, then Y")."""


WHILE_WORKING = "While working: "
"""How a mid-turn statement starts among the reports (`Facts.reports`)."""


REACTION_WORDS = 5
"""A mid-turn assistant text this many words long, said after a call met an error, is the
agent's answer to it ("Several URLs failed. Let me fetch working alternatives and process the
failed ones via Tavily."): kept whole however short."""


_WIDE = compile_lazily(r"[\u1100-\u11ff\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")
"""A Chinese, Japanese or Korean character: it says about what two Latin letters say."""


def _width(text: str) -> int:
    """`text`'s length, a wide character (`_WIDE`) counted twice: "핵심 클래스는 순수 QTM 수신,
    브리지는 별도 예제로 조합" says as much as a sentence twice its length in English."""
    return len(text) + (len(_WIDE.findall(text)) if not text.isascii() else 0)


def _add_statement(state: _State, text: str) -> None:
    """A mid-turn assistant text: its decision sentences and the steps of a plan it announces
    (`planned_steps`) among the decisions, and the rest among the reports, in order, when it is
    long or answers an error met since the last one (`REACTION_WORDS`)."""
    line = one_line(FENCE.sub(" ", carriers.unlinked(text)))
    reaction, state.erred = state.erred, False
    decided = list(dict.fromkeys([*decision_sentences(text), *planned_steps(text)]))
    for sentence in decided:
        state.decisions.add(sentence)
    if _width(line) >= STATEMENT_CHARS or (reaction and len(line.split()) >= REACTION_WORDS):
        for sentence in decided:  # said once, among the decisions
            line = line.replace(one_line(sentence), "…")
        rest = " ".join(line.replace("…", " ").split())
        if not decided or len(rest) >= STATEMENT_CHARS // 2:  # more than the decisions
            state.reports.add(WHILE_WORKING + head_tail(line, 2 * SENTENCE_CHARS))


def _add_paths(state: _State, call: _Call, paths: Iterable[str]) -> None:
    for path in paths:
        state.modified.add(path)


def _polled(call: _Call | None, state: _State, text: str) -> _Call | None:
    """The command that `call` polls for the rest of its output (Codex `wait` on a script's
    cell, `write_stdin` to a process's session), or `call` itself; None when the poll itself
    failed (its `text`, "write_stdin failed: stdin is closed ..."): nothing of the command."""
    if call is None:
        return None
    return polled_command(state.running, call.name, call.arguments, text, call)


def _read_result(block: Block, call: _Call | None, state: _State) -> None:
    if call is None:
        return
    if call.kind == "todo" and not block.is_error:  # a todo call the tool refused changed none
        state.todo_seen |= todo_items(call.name, call.arguments, state.todos)
    shell = call.kind == "shell"
    running = still_running(block.text) if shell else None
    if running is not None:  # its outcome comes with a later call's result, if any
        state.running[running] = call
        return
    for line in carriers.user_answers(call.name, call.arguments, block.text):
        state.add_answer(line)
    for path in call.read:
        found = instruction_rules(path, block.text) if not block.is_error else None
        if found is not None:
            for rule in found[1]:
                state.add_constraint(f"{found[0]}: {rule}")
    if (state.attached or state.mentioned) and call.read and not block.is_error:
        if given_read(state.attached, call.read, state.cwd):  # each once: read again, the same
            state.add_attached(block.text)
        if given_read(state.mentioned, call.read, state.cwd):  # its rules are the user's
            pointed = instruction_rules(call.read[0], block.text, pointed=True)
            name, rules = pointed or ("", [])
            for rule in rules:
                state.add_constraint(f"{name}: {rule}", state.turn)
    soft = call.kind in SOFT_ERROR_KINDS
    lines = SOFT_ERROR_LINES.get(call.kind, SOFT_LINES)
    result = outcome(
        block, shell, call.whole, soft=soft, log=reads_log(call.read), soft_lines=lines
    )
    if shell:  # what it printed of what the session runs on: a server's address, the branch
        state.add_identifiers(announced(block.text))
    where = call.command or (call.modified or call.read or ("",))[0]
    if shell and call.modified:  # a patch or a file written through the shell: at its file
        where = call.modified[0]
    if not where and call.kind in PLACED_BY_ARGUMENT:  # `resolve_citation` of a URL
        where = main_argument(call.name, call.arguments)
        where = "" if where.startswith(("{", "[")) else where  # no one argument says it
    if result.status == "rejected":
        if call.command:
            state.add_command(call.command, "rejected")
        if result.reason:
            state.add_user(squeeze(result.reason))
        return
    if result.status == "ok":
        steps = plans.accepted_plan(call.name, call.arguments, block.text)
        if steps:
            state.plan = steps
        _add_paths(state, call, call.modified)
        state.changes.update(dict.fromkeys(call.notes))
        if result.error:  # it did not fail, but printed an error
            if call.command:
                state.add_command(call.command, PRINTED_ERROR, result.error)
            error = ErrorFact(text=result.error, resolved=False, tool=call.name, where=where)
            _add_error(state, error)
            return
        state.resolve(call, where)
        delegated = carriers.subagent_report(call.name, call.arguments, block.text)
        if delegated:  # what a sub-agent found or did: a report of the work (what it found
            state.reports.add(delegated)  # is no choice, whatever "instead of" it says)
        for rule in carriers.subagent_rules(call.name, call.arguments):  # the session's rules
            state.add_constraint(head_tail(one_line(rule), SENTENCE_CHARS), state.turn)
        message = commit_message(raw_command(call.arguments)) if "commit" in call.command else None
        if message:  # a milestone: with the agent's reports, not the command log
            made = GIT_COMMIT_LINE.search(block.text, 0, 2000)  # else a `git log` after it
            sha = made.group(2) if made else tool_calls.head_commit(call.command, block.text)[:7]
            state.reports.add(f"Committed{f' {sha}' if sha else ''}: {message}")
        elif call.command:  # a command that only looked is worth a line for its answer alone
            answer = one_line_answer(block.text) or tool_calls.head_commit(call.command, block.text)
            if not answer and not read_only_command(call.command):  # a test run: its count
                answer = tool_calls.tests_counted(shell_output(block.text))
            if answer or not read_only_command(call.command):
                state.add_command(call.command, "ok", answer)
        if call.command and "commit" in call.command:  # `git commit` names the commit it made
            for match in GIT_COMMIT_LINE.finditer(block.text, 0, 2000):
                state.add_identifiers(match.group(0))
        return
    if call.command:
        state.add_command(call.command, "failed", result.error)
    made = (
        GIT_COMMIT_LINE.search(shell_output(block.text), 0, 2000)
        if "commit" in call.command
        else None
    )
    message = commit_message(raw_command(call.arguments)) if made else None
    if made and message:  # made all the same: what failed came after it (a hook, the push)
        state.add_identifiers(made.group(0))
        state.reports.add(f"Committed {made.group(2)}: {message}")
    for path in call.fresh if call.kind in ("read", "shell") else ():  # it could not read it
        if not shell or path in result.error or path.rsplit("/", 1)[-1] in result.error:
            state.read.discard(path)
    if aborted(result.error) or refused_call(result.error):  # stopped by the user, or a
        return  # call the tool refused to run as written: no error of the work
    error = ErrorFact(text=result.error, resolved=False, tool=call.name, where=where)
    _add_error(state, error)


def _finish(state: _State, previous: Facts | None) -> Facts:
    state.close_turn()
    user_messages = tuple(state.user_messages)
    goal = goal_of(user_messages)
    pending = _Unique()
    if previous is not None:
        user_messages = (*previous.user_messages, *user_messages)
        # the earlier goal stays, unless it states no task (a command's template) and one since does
        goal = previous.goal if states_task(previous.goal) else goal_of(user_messages)
        if not state.completed_turn:
            pending.extend(previous.pending)
    done = moved_on(since := state.since_answer)
    for at, text in enumerate(since):  # `/model opus` before a request asks for nothing; the
        # latest message stays (`/release-notes 2.3.0` may be a skill of the user's)
        if (not sets_up(text.strip()) or at == len(since) - 1) and at not in done:
            pending.add(condense(squeeze(text), MESSAGE_CHARS))
    user_messages, constraints = settle_commands(user_messages, state.constraints, state.turns)
    todos: tuple[str, ...]
    if state.todo_seen:
        todos = open_todos(state.todos)
    else:
        todos = previous.todos if previous is not None else ()
    return Facts(
        goal=goal,
        user_messages=user_messages,
        constraints=tuple(constraints),
        files_read=tuple(state.read),
        files_modified=tuple(state.modified),
        commands=tuple(state.commands.values()),
        errors=tuple(state.errors.values()),
        decisions=tuple(state.decisions),
        pending=tuple(pending),
        todos=todos,
        identifiers=newest(tuple(state.names), IDENTIFIERS),
        answers=tuple(state.answers),
        changes=tuple(state.changes),
        plan=tuple(state.plan),
        reports=tuple(state.reports)[-REPORTS:],
        last_reply=condense(carriers.unlinked(state.last_reply), REPLY_CHARS)
        or (previous.last_reply if previous is not None else ""),
        constraint_turns=tuple(state.turns[c] for c in constraints),
    )
