"""Facts extracted from the records: user messages, constraints, files, commands, errors,
decisions, pending asks and todos, carried on across compactions."""

from __future__ import annotations

import contextlib
import json
import re
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compactcli import get_dialect, read_transcript
from compactcli.error_lines import ERROR_CHARS, error_line
from compactcli.outcomes import (
    cleared_error,
    content_error,
    exit_code,
    json_error,
    outcome,
    pasted_errors,
    reads_log,
)
from compactcli.stages import compact as compact_stage
from compactcli.stages.cuts import is_prompt
from compactcli.summarizers import fact_folds
from compactcli.summarizers import facts as facts_module
from compactcli.summarizers.extractive import render_facts as extractive_facts
from compactcli.summarizers.facts import (
    IDENTIFIERS,
    STATEMENT_CHARS,
    Command,
    ErrorFact,
    Facts,
    extract_facts,
)
from compactcli.summarizers.identifiers import identifiers, said_once
from compactcli.summarizers.prompt import render_facts as prompt_facts
from compactcli.summarizers.sentences import (
    _CONSTRAINT,
    _DECISION,
    _SHOULD,
    _STRONG,
    _code_like,
    as_constraint,
    changes_setting,
    condense,
    decision_sentences,
    sentences,
    setting_values,
    supersedes,
)
from compactcli.summarizers.tool_calls import command_key, head_commit
from compactcli.tools import local_path, shell_reads
from compactcli.transcript import Block, Message, Record, Transcript
from compactcli.user_text import squeeze, typed_text
from tests.cli_runner import run
from tests.conftest import CORPUS, FIXTURES
from tests.transcript_strategies import FORMAT_NAMES, Plan, plans, render

TRANSCRIPTS = FIXTURES / "transcripts"


def conversation(*turns: Any) -> tuple[Message, ...]:
    """Messages of an Anthropic Messages list built from (role, content) turns."""
    records = tuple(Record(raw={"role": role, "content": content}) for role, content in turns)
    return tuple(get_dialect("anthropic").messages(Transcript(records=records, format="anthropic")))


def call(call_id: str, name: str, /, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def result(call_id: str, content: str, is_error: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


SESSION = conversation(
    (
        "user",
        "<system-reminder>Remember the todo list.</system-reminder>\n"
        "Fix the port handling in server.py. Use pnpm, never npm. Do not touch migrations/.",
    ),
    ("assistant", [text("Let me look."), call("c1", "Read", file_path="src/server.py")]),
    ("user", [result("c1", "PORT = 5432\n")]),
    (
        "assistant",
        [
            call("c2", "Edit", file_path="src/server.py", old_string="x", new_string="y"),
            call("c3", "Bash", command="cd /repo && pnpm test 2>&1 | tail -20"),
        ],
    ),
    (
        "user",
        [
            result("c2", "String to replace not found in file.", is_error=True),
            result(
                "c3",
                "Exit code 1\nFAIL tests/server.test.ts\nError: listen EADDRINUSE: address already in use :::5432",
                is_error=True,
            ),
        ],
    ),
    (
        "assistant",
        [
            text("I decided to read the port from the environment instead of hard-coding it."),
            call("c4", "Edit", file_path="src/server.py", old_string="a", new_string="b"),
            call("c5", "Bash", command="pnpm test"),
        ],
    ),
    (
        "user",
        [result("c4", "The file src/server.py has been updated."), result("c5", "ok 12 tests")],
    ),
    ("assistant", [text("Done: the port now comes from PORT.")]),
    (
        "user",
        "<command-name>/review</command-name>\n<command-args>check the docs too</command-args>",
    ),
    (
        "assistant",
        [
            call(
                "c6",
                "TodoWrite",
                todos=[
                    {"content": "Review docs", "status": "in_progress", "activeForm": "Reviewing"},
                    {"content": "Fix server", "status": "completed", "activeForm": "Fixing"},
                    {"content": "Update README", "status": "pending", "activeForm": "Updating"},
                ],
            )
        ],
    ),
    ("user", [result("c6", "Todos have been modified successfully.")]),
)


def test_facts_of_a_small_session() -> None:
    facts = extract_facts(SESSION)
    assert facts == Facts(
        goal="Fix the port handling in server.py. Use pnpm, never npm. Do not touch migrations/.",
        user_messages=(
            "Fix the port handling in server.py. Use pnpm, never npm. Do not touch migrations/.",
            "/review check the docs too",
        ),
        constraints=("Use pnpm, never npm.", "Do not touch migrations/."),
        files_read=("src/server.py",),
        files_modified=("src/server.py",),
        # two runs of the same command (a `cd` before, a pipe to `tail` after): its last run,
        # with what it printed when that is one short line
        commands=(Command("pnpm test", "ok", "ok 12 tests", runs=2),),
        errors=(
            ErrorFact("String to replace not found in file.", True, "Edit", "src/server.py"),
            ErrorFact(
                "Error: listen EADDRINUSE: address already in use :::5432",
                True,
                "Bash",
                "cd /repo && pnpm test 2>&1 | tail -20",
            ),
        ),
        decisions=("I decided to read the port from the environment instead of hard-coding it.",),
        pending=("/review check the docs too",),
        todos=("[in_progress] Review docs", "[pending] Update README"),
        changes=(("src/server.py", "`a` -> `b`"),),  # the failed edit changed nothing
        last_reply="Done: the port now comes from PORT.",
        constraint_turns=(1, 1),  # both said in the first message
    )


def test_a_failed_edit_is_an_error_not_a_modified_file_until_an_edit_succeeds() -> None:
    facts = extract_facts(SESSION[:5])
    assert facts.files_modified == ()
    assert [(e.text, e.resolved, e.where) for e in facts.errors] == [
        ("String to replace not found in file.", False, "src/server.py"),
        (
            "Error: listen EADDRINUSE: address already in use :::5432",
            False,
            "cd /repo && pnpm test 2>&1 | tail -20",
        ),
    ]
    # the last message is a tool result of a turn that goes on: the request is still pending
    assert facts.pending == (
        "Fix the port handling in server.py. Use pnpm, never npm. Do not touch migrations/.",
    )


def test_previous_facts_carry_on() -> None:
    first = extract_facts(SESSION[:5])
    second = extract_facts(SESSION[5:], previous=first)
    assert second.goal == first.goal
    assert second.user_messages == (*first.user_messages, "/review check the docs too")
    assert second.files_read == ("src/server.py",)
    assert second.files_modified == ("src/server.py",)
    assert [e.resolved for e in second.errors] == [True, True]
    assert second.constraints == first.constraints
    # the first turn completed in the new messages, so its ask is no longer pending
    assert second.pending == ("/review check the docs too",)
    assert second.todos == ("[in_progress] Review docs", "[pending] Update README")
    third = extract_facts(conversation(("user", "and the changelog?")), previous=second)
    assert third.pending == ("/review check the docs too", "and the changelog?")
    assert third.todos == second.todos
    assert Facts.from_dict(third.to_dict()) == third


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "The regression came in with commit 2e45f5fece, which changed the audit query.",
            ["commit 2e45f5fece"],
        ),
        (
            "Fixed in SHA: `9fceb02d0ae598e95dc970b74767f19372d61af8`.",
            ["commit 9fceb02d0ae598e95dc970b74767f19372d61af8"],
        ),
        (
            "This goes into PR #5658. It is ticket INVO-8781; see also pull request 77.",
            ["#5658", "INVO-8781", "#77"],
        ),
        (
            "Case PV-2026-0451 is open; PROJ-12-fix-login names PROJ-12.",
            ["PV-2026-0451", "PROJ-12"],
        ),
        (
            "Work on branch feat/payments-record-396, then rebase on branch main.",
            [
                "branch feat/payments-record-396",
                "branch main",
            ],
        ),
        (
            "[fix/audit 1a2b3c4] Fix the audit query\n 2 files changed",
            ["commit 1a2b3c4 (branch fix/audit)"],
        ),
        (
            "SOLIDITY VERSION: Use 0.8.28. Upgrade Python 3.12.1, then run Node 20.11.0.",
            ["Python 3.12.1", "Node 20.11.0"],
        ),
        (  # a URL names its port: not a second identifier; a port alone is one
            "Open http://localhost:3000/chat; the API is on 127.0.0.1:8000.",
            ["http://localhost:3000/chat", "127.0.0.1:8000"],
        ),
        # not identifiers: words, standards, colours, entities, a branch without a name
        (
            "Commit decade early. Use UTF-16, SHA-256 and ISO-8601; colour #fff; &#1234; the "
            "branch is stale; item#12; a commit is due.",
            [],
        ),
        (  # counts and ranks are not issues; a one-digit number a closing word names is one
            "Start with #1 (rate widget), the #1 priority. Task #12 created; call #14/20 in "
            "this window. This fixes #3; see #45.",
            ["#3", "#45"],
        ),
        (  # a blockchain address and a transaction hash, whole; a shortened one is not
            "MANA is 0xa1c57f48f0deb89f569dfbe6e2b7f46d33606fd4; tx 0x5e5558ab0011223344556677"
            "8899aabbccddeeff00112233445566778899aabb; router 0x1111…097d; selector 0x18160ddd",
            [
                "0xa1c57f48f0deb89f569dfbe6e2b7f46d33606fd4",
                "0x5e5558ab00112233445566778899aabbccddeeff00112233445566778899aabb",
            ],
        ),
        (  # a review's numbered findings are not issues either
            "Reviewer flagged Critical #1 and Important #5. **Minors #6, #8, #10** applied; "
            "PR #40 merged.",
            ["#40"],
        ),
        (  # the frames of a pasted trace name one script; a host's port stays
            "at f (https://dev.local:8443/assets/web.min.js:972:101) at g "
            "(https://dev.local:8443/assets/web.min.js:1631:29) on http://app.example.com:8080",
            ["https://dev.local:8443/assets/web.min.js", "http://app.example.com:8080"],
        ),
    ],
)
def test_identifiers(text: str, expected: list[str]) -> None:
    assert identifiers(text) == expected


def test_a_text_met_again_is_read_once_and_each_reader_gets_its_own_list() -> None:
    """A message quoted or repeated gives the same identifiers, sentences and decisions, read
    once; a list one reader changes is not the next reader's."""
    from compactcli.summarizers import identifiers as identifiers_module
    from compactcli.summarizers import sentences as sentences_module

    unique = uuid.uuid4().hex  # a text no other test has read in this process
    text = f"We decided to use port 8080 on branch feat/x-{unique}. Never push to main.\nSee #123."
    readers = [
        (identifiers, identifiers_module._identifiers),
        (sentences, sentences_module._sentences),
        (decision_sentences, sentences_module._decision_sentences),
    ]
    for read, remembered in readers:
        misses = remembered.cache_info().misses
        first = read(text)
        assert first
        assert remembered.cache_info().misses == misses + 1
        first.append("changed")
        assert read(text) == first[:-1]
        assert remembered.cache_info().misses == misses + 1  # read once
    rule = f"Never push to main-{unique}."
    misses = as_constraint.cache_info().misses
    assert as_constraint(rule) == as_constraint(rule)
    assert as_constraint.cache_info().misses == misses + 1


