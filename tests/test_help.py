"""Every command's `--help` says what each option takes, in words a user reads (FILE, DIR, N,
TOKENS, ...), never a Python type."""

from __future__ import annotations

import re

import pytest

from tests.cli_runner import run

COMMANDS = ["prune", "summarize", "compact", "diff", "estimate", "validate", "eval", "redact"]


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
