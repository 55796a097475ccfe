"""Without litellm (installed only with `compactcli[llm]`): `--summarizer llm` and the llm-replay
strategy exit 2 with the install command before any input is read, and everything else (compact,
summarize, exact counts, model windows, eval) answers exactly as it does with litellm.

Each command runs in a fresh interpreter whose `sitecustomize` refuses to import litellm, and,
for comparison, in one without it (the evaluation, in the test's own process)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_runner import run
from tests.conftest import EVAL_FIXTURES, FIXTURES, ROOT

REFUSE_LITELLM = """
import sys


class RefuseLitellm:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "litellm":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, RefuseLitellm())
"""

INSTALL = "pip install 'compactcli[llm]'"
CC = str(FIXTURES / "transcripts" / "claude-code-session.jsonl")
CODEX = str(FIXTURES / "transcripts" / "codex-session.jsonl")
OPENAI = str(FIXTURES / "transcripts" / "openai-session.jsonl")
SUMMARIZE = str(FIXTURES / "transcripts" / "claude-code-summarize-session.jsonl")


@pytest.fixture
def no_litellm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder whose sitecustomize.py makes litellm unimportable."""
    folder = tmp_path_factory.mktemp("no-litellm")
    (folder / "sitecustomize.py").write_text(REFUSE_LITELLM)
    return folder


