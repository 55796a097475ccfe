"""Every command's `--help` says what each option takes, in words a user reads (FILE, DIR, N,
TOKENS, ...), never a Python type."""

from __future__ import annotations

import re

import pytest

from tests.cli_runner import run

COMMANDS = [
    "prune",
    "summarize",
    "compact",
    "diff",
    "estimate",
    "validate",
    "eval",
    "redact",
    "restore",
    "gc",
    "export",
]


@pytest.mark.parametrize("command", COMMANDS)
def test_no_option_shows_a_python_type(command: str) -> None:
    done = run(command, "--help")
    assert done.exit_code == 0
    assert re.findall(r"<(?:str|int|float|path)[^>]*>", done.stdout) == []


def test_compact_names_what_its_options_take() -> None:
    lines = [
        line.split("  ")[1].strip()
        for line in run("compact", "--help").stdout.splitlines()
        if line.startswith("  -")
    ]
    assert lines[:4] == ["-o, --output FILE", "--out-dir DIR", "--in-place", "--dry-run"]
    for shown in (
        "--threshold RULE",
        "--max-tokens TOKENS",
        "--method heuristic|exact",
        "--summarizer extractive|llm",
        "--model PROVIDER/MODEL",
        "--api-base URL",
        "--timeout SECONDS",
        "--keep-recent-tokens TOKENS",
        "--protect-first N",
        "--focus TEXT",
        "--min-chars CHARS",
        "--tools NAMES",
        "--archive DIR",
        "-j, --jobs N",
        "--stats FILE",
        "--boundary FILE",
    ):
        assert shown in lines


@pytest.mark.parametrize("command", ["compact", "estimate", "prune", "summarize", "gc", "restore"])
def test_many_options_are_shown_in_panels_and_every_option_in_one(command: str) -> None:
    """Each option names its panel where it is declared (`rich_help_panel`); every panel an
    option of the command names is under one of the command's headings."""
    from compactcli.cli.panels import PANELS

    shown = run(command, "--help").stdout
    headings = [line[:-1] for line in shown.splitlines() if re.fullmatch(r"[A-Z][\w ,]+:", line)]
    panels = [heading for heading, _ in PANELS[command]]
    assert "Options" not in headings
    assert [h for h in headings if h in panels] == [h for h in panels if h in headings]
    assert headings[-1] == "Other options"  # --help alone, last
    listed = [line for line in shown.split(f"{headings[-1]}:\n", 1)[1].splitlines() if line]
    assert [line.split()[0] for line in listed] == ["-h,"]


@pytest.mark.parametrize(
    ("args", "suggested"),
    [
        (["compact", "--bogus", "x.jsonl"], None),
        (["prune", "--force"], None),
        (["compact", "--forse", "x.jsonl"], "(Possible options: --force)"),
        (["estimate", "--jbs", "2", "x.jsonl"], "(Possible options: --jobs)"),
    ],
)
def test_an_unknown_option_suggests_only_close_ones(args: list[str], suggested: str | None) -> None:
    done = run(*args)
    assert done.exit_code == 2
    last = done.stderr.strip().splitlines()[-1]
    assert last == f"Error: No such option: {args[1]}" + (f" {suggested}" if suggested else "")
    assert f"Usage: compactcli {args[0]} " in done.stderr