def test_an_identifier_another_one_names_is_listed_once_as_that_one() -> None:
    """`#5` beside `.../issues/5` (the agent gave the URL, then said "#5") is the URL
    alone, in the summary and in what an LLM is given; `#7`, which no URL names, stays."""
    url = "https://github.com/acme/app/issues/5"
    facts = extract_facts(
        conversation(
            ("user", "File the crash as an issue."),
            ("assistant", [call("c1", "Bash", command="gh issue create --title crash")]),
            ("user", [result("c1", url)]),
            ("assistant", f"Filed it: {url}"),
            ("user", "Is #7 the same bug?"),
            ("assistant", "Yes: #7 is a duplicate of #5."),
        )
    )
    assert {"#5", "#7", url} <= set(facts.identifiers)
    assert said_once(facts.identifiers) == [n for n in facts.identifiers if n != "#5"]
    summary, _ = extractive_facts(facts, 2000, len)
    listed = summary.split("## Identifiers\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert "- #5" not in listed and f"- {url}" in listed and "- #7" in listed
    given = prompt_facts(facts).split("Identifiers:\n", 1)[1].split("\nThe assistant", 1)[0]
    assert given.splitlines() == [f"- {url}", "- #7"]
    # a branch a listed commit names, the same
    names = ["branch main", "commit c566cc2 (branch main)", "branch feat/x", "#5"]
    assert said_once(names) == ["commit c566cc2 (branch main)", "branch feat/x", "#5"]


def test_identifiers_come_from_user_and_assistant_text_and_git_commit_output() -> None:
    turns = conversation(
        ("user", "Fix INVO-8781 on branch feat/tz. Commit when done."),
        (
            "assistant",
            [text("It broke in commit 2e45f5fece."), call("c1", "Bash", command="pytest")],
        ),
        ("user", [result("c1", "commit 0000000111 is not mentioned by a commit command\nok")]),
        ("assistant", [call("c2", "Bash", command="git commit -am 'Fix tz'")]),
        ("user", [result("c2", "[feat/tz 5e6f7a8] Fix tz\n 1 file changed")]),
        ("assistant", [text("Committed. INVO-8781 is done.")]),
    )
    facts = extract_facts(turns)
    assert facts.identifiers == (
        "branch feat/tz",
        "commit 2e45f5fece",
        "commit 5e6f7a8 (branch feat/tz)",
        "INVO-8781",  # mentioned again: listed at its last mention
    )
    later = extract_facts(conversation(("user", "Now #12 please.")), previous=facts)
    assert later.identifiers == (*facts.identifiers, "#12")
    assert Facts.from_dict(later.to_dict()) == later
    many = conversation(*(("user", f"Look at #{n}.") for n in range(IDENTIFIERS + 10)))
    assert extract_facts(many).identifiers == tuple(f"#{n}" for n in range(10, IDENTIFIERS + 10))


def test_past_the_cap_a_name_an_edit_defines_goes_before_a_url_the_user_gave() -> None:
    """A file holds the names its edit defines; a URL or a ticket only the conversation holds."""
    writes = [
        (
            "assistant",
            [
                call(
                    f"w{n}",
                    "Write",
                    file_path=f"src/Card{n}.tsx",
                    content=f"export function Card{n}() {{\n}}\n",
                )
            ],
        )
        for n in range(IDENTIFIERS + 5)
    ]
    told = ("user", "Deploy to https://rpc.example.org/v1 for PV-1234, then build the pages.")
    facts = extract_facts(conversation(told, *writes))
    assert len(facts.identifiers) == IDENTIFIERS
    assert facts.identifiers[:2] == ("https://rpc.example.org/v1", "PV-1234")  # oldest, kept
    assert facts.identifiers[2:] == tuple(f"Card{n}" for n in range(7, IDENTIFIERS + 5))  # newest
    again = extract_facts(conversation(("user", "Go on.")), previous=facts)  # a later round
    assert again.identifiers == facts.identifiers
    more = extract_facts(conversation(*writes[:3]), previous=facts)  # newer names: older go
    assert more.identifiers[:2] == facts.identifiers[:2]
    assert more.identifiers[-3:] == ("Card0", "Card1", "Card2")


def test_a_file_a_command_deletes_is_modified_and_noted_deleted() -> None:
    facts = extract_facts(
        conversation(
            ("user", "Delete the Word doc and its markdown."),
            ("assistant", [call("c1", "Bash", command="rm /home/v/plan.md /home/v/plan.docx")]),
            ("user", [result("c1", "")]),
            ("assistant", [text("Both deleted.")]),
        )
    )
    assert facts.files_modified == ("/home/v/plan.md", "/home/v/plan.docx")
    assert facts.changes == (("/home/v/plan.md", "deleted"), ("/home/v/plan.docx", "deleted"))
    summary, _ = extractive_facts(facts, 2000, len)
    assert "- /home/v/plan.docx — deleted" in summary


@pytest.mark.parametrize(
    ("command", "output", "answer"),
    [
        (
            "git log --oneline -5",
            "2a02206 Add REST API and the AI insight service\n954e01a Scaffold monorepo\n",
            "2a02206 Add REST API and the AI insight service",
        ),
        (
            "cd lib && git log --oneline --graph --decorate -3",
            "* 29af2f2 (HEAD -> main, origin/main) Merge pull request #101\n* 8f428bf Font\n",
            "29af2f2 Merge pull request #101",
        ),
        (
            "git log -1",
            f"commit {'9c1e0d2' + 'a' * 33}\nMerge: 1a2b3c4 5d6e7f8\nAuthor: A <a@b.c>\n"
            "Date:   Mon Mar 2 10:00:00 2026\n\n    Release 2.3.0\n",
            "9c1e0d2 Release 2.3.0",
        ),
        ("git status --short", "2a02206 notes.txt\n?? x\n", ""),  # not a log
        ("git log --oneline -- a.txt", "warning: refname 'a' is ambiguous.\nhint: use --\n", ""),
    ],
)
def test_the_newest_commit_a_git_log_printed_is_its_answer(
    command: str, output: str, answer: str
) -> None:
    assert head_commit(command, output) == answer
    facts = extract_facts(
        conversation(
            ("user", "Where does the branch stand?"),
            ("assistant", [call("c1", "Bash", command=command)]),
            ("user", [result("c1", output)]),
            ("assistant", [text("Checked.")]),
        )
    )
    assert [c.detail for c in facts.commands] == ([answer] if answer else [])


def test_what_a_commands_output_says_the_session_runs_on_is_an_identifier() -> None:
    """A dev server's banner and address, the branch git is on, a pull request made: named in
    the first lines of what a command printed, also one that timed out; not any URL."""
    outputs = {
        "npm run dev": "> web@0.1.0 dev\n> next dev\n\n   ▲ Next.js 15.5.3 (Turbopack)\n"
        "   - Local:        http://localhost:3000\n   - Network:      http://192.168.1.5:3000\n",
        "npx vite": "\n  VITE v5.4.10  ready in 312 ms\n\n  ➜  Local:   http://localhost:5173/\n",
        "uv run uvicorn app:app": "INFO:     Uvicorn running on http://127.0.0.1:8000 (Press "
        "CTRL+C to quit)\nCommand timed out after 2m 0s",
        "git status": "On branch feat/async-grpo\nnothing to commit, working tree clean\n",
        "gh pr create --fill": "Creating pull request for feat/x into main\n\n"
        "https://github.com/o/r/pull/12\n",
        "cat README.md": "See https://docs.example.com/setup for the setup.\n",
    }
    turns: list[tuple[str, Any]] = [("user", "Run it.")]
    for number, (command, output) in enumerate(outputs.items()):
        turns += [
            ("assistant", [call(f"c{number}", "Bash", command=command)]),
            ("user", [result(f"c{number}", output, is_error="timed out" in output)]),
        ]
    names = extract_facts(conversation(*turns)).identifiers
    assert names == (
        "Next.js 15.5.3",
        "http://localhost:3000",
        "VITE v5.4.10",
        "http://localhost:5173/",
        "http://127.0.0.1:8000",
        "branch feat/async-grpo",
        "https://github.com/o/r/pull/12",
    )


def test_a_sentence_under_a_rules_heading_is_a_constraint_without_a_cue_word() -> None:
    brief = (
        "You are the acceptance inspector.\n\nHard Rules (Must be followed)\n"
        "Item by item: check each acceptance item in the plan's order. After completing all "
        "items, summarize the report and write it to ./.tmp/report.md.\n"
        "Are core happy paths covered?\n10.2 Method:\n(At least one end-to-end test.)\n"
        "Output Requirements for the report\n"
        "- Record each issue with its evidence.\n\n# Project\n"
        "The project keeps its orders in Postgres.\n"
    )
    constraints = extract_facts(conversation(("user", brief))).constraints
    assert constraints == (
        "Item by item: check each acceptance item in the plan's order.",
        "After completing all items, summarize the report and write it to ./.tmp/report.md.",
        "Record each issue with its evidence.",
    )
    # the same sentences with no rules heading above them set no rule
    plain = brief.replace("Hard Rules (Must be followed)\n", "")
    assert extract_facts(conversation(("user", plain))).constraints == ()


def test_a_pasted_review_gives_its_fixes_as_rules_and_not_its_evidence() -> None:
    finding = (
        "{n}. Severity: High\n"
        "Conclusion: The backend falls back to hardcoded credentials {n}.\n"
        "Brief rationale: It retries with the legacy password instead of failing closed.\n"
        "Evidence: `backend/src/database.ts:70-97` only disables it in production.\n"
        "Impact: Security can be downgraded without the operator's intent.\n"
        "Minimum actionable fix: Remove the automatic fallback {n}, or gate it behind a flag.\n"
    )
    review = "# Audit\n\n" + "\n".join(finding.format(n=n) for n in range(1, 13))
    constraints = extract_facts(conversation(("user", review))).constraints
    assert constraints == tuple(
        f"Minimum actionable fix: Remove the automatic fallback {n}, or gate it behind a flag."
        for n in range(1, 13)
    )
    # a review too long to quote whole keeps its fixes in the middle, not its evidence
    short = condense(review, 1200)
    middle = short.split(" […] ")[1]
    assert "Remove the automatic fallback 6," in middle
    assert "Evidence" not in middle and "Brief rationale" not in middle


def test_a_pasted_audit_too_long_to_quote_keeps_the_checks_it_failed() -> None:
    filler = "".join(f"- Module {n} is covered by `tests/test_{n}.py`.\n" for n in range(40))
    audit = (
        f"Fix all of these findings:\n\n# Coverage Audit\n{filler}\n# README Audit\n"
        "## Hard Gate Failures\n1. **Environment rules violation (STRICT): FAIL**\n"
        "2. **Demo credentials for auth-enabled system: FAIL**\n"
        f"## Coverage\n{filler}- Formatting/readability: **PASS**\n"
    )
    middle = condense(audit, 1200).split(" […] ")[1]
    assert "1. **Environment rules violation (STRICT): FAIL**" in middle
    assert "2. **Demo credentials for auth-enabled system: FAIL**" in middle
    assert "PASS" not in middle


def test_an_error_pasted_in_is_an_error_and_no_rule() -> None:
    pasted = "it fails:\nError: No tests found\nNever hide a TypeError behind a retry."
    facts = extract_facts(conversation(("user", pasted)))
    assert facts.constraints == ("Never hide a TypeError behind a retry.",)
    assert [e.text for e in facts.errors] == ["Error: No tests found"]


def test_meta_text_is_not_a_user_message() -> None:
    messages = conversation(
        ("user", "<ide_opened_file>The user opened the file .env in the IDE.</ide_opened_file>"),
        (
            "user",
            "Caveat: The messages below were generated by the user while running local commands.",
        ),
        ("user", "<local-command-stdout>ok</local-command-stdout>"),
        ("user", "[Request interrupted by user for tool use]"),
        ("user", "<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>"),
        ("user", "# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>x</INSTRUCTIONS>"),
        ("user", "<bash-input>git status</bash-input>"),
        ("user", "Base directory for this skill: /skills/x\n\nDo things."),
        ("user", "[Image: source: /home/dev/.claude/image-cache/s/1.png]"),
        ("user", "[Image #1] [Image #2]"),
        ("user", "<image name=[Image #1]>"),  # Codex's tags around an attached image
        ("user", "</image>"),
        ("user", "[Old image cleared: image/png, 311,902 bytes, sha256:af2e]"),  # prune's line
        ("user", "the real one"),
        ("user", "[Image #3] and make it blue"),  # typed after the pasted image's placeholder
        ("user", "<subagent_notification>{}</subagent_notification>"),
        ("user", "<in-app-browser-context>a page</in-app-browser-context>\nnow the footer"),
    )
    facts = extract_facts(messages)
    assert facts.user_messages == ("the real one", "[Image #3] and make it blue", "now the footer")
    assert facts.commands == (Command("git status", "unknown"),)
    assert facts.files_read == ("/skills/x/SKILL.md",)  # the skill's body was its SKILL.md


def test_a_skill_body_names_its_skill_file_in_the_folders_own_separator() -> None:
    messages = conversation(
        ("user", "Base directory for this skill: C:\\Users\\ana\\.claude\\skills\\grant\n\nGo."),
        ("user", "Base directory for this skill: /home/ana/.claude/skills/notes/\n\nGo."),
        ("user", "Base directory for this skill:\n\nNo folder."),
        # Codex wraps a skill's body in <skill>, with its folder or its file as <path>
        ("user", "<skill>\n<name>ship</name>\n<path>/home/ana/.codex/skills/ship</path>\n</skill>"),
        ("user", "<skill> <name>r</name> <path>C:\\skills\\r\\SKILL.md</path> </skill>"),
        ("user", "<skill>publish</skill>"),
    )
    facts = extract_facts(messages)
    assert facts.files_read == (
        "C:\\Users\\ana\\.claude\\skills\\grant\\SKILL.md",
        "/home/ana/.claude/skills/notes/SKILL.md",
        "/home/ana/.codex/skills/ship/SKILL.md",
        "C:\\skills\\r\\SKILL.md",
    )
    assert facts.user_messages == ()


def test_a_pi_skill_block_is_the_skills_not_the_users_and_what_follows_it_is_typed() -> None:
    """pi's `/skill:NAME args` sends the skill's body in a `<skill name=... location=...>` block,
    then the arguments the person typed: the body gives the skill's rules and file, the
    arguments are the user's message."""
    block = (
        '<skill name="graphify" location="/home/ana/.pi/agent/skills/graphify/SKILL.md">\n'
        "References are relative to /home/ana/.pi/agent/skills/graphify.\n\n"
        "# /graphify\n\nTurn a folder into a graph.\n\nNever print the raw JSON.\n</skill>"
    )
    messages = conversation(
        ("user", block + "\n\nrun it on src/ only"),
        ("assistant", [text("On it.")]),
        ("user", block),
        ("assistant", [text("Again.")]),
    )
    facts = extract_facts(messages)
    assert facts.user_messages == ("run it on src/ only",)
    assert facts.goal == "run it on src/ only"
    assert facts.files_read == ("/home/ana/.pi/agent/skills/graphify/SKILL.md",)
    assert "Skill graphify: Never print the raw JSON." in facts.constraints
    assert "Never print the raw JSON." not in facts.constraints  # not a rule the user set


def test_a_command_that_printed_one_short_line_keeps_it_as_its_answer() -> None:
    codex = "Chunk ID: f3\nWall time: 0.0000 seconds\nProcess exited with code 0\nOutput:\n{}\n"
    messages = conversation(
        ("user", "Set up opencode."),
        (
            "assistant",
            [
                call("c1", "Bash", command="command -v opencode || true"),
                call("c2", "Bash", command="which node"),  # only looks: kept for its answer
                call("c3", "Bash", command="ls -la"),  # only looks, several lines: left out
                call("c4", "Bash", command="npm install"),  # several lines: no answer
                call("c5", "Bash", command="git rev-parse HEAD"),  # only looks, printed nothing
                call("c6", "Bash", command="make build"),  # one line, too long to be an answer
            ],
        ),
        (
            "user",
            [
                result("c1", codex.format("/opt/homebrew/bin/opencode")),
                result("c2", "/usr/local/bin/node\n"),
                result("c3", "total 8\n-rw-r--r-- 1 a staff 10 x\n"),
                result("c4", "added 12 packages\nfound 0 vulnerabilities"),
                result("c5", codex.format("")),
                result("c6", "x" * 121),
            ],
        ),
    )
    assert extract_facts(messages).commands == (
        Command("command -v opencode || true", "ok", "/opt/homebrew/bin/opencode"),
        Command("which node", "ok", "/usr/local/bin/node"),
        Command("npm install", "ok"),
        Command("make build", "ok"),
    )


def test_a_rejected_call_gives_the_users_reason() -> None:
    messages = conversation(
        ("user", "Run the tests."),
        ("assistant", [call("c1", "Bash", command="npx vitest run")]),
        (
            "user",
            [
                result(
                    "c1",
                    "The user doesn't want to proceed with this tool use. The tool use was rejected "
                    "(eg. if it was a file edit, the new_string was NOT written to the file). The user "
                    "provided the following reason for the rejection:  Please use docker for tests.",
                    is_error=True,
                )
            ],
        ),
    )
    facts = extract_facts(messages)
    assert facts.commands == (Command("npx vitest run", "rejected"),)
    assert facts.errors == ()
    assert facts.user_messages == ("Run the tests.", "Please use docker for tests.")
    assert facts.constraints == ("Please use docker for tests.",)


@pytest.mark.parametrize(
    ("content", "is_error", "expected"),
    [
        ("Exit code 1\nboom", False, ("failed", "boom")),
        (
            "Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 2\nOutput:\nrg: x: No such file or directory (os error 2)",
            False,
            ("failed", "rg: x: No such file or directory (os error 2)"),
        ),
        ("Chunk ID: 1\nProcess exited with code 0\nOutput:\nall good", False, ("ok", "")),
        (
            "(no output)\n\nCommand exited with code 1",
            False,
            ("failed", "Command exited with code 1"),
        ),
        (
            '{"output": "x", "metadata": {"exit_code": 3}}',
            False,
            ("failed", "x"),  # what the shell printed, out of Codex's JSON
        ),
        ("Command aborted", False, ("failed", "Command aborted")),
        # Codex: a shell command, and another tool, the user stopped
        ("Wall time: 77.1 seconds\naborted by user", False, ("failed", "aborted by user")),
        ("aborted by user after 77.1s", False, ("failed", "aborted by user after 77.1s")),
        (
            "Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n    main()\nKeyError: 'port'\n",
            False,
            ("failed", "KeyError: 'port'"),
        ),
        (
            "src/a.ts(3,4): error TS2339: Property 'x' does not exist.\nFound 1 error.",
            True,
            ("failed", "src/a.ts(3,4): error TS2339: Property 'x' does not exist."),
        ),
        (
            "<tool_use_error>File has not been read yet.</tool_use_error>",
            True,
            ("failed", "File has not been read yet."),
        ),
        (
            "v22.16.0\nThis project is configured to use yarn",
            True,
            ("failed", "This project is configured to use yarn"),
        ),
        ("12 passed", False, ("ok", "")),
        # the shell could not run the command: its first line says so, with no exit code
        (
            "/bin/bash: line 1: search_replace: command not found",
            False,
            ("failed", "/bin/bash: line 1: search_replace: command not found"),
        ),
        ("sh: 1: jq: not found", False, ("failed", "sh: 1: jq: not found")),
        ("zsh: permission denied: ./x.sh", False, ("failed", "zsh: permission denied: ./x.sh")),
        (
            "bash: ./run.sh: No such file or directory",
            False,
            ("failed", "bash: ./run.sh: No such file or directory"),
        ),
        ("a.py\nbash: x: command not found", False, ("ok", "")),  # later: the rest may have run
        (  # Codex could not start the process at all
            'execution error: Io(Custom { kind: Other, error: "windows sandbox: '
            'CreateProcessWithLogonW failed: 1056" })',
            False,
            (
                "failed",
                'execution error: Io(Custom { kind: Other, error: "windows sandbox: '
                'CreateProcessWithLogonW failed: 1056" })',
            ),
        ),
        # Codex code mode: the script's own status line heads its output
        ("Script completed\nWall time 0.2 seconds\nOutput:\n\n12 passed", False, ("ok", "")),
        (
            "Script failed\nWall time 2 seconds\nOutput:\n\n"
            "Error: Cannot find module './cache'\n    at load (node:internal)",
            False,
            ("failed", "Error: Cannot find module './cache'"),
        ),
        ("Script failed\nWall time 2 seconds\nOutput:\n", False, ("failed", "Script failed")),
        (
            "Script completed\nWall time 0.3 seconds\nOutput:\n\n"
            '{"chunk_id": "c1", "exit_code": 1, "output": "FAIL src/cache.test.ts"}',
            False,
            ("failed", '{"chunk_id": "c1", "exit_code": 1, "output": "FAIL src/cache.test.ts"}'),
        ),
    ],
)
def test_outcome_of_a_shell_result(content: str, is_error: bool, expected: tuple[str, str]) -> None:
    block = Block(kind="tool_result", text=content, is_error=is_error)
    found = outcome(block, shell=True)
    assert (found.status, found.error) == expected


def test_a_non_shell_result_fails_only_when_it_says_so() -> None:
    block = Block(kind="tool_result", text="Exit code 1 appears in this file")
    assert outcome(block, shell=False).status == "ok"


def test_error_line_prefers_the_exception_and_skips_noise() -> None:
    assert error_line("Exit code 1\n") == "Exit code 1"
    assert error_line("FAILED tests/test_a.py::test_x - AssertionError: 1 != 2\n") == (
        "FAILED tests/test_a.py::test_x - AssertionError: 1 != 2"
    )
    assert error_line("x" * 600 + " Error\nError: short one") == "Error: short one"


RUST_ERRORS = """\
   Compiling edgerunner-service v0.1.0
error[E0277]: the trait bound `fn(State<AppState>) -> ... {snapshot}: Handler<_, _>` is not satisfied
   --> crates/edgerunner-service/src/server.rs:60:30
error[E0277]: the trait bound `fn(State<AppState>) -> ... {events}: Handler<_, _>` is not satisfied
   --> crates/edgerunner-service/src/server.rs:61:30
error[E0277]: `(dyn ExecutionVenue + 'static)` cannot be shared between threads safely
   --> crates/edgerunner-service/src/server.rs:58:17
error: future cannot be sent between threads safely
error: could not compile `edgerunner` (bin "edgerunner" test) due to 7 previous errors
"""


def test_a_compiler_s_different_errors_are_said_while_they_fit() -> None:
    """rustc stopped on three errors: the same trait bound at two handlers is one (said once),
    the venue that cannot be shared another, which the agent went on to fix. The count of
    errors is no error, and a line of another kind (`error:` after `error[...]:`) is not
    joined. TypeScript's diagnostics at file positions are joined the same way, in failed and
    in exit-0 output alike."""
    first = "error[E0277]: the trait bound `fn(State<AppState>) -> ... {snapshot}: Handler<_, _>` is not satisfied"
    second = (
        "error[E0277]: `(dyn ExecutionVenue + 'static)` cannot be shared between threads safely"
    )
    assert error_line("Exit code: 101\nOutput:\n" + RUST_ERRORS) == f"{first}; {second}"
    assert content_error("Script completed\nOutput:\n" + RUST_ERRORS, shell=True) == (
        f"{first}; {second}"
    )
    tsc = (
        "src/App.tsx(23,25): error TS2339: Property 'env' does not exist on type 'ImportMeta'.\n"
        "src/App.tsx(40,9): error TS2339: Property 'env' does not exist on type 'ImportMeta'.\n"
        "src/main.tsx(4,8): error TS2882: Cannot find module './styles.css'.\n"
        "Found 3 errors in 2 files.\n"
    )
    assert error_line("Exit code: 2\n" + tsc) == (
        "src/App.tsx(23,25): error TS2339: Property 'env' does not exist on type 'ImportMeta'.; "
        "src/main.tsx(4,8): error TS2882: Cannot find module './styles.css'."
    )
    long = "error: " + "x" * 220
    assert error_line(f"{long}\nerror: another failure entirely\n") == long  # no room


def test_a_powershell_error_record_gives_its_message_not_its_record_lines() -> None:
    """The message line opens the record (in the system's language), then the location, the
    command, `+ CategoryInfo` and `+ FullyQualifiedErrorId`, which name no error."""
    record = (
        "Exit code: 1\nOutput:\nnpm : File C:\\npm.ps1 cannot be loaded because running "
        "scripts is disabled\non this system.\nAt line:1 char:1\n+ npm run build\n+ ~~~\n"
        "    + CategoryInfo          : SecurityError: (:) [], PSSecurityException\n"
        "    + FullyQualifiedErrorId : UnauthorizedAccess\n"
    )
    assert error_line(record) == (
        "npm : File C:\\npm.ps1 cannot be loaded because running scripts is disabled "
        "on this system."
    )
    localized = (
        "Get-Content : Объект app\\page.tsx не существует.\r\nстрока:2 знак:1\r\n"
        "+ Get-Content app\\page.tsx\r\n    + FullyQualifiedErrorId : ItemNotFound\r\n"
    )
    assert error_line(localized) == "Get-Content : Объект app\\page.tsx не существует."


def test_powershell_7s_coloured_error_view_gives_its_message_without_colours() -> None:
    red, cyan, reset = "\x1b[31;1m", "\x1b[36;1m", "\x1b[0m"
    view = (
        "Exit code: 1\nOutput:\n"
        f"{red}Get-Content: {reset}\r\n{cyan}Line |{reset}\r\n"
        f"{cyan}   1 | {reset} {cyan}Get-Content -Path C:\\skills\\ROUTER.md{reset}\r\n"
        f"{red}{cyan}     | {red} ~~~~~~~~~~~~~~~~~~~~~~~~~~~~{reset}\r\n"
        f"{red}{cyan}     | {red}Cannot find path 'C:\\skills\\ROUTER.md' because it does "
        f"not exist.{reset}\r\n"
    )
    assert error_line(view) == (
        "Cannot find path 'C:\\skills\\ROUTER.md' because it does not exist."
    )
    assert content_error(f"{red}Error: {reset}port in use\n", shell=True) == "Error: port in use"


def test_a_windows_program_s_utf_16_output_is_read_as_its_text() -> None:
    # WSL's bash.exe prints UTF-16: read as UTF-8, a NUL follows every character
    wide = "Access is denied. \r\nError code: Bash/Service/CreateInstance/E_ACCESSDENIED\r\n"
    view = "Exit code: 1\nWall time: 2.3 seconds\nOutput:\n" + "".join(c + "\x00" for c in wide)
    assert error_line(view) == "Access is denied."


@pytest.mark.parametrize(
    ("output", "expected"),
    [  # a last line that is output, not a message: the exit code is the error
        ("HTTP 000\n\nCommand exited with code 28", "Command exited with code 28"),
        (
            "== size ==\n16027 /tmp/page.html\nCommand exited with code 1",
            "Command exited with code 1",
        ),
        ("Exit code 2\n-rw-r--r--@ 1 u wheel 55 Jun 10 07:01 /tmp/x", "Exit code 2"),
        ("Exit code 1\n0", "Exit code 1"),
        # a message, short or without an error word, is the error
        ("Exit code 137\nKilled", "Killed"),
        ("Exit code 139\nSegmentation fault (core dumped)", "Segmentation fault (core dumped)"),
        (
            "Exit code 1\naccepts at most 1 arg(s), received 2",
            "accepts at most 1 arg(s), received 2",
        ),
        ("16027 /tmp/page.html", "16027 /tmp/page.html"),  # no exit code to say more
        # a last line that a line ending in ":" announced is a fix to run: the message is first
        (
            "Exit code 1\nHardhat only supports ESM projects.\n\nPlease make sure you have "
            '`"type": "module"` in your package.json.\n\nYou can set it automatically by '
            'running:\n\nnpm pkg set type="module"',
            "Hardhat only supports ESM projects.",
        ),
        (  # WSL's bash.exe (UTF-16), its fix in two lines below the line that announces it
            "Exit code: 1\nOutput:\n"
            + "".join(
                c + "\x00"
                for c in "Windows Subsystem for Linux has no installed distributions.\r\n"
                "You can resolve this by installing a distribution with the instructions below:"
                "\r\n\r\nUse 'wsl.exe --list --online' to list available distributions\r\n"
                "and 'wsl.exe --install <Distro>' to install.\r\n"
            ),
            "Windows Subsystem for Linux has no installed distributions.",
        ),
        (  # the shell's complaint, not a line of output that says "undefined"
            "=== 23 ===\nResult: undefined/api/agent\n\n=== 24 ===\n"
            "/bin/bash: line 0: read: `src/...': not a valid identifier\n\n\n"
            "Command exited with code 1",
            "/bin/bash: line 0: read: `src/...': not a valid identifier",
        ),
        ("Exit code 1\nsome output\nFiles:\nsrc/a.py", "Exit code 1"),  # no message first
        (  # an error line that announces the errors below it says the first of them too
            "Exit code 1\n\x1b[31m\x1b[1mError\x1b[22m\x1b[39m HH8: There's one or more errors "
            "in your config file:\n\n  * Invalid account: #0 - private key too short\n\n"
            "For more info go to https://v2.hardhat.org/HH8 or run Hardhat with --show-stack-traces",
            "Error HH8: There's one or more errors in your config file: * Invalid account: #0 - "
            "private key too short",
        ),
    ],
)
def test_the_error_of_a_failed_command_that_printed_no_message_is_its_exit_code(
    output: str, expected: str
) -> None:
    assert error_line(output) == expected


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (  # a passing test whose file is named errors.test.ts is not the error
            "Exit code 1\n ✓ test/webhooks/errors.test.ts > merge token (missing) 73ms\n"
            " FAIL  test/webhooks/utils.test.ts > retry customer\n"
            "Error: Timeout of 4356ms exceeded waiting for payments queue\n"
            " ❯ test/catalog/config.test.ts:179:32\n Test Files  1 failed | 9 passed\n",
            "Error: Timeout of 4356ms exceeded waiting for payments queue",
        ),
        (
            "tests/test_total.py F\n\n    def test_total():\n>       assert total() == 3\n"
            "E       AssertionError: assert 2 == 3\n\ntests/test_total.py:4: AssertionError\n",
            "E AssertionError: assert 2 == 3",
        ),
        (
            "running 1 test\nthread 'main' panicked at src/main.rs:5:5:\nindex out of bounds\n",
            "thread 'main' panicked at src/main.rs:5:5: index out of bounds",  # its message after
        ),
        (
            "=== RUN   TestParse\n--- FAIL: TestParse (0.00s)\n    parse_test.go:12: got 1\nFAIL\n",
            "--- FAIL: TestParse (0.00s)",
        ),
        (
            "PASS src/missing.test.ts\nerror[E0308]: mismatched types\n",
            "error[E0308]: mismatched types",
        ),
        (
            "ok 1 - reports invalid input\nnpm ERR! code ELIFECYCLE\n",
            "npm ERR! code ELIFECYCLE",
        ),
        (  # a traceback's exception, not the exit code line pi's shell tool adds below it
            "=== 35. bridges ===\nTraceback (most recent call last):\n"
            '  File "<string>", line 11, in <module>\n'
            "FileNotFoundError: [Errno 2] No such file or directory: 'out/analysis.json'\n\n\n"
            "Command exited with code 1",
            "FileNotFoundError: [Errno 2] No such file or directory: 'out/analysis.json'",
        ),
        (  # a heading in capitals, its label and the message under them
            "***************************\nAPPLICATION FAILED TO START\n"
            "***************************\n\nDescription:\n\n"
            "Web server failed to start. Port 8080 was already in use.\n\nAction:\n\n"
            "Identify and stop the process.\n",
            "APPLICATION FAILED TO START Description: Web server failed to start. Port 8080 was "
            "already in use.",
        ),
        (  # only weak words left: the first line with one that is not a passing test
            "✓ handles a missing file\nthe upload could not finish\n",
            "the upload could not finish",
        ),
    ],
)
def test_error_line_prefers_real_error_lines_to_words_in_names(output: str, expected: str) -> None:
    assert error_line(output) == expected


CLEARED = (
    "[Old tool result cleared: Bash npm test — 120 lines, 5,063 chars, sha256:"
    + "ab" * 32
    + "; failed: TypeError: Cannot read properties of undefined (reading 'x')]"
)


def test_a_cleared_result_that_kept_its_error_line_is_a_failure_with_that_error() -> None:
    assert cleared_error(CLEARED) == "TypeError: Cannot read properties of undefined (reading 'x')"
    assert cleared_error(CLEARED.split("; failed")[0] + "]") is None
    assert cleared_error("TypeError: x; failed: y]") is None  # not a placeholder
    found = outcome(Block(kind="tool_result", text=CLEARED), shell=True)
    assert (found.status, found.error) == (
        "failed",
        "TypeError: Cannot read properties of undefined (reading 'x')",
    )
    cleared_ok = outcome(Block(kind="tool_result", text=CLEARED.split("; failed")[0] + "]"), True)
    assert cleared_ok.status == "ok"
    facts = extract_facts(
        conversation(
            ("user", "run the tests"),
            ("assistant", [call("b1", "Bash", command="npm test")]),
            ("user", [result("b1", CLEARED)]),
            ("assistant", [text("It fails.")]),
        )
    )
    assert facts.commands == (
        Command(
            "npm test", "failed", "TypeError: Cannot read properties of undefined (reading 'x')"
        ),
    )
    assert facts.errors == (
        ErrorFact(
            "TypeError: Cannot read properties of undefined (reading 'x')",
            resolved=False,
            tool="Bash",
            where="npm test",
        ),
    )


def test_decisions_include_switching_something_to_something_else() -> None:
    assert decision_sentences(
        "I'll switch the reports export to streaming CSV rows, since the file no longer fits. "
        "We switched the parser over to the new tokenizer. Let me switch to the main branch. "
        "It can be switched off without a deploy. Switch the tab and look at the logs to see."
    ) == [
        "I'll switch the reports export to streaming CSV rows, since the file no longer fits.",
        "We switched the parser over to the new tokenizer.",
        "Let me switch to the main branch.",
    ]


