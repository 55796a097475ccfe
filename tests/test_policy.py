"""Policy files: where they are found, what they may say, globs, and precedence in both commands."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from compactcli.errors import UsageError
from compactcli.estimate import EstimateOptions
from compactcli.policy import (
    estimate_options,
    fail_on_threshold,
    find_policy_file,
    glob_pattern,
    load_policy,
    parse_policy,
    resolve,
)
from tests.cli_runner import run
from tests.conftest import FIXTURES

TRANSCRIPTS = FIXTURES / "transcripts"
CODEX = TRANSCRIPTS / "codex-summarize-session.jsonl"
PI = TRANSCRIPTS / "pi-summarize-session.jsonl"


def _folder(tmp_path: Path, policy: str, name: str = "compactcli.toml") -> Path:
    (tmp_path / "logs" / "codex").mkdir(parents=True)
    (tmp_path / "logs" / "pi").mkdir(parents=True)
    shutil.copy(CODEX, tmp_path / "logs" / "codex" / "b.jsonl")
    shutil.copy(PI, tmp_path / "logs" / "pi" / "a.jsonl")
    (tmp_path / name).write_text(policy)
    return tmp_path


# ---------------------------------------------------------------------------------------------
# the file


def test_compactcli_toml_wins_over_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.compactcli]\nmax_tokens = 1\n")
    assert find_policy_file(str(tmp_path)) == str(tmp_path / "pyproject.toml")
    (tmp_path / "compactcli.toml").write_text("max_tokens = 2\n")
    assert find_policy_file(str(tmp_path)) == str(tmp_path / "compactcli.toml")
    policy = load_policy(str(tmp_path))
    assert policy is not None and policy.defaults == {"max_tokens": 2}


def test_pyproject_without_our_table_is_no_policy(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 100\n")
    assert find_policy_file(str(tmp_path)) is None
    assert load_policy(str(tmp_path)) is None


def test_pyproject_table_with_budgets(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.compactcli]\nthreshold = "80%"\n\n'
        '[tool.compactcli.budgets."codex/**"]\nthreshold = "codex"\nmax-tokens = 100_000\n'
    )
    policy = load_policy(str(tmp_path))
    assert policy is not None
    assert policy.defaults == {"threshold": "80%"}
    assert policy.budgets == (("codex/**", {"threshold": "codex", "max_tokens": 100_000}),)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "max_token = 5\n",
            "compactcli.toml: unknown setting 'max_token'; known settings: api_base, archive, "
            "context_window, cut_turn, dedupe, fail_on_threshold, focus, images, keep_recent, "
            "keep_recent_tokens, max_tokens, method, min_chars, model, protect_first, redact, "
            "redact_records, summarizer, summary_tokens, threshold, timeout, tools",
        ),
        ("max_tokens = -1\n", "compactcli.toml: max_tokens: must be at least 0, found -1"),
        ('max_tokens = "5"\n', "compactcli.toml: max_tokens: expected a whole number, found '5'"),
        (
            'threshold = "half"\n',
            "compactcli.toml: threshold: invalid threshold 'half': use a preset (claude-code, "
            "codex, pi, opencode, hermes), a percentage such as 80%, or a token count",
        ),
        (
            'summarizer = "gpt"\n',
            "compactcli.toml: summarizer: expected one of extractive, llm, found 'gpt'",
        ),
        (
            '[budgets."x/**"]\nfocus = 3\n',
            "compactcli.toml budgets.'x/**': focus: expected a non-empty string, found 3",
        ),
        ("budgets = 3\n", 'compactcli.toml: budgets must be tables such as [budgets."logs/**"]'),
        ("max_tokens = \n", "compactcli.toml: invalid TOML: Invalid value (at line 1, column 14)"),
    ],
)
def test_bad_policies_are_usage_errors_naming_file_and_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("compactcli.toml").write_text(text)
    with pytest.raises(UsageError) as raised:
        load_policy(".")
    assert str(raised.value) == message.replace("compactcli.toml", "./compactcli.toml", 1)
    result = run("compact", str(PI), "--dry-run")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == f"error: {raised.value}\n"


def test_thresholds_are_normalised_and_token_counts_may_be_numbers() -> None:
    policy = parse_policy(
        {"threshold": 150_000, "budgets": {"a/*": {"threshold": " 75 %"}}}, path="p"
    )
    assert policy.defaults == {"threshold": "150000"}
    assert policy.budgets == (("a/*", {"threshold": "75%"}),)


# ---------------------------------------------------------------------------------------------
# globs


@pytest.mark.parametrize(
    ("glob", "path", "matches"),
    [
        ("logs/**", "logs/a.jsonl", True),
        ("logs/**", "logs/x/y/a.jsonl", True),
        ("logs/**", "other/logs/a.jsonl", False),
        ("logs/", "logs/x/a.jsonl", True),
        ("logs/*.jsonl", "logs/a.jsonl", True),
        ("logs/*.jsonl", "logs/x/a.jsonl", False),
        ("**/codex/*.jsonl", "codex/a.jsonl", True),
        ("**/codex/*.jsonl", "a/b/codex/a.jsonl", True),
        ("*.jsonl", "deep/down/a.jsonl", True),
        ("a?.jsonl", "x/ab.jsonl", True),
        ("a?.jsonl", "x/a/b.jsonl", False),
        ("[ab].jsonl", "b.jsonl", True),
        ("[!ab].jsonl", "b.jsonl", False),
        ("./logs/**", "logs/a.jsonl", True),
    ],
)
def test_glob_rules(glob: str, path: str, matches: bool) -> None:
    assert bool(glob_pattern(glob).fullmatch(path)) is matches


def test_later_globs_override_earlier_ones_and_defaults(tmp_path: Path) -> None:
    policy = parse_policy(
        {
            "max_tokens": 1,
            "focus": "auth",
            "budgets": {"logs/**": {"max_tokens": 2}, "logs/codex/*": {"max_tokens": 3}},
        },
        path="p",
        folder=str(tmp_path),
    )
    inside = str(tmp_path / "logs" / "codex" / "b.jsonl")
    assert policy.settings_for(inside) == {"max_tokens": 3, "focus": "auth"}
    assert policy.matching(inside) == ["logs/**", "logs/codex/*"]
    assert policy.settings_for(str(tmp_path / "logs" / "pi" / "a.jsonl"))["max_tokens"] == 2
    assert policy.settings_for("-") == {"max_tokens": 1, "focus": "auth"}
    assert policy.matching("-") == []


def test_resolve_precedence_given_over_file_over_defaults(tmp_path: Path) -> None:
    policy = parse_policy(
        {"max_tokens": 5, "threshold": "pi", "budgets": {"*.jsonl": {"threshold": "codex"}}},
        path="p",
        folder=str(tmp_path),
    )
    defaults = {"max_tokens": None, "threshold": None, "focus": None}
    path = str(tmp_path / "a.jsonl")
    assert resolve({"max_tokens": 9}, policy, path, defaults) == {
        "max_tokens": 9,
        "threshold": "codex",
        "focus": None,
    }
    assert resolve({}, None, path, defaults) == defaults


def test_estimate_options_fill_only_what_no_option_set(tmp_path: Path) -> None:
    policy = parse_policy(
        {"max_tokens": 5, "threshold": 100, "context_window": 1000, "fail_on_threshold": True},
        path="p",
        folder=str(tmp_path),
    )
    base = EstimateOptions(max_tokens=7)
    found = estimate_options(base, "x.jsonl", policy, {"max_tokens"})
    assert (found.max_tokens, found.threshold, found.context_window) == (7, "100", 1000)
    assert found.method == "heuristic"  # under a policy, counted as compact counts
    assert estimate_options(base, "x.jsonl", policy, {"method"}).method == "auto"
    exact = parse_policy({"method": "exact"}, path="p", folder=str(tmp_path))
    assert estimate_options(base, "x.jsonl", exact, set()).method == "exact"
    assert estimate_options(base, "x.jsonl", None, set()) is base
    assert fail_on_threshold(False, "x.jsonl", policy, set()) is True
    assert fail_on_threshold(False, "x.jsonl", policy, {"fail_on_threshold"}) is False


# ---------------------------------------------------------------------------------------------
# both commands obey it


POLICY = """\
max_tokens = 5000

