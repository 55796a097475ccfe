"""Carriers: the user's words in tool results, plans, edits, created names, skills, reports."""

from __future__ import annotations

import re

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compactcli.summarizers.carriers import (
    INSERTED_LINES,
    changes_text,
    code_span,
    created_names,
    edit_notes,
    report,
    user_answers,
)
from compactcli.summarizers.plans import PLAN_STEPS, accepted_plan, plan_steps, proposed_plans
from compactcli.summarizers.rules import instruction_rules, skill_rules

ASK = {
    "questions": [
        {"question": "TypeScript or plain JavaScript?", "header": "Language", "options": []},
        {"question": "Where does backup.sh run?", "header": "URL", "options": []},
    ]
}


def test_claude_code_question_answers_are_the_users_words() -> None:
    result = (
        'Your questions have been answered: "TypeScript or plain JavaScript?"="TypeScript '
        '(Recommended)", "Where does backup.sh run?"="Host machine, via published port". '
        "You can now continue with these answers in mind."
    )
    assert user_answers("AskUserQuestion", ASK, result) == [
        'Answered "TypeScript or plain JavaScript?": TypeScript (Recommended)',
        'Answered "Where does backup.sh run?": Host machine, via published port',
    ]
    older = 'User has answered your questions: "Use pnpm?"="Yes, never npm". You can now continue.'
    assert user_answers("AskUserQuestion", {}, older) == ['Answered "Use pnpm?": Yes, never npm']


def test_codex_request_user_input_answers_are_read_by_question_id() -> None:
    arguments = {"questions": [{"id": "db", "question": "Which database?", "options": None}]}
    result = orjson.dumps({"answers": {"db": {"answers": ["SQLite, no server"]}}}).decode()
    assert user_answers("request_user_input", arguments, result) == [
        'Answered "Which database?": SQLite, no server'
    ]


def test_a_comment_sent_back_with_a_call_is_kept_and_boilerplate_is_not() -> None:
    said = "Tool call declined. User feedback: keep the old endpoint, add a new one beside it"
    assert user_answers("Bash", {}, said) == [
        "Said when sending back a call: keep the old endpoint, add a new one beside it"
    ]
    # a rejection is read by the facts (as a user message), not twice here
    rejected = (
        "The user doesn't want to proceed with this tool use. The tool use was rejected. "
        "To tell you how to proceed, the user said:\nuse port 6543"
    )
    assert user_answers("Edit", {}, rejected) == []
    assert user_answers("Bash", {}, "plain output\nexit 0") == []


_SAID_PATTERN = re.compile(
    r"(?:the user said|the user provided the following reason for the rejection|"
    r"user feedback|the user's feedback)\s*:\s*\n?(.+)",
    re.IGNORECASE | re.DOTALL,
)
_PHRASES = (
    "the user said",
    "the user provided the following reason for the rejection",
    "user feedback",
    "the user's feedback",
)
_CASES = {"s": "sſS", "k": "kK\u212a", "i": "iIİı"}  # what a case-insensitive search takes


@st.composite
def _said(draw: st.DrawFn) -> str:
    """A phrase that introduces the user's comment, each letter in any case a case-insensitive
    expression matches, between a prefix and a comment."""
    phrase = "".join(
        draw(st.sampled_from(_CASES.get(c, c + c.upper()))) for c in draw(st.sampled_from(_PHRASES))
    )
    prefix = draw(st.sampled_from(["", "Declined. ", "→ user: ", "İ ", "plain output "]))
    separator = draw(st.sampled_from([": ", ":\n", " : ", " ", ""]))
    comment = draw(st.sampled_from(["keep it", "", " ", "→ x"]))
    return prefix + phrase + separator + comment


@settings(max_examples=300, deadline=None)
@given(_said())
def test_a_comment_is_found_where_the_case_insensitive_expression_finds_one(text: str) -> None:
    # user_answers searches for the phrases first: it finds what the expression alone finds,
    # with the characters a case-insensitive search takes for ASCII letters (ſ, K, İ, ı)
    whole = _SAID_PATTERN.search(text) if "user" in text.strip().lower() else None
    found = user_answers("Bash", {}, text)
    assert bool(found) == bool(whole and whole.group(1).strip()), text


