"""The extractive summarizer: exact summaries, budgets, focus, earlier summaries, redaction."""

from __future__ import annotations

import glob
from dataclasses import replace
from pathlib import Path

import pytest

from compactcli import get_dialect, read_transcript
from compactcli.summarizers import SummaryRequest, get_summarizer
from compactcli.summarizers.extractive import (
    CHANGED,
    SUMMARY_HEADINGS,
    ExtractiveSummarizer,
    parse_summary,
    render_facts,
)
from compactcli.summarizers.facts import Command, Facts, extract_facts
from compactcli.summarizers.sentences import supersedes
from compactcli.summarizers.summary_text import rule_source
from compactcli.tokens import get_counter
from compactcli.transcript import Message
from tests.conftest import CORPUS
from tests.test_facts import SESSION, call, conversation, result, text

COUNTER = get_counter("heuristic", model=None, format="anthropic")

FULL = """\
## Goal
Fix the port handling in server.py. Use pnpm, never npm. Do not touch migrations/.

## User messages (oldest first)
1. (the goal above)
2. (pending: see the asks below)

## Files modified
- src/server.py — `a` -> `b`

## Errors
- Resolved: String to replace not found in file. (Edit: src/server.py)
- Resolved: Error: listen EADDRINUSE: address already in use :::5432 (Bash: cd /repo && pnpm test 2>&1 | tail -20)

## Commands
- `pnpm test` (ok, ran 2 times): ok 12 tests

## Decisions
- I decided to read the port from the environment instead of hard-coding it.

## Current state (the agent's last message)
Done: the port now comes from PORT.

## Pending asks and todos
- Ask: /review check the docs too
- Todo [in_progress] Review docs
- Todo [pending] Update README"""

KEPT = """\
## Goal
Fix the port handling in server.py. Use pnpm, never npm. Do not touch migrations/.

## User messages (oldest first)
1. (the goal above)
2. (pending: see the asks below)

## Files modified
- src/server.py — `a` -> `b`

## Current state (the agent's last message)
Done: the port now comes from PORT.

## Pending asks and todos
- Ask: /review check the docs too
- Todo [in_progress] Review docs
- Todo [pending] Update README"""


def summarize(messages: tuple[Message, ...], budget: int, **options: object):  # type: ignore[no-untyped-def]
    request = SummaryRequest(messages=messages, counter=COUNTER, budget_tokens=budget, **options)  # type: ignore[arg-type]
    return ExtractiveSummarizer().summarize(request)


def test_headings_are_exported() -> None:
    assert SUMMARY_HEADINGS == (
        "This summary updates an earlier summary of this conversation: what the earlier one "
        "recorded is kept below, and newer turns are added.",
        "## Earlier summary",
        "## Goal",
        "## User messages (oldest first)",
        "## Constraints and preferences",
        "## Approved plan",
        "## Files modified",
        "## Files read",
        "## Errors",
        "## Commands",
        "## Decisions",
        "## Progress (oldest first)",
        "## Identifiers",
        "## Current state (the agent's last message)",
        "## Pending asks and todos",
    )


def test_summary_with_room_for_everything() -> None:
    result = summarize(SESSION, 2000)
    assert result.text == FULL
    assert (result.summarizer, result.model, result.llm_calls) == ("extractive", None, 0)
    assert result.details == {
        "extractive": {
            "summary_tokens": COUNTER.text_tokens(FULL),  # the text as written
            "budget_tokens": 2000,
            "over_budget": False,
            "omitted": {},
        }
    }
    assert result.facts == extract_facts(SESSION)
    assert summarize(SESSION, 2000).text == FULL  # deterministic


def test_a_tight_budget_keeps_constraints_asks_todos_and_modified_files() -> None:
    result = summarize(SESSION, 130)
    assert result.text == KEPT
    assert result.details["extractive"] == {
        "summary_tokens": 126,
        "budget_tokens": 130,
        "over_budget": False,
        "omitted": {"## Commands": 1, "## Decisions": 1, "## Errors": 2},
    }


@pytest.mark.parametrize("budget", [150, 200, 250, 400, 800])
def test_the_summary_fits_its_budget(budget: int) -> None:
    result = summarize(SESSION, budget)
    assert COUNTER.text_tokens(result.text) <= budget
    for line in KEPT.splitlines()[2:]:
        if not line.startswith(("1. ", "- (")):
            assert line in result.text


def test_a_budget_too_small_for_the_kept_items_is_reported() -> None:
    result = summarize(SESSION, 30)
    assert result.details["extractive"]["over_budget"] is True
    assert "Use pnpm, never npm. Do not touch migrations/." in result.text  # in the goal
    assert "- Ask: /review check the docs too" in result.text


def test_focus_takes_the_larger_share() -> None:
    plain = summarize(SESSION, 150)
    focused = summarize(SESSION, 150, focus="EADDRINUSE")
    assert "EADDRINUSE" not in plain.text
    assert "- Resolved: Error: listen EADDRINUSE: address already in use :::5432" in focused.text
    assert "- Resolved: String to replace not found in file." in plain.text
    assert "String to replace" not in focused.text  # what the focus took the room of


def test_previous_facts_make_an_update() -> None:
    earlier = extract_facts(SESSION[:5])
    result = summarize(SESSION[5:], 2000, previous_facts=earlier)
    assert result.text == SUMMARY_HEADINGS[0] + "\n\n" + FULL
    assert result.facts == extract_facts(SESSION[5:], earlier)