def test_a_recommendation_to_stick_with_something_is_a_decision() -> None:
    assert decision_sentences(
        "loguru is developer-friendly but replaces logging wholesale. Given our governance "
        "requirements, stick with structlog + stdlib logging handlers. Sticking with Postgres "
        "keeps compliance simple. The label sticks to the top of the page."
    ) == [
        "Given our governance requirements, stick with structlog + stdlib logging handlers.",
        "Sticking with Postgres keeps compliance simple.",
    ]


def test_the_fix_an_agent_gives_by_its_label_is_a_decision() -> None:
    assert decision_sentences(
        "**Root cause:** the role is read from the token's claims. **Fix:** Both functions "
        "now read the role from Firestore. **La fix :** lire le rôle depuis Firestore. "
        "The fix is to retry once. Fixes: none. The prefix: abc. A fix: maybe?"
    ) == [
        "**Fix:** Both functions now read the role from Firestore.",
        "**La fix :** lire le rôle depuis Firestore.",
        "The fix is to retry once.",
    ]


def test_the_agents_pick_of_its_own_tool_is_no_decision() -> None:
    assert decision_sentences(
        "I'll use the `worker` agent for this. Let's use the Explore subagent to find it. "
        "We'll use the Stripe webhook to confirm payments instead of polling."
    ) == ["We'll use the Stripe webhook to confirm payments instead of polling."]
    row = "| **P1** | **Fix imports** — use relative imports instead of absolute |"
    assert decision_sentences(f"| Priority | Fix |\n|---|---|\n{row}") == [
        "P1 | Fix imports — use relative imports instead of absolute"
    ]


def test_shell_reads_and_command_keys() -> None:
    assert shell_reads("exec_command", {"cmd": "nl -ba src/a.py | sed -n '1,80p'"}) == ["src/a.py"]
    assert shell_reads(
        "exec_command", {"command": "sed -n '1,220p' docs/x.md && cat README.md"}
    ) == [
        "docs/x.md",
        "README.md",
    ]
    assert shell_reads("exec_command", {"command": "cat -A"}) == []
    # a quoted path whole; a glob and a path made from a variable are no file names
    for command, reads in [
        ('cat "/Volumes/Marc\'s SSD/v2/.env" | head -5', ["/Volumes/Marc's SSD/v2/.env"]),
        ("head -5 next.config.* 2>/dev/null", []),
        ("for i in 1 2; do head -3 out/.chunk_$i.txt; done", []),
        ("cat \"$HOME/.config/x.json\" && cat 'a b.md'", ["a b.md"]),
        # brackets: a route's folder when quoted as a literal, a pattern otherwise
        ("sed -n '1,80p' 'app/[id]/page.tsx'", ["app/[id]/page.tsx"]),
        ("cat app/[id]/page.tsx", []),
        ("Get-Content -LiteralPath 'app\\[id]\\page.tsx'", ["app\\[id]\\page.tsx"]),
        ("Get-Content 'app\\[id]\\page.tsx'", []),
    ]:
        assert shell_reads("bash", {"command": command}) == reads, command
    assert command_key('cd "/a b" && npm run check 2>&1 | tail -10') == "npm run check"
    # the same command run again with other answers to its prompts is a rerun
    create = "npx create-next-app@latest web --use-npm"
    for command in (
        f"{create} 2>&1 <<EOF\n\nEOF",
        f"{create} 2>&1 < /dev/null",
        f'echo "N" | {create} 2>&1',
        f"printf 'N\\nN\\n' | {create} 2>&1",
        f"yes | {create}",
    ):
        assert command_key(command) == create, command
    # but not data piped in, nor a script or a commit message given as a here-document
    for command in (
        "echo $PATH | tr : '\\n'",
        "python - <<'PY'\nprint(1)\nPY",
        "git commit -m \"$(cat <<'EOF'\nFix it\nEOF\n)\"",
    ):
        assert command_key(command) == command, command


def test_todo_tools_of_every_agent() -> None:
    plan = conversation(
        ("user", "go"),
        (
            "assistant",
            [
                call(
                    "p1",
                    "update_plan",
                    plan=[
                        {"step": "Read code", "status": "completed"},
                        {"step": "Write fix", "status": "in_progress"},
                    ],
                )
            ],
        ),
        ("user", [result("p1", "Plan updated")]),
    )
    assert extract_facts(plan).todos == ("[in_progress] Write fix",)
    pi = conversation(
        ("user", "go"),
        ("assistant", [call("t1", "todo", action="add", text="Add tests")]),
        ("user", [result("t1", "Added todo #1")]),
        ("assistant", [call("t2", "todo", action="add", text="Ship it")]),
        ("user", [result("t2", "Added todo #2")]),
        ("assistant", [call("t3", "todo", action="toggle", id=1)]),
        ("user", [result("t3", "Toggled")]),
    )
    assert extract_facts(pi).todos == ("[pending] Ship it",)
    assert extract_facts(pi[:5]).todos == ("[pending] Add tests", "[pending] Ship it")


def test_claude_code_s_tasks_change_only_when_the_tool_took_the_change() -> None:
    """TaskCreate adds a task, TaskUpdate sets its status (quoted or not); an update the tool
    refused (`InputValidationError`) leaves the task as it was."""
    refused = '<tool_use_error>InputValidationError: [{"code": "invalid_union"}]</tool_use_error>'
    made = conversation(
        ("user", "fix the scope bug and the parser"),
        ("assistant", [call("c1", "TaskCreate", subject="Fix the parameter scope bug")]),
        ("user", [result("c1", "Task #1 created successfully: Fix the parameter scope bug")]),
        ("assistant", [call("c2", "TaskCreate", subject="Fix the parser")]),
        ("user", [result("c2", "Task #2 created successfully: Fix the parser")]),
        ("assistant", [call("u1", "TaskUpdate", taskId="1", status='"completed"')]),
        ("user", [result("u1", refused, is_error=True)]),
        ("assistant", [call("u2", "TaskUpdate", taskId="2", status='"completed"')]),
        ("user", [result("u2", "Updated task #2 status")]),
    )
    assert extract_facts(made).todos == ("[pending] Fix the parameter scope bug",)


def test_superseding_user_messages_keep_their_order() -> None:
    facts = extract_facts(
        conversation(
            ("user", "Use port 5432 for the database."),
            ("assistant", [text("OK.")]),
            ("user", "Change of plan: use port 6543 for the database."),
            ("assistant", [text("Switched to 6543.")]),
        )
    )
    assert facts.user_messages == (
        "Use port 5432 for the database.",
        "Change of plan: use port 6543 for the database.",
    )
    assert facts.constraints == facts.user_messages
    assert facts.pending == ()


# (earlier sentence, later sentence): the later one gives the same setting another value
CHANGED_SETTINGS = [
    (
        "FYI the staging setup uses INVOICES_TIMEOUT_MS=4154; keep that in mind.",
        "Update: ops changed it, it's INVOICES_TIMEOUT_MS=5004 now.",
    ),
    (
        "The staging database lives at billing-db.staging.internal:5369.",
        "Heads up, they moved it to billing-db.staging.internal:6020 this morning.",
    ),
    ("The node version is 18.19 on CI.", "Turns out the node version is now 20.11."),
    (
        "CI runs the suite with --workers=4 at the moment.",
        "They gave CI bigger boxes: --workers=8.",
    ),
    (
        "The API base URL is `https://api.staging.example.com/v1`.",
        "From today the API base URL is `https://api.example.com/v2`.",
    ),
    ("Our tests talk to postgres://app@db1.internal:5432/app.", "db1.internal:6432 is the pooler."),
]


@pytest.mark.parametrize(("old", "new"), CHANGED_SETTINGS)
def test_a_later_user_message_that_changes_a_setting_supersedes_the_earlier_one(
    old: str, new: str
) -> None:
    facts = extract_facts(
        conversation(
            ("user", f"Please look at the flaky export. {old}"),
            ("assistant", [text("Looking.")]),
            ("user", f"Thanks. {new}"),
            ("assistant", [text("Noted.")]),
        )
    )
    assert facts.constraints[-2:] == (old, new)
    assert supersedes(new, old) is True
    assert supersedes(old, new) is True  # either way round it is a change of value
    assert changes_setting(setting_values(new), setting_values(old)) is True


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Redis runs on cache.internal:6379.", "Postgres runs on db.internal:5432."),
        ("The crash is in src/app.ts:128 somewhere.", "Now it crashes in app.ts:140 again."),
        ("The server listens on localhost:3000.", "The worker listens on localhost:4000."),
        ("Locally I have PORT=3000 set.", "PORT=3000 works, thanks."),
        ("The retry count is 3.", "The timeout count is 5."),
        ("The issue is #412.", "It is 5 pm here."),
        ("See https://example.com/list?page=2 for it.", "And https://example.com/list?page=3 too."),
    ],
)
def test_sentences_that_do_not_change_a_setting_supersede_nothing(first: str, second: str) -> None:
    facts = extract_facts(
        conversation(
            ("user", first),
            ("assistant", [text("OK.")]),
            ("user", second),
            ("assistant", [text("OK.")]),
        )
    )
    assert facts.constraints == ()
    assert changes_setting(setting_values(second), setting_values(first)) is False


def test_setting_values() -> None:
    assert setting_values("CI runs with `LIMIT=918`, DEBUG=1 and --workers=4.") == {
        "limit": frozenset({"918"}),
        "debug": frozenset({"1"}),
        "--workers": frozenset({"4"}),
    }
    assert setting_values("Use postgres://u@db.internal:5432/app, not 127.0.0.1:5432.") == {
        "db.internal:": frozenset({"5432"})
    }
    assert setting_values("The staging port is now 6543.") == {
        "the staging port": frozenset({"6543"})
    }
    assert setting_values("if x == 1 and self.y = 2, see a.py:12:4") == {}


def test_a_setting_changed_after_an_earlier_compaction_supersedes_what_it_recorded() -> None:
    first = extract_facts(
        conversation(
            ("user", "Fix the importer. The batch size is 500 for now."),
            ("assistant", [text("OK.")]),
        )
    )
    assert first.constraints == ()
    second = extract_facts(
        conversation(("user", "The batch size is 2000 now, ops raised it.")), previous=first
    )
    assert second.constraints == (
        "The batch size is 500 for now.",
        "The batch size is 2000 now, ops raised it.",
    )


def test_constraints_come_from_sentences_and_skip_code() -> None:
    facts = extract_facts(
        conversation(
            (
                "user",
                "Please keep the API stable. We\nshould not rename the endpoints.\n"
                "```\nnever = True  # not a rule\n```\n"
                '{"config": "do not read this"}\n'
                "Can you use the cache instead of the DB? What should we do next?\nno wait",
            )
        )
    )
    assert facts.constraints == (
        "Please keep the API stable.",
        "We should not rename the endpoints.",
        "Can you use the cache instead of the DB?",
    )


def test_a_rule_goes_on_past_an_abbreviation() -> None:
    facts = extract_facts(
        conversation(
            (
                "user",
                "4. Use multiple hues (e.g. a diverging color palette) in the color scale. "
                "Never mock the DB, i.e. the tests hit Postgres vs. SQLite both. Thanks.",
            )
        )
    )
    assert facts.constraints == (
        "Use multiple hues (e.g. a diverging color palette) in the color scale.",
        "Never mock the DB, i.e. the tests hit Postgres vs. SQLite both.",
    )


def test_should_as_a_judgement_sets_no_rule() -> None:
    facts = extract_facts(
        conversation(
            (
                "user",
                "its fine, i saw the output on localhost, that should be good. This should work "
                "now. Tests should be in the tests folder. It should work with Python 3.9.",
            )
        )
    )
    assert facts.constraints == (
        "Tests should be in the tests folder.",
        "It should work with Python 3.9.",
    )


def test_an_adjective_ending_in_only_sets_no_rule() -> None:
    facts = extract_facts(
        conversation(
            (
                "user",
                "The mount is read-only and the beta is invite-only. Only edit the tests. "
                "Use only pnpm.",
            )
        )
    )
    assert facts.constraints == ("Only edit the tests.", "Use only pnpm.")


def test_a_sentence_between_the_labels_of_a_copied_page_sets_no_rule() -> None:
    page = (
        "POST\n/cases/{caseId}/follow-ups\n\nParameters\nCancel\nReset\nName    Description\n"
        "caseId *\nstring\nRequest URL\nhttp://localhost:8080/cases/7\nServer response\n"
        "Failed to fetch.\nPossible Reasons:\n\nCORS\nNetwork Failure\n"
        'URL scheme must be "http" or "https" for CORS request.\nResponses\n'
        "Why does it fail? Never restart the server without asking.\n"
    )
    facts = extract_facts(conversation(("user", page)))
    # the console's text is pasted, the last line typed
    assert facts.constraints == ("Never restart the server without asking.",)


def test_a_brief_of_one_line_sections_keeps_its_rules() -> None:
    brief = "".join(
        f"{title}\n{rule}\n"
        for title, rule in (
            ("Stack", "Use Postgres 16."),
            ("Style", "Never add a dependency without asking."),
            ("Tests", "Always run pytest before a commit."),
            ("Deploy", "Ship it from main."),
            ("Docs", "Keep the README short."),
            ("Data", "The exports must stay CSV."),
            ("Review", "Prefer small pull requests."),
            ("Release", "Tag every release."),
        )
    )
    facts = extract_facts(conversation(("user", brief)))
    # eight labels, none two in a row: sections, not a page
    assert facts.constraints == (
        "Use Postgres 16.",
        "Never add a dependency without asking.",
        "Always run pytest before a commit.",
        "Keep the README short.",
        "The exports must stay CSV.",
        "Prefer small pull requests.",
    )


def test_a_rule_that_introduces_a_list_is_read_with_its_short_items() -> None:
    facts = extract_facts(
        conversation(
            (
                "user",
                "Add the export button. Do not change:\n- the Reader classes\n- embedder/base.py\n"
                "\nRight now it only works like this:\n"
                f"1. {'The document class keeps its content as text and embeds it. ' * 3}\n"
                "2. Inserts take a path.\n"
                "Never touch:\n```\nmigrations/\n```\n",
            ),
            (
                "assistant",
                [text("Plan:\n- use the cache instead of the DB\n- keep the API")],
            ),
        )
    )
    # "Right now it only works like this:" introduces prose (an item too long to be a list's),
    # and "Never touch:" code: read alone, neither says anything, and neither is a constraint
    assert facts.constraints == ("Do not change: the Reader classes; embedder/base.py",)
    # the assistant's lists are read item by item, as before
    assert facts.decisions == ("use the cache instead of the DB",)


def _fixture_facts(name: str) -> Facts:
    transcript = read_transcript(str(TRANSCRIPTS / name))
    return extract_facts(get_dialect(transcript.format).context(transcript))


@pytest.mark.parametrize(
    ("name", "goal", "modified", "commands"),
    [
        (
            "claude-code-session.jsonl",
            "The date parser in src/almanac/dates.py crashes",
            ("/home/dana/src/almanac/src/almanac/dates.py",),
            (("python -m pytest tests/test_dates.py -q", "ok"),),
        ),
        (
            "claude-code-interrupted.jsonl",
            "Deploy the docs site to the staging bucket.",
            (),
            (
                ("make docs", "ok"),
                ("aws s3 sync site/ s3://almanac-docs-staging --delete", "unknown"),
            ),
        ),
        (
            "codex-session.jsonl",
            "The totals test fails since I added discounts.",
            ("invoicer/totals.py",),
            (
                ("pytest -q tests/test_totals.py", "failed"),
                ("pytest -q", "ok"),  # a successful read (`sed -n`) is a file read, not listed
            ),
        ),
        (  # code mode: commands and patches inside `exec` scripts
            "codex-code-mode.jsonl",
            "Cache entries expire after one second",
            ("src/cache.ts",),
            (("npm test -- cache", "ok"),),  # run again last; `rg` and `sed -n` only read
        ),
        ("codex-unicode.jsonl", "この README を日本語に翻訳して", ("README.ja.md",), ()),
        (
            "pi-branched.jsonl",
            "Rename getUser to fetchUser across the codebase.",
            ("src/api/users.ts", "src/pages/profile.tsx"),
            (),  # `grep` only reads
        ),
        (
            "pi-session.jsonl",
            "The /forecast endpoint returns 500",
            ("src/lib/geo.ts",),
            (("npm test -- forecast", "ok"),),  # the commit is a report
        ),
        ("openai-session.jsonl", "The /forecast endpoint returns 500", ("src/lib/geo.ts",), ()),
        (
            "openai-hermes.jsonl",
            "How much free disk space is left on the server?",
            (),
            (),  # `df -h /` only reads
        ),
        ("anthropic-session.jsonl", "The /forecast endpoint returns 500", (), ()),
        (
            "anthropic-interrupted.jsonl",
            "Run the full test suite and fix what fails.",
            (),
            (("npm test", "unknown"),),
        ),
    ],
)
def test_facts_of_fixtures(
    name: str, goal: str, modified: tuple[str, ...], commands: tuple[tuple[str, str], ...]
) -> None:
    facts = _fixture_facts(name)
    assert facts.goal.startswith(goal)
    assert facts.files_modified == modified
    assert tuple((c.command, c.outcome) for c in facts.commands) == commands


def test_codex_code_mode_reads_count_as_files_read() -> None:
    assert _fixture_facts("codex-code-mode.jsonl").files_read == ("src/cache.ts",)


def test_codex_fixture_error_is_resolved_by_the_wider_test_run() -> None:
    facts = _fixture_facts("codex-session.jsonl")
    assert facts.errors == (
        ErrorFact(
            "tests/test_totals.py:14: AssertionError",
            True,
            "exec_command",
            "pytest -q tests/test_totals.py",
        ),
    )


def test_a_success_resolves_only_the_errors_of_its_command_or_of_its_path() -> None:
    steps = [  # (tool, arguments, output, failed)
        ("Bash", {"command": "pytest -q tests/test_a.py"}, "E AssertionError: a", True),
        ("Bash", {"command": "npm run build"}, "Error: Cannot find module 'x'", True),
        ("Read", {"file_path": "src/x.py"}, "Error: file is locked", True),
        ("Bash", {"command": "cd /repo && pytest -q"}, "3 passed", False),  # the wider run
        ("Bash", {"command": "npm test"}, "ok", False),  # another npm command
        ("Grep", {"pattern": "x", "path": "src/x.py"}, "1 match", False),  # another kind
        ("Bash", {"command": "pytest -q tests/test_a.py"}, "E AssertionError: a", True),
        ("Edit", {"file_path": "src/x.py", "old_string": "a", "new_string": "b"}, "ok", False),
    ]
    turns: list[tuple[str, Any]] = [("user", "Fix the tests.")]
    for n, (tool, arguments, output, failed) in enumerate(steps):
        turns.append(("assistant", [call(f"c{n}", tool, **arguments)]))
        turns.append(("user", [result(f"c{n}", output, is_error=failed)]))
    facts = extract_facts(conversation(*turns))
    assert [(e.text, e.where, e.resolved) for e in facts.errors] == [
        ("Error: Cannot find module 'x'", "npm run build", False),
        ("Error: file is locked", "src/x.py", True),  # by the edit, not by the search
        ("E AssertionError: a", "pytest -q tests/test_a.py", False),  # it failed again
    ]


def test_the_same_failure_again_with_other_numbers_is_one_error_the_latest() -> None:
    """A command that fails again the same way, in another process (its id in the line) or on
    another port, is one error, given as it read last; another command's is another."""
    failed = "0 [main] bash ({}) bash.exe: *** fatal error - couldn't create signal pipe"
    steps = [
        ("bash export.sh .", failed.format(2676)),
        ("bash export.sh .", failed.format(10612)),
        ("bash other.sh", failed.format(77)),
        ("npm run dev", "Error: listen EADDRINUSE: address already in use :::3000"),
        ("npm run dev", "Error: listen EADDRINUSE: address already in use :::3001"),
    ]
    turns: list[tuple[str, Any]] = [("user", "Export the session.")]
    for n, (command, output) in enumerate(steps):
        turns.append(("assistant", [call(f"c{n}", "Bash", command=command)]))
        turns.append(("user", [result(f"c{n}", f"Exit code 1\n{output}", is_error=True)]))
    facts = extract_facts(conversation(*turns))
    assert [(e.text, e.where) for e in facts.errors] == [
        (failed.format(10612), "bash export.sh ."),
        (failed.format(77), "bash other.sh"),
        ("Error: listen EADDRINUSE: address already in use :::3001", "npm run dev"),
    ]


def test_a_bare_exit_code_that_later_commands_failed_with_too_is_said_once() -> None:
    """Commands that failed printing nothing but their exit code (curl timing out, 28): the
    line is said once, for the latest of them (each is listed under Commands as failed); an
    error with a message, or a resolved one, is kept for each command."""
    steps = [
        ("curl -s --max-time 5 http://localhost:3001/", "Command exited with code 28"),
        ("curl -s --max-time 9 http://localhost:3001/chat", "Command exited with code 28"),
        ("npm run build", "Command exited with code 1\nError: Cannot find module 'x'"),
        ("curl -s --max-time 20 http://localhost:3001/login", "Command exited with code 28"),
        ("pytest -q", "Command exited with code 1"),
    ]
    turns: list[tuple[str, Any]] = [("user", "Is the server up?")]
    for n, (command, output) in enumerate(steps):
        turns.append(("assistant", [call(f"c{n}", "Bash", command=command)]))
        turns.append(("user", [result(f"c{n}", output, is_error=True)]))
    facts = extract_facts(conversation(*turns))
    assert [(e.text, e.where) for e in facts.errors] == [
        ("Error: Cannot find module 'x'", "npm run build"),
        (
            "Command exited with code 28 (curl: timed out)",
            "curl -s --max-time 20 http://localhost:3001/login",
        ),
        ("Command exited with code 1", "pytest -q"),
    ]
    assert [c.outcome for c in facts.commands] == ["failed"] * 5


def _resolved_after(steps: list[tuple[str, str, bool]]) -> dict[str, bool]:
    """Whether each error is resolved once the shell `steps` (command, output, failed) ran, by
    the command it came from (one of the commands an unresolved line is said once for)."""
    turns: list[tuple[str, Any]] = [("user", "Make the build pass.")]
    for n, (command, output, failed) in enumerate(steps):
        turns.append(("assistant", [call(f"c{n}", "Bash", command=command)]))
        turns.append(("user", [result(f"c{n}", output, is_error=failed)]))
    errors = extract_facts(conversation(*turns)).errors
    return {where: e.resolved for e in errors for where in e.where.split("; ")}


def test_a_chain_that_passed_resolves_the_errors_of_each_of_its_commands() -> None:
    """`a && b` succeeded only when `a` and `b` did: the errors of `cargo test` are resolved by
    `cargo fmt && cargo test`; not by `cargo test || true`, which passes whatever the tests do."""
    steps = [  # (command, output, failed)
        ("cargo test --workspace", "error[E0277]: the trait bound is not satisfied", True),
        ("npm run build", "Error: Cannot find module 'x'", True),
        ("cargo fmt --all && cargo test --workspace", "test result: ok", False),
        ("npm run build || true", "Error: Cannot find module 'x'", False),
    ]
    resolved = _resolved_after(steps)
    assert resolved["cargo test --workspace"] is True
    assert resolved["npm run build"] is False


