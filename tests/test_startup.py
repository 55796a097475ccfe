"""Start-up stays light: `--help` and `estimate` on a small file import neither litellm (seconds
to import) nor tiktoken (only `--method exact` needs it); `--help` imports no library module (but
the errors, the input list and `compactcli.lifetime`, which the entry point ends with) and no
rich, `estimate` none of the other commands' modules (and in a pipe, neither `estimate` nor `compact`
imports rich), and no command imports pydantic.
Each case runs in a fresh interpreter."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from compactcli.formats import PACKAGES
from tests.conftest import FIXTURES, ROOT

RUN = """
import sys
from compactcli.cli import app
sys.argv = ["compactcli", *sys.argv[1:]]
try:
    app(prog_name="compactcli")
except SystemExit as done:
    code = done.code
else:
    code = 0
"""
"""Runs the command line in the driver's interpreter, its exit code in `code` (as `main()` does,
without ending the process there: the driver reports after it)."""

DRIVER = (
    RUN
    + """heavy = sorted({name.split(".")[0] for name in sys.modules} & {"litellm", "tiktoken"})
print("exit", code, "heavy", heavy, file=sys.stderr)
"""
)

MODULES = """
import sys
from compactcli.cli import app
sys.argv = ["compactcli", *sys.argv[1:]]
try:
    app(prog_name="compactcli")
except SystemExit:
    pass
ours = sorted(m for m in sys.modules if m.startswith("compactcli") and not m.startswith("compactcli.cli"))
others = sorted({m.split(".")[0] for m in sys.modules} & {"rich", "pydantic"})
print(ours, others, file=sys.stderr)
"""


def _run(*args: str, driver: str = DRIVER, env: dict[str, str] | None = None) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    done = subprocess.run(
        [sys.executable, "-c", driver, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
    )
    return done.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize(
    "args",
    [
        ("--help",),
        ("estimate", "--help"),
        ("estimate", str(FIXTURES / "transcripts" / "claude-code-session.jsonl")),
        ("estimate", "--json", str(FIXTURES / "transcripts" / "codex-session.jsonl")),
    ],
    ids=["help", "estimate-help", "estimate-claude-code", "estimate-codex-json"],
)
def test_no_heavy_imports(args: tuple[str, ...]) -> None:
    assert _run(*args) == "exit 0 heavy []"


def test_exact_method_imports_tiktoken_but_not_litellm() -> None:
    line = _run(
        "estimate", "--method", "exact", str(FIXTURES / "transcripts" / "openai-session.jsonl")
    )
    assert line == "exit 0 heavy ['tiktoken']"  # the encoding files ship with the package


@pytest.mark.parametrize(
    "args", [("--help",), ("estimate", "--help")], ids=["help", "estimate-help"]
)
def test_help_imports_no_library_module_and_no_rich(args: tuple[str, ...]) -> None:
    assert (
        _run(*args, driver=MODULES)
        # the format registry and each format's entry (names and presets, for --format); no
        # dialect, writer or repair module
        == str(
            sorted(
                [
                    "compactcli",
                    "compactcli.errors",
                    "compactcli.formats",
                    "compactcli.formats.entry",
                    *(f"compactcli.formats.{package}" for package in PACKAGES),
                    "compactcli.inputs",
                    "compactcli.lifetime",
                ]
            )
        )
        + " []"
    )


OTHER_COMMANDS = (
    "compactcli.batch",
    "compactcli.diff",
    "compactcli.evaluation",
    "compactcli.loading",
    "compactcli.stages.compact",
    "compactcli.stages.prune",
    "compactcli.stages.summarize",
    "compactcli.stats",
    "compactcli.summarizers",
    "compactcli.validation",
)


def test_estimate_imports_none_of_the_other_commands_modules() -> None:
    code = MODULES.replace("print(ours, others", "print(sorted(set(ours) & set(WANTED)), others")
    code = f"WANTED = {OTHER_COMMANDS!r}\n{code}"
    path = str(FIXTURES / "transcripts" / "claude-code-session.jsonl")
    assert _run("estimate", path, driver=code) == "[] []"
    assert _run("estimate", "--json", path, driver=code) == "[] []"


RICH = (
    RUN
    + """print("exit", code, sorted(m for m in sys.modules if m.split(".")[0] == "rich"), file=sys.stderr)
"""
)


@pytest.mark.parametrize(
    "args",
    [
        ("claude-code-session.jsonl",),
        ("claude-code-session.jsonl", "codex-session.jsonl", "--by", "role"),
        ("codex-session.jsonl", "--by", "tool", "--max-tokens", "100"),
    ],
    ids=["one-file", "two-files-by-role", "over-budget-by-tool"],
)
def test_estimate_in_a_pipe_imports_no_rich(args: tuple[str, ...]) -> None:
    """Its tables and lines go out as plain text (the output is captured: not a terminal)."""
    files = [str(FIXTURES / "transcripts" / a) if a.endswith(".jsonl") else a for a in args]
    code = "1" if "--max-tokens" in args else "0"
    assert _run("estimate", "--jobs", "1", *files, driver=RICH) == f"exit {code} []"


@pytest.mark.parametrize(
    "args",
    [
        ("claude-code-session.jsonl", "--force"),
        ("claude-code-session.jsonl",),
        ("claude-code-session.jsonl", "codex-session.jsonl", "--force"),
        ("codex-session.jsonl", "--force", "--max-tokens", "100", "--fail-on-threshold"),
    ],
    ids=["summarized", "with-a-note", "two-files", "over-budget"],
)
def test_compact_in_a_pipe_imports_no_rich(args: tuple[str, ...], tmp_path: Path) -> None:
    """Its table, notes and over-budget lines go out as plain text, as estimate's do."""
    files = [str(FIXTURES / "transcripts" / a) if a.endswith(".jsonl") else a for a in args]
    code = "1" if "--fail-on-threshold" in args else "0"
    line = _run("compact", "--jobs", "1", "--out-dir", str(tmp_path), *files, driver=RICH)
    assert line == f"exit {code} []"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        a for a in args if a.endswith(".jsonl")
    )


def test_estimate_on_a_terminal_prints_with_rich() -> None:
    path = str(FIXTURES / "transcripts" / "claude-code-session.jsonl")
    env = {"TTY_COMPATIBLE": "1"}
    line = _run("estimate", path, driver=RICH, env=env)
    assert line.startswith("exit 0 [") and "'rich.console'" in line and "'rich.table'" in line


def test_the_package_imports_its_names_when_first_used() -> None:
    code = (
        "import sys, compactcli\n"
        "print(sorted(m for m in sys.modules if m.startswith('compactcli')))\n"
        "print(compactcli.validate.__module__, compactcli.Transcript.__module__)\n"
        "print(all(getattr(compactcli, name) is not None for name in compactcli.__all__))\n"
        "print(hasattr(compactcli, 'nothing_by_that_name'))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=60
    )
    assert done.stdout.splitlines() == [
        "['compactcli']",
        "compactcli.validation compactcli.transcript",
        "True",
        "False",
    ]
