"""An agent's earlier summary: read into sections, fitted by priority, never cut blind."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from compactcli.summarizers.earlier import fit_earlier, parse_earlier

CLAUDE_CODE = """This session is being continued from a previous conversation that ran out of context.

Summary:
1. Primary Request and Intent:
   The user is building a weather Lambda.
   - "Use pnpm, never npm."
2. Key Technical Concepts:
   - AWS Lambda, Node 20
   - OpenWeatherMap API
3. Files and Code Sections:
   - **`src/index.ts`**
     - Handler entry point
       ```ts
       export const handler = async () => {}
       ```
4. Errors and fixes:
   - npm install not working in bash: used pnpm instead
7. Pending Tasks:
   - Update discord.test.ts assertions
9. Optional Next Step:
   Run the build.

If you need specific details from before compaction, read the full transcript at: /x.jsonl
Continue the conversation from where it left off without asking the user any further questions.
"""

PI = """# Context Checkpoint: Refactoring

## Goal
Refactor `coding-agent` into one `AgentSession`.

## Completed Work
| WP | Description | Status |
|----|-------------|--------|
| WP1 | bash-executor.ts | done |

## User Preferences
- **E2E tests only** - no unit tests
"""


def count(text: str) -> int:
    return max(1, len(text) // 4)


def test_claude_code_sections_kinds_code_and_wrappers() -> None:
    sections = parse_earlier(CLAUDE_CODE)
    assert [(s.heading, s.kind) for s in sections] == [
        ("Primary Request and Intent", "request"),
        ("Key Technical Concepts", "context"),
        ("Files and Code Sections", "files"),
        ("Errors and fixes", "errors"),
        ("Pending Tasks", "pending"),
        ("Optional Next Step", "pending"),
    ]
    files = sections[2]
    assert [line.code for line in files.lines] == [False, False, True]
    whole = fit_earlier(CLAUDE_CODE, 10_000, count)
    assert "continued from a previous conversation" not in whole
    assert "without asking the user" not in whole
    assert '- "Use pnpm, never npm."' in whole
    assert "export const handler" in whole


def test_pi_headings_and_tables_are_read() -> None:
    sections = parse_earlier(PI)
    assert [s.heading for s in sections] == [
        "Context Checkpoint: Refactoring",
        "Goal",
        "Completed Work",
        "User Preferences",
    ]
    assert sections[2].lines[-1].text == "WP1 | bash-executor.ts | done"


def test_a_tight_budget_keeps_requests_rules_and_pending_before_context_and_code() -> None:
    fitted = fit_earlier(CLAUDE_CODE, 100, count)
    assert count(fitted) <= 100
    assert "Update discord.test.ts assertions" in fitted
    assert "Use pnpm, never npm." in fitted
    assert "export const handler" not in fitted
    assert "Not shown:" in fitted


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(["## Goal", "1. Pending Tasks:", "```", "**Files**", "| a | b |"]),
            st.text(alphabet="abc -*`|#\n", max_size=60),
        ),
        max_size=30,
    ),
    st.integers(min_value=5, max_value=400),
)
def test_the_fitted_summary_is_within_budget_or_empty(lines: list[str], budget: int) -> None:
    text = "\n".join(lines)
    fitted = fit_earlier(text, budget, count)
    whole = fit_earlier(text, 10**6, count)
    assert fitted == whole or count(fitted) <= budget or fitted.startswith("(Not shown")


AGENT_SUMMARY = """Summary:
1. Primary Request and Intent:
   The user is building an ops toolkit for a case review service, in several phases.
   - "Now restore.sh. It should take a backup file as argument and support a --dry-run flag. Should be idempotent." — asked after the backup script.
   - Verify the run script before moving on.
2. Key Technical Concepts:
   - Spring Boot 3.3, Java 17, Gradle wrapper
   - Git: never commit without an explicit user request (honored)
3. Files and Code Sections:
   .git/
   - **`ops/restore.sh`** (created)
6. All user messages:
   - "Now restore.sh. It should take a backup file as argument and support a --dry-run flag. Should be idempotent."
7. Pending Tasks:
   - None explicitly stated as still open.
   - Wire the restore script into the Makefile.
"""


def test_a_tight_budget_keeps_the_users_words_and_rules_from_any_section_first() -> None:
    fitted = fit_earlier(AGENT_SUMMARY, 140, count)
    assert count(fitted) <= 140
    # a rule stated in a section of context, and the user's quoted request, come first
    assert "never commit without an explicit user request" in fitted
    assert "Should be idempotent." in fitted
    assert "Spring Boot 3.3" not in fitted


def test_a_tight_budget_drops_bare_words_nothing_lines_and_repeats() -> None:
    fitted = fit_earlier(AGENT_SUMMARY, 140, count)
    assert count(fitted) <= 140
    assert ".git/" not in fitted  # one bare word says nothing
    assert "None explicitly stated" not in fitted  # a line that says there is nothing
    assert "Wire the restore script into the Makefile." in fitted
    assert fitted.count("Now restore.sh.") == 1  # quoted twice, shown once
    # a quote keeps the user's words, not what the agent wrote after them
    assert "asked after the backup script" not in fitted
    whole = fit_earlier(AGENT_SUMMARY, 10_000, count)
    assert ".git/" in whole and "None explicitly stated" in whole  # all of it, when it fits


FILE_LIST = """Summary:
1. Primary Request and Intent:
   - "Move the scripts to the repo root."