[budgets."logs/codex/**"]
max_tokens = 3000
threshold = 2500
"""


def test_estimate_checks_a_folder_against_the_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(_folder(tmp_path, POLICY))
    result = run("estimate", "logs", "--method", "heuristic", "--json")
    assert result.exit_code == 1
    reports = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert [(r["path"], r["max_tokens"], r["threshold"], r["status"]) for r in reports] == [
        ("logs/codex/b.jsonl", 3000, 2500, "over_budget"),
        ("logs/pi/a.jsonl", 5000, 183616, "over_budget"),
    ]
    assert result.stderr == (
        "logs/codex/b.jsonl: 4,847 tokens (heuristic) over --max-tokens 3,000 by 1,847\n"
        "logs/pi/a.jsonl: 5,997 tokens (heuristic) over --max-tokens 5,000 by 997\n"
    )


def test_the_policy_is_found_from_a_subfolder_and_named_in_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run from below the policy's folder (a CI step in a subfolder), the check still applies:
    the nearest policy walking up from each input's folder, as ruff and pytest find theirs."""
    repo = _folder(tmp_path, POLICY)
    (repo / ".git").mkdir()
    monkeypatch.chdir(repo / "logs" / "codex")
    result = run("estimate", "b.jsonl", "--method", "heuristic", "--json")
    assert result.exit_code == 1
    (report,) = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert (report["max_tokens"], report["status"]) == (3000, "over_budget")
    assert report["policy"] == str(repo / "compactcli.toml")
    compacted = run("compact", "b.jsonl", "--in-place", "--json")
    assert orjson.loads(compacted.stdout)["policy"] == str(repo / "compactcli.toml")


