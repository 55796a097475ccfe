"""The real agents, installed once from npm at pinned versions into a cache folder.

`agent_command(name)` returns the argv prefix that runs agent `name` (`claude`, `codex` or `pi`),
installing all three into `$COMPACTCLI_AGENTS_CACHE` (default `~/.cache/compactcli-agents`) on
first use. Processes that ask at once (pytest-xdist workers, parallel runs) take turns on a
lock file beside the cache: the first installs, the others then find the agents there. When npm
or the registry cannot be reached, it calls `pytest.skip` with one line saying so; any other
install failure fails the test that asked.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

PACKAGES = {
    "claude": "@anthropic-ai/claude-code@2.1.332",
    "codex": "@openai/codex@0.171.0",
    "pi": "@mariozechner/pi-coding-agent@0.73.1",
}
"""Each agent's executable name and the exact npm package it comes from."""


def cache_dir() -> Path:
    """Where the agents are installed (one folder per set of pinned versions)."""
    root = Path(os.environ.get("COMPACTCLI_AGENTS_CACHE", Path.home() / ".cache/compactcli-agents"))
    tag = "-".join(spec.rsplit("@", 1)[1] for spec in PACKAGES.values())
    return root / tag


def agent_command(name: str) -> list[str]:
    """The command that runs agent `name`, installing the pinned agents first when needed."""
    folder = cache_dir()
    binary = folder / "node_modules" / ".bin" / name
    if not binary.exists():
        with _one_at_a_time(folder.parent / f".{folder.name}.lock"):
            if not binary.exists():  # another process may have installed them meanwhile
                _install(folder)
    if not binary.exists():
        pytest.fail(f"npm installed {PACKAGES[name]} into {folder} but {binary} is missing")
    return [str(binary)]


@contextmanager
def _one_at_a_time(lock: Path) -> Iterator[None]:
    """Hold an exclusive lock on the file `lock` (created if need be) while the block runs."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _install(folder: Path) -> None:
    """npm-install the agents into a fresh folder beside `folder`, then rename it into place, so
    that an install cut short (a killed run) never leaves a half-filled `folder` behind."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("real-agent tests skipped: npm is not installed")
    partial = folder.parent / f".{folder.name}.partial-{os.getpid()}"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir()
    try:
        done = subprocess.run(
            [
                npm,
                "install",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(partial),
                *PACKAGES.values(),
            ],
            capture_output=True,
            text=True,
            timeout=600,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        shutil.rmtree(partial, ignore_errors=True)
        pytest.skip("real-agent tests skipped: npm install timed out (registry unreachable?)")
    if done.returncode != 0:
        shutil.rmtree(partial, ignore_errors=True)
        unreachable = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ENETUNREACH")
        if any(code in done.stderr for code in unreachable):
            pytest.skip("real-agent tests skipped: the npm registry is unreachable")
        pytest.fail(f"npm install failed:\n{done.stderr[-2000:]}")
    shutil.rmtree(folder, ignore_errors=True)  # an install left incomplete by an older version
    os.rename(partial, folder)