def test_the_error_of_a_failed_chain_is_resolved_once_each_of_its_commands_passed() -> None:
    """Which command of a failed `a && b` printed its error is not known: it is resolved once
    `a` and `b` have each succeeded since, alone or in other chains; one of them is not
    enough. A command that only sets the shell or the project up (`source`, `export`, `mkdir`,
    `npm pkg set`) need not pass again."""
    steps = [  # (command, output, failed)
        ("cargo fmt --check && cargo clippy", "error: unused import `Foo`", True),
        ("make lint && make test", "Error 2: lint failed", True),
        ("npm ci && npm test", "npm ERR! Test failed.", True),
        ("source .venv/bin/activate && pytest -q", "E   AssertionError", True),
        ("npm pkg set type=module && npx hardhat compile", "ReferenceError: require", True),
        ("mkdir -p out && make dist", "make: *** [dist] Error 1", True),
        ("cd /repo && pytest -q", "3 passed", False),  # `source` only set the shell up
        ("npx hardhat compile", "Compiled 3 Solidity files", False),  # `npm pkg set` set up
        ("make dist", "built", False),  # `mkdir -p` made the folder for it
        ("cargo fmt --check", "", False),
        ("npm ci", "added 12 packages", False),  # its first command: not a narrower run of it
        ("make test", "ok", False),
        ("cargo clippy && cargo build", "Finished", False),
    ]
    resolved = _resolved_after(steps)
    assert resolved == {
        "cargo fmt --check && cargo clippy": True,
        "make lint && make test": False,
        "npm ci && npm test": False,
        "source .venv/bin/activate && pytest -q": True,
        "npm pkg set type=module && npx hardhat compile": True,
        "mkdir -p out && make dist": True,
    }


def test_a_command_that_passes_resolves_its_error_where_another_command_printed_it() -> None:
    """The same error line (numbers aside) printed by another command before is the same
    failure: once a command that printed it passes, its cause is gone. Not an exit code alone,
    nor a line printed only after that pass."""
    config = "Error: Invalid package config C:\\work\\app\\package.json."
    steps = [  # (command, output, failed)
        ("npx hardhat compile", config, True),
        ("node -e \"require('hardhat/package.json')\"", config, True),
        ("make lint", "Command exited with code 2", True),
        ("make test", "Command exited with code 2", True),
        ("npx hardhat compile", "Compiled 3 Solidity files", False),
        ("make lint", "ok", False),
        ("npm run check", config, True),
    ]
    resolved = _resolved_after(steps)
    assert resolved == {
        "npx hardhat compile": True,
        "node -e \"require('hardhat/package.json')\"": True,
        "make lint": True,
        "make test": False,  # only an exit code: another failure, for all that says
        "npm run check": False,  # printed after the pass: the cause is back
    }


def test_the_error_of_a_failed_chain_that_names_its_command_is_that_command_s() -> None:
    """`git add && git commit && git push` that printed `failed to push some refs` failed at
    `git push` (the commands before it passed, or it would not have run): a later `git pull
    --rebase && git push` that succeeds resolves it. A line that names no command of its chain,
    or more than one, still waits for every command."""
    steps = [  # (command, output, failed)
        (
            "git add README.md && git commit -m 'Final' && git push origin main",
            "[main c83eea1] Final\n ! [rejected] main -> main (fetch first)\n"
            "error: failed to push some refs to 'https://github.com/o/r.git'",
            True,
        ),
        ("npm run build && npm run lint", "Error: lint found 3 problems in the build", True),
        ("npm run typecheck && npm test", "error TS2304: Cannot find name 'x'", True),
        ("git pull --rebase origin main && git push origin main", "main -> main", False),
        ("npm run lint", "ok", False),
        ("npm test", "ok", False),
    ]
    resolved = _resolved_after(steps)
    assert resolved == {
        "git add README.md && git commit -m 'Final' && git push origin main": True,
        "npm run build && npm run lint": False,  # names both: `build` and `lint`
        "npm run typecheck && npm test": False,  # names neither: `typecheck` never passed
    }


_ENRICHED = (
    "## Your Capabilities\n\nYou are **model-a**. Tier: heavy | Strengths: explore, plan\n\n"
    "## Required: Self-Assessment Before Acting\n\nBefore taking any action, you must reason "
    "through the following checklist explicitly in your response.\n\n## Task\n\n"
)


def _pi_with_an_extension(tmp_path: Path) -> Path:
    """A pi session whose extension adds, after each prompt, a `custom_message` that wraps the
    prompt in instructions of its own, and a timing note after each turn."""
    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-04-27T07:52:00.000Z"},
    ]
    parent = None

    def add(entry: dict[str, Any]) -> None:
        nonlocal parent
        entry_id = f"e{len(lines)}"
        lines.append(
            {**entry, "id": entry_id, "parentId": parent, "timestamp": "2026-04-27T07:52:01.000Z"}
        )
        parent = entry_id

    prompts = ["Why is the user agent `OpenAI/JS 6.26.0`?", "Where are the headers loaded?"]
    for n, prompt in enumerate(prompts):
        add(
            {
                "type": "message",
                "message": {"role": "user", "content": [{"type": "text", "text": prompt}]},
            }
        )
        add(
            {
                "type": "custom_message",
                "customType": "enriched-prompt",
                "display": False,
                "content": [{"type": "text", "text": _ENRICHED + prompt}],
            }
        )
        add(
            {
                "type": "message",
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": f"Answer {n}: the SDK sets it."}],
                    "api": "openai-completions",
                    "provider": "p",
                    "model": "m",
                    "stopReason": "stop",
                    "usage": {
                        "input": 10,
                        "output": 5,
                        "cacheRead": 0,
                        "cacheWrite": 0,
                        "totalTokens": 15,
                    },
                },
            }
        )
        add(
            {
                "type": "custom_message",
                "customType": "prompt-summary",
                "display": True,
                "content": [{"type": "text", "text": f"Prompt summary ({n + 1}m 2s)"}],
            }
        )
    path = tmp_path / "pi-extension.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return path


def test_a_pi_extension_s_messages_are_not_the_user_s(tmp_path: Path) -> None:
    """pi sends an extension's `custom_message` to the model as a user message, but nobody typed
    it: the user messages, the goal and the prompts a cut starts from are the typed ones, and
    the summary does not repeat the extension's instructions."""
    transcript = read_transcript(str(_pi_with_an_extension(tmp_path)))
    messages = get_dialect(transcript.format).messages(transcript)
    facts = extract_facts(messages)
    assert facts.user_messages == (
        "Why is the user agent `OpenAI/JS 6.26.0`?",
        "Where are the headers loaded?",
    )
    assert facts.goal == facts.user_messages[0]
    prompts = [m for m in messages if is_prompt(m)]
    assert [m.text for m in prompts] == list(facts.user_messages)
    text, _ = extractive_facts(facts, 2000, lambda t: len(t) // 4)
    assert "Your Capabilities" not in text and "Prompt summary" not in text


@pytest.mark.parametrize("path", sorted(TRANSCRIPTS.glob("*.jsonl")), ids=lambda p: p.name)
def test_every_fixture_gives_facts_with_a_goal(path: Path) -> None:
    transcript = read_transcript(str(path))
    facts = extract_facts(get_dialect(transcript.format).messages(transcript))
    assert facts.goal
    assert facts.goal == facts.user_messages[0][: len(facts.goal)]


# --------------------------------------------------------------------------------------------
# The corpus (real transcripts), when present

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="corpus not available")
CORPUS_FILES = sorted(p.name for p in CORPUS.glob("*.jsonl")) if CORPUS.is_dir() else []


def _corpus_facts(name: str) -> Facts:
    transcript = read_transcript(str(CORPUS / name))
    return extract_facts(get_dialect(transcript.format).messages(transcript))


@needs_corpus
@pytest.mark.parametrize("name", CORPUS_FILES)
def test_every_corpus_file_gives_facts(name: str) -> None:
    facts = _corpus_facts(name)
    assert facts.goal
    assert all(not m.startswith(("<", "Caveat:", "# AGENTS.md")) for m in facts.user_messages)
    assert set(facts.files_modified) <= set(facts.files_modified)  # a tuple of unique paths
    assert len(set(facts.files_modified)) == len(facts.files_modified)


@needs_corpus
def test_hand_checked_corpus_facts() -> None:
    rain = _corpus_facts("claude-code-will-it-rain.jsonl")
    assert "c:\\Users\\vassa\\Documents\\dev\\will-it-rain\\src\\weather.ts" in rain.files_modified
    assert (
        "Rember that you are using vscode in windows, please use docker if you encounter "
        "problems for tests and build" in rain.constraints
    )
    assert "But don't display if there is no chance" in rain.constraints
    pi = _corpus_facts("pi-before-compaction.jsonl")
    assert (
        "/Users/badlogic/workspaces/pi-mono/packages/coding-agent/src/core/agent-session.ts"
        in pi.files_modified
    )
    assert (
        "i would only want e2e tests for AgentSession, anything else is shitty." in pi.constraints
    )
    assert any("TS2339" in e.text and e.resolved for e in pi.errors)
    scout = _corpus_facts("codex-scout-applypatch.jsonl")
    assert scout.files_modified == (".config/opencode/opencode.jsonc", ".zshrc")
    fundwise = _corpus_facts("claude-code-fundwise.jsonl")
    assert fundwise.errors[0].text == (
        "This project is configured to use yarn because /Users/sarthiborkar/package.json has a "
        '"packageManager" field'
    )
    review = _corpus_facts("claude-code-pv-case-review.jsonl")
    assert "Keep MergeService pure — no HTTP stuff, no repository calls." in review.constraints
    assert (
        "/Users/ashitaairan/Documents/pv-case-review/backend/build.gradle" in review.files_modified
    )
    raze = _corpus_facts("codex-raze.jsonl")
    assert "libs/agno/agno/knowledge/knowledge.py" in raze.files_read
    # the commits `git commit` printed, the newest last
    commits = [name for name in pi.identifiers if name.startswith("commit ")]
    assert commits[-2:] == ["commit 2c014c1 (branch refactor)", "commit 803d4b6 (branch refactor)"]


@needs_corpus
def test_extracting_the_largest_corpus_file_is_fast() -> None:
    largest = max(CORPUS.glob("*.jsonl"), key=lambda p: p.stat().st_size)
    transcript = read_transcript(str(largest))
    messages = get_dialect(transcript.format).messages(transcript)
    started = time.perf_counter()
    extract_facts(messages)
    # a guard against time that grows with the square of the session (seconds here), not a
    # speed target: it takes about 0.03 s, and a busy machine can make that ten times more
    assert time.perf_counter() - started < 3


def _codex_facts(*items: dict[str, Any]) -> Facts:
    """The facts of a Codex rollout holding `items` after a user prompt."""
    meta = {
        "id": "s",
        "timestamp": "2026-09-01T00:00:00.000Z",
        "cwd": "/r",
        "cli_version": "0.150.1",
    }
    lines = [
        {"timestamp": "2026-09-01T00:00:00.000Z", "type": "session_meta", "payload": meta},
        *(
            {"timestamp": "2026-09-01T00:00:01.000Z", "type": "response_item", "payload": item}
            for item in (
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "Run the tests."}],
                },
                *items,
            )
        ),
    ]
    records = tuple(Record(raw=line) for line in lines)
    transcript = Transcript(records=records, format="codex")
    return extract_facts(get_dialect("codex").context(transcript))


def _script(call_id: str, cmd: str) -> dict[str, Any]:
    script = f"const r = await tools.exec_command({{cmd: {cmd!r}}});\ntext(r.output);\n"
    return {"type": "custom_tool_call", "call_id": call_id, "name": "exec", "input": script}


def _output(call_id: str, head: str, text: str = "", kind: str = "custom") -> dict[str, Any]:
    parts = [{"type": "input_text", "text": head}, {"type": "input_text", "text": text}]
    output_type = "custom_tool_call_output" if kind == "custom" else "function_call_output"
    return {"type": output_type, "call_id": call_id, "output": parts}


def _function(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "type": "function_call",
        "call_id": call_id,
        "name": name,
        "arguments": json.dumps(arguments),
    }


RUNNING = "Script running with cell ID 28\nWall time 10.0 seconds\nOutput:\n"
DONE = "Script completed\nWall time 2.0 seconds\nOutput:\n"


def test_a_script_still_running_takes_its_outcome_from_the_wait_on_its_cell() -> None:
    facts = _codex_facts(
        _script("x1", "npx jest"),
        _output("x1", RUNNING),
        _function("w1", "wait", cell_id="28", yield_time_ms=10000),
        _output("w1", RUNNING, "PASS a.test.ts\n", kind="function"),
        _function("w2", "wait", cell_id="28", yield_time_ms=10000),
        _output(
            "w2",
            "Script failed\nWall time 1.0 seconds\nOutput:\n",
            "Error: 2 tests failed",
            kind="function",
        ),
        _script("x2", "npm run lint"),
        _output("x2", RUNNING.replace("28", "29")),
        # a wait on a cell nothing is known to run in reads as the shell output it brings
        _function("w3", "wait", cell_id="7"),
        _output("w3", DONE, "make: *** [all] Error 2\nexit code 2", kind="function"),
    )
    assert [(c.command, c.outcome) for c in facts.commands] == [
        ("npx jest", "failed"),
        ("npm run lint", "unknown"),  # still running when the messages end
    ]
    assert [(e.text, e.where) for e in facts.errors] == [
        ("Error: 2 tests failed", "npx jest"),
        ("make: *** [all] Error 2", ""),
    ]


def test_a_process_still_running_takes_its_outcome_from_write_stdin_to_its_session() -> None:
    running = (
        "Chunk ID: a1\nWall time: 10.0 seconds\nProcess running with session ID 33809\nOutput:\n"
    )
    facts = _codex_facts(
        _function("c1", "exec_command", cmd="pytest -q"),
        {"type": "function_call_output", "call_id": "c1", "output": running + "....\n"},
        _function("c2", "write_stdin", session_id=33809, chars="", yield_time_ms=1000),
        {
            "type": "function_call_output",
            "call_id": "c2",
            "output": "Chunk ID: a2\nWall time: 3.0 seconds\nProcess exited with code 1\n"
            "Output:\nFAILED tests/test_a.py::test_port\n",
        },
        # a poll of a session nothing is known to run in is a shell call of its own
        _function("c3", "write_stdin", session_id=1, chars="q\n"),
        {"type": "function_call_output", "call_id": "c3", "output": "Process exited with code 1"},
    )
    assert [(c.command, c.outcome) for c in facts.commands] == [("pytest -q", "failed")]
    assert [(e.text, e.where) for e in facts.errors] == [
        ("FAILED tests/test_a.py::test_port", "pytest -q"),
        ("Process exited with code 1", ""),  # the process of session 1, started earlier
    ]


def test_a_poll_that_could_not_write_to_its_process_says_nothing_of_the_command() -> None:
    """`write_stdin failed: stdin is closed ...` is the poll's own failure (Ctrl-C sent to a
    process started without a terminal), not what the command printed: the command's outcome
    stays unknown, and a later poll of the same session still gives it."""
    running = "Chunk ID: a1\nWall time: 1.0 seconds\nProcess running with session ID 7\n"
    refused = "write_stdin failed: stdin is closed for this session; rerun with tty=true"
    first = _codex_facts(
        _function("c1", "exec_command", cmd="find / -name idea.md"),
        {"type": "function_call_output", "call_id": "c1", "output": running},
        _function("c2", "write_stdin", session_id=7, chars="\u0003"),
        {"type": "function_call_output", "call_id": "c2", "output": refused},
    )
    assert [(c.command, c.outcome, c.detail) for c in first.commands] == [
        ("find / -name idea.md", "unknown", "")
    ]
    assert first.errors == ()
    later = _codex_facts(
        _function("c1", "exec_command", cmd="find / -name idea.md"),
        {"type": "function_call_output", "call_id": "c1", "output": running},
        _function("c2", "write_stdin", session_id=7, chars="\u0003"),
        {"type": "function_call_output", "call_id": "c2", "output": refused},
        _function("c3", "write_stdin", session_id=7, chars=""),
        {
            "type": "function_call_output",
            "call_id": "c3",
            "output": "Process exited with code 0\nOutput:\n/home/u/idea.md\n",
        },
    )
    assert [(c.command, c.outcome, c.detail) for c in later.commands] == [
        ("find / -name idea.md", "ok", "/home/u/idea.md")
    ]


_CUE_WORDS = [
    "We'll",
    "USE",
    "use",
    "Decided",
    "instead",
    "OF",
    "I'll",
    "switch",
    "Switched",
    "from",
    "x.py",
    "to",
    "Rather",
    "than",
    "never",
    "Don't",
    "MUST",
    "should",
    "Ensure",
    "ok",
    "ſhould",
    "İnstead",
    "—",
    ",",
    "\n",
    "  ",
]
"""Words that are cues or not, in both cases, with look-alike non-ASCII letters."""


@settings(max_examples=300, deadline=None)
@given(words=st.lists(st.sampled_from(_CUE_WORDS), max_size=12))
def test_cues_find_in_ascii_text_what_a_case_blind_search_finds(words: list[str]) -> None:
    """A cue searches lowercased ASCII text case-sensitively: the same span as case-blind."""
    text = " ".join(words)
    for cue in (_CONSTRAINT, _DECISION, _SHOULD, _STRONG):
        blind = re.compile(cue._lower.pattern, re.IGNORECASE).search(text)
        found = cue.search(text)
        assert (found.span() if found else None) == (blind.span() if blind else None)


_CODE_LIKE = re.compile(r'^[\[{<(]|\{"|":\s*["\[{\d]|\\n|^\w+(?:\s*=|\()\S|;\s*$')
"""What `_code_like` decides, as one regular expression."""


_LINE_PIECES = [
    '{"',
    '"',
    ":",
    ": ",
    "1",
    "[",
    "{",
    "(",
    "<",
    "x",
    "x=",
    "f(",
    " = ",
    "=",
    "\\n",
    "\\",
    "n",
    ";",
    " ",
    "\t",
    "\u00a0",
    "é",
    "word",
    ".",
]
"""Pieces of code, JSON and prose that `_code_like` tells apart."""


@settings(max_examples=400, deadline=None)
@given(line=st.lists(st.sampled_from(_LINE_PIECES), max_size=10).map("".join))
def test_code_like_lines_are_what_the_regular_expression_finds(line: str) -> None:
    assert _code_like(line) == bool(_CODE_LIKE.search(line))


@pytest.mark.parametrize(
    "text", ["Process exited with code 2", "tail\nExit code: 0", '{"exit_code": 3}', "no code"]
)
def test_exit_codes_are_found_near_either_end(text: str) -> None:
    expected = {"Process exited with code 2": 2, "tail\nExit code: 0": 0, '{"exit_code": 3}': 3}
    assert exit_code("x" * 1000 + text) == expected.get(text)
    assert exit_code(text + "x" * 1000) == expected.get(text)


def test_the_steps_of_a_plan_the_agent_announces_mid_turn_are_decisions() -> None:
    """ "Here's the plan:" then a list, then the work: each step is what it chose to do. A plan
    named inside a sentence ("The test plan covers:") announces none."""
    plan = (
        "Good, I have everything I need. Here's the plan:\n"
        "- Add a `backstop` service to `docker-compose.yml` with a `testing` profile (so it "
        "doesn't start with normal `docker-compose up`)\n"
        "- Use `host.docker.internal:8081` so the backstop container can reach WordPress\n\n"
        "Let me create these files now."
    )
    made = conversation(
        ("user", "Add visual regression tests with BackstopJS."),
        (
            "assistant",
            [text(plan), call("w", "Write", file_path="/repo/backstop.json", content="{}")],
        ),
        ("user", [result("w", "ok")]),
        ("assistant", [text("The test plan covers:\n- the landing pages\n- the checkout")]),
        ("assistant", [call("r", "Read", file_path="/repo/docker-compose.yml")]),
        ("user", [result("r", "services: {}")]),
        ("assistant", "Done."),
    )
    decisions = extract_facts(made).decisions
    assert decisions[:2] == (
        "Add a `backstop` service to `docker-compose.yml` with a `testing` profile (so it "
        "doesn't start with normal `docker-compose up`)",
        "Use `host.docker.internal:8081` so the backstop container can reach WordPress",
    )
    assert not any("landing pages" in d for d in decisions)


