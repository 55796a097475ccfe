"""Every example in README.md and docs/*.md is true: console sessions and Python blocks are run as written.

A ```console block holds `$ COMMAND` lines, each followed by the exact output it prints
(standard output and standard error together). The commands of a block run in order, each in a
shell at the repository root with this environment's `compactcli` first on PATH and no provider
API key in the environment (so the examples of what happens without one hold). ```python
blocks run in a scratch folder that links to the fixtures (one that uses the Ray engine, on the
local Ray the Ray tests share); ```pycon blocks are doctests, checked as such.
"""

from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

README = "\n".join(
    path.read_text(encoding="utf-8")
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
)
BLOCK = re.compile(r"```(console|python|pycon)\n(.*?)```", re.DOTALL)


def _sessions() -> list[list[tuple[str, list[str]]]]:
    """Each console block: its (command, expected output lines) in order."""
    found: list[list[tuple[str, list[str]]]] = []
    for kind, body in BLOCK.findall(README):
        if kind != "console":
            continue
        session = []
        for chunk in re.split(r"^\$ ", body, flags=re.MULTILINE)[1:]:
            command, *output = chunk.rstrip("\n").split("\n")
            while command.endswith("\\") and output:
                command = command[:-1] + output.pop(0).lstrip()
            session.append((command, output))
        found.append(session)
    return found


def _env() -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("COMPACTCLI_") and not k.endswith("_API_KEY")
    }
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env.update(NO_COLOR="1", COLUMNS="200", TERM="dumb", LITELLM_LOCAL_MODEL_COST_MAP="True")
    return env


@pytest.mark.parametrize("session", _sessions(), ids=[s[0][0] for s in _sessions()])
def test_console_example(session: list[tuple[str, list[str]]]) -> None:
    for command, expected in session:
        done = subprocess.run(
            command,
            shell=True,
            cwd=ROOT,
            env=_env(),
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=120,
        )
        assert (command, (done.stdout + done.stderr).rstrip("\n").split("\n")) == (
            command,
            expected,
        )


PYTHON = [body for kind, body in BLOCK.findall(README) if kind == "python"]


@pytest.mark.parametrize(
    "code",
    [  # an example that calls litellm runs with the tests that do (`llm`: tests/conftest.py)
        pytest.param(code, marks=[pytest.mark.llm] if '"llm"' in code else [])
        for code in PYTHON
        if "ray_engine" not in code
    ],
)
def test_python_example(code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "fixtures").symlink_to(ROOT / "fixtures")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {"__name__": "readme"})


@pytest.mark.parametrize("code", [code for code in PYTHON if "ray_engine" in code])
def test_python_example_on_ray(
    code: str, local_ray: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Ray example runs on the local Ray the Ray tests share (the example would start one of
    all the cores itself, as it does for a user)."""
    test_python_example(code, tmp_path, monkeypatch)


def test_the_readme_starts_with_the_two_setup_commands() -> None:
    blocks = re.findall(r"```bash\n(.*?)```", README, re.DOTALL)
    assert blocks[0].startswith("python3 -m venv .venv && .venv/bin/pip install -e . && ")
    assert "scripts/test" in blocks[1]


@pytest.mark.parametrize(
    "session", [body for kind, body in BLOCK.findall(README) if kind == "pycon"]
)
def test_interactive_example(session: str) -> None:
    parser = doctest.DocTestParser()
    test = parser.get_doctest(session, {}, "README.md", "README.md", 0)
    report: list[str] = []
    result = doctest.DocTestRunner().run(test, out=report.append)
    assert result.attempted > 0
    assert result.failed == 0, "".join(report)


SCRIPT_USE = re.compile(r"scripts/(\w+)\.py([^`\n#]*)")


def _script_flags() -> dict[str, set[str]]:
    """The options each `scripts/NAME.py ...` the docs show passes (inline or in a block, up to
    a comment), by script."""
    found: dict[str, set[str]] = {}
    for name, rest in SCRIPT_USE.findall(README):
        found.setdefault(name, set()).update(re.findall(r"(?<![\w-])--[a-z][\w-]*", rest))
    return found


@pytest.mark.parametrize("name", sorted(n for n, flags in _script_flags().items() if flags))
def test_the_options_the_docs_give_a_script_are_its_own(name: str) -> None:
    """A script the docs show with options (`scripts/bench_estimate.py --exact-on ...`) takes
    each of them: its `--help` names them."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / f"{name}.py"), "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    missing = {flag for flag in _script_flags()[name] if flag not in done.stdout}
    assert not missing, f"scripts/{name}.py --help does not name {sorted(missing)}"