def test_an_approved_plan_gives_its_steps_and_a_rejected_one_nothing() -> None:
    plan = (
        "# Plan\n\n1. Add `RAIN_THRESHOLD` env var\n2. Average both ends\n```ts\nx()\n```\n- Tests"
    )
    approved = "User has approved your plan. You can now start coding."
    steps = accepted_plan("ExitPlanMode", {"plan": plan}, approved)
    assert steps == ["Plan", "Add `RAIN_THRESHOLD` env var", "Average both ends", "Tests"]
    assert accepted_plan("ExitPlanMode", {"plan": plan}, "The user doesn't want to proceed") == []
    assert accepted_plan("Bash", {"plan": plan}, approved) == []


def test_a_plan_heading_comes_with_the_first_sentence_under_it() -> None:
    plan = (
        "# Impact Dashboard\n\n## Context\n\n**Problem:** rank the top 5 engineers of the "
        "last 90 days. Simple counts are not impact.\n\n**Core Insight:** impact is what moves "
        "the product forward.\n\n---\n\n## Data\n\n| a | b |\n|---|---|\n\n### Gatherer\n"
        "1. **Purpose** — fetch merged PRs\n- Bots excluded\n\n## Verification\n"
    )
    assert plan_steps(plan) == [
        "Impact Dashboard",
        "Context: Problem: rank the top 5 engineers of the last 90 days.",
        "Core Insight: impact is what moves the product forward.",
        "Data",
        "Gatherer",
        "Purpose — fetch merged PRs",
        "Bots excluded",
        "Verification",
    ]


def test_a_codex_proposed_plan_and_a_plan_in_prose() -> None:
    text = (
        "Here it is.\n<proposed_plan>\n- Cut the cache TTL to 1s\n- Keep the API\n</proposed_plan>"
    )
    assert proposed_plans(text) == ["Cut the cache TTL to 1s", "Keep the API"]
    assert proposed_plans("no plan here") == []
    assert plan_steps("Just move the files and fix imports.") == [
        "Just move the files and fix imports."
    ]


def test_edits_say_what_changed_per_file() -> None:
    edit = {"file_path": "src/config.ts", "old_string": "port: 5432", "new_string": "port: 6543"}
    assert edit_notes("Edit", edit) == [("src/config.ts", "`port: 5432` -> `port: 6543`")]
    big = {"file_path": "a.py", "old_string": "x\ny\nz\nw", "new_string": "q"}
    assert edit_notes("Edit", big) == []
    assert edit_notes("Write", {"file_path": "a.py", "content": "x"}) == [("a.py", "written")]
    pi = {"path": "b.ts", "oldText": "const a = 1", "newText": "const a = 2"}
    assert edit_notes("edit", pi) == [("b.ts", "`const a = 1` -> `const a = 2`")]
    patch = (
        "*** Begin Patch\n*** Add File: new.py\n+print(1)\n*** Update File: app.py\n@@\n"
        "-TIMEOUT = 5\n+TIMEOUT = 1\n*** Delete File: old.py\n*** End Patch"
    )
    assert edit_notes("apply_patch", patch) == [
        ("new.py", "created"),
        ("app.py", "`TIMEOUT = 5` -> `TIMEOUT = 1`"),
        ("old.py", "deleted"),
    ]


def test_a_change_to_code_that_holds_backticks_keeps_both_sides_whole() -> None:
    """A JavaScript template literal holds backticks: each side goes in a longer run of
    backticks, and a note cut to the new sides drops the old side whole, never half of it."""
    old = "return `${format(price)} ${currency}`;"
    new = 'return `${format(safePrice)} ${currency || "UAH"}`;'
    note = _note("Edit", {"file_path": "lib/format.ts", "old_string": old, "new_string": new})
    assert note == f"`` {old} `` -> `` {new} ``"
    older = "`const a = 1` -> `const a = 2`"
    assert changes_text([older, note], 95, 4) == f"`const a = 2`; `` {new} ``"
    assert code_span("a `` b") == "``` a `` b ```"


def _note(tool: str, edit: dict[str, str]) -> str:
    """The one note an edit gives."""
    [(_, note)] = edit_notes(tool, edit)
    return note