def test_each_input_takes_its_nearest_policy_and_the_walk_stops_at_a_repository_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outer = tmp_path / "outer"
    (outer / "repo" / ".git").mkdir(parents=True)
    (outer / "other").mkdir()
    (outer / "compactcli.toml").write_text("max_tokens = 100\n")  # above the repository
    (outer / "other" / "compactcli.toml").write_text("max_tokens = 200\n")
    shutil.copy(PI, outer / "repo" / "a.jsonl")
    shutil.copy(PI, outer / "other" / "b.jsonl")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    result = run("estimate", str(outer / "repo" / "a.jsonl"), str(outer / "other" / "b.jsonl"))
    rows = [
        orjson.loads(line)
        for line in run(
            "estimate", str(outer / "repo" / "a.jsonl"), str(outer / "other" / "b.jsonl"), "--json"
        ).stdout.splitlines()
    ]
    assert [(r["max_tokens"], r.get("policy")) for r in rows] == [
        (None, None),
        (200, str(outer / "other" / "compactcli.toml")),
    ]
    assert result.exit_code == 1  # b.jsonl is over its own policy's budget
    # an input with no policy of its own takes the working folder's
    (work / "compactcli.toml").write_text("max_tokens = 300\n")
    (row,) = [
        orjson.loads(line)
        for line in run("estimate", str(outer / "repo" / "a.jsonl"), "--json").stdout.splitlines()
    ]
    assert (row["max_tokens"], row["policy"]) == (300, "./compactcli.toml")


def test_compact_then_estimate_pass_the_same_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(_folder(tmp_path, POLICY))
    result = run("compact", "logs", "--in-place", "--json")
    assert result.exit_code == 0, result.stderr
    lines = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert [(r["path"], r["status"], r["over"]) for r in lines] == [
        ("logs/codex/b.jsonl", "compacted", None),
        ("logs/pi/a.jsonl", "compacted", None),
    ]
    assert [r["tokens_before"] for r in lines] == [4847, 5997]
    # each under its own policy: codex's threshold of 2,500, the folder's budget of 5,000
    assert [r["tokens_after"] < limit for r, limit in zip(lines, (2500, 5000), strict=True)] == [
        True,
        True,
    ]
    check = run("estimate", "logs", "--method", "heuristic", "--fail-on-threshold")
    assert check.exit_code == 0, check.stderr
    assert check.stderr == ""


def test_under_a_policy_estimate_counts_as_compact_unless_told_otherwise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(_folder(tmp_path, "max_tokens = 10000\n"))
    path = "logs/codex/b.jsonl"  # it records usage: the system prompt and tools count there

    def counted(*args: str) -> tuple[str, int, str]:
        result = run("estimate", path, "--json", *args)
        report = orjson.loads(result.stdout)
        return report["method"], report["tokens"], report["status"]

    assert counted() == ("heuristic", 4847, "ok")  # as compact counts it: within the budget
    assert counted("--method", "auto") == ("usage+heuristic", 18263, "over_budget")
    monkeypatch.setenv("COMPACTCLI_METHOD", "usage")
    assert counted() == ("usage", 18150, "over_budget")
    monkeypatch.delenv("COMPACTCLI_METHOD")
    (tmp_path / "compactcli.toml").write_text('max_tokens = 10000\nmethod = "exact"\n')
    assert counted() == ("exact", 3498, "ok")
    compact = run("compact", path, "--dry-run", "--json")
    assert orjson.loads(compact.stdout)["method"] == "exact"


def test_options_beat_environment_which_beats_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(_folder(tmp_path, "max_tokens = 5000\n"))
    path = "logs/pi/a.jsonl"

    def budget(*args: str) -> int:
        result = run("estimate", path, "--method", "heuristic", "--json", *args)
        return int(orjson.loads(result.stdout)["max_tokens"])

    assert budget() == 5000
    monkeypatch.setenv("COMPACTCLI_MAX_TOKENS", "7000")
    assert budget() == 7000
    assert budget("--max-tokens", "9000") == 9000

    def compact_budget(*args: str) -> str:
        result = run("compact", path, "--dry-run", "--json", *args)
        return str(orjson.loads(result.stdout)["over"])

    monkeypatch.delenv("COMPACTCLI_MAX_TOKENS")
    monkeypatch.setenv("COMPACTCLI_KEEP_RECENT_TOKENS", "20000")  # no fitting: stays over
    assert compact_budget() == "{'what': 'budget', 'limit': 5000, 'excess': 997}"
    monkeypatch.setenv("COMPACTCLI_MAX_TOKENS", "5900")
    assert compact_budget() == "{'what': 'budget', 'limit': 5900, 'excess': 97}"
    assert compact_budget("--max-tokens", "7000") == "None"


def test_policy_summarizer_settings_reach_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(_folder(tmp_path, 'summarizer = "llm"\n'))
    result = run("compact", "logs/pi/a.jsonl", "--dry-run", "--force")
    assert result.exit_code == 2
    assert result.stderr == (
        "error: the llm summarizer needs a model: pass --model (or COMPACTCLI_MODEL)\n"
    )
    assert (
        run("compact", "logs/pi/a.jsonl", "--dry-run", "--summarizer", "extractive").exit_code == 0
    )