def test_the_latest_test_count_is_where_the_work_stands_and_replaces_the_older() -> None:
    """A test run that succeeded says how many tests passed on its last counting line (without
    pytest's rulers): the latest is kept before the other commands, an older count is dropped
    (it no longer holds), and a read of a log that counts tests is no test run."""
    first = "collected 10 items\n\n..........\n\n========== 10 passed in 3.32s ==========\n"
    later = "collected 11 items\n\n...........\n\n========== 11 passed in 3.64s ==========\n"
    turns: list[tuple[str, Any]] = [("user", "Add the reset help test.")]
    for n, (command, output) in enumerate(
        [
            ("pytest -q tests/test_cli.py", first),
            *[
                (f"python scripts/step{k}.py --write out{k}.json", "wrote it\nall done\n")
                for k in range(30)
            ],
            (".venv/bin/pytest -q", later),
            ("cat logs/old-run.txt", "== 3 passed in 0.1s ==\n"),
        ]
    ):
        turns += [
            ("assistant", [call(f"c{n}", "Bash", command=command)]),
            ("user", [result(f"c{n}", output)]),
        ]
    facts = extract_facts(conversation(*turns, ("assistant", "Done.")))
    details = {c.command: c.detail for c in facts.commands}
    assert details["pytest -q tests/test_cli.py"] == ""  # the later count replaced it
    assert details[".venv/bin/pytest -q"] == "11 passed in 3.64s"
    alone = 0
    for budget in range(40, 1000, 20):
        summary, _ = extractive_facts(facts, budget, lambda t: len(t) // 4)
        assert "10 passed" not in summary, budget
        if "scripts/step" in summary:  # the other commands (as long as it) come after it
            assert "11 passed in 3.64s" in summary, budget
        alone += "11 passed in 3.64s" in summary and "scripts/step" not in summary
    assert alone  # and at a tight budget it is shown where they are not


def test_a_commit_made_before_its_command_failed_is_a_report_all_the_same() -> None:
    """`git commit -m ... && git push` that committed and then could not push: the commit was
    made (git printed its line), and the failure is the push's."""
    command = 'git add -A && git commit -m "feat(converters): add Prusa import" && git push'
    printed = (
        "[main 548dd49] feat(converters): add Prusa import\n 39 files changed\n"
        "ssh: Could not resolve hostname github.com: Name or service not known\n"
        "fatal: Could not read from remote repository.\n"
    )
    made = conversation(
        ("user", "commit and push"),
        ("assistant", [call("g", "Bash", command=command)]),
        ("user", [result("g", "Exit code 128\n" + printed, is_error=True)]),
    )
    facts = extract_facts(made)
    assert facts.reports == ("Committed 548dd49: feat(converters): add Prusa import",)
    assert "commit 548dd49 (branch main)" in facts.identifiers
    assert [e.text for e in facts.errors] == ["fatal: Could not read from remote repository."]
    # a failed commit that printed no commit line made none
    refused = conversation(
        ("user", "commit it"),
        ("assistant", [call("g", "Bash", command='git commit -m "Fix port"')]),
        ("user", [result("g", "Exit code 1\nnothing to commit, working tree clean", True)]),
    )
    assert extract_facts(refused).reports == ()


def test_a_commit_is_a_report_with_its_message_and_hash() -> None:
    facts = _fixture_facts("pi-session.jsonl")
    assert [r for r in facts.reports if r.startswith("Committed")] == [
        "Committed 3f2a1bc: Encode city names in geocoding requests"
    ]
    made = conversation(
        ("user", "commit it"),
        (
            "assistant",
            [call("g", "Bash", command='git add -A && git commit -m "Fix port\n\nbody"')],
        ),
        ("user", [result("g", "[main 2e45f5f] Fix port\n 1 file changed")]),
    )
    facts = extract_facts(made)
    assert facts.reports == ("Committed 2e45f5f: Fix port",)
    assert facts.commands == ()
    assert facts.identifiers == ("commit 2e45f5f (branch main)",)
    # a message given as a here-document (Claude Code's way): its first line
    heredoc = (
        "git commit -m \"$(cat <<'EOF'\nAdd the final URL\n\nCo-Authored-By: A <a@b>\nEOF\n)\""
    )
    made = conversation(
        ("user", "commit it"),
        ("assistant", [call("g", "Bash", command=heredoc)]),
        ("user", [result("g", "[main bf5434b] Add the final URL\n 1 file changed")]),
    )
    assert extract_facts(made).reports == ("Committed bf5434b: Add the final URL",)
    # a quiet commit names no commit: the `git log` after it does
    quiet = 'git add -A && git commit -q -m "Add the REST API" && git log --oneline | head -2'
    made = conversation(
        ("user", "commit it"),
        ("assistant", [call("g", "Bash", command=quiet)]),
        ("user", [result("g", "2a02206 Add the REST API\n954e01a Scaffold the monorepo\n")]),
    )
    assert extract_facts(made).reports == ("Committed 2a02206: Add the REST API",)


def test_a_file_a_failed_call_could_not_read_is_no_file_read() -> None:
    """A read that failed read nothing: the Read tool's file, or the file a shell command's
    error names (not the other files of its chain); a file read before stays read."""
    made = conversation(
        ("user", "look around"),
        ("assistant", [call("a", "Read", file_path="src/gone.py")]),
        ("user", [result("a", "File does not exist.", is_error=True)]),
        ("assistant", [call("b", "Bash", command="cat README.md && sed -n '1,20p' web/app.json")]),
        (
            "user",
            [result("b", "# Title\nsed: can't read web/app.json: No such file", is_error=True)],
        ),
        ("assistant", [call("c", "Read", file_path="src/main.py")]),
        ("user", [result("c", "print(1)")]),
        ("assistant", [call("d", "Bash", command="cat src/main.py")]),
        ("user", [result("d", "cat: src/main.py: Permission denied", is_error=True)]),
    )
    assert extract_facts(made).files_read == ("README.md", "src/main.py")


def test_a_call_cancelled_because_another_failed_is_not_an_error() -> None:
    """Claude Code cancels the calls made beside one that failed: the failure is the error,
    the cancellations say nothing of their own."""
    made = conversation(
        ("user", "ship it"),
        ("assistant", [call("a", "Bash", command="git push"), call("b", "TaskUpdate", id="9")]),
        (
            "user",
            [
                result("a", "error: failed to push some refs", is_error=True),
                result("b", "Cancelled: parallel tool call Bash(git push) errored", is_error=True),
            ],
        ),
    )
    assert [e.text for e in extract_facts(made).errors] == ["error: failed to push some refs"]


def test_a_search_or_a_look_that_finds_nothing_is_not_an_error() -> None:
    searched = conversation(
        ("user", "is it used?"),
        ("assistant", [call("s", "Bash", command='grep -rn "pendingBash" src')]),
        ("user", [result("s", "Exit code 1", is_error=True)]),
        # a look that found nothing: a read-only command, nothing printed, exit 1 or 2
        ("assistant", [call("l", "Bash", command="ls ~/.claude/memory/ 2>/dev/null")]),
        ("user", [result("l", "Exit code 2", is_error=True)]),
        ("assistant", [call("m", "Bash", command="cat notes/MEMORY.md 2>/dev/null")]),
        ("user", [result("m", "Exit code 1", is_error=True)]),
        (
            "assistant",
            [call("g", "Bash", command='echo "== done" && grep -c "\\[x\\]" tasks.md')],
        ),
        ("user", [result("g", "== done\n0\n\nCommand exited with code 1", is_error=True)]),
        # a lookup of programs that did not find each of them
        ("assistant", [call("w", "Bash", command="which node pnpm")]),
        ("user", [result("w", "Exit code 1\n/usr/bin/node", is_error=True)]),
        (
            "assistant",
            [call("p", "Bash", command="Get-Command git,pwsh -ErrorAction SilentlyContinue")],
        ),
        ("user", [result("p", "Exit code 1\nName Source\ngit.exe C:\\Git\\git.exe")]),
        # which programs are there, and their versions: one was not
        (
            "assistant",
            [
                call(
                    "v",
                    "Bash",
                    command="which anchor 2>/dev/null && anchor --version 2>/dev/null; "
                    "which cargo 2>/dev/null && cargo --version 2>/dev/null",
                )
            ],
        ),
        ("user", [result("v", "Exit code 1\n/usr/bin/cargo\ncargo 1.87.0", is_error=True)]),
        # a version asked with no lookup first: the program is what failed
        ("assistant", [call("q", "Bash", command="pnpm --version && grep -c engines a.json")]),
        (
            "user",
            [result("q", "Exit code 1\nThis project is configured to use yarn", is_error=True)],
        ),
        ("assistant", [call("t", "Bash", command="npm test")]),
        ("user", [result("t", "Exit code 1\nError: boom", is_error=True)]),
        # what a look printed when it failed is an error
        ("assistant", [call("c", "Bash", command="cat src/missing.ts")]),
        (
            "user",
            [result("c", "Exit code 1\ncat: src/missing.ts: No such file", is_error=True)],
        ),
    )
    facts = extract_facts(searched)
    assert [e.text for e in facts.errors] == [
        "This project is configured to use yarn",
        "Error: boom",
        "cat: src/missing.ts: No such file",
    ]
    assert [(c.command, c.outcome) for c in facts.commands] == [
        ("which node pnpm", "ok"),  # a look is listed for a one-line answer
        (
            "which anchor 2>/dev/null && anchor --version 2>/dev/null; "
            "which cargo 2>/dev/null && cargo --version 2>/dev/null",
            "ok",
        ),
        ("pnpm --version && grep -c engines a.json", "failed"),
        ("npm test", "failed"),
        ("cat src/missing.ts", "failed"),
    ]


def test_an_error_printed_by_a_call_that_did_not_fail_is_an_error() -> None:
    soft = conversation(
        ("user", "build it"),
        ("assistant", [call("b", "Bash", command="npm run build 2>&1 | head -20")]),
        ("user", [result("b", "> build\nsrc/a.ts(3,1): error TS2304: Cannot find name 'x'.\n")]),
        ("assistant", [call("r", "Read", file_path="src/a.ts")]),
        ("user", [result("r", "throw new Error('not an error of the session')")]),
        ("assistant", [call("w", "exec", code="run()")]),
        ("user", [result("w", "Script error:\nTypeError: x is not a function")]),
    )
    facts = extract_facts(soft)
    assert [(e.text, e.resolved) for e in facts.errors] == [
        ("src/a.ts(3,1): error TS2304: Cannot find name 'x'.", False),
        ("Script error: TypeError: x is not a function", False),
    ]
    assert facts.commands == (
        Command(
            "npm run build 2>&1 | head -20",
            "printed an error",
            "src/a.ts(3,1): error TS2304: Cannot find name 'x'.",
        ),
        Command("run()", "printed an error", "Script error: TypeError: x is not a function"),
    )


def test_user_answers_plans_edits_and_pasted_errors_are_facts() -> None:
    session = conversation(
        ("user", "Set up the API. It crashes:\nTypeError: fetch failed\n    at main (a.ts:3)"),
        (
            "assistant",
            [call("q", "AskUserQuestion", questions=[{"question": "Port?", "options": []}])],
        ),
        ("user", [result("q", 'User has answered your questions: "Port?"="6543, not 5432".')]),
        ("assistant", [call("p", "ExitPlanMode", plan="1. Read the port from PORT\n2. Test it")]),
        ("user", [result("p", "User has approved your plan. You can now start coding.")]),
        (
            "assistant",
            [
                call(
                    "e",
                    "Edit",
                    file_path="a.ts",
                    old_string="port = 5432",
                    new_string="port = 6543",
                )
            ],
        ),
        ("user", [result("e", "The file a.ts has been updated.")]),
        ("assistant", [text("Done. I changed the port in a.ts to 6543 and kept the rest as is.")]),
    )
    facts = extract_facts(session)
    assert facts.answers == ('Answered "Port?": 6543, not 5432',)
    assert facts.plan == ("Read the port from PORT", "Test it")
    assert facts.changes == (("a.ts", "`port = 5432` -> `port = 6543`"),)
    assert [(e.text, e.tool) for e in facts.errors] == [
        ("TypeError: fetch failed", "pasted by the user")
    ]
    assert facts.reports == ("Done. I changed the port in a.ts to 6543 and kept the rest as is.",)
    assert facts.last_reply == "Done. I changed the port in a.ts to 6543 and kept the rest as is."
    assert Facts.from_dict(facts.to_dict()) == facts


def test_the_goal_is_never_a_bare_slash_command_or_a_placeholder() -> None:
    facts = extract_facts(
        conversation(
            ("user", "<command-name>/clear</command-name>"),
            ("assistant", [text("Cleared.")]),
            ("user", "Make the login form remember the email."),
        )
    )
    assert facts.goal == "Make the login form remember the email."
    # a command that sets up the session states no task, whatever its arguments; another does
    for setting in ("/model claude-opus-4-6-thinking", "/effort high", "/Model opus"):
        facts = extract_facts(
            conversation(
                ("user", setting),
                ("user", "Build the spec in docs/spec.md."),
                ("assistant", [text("On it.")]),
            )
        )
        assert facts.goal == "Build the spec in docs/spec.md.", setting
        assert facts.user_messages[0] == setting
        asked = extract_facts(conversation(("user", setting), ("user", "Build the spec.")))
        assert asked.pending == ("Build the spec.",), setting  # nor a pending ask
    # but the latest message is asked, whatever it is (a skill of the user's may share a name)
    latest = extract_facts(conversation(("user", "Draft them."), ("user", "/release-notes 2.3.0")))
    assert latest.pending == ("Draft them.", "/release-notes 2.3.0")
    facts = extract_facts(conversation(("user", "/review the docs"), ("user", "and the tests")))
    assert facts.goal == "/review the docs"
    # a yes or a go-on (as the first message after an earlier compaction often is) is no task
    facts = extract_facts(
        conversation(("user", "yez"), ("user", "Ok, go ahead!"), ("user", "fix it"), ("user", "x"))
    )
    assert facts.goal == "fix it"


def test_a_long_message_keeps_its_rule_and_error_lines_from_the_middle() -> None:
    filler = "\n".join(f"context line {n} about the product and its history" for n in range(200))
    message = f"Here is the brief.\n{filler}\nNever deploy on Fridays.\n{filler}\nThanks!"
    facts = extract_facts(conversation(("user", message), ("assistant", [text("On it.")])))
    kept = facts.user_messages[0]
    assert len(kept) < len(message)
    assert "Never deploy on Fridays." in kept
    assert kept.startswith("Here is the brief.") and kept.endswith("Thanks!")


def test_a_long_brief_keeps_its_headings_after_its_rules_as_room_allows() -> None:
    """A brief pasted in parts keeps what each part asks, its headings, in order, and the
    rule lines first."""
    part = "\n".join(f"- Implement task {n} of the module with care and tests." for n in range(40))
    message = (
        f"## Prompt 5 - Inventory ledger\n{part}\n## Prompt 6 - Training quizzes, spaced "
        f"repetition queue\n{part}\nNever skip a prompt.\n{part}\n## Prompt 7 - Attendance\n"
        f"{part}\nThanks!"
    )
    facts = extract_facts(conversation(("user", "Set up the repo."), ("user", message)))
    kept = facts.user_messages[1]
    assert "## Prompt 6 - Training quizzes, spaced repetition queue" in kept
    assert kept.index("Prompt 6") < kept.index("Never skip a prompt.") < kept.index("Prompt 7")
    tight = condense(message, 200)  # little room: the rule line first
    assert "Never skip a prompt." in tight and "Prompt 6" not in tight


def test_a_long_message_keeps_what_the_user_wrote_between_the_logs_they_pasted() -> None:
    """Two test logs pasted in one message, a request typed between them: the request is kept
    from the middle before any line of the logs."""
    log = "\n".join(f"[{n}/22] case_{n}\nPASS domain=optics expected={n}.5 m" for n in range(40))
    message = (
        "i just added the key, judge each answer on a scale of 100\n```\n" + log + "\n```\n"
        "there are some failed testcases, enhance the pipeline in these cases\n```\n"
        + log
        + "\n```\nthanks"
    )
    kept = condense(message, 600)
    assert "there are some failed testcases, enhance the pipeline in these cases" in kept
    assert kept.count("PASS domain") < log.count("PASS domain")
    plain = "\n".join(f"line {n} of a long text with nothing to keep" for n in range(200))
    assert "line 100 " not in condense(plain, 600)  # no fence: nothing typed to tell apart


def test_a_cut_line_is_redacted_before_it_is_cut() -> None:
    from compactcli.trim import head_tail

    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    for pad in range(0, 120, 7):  # the cut falls before, inside and after the token
        line = "x" * pad + f" export GITHUB_TOKEN={secret} " + "y" * 200
        cut = head_tail(line, 80)
        assert len(cut) <= 80
        for start in range(len(secret) - 7):
            assert secret[start : start + 8] not in cut
    assert head_tail("short GITHUB_TOKEN=" + secret, 200).endswith(secret)  # fits: untouched


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (  # a shell's complaint inside a command that exited 0
            "Process exited with code 0\nOutput:\nTELEMETRY: anonymous\n"
            "zsh:11: operation not permitted: /home/u/.tool/telemetry.jsonl\n",
            "zsh:11: operation not permitted: /home/u/.tool/telemetry.jsonl",
        ),
        (  # a file the shell sources at start-up
            "/home/u/.oh-my-zsh/oh-my-zsh.sh:129: nice(5) failed: operation not permitted\nok\n",
            "/home/u/.oh-my-zsh/oh-my-zsh.sh:129: nice(5) failed: operation not permitted",
        ),
        ("bash: line 3: deploy: command not found\n", "bash: line 3: deploy: command not found"),
        (  # a glob that matched nothing, piped on to `head` (which exits 0)
            "(eval):1: no matches found: /home/u/docs/README*\n",
            "(eval):1: no matches found: /home/u/docs/README*",
        ),
        (  # a linter's diagnostic in a check that passed
            "Checked 40 files\nsrc/mode.ts:26:10 lint/correctness/noUnusedImports  FIXABLE\n",
            "src/mode.ts:26:10 lint/correctness/noUnusedImports FIXABLE",
        ),
        (
            "src/a.c:3:8: warning: unused variable 'n'\n",
            "src/a.c:3:8: warning: unused variable 'n'",
        ),
        (
            "  ● cart › adds an item\n\n    expect(received).toBe(expected)\n",
            "● cart › adds an item",
        ),
        ("● 0 nodes, 75 edges in 366ms\n", ""),  # a bullet of another tool, not Jest's failure
        ("docs/notes.md:3: the failed builds are listed\n", ""),  # a line of a file, not an error
        ("tests/test_a.py:12: in test_x\n", ""),
        # source code read with `sed -n` that says the words of an error in a string: not one
        ('      throw new Error(data?.error || "Failed to save employer profile");\n', ""),
        ('    console.error("Failed to load employees:", err)\n', ""),
        ("  if (error.code === 'ENOENT') return null;\n", ""),
        ("Failed to compile.\n", "Failed to compile."),  # the program's own output: one
        (  # a build's heading says what failed; the line below it says how
            "  Running TypeScript ...\nFailed to type check.\n\n./src/lib/runtime.ts:9:3\n"
            "Type error: Object literal may only specify known properties.\n\n  7 |  x\n",
            "Failed to type check. Type error: Object literal may only specify known properties.",
        ),
        (
            "Failed to compile.\n./a.tsx\nModule not found: Can't resolve 'idb' in 'src'\n",
            "Failed to compile. Module not found: Can't resolve 'idb' in 'src'",
        ),
        (  # npm 10 announces the code, then says what it means
            "npm error code ERESOLVE\nnpm error ERESOLVE unable to resolve dependency tree\n"
            "npm error\nnpm error While resolving: contracts@1.0.0\n",
            "npm error code ERESOLVE npm error ERESOLVE unable to resolve dependency tree",
        ),
        (  # a failed test's mark names the test; its message is the exception below
            " ❯ src/seed.test.ts (10 tests | 1 failed) 58ms\n     × rejects a bad row 3ms\n\n"
            " FAIL  src/seed.test.ts > rejects a bad row\n"
            "SqliteError: CHECK constraint failed: severity IN ('high', 'low')\n"
            " ❯ src/seed.test.ts:166:85\n",
            "SqliteError: CHECK constraint failed: severity IN ('high', 'low')",
        ),
        (  # past the lines that only detail the code, to the message
            "npm error code ENOTFOUND\nnpm error syscall getaddrinfo\nnpm error errno ENOTFOUND\n"
            "npm error network request to https://registry.npmjs.org/x failed, reason: "
            "getaddrinfo ENOTFOUND registry.npmjs.org\n",
            "npm error code ENOTFOUND npm error network request to https://registry.npmjs.org/x "
            "failed, reason: getaddrinfo ENOTFOUND registry.npmjs.org",
        ),
        ("open x: ENOENT: no such file\n", "open x: ENOENT: no such file"),
        (  # all a search piped on to `head` printed: the path it was given is not there
            "ugrep: warning: apps/vet/call/.tsx: No such file or directory\n",
            "ugrep: warning: apps/vet/call/.tsx: No such file or directory",
        ),
        (
            "cat: a.ts: No such file or directory\ncat: b.ts: Permission denied\n",
            "cat: b.ts: Permission denied",
        ),
        (
            "export const a = 1;\ncat: b.ts: No such file or directory\n",
            "",
        ),  # one of two files read
        (  # a Go program's error, lowercase, among a check's other answers
            "=== docker ===\nfailed to connect to the docker API at unix:///d.sock: connect: "
            "no such file or directory\n=== arch ===\narm64\n",
            "failed to connect to the docker API at unix:///d.sock: connect: no such file or "
            "directory",
        ),
        ("The job failed to start twice, then ran.\n", ""),  # said in passing, not an error
    ],
)
def test_an_output_that_exited_0_carries_the_shells_and_linters_diagnostics(
    output: str, expected: str
) -> None:
    assert content_error(output, shell=True) == expected


def test_a_search_that_could_not_open_its_path_failed_until_its_quoting_was_mended() -> None:
    expanded = 'grep -n "useChat" apps/call/$id.tsx | head -20'  # the shell expanded $id
    mended = 'grep -n "useChat" "apps/call/\\$id.tsx" | head -20'
    missing = "ugrep: warning: apps/call/.tsx: No such file or directory"
    turns: list[tuple[str, Any]] = [
        ("user", "Check the chat imports."),
        ("assistant", [call("c1", "Bash", command=expanded)]),
        ("user", [result("c1", missing)]),
    ]
    facts = extract_facts(conversation(*turns))
    assert [(e.text, e.resolved) for e in facts.errors] == [(missing, False)]
    turns += [
        ("assistant", [call("c2", "Bash", command=mended)]),
        ("user", [result("c2", '7:import { useChat } from "@livekit/components-react";')]),
    ]
    facts = extract_facts(conversation(*turns))
    assert [(e.text, e.resolved) for e in facts.errors] == [(missing, True)]


def test_a_powershell_read_of_a_pattern_is_resolved_by_the_literal_read_of_its_path() -> None:
    failed = "Get-Content : Cannot find path 'app\\events\\[slug]\\page.tsx'."
    turns: list[tuple[str, Any]] = [
        ("user", "Review the event page."),
        (
            "assistant",
            [call("c1", "shell_command", command="Get-Content app\\events\\[slug]\\page.tsx")],
        ),
        ("user", [result("c1", f"Exit code: 1\nOutput:\n{failed}")]),
    ]
    assert [e.resolved for e in extract_facts(conversation(*turns)).errors] == [False]
    literal = "Get-Content -LiteralPath 'app\\events\\[slug]\\page.tsx'"
    turns += [
        ("assistant", [call("c2", "shell_command", command=literal)]),
        ("user", [result("c2", "Exit code: 0\nOutput:\nexport default function Page() {}")]),
    ]
    assert [e.resolved for e in extract_facts(conversation(*turns)).errors] == [True]


def test_an_error_is_read_inside_the_json_codex_wraps_a_shells_output_in() -> None:
    wrapped = orjson.dumps(
        {
            "output": "collected 4 items\n\ntests/test_export.py ..F.\n"
            "E   AssertionError: assert 3 == 4\n",
            "metadata": {"exit_code": 1, "duration_seconds": 0.4},
        }
    ).decode()
    assert error_line(wrapped) == "E AssertionError: assert 3 == 4"
    assert exit_code(wrapped) == 1
    soft = orjson.dumps({"output": "zsh:3: permission denied: /etc/x\nok\n", "metadata": {}})
    assert content_error(soft.decode(), shell=True) == "zsh:3: permission denied: /etc/x"
    assert error_line('{"output": not json') == '{"output": not json'