def test_an_edit_note_names_where_it_changed_and_puts_changed_comments_first() -> None:
    old = (
        "export function getPackageDir(): string {\n"
        "\t// check if package.json exists in __dirname or its parent\n"
        "\tif (existsSync(join(__dirname, 'package.json'))) {\n"
        "\t\treturn __dirname;\n\t}\n\treturn dirname(__dirname);\n}"
    )
    new = (
        "export function getPackageDir(): string {\n"
        "\t// walk up from __dirname until we find package.json\n"
        "\tlet dir = __dirname;\n\twhile (dir !== dirname(dir)) {\n"
        "\t\tif (existsSync(join(dir, 'package.json'))) {\n"
        "\t\t\treturn dir;\n\t\t}\n\t\tdir = dirname(dir);\n\t}\n\treturn __dirname;\n}"
    )
    notes = {
        "getPackageDir": _note("edit", {"path": "c.ts", "oldText": old, "newText": new}),
    }
    # a few lines inserted into a method: noted as added, in the method
    old = "  async prompt(text: string): Promise<void> {\n    const expand = true;"
    new = (
        "  async prompt(text: string): Promise<void> {\n"
        "    // flush pending bash messages first\n    this._flushPending();\n"
        "    const expand = true;"
    )
    notes["prompt"] = _note("Edit", {"file_path": "s.ts", "old_string": old, "new_string": new})
    assert notes == {
        "getPackageDir": "in `getPackageDir`: "
        "`// check if package.json exists in __dirname or its parent` -> "
        "`// walk up from __dirname until we find package.json`; "
        "`if (existsSync(join(__dirname, 'package.json'))) {` -> "
        "`if (existsSync(join(dir, 'package.json'))) {`",
        "prompt": "in `prompt`: added `// flush pending bash messages first`, "
        "`this._flushPending();`",
    }
    # control statements and calls are not where a change is
    edit = {"file_path": "a.ts", "old_string": "if (a) {\n  b();", "new_string": "if (a) {\n  c();"}
    assert edit_notes("Edit", edit) == [("a.ts", "`b();` -> `c();`")]
    many = "\n".join(f"line {n}" for n in range(INSERTED_LINES + 1))
    edit = {"file_path": "b.py", "old_string": "x = 1", "new_string": "x = 1\n" + many}
    assert edit_notes("Edit", edit) == []  # a long insertion is new code, not a change note


def test_created_names_come_from_what_an_edit_writes() -> None:
    content = (
        "export default function WeatherCard() {}\nclass RainForecast:\n    def average_ends(self):\n"
        "interface CasePayload {}\nconst MAX_RETRIES = 3\n"
        "class HotItem:\n    def __init__(self):\n    def __repr__(self):\n"
    )
    names = created_names("Write", {"file_path": "x.tsx", "content": content})
    assert names == ["WeatherCard", "RainForecast", "average_ends", "CasePayload", "HotItem"]
    assert created_names("Read", {"file_path": "x.tsx", "content": content}) == []


def test_a_const_is_a_name_at_a_modules_level_and_not_inside_a_function() -> None:
    content = (
        "export const defaultModelPerProvider = {};\nconst themeRegistry = new Map();\n"
        "export function findInitialModel() {\n  const slashIndex = 3;\n"
        "  const exactMatch = models.find(m => m.id === id);\n}\n"
        "  export const nestedExport = 1;\n"
    )
    names = created_names("Edit", {"file_path": "m.ts", "new_string": content})
    assert names == ["defaultModelPerProvider", "themeRegistry", "findInitialModel", "nestedExport"]


def test_skill_rules_keep_the_binding_lines_with_the_name() -> None:
    body = (
        "Base directory for this skill: /home/u/.claude/skills/apply-grant\n\n"
        "---\nname: apply-grant\n---\n## Rules\n- Never fabricate proof of work.\n"
        "- The grant is fixed at 200 USDG.\n- You must ask for the wallet address.\n"
        "```bash\nnever run this\n```\n"
    )
    assert skill_rules(body) == (
        "apply-grant",
        # under a heading of rules every item binds; elsewhere lines with a rule word
        [
            "Never fabricate proof of work.",
            "The grant is fixed at 200 USDG.",
            "You must ask for the wallet address.",
        ],
    )
    assert skill_rules("just text") is None