def test_our_own_summary_is_read_back_into_facts() -> None:
    first = summarize(SESSION[:5], 2000)
    # the pending ask is the goal: said once, and read back as the ask
    assert first.text.count("Fix the port handling") == 1
    assert "- Ask: (the goal above)" in first.text
    assert first.facts.pending == (first.facts.goal,)
    parsed = parse_summary(first.text)
    assert parsed is not None
    facts, earlier = parsed
    assert earlier is None
    # all but which message each constraint came from, which the summary does not say
    assert facts == replace(first.facts, constraint_turns=())
    second = summarize(SESSION[5:], 2000, previous=first.text)
    assert second.text == SUMMARY_HEADINGS[0] + "\n\n" + FULL


def test_the_rules_of_a_skill_and_a_file_stand_under_their_names_and_read_back() -> None:
    """An instruction file's or a skill's rules are said under its name, once, not with the
    name in front of each; read back, each rule has its name in front again. A user's rule that
    ends in a colon is not taken for a name."""
    constraints = (
        "Skill deploy: Never push to main.",
        "Skill deploy: Always run make check first.",
        "AGENTS.md: Use pnpm, not npm.",
        "Keep these in mind:",
        "Skill deploy: Ask before tagging a release.",
    )
    facts = replace(extract_facts(SESSION[:5]), constraints=constraints)
    text = render_facts(facts, 2000, COUNTER.text_tokens)[0]
    section = text[text.index("## Constraints and preferences\n") :].split("\n\n")[0]
    assert section.splitlines()[1:] == [
        "- Skill deploy:",
        "  - Never push to main.",
        "  - Always run make check first.",
        "  - Ask before tagging a release.",
        "- AGENTS.md:",
        "  - Use pnpm, not npm.",
        "- Keep these in mind:",
    ]
    parsed = parse_summary(text)
    assert parsed is not None
    spoken = set(extract_facts(SESSION[:5]).constraints)  # what its user messages say
    assert set(parsed[0].constraints) == set(constraints) | spoken


def test_a_command_that_holds_backticks_is_shown_whole_and_read_back() -> None:
    """A command with backticks in it (a shell substitution, a quoted pattern) is shown in a
    code span of longer fences, so the markdown stays whole, and read back as it ran."""
    commands = ["echo `date` && ls", 'rg -n "a|[`$]?[{]" app', "``x``", "ls -la"]
    session = [("user", "check the dates")]
    for n, command in enumerate(commands):
        session.append(("assistant", [call(f"c{n}", "Bash", command=command)]))
        session.append(("user", [result(f"c{n}", "Exit code 1\nerror: boom")]))
    first = summarize(conversation(*session), 2000)
    assert "- `` echo `date` && ls `` (failed)" in first.text
    assert "- `ls -la` (failed)" in first.text
    parsed = parse_summary(first.text)
    assert parsed is not None
    assert [c.command for c in parsed[0].commands] == [c.command for c in first.facts.commands]
    assert sorted(c.command for c in parsed[0].commands) == sorted(commands)


def test_an_agents_summary_is_kept_whole_without_its_wrapper_lines() -> None:
    agent = "Summary:\n1. Primary Request: fix the port.\n2. Files: src/server.py"
    kept = "1. Primary Request: fix the port.\n2. Files: src/server.py"
    result = summarize(SESSION[5:], 2000, previous=agent)
    assert result.text.startswith(
        SUMMARY_HEADINGS[0]
        + "\n\n## Earlier summary\n"
        + kept
        + "\n\n## User messages (oldest first)\n"
        "1. (pending: see the asks below)\n\n## Files modified\n- src/server.py — `a` -> `b`\n"
    )
    assert "## Goal" not in result.text
    assert parse_summary(agent) is None
    assert parse_summary("# Checkpoint\n\n## Goal\nx\n\n## Branch\ny") is None
    again = parse_summary(result.text)
    assert again is not None and again[1] == kept
    assert again[0].user_messages == ("/review check the docs too",)


def test_pis_summary_is_kept_beside_the_file_lists_its_compaction_records() -> None:
    """pi records its own file lists with its compaction (`previous_facts` holds them alone):
    they carry on as facts, and pi's summary is still the only memory of the rest, kept as
    text with its `<read-files>` list a section of its own."""
    agent = (
        "## Goal\nAdd retry to the HTTP client.\n\n## Constraints & Preferences\n"
        "- Never retry a POST\n\n<read-files>\nsrc/lib/http.ts\n</read-files>"
    )
    files = Facts(files_read=("src/lib/http.ts",))
    result = summarize(SESSION[5:], 2000, previous=agent, previous_facts=files)
    assert result.text.startswith(
        SUMMARY_HEADINGS[0] + "\n\n## Earlier summary\n### Goal\nAdd retry to the HTTP client.\n\n"
        "### Constraints & Preferences\n- Never retry a POST\n\n### Files read\nsrc/lib/http.ts\n"
    )
    assert result.facts.files_read[0] == "src/lib/http.ts"
    assert "\n## Goal\n" not in result.text  # the earlier summary holds it
    # the facts of a summary of ours stand for its text: not said twice
    ours = Facts(goal="Add retry to the HTTP client.", files_read=("src/lib/http.ts",))
    result = summarize(SESSION[5:], 2000, previous=agent, previous_facts=ours)
    assert "## Earlier summary" not in result.text


def test_a_superseded_value_is_shown_only_next_to_the_new_one() -> None:
    messages = conversation(
        ("user", "Use port 5432 for the database."),
        ("assistant", [text("OK.")]),
        ("user", "Change of plan: use port 6543 for the database."),
        ("assistant", [text("Switched to 6543.")]),
    )
    assert summarize(messages, 500).text == (
        "## Goal\n"
        "Use port 5432 for the database. [later changed: Change of plan: use port 6543 for the database.]\n\n"
        "## User messages (oldest first)\n"
        "1. (the goal above)\n"
        "2. Change of plan: use port 6543 for the database.\n\n"
        "## Constraints and preferences\n"
        "- Change of plan: use port 6543 for the database. (replaces earlier: Use port 5432 for the database.)\n\n"
        "## Identifiers\n"
        "- port 6543\n\n"  # not port 5432: only a replaced rule names it
        "## Current state (the agent's last message)\n"
        "Switched to 6543."
    )
    assert supersedes("use Node 20", "use Node 18 for the build") is False  # too few shared words
    assert supersedes("build with Node 20 on CI", "build with Node 18 on CI") is True