def test_paths_under_the_working_directory_are_named_relative_to_it() -> None:
    turns: list[tuple[str, Any]] = [
        ("user", "Update the roadmap."),
        ("assistant", [call("c1", "Read", file_path="/repo/docs/ROADMAP.md")]),
        ("user", [result("c1", "# Roadmap")]),
        (
            "assistant",
            [call("c2", "Edit", file_path="/repo/docs/ROADMAP.md", old_string="a", new_string="b")],
        ),
        ("user", [result("c2", "ok")]),
        ("assistant", [call("c3", "Write", file_path="/home/u/.notes/todo.md", content="x")]),
        ("user", [result("c3", "ok")]),
        (
            "assistant",
            [call("c4", "Edit", file_path="/repo/src/a.py", old_string="x", new_string="y")],
        ),
        ("user", [result("c4", "Error: file is locked", is_error=True)]),
    ]
    earlier = Facts(files_modified=("/repo/docs/ROADMAP.md", "/repo/old.py"), files_read=("/repo",))
    facts = extract_facts(conversation(*turns), earlier, cwd="/repo/")
    # one file, one name: the earlier facts' absolute spelling is made relative too
    assert facts.files_modified == ("docs/ROADMAP.md", "old.py", "/home/u/.notes/todo.md")
    assert facts.files_read == ("/repo", "docs/ROADMAP.md")  # the directory itself stays whole
    assert ("docs/ROADMAP.md", "`a` -> `b`") in facts.changes
    assert [(e.text, e.where) for e in facts.errors] == [("Error: file is locked", "src/a.py")]
    # without a working directory every path is as the call gave it
    plain = extract_facts(conversation(*turns))
    assert plain.files_modified == ("/repo/docs/ROADMAP.md", "/home/u/.notes/todo.md")


@pytest.mark.parametrize(
    ("name", "which"),
    [
        ("claude-code-session.jsonl", 0),  # every message carries one: where it started
        ("codex-session.jsonl", -1),  # `session_meta` and each `turn_context`: the last
        ("pi-session.jsonl", 0),  # the session header's
        ("anthropic-session.jsonl", None),  # the format records none
    ],
)
def test_each_format_names_the_directory_its_agent_worked_in(name: str, which: int | None) -> None:
    path = TRANSCRIPTS / name
    transcript = read_transcript(str(path))
    found = get_dialect(transcript.format).cwd(transcript)
    named = []
    for line in path.read_bytes().splitlines():
        raw = orjson.loads(line)
        payload = raw.get("payload") if isinstance(raw.get("payload"), dict) else {}
        value = raw.get("cwd") or payload.get("cwd")
        if isinstance(value, str):
            named.append(value)
    assert found == (named[which] if which is not None else None)
    assert which is None or found


@pytest.mark.parametrize(
    ("path", "cwd", "local"),
    [
        ("/repo/src/a.py", "/repo", "src/a.py"),
        ("/repo/src/a.py", "/repo/", "src/a.py"),
        ("/repo2/a.py", "/repo", "/repo2/a.py"),  # a sibling that shares the prefix
        ("/repo", "/repo", "/repo"),  # the directory itself
        ("src/a.py", "/repo", "src/a.py"),  # relative already
        ("c:\\dev\\app\\main.py", "c:\\dev\\app", "main.py"),
        ("c:/dev/app/src/main.py", "c:\\dev\\app", "src/main.py"),  # Windows: either slash
        ("C:\\Dev\\App\\main.py", "c:\\dev\\app", "main.py"),  # and any case
        ("c:/dev/app2/main.py", "c:\\dev\\app", "c:/dev/app2/main.py"),
        ("/a.py", "/", "/a.py"),  # the root is no working directory to name files from
        ("/repo/a.py", None, "/repo/a.py"),
        # from the home directory: read in the home the working directory lies in
        ("~/.config/x.json", "/Users/sam", ".config/x.json"),
        ("~/app/src/a.py", "/home/sam/app", "src/a.py"),
        ("~/notes.md", "/root/app", "~/notes.md"),  # outside the working directory: as given
        ("~/.zshrc", "/srv/app", "~/.zshrc"),  # no home in the working directory
        ("~/app/a.py", "/Users/sam/app2", "~/app/a.py"),
        ("~\\app\\main.py", "C:\\Users\\sam\\app", "main.py"),
        ("~/app/main.py", "C:\\Users\\sam\\app", "main.py"),
        ("~/x", "/Users", "~/x"),  # /Users itself is no home
    ],
)
def test_local_path(path: str, cwd: str | None, local: str) -> None:
    assert local_path(path, cwd) == local


@pytest.mark.skipif(not CORPUS.is_dir(), reason="no ../shared/corpus")
def test_a_claude_code_session_that_moved_names_files_from_where_it_started() -> None:
    # the agent ran `cd backend` now and then: each record's `cwd` follows the shell, and the
    # last is backend/; a resumed session starts at the project's root, where it was started
    transcript = read_transcript(str(CORPUS / "claude-code-pv-case-review.jsonl"))
    cwds = [r.raw["cwd"] for r in transcript.records if isinstance(r.raw.get("cwd"), str)]
    assert cwds[-1].endswith("/backend") and not cwds[0].endswith("/backend")
    assert get_dialect("claude-code").cwd(transcript) == cwds[0]


def _heads(messages: tuple[Message, ...], cuts: list[int]) -> list[Facts]:
    return [extract_facts(messages[:cut], cwd="/w") for cut in cuts]


def _checked_folds(messages: tuple[Message, ...], cuts: list[int]) -> None:
    """The facts of heads of `messages` read within `reading_once` (each head starting from
    what an earlier one read) equal those read from the start, whatever the order of heads."""
    alone = _heads(messages, cuts)
    with fact_folds.reading_once():
        folded = _heads(messages, cuts)
        assert fact_folds.current()  # the reads were kept
    assert folded == alone
    assert fact_folds.current() is None  # and let go at the end of the block


