"""Shell completion: the scripts bash, zsh and fish source, and the answers they get back.

The scripts `--install-completion` installs call `compactcli` back with `_COMPACTCLI_COMPLETE`
set; these tests make those calls as the shells do.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from compactcli.formats import FORMATS


def _complete(variables: dict[str, str]) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPACTCLI_")}
    env.update(variables)
    done = subprocess.run(
        [sys.executable, "-m", "compactcli"], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def _bash(words: str) -> list[str]:
    cword = len(words.split()) - (0 if words.endswith(" ") else 1)
    return _complete(
        {"_COMPACTCLI_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(cword)}
    )


def test_bash_completes_commands_options_and_their_values() -> None:
    assert _bash("compactcli est") == ["estimate"]
    assert "compact" in _bash("compactcli co")
    assert "--method" in _bash("compactcli estimate --me")
    assert _bash("compactcli estimate --format ") == list(FORMATS)
    assert _bash("compactcli prune --method ") == ["heuristic", "exact"]


@pytest.mark.parametrize(
    ("shell", "opening"),
    [("bash", "_compactcli_completion()"), ("zsh", "#compdef compactcli"), ("fish", "complete ")],
)
def test_each_shell_gets_a_script_to_source(shell: str, opening: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPACTCLI_")}
    env["_COMPACTCLI_COMPLETE"] = f"source_{shell}"
    done = subprocess.run(
        [sys.executable, "-m", "compactcli"], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0 and done.stdout.lstrip().startswith(opening)
    assert "_COMPACTCLI_COMPLETE=complete_" in done.stdout


def test_zsh_completes_an_option_with_its_help() -> None:
    found = _complete(
        {"_COMPACTCLI_COMPLETE": "complete_zsh", "_TYPER_COMPLETE_ARGS": "compactcli estimate --fo"}
    )
    assert '"--format":"Transcript' in " ".join(found)