def test_the_lines_of_one_message_never_replace_each_other() -> None:
    """A spec's rules are all in force at once, even where two give one setting two values
    (`side=0` reverts, `side=YES` pays): a later message may replace one of them."""
    spec = (
        "Build the market contract.\n\n## Rules\n"
        "- A bet must revert on side=0 (NONE).\n"
        "- A claim must pay side=YES bettors from both pools.\n"
        "- The database must use port 5432.\n"
    )
    messages = conversation(
        ("user", spec),
        ("assistant", [text("Building it.")]),
        ("user", "Change of plan: the database must use port 6543."),
        ("assistant", [text("Switched to 6543.")]),
    )
    facts = summarize(messages, 2000).facts
    assert facts.constraint_turns == (1, 1, 1, 2)
    assert facts.replaced_constraints() == {2: 3}  # the port, by the second message
    found = summarize(messages, 2000).text
    assert "replaces earlier: A bet" not in found and "(replaces earlier" in found
    assert "(replaces earlier: The database must use port 5432.)" in found
    # read back from an earlier compaction's facts, the messages are still told apart
    again = summarize(messages[2:], 2000, previous_facts=replace(facts, constraint_turns=()))
    assert again.facts.replaced_constraints() != {}
    again = summarize(messages[2:], 2000, previous_facts=summarize(messages[:2], 2000).facts)
    assert again.facts.replaced_constraints() == {2: 3}


def test_a_setting_changed_without_a_cue_word_is_shown_only_next_to_its_new_value() -> None:
    messages = conversation(
        (
            "user",
            "Fix the export. FYI the staging setup uses INVOICES_TIMEOUT_MS=4154; keep that in mind.",
        ),
        ("assistant", [text("Looking.")]),
        ("user", "Update: ops changed it, it's INVOICES_TIMEOUT_MS=5004 now."),
        ("assistant", [text("Noted.")]),
    )
    assert summarize(messages, 500, redact=False).text == (
        "## Goal\n"
        "Fix the export. FYI the staging setup uses INVOICES_TIMEOUT_MS=4154; keep that in mind. "
        "[later changed: Update: ops changed it, it's INVOICES_TIMEOUT_MS=5004 now.]\n\n"
        "## User messages (oldest first)\n"
        "1. (the goal above)\n"
        "2. Update: ops changed it, it's INVOICES_TIMEOUT_MS=5004 now.\n\n"
        "## Constraints and preferences\n"
        "- Update: ops changed it, it's INVOICES_TIMEOUT_MS=5004 now. (replaces earlier: FYI the "
        "staging setup uses INVOICES_TIMEOUT_MS=4154; keep that in mind.)\n\n"
        "## Current state (the agent's last message)\n"
        "Noted."
    )


@pytest.mark.parametrize(
    ("old", "new", "old_value", "new_value"),
    [
        (
            "The staging database lives at billing-db.staging.internal:5369.",
            "Heads up, they moved it to billing-db.staging.internal:6020 this morning.",
            "internal:5369",
            "internal:6020",
        ),
        (
            "The node version is 18.19 on CI.",
            "Turns out the node version is now 20.11.",
            "18.19",
            "20.11",
        ),
        (
            "CI runs the suite with --workers=4 at the moment.",
            "They gave CI bigger boxes: --workers=8.",
            "--workers=4",
            "--workers=8",
        ),
        (
            "Use port 5432 for the database.",
            "Change of plan: use port 6543 for the database.",
            "5432",
            "6543",
        ),
    ],
)
def test_an_old_value_appears_only_next_to_its_replacement(
    old: str, new: str, old_value: str, new_value: str
) -> None:
    messages = conversation(
        ("user", f"Please look at the flaky export, it has been failing since Monday. {old}"),
        ("assistant", [text("Looking.")]),
        ("user", "Also check the logs of the nightly job."),
        ("assistant", [text("Checked.")]),
        ("user", new),
        ("assistant", [text("Noted.")]),
    )
    for budget in (60, 120, 500):
        summary = summarize(messages, budget, redact=False).text
        assert new_value in summary
        for line in summary.splitlines():  # wherever the old value is, the new one is too
            if old_value in line:
                assert new_value in line, (budget, line)


def test_secrets_are_redacted_unless_asked_not_to() -> None:
    messages = conversation(("user", "Deploy with API_KEY=abc123xyz789 to postgres://u:pw1@db/x"))
    redacted = summarize(messages, 500)
    assert (
        "Deploy with API_KEY=[REDACTED:api-key] to postgres://u:[REDACTED:url-password]@db/x"
        in redacted.text
    )
    assert "abc123xyz789" not in str(redacted.facts.to_dict())
    kept = summarize(messages, 500, redact=False)
    assert "API_KEY=abc123xyz789" in kept.text


def test_built_by_name_without_settings() -> None:
    summarizer = get_summarizer("extractive")
    assert isinstance(summarizer, ExtractiveSummarizer)
    assert summarizer.name == "extractive"


CORPUS_FILES = sorted(glob.glob(str(CORPUS / "*.jsonl")))