@settings(max_examples=25, deadline=None)
@given(
    plan=plans(max_turns=4),
    fmt=st.sampled_from(FORMAT_NAMES),
    shares=st.lists(st.floats(0, 1), min_size=2, max_size=5),
)
def test_heads_read_once_give_the_facts_read_from_the_start(
    plan: Plan, fmt: str, shares: list[float]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.jsonl"
        path.write_bytes(render(plan, fmt))
        transcript = read_transcript(str(path))
    messages = tuple(get_dialect(transcript.format).context(transcript))
    _checked_folds(messages, [round(s * len(messages)) for s in shares])


@pytest.mark.parametrize(
    "path",
    sorted(TRANSCRIPTS.glob("*.jsonl"))
    + (sorted(CORPUS.glob("*.jsonl")) if CORPUS.is_dir() else []),
    ids=lambda p: p.stem,
)
def test_heads_of_sessions_read_once_give_the_same_facts(path: Path) -> None:
    transcript = read_transcript(str(path))
    messages = tuple(get_dialect(transcript.format).context(transcript))
    n = len(messages)
    _checked_folds(messages, [n // 2, n, n * 3 // 4, n // 4, n * 3 // 4 + 1])


def test_a_fitting_loop_reads_each_message_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """compact with a budget summarizes several heads, each beginning with the one before: with
    the reads kept, the messages are read about once in all; the output is the one reading
    every head from the start gives."""
    path = str(TRANSCRIPTS / "claude-code-session.jsonl")
    read: list[int] = []
    original = facts_module._read_messages

    def counting(messages: Any, state: Any, calls: Any) -> None:
        read.append(len(messages))
        original(messages, state, calls)

    monkeypatch.setattr(facts_module, "_read_messages", counting)
    monkeypatch.setattr(compact_stage, "reading_once", contextlib.nullcontext)
    alone = run("compact", path, "--max-tokens", "900", "--json", "-o", str(tmp_path / "a.jsonl"))
    assert alone.exit_code == 0
    read_alone = list(read)
    read.clear()
    monkeypatch.setattr(compact_stage, "reading_once", fact_folds.reading_once)
    folded = run("compact", path, "--max-tokens", "900", "--json", "-o", str(tmp_path / "f.jsonl"))
    assert orjson.loads(folded.stdout)["summarized"]
    assert (tmp_path / "f.jsonl").read_bytes() == (tmp_path / "a.jsonl").read_bytes()
    assert len(read) == len(read_alone) > 2  # the same heads summarized
    # each message about once: the longest head, and a little more where a head grew again
    assert sum(read) <= max(read_alone) + len(read) < sum(read_alone)


def test_a_pasted_agent_transcript_brings_no_rules_of_its_agents_own_steps() -> None:
    """A user who pastes another agent's session pastes how that agent spoke of its next step
    (`Thinking: ...`, `Let me ...`): no rule of the user's; the rules around them are, and so
    is a `let me know`."""
    pasted = (
        "Carry on from this session:\n"
        "Thinking: The keypair should be excluded, so I should check the .gitignore first.\n"
        "Let me also check if the target directories should be excluded from commits.\n"
        "Actually, let me make sure the tests pass first.\n"
        "Never commit the keypair file.\n"
        "Please let me know if the build must change."
    )
    facts = extract_facts(conversation(("user", pasted), ("assistant", [text("On it.")])))
    assert facts.constraints == (
        "Never commit the keypair file.",
        "Please let me know if the build must change.",
    )


def test_the_rules_of_a_message_are_those_written_above_the_agent_session_pasted_in_it() -> None:
    """Below the first of two or more `Thinking:` lines a message holds another agent's session
    (its thinking, commands, outputs): what reads as a rule there is that agent's, not the
    person's; pasted errors are still read from all of it."""
    pasted = (
        "Continue this work. Never push to main.\n"
        "Thinking: The keypair should NOT be committed, I must add it to .gitignore.\n"
        "$ cargo test\n"
        "error[E0308]: mismatched types\n"
        "Thinking: They definitely should be ignored - they're build artifacts.\n"
        "Always run clippy before a commit."
    )
    facts = extract_facts(conversation(("user", pasted), ("assistant", [text("On it.")])))
    assert facts.constraints == ("Never push to main.",)
    assert [e.text for e in facts.errors] == ["error[E0308]: mismatched types"]


def test_a_call_the_tool_refused_to_run_as_written_is_no_error_of_the_work() -> None:
    """A call with a parameter missing or unexpected is refused before anything runs (Claude
    Code's `InputValidationError`, pi's `Validation failed for tool`): no error is listed, and
    the file it named is not modified; a failure of the work beside it still is."""
    refused = (
        "<tool_use_error>InputValidationError: EnterPlanMode failed due to the following "
        "issue:\nAn unexpected parameter `reason` was provided</tool_use_error>"
    )
    facts = extract_facts(
        conversation(
            ("user", "Plan it, then fix the config."),
            ("assistant", [call("t1", "EnterPlanMode", reason="a big build")]),
            ("user", [result("t1", refused, is_error=True)]),
            ("assistant", [call("t2", "edit", edits=[{"newText": "x"}])]),
            (
                "user",
                [
                    result(
                        "t2",
                        'Validation failed for tool "edit":\n  - path: must have required '
                        "properties path",
                        is_error=True,
                    )
                ],
            ),
            ("assistant", [call("t3", "Bash", command="npm test")]),
            ("user", [result("t3", "Exit code 1\nError: port 5432 is taken", is_error=True)]),
        )
    )
    assert [(e.text, e.where) for e in facts.errors] == [("Error: port 5432 is taken", "npm test")]
    assert facts.files_modified == ()


def test_a_pasted_html_error_page_gives_its_title_as_the_error() -> None:
    """A server's error page pasted from Swagger or a browser: its title is the error, its
    markup is not, and a page that is no error gives none."""
    page = (
        '<!doctype html><html lang="en"><head><title>HTTP Status 400 – Bad Request</title>'
        "<style>body {font-family:Tahoma;}</style></head><body><h1>HTTP Status 400 – Bad "
        "Request</h1></body></html>"
    )
    session = conversation(
        ("user", f"Server response\n400\nError: response status is 400\n\n{page}\nWhy?"),
        ("assistant", [text("The case id is a URL.")]),
    )
    errors = [e.text for e in extract_facts(session).errors]
    assert errors == ["Error: response status is 400", "HTTP Status 400 – Bad Request"]
    assert pasted_errors("<html><body><h1>502 Bad Gateway</h1></body></html>") == [
        "502 Bad Gateway"
    ]
    assert pasted_errors("<html><head><title>Dashboard</title></head></html>") == []


@pytest.mark.parametrize(
    ("command", "output", "expected"),
    [
        (  # `curl -s` says nothing when it fails: its exit code is all, said with its meaning
            'curl -s -o /tmp/page.html -w "HTTP %{http_code}\\n" --max-time 10 http://localhost:3001/',
            "HTTP 000\n\n\nCommand exited with code 28",
            "Command exited with code 28 (curl: timed out)",
        ),
        (
            "cd web && curl -s http://localhost:8080/health",
            "Exit code: 7\nWall time: 0.1 seconds\nOutput:\n",
            "Exit code: 7 (curl: could not connect)",
        ),
        (  # Claude Code's shell: a redirect loop to a login page
            'curl -sL -o /tmp/app.html -w "HTTP %{http_code}\\n" https://app.example.dev/',
            "Exit code 47\nHTTP 303\nfinal URL: https://app.example.dev/-/login",
            "Exit code 47 (curl: too many redirects)",
        ),
        ("make curlish", "Command exited with code 7", "Command exited with code 7"),
        ("curl -s http://x", "Command exited with code 3", "Command exited with code 3"),
        (  # curl's own message is the error when it printed one
            "curl http://localhost:9/",
            "curl: (7) Failed to connect to localhost port 9\n\nCommand exited with code 7",
            "curl: (7) Failed to connect to localhost port 9",
        ),
    ],
)
def test_a_failed_curl_that_printed_nothing_says_what_its_exit_code_means(
    command: str, output: str, expected: str
) -> None:
    result = outcome(Block("tool_result", output, is_error=True), True, command)
    assert (result.status, result.error) == ("failed", expected)


def test_a_shell_that_read_a_log_shows_its_error_and_a_source_file_none() -> None:
    """`tail` of a server's log exits 0 and is read-only, but a log holds output: its error
    counts (the command printed an error); `cat` of source code that names an error does not."""
    log = "2026-06-21 INFO starting\nError: listen EADDRINUSE: address already in use :::3000\n"
    source = 'export function save() {\n  throw new Error("Failed to save");\n}\n'
    facts = extract_facts(
        conversation(
            ("user", "why does the dev server not start?"),
            ("assistant", [call("c1", "Bash", command="tail -20 /tmp/next-dev.log")]),
            ("user", [result("c1", log)]),
            ("assistant", [call("c2", "Bash", command="cat src/save.ts")]),
            ("user", [result("c2", source)]),
        )
    )
    assert [(e.text, e.where) for e in facts.errors] == [
        ("Error: listen EADDRINUSE: address already in use :::3000", "tail -20 /tmp/next-dev.log")
    ]
    assert [c.outcome for c in facts.commands] == ["printed an error"]


def test_logs_are_told_by_their_names() -> None:
    logs = ["/tmp/next-dev.log", "logs/app.err", "nohup.out", "x.log.1", "C:\\app\\srv.LOG"]
    logs.append("/private/tmp/claude-501/-Users-a/0c18/tasks/bomjc7gus.output")
    assert all(reads_log([path]) for path in logs)
    others = ["src/logger.ts", "blog.md", "a.out", "docs/output.md", "catalog/x.json"]
    assert not any(reads_log([path]) for path in others)


def test_an_error_is_read_from_the_whole_command_not_the_line_that_shows_it() -> None:
    """A command too long for its line is cut in the middle to be shown; what its error says
    is read from all of it (the curl in the middle of a long chain timed out)."""
    checks = " && ".join(
        f'echo "=== check {n} ===" && grep -c "panel{n}" /tmp/page.html' for n in range(6)
    )
    command = f"{checks} && curl -s -o /tmp/login.html --max-time 5 http://localhost:3001/login && {checks}"
    facts = extract_facts(
        conversation(
            ("user", "does the login page load?"),
            ("assistant", [call("c1", "Bash", command=command)]),
            ("user", [result("c1", "HTTP 000\n\n\nCommand exited with code 28", is_error=True)]),
        )
    )
    assert "curl" not in facts.commands[0].command  # the line shows its head and tail
    assert [e.text for e in facts.errors] == ["Command exited with code 28 (curl: timed out)"]


def test_a_duplicate_placeholder_is_never_quoted_as_the_error() -> None:
    duplicate = (
        "[Duplicate tool result cleared: same output as a later Bash call — 225 chars, sha256:"
        + "cd" * 32
    )
    kept = outcome(Block(kind="tool_result", text=duplicate + "; failed: fatal: bad object]"), True)
    assert (kept.status, kept.error) == ("failed", "fatal: bad object")
    bare = outcome(Block(kind="tool_result", text=duplicate + "]", is_error=True), shell=True)
    assert (bare.status, bare.error) == ("failed", "failed")
    facts = extract_facts(
        conversation(
            ("user", "check the profile"),
            ("assistant", [call("b1", "Bash", command="cat ~/.bashrc | grep token")]),
            ("user", [result("b1", duplicate + "]", is_error=True)]),
            ("assistant", [text("Nothing there.")]),
        )
    )
    assert all("Duplicate tool result" not in e.text for e in facts.errors)


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (
            '[{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"historical state 0fa1 '
            'is not available"}},{"jsonrpc":"2.0","id":2,"result":"0x1"}]',
            "error -32000: historical state 0fa1 is not available",
        ),
        ('{"ok":false,"error":"channel_not_found"}', "error: channel_not_found"),
        ('{"data":null,"errors":[{"message":"Field x not found"}]}', "error: Field x not found"),
        ('{"error":true,"message":"Invalid API key"}', "error: Invalid API key"),
        ('{"error":null,"result":"0x01"}', ""),
        ('{"status":"error","message":"Rate limit reached"}', "error: Rate limit reached"),
        (
            '{"status":"0","message":"NOTOK","result":"You are using a deprecated V1 endpoint"}',
            "error: You are using a deprecated V1 endpoint",
        ),
        ('{"status":"1","message":"OK","result":"42"}', ""),
        ('{"error":false,"items":[]}', ""),
        ('{"jsonrpc":"2.0","id":1,"result":"0x0000"}', ""),
        ("error: not json {", ""),
    ],
)
def test_a_json_response_gives_the_error_it_carries(output: str, expected: str) -> None:
    assert json_error(output) == expected


def test_an_api_error_printed_by_curl_is_an_error_whatever_the_exit_status() -> None:
    body = '{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"header not found"}}'
    block = Block(kind="tool_result", text=body)
    found = outcome(block, shell=True, command="curl -s https://rpc.example", soft=True)
    assert (found.status, found.error) == ("ok", "error -32000: header not found")
    assert outcome(block, shell=True, command="cat saved.json", soft=True).error == ""


def test_a_long_error_line_keeps_the_message_of_the_object_it_prints() -> None:
    output = (
        'Traceback (most recent call last):\n  File "main.py", line 3, in <module>\n'
        "anthropic.RateLimitError: Error code: 429 - {'type': 'error', 'error': {'type': "
        "'rate_limit_error', 'message': \"This request would exceed your organization's rate "
        "limit of 10,000 input tokens per minute (org: 787ef38c-688b-464b-b31a-d01af17e899c, "
        "model: claude-haiku-4-5-20251001). For details, refer to: https://docs.example.com/"
        "en/api/rate-limits. Please reduce the prompt length.\"}, 'request_id': "
        "'req_011CZK9Uh6ZdHiJKAnak2fE8'}"
    )
    line = error_line(output)
    assert line.startswith(
        "anthropic.RateLimitError: Error code: 429: This request would exceed your "
        "organization's rate limit of 10,000 input tokens per minute"
    )
    assert "request_id" not in line and len(line) <= ERROR_CHARS


def _errors_after(*runs: tuple[str, str, bool]) -> tuple[ErrorFact, ...]:
    """The errors of a session that ran each (command, output, failed) in turn."""
    turns: list[Any] = [("user", "go on")]
    for at, (command, output, failed) in enumerate(runs):
        turns.append(("assistant", [call(f"r{at}", "Bash", command=command)]))
        turns.append(("user", [result(f"r{at}", output, is_error=failed)]))
    return extract_facts(conversation(*turns)).errors


def test_a_command_run_again_with_a_small_fix_resolves_its_error() -> None:
    parse = "python -c \"import ast; [ast.parse(open(f{}).read()) for f in ['a.py', 'b.py']]\""
    errors = _errors_after(
        (parse.format(""), "Exit code 1\nUnicodeDecodeError: 'charmap' codec can't decode", True),
        ("ls backend", "a.py\nb.py", False),
        (parse.format(", encoding='utf-8'"), "All Python files parse OK", False),
    )
    assert [(e.text[:18], e.resolved) for e in errors] == [("UnicodeDecodeError", True)]
    chain = "git rm --cached {}frontend && rm -rf frontend/.git && git add frontend/"
    errors = _errors_after(
        (chain.format(""), "Exit code 1\nerror: the following file has staged content", True),
        (chain.format("-f "), "rm 'frontend'", False),
    )
    assert [e.resolved for e in errors] == [True]


@pytest.mark.parametrize(
    "passed",
    [
        "npm run dev -- --port 3000",  # another script
        "pytest tests/test_b.py -q -x",  # another file: half the words
        "cargo build --verbose",  # too short to say
    ],
)
def test_another_command_of_the_same_program_leaves_the_error(passed: str) -> None:
    failed = {
        "npm": "npm run build -- --port 3000",
        "pytest": "pytest tests/test_a.py -q -x",
        "cargo": "cargo build --release",
    }[passed.split()[0]]
    errors = _errors_after((failed, "Exit code 1\nError: it broke", True), (passed, "ok", False))
    assert [e.resolved for e in errors] == [False]


def test_a_projects_memory_file_read_by_a_shell_gives_its_rules() -> None:
    memory = (
        "=== MEMORY ===\n## Conventions\n- `pytest` runs via `nix-shell --run pytest`, never "
        "`nix-shell --packages ...`.\n- The tree holds source and tests.\n"
    )
    facts = extract_facts(
        conversation(
            ("user", "review the architecture"),
            ("assistant", [call("m1", "bash", command="echo '=== MEMORY ===' && cat MEMORY.md")]),
            ("user", [result("m1", memory)]),
            ("assistant", [text("Read it.")]),
        )
    )
    assert any(
        c.startswith("MEMORY.md: ") and "never `nix-shell --packages" in c
        for c in facts.constraints
    ), facts.constraints


def test_a_tap_runner_s_commented_error_is_the_error_not_its_summary_line() -> None:
    output = (
        "=== Running API tests ===\nTAP version 13\n# node:internal/errors:496\n"
        "#     ErrorCaptureStackTrace(err);\n"
        '# TypeError [ERR_INVALID_ARG_TYPE]: The "paths[0]" argument must be of type string.\n'
        "#     at resolve (node:path:1097:7)\n# Node.js v18.19.1\nnot ok 1 - app.test.js\n"
        "  ---\n  exitCode: 1\n  error: 'test failed'\n  ...\n# fail 1\n"
    )
    assert error_line(output) == (
        'TypeError [ERR_INVALID_ARG_TYPE]: The "paths[0]" argument must be of type string.'
    )


@pytest.mark.parametrize(
    ("output", "line"),
    [
        (
            '❌ Could not parse "https://a.example/x" via citation.js.\nProvide: title, year.',
            '❌ Could not parse "https://a.example/x" via citation.js.',
        ),
        (
            "Obscura not available.\n\n🔗 https://a.example/x\n⚠️ Fetch failed: fetch failed\n",
            "⚠️ Fetch failed: fetch failed",
        ),
        ("⚠️ Note: 3 files skipped\nDone.", ""),  # a warning sign before no failure
    ],
)
def test_a_tool_s_own_failure_mark_is_an_error(output: str, line: str) -> None:
    assert content_error(output, shell=False) == line


def _tool_errors(*runs: tuple[str, dict[str, Any], str]) -> tuple[ErrorFact, ...]:
    """The errors of a session that called each (tool, arguments, output) in turn; none of
    the results is flagged as failed."""
    turns: list[Any] = [("user", "go on")]
    for at, (name, arguments, output) in enumerate(runs):
        turns.append(("assistant", [call(f"t{at}", name, **arguments)]))
        turns.append(("user", [result(f"t{at}", output)]))
    return extract_facts(conversation(*turns)).errors


def test_a_tool_s_error_is_resolved_by_the_same_tool_succeeding_on_the_same_argument() -> None:
    failed = "❌ Could not parse the source.\nProvide: title, authors, year."
    errors = _tool_errors(
        ("resolve_citation", {"source": "https://a.example/x"}, failed),
        ("resolve_citation", {"source": "https://b.example/y"}, failed),
        ("fetch_page", {"source": "https://b.example/y"}, "the page"),  # another tool
        ("resolve_citation", {"source": "https://a.example/x", "year": 2025}, "Resolved: @a2025"),
    )
    assert [(e.resolved, e.where) for e in errors] == [
        (True, "https://a.example/x"),
        (False, "https://b.example/y"),
    ]


def test_an_error_printed_at_several_places_is_said_once_with_them() -> None:
    failed = "⚠️ Fetch failed: fetch failed"
    urls = [f"https://site{n}.example/page" for n in range(5)]
    errors = _tool_errors(*(("fetch_url", {"url": url}, failed) for url in urls))
    assert [(e.text, e.resolved) for e in errors] == [(failed, False)]
    assert errors[0].where == "; ".join(urls[2:]) + " and 2 more"
    facts = Facts(errors=errors)
    summary = extractive_facts(facts, 2000, len)[0]
    assert summary.count("Fetch failed") == 1 and urls[4] in summary


def test_the_same_error_line_read_from_several_logs_is_said_once() -> None:
    """A command run in the background is read back from its log: the same `npm error` in four
    logs is one error, said at its latest with the commands that printed it; a short line
    (an exit code) is said at each as before."""
    line = "npm error Cannot read properties of null (reading 'edgesOut')"
    logs = [f"cat /tmp/tasks/b{n}.output" for n in range(4)]
    errors = _tool_errors(
        *(("Bash", {"command": log}, f"npm warn deprecated\n{line}\n") for log in logs),
        ("Bash", {"command": "ls missing"}, "Exit code 2"),
        ("Bash", {"command": "ls gone"}, "Exit code 2"),
    )
    said = [(e.text, e.where) for e in errors if e.text == line]
    assert said == [(line, "; ".join(logs[1:]) + " and 1 more")]
    facts = Facts(errors=errors)
    summary = extractive_facts(facts, 2000, len)[0]
    assert summary.count("edgesOut") == 1


def test_an_error_that_names_its_place_does_not_name_it_again() -> None:
    url = "https://a.example/x"
    error = ErrorFact(f'Could not parse "{url}"', False, tool="resolve_citation", where=url)
    summary = extractive_facts(Facts(errors=(error,)), 2000, len)[0]
    assert summary.count(url) == 1 and "(resolve_citation)" in summary


def test_what_the_agent_says_after_an_error_is_kept_however_short() -> None:
    turns: list[Any] = [
        ("user", "collect the sources"),
        ("assistant", [call("a", "fetch_url", url="https://a.example/x")]),
        ("user", [result("a", "⚠️ Fetch failed: fetch failed")]),
        ("assistant", [text("Several URLs failed. Let me use Tavily instead."), call("b", "x")]),
        ("user", [result("b", "done")]),
        ("assistant", [text("Now the notes, one per source."), call("c", "x")]),  # no error
        ("user", [result("c", "done")]),
        ("assistant", [text("Done.")]),
    ]
    reports = extract_facts(conversation(*turns)).reports
    assert "While working: Several URLs failed. Let me use Tavily instead." in reports
    assert not any("one per source" in line for line in reports)


def test_a_long_mid_turn_statement_gives_its_decisions_once() -> None:
    decision = "I'll keep the insert signed-in only rather than weakening RLS for guests."
    statement = (
        "I'll add this as a focused client component on the event detail page, preserving "
        f"the existing Telegram and referral blocks. {decision} Then I'll build."
    )
    turns: list[Any] = [
        ("user", "add registration"),
        ("assistant", [text(statement), call("a", "Bash", command="npm run build")]),
        ("user", [result("a", "ok")]),
        ("assistant", [text("Registration is in.")]),
    ]
    facts = extract_facts(conversation(*turns))
    assert decision in facts.decisions
    (report,) = [line for line in facts.reports if line.startswith("While working: ")]
    assert "focused client component" in report and "weakening RLS" not in report


def test_a_build_s_type_error_is_the_error_not_a_later_error_line() -> None:
    output = (
        "Type error: Object literal may only specify known properties, and 'name' does not "
        "exist in type 'AbstractAgent'.\n\n   9 |   agents: {\n"
        "Next.js build worker exited with code: 1 and signal: null\n"
        "Error: Could not find a production build in the '.next' directory.\nHTTP 000\n\n"
        "Command exited with code 7"
    )
    assert error_line(output).startswith("Type error: Object literal may only specify")
    assert content_error("Syntax error: Unexpected token (3:4)\n", shell=True) == (
        "Syntax error: Unexpected token (3:4)"
    )
    assert content_error("No type error: all 12 files checked\n", shell=True) == ""


def test_a_log_s_error_line_after_its_time_is_an_error_of_a_run_that_exited_0() -> None:
    logged = (
        "2026-05-21 16:25:02 [INFO] collected 40 items\n"
        "2026-05-21 16:25:41 [INFO] HTTP Request: POST https://example.test/send 200 OK\n"
        "2026-05-21 16:25:41 [ERROR] push failed: {'errcode': 40058, 'errmsg': "
        "'markdown.content exceed max length 4096'}\n"
        "2026-05-21 16:25:42 [INFO] done\n"
    )
    assert content_error(logged, shell=True) == (
        "2026-05-21 16:25:41 [ERROR] push failed: {'errcode': 40058, 'errmsg': "
        "'markdown.content exceed max length 4096'}"
    )
    stamped = "[2026-05-21T16:25:41.120Z] CRITICAL disk full\n"
    assert content_error(stamped, shell=True) == "[2026-05-21T16:25:41.120Z] CRITICAL disk full"
    # a log that only says a count of errors, or a level in a sentence, says none
    assert content_error("2026-05-21 16:25:41 [INFO] 0 errors, 12 warnings\n", shell=True) == ""
    assert content_error("2026-05-21 16:25:41 set level to ERROR only\n", shell=True) == ""


def assert_error_said(output: str, expected: str) -> None:
    """`expected` is the error `output` says, whether the run that printed it failed or not."""
    assert error_line(output) == expected
    assert content_error(output, shell=True) == expected


def test_ginkgo_s_failure_message_is_the_error_not_go_test_s_summary_line() -> None:
    red, grey, reset = "\x1b[38;5;9m", "\x1b[38;5;243m", "\x1b[0m"
    output = (
        f"{red}• [FAILED] [0.001 seconds]{reset}\n"
        f"Schema resolver {grey}MobileAvailableHandsets [It] groups handsets{reset}\n"
        f"  {red}[FAILED]{reset} in [It] - /repo/internal/graph/resolver.go:74\n"
        f"  {red}[FAILED] wrong number of arguments in Do func for *mocks.MockClient.Get: "
        f"got 2, want 3 [/repo/internal/graph/schema.resolvers_test.go:1834]{reset}\n"
        "--- FAIL: TestResolver (0.01s)\nFAIL\nExit code 1\n"
    )
    assert_error_said(
        output,
        "[FAILED] wrong number of arguments in Do func for *mocks.MockClient.Get: got 2, want 3 "
        "[/repo/internal/graph/schema.resolvers_test.go:1834]",
    )


def test_a_tool_s_error_is_placed_only_at_an_argument_that_says_where() -> None:
    failed = "Error: No connection to browser extension."
    arguments = {"args": '{"url": "http://localhost:3001"}', "server": "browsermcp"}
    (error,) = _tool_errors(("mcp", arguments, failed))
    assert error.where == ""


def test_a_build_filtered_through_grep_is_the_same_build() -> None:
    errors = _errors_after(
        (
            'rm -rf .next && npx next build 2>&1 | grep -E "✓|error|Error" | tail -10',
            "✓ Compiled successfully\nType error: Unused '@ts-expect-error' directive.",
            False,
        ),
        ("rm -rf .next && npx next build 2>&1 | tail -20", "✓ Generating static pages", False),
    )
    assert [(e.text[:11], e.resolved) for e in errors] == [("Type error:", True)]
    assert command_key('npm test 2>&1 | grep -E "FAIL|✓" | tail -3') == "npm test"
    # a search that may hide the failures is another command
    for hiding in ("npm test | grep passed", "npm test | grep -c FAIL", "npm test | grep -v ERR"):
        assert command_key(hiding) == hiding


def test_a_statement_that_is_its_decision_and_a_few_words_gives_the_decision_alone() -> None:
    turns: list[Any] = [
        ("user", "why is the user agent wrong?"),
        (
            "assistant",
            [
                text(
                    "I'll look at why the user agent shows `OpenAI/JS 6.26.0` instead of "
                    "your harness version. Let me start by exploring the codebase."
                ),
                call("a", "Bash", command="rg -n userAgent src"),
            ],
        ),
        ("user", [result("a", "src/client.ts:12: userAgent")]),
        ("assistant", [text("Found it.")]),
    ]
    facts = extract_facts(conversation(*turns))
    assert any("instead of your harness version" in d for d in facts.decisions)
    assert not any(line.startswith("While working: ") for line in facts.reports)


@pytest.mark.parametrize(
    ("sentence", "decides"),
    [
        ("Every decision records its source timestamp and the order it sent.", False),
        ("The p99 decision latency is under a microsecond on this machine.", False),
        ("Decision: keep the registry in Postgres, not in Redis.", True),
        ("The decision is to keep the insert signed-in only.", True),
        ("I made the decision to drop the Kamal config.", True),
    ],
)
def test_the_word_decision_decides_only_when_it_states_one(sentence: str, decides: bool) -> None:
    assert bool(decision_sentences(sentence)) is decides


def _apply_patch(call_id: str, path: str) -> dict[str, Any]:
    patch = f"*** Begin Patch\n*** Update File: {path}\n@@\n-old\n+new\n*** End Patch\n"
    return {"type": "custom_tool_call", "call_id": call_id, "name": "apply_patch", "input": patch}


def test_an_edit_that_says_it_failed_is_an_error_and_one_that_shows_a_file_is_not() -> None:
    """Codex does not flag a failed `apply_patch`: its output's first line says so. That line is
    the error, at the patched file, resolved by a later patch of it that worked. An edit tool's
    output after its first line is the file it edited, whose text is no error of the call."""
    failed = (
        "apply_patch verification failed: Failed to find expected lines in /r/tests/test_api.py:\n"
        "    assert response.status_code == 200\n"
    )
    shown = "Success. Updated the following files:\nM src/app.py\nError: raised by the code\n"
    facts = _codex_facts(
        _apply_patch("c1", "tests/test_api.py"),
        {"type": "custom_tool_call_output", "call_id": "c1", "output": failed},
        _apply_patch("c2", "src/app.py"),
        {"type": "custom_tool_call_output", "call_id": "c2", "output": shown},
    )
    assert [(e.text, e.resolved) for e in facts.errors] == [
        (
            "apply_patch verification failed: Failed to find expected lines in "
            "/r/tests/test_api.py:",
            False,
        )
    ]
    fixed = _codex_facts(
        _apply_patch("c1", "tests/test_api.py"),
        {"type": "custom_tool_call_output", "call_id": "c1", "output": failed},
        _apply_patch("c2", "tests/test_api.py"),
        {"type": "custom_tool_call_output", "call_id": "c2", "output": "Success. Updated"},
    )
    assert [e.resolved for e in fixed.errors] == [True]


CONSOLE = "Wall time: 0.0429 seconds\nOutput:\n" + json.dumps(
    [
        {
            "type": "text",
            "text": "### Result\nTotal messages: 5 (Errors: 2, Warnings: 0)\n"
            'Returning 2 messages for level "warning"\n\n'
            "[ERROR] Access to fetch at 'http://localhost:8000/cases/1' from origin "
            "'http://localhost:5173' has been blocked by CORS policy\n"
            "[ERROR] Failed to load resource: net::ERR_FAILED",
        }
    ],
    separators=(",", ":"),
)


def test_an_mcp_tool_s_content_items_are_read_as_their_text() -> None:
    """Codex prints an MCP tool's content items as JSON after its header; the error is read in
    their text, past the header's lines, and a log level in brackets heads it (and the next
    one of another message)."""
    block = Block(kind="tool_result", text=CONSOLE)
    expected = (
        "[ERROR] Access to fetch at 'http://localhost:8000/cases/1' from origin "
        "'http://localhost:5173' has been blocked by CORS policy; "
        "[ERROR] Failed to load resource: net::ERR_FAILED"
    )
    assert outcome(block, shell=False, soft=True).error == expected
    assert error_line(CONSOLE) == expected


@pytest.mark.parametrize(
    ("command", "output", "expected"),
    [
        (  # a preflight the server refused: exit 0, the status line says it
            "curl -i -sS -X OPTIONS http://localhost:8000/cases/1 | sed -n '1,30p'",
            "Process exited with code 0\nOutput:\nHTTP/1.1 405 Method Not Allowed\r\n"
            'allow: GET\r\n\r\n{"detail":"Method Not Allowed"}',
            "HTTP/1.1 405 Method Not Allowed",
        ),
        (  # a fetch that only reads: the same
            "curl -si http://localhost:8000/health",
            "HTTP/2 503\r\ncontent-length: 0\r\n\r\n",
            "HTTP/2 503",
        ),
        (  # a redirect followed to a page that answered: no error
            "curl -siL http://localhost:8000/",
            "HTTP/1.1 301 Moved Permanently\r\nlocation: /home\r\n\r\nHTTP/1.1 200 OK\r\n\r\nok",
            "",
        ),
        (  # not curl: a file that holds a status line is what was read
            "cat notes.txt",
            "HTTP/1.1 404 Not Found\n",
            "",
        ),
    ],
)
def test_curl_s_failed_http_status_is_an_error(command: str, output: str, expected: str) -> None:
    block = Block(kind="tool_result", text=output)
    found = outcome(block, shell=True, command=command, soft=True)
    assert (found.status, found.error) == ("ok", expected)


def test_a_sub_agent_that_died_said_so_first() -> None:
    """A Task tool's result that is a sub-agent's API error, not flagged as failed."""
    died = "API Error: terminated\nagentId: a759 (use SendMessage to continue this agent)"
    block = Block(kind="tool_result", text=died)
    assert outcome(block, shell=False, soft=True).error == "API Error: terminated"
    refused = 'execution error: Io(Custom { kind: Other, error: "CreateProcessAsUserW failed" })'
    block = Block(kind="tool_result", text=refused)  # an apply_patch its runner could not start
    assert outcome(block, shell=False, soft=True, soft_lines=1).error == refused


def test_a_file_written_through_the_shell_is_modified_and_its_decisions_are_decisions() -> None:
    """A heredoc into `cat` writes a file as an edit tool does: it is modified (written), and
    the `Decision:` lines of what it wrote (a plan's research.md) are the agent's decisions, as
    are those an edit tool or a patch adds, and a question it records as settled (`Q: ... →
    A: ...`). A line that only mentions a decision is not one."""
    research = (
        "cat <<'EOF' > specs/research.md\n# Research\n## Queues\n"
        "- Decision: Keep a single durable `codex` queue with QoS prefetch=1.\n"
        "- Rationale: one node.\nThe decision log lives elsewhere.\nEOF"
    )
    adr = (
        "# ADR 7\n**Decision:** Store sessions in Redis, not in Postgres.\n"
        "## Clarifications\n- Q: How are several new mails shown? → A: One at a time, queued.\n"
    )
    facts = extract_facts(
        conversation(
            ("user", "Plan the queue work."),
            (
                "assistant",
                [
                    call("c1", "Bash", command=research),
                    call("c2", "Write", file_path="docs/adr-7.md", content=adr),
                ],
            ),
            ("user", [result("c1", ""), result("c2", "File created successfully")]),
            ("assistant", [text("Planned.")]),
        )
    )
    assert facts.files_modified == ("specs/research.md", "docs/adr-7.md")
    assert ("specs/research.md", "written") in facts.changes
    assert facts.decisions == (
        "Decision: Keep a single durable `codex` queue with QoS prefetch=1.",
        "Decision: Store sessions in Redis, not in Postgres.",
        "Q: How are several new mails shown? → A: One at a time, queued.",
    )


def test_a_traceback_s_exception_is_its_error_not_what_was_printed_after_it() -> None:
    """`python3 -c ... 2>&1 || python3 -c "print(sys.version)"`: the fallback printed after the
    traceback, and the traceback's exception line is the error, not that last line."""
    output = (
        "Exit code 1\nTraceback (most recent call last):\n"
        '  File "<string>", line 1, in <module>\n'
        "ModuleNotFoundError: No module named 'pytest'\n"
        "3.12.3 (main, Mar  3 2026, 12:15:18) [GCC 13.3.0]"
    )
    assert error_line(output) == "ModuleNotFoundError: No module named 'pytest'"
    printed = output.replace("Exit code 1\n", "crypto ok\n") + "\nsqlite3 ok"
    assert content_error(printed, shell=True) == "ModuleNotFoundError: No module named 'pytest'"


def test_codex_s_ide_context_is_not_what_was_typed() -> None:
    """Codex's IDE extension and desktop app write the open tabs, the active file and the files
    attached before the message, after which `## My request for Codex:` starts what was typed."""
    typed = "dont build the pipeline in a single file, organize it in modules"
    ide = (
        "# Context from my IDE setup:\n\n## Active file: demo.py\n\n## Open tabs:\n"
        f"- main.py: main.py\n- demo.py: demo.py\n\n## My request for Codex:\n{typed}\n"
    )
    assert typed_text(ide) == (typed, None)
    attached = (
        "# Files mentioned by the user:\n\n## shot.png: /tmp/shot.png\n\n"
        '## My request for Codex:\n\n<image name=[Image #1] path="/tmp/shot.png">\n</image>\n'
    )
    assert typed_text(attached) == (None, None)  # an image attached, nothing typed
    facts = extract_facts(conversation(("user", ide), ("assistant", [text("On it.")])))
    assert facts.goal == typed
    # a message that only mentions the header is typed whole
    said = "Why does Codex write # Context from my IDE setup: before my messages?"
    assert typed_text(said) == (said, None)


def test_codex_s_goal_context_is_its_objective_not_its_instructions() -> None:
    """Codex wraps a goal the person set in its own instructions on pursuing it; what was typed
    is the objective. Its rules ("Never use status blocked ...") are Codex's, not the user's."""
    goal = (
        "<goal_context>\nContinue working toward the active thread goal.\n\n<objective>\n"
        "Build a frontend in /frontend.\n\nUse shadcn with tailwind css\n</objective>\n\n"
        'Blocked audit:\n- Never use status "blocked" merely because the work is hard.\n'
        "</goal_context>"
    )
    assert typed_text(goal) == (
        "Build a frontend in /frontend.\n\nUse shadcn with tailwind css",
        None,
    )
    assert typed_text("<goal_context>\nContinue.\n</goal_context>") == (None, None)
    facts = extract_facts(conversation(("user", goal), ("assistant", [text("On it.")])))
    assert facts.goal.startswith("Build a frontend in /frontend.")
    assert not any("blocked" in c for c in facts.constraints)


def test_a_patch_run_through_the_shell_fails_and_is_resolved_at_its_file() -> None:
    """Older Codex runs `apply_patch` as a shell command: its failure is placed at the file it
    patched, not at the patch's text, and a later patch or write of that file resolves it."""
    patch = "*** Begin Patch\n*** Add File: specs/research.md\n+# Research\n*** End Patch\n"
    failed = (
        "apply_patch verification failed: invalid hunk at line 4, '' is not a valid hunk header"
    )
    messages = conversation(
        ("user", "Write the research notes."),
        ("assistant", [call("c1", "Bash", command=f"apply_patch {patch}")]),
        ("user", [result("c1", f"Exit code: 1\n{failed}", is_error=True)]),
        ("assistant", [call("c2", "Bash", command="cat > specs/research.md <<'EOF'\n# R\nEOF")]),
        ("user", [result("c2", "")]),
        ("assistant", [text("Written.")]),
    )
    facts = extract_facts(messages)
    assert [(e.text, e.where, e.resolved) for e in facts.errors] == [
        (failed, "specs/research.md", True)
    ]
    unresolved = extract_facts(messages[:3])
    assert [(e.where, e.resolved) for e in unresolved.errors] == [("specs/research.md", False)]


def test_a_spec_kit_command_s_message_is_the_input_typed_to_it() -> None:
    """An agent that expands a Spec Kit command into the prompt sends its template with the
    input fenced under `## User Input`: the input is what was typed. With no input, the
    message stays as it came."""
    template = (
        "## User Input\n\n```text\n{}\n```\n\nYou **MUST** consider the user input before "
        "proceeding (if not empty).\n\n## Outline\n\n1. Never skip a step.\n"
    )
    typed = "Build a tray app that shows a 600x150 alert for new mail."
    assert typed_text(template.format(typed)) == (typed, None)
    empty = template.format("")
    assert typed_text(empty) == (squeeze(empty), None)


def test_the_rules_of_the_spec_kit_command_under_way_are_rules_of_the_work() -> None:
    """A Spec Kit command given input: its template's binding lines are the rules of the work it
    runs (as a skill's), until the next command, whose rules replace them."""
    template = (
        "## User Input\n\n```text\n{}\n```\n\nYou **MUST** consider the user input before "
        "proceeding (if not empty).\n\n## Outline\n\n1. Load the plan.\n"
        "2. **IMPORTANT** For completed tasks, make sure to mark the task off as [X] in the "
        "tasks file.\n3. {}\n"
    )
    facts = extract_facts(
        conversation(
            ("user", template.format("user story 1", "Never skip a failing test.")),
            ("assistant", [text("Implementing user story 1.")]),
        )
    )
    assert facts.user_messages == ("user story 1",)
    assert facts.constraints == (
        "Skill Spec Kit command: 2. IMPORTANT For completed tasks, make sure to mark the task off "
        "as [X] in the tasks file.",
        "Skill Spec Kit command: 3. Never skip a failing test.",
    )
    facts = extract_facts(
        conversation(
            ("user", template.format("user story 1", "Never skip a failing test.")),
            ("assistant", [text("Implementing user story 1.")]),
            ("user", template.format("user story 2", "Always run the linter first.")),
            ("assistant", [text("Implementing user story 2.")]),
        )
    )
    assert facts.constraints == (
        "Skill Spec Kit command: 2. IMPORTANT For completed tasks, make sure to mark the task off "
        "as [X] in the tasks file.",
        "Skill Spec Kit command: 3. Always run the linter first.",
    )


def test_the_rules_of_a_slash_command_s_template_are_rules_of_the_work() -> None:
    """A slash command the user typed (Claude Code sends its template next, in a record the
    user did not type): the template's binding lines are the command's rules, until the next
    command's; a record the user did not type after other text is no template."""

    def user(value: str, name: str | None = None) -> Message:
        return Message(index=0, role="user", blocks=(Block("text", value, name=name),))

    command = (
        "<command-message>standards</command-message>\n<command-name>/standards</command-name>"
    )
    template = (
        "Review all unstaged changes against coding standards.\n## Rules\n"
        "**9. Comments**\nOnly comment WHY, never WHAT. Code should be self-documenting.\n"
    )
    reply = Message(index=0, role="assistant", blocks=(Block("text", "Reviewing."),))
    facts = extract_facts((user(command), user(template, "meta"), reply))
    assert facts.user_messages == ("/standards",)
    assert facts.constraints == (
        "Skill /standards: Only comment WHY, never WHAT. Code should be self-documenting.",
    )
    facts = extract_facts((user("Fix the tests"), user(template, "meta"), reply))
    assert facts.constraints == ()
    deploy = command.replace("standards", "deploy")
    later = (user(deploy), user("Deploy it.\nNever deploy on Fridays.", "meta"), reply)
    facts = extract_facts((user(command), user(template, "meta"), reply, *later))
    assert facts.constraints == ("Skill /deploy: Never deploy on Fridays.",)


SPEC_TEMPLATE = (
    "## User Input\n\n```text\n\n```\n\nYou **MUST** consider the user input before "
    "proceeding (if not empty).\n\n## Outline\n\n1. **Setup**: Run `setup-{0}.sh` from repo "
    "root. Then parse its JSON.\n2. Never skip the {0} checklist.\n"
)


@pytest.mark.parametrize("split", [None, 2, 4, 6])
def test_a_spec_kit_command_moved_on_from_is_said_in_a_line(split: int | None) -> None:
    """A Spec Kit command run without input sends its template as the message: once a later
    message states a task, the command is said in a line and its template's rules go; the
    command still under way (answered with a letter since) keeps them. The same when the facts
    are read in two parts."""
    messages = conversation(
        ("user", SPEC_TEMPLATE.format("plan")),
        ("assistant", [text("Planned.")]),
        ("user", "Always answer in Russian."),
        ("assistant", [text("OK.")]),
        ("user", SPEC_TEMPLATE.format("tasks")),
        ("assistant", [text("Which layout? A or B")]),
        ("user", "B"),
    )
    facts = extract_facts(messages)
    if split is not None:
        facts = extract_facts(messages[split:], extract_facts(messages[:split]))
    line = "(a Spec Kit command, run without input: Run `setup-plan.sh` from repo root.)"
    assert facts.user_messages[0] == line
    assert facts.user_messages[2] == squeeze(SPEC_TEMPLATE.format("tasks"))
    assert facts.goal == "Always answer in Russian."
    assert "Never skip the plan checklist." not in facts.constraints
    assert "Never skip the tasks checklist." in facts.constraints
    assert "Always answer in Russian." in facts.constraints
    later = extract_facts(conversation(("user", "Now translate the spec.")), previous=facts)
    assert later.user_messages[2].startswith(
        "(a Spec Kit command, run without input: Run `setup-tasks"
    )
    assert not any("checklist" in constraint for constraint in later.constraints)
    assert later.pending == ("B", "Now translate the spec.")
    unanswered = conversation(("user", SPEC_TEMPLATE.format("plan")), ("user", "Fix the build."))
    assert extract_facts(unanswered).pending == ("Fix the build.",)


def test_a_mid_turn_statement_in_korean_is_long_by_what_it_says() -> None:
    """A Korean statement of 90 characters says what an English one of about twice that says:
    it is kept among the reports as the English one is, where a short one is not."""
    korean = (
        "브리지 예제 이름 `qtmrt2osc`로 하겠습니다 (→ `example-qtmrt2osc/`). 핵심 클래스는 순수 "
        "QTM 수신, 브리지는 별도 예제로 조합. 먼저 핵심 addon을 작성합니다."
    )
    assert len(korean) < STATEMENT_CHARS
    facts = extract_facts(
        conversation(
            ("user", "addon을 만들어 주세요."),
            ("assistant", [text(korean), call("c1", "Read", file_path="src/a.cpp")]),
            ("user", [result("c1", "int a;")]),
            ("assistant", [text("짧은 문장."), call("c2", "Read", file_path="src/b.cpp")]),
            ("user", [result("c2", "int b;")]),
            ("assistant", [text("완료.")]),
        )
    )
    assert any("핵심 클래스는 순수" in report for report in facts.reports)
    assert not any("짧은 문장" in report for report in facts.reports)


def test_a_file_the_user_attached_is_part_of_their_message() -> None:
    """An app that saves what the user pasted to a file says so in the message (`User attached
    files:`); the agent's read of that file is the user's brief: its rules are the user's and
    its text joins the message. Another file the agent reads is not the user's."""
    attached = "/w/uploads/91b65c16_pasted-content.txt"
    message = (
        f"make it\n\nUser attached files:\n- {attached} (text/plain)\n\n"
        "All files are also saved to disk at the paths listed above."
    )
    brief = "Build a smart city dashboard called METRO-FLOW.\nNever use Docker for the backend.\n"
    facts = extract_facts(
        conversation(
            ("user", message),
            (
                "assistant",
                [call("c1", "Read", file_path=attached), call("c2", "Read", file_path="a.md")],
            ),
            ("user", [result("c1", brief), result("c2", "Never edit the vendored files.\n")]),
            ("assistant", [text("Building it.")]),
        )
    )
    assert "Build a smart city dashboard called METRO-FLOW." in facts.user_messages[0]
    assert "Never use Docker for the backend." in facts.constraints
    assert not any("vendored" in c for c in facts.constraints)


def test_a_shell_s_complaint_and_a_git_server_s_refusal_are_said_with_the_error() -> None:
    """A chain of checks failed on `gh: command not found` and then on git's `fatal:`: both are
    said. A push the server refused says why (`remote: Permission ... denied`) above git's own
    `fatal: unable to access`, in output that exited 0 through a pipe."""
    chain = (
        "Exit code 128\ngit version 2.47.1\n---\n/usr/bin/bash: line 1: gh: command not found\n"
        "---\nfatal: not a git repository (or any of the parent directories): .git"
    )
    assert error_line(chain) == (
        "fatal: not a git repository (or any of the parent directories): .git; "
        "/usr/bin/bash: line 1: gh: command not found"
    )
    # zsh's complaint in an agent's tool, beside an error of no compiler's kind
    cleanup = (
        "(eval):1: no matches found: apps/*/node_modules\n"
        "npm error Cannot read properties of null (reading 'edgesOut')\nEXIT=1"
    )
    assert error_line(cleanup) == (
        "npm error Cannot read properties of null (reading 'edgesOut'); "
        "(eval):1: no matches found: apps/*/node_modules"
    )
    push = (
        "remote: Permission to a/b.git denied to c.\n"
        "fatal: unable to access 'https://github.com/a/b.git/': The requested URL returned "
        "error: 403"
    )
    assert content_error(push, shell=True) == (
        "fatal: unable to access 'https://github.com/a/b.git/': The requested URL returned "
        "error: 403; remote: Permission to a/b.git denied to c."
    )


def test_a_process_s_mark_before_its_lines_does_not_hide_its_error() -> None:
    """PyTorch's distributed runs print `[rank0]: ` before each line of a process, Ray and vLLM
    `(APIServer pid=7309) `, Docker Compose `ui-1  | `: the exception line is found as without
    them (not a warning printed after the traceback), and is said without the mark."""
    traceback = (
        "[rank0]: Traceback (most recent call last):\n"
        '[rank0]:   File "/root/trl/grpo.py", line 12, in <module>\n'
        "[rank0]:     main()\n"
        "[rank0]: ValueError: To serve at least one request with the models's max seq len "
        "(40960), (5.62 GiB KV cache is needed)\n"
        "[rank0]:[W527 09:53:25.947412174 ProcessGroupNCCL.cpp:1575] Warning: WARNING: "
        "destroy_process_group() was not called before program exit\n"
    )
    assert_error_said(
        traceback,
        "ValueError: To serve at least one request with the models's max seq len (40960), "
        "(5.62 GiB KV cache is needed)",
    )
    server = (
        "(APIServer pid=7309)     return await future\n"
        "(APIServer pid=7309)            ^^^^^^^^^^^^\n"
        "(APIServer pid=7309) Exception: Call to collective_rpc method failed: "
        "start_weight_update must be called before update_weights.\n"
    )
    assert content_error(server, shell=True) == (
        "Exception: Call to collective_rpc method failed: start_weight_update must be called "
        "before update_weights."
    )
    compose = (  # `docker compose up`: each line after its service's mark
        "ui-1  | node:internal/modules/cjs/loader:1210\nui-1  |   throw err;\nui-1  |\n"
        "ui-1  | Error: Cannot find module '/app/apps/ui/server.js'\n"
        "ui-1  |     at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)\n"
        "ui-1  | Node.js v20.19.6\n"
    )
    assert (
        content_error(compose, shell=True) == "Error: Cannot find module '/app/apps/ui/server.js'"
    )


def test_a_document_the_user_points_to_gives_the_lines_that_direct() -> None:
    """`refer to @benchmarks/HANDOFF.md`, `follow /home/r/METHODOLOGY.md`: once the agent reads
    a document the user named (by the Read tool or `cat`, by the path named or one that ends
    with it), its lines that direct (`Do NOT ...`, `Never ...`, a heading that says so, a line
    labelled a rule, a note that binds: `Note: This must ...`) are the user's rules, by the
    file's name. Lines that say `only` or `must` in passing are not, nor is
    a document the user did not name, and the message stays as typed."""
    handoff = (
        "# Benchmark Handoff\n\n## Status\nThe model only has **398 parameters** with clean "
        "names.\n\n**Do NOT use `CUDA_VISIBLE_DEVICES` to isolate vLLM.** It must see all GPUs.\n"
        "\n### Never `kill -9` a CUDA process in this container\n\nUse graceful termination.\n"
        "\n**Note:** This must also be applied on the vLLM server side when launching.\n"
        "\nNote: the smoke test only ran once.\n"
    )
    numbered = "".join(
        f"{n:6}→{line}\n"
        for n, line in enumerate(
            [
                "## Core",
                "**The Golden Rule:** Every phase must be a complete, working product.",
                "#### Never Rewrite, Only Add",
                "```js",
                "// Don't",
            ]
        )
    )
    prompt = "refer to @benchmarks/HANDOFF.md, then follow /home/r/METHODOLOGY.md and run it"
    facts = extract_facts(
        conversation(
            ("user", prompt),
            (
                "assistant",
                [
                    call("c1", "Read", file_path="/root/trl/benchmarks/HANDOFF.md"),
                    call("c2", "Bash", command="cat /home/r/METHODOLOGY.md"),
                    call("c3", "Read", file_path="/root/trl/NOTES.md"),
                ],
            ),
            (
                "user",
                [
                    result("c1", handoff),
                    result("c2", numbered),
                    result("c3", "Never edit the vendored files.\n"),
                ],
            ),
            ("assistant", [text("Running it.")]),
        )
    )
    assert facts.user_messages == (prompt,)
    assert facts.constraints == (
        "HANDOFF.md: Do NOT use `CUDA_VISIBLE_DEVICES` to isolate vLLM. It must see all GPUs.",
        "HANDOFF.md: Never `kill -9` a CUDA process in this container",
        "HANDOFF.md: Note: This must also be applied on the vLLM server side when launching.",
        "METHODOLOGY.md: The Golden Rule: Every phase must be a complete, working product.",
        "METHODOLOGY.md: Never Rewrite, Only Add",
    )


def test_a_type_error_too_long_to_say_whole_says_what_differs() -> None:
    """TypeScript's first line of a type error between two long object types says nothing a
    reader can use once cut to the line's room; the short lines of its elaboration below it
    (which property, which types) are said after its head."""
    first = (
        "Type error: Type '{ group_id: string; unit_id: string; start_date: string; end_date: "
        "string; active: boolean | undefined; unit: { unit_id: string; title: string; subject: "
        "string; description: string | null; year: number | null; } | null; }[]' is not "
        "assignable to type 'NormalizedAssignmentRow[]'."
    )
    output = (
        "Exit code: 1\nFailed to compile.\n\n./src/lib/server-actions/pupils.ts:175:9\n"
        f"{first}\n  Type '{{ group_id: string; unit_id: string; start_date: string; end_date: "
        "string; active: boolean | undefined; }' is not assignable to type "
        "'NormalizedAssignmentRow'.\n    Types of property 'active' are incompatible.\n"
        "      Type 'boolean | undefined' is not assignable to type 'boolean'.\n"
        "        Type 'undefined' is not assignable to type 'boolean'.\n\n"
        "Next.js build worker exited with code: 1 and signal: null\n"
    )
    said = error_line(output)
    assert len(said) <= ERROR_CHARS
    assert said.startswith("Type error: Type '{ group_id: string;")
    assert said.endswith(
        "… Types of property 'active' are incompatible. "
        "Type 'boolean | undefined' is not assignable to type 'boolean'."
    )
    soft = content_error(output.replace("Exit code: 1\n", ""), shell=True)
    assert soft.startswith("Failed to compile. Type error: Type '{")
    assert soft.endswith("Type 'boolean | undefined' is not assignable to type 'boolean'.")
    short = "Type error: Type 'string' is not assignable to type 'number'."
    assert error_line(f"{short}\n  Type 'x' is not assignable.\n") == short


def test_node_s_error_with_its_code_is_an_error_in_output_that_exited_0() -> None:
    """Node prints `Error [ERR_MODULE_NOT_FOUND]: ...` (a space before the code): in output
    that exited 0 (a server's log read with `tail`), it is the error the output carries."""
    output = (
        "node:internal/modules/esm/resolve:873\n"
        "  throw new ERR_MODULE_NOT_FOUND(packageName, fileURLToPath(base), null);\n"
        "        ^\n\n"
        "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'express' imported from /app/server.js\n"
        "    at packageResolve (node:internal/modules/esm/resolve:873:9)\n\nNode.js v20.11.1\n"
    )
    assert content_error(output, shell=True) == (
        "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'express' imported from /app/server.js"
    )


@pytest.mark.parametrize(
    ("new", "old", "replaces"),
    [
        ("Decision: 4,000 character prompt limit.", "Decision: Limit audio to 60 seconds.", False),
        ("Q: Prompt limit? → A: 4,000 characters", "Q: Audio limit? → A: 60 seconds", False),
        ("Decision: Use Redis 7 for the cache.", "Decision: Use Redis 6 for the cache.", True),
    ],
)
def test_the_label_of_a_written_decision_is_not_a_shared_word(
    new: str, old: str, replaces: bool
) -> None:
    """Every decision a file records says `Decision:` (or `Q: ... → A:`): two about different
    things share that label, and one does not replace the other for it."""
    assert supersedes(new, old) is replaces


def test_a_script_started_in_the_background_is_a_command() -> None:
    """A script of several lines, started in the background, answers only where its output
    goes: it is a command run, not a `cd` that only looked."""
    script = "cd /app\nrm -rf node_modules package-lock.json\nnpx -y npm@12.0.2 install"
    started = (
        "Command running in background with ID: b8kv4s6y0. Output is being written to: "
        "/tmp/tasks/b8kv4s6y0.output. You will be notified when it completes."
    )
    facts = extract_facts(
        conversation(
            ("user", "Install it."),
            ("assistant", [call("a", "Bash", command=script, run_in_background=True)]),
            ("user", [result("a", started)]),
            ("assistant", [text("Started.")]),
        )
    )
    assert [c.command for c in facts.commands] == [
        "cd /app rm -rf node_modules package-lock.json npx -y npm@12.0.2 install"
    ]


def test_a_plan_the_agent_wrote_to_a_file_is_the_plan_once_the_user_approves_it_by_name() -> None:
    """Asked for a plan in a file, the agent writes it (a patch adding `plan.001.md`, or a
    write tool); the user approves it by naming the file. Naming it to have it changed does
    not approve it."""
    patch = (
        "*** Begin Patch\n*** Add File: plans/groups/plan.001.md\n+# Plan: join feedback\n"
        "+## Steps\n+- Wrap the join form in a client component with `useActionState`.\n"
        "+- Show a spinner on the Join button while it runs.\n*** End Patch"
    )

    def facts_after(answer: str, tool: str = "apply_patch", **arguments: Any) -> Facts:
        return extract_facts(
            conversation(
                ("user", "create a plan in plans/groups/plan.001.md"),
                ("assistant", [call("p", tool, **(arguments or {"input": patch}))]),
                ("user", [result("p", "Success. Updated the following files: A plan.001.md")]),
                ("assistant", [text("Plan written.")]),
                ("user", answer),
            )
        )

    steps = [
        "Plan: join feedback",
        "Steps",
        "Wrap the join form in a client component with `useActionState`.",
        "Show a spinner on the Join button while it runs.",
    ]
    assert list(facts_after("ok plan.001.md looks good. Execute.").plan) == steps
    assert facts_after("plan.001.md is wrong: use a modal instead").plan == ()
    assert facts_after("ok, execute").plan == ()  # no file named: not this rule's
    written = facts_after(
        "PLAN.md is fine, go", "Write", file_path="PLAN.md", content="- Add the index\n- Backfill"
    )
    assert list(written.plan) == ["Add the index", "Backfill"]


def test_the_rules_an_agent_passed_on_to_a_sub_agent_are_the_session_s_rules() -> None:
    brief = (
        "Refactor the Register page to MVVM.\n\n## Key files:\n- `RegisterActivity.kt`\n\n"
        "## Project conventions (from MEMORY.md):\n"
        "- Models (UiState/Effect) go at the bottom of the ViewModel file, not in XxxModels.kt\n"
        "- Package: `com.example`\n\n"
        "## User preferences:\n- Do NOT show file content in responses\n"
        "- Keep responses concise\n\nPlease:\n1. Keep the repository layer as-is\n"
        "2. Do not run the app\n"
    )
    report = (
        "## Summary of Changes\n\n- Overrode `setProgressStatus` to update `_state` instead "
        "of `progressDialogObservable`\n- Added `RegisterEffect` at the bottom of the file\n"
    )
    facts = extract_facts(
        conversation(
            ("user", "Migrate the register screen."),
            (
                "assistant",
                [
                    call("s1", "Task", description="Refactor Register", prompt=brief),
                    call("s2", "Agent", prompt="Look around. Do not edit any file."),
                ],
            ),
            ("user", [result("s1", report), result("s2", "Nothing found.")]),
        )
    )
    assert facts.constraints == (
        "Models (UiState/Effect) go at the bottom of the ViewModel file, not in XxxModels.kt",
        "Do NOT show file content in responses",
        "Keep responses concise",
    )
    # what a sub-agent reports is a report of the work; its "instead of" is no decision taken
    assert facts.decisions == ()
    assert facts.reports[0].startswith("Sub-agent (Refactor Register): Summary of Changes")


def test_what_a_sub_agent_reported_back_is_a_report_of_the_work() -> None:
    found = (
        "Perfect! Here is what I found.\n\n## Findings\n\n- The register screen keeps "
        "`MutableLiveData` for its data-bound fields (Category A).\n- `RegisterEffect` carries "
        "the navigation events.\n\nagentId: a1b2c3 (use it to resume this agent)"
    )
    facts = extract_facts(
        conversation(
            ("user", "Migrate the register screen."),
            (
                "assistant",
                [
                    call("s1", "Task", description="Migrate RegisterViewModel", prompt="..."),
                    call("s2", "Agent", prompt="Look around."),
                    call("s3", "Task", description="Count the screens", prompt="..."),
                ],
            ),
            (
                "user",
                [result("s1", found), result("s2", found), result("s3", "12 screens.")],
            ),
        )
    )
    assert facts.reports[0].startswith(
        "Sub-agent (Migrate RegisterViewModel): Perfect! Here is what I found.; Findings; "
        "The register screen keeps `MutableLiveData` for its data-bound fields (Category A)."
    )
    assert facts.reports[1].startswith("Sub-agent (task): Perfect!")
    assert len(facts.reports) == 2  # a one-line answer is no report


def test_facts_to_dict_names_every_field_in_order_as_json_writes_it() -> None:
    """`Facts.to_dict` is the JSON of a boundary's `facts`: a key per field in the record's
    order, lists where the record has tuples, and each command and error as an object."""
    import dataclasses

    from compactcli.summarizers.error_ledger import ErrorFact

    facts = Facts(
        goal="ship it",
        commands=(Command("pytest", "failed", "1 failed", 2),),
        errors=(ErrorFact("E: boom", False, "bash", "pytest"),),
        changes=(("a.py", "x -> y"),),
        constraint_turns=(1,),
    )
    data = facts.to_dict()
    assert list(data) == [f.name for f in dataclasses.fields(Facts)]
    assert orjson.loads(orjson.dumps(data)) == data
    assert data["commands"] == [
        {"command": "pytest", "outcome": "failed", "detail": "1 failed", "runs": 2}
    ]
    assert data["errors"] == [
        {"text": "E: boom", "resolved": False, "tool": "bash", "where": "pytest"}
    ]
    assert Facts.from_dict(data) == facts