def _run(
    args: list[str], cwd: Path, without: Path | None = None, code: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`compactcli ARGS` (or `python -c CODE`) in a fresh interpreter, litellm refused when
    `without` is the folder of the refusing sitecustomize."""
    path = [str(without)] if without is not None else []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*path, str(ROOT)])}
    command = ["-c", code] if code is not None else ["-m", "compactcli", *args]
    return subprocess.run(
        [sys.executable, *command], capture_output=True, text=True, env=env, cwd=cwd, timeout=120
    )


def test_litellm_is_refused(no_litellm: Path, tmp_path: Path) -> None:
    check = (
        "from compactcli.summarizers import llm_installed\nprint(llm_installed())\nimport litellm\n"
    )
    refused = _run([], tmp_path, no_litellm, code=check)
    assert refused.stdout == "False\n"
    assert refused.stderr.rstrip().endswith("ModuleNotFoundError: No module named 'litellm'")
    assert (
        _run(
            [],
            tmp_path,
            code="from compactcli.summarizers import llm_installed\nprint(llm_installed())",
        ).stdout
        == "True\n"
    )


@pytest.mark.parametrize(
    ("args", "what"),
    [
        (["summarize", "--summarizer", "llm", "--model", "openai/m", "missing.jsonl"], None),
        (["summarize", "--summarizer", "llm", "--model", "openai/m", "-", "-o", "out.jsonl"], None),
        (["compact", "--summarizer", "llm", "--model", "openai/m", "missing.jsonl"], None),
        (["compact", "--summarizer", "llm", "--model", "openai/m", CC, "-o", "out.jsonl"], None),
        (["eval", "--strategies", "llm-replay"], "the llm-replay strategy"),
        (
            ["eval", "--strategies", "compact,llm-replay", "missing.jsonl"],
            "the llm-replay strategy",
        ),
    ],
    ids=[
        "summarize-missing-input",
        "summarize-stdin",
        "compact-missing-input",
        "compact",
        "eval",
        "eval-missing-input",
    ],
)
def test_the_llm_summarizer_names_the_install_command(
    args: list[str], what: str | None, no_litellm: Path, tmp_path: Path
) -> None:
    result = _run(args, tmp_path, no_litellm)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"error: {what or '--summarizer llm'} needs litellm, which is not installed: {INSTALL}\n"
    )
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_the_llm_summarizer_named_by_a_variable_or_a_policy(
    no_litellm: Path, tmp_path: Path
) -> None:
    (tmp_path / "session.jsonl").write_bytes(Path(CC).read_bytes())
    line = f"error: --summarizer llm needs litellm, which is not installed: {INSTALL}\n"
    os.environ["COMPACTCLI_SUMMARIZER"] = "llm"  # conftest's clean_environment removes it
    try:
        result = _run(["compact", "session.jsonl", "-o", "out.jsonl"], tmp_path, no_litellm)
    finally:
        del os.environ["COMPACTCLI_SUMMARIZER"]
    assert (result.returncode, result.stderr) == (2, line)
    (tmp_path / "compactcli.toml").write_text('summarizer = "llm"\nmodel = "openai/m"\n')
    result = _run(["compact", "session.jsonl", "-o", "out.jsonl"], tmp_path, no_litellm)
    assert (result.returncode, result.stderr) == (2, line)
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["compact", CODEX, "--force", "--keep-recent-tokens", "500", "-o", "out.jsonl"],
        ["compact", SUMMARIZE, "--force", "--keep-recent-tokens", "500", "-o", "out.jsonl"],
        ["summarize", SUMMARIZE, "--keep-recent-tokens", "500", "-o", "out.jsonl"],
        ["estimate", "--method", "exact", OPENAI, CC, "--json"],
        ["estimate", "--method", "exact", "--model", "gpt-4", OPENAI],
        ["estimate", CC, CODEX, OPENAI, "--json"],
        ["estimate", OPENAI, "--model", "anthropic/claude-sonnet-4-5-20250929", "--json"],
        ["estimate", OPENAI, "--model", "claude-opus-4-7[1m]", "--json"],
    ],
    ids=[
        "compact",
        "compact-summary",
        "summarize",
        "exact",
        "exact-cl100k",
        "windows",
        "window-dated",
        "window-1m",
    ],
)
def test_the_same_answers_without_litellm(
    args: list[str], no_litellm: Path, tmp_path: Path
) -> None:
    answers = []
    for folder, without in ((tmp_path / "with", None), (tmp_path / "without", no_litellm)):
        folder.mkdir()
        result = _run(args, folder, without)
        files = {p.name: p.read_bytes() for p in sorted(folder.iterdir())}
        answers.append((result.returncode, result.stdout, result.stderr, files))
    assert answers[0] == answers[1]
    code, stdout, _, files = answers[1]
    assert code == 0
    if "-o" in args:  # a transcript compacted, not copied
        assert files["out.jsonl"] != Path(args[1]).read_bytes()
    if "--json" in args and "estimate" in args:
        assert '"context_window_source":"model table (' in stdout


@pytest.mark.llm  # the run with litellm is made in this process (tests/conftest.py)
def test_eval_leaves_llm_replay_out_unless_named(no_litellm: Path, tmp_path: Path) -> None:
    fixtures = tmp_path / "fixtures"
    (fixtures / "recordings").mkdir(parents=True)
    name = "openai-20k-s3"
    for file in (f"{name}.jsonl", f"{name}.probes.jsonl", f"recordings/{name}.jsonl"):
        (fixtures / file).write_bytes((EVAL_FIXTURES / file).read_bytes())
    args = ["eval", "--fixtures", str(fixtures), "--budgets", "0.5", "--rounds", "1"]
    without = _run(args, tmp_path, no_litellm)
    with_litellm = run(*args)
    assert without.stderr == with_litellm.stderr == ""
    assert " 5 strategies," in without.stdout.splitlines()[0]
    assert " 6 strategies," in with_litellm.stdout.splitlines()[0]
    assert "llm-replay" not in without.stdout
    # the rows of the other strategies are the same
    rows = [line for line in with_litellm.stdout.splitlines()[1:] if "llm-replay" not in line]
    assert without.stdout.splitlines()[1:] == rows


REFUSE_RAY = REFUSE_LITELLM.replace("litellm", "ray").replace("RefuseLitellm", "RefuseRay")


@pytest.mark.parametrize("command", ["compact", "estimate"])
def test_the_ray_engine_names_the_install_command(
    command: str, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    folder = tmp_path_factory.mktemp("no-ray")
    (folder / "sitecustomize.py").write_text(REFUSE_RAY)
    args = [
        command,
        CODEX,
        "--engine",
        "ray",
        *(["-o", "out.jsonl"] if command == "compact" else []),
    ]
    done = _run(args, tmp_path, folder)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "error: the Ray engine needs Ray Data: pip install 'compactcli[ray]'\n"
    assert not (tmp_path / "out.jsonl").exists()