@pytest.mark.skipif(not CORPUS.is_dir(), reason="corpus not available")
@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: Path(p).name)
def test_corpus_summaries_fit_and_keep_what_must_survive(path: str) -> None:
    transcript = read_transcript(path)
    dialect = get_dialect(transcript.format)
    messages = tuple(dialect.context(transcript))
    counter = get_counter("heuristic", model=dialect.model(transcript), format=transcript.format)
    size = sum(counter.message_tokens(m) for m in messages)
    budget = max(size // 10, 300)
    request = SummaryRequest(messages=messages, counter=counter, budget_tokens=budget)
    result = ExtractiveSummarizer().summarize(request)
    assert counter.text_tokens(result.text) <= budget
    for constraint in result.facts.constraints:  # kept, cut shorter when the budget is tight
        source = rule_source(constraint)  # a skill's rule: under its name, said once
        rule = source[1] if source else constraint
        assert rule.strip("… ")[:30] in result.text  # (or said by a message shown whole)
        if source:
            assert f"- {source[0]}:\n" in result.text
    for path_ in result.facts.files_modified:
        assert f"- {path_}\n" in result.text + "\n" or f"- {path_}{CHANGED}" in result.text
    for error in result.facts.errors:
        if not error.resolved:
            assert error.text in result.text


README_SUMMARY = """\
## Goal
The totals test fails since I added discounts. Can you fix it?

## User messages (oldest first)
1. (the goal above)

## Files modified
- invoicer/totals.py — `return subtotal - discount * subtotal * 2` -> `return subtotal * (1 - discount)`

## Errors
- Resolved: tests/test_totals.py:14: AssertionError (exec_command: pytest -q tests/test_totals.py)

## Commands
- `pytest -q tests/test_totals.py` (failed): tests/test_totals.py:14: AssertionError
- `pytest -q` (ok): 6 passed in 0.34s

## Progress (oldest first)
- While working: The discount is subtracted twice (`* 2`). I'll apply it once.

## Current state (the agent's last message)
Fixed: `total()` subtracted the discount twice. It now returns `subtotal * (1 - discount)`, and `pytest -q` passes (6 tests)."""


def test_readme_example() -> None:
    transcript = read_transcript(
        str(Path(__file__).parents[1] / "fixtures/transcripts/codex-session.jsonl")
    )
    messages = tuple(get_dialect(transcript.format).context(transcript))
    request = SummaryRequest(
        messages=messages,
        counter=get_counter("heuristic", model=None, format=transcript.format),
        budget_tokens=400,
    )
    result = get_summarizer("extractive").summarize(request)
    assert result.text == README_SUMMARY
    assert result.details == {
        "extractive": {
            "summary_tokens": 193,
            "budget_tokens": 400,
            "over_budget": False,
            "omitted": {},
        }
    }


def test_a_summary_that_quotes_the_latest_request_reads_back_with_the_request_in_place() -> None:
    text = (
        "## Goal\nFix the export.\n\n## User messages (oldest first)\n1. (the goal above)\n"
        "2. (the latest request below)\n\n## Pending asks and todos\n"
        "- Ask: (the latest request below)\n- Todo [pending] add tests\n\n"
        "## The user's latest request (verbatim; the kept turns continue it)\n"
        "Does it work with tabs?\n## Notes of mine, pasted\nkeep them"
    )
    parsed = parse_summary(text)
    assert parsed is not None
    facts, earlier = parsed
    request = "Does it work with tabs?\n## Notes of mine, pasted\nkeep them"
    assert facts.user_messages == ("Fix the export.", request)
    assert facts.pending == (request,)
    assert facts.todos == ("[pending] add tests",)
    assert earlier is None


IDENTIFIED = conversation(
    ("user", "Fix the tz bug of INVO-8781 on branch feat/tz."),
    ("assistant", [text("It broke in commit 2e45f5fece; I'll keep the fix small.")]),
    ("user", "Good. Put it in PR #5658."),
    ("assistant", [text("Done.")]),
)


def test_identifiers_the_goal_does_not_name_are_listed_and_read_back() -> None:
    result = summarize(IDENTIFIED, 2000)
    assert result.text == (
        "## Goal\nFix the tz bug of INVO-8781 on branch feat/tz.\n\n"
        "## User messages (oldest first)\n1. (the goal above)\n2. Good. Put it in PR #5658.\n\n"
        "## Identifiers\n- commit 2e45f5fece\n- #5658\n\n"
        "## Current state (the agent's last message)\nDone."
    )
    assert result.facts.identifiers == (
        "INVO-8781",
        "branch feat/tz",
        "commit 2e45f5fece",
        "#5658",
    )
    parsed = parse_summary(result.text)
    assert parsed is not None
    assert parsed[0].identifiers == ("commit 2e45f5fece", "#5658")


def test_under_a_tight_budget_decisions_go_first_then_identifiers_then_user_messages() -> None:
    turns = (
        *IDENTIFIED,
        *conversation(
            ("user", "Anything else?"),
            ("assistant", [text("I decided to keep the old parser for dates before 1970.")]),
            ("user", "ok"),
            ("assistant", [text("Fine.")]),  # the last message, always kept
        ),
    )
    full = summarize(turns, 2000).text
    assert "## Decisions\n- I decided to keep" in full and "## Identifiers" in full
    gone: dict[str, int] = {}
    for budget in range(COUNTER.text_tokens(full), 0, -1):
        summary = summarize(turns, budget).text
        for what in ("I decided to keep", "- #5658", "2. Good. Put it in PR #5658."):
            if what not in summary:
                gone.setdefault(what, budget)
    assert gone["I decided to keep"] > gone["- #5658"] > gone["2. Good. Put it in PR #5658."]


def test_under_a_tight_budget_a_name_an_edit_defines_goes_before_a_url_the_user_gave() -> None:
    turns = conversation(
        ("user", "Build the cards."),
        ("assistant", [text("Which node?")]),
        ("user", "The one at https://rpc.io/v1."),
        (
            "assistant",
            [
                call(
                    "w",
                    "Write",
                    file_path="src/cards.tsx",
                    content="export function potentialReturnOfEveryOutcomeInTheMarket() {\n}\n",
                )
            ],
        ),
        ("user", [result("w", "written")]),
        ("assistant", [text("Done.")]),
    )
    full = summarize(turns, 2000).text
    assert (
        "- https://rpc.io/v1\n- potentialReturnOfEveryOutcomeInTheMarket\n" in full
    )  # oldest first
    gone: dict[str, int] = {}
    for budget in range(COUNTER.text_tokens(full), 0, -1):
        summary = summarize(turns, budget).text
        for what in ("- https://rpc.io/v1", "- potentialReturnOfEveryOutcomeInTheMarket"):
            if what not in summary:
                gone.setdefault(what, budget)
    assert gone["- potentialReturnOfEveryOutcomeInTheMarket"] > gone["- https://rpc.io/v1"]


def test_errors_of_the_same_text_from_different_calls_are_said_once_when_squeezed() -> None:
    yarn = "Error: This project is configured to use yarn"
    messages = conversation(
        ("user", "Build the site."),
        (
            "assistant",
            [call("c1", "Bash", command="npm run build"), call("c2", "Bash", command="npm ci")],
        ),
        ("user", [result("c1", yarn, is_error=True), result("c2", yarn, is_error=True)]),
        ("assistant", [text("Both fail the same way.")]),
    )
    roomy = summarize(messages, 2000).text  # one line, with both commands
    assert roomy.split("## Errors\n")[1].split("\n\n")[0] == (
        f"- Unresolved: {yarn} (Bash: npm run build; npm ci)"
    )
    tight = summarize(messages, 50)  # both shortened to the text alone: one line
    assert tight.text == (
        f"## Goal\nBuild the site.\n\n## Errors\n- Unresolved: {yarn}\n\n"
        "## Current state (the agent's last message)\nBoth fail the same way."
    )
    fitted = tight.details["extractive"]
    assert fitted["summary_tokens"] == COUNTER.text_tokens(tight.text) <= fitted["budget_tokens"]
    assert (fitted["budget_tokens"], fitted["over_budget"]) == (50, False)  # within the budget


def test_lines_of_instruction_files_are_all_in_force_and_never_replace_a_line() -> None:
    """Neither a line of the same file, nor of another file, nor the user's own: the user's
    later words may replace a file's line, not the other way round."""
    assert supersedes("build with Node 20 on CI", "build with Node 18 on CI") is True
    for label in ("Skill release: ", "AGENTS.md: "):
        new, old = f"{label}build with Node 20 on CI", f"{label}build with Node 18 on CI"
        assert supersedes(new, old) is False
        assert supersedes(new, "Skill ship: build with Node 18 on CI") is False
        assert supersedes(new, "build with Node 18 on CI") is False
        assert supersedes("build with Node 20 on CI", old) is True
    assert supersedes("Note: build with Node 20 on CI", "Note: build with Node 18 on CI") is True


def test_a_tight_budget_keeps_a_skills_task_with_its_name() -> None:
    body = (
        "Base directory for this skill: /home/u/.claude/skills/grant\n\n---\nname: grant\n---\n"
        "# Grant\n\nPresent the application organized by the form's 3 steps.\n\n"
        "### Phase 1 — Collect context\n\n1. Read idea-context.md.\n\n"
        "### Phase 2 — Draft\n\nWrite it.\n\n## Rules\n- Never fabricate proof of work.\n"
        "- The grant is fixed at 200 USDG.\n- Always show the link at the start and the end.\n"
    )
    messages = conversation(
        ("user", "/grant"),
        ("user", body),
        ("assistant", [text("Collecting the context now.")]),
        ("user", "go on"),
    )
    found = summarize(messages, 200).text
    rules = found[found.index("- Skill grant:\n") :].splitlines()[1:4]
    assert rules == [
        "  - Present the application organized by the form's 3 steps.",
        "  - Workflow: Phase 1 — Collect context; Phase 2 — Draft",
        "  - Never fabricate proof of work.",
    ]
    assert "replaces earlier" not in found


def test_a_tight_budget_keeps_the_rules_of_an_agents_earlier_summary_beside_new_turns() -> None:
    earlier = (
        "Summary:\n1. Primary Request and Intent:\n   The user is building an ops toolkit.\n"
        '   - "Scaffold the frontend: just the toolchain setup, no actual components yet."\n'
        "2. Key Technical Concepts:\n   - Spring Boot 3.3, Java 17, Gradle wrapper, Lombok\n"
        + "".join(
            f"   - Detail {n}: the case store keeps version {n} in memory.\n" for n in range(6)
        )
        + "   - Git: never commit without an explicit user request\n"
        "3. Files and Code Sections:\n   .git/\n   - **`ops/restore.sh`** (created)\n"
    )
    turns = [("user", "Now add swagger to the backend, please.")]
    for n in range(6):
        turns.append(("assistant", [text(f"Step {n}: added the springdoc dependency, part {n}.")]))
        turns.append(("user", f"Next part {n}: wire the OpenAPI config bean and check it."))
    turns.append(("assistant", [text("Swagger UI is served at /swagger-ui/index.html now.")]))
    found = summarize(conversation(*turns), 200, previous=earlier).text
    assert COUNTER.text_tokens(found) <= 200
    assert "never commit without an explicit user request" in found
    assert "just the toolchain setup, no actual components yet" in found
    assert ".git/" not in found


def test_an_agents_earlier_summary_gives_its_code_way_to_the_users_new_rules() -> None:
    earlier = (
        "Summary:\n1. Primary Request and Intent:\n   The user is building an ops toolkit.\n"
        "2. Files and Code Sections:\n   - **`ops/run.sh`** (created)\n```\n"
        + "".join(f'LINE_{n}="$(cd "$(dirname "$0")" && pwd)/part{n}"\n' for n in range(30))
        + "```\n"
    )
    rules = [
        "Never push to the main branch of the deployment repository without a reviewed pull "
        "request first.",
        "Always run the full integration test suite against the staging database before you "
        "merge anything.",
        "Do not add any new runtime dependency to the backend service unless I approve it in "
        "writing first.",
        "Keep every public endpoint of the case API backwards compatible with the version-one "
        "clients we ship.",
    ]
    turns = conversation(
        ("user", "Now add swagger to the backend, please. " + " ".join(rules)),
        ("assistant", [text("Swagger UI is served now.")]),
    )
    shown = []
    for budget in (250, 300, 400):
        found = summarize(turns, budget, previous=earlier).text
        assert COUNTER.text_tokens(found) <= budget
        assert "The user is building an ops toolkit." in found  # the earlier request stays
        # the new rules are shown whole before the earlier summary's code takes the room left
        assert sum(rule in found for rule in rules) >= 3
        shown.append(found.count("LINE_"))
    assert shown == sorted(shown) and shown[-1] > 0
    roomy = summarize(turns, 900, previous=earlier).text
    assert all(rule in roomy for rule in rules)
    assert roomy.count("LINE_") == 30  # room the new facts leave goes back to it


def test_what_the_agent_said_mid_turn_and_last_is_said_once_as_the_current_state() -> None:
    said = (  # long enough to be a statement of the turn (`STATEMENT_CHARS`)
        "I am using the grant skill now: I will load its workflow first, then gather the "
        "project docs and the repository context that it requires."
    )
    messages = conversation(
        ("user", "Fill in the grant form."),
        ("assistant", [text(said), call("c1", "Bash", command="cat SKILL.md")]),
        ("user", [result("c1", "# Grant skill")]),
    )
    summary = summarize(messages, 2000).text
    assert summary.count(said) == 1
    assert f"## Current state (the agent's last message)\n{said}\n" in summary


def test_a_last_reply_too_long_to_keep_whole_is_not_reported_again() -> None:
    """The facts keep a long last reply's head and tail; the report of that turn is still the
    report of that reply, so the summary says it once, as the current state."""
    sections = "\n".join(
        f"- Gap {n}: a finding about the market, with its sources." for n in range(120)
    )
    reply = f"Here is the full deep dive on the market gaps:\n\n{sections}\n\nWant more?"
    messages = conversation(
        ("user", "Find the gaps in the market."),
        ("assistant", [text(reply)]),
        ("user", "Thanks, and now the pricing?"),
    )
    summary = summarize(messages, 8000).text
    assert summary.count("Here is the full deep dive on the market gaps") == 1
    assert "## Current state (the agent's last message)\nHere is the full deep dive" in summary


def test_an_error_a_command_printed_is_said_once_under_errors() -> None:
    shown = "zsh:3: permission denied: /etc/hosts"
    messages = conversation(
        ("user", "Point the app at the staging host."),
        ("assistant", [call("c1", "Bash", command="source ~/.zshrc; cat /etc/hosts")]),
        ("user", [result("c1", f"{shown}\n127.0.0.1 localhost\n")]),
        ("assistant", [call("c2", "Bash", command="make build")]),
        ("user", [result("c2", "Exit code: 2\nerror: missing target 'build'", is_error=True)]),
        ("assistant", [text("Both need a look.")]),
    )
    text_ = summarize(messages, 2000).text
    assert text_.count(shown) == 1 and text_.count("missing target 'build'") == 1
    # it did not fail, but it is no success either
    assert "- `source ~/.zshrc; cat /etc/hosts` (printed an error)\n" in text_
    assert "- `make build` (failed)\n" in text_
    errors = text_.split("## Errors\n", 1)[1].split("\n\n", 1)[0]
    assert shown in errors and "missing target 'build'" in errors


def test_a_window_of_a_long_rule_sentence_is_not_repeated_when_the_message_is_shown() -> None:
    dictated = (
        "so first we ship the split mode on mainnet and then the agent comes and it talks to "
        "the group and it keeps the ledger and then we open the fund mode but invite only for "
        "a closed beta and we keep the settlement in usdc and after that the card partners "
        "come in and we look at the tax part later on when the rest of it is stable and tested "
        "and the docs say all of that already so the roadmap only needs the order of it and the "
        "names of the partners we talk to and the dates we know of and the people who own each "
        "part of it so that the team can see it at a glance when they open the roadmap page"
    )
    messages = conversation(("user", dictated), ("assistant", [text("Noted, I will plan it.")]))
    found = summarize(messages, 4000).text
    assert "## Constraints and preferences" not in found
    assert found.count("invite only") == 1  # in the goal, shown whole


def test_a_rule_the_quoted_request_holds_is_not_said_again() -> None:
    """The request quoted verbatim after the summary carries its own rules: the summary does not
    list them again (it lists the rules of earlier messages, and every rule when nothing is
    quoted)."""
    last = "Check the header again. Never touch the CSS variables; keep the dark theme."
    messages = conversation(
        ("user", "Fix the header layout. Always run the linter before you finish."),
        ("assistant", [text("I fixed the header layout and ran the linter.")]),
        ("user", last),
    )
    quoted = summarize(messages, 2000, quoted_request=messages[-1]).text
    plain = summarize(messages, 2000).text
    assert "Never touch the CSS variables" in plain
    assert "Never touch the CSS variables" not in quoted
    assert "Always run the linter before you finish." in quoted  # an earlier message's rule


def test_a_pasted_banner_is_left_out_of_the_goal_and_the_messages() -> None:
    """A terminal pasted into a message brings its ASCII-art banner and box frames: lines drawn
    with no letter or digit, which say nothing once the message is one line; code, JSON and
    markdown lines without letters are kept."""
    banner = "   ___ _   _ ___\n  / __| | | | _ \\\n  \\__ \\ |_| |  _/\n╔══════════╗\n"
    goal = f"Apply for the grant.\n$ curl -fsSL https://x.dev/setup.sh | bash\n{banner}"
    goal += "║ NAME ··· AYUSH ║\n  ✓ Installed 31 skills\n});\n|---|---|\n}, {\nWhat now?"
    later = f"It printed this again:\n{banner}Then it stopped."
    turns = conversation(
        ("user", goal),
        ("assistant", [text("Running it.")]),
        ("user", later),
        ("assistant", [text("Done.")]),
    )
    summary = summarize(turns, 2000).text
    assert (
        "## Goal\nApply for the grant. $ curl -fsSL https://x.dev/setup.sh | bash ║ NAME ··· "
        "AYUSH ║ ✓ Installed 31 skills }); |---|---| }, { What now?\n"
    ) in summary
    assert "2. It printed this again: Then it stopped." in summary
    assert "___" not in summary and "══" not in summary


def test_what_changed_in_a_file_comes_after_the_decisions_when_room_is_short() -> None:
    paths = [f"src/module_{n}.ts" for n in range(12)]
    changes = tuple(
        (path, f"`const limit = {n};` -> `const limit = {n + 1};`") for n, path in enumerate(paths)
    )
    decision = "Keep the insert signed-in only rather than weakening RLS for guests"
    facts = Facts(files_modified=tuple(paths), changes=changes, decisions=(decision,))
    count = COUNTER.text_tokens
    roomy = render_facts(facts, 4000, count)[0]
    assert decision in roomy and roomy.count("const limit") == 2 * len(paths)
    short = render_facts(facts, count(roomy) - 60, count)[0]
    assert decision in short and all(path in short for path in paths)
    assert short.count("const limit") < roomy.count("const limit")


def test_a_user_message_is_never_shown_whole_at_the_cost_of_the_decisions() -> None:
    brief = " ".join(f"Part {n}: the event flow and its states in detail." for n in range(30))
    messages = ("Audit the site.", *(f"Task {k}. {brief}" for k in range(3)), "Apply for it.")
    decisions = tuple(
        f"Keep store {n} signed-in only rather than open to guests" for n in range(10)
    )
    facts = Facts(goal=messages[0], user_messages=messages, decisions=decisions)
    whole = 0
    for budget in range(1500, 300, -25):
        text = render_facts(facts, budget, COUNTER.text_tokens)[0]
        if "Part 15" in text:  # a brief shown whole (its middle is cut from a short one)
            whole += 1
            assert all(decision in text for decision in decisions), budget
    assert whole > 10


def test_commands_that_went_well_take_no_room_a_report_could_use_whole() -> None:
    report = "; ".join(
        f"Step {n}: the loader now reads page {n} before the next" for n in range(40)
    )
    reports = tuple(f"Turn {k} done. {report}" for k in range(3))
    commands = tuple(Command(f"python3 check_{n}.py --all", "ok") for n in range(40))
    facts = Facts(goal="Fix the loader.", user_messages=("Fix the loader.",), reports=reports)
    facts = replace(facts, commands=commands)
    count = COUNTER.text_tokens
    shown = 0
    for budget in range(2500, 200, -50):
        text = render_facts(facts, budget, count)[0]
        if "check_" not in text:
            continue
        shown += 1  # a command that went well is shown: each report is whole, or could not be
        lines = text.splitlines()
        for line in reports:
            if f"- {line}" in lines:
                continue
            at = next(n for n, shape in enumerate(lines) if shape.startswith(f"- {line[:12]}"))
            whole = "\n".join([*lines[:at], f"- {line}", *lines[at + 1 :]])
            dropped = [n for n, shape in enumerate(lines) if "check_" in shape]
            kept = [shape for n, shape in enumerate(whole.splitlines()) if n not in dropped]
            assert count("\n".join(kept)) > budget, budget
    assert shown > 5


def test_a_long_pending_ask_keeps_the_headings_of_its_middle() -> None:
    """The latest message, still pending, is condensed as a user message is: the part of a
    long brief in its middle is still named (`## Prompt 6 - ...`), where its head and tail
    alone had dropped it."""
    part = "\n".join(f"- Implement task {n} of the module with care and tests." for n in range(12))
    brief = (
        f"## Prompt 5 - Inventory ledger\n{part}\n## Prompt 6 - Training quizzes, spaced "
        f"repetition queue\n{part}\n## Prompt 7 - Attendance\n{part}\nThanks!"
    )
    messages = conversation(
        ("user", "Set up the repo."),
        ("assistant", [text("Done: the repo is set up.")]),
        ("user", brief),
    )
    summary = summarize(messages, 4000).text
    asked = next(line for line in summary.splitlines() if line.startswith("- Ask: "))
    assert "## Prompt 6 - Training quizzes, spaced repetition queue" in asked
    assert asked.startswith("- Ask: ## Prompt 5") and asked.endswith("Thanks!")


def test_a_goal_that_starts_as_a_heading_reads_back_as_the_goal() -> None:
    """A goal typed as markdown (`## User Input ...`, on one line in the summary) is escaped as
    markdown escapes a heading, so the summary reads back as ours, its goal whole, and the next
    round does not take it for a section of an unknown format."""
    goal = "## Task\nBuild the mail notifier. Never poll more than once a minute."
    messages = conversation(("user", goal), ("assistant", [text("Done: the notifier is built.")]))
    first = summarize(messages, 2000)
    assert "\n\\## Task Build the mail notifier." in first.text
    parsed = parse_summary(first.text)
    assert parsed is not None
    facts, earlier = parsed
    assert (
        earlier is None
        and facts.goal == "## Task Build the mail notifier. Never poll more than once a minute."
    )


def test_a_report_at_its_shortest_says_what_was_done_not_what_is_offered() -> None:
    """A tight budget shows each end-of-turn report at its shortest shape: its head, where the
    agent says what it did, not a cut from both ends that keeps the offer it closes with."""
    done = (
        "Yes. The Keycloak error is because the UI uses the implicit flow, which is disabled. "
        "I updated the UI auth to use the Authorization Code flow with PKCE instead."
    )
    offer = "If you want, I can also rebuild the UI container and check the login once more."
    reports = tuple(f"{done} Turn {k}: {'details of the change; ' * 30}{offer}" for k in range(6))
    facts = Facts(goal="Fix the login.", user_messages=("Fix the login.",), reports=reports)
    count = COUNTER.text_tokens
    roomy = render_facts(facts, 8000, count)[0]
    assert roomy.count(done) == 6 and roomy.count(offer) == 6  # room enough: the whole report
    tight = render_facts(facts, 600, count)[0]
    shown = [line for line in tight.splitlines() if line.startswith("- Yes.")]
    assert shown  # at their shortest, each said by its head
    assert all(done in line and offer not in line for line in shown)


def test_a_command_that_sets_up_the_session_is_not_listed_as_a_message() -> None:
    messages = conversation(
        ("user", "Make the chart square."),
        ("assistant", [text("Done.")]),
        ("user", "/compact"),
        ("assistant", [text("Compacted.")]),
        ("user", "/model opus"),
        ("user", "Now add a legend above it."),
        ("assistant", [text("Added.")]),
        ("user", "/clear"),
    )
    listed = summarize(messages, 2000).text.split("## User messages (oldest first)\n")[1]
    listed = listed.split("\n\n")[0]
    assert listed.splitlines() == [
        "1. (the goal above)",
        "2. Now add a legend above it.",
        "3. (pending: see the asks below)",
    ]


def test_the_newest_message_that_states_a_task_is_shown_whole_before_older_ones() -> None:
    """The turns after a summary carry on the newest user message that states a task ("go
    ahead" after a list of changes): that list is shown whole before any older long message is,
    and at budgets too tight for the older ones."""
    older = " ".join(f"Point {n}: how the canvas should feel when zoomed." for n in range(20))
    changes = "Make the following changes one at a time.\n" + "\n".join(
        f"- Change {n}: shrink the node text by {n} points" for n in range(12)
    )
    messages = (
        "Build the node editor.",
        *(f"Idea {k}. {older}" for k in range(12)),
        changes,
        "go ahead",
    )
    facts = Facts(goal=messages[0], user_messages=messages)
    listed = 0
    for budget in range(3000, 300, -50):
        text = render_facts(facts, budget, COUNTER.text_tokens)[0]
        whole = all(f"Change {n}:" in text for n in range(12))
        assert whole or "Point 10:" not in text, budget  # no older brief before the list
        listed += whole and "Point 10:" not in text
    assert listed >= 10


def test_a_sub_agents_report_is_widened_only_once_every_other_item_has_its_room() -> None:
    """A sub-agent's report (an exploration can run to pages; a delegated refactor lists what it
    changed) is a report of the work: cut to 700 characters until every other item, the agent's
    own report at its 3,000 first, has had its room; then as much of it as is left."""
    explored = "; ".join(f"Module {n} holds the {n}th service and its tests" for n in range(80))
    own = "; ".join(f"Step {n}: the loader reads page {n}" for n in range(60))
    facts = Facts(
        goal="Map the project.",
        user_messages=("Map the project.",),
        reports=(f"Sub-agent (Explore the project): {explored}", f"Mapped it. {own}"),
        decisions=tuple(f"Use the cache layer {n} for reads of table {n}" for n in range(30)),
    )
    widened = 0
    for budget in range(400, 3000, 50):
        text = render_facts(facts, budget, COUNTER.text_tokens)[0]
        line = next((x for x in text.splitlines() if x.startswith("- Sub-agent (Explore")), "")
        if len(line) > 720:
            widened += 1
            assert "Step 40:" in text, budget  # the agent's own report, at its fuller shape
            assert all(f"table {n}" in text for n in range(30)), budget  # every decision
    assert widened  # and with room left, more of it


def test_the_files_read_come_before_the_commands() -> None:
    """A file the agent read is one short line that says where it looked: at a tight budget
    the files read come in before the commands, failed or not."""
    facts = Facts(
        goal="Fix the importer.",
        user_messages=("Fix the importer.",),
        files_read=tuple(f"src/importer/part_{n}.py" for n in range(8)),
        commands=(
            *(
                Command(f"python3 check_{n}.py --all", "failed", f"check {n} failed")
                for n in range(8)
            ),
            *(Command(f"python3 build_{n}.py --all", "ok") for n in range(8)),
        ),
    )
    read_first = 0
    for budget in range(40, 600, 10):
        text = render_facts(facts, budget, COUNTER.text_tokens)[0]
        if "check_" in text or "build_" in text:
            assert all(f"part_{n}.py" in text for n in range(8)), budget
        read_first += "part_0.py" in text and "check_" not in text
    assert read_first