@pytest.mark.parametrize(
    "base", ["/home/u/.claude/skills/apply-grant/", "C:\\Users\\u\\.claude\\skills\\apply-grant"]
)
def test_a_skill_without_front_matter_is_named_by_its_folder(base: str) -> None:
    """Claude Code sends a skill's body without its front matter: the folder names it, on
    Windows as elsewhere (not the whole path, repeated on every rule)."""
    body = f"Base directory for this skill: {base}\n\n## Rules\n- Never fabricate proof.\n"
    assert skill_rules(body) == ("apply-grant", ["Never fabricate proof."])


def test_a_report_keeps_its_list_and_change_lines() -> None:
    text = (
        "Done. Here's what changed:\n\n---\n- Added `OpenApiConfig` with snake_case schemas\n"
        "- Moved ops/ to the repo root\n\n```\ncode\n```\n***\nLet me know."
    )
    assert report(text) == (
        "Done. Here's what changed:; Added `OpenApiConfig` with snake_case schemas; "
        "Moved ops/ to the repo root; Let me know."
    )
    assert report("Sure, what would you like next?") is None


def test_a_report_takes_off_bold_markers_but_not_a_globs_stars() -> None:
    text = (
        "Done. Here's what changed in the roadmap:\n\n"
        "1. **New GTM section at the top** — locks the rollout order.\n"
        "2. **Phase 2 reframed** as an invite-only beta, *after* launch.\n"
        "3. Ran ruff on src/**/*.py and tests/**/*.py: clean.\n"
    )
    assert report(text) == (
        "Done. Here's what changed in the roadmap:; New GTM section at the top — locks the "
        "rollout order.; Phase 2 reframed as an invite-only beta, *after* launch.; "
        "Ran ruff on src/**/*.py and tests/**/*.py: clean."
    )


def test_a_report_of_a_proposed_plan_leaves_the_plans_steps_to_the_plan() -> None:
    """The steps a Codex `<proposed_plan>` gives the plan (`proposed_plans`, the first
    `PLAN_STEPS`) are not said again in the report of its turn; the rest of it is."""
    last = PLAN_STEPS + 3  # three steps beyond what the plan shows
    steps = [f"- Step {n}: wire part {n} of the engine" for n in range(1, last + 1)]
    text = (
        "Here is the plan.\n<proposed_plan>\n# Engine plan\n\n**Summary**\n"
        "Build it in Rust, deterministic.\n\n" + "\n".join(steps) + "\n</proposed_plan>"
    )
    shown = proposed_plans(text)
    assert shown[:2] == ["Engine plan", "Summary: Build it in Rust, deterministic."]
    assert len(shown) == PLAN_STEPS
    found = report(text)
    assert found is not None
    # its prose, and the steps beyond those the plan shows; no tag, no step the plan shows
    assert found.split("; ") == [
        "Here is the plan.",
        *(f"Step {n}: wire part {n} of the engine" for n in range(PLAN_STEPS - 1, last + 1)),
    ]


def test_a_skill_gives_its_urls_time_zones_and_file_names_after_its_rules() -> None:
    body = (
        "Base directory for this skill: /home/u/.claude/skills/ship\n\n"
        "---\nname: ship\n---\n# Ship\n\nShip the build to the store.\n\n"
        "## Links\n\n**Upload here**: https://example.org/upload/form\n\n"
        "## Steps\n\n1. Read `release.toml` and `docs/CHANGES.md`, or run `/export`.\n"
        "   (`CHANGES.md` is `docs/CHANGES.md`; `api/upload` is `/api/upload`.)\n"
        "2. Dates are in Europe/Lisbon time.\n"
        "3. Save it as `./out/build-<version>.zip`, never as a `.txt` file.\n\n"
        "```bash\ncurl https://example.org/in-code\ncat `in-code.md`\n```\n"
    )
    # a slash command, a bare extension, a placeholder and what code names are no names; a
    # name another names more fully is said once, fully
    assert skill_rules(body) == (
        "ship",
        [
            "Ship the build to the store.",
            "3. Save it as `./out/build-<version>.zip`, never as a `.txt` file.",
            "Names: https://example.org/upload/form, Europe/Lisbon, release.toml, docs/CHANGES.md, "
            "/api/upload",
        ],
    )