3. Files and Code Sections:
   - **`backend/ops/run.sh`** (later moved to `ops/run.sh` at repo root)
     - Created this session; `BASE_URL` is always a raw overwrite, so no edits were required.
   - **`backend/ops/backup.sh`** (later moved to `ops/backup.sh` at repo root)
   - **`backend/ops/restore.sh`** (later moved to `ops/restore.sh` at repo root)
6. All user messages (verbatim, excluding tool results and system-reminders):
   - "Move the scripts to the repo root."
"""


def test_a_list_of_files_whose_lines_differ_only_in_their_paths_is_kept_whole() -> None:
    fitted = fit_earlier(FILE_LIST, 120, count)
    assert count(fitted) <= 120
    # each head names a path no line taken named: never a repeat of the line before it
    for path in ("ops/run.sh", "ops/backup.sh", "ops/restore.sh"):
        assert path in fitted
    # "always" and "required" in a line about a file describe the code, not a user's rule
    assert "Created this session" not in fitted
    assert "(1 more line not shown)" in fitted


def test_a_numbered_heading_with_a_long_aside_opens_a_section() -> None:
    sections = parse_earlier(FILE_LIST)
    assert [s.heading.split(" (")[0] for s in sections] == [
        "Primary Request and Intent",
        "Files and Code Sections",
        "All user messages",
    ]
    assert sections[-1].kind == "rules"
    fitted = fit_earlier(FILE_LIST, 50, count)
    assert count(fitted) <= 50
    assert fitted.count("Move the scripts to the repo root.") == 1
    # sections with nothing shown are named on one line, without their asides
    assert fitted.endswith("(Not shown: Files and Code Sections, All user messages.)")


CODE_UNDER_A_FILE = """Summary:
1. Primary Request and Intent:
   - "Move the Dockerfile to the repo root and keep the build working after the move, please."
3. Files and Code Sections:
   - **`backend/Dockerfile`** (later moved to `Dockerfile` at repo root, with every COPY path updated for the new build context)
     - COPY paths updated for the new root build context, the runtime stage left as it was:
       ```dockerfile
       COPY backend/src ./src
       ```
"""


def test_code_is_never_shown_without_the_line_it_belongs_to() -> None:
    """A tight budget that leaves room for a short line of code but not for the lines that say
    what it is shows neither: a stray `COPY backend/src ./src` tells the model nothing."""
    request = '- "Move the Dockerfile to the repo root and keep the build working after the move'
    for budget in range(40, 120):
        fitted = fit_earlier(CODE_UNDER_A_FILE, budget, count)
        assert count(fitted) <= budget
        if "COPY backend/src ./src" in fitted:
            assert "COPY paths updated" in fitted, (budget, fitted)
        if budget >= 60:
            assert request in fitted
    whole = fit_earlier(CODE_UNDER_A_FILE, 10_000, count)
    assert "COPY backend/src ./src" in whole and "COPY paths updated" in whole


def test_the_request_is_widened_before_the_agent_s_own_analysis_comes_in() -> None:
    """Claude Code's older summaries open with the model's analysis. At a tight budget the
    request is shown whole before any line of that analysis, which only retells it."""
    request = (
        "The user wants a D3 data story of the top 10 Bollywood films by year: a grid with rows "
        "= years and columns = ranks 1-10 only, circle area = worldwide gross, tooltips on "
        "hover, a click opens the film's Wikipedia page, and a square aspect ratio."
    )
    analysis = "\n".join(
        f"{n}. **Step {n}**: I looked at the data again and rebuilt the chart in another way."
        for n in range(1, 9)
    )
    text = f"Analysis:\n{analysis}\n\nSummary:\n1. Primary Request and Intent:\n   {request}\n"
    fitted = fit_earlier(text, 100, count)
    assert count(fitted) <= 100
    assert request in fitted
    assert "Step 1" not in fitted


def test_the_user_s_words_are_shown_whole_before_the_rest_of_the_core_comes_in() -> None:
    """An earlier summary of many sections (one compactcli wrote over an agent's own): a message
    of the user it quotes is shown whole before the decisions of the core fill the room at their
    short shape."""
    quote = (
        '- Major feedback: "My aim is to show the enormous variation in gross over time. Color '
        "circles on a color scale with these buckets: 0-10 cr, 10-20cr, 20-50, 50-100, 100-200, "
        "200-500, 500-1000, 1000-2000, 2000-5000, 5000+. Make the grid closer to a square aspect "
        'ratio. Make the circles bigger, so that the size difference is prominently visible."'
    )
    names = ["alpha", "beta", "gamma", "delta", "omega", "theta"] * 5
    decisions = "\n".join(
        f"- Step {n}: chose the {name}{n} layout over the {name}{n + 1} as {n * 7} readers said"
        for n, name in enumerate(names)
    )
    text = f"## All user messages\n{quote}\n\n## Approved plan\n{decisions}\n"
    fitted = fit_earlier(text, 300, count)
    assert count(fitted) <= 300
    assert quote in fitted
    assert "Step 0:" in fitted  # the rest of the core comes in after it