def test_a_skill_names_its_task_and_its_workflow_steps_before_its_rules() -> None:
    body = (
        "Base directory for this skill: /home/u/.claude/skills/release-notes\n\n"
        "---\nname: release-notes\n---\n# Release notes\n\n"
        "Draft the **release notes** for the version given,\nfrom the merged pull requests.\n\n"
        "## Workflow\n\n### Phase 1 — Collect the pull requests\n\n1. List merged PRs.\n\n"
        "```bash\n# Phase 9 in code is not a step\n```\n"
        "### Phase 2 — Draft\n\n- Never rewrite an existing section.\n"
    )
    assert skill_rules(body) == (
        "release-notes",
        [
            "Draft the release notes for the version given, from the merged pull requests.",
            "Workflow: Phase 1 — Collect the pull requests; Phase 2 — Draft",
            "Never rewrite an existing section.",
        ],
    )


def test_a_skills_front_matter_and_preamble_bind_nothing_once_run() -> None:
    """A skill's front matter is no rule (its description says what the skill is for when no
    paragraph under a title does), and its preamble's set-up steps and one-time question are
    no rules either: down to the next heading of the preamble's level or higher."""
    body = (
        "Base directory for this skill: /home/u/.claude/skills/idea\n\n"
        "---\nname: idea\ndescription: Always rank ideas; use when asked what to build.\n---\n\n"
        "## Preamble (run first)\n\n```bash\n# a comment, not a heading\nmkdir -p ~/.tel\n```\n"
        "If `PROMPTED` is `no`: ask the user about telemetry. Change it in `~/.tel/config.json`.\n"
        "### Answers\n\n- Never ask twice.\n\n"
        "This only happens once. If `PROMPTED` is `yes`, skip this entirely.\n\n"
        "## Rules\n\n- Never praise a bad idea.\n- Write `report.html` before you stop.\n"
    )
    assert skill_rules(body) == (
        "idea",
        [
            "Always rank ideas; use when asked what to build.",
            "Never praise a bad idea.",
            "Write `report.html` before you stop.",
            "Names: report.html",
        ],
    )
    titled = body.replace("## Rules", "# Idea\n\nFind the idea worth building.\n\n## Rules")
    assert skill_rules(titled) == (
        "idea",
        [
            "Find the idea worth building.",
            "Never praise a bad idea.",
            "Write `report.html` before you stop.",
            "Names: report.html",
        ],
    )


def test_a_skill_read_as_windows_text_is_read_as_utf8_again() -> None:
    """PowerShell's `Get-Content` of a UTF-8 file decodes it as the system's code page: its
    rules come back as UTF-8 where the whole line does; text that was right stays."""
    body = (
        "Base directory for this skill: C:\\skills\\grant\n\n---\nname: grant\n---\n"
        "## Rules\n- Never fabricate proof of work \u0432\u0402\u201d use git history.\n"
        "- Hit targets are at least 40\u0413\u201440 px, always.\n"
        "- Never skip a step \u00e2\u20ac\u201d ask first.\n"
        "- Never write the caf\u00e9's menu \u2014 or the r\u00e9sum\u00e9 \u2014 in French.\n"
        "- \u041d\u0438\u043a\u043e\u0433\u0434\u0430 must stay in Russian.\n"
    )
    assert skill_rules(body) == (
        "grant",
        [
            "Never fabricate proof of work \u2014 use git history.",
            "Hit targets are at least 40\u00d740 px, always.",
            "Never skip a step \u2014 ask first.",
            "Never write the caf\u00e9's menu \u2014 or the r\u00e9sum\u00e9 \u2014 in French.",
            "\u041d\u0438\u043a\u043e\u0433\u0434\u0430 must stay in Russian.",
        ],
    )
    # a line too long to keep whole is mended before it is cut
    long = "Never tear things down \u0432\u0402\u201d " + "be generous about strengths, " * 12
    rules = skill_rules(body.replace("- Never skip a step", f"- {long}\n- Never skip a step"))
    assert rules is not None
    cut = next(line for line in rules[1] if line.startswith("Never tear"))
    assert cut.startswith("Never tear things down \u2014 be generous")
    assert cut.endswith("…") and "\u0432" not in cut


def test_a_files_newest_changes_are_shown_whole_while_they_fit() -> None:
    notes = [f"`line {n} was`" + " -> " + f"`line {n} is`" for n in range(6)]  # 31 characters
    # the newest four fit whole, with the count of the others
    assert changes_text(notes, 300, 4) == "; ".join(notes[2:]) + "; 2 more edits"
    assert changes_text(notes[:1], 300, 4) == notes[0]
    # too long whole: each keeps the side the file holds now, newest first while they fit
    assert changes_text(notes, 45, 4) == "`line 4 is`; `line 5 is`; 4 more edits"
    assert (
        changes_text(notes, 90, 4)
        == "`line 2 is`; `line 3 is`; `line 4 is`; `line 5 is`; 2 more edits"
    )
    # a note too long for the room left is cut in its middle, never the newest left out
    long = "in `f`: added `" + "y" * 500 + "`"
    cut = changes_text([*notes, long], 120, 4)
    assert len(cut) <= 120 and cut.startswith("in `f`: added `yyy") and cut.endswith("more edits")


def test_a_report_says_a_local_file_link_by_its_text_and_keeps_a_web_link() -> None:
    text = (
        "Implemented image loading stability.\n\nUpdated:\n"
        "- [components/shared/safe-image.tsx](C:/Users/me/app/components/shared/safe-image.tsx)\n"
        "- [lib/images.ts:12](/home/me/app/lib/images.ts#L12)\n"
        "- Docs: [Next.js images](https://nextjs.org/docs/images)\n"
    )
    line = report(text)
    assert line == (
        "Implemented image loading stability.; Updated:; components/shared/safe-image.tsx; "
        "lib/images.ts:12; Docs: [Next.js images](https://nextjs.org/docs/images)"
    )


def test_a_long_memory_file_gives_the_lines_that_direct_before_those_that_describe() -> None:
    notes = [
        f"- Module m{n} always sits after m{n - 1} in the DAG and never imports the compositor."
        for n in range(1, 16)
    ]
    memory = "\n".join(
        [
            "## Architecture",
            *notes,
            "## Conventions",
            "- `pytest` runs via `nix-shell --run`, never `nix-shell --packages`. **Why:** pinned"
            " deps. **How to apply:** run both tools through `nix-shell --run`.",
            "- Never commit the session log.",
        ]
    )
    found = instruction_rules("/repo/MEMORY.md", memory)
    assert found is not None
    name, rules = found
    assert name == "MEMORY.md" and len(rules) == 12
    assert any("nix-shell --packages" in rule for rule in rules)
    assert rules[-1] == "Never commit the session log."
    assert rules[0].startswith("Module m1 always")  # the rest in the file's order


def test_a_skill_gives_its_first_rule_lines_whatever_they_say() -> None:
    lines = [f"- Step {n} always runs after step {n - 1} and never alone." for n in range(1, 15)]
    lines += [f"- Never skip the check of step {n}." for n in range(4)]
    body = "\n".join(lines)
    skill = instruction_rules("/home/me/.codex/skills/careful/SKILL.md", "# Careful\n" + body)
    memory = instruction_rules("/repo/MEMORY.md", body)
    assert skill is not None and memory is not None
    assert not any("Never skip" in rule for rule in skill[1])
    assert sum("Never skip" in rule for rule in memory[1]) == 4


def test_a_plan_of_twenty_steps_is_given_whole() -> None:
    """A plan in five parts, a heading and three steps each: its last part is shown too."""
    parts = [
        f"## {n}. Part {n}\n" + "\n".join(f"- Step {n}.{k}: change {k}" for k in range(1, 4))
        for n in range(1, 6)
    ]
    steps = plan_steps("\n\n".join(parts))
    assert len(steps) == 20
    assert steps[-1] == "Step 5.3: change 3"


def test_a_patch_given_whole_defines_the_names_it_adds_not_those_around_them() -> None:
    """Codex's `apply_patch` takes the patch as its whole input: the names it defines are those
    of its added lines, not of the context lines around them nor of the lines it removes."""
    patch = (
        "*** Begin Patch\n*** Update File: apps/api/src/http/routes/profile.ts\n@@\n"
        " function normalizeAvatarUrl(input: unknown) {\n   return input;\n }\n \n"
        "-function oldNickname(name: string) {\n"
        "+function normalizeDefaultNickname(primary: string | undefined, fallback: string) {\n"
        "+  return primary ?? fallback;\n+}\n*** End Patch"
    )
    assert created_names("apply_patch", patch) == ["normalizeDefaultNickname"]
    assert created_names("apply_patch", {"input": patch}) == ["normalizeDefaultNickname"]
