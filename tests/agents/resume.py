"""Resuming a session with the real Claude Code or pi, against the fake Anthropic server.

`resume_claude_code(command, session, prompt, folder, answer)` and `resume_pi(...)` place a copy of the
session file where the agent looks for it, inside a throwaway HOME under `folder`, run the agent
once non-interactively (`claude -p PROMPT --resume ID`, `pi -p PROMPT --session FILE`) with
standard input an empty file, and return a `Resumed`: the exit code and output, every request
the model server received, every request that tried to leave 127.0.0.1, and the session file's
bytes before and after the run.

The environment is built from nothing (no variable of the caller's reaches the agent but the
directory of `node`): HOME and TMPDIR inside `folder`, a dummy API key, and `HTTP(S)_PROXY`
pointing at a second recording server (the trap) with `NO_PROXY` for 127.0.0.1, so any request
to another host is caught there instead of leaving the machine. Both agents honour the proxy
variables (Claude Code's runtime, pi through undici's `EnvHttpProxyAgent`).

Where each agent looks:

- Claude Code: `$HOME/.claude/projects/<cwd>/<session id>.jsonl`, where `<cwd>` is the working
  directory with every character other than an ASCII letter or digit replaced by `-` (Claude
  Code's `sanitizePath`; paths over 200 characters get a hash suffix, which a test folder never
  needs). The session id is the one its records carry. It reaches the server through
  `ANTHROPIC_BASE_URL`; `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1` stops its telemetry (which
  otherwise goes to api.anthropic.com).
- pi: the session file is passed by path. pi refuses a session whose header `cwd` does not
  exist, so the copy's header names the run's working directory (only that key of the header
  changes). The server is set as the `anthropic` provider's `baseUrl` in
  `$HOME/.pi/agent/models.json` (pi's override of a built-in provider); `PI_OFFLINE=1` stops its
  start-up network calls.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.agents.fake_server import AnthropicServer, Received, RecordingServer

TIMEOUT = 120
"""Seconds one agent run may take before the test fails."""

API_KEY = "sk-ant-compactcli-test-not-a-key"

PROMPT = "compactcli resume check: say in one line that the task is done."
"""The prompt every resume sends (distinct, so a test can find it in a request)."""

ANSWER = "Resumed: the task is done."
"""What the fake model answers every message request with."""


@dataclass(frozen=True)
class Resumed:
    """One resume of a session by a real agent."""

    agent: str
    folder: Path  # the run's folder: the agent's home and working directory are in it
    session: Path  # the session file the agent resumed, as it is after the run
    before: bytes  # the session file's bytes as placed, before the run
    exit_code: int
    stdout: str
    stderr: str
    requests: list[Received]  # every request the model server received, in order
    outside: list[Received]  # every request that tried to reach another host

    @property
    def bodies(self) -> list[dict[str, Any]]:
        """The bodies of the message requests (`POST /v1/messages`), in order."""
        return [
            r.body
            for r in self.requests
            if r.method == "POST"
            and r.route == AnthropicServer.MESSAGES
            and isinstance(r.body, dict)
        ]

    @property
    def first(self) -> dict[str, Any]:
        """The first message request after the resume."""
        bodies = self.bodies
        assert bodies, f"{self.agent} sent no message request; stderr: {self.stderr[-2000:]}"
        return bodies[0]

    @property
    def after(self) -> bytes:
        return self.session.read_bytes()

    def describe(self) -> str:
        """The run in a few lines, for a failing assertion."""
        return describe_run(self.agent, self.exit_code, self.requests, self.stdout, self.stderr)


def project_folder(cwd: Path) -> str:
    """The folder name Claude Code gives a working directory under ~/.claude/projects."""
    name = re.sub(r"[^a-zA-Z0-9]", "-", str(cwd))
    assert len(name) <= 200, f"working directory too long for Claude Code's plain name: {cwd}"
    return name


def session_id(path: Path) -> str:
    """The session id a Claude Code session file's records carry (the most common one)."""
    ids: Counter[str] = Counter()
    for line in path.read_bytes().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("sessionId"), str):
            ids[record["sessionId"]] += 1
    assert ids, f"{path}: no record carries a sessionId"
    return ids.most_common(1)[0][0]


def _base_env(home: Path, trap: RecordingServer) -> dict[str, str]:
    node = shutil.which("node")
    path = os.pathsep.join(
        dict.fromkeys([*([str(Path(node).parent)] if node else []), "/usr/bin", "/bin"])
    )
    tmp = home / "tmp"
    tmp.mkdir(exist_ok=True)
    env = {"PATH": path, "HOME": str(home), "TMPDIR": str(tmp), "LANG": "C.UTF-8"}
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
        env[name] = trap.origin
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    return env


def _layout(folder: Path) -> tuple[Path, Path, Path]:
    home = folder / "home"
    work = folder / "work"
    work.mkdir(parents=True)
    home.mkdir(parents=True)
    stdin = folder / "stdin"
    stdin.write_bytes(b"")
    return home, work.resolve(), stdin


def run_agent(
    agent: str,
    argv: list[str],
    env: dict[str, str],
    cwd: Path,
    stdin: Path,
    received: Callable[[], Sequence[Received]],
) -> subprocess.CompletedProcess[str]:
    """Run an agent's command line with file `stdin` as standard input, its output captured; one
    that does not finish within `TIMEOUT` seconds fails the test, naming the requests the fake
    server `received` so far and what the agent wrote to standard error."""
    with stdin.open("rb") as empty:
        try:
            return subprocess.run(
                argv,
                cwd=cwd,
                env=env,
                stdin=empty,
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
            )
        except subprocess.TimeoutExpired as timeout:
            raise AssertionError(
                f"{agent} did not finish within {TIMEOUT}s; requests so far: "
                f"{[r.route for r in received()]}; stderr: {timeout.stderr!r}"
            ) from None


def _run(
    agent: str,
    argv: list[str],
    env: dict[str, str],
    cwd: Path,
    stdin: Path,
    session: Path,
    server: AnthropicServer,
    trap: RecordingServer,
) -> Resumed:
    before = session.read_bytes()
    done = run_agent(agent, argv, env, cwd, stdin, server.received)
    return Resumed(
        agent=agent,
        folder=cwd.parent,
        session=session,
        before=before,
        exit_code=done.returncode,
        stdout=done.stdout,
        stderr=done.stderr,
        requests=server.received(),
        outside=trap.received(),
    )


def resume_claude_code(
    command: list[str],
    session: Path,
    prompt: str,
    folder: Path,
    answer: str,
    reported_input: int | None = None,
    settings: dict[str, Any] | None = None,
) -> Resumed:
    """Resume a Claude Code session file with `claude -p PROMPT --resume ID` (`settings`: the
    user's ~/.claude/settings.json, hooks for one)."""
    home, work, stdin = _layout(folder)
    if settings is not None:
        (home / ".claude").mkdir(parents=True, exist_ok=True)
        (home / ".claude" / "settings.json").write_text(json.dumps(settings))
    sid = session_id(session)
    placed = home / ".claude" / "projects" / project_folder(work) / f"{sid}.jsonl"
    placed.parent.mkdir(parents=True)
    shutil.copyfile(session, placed)
    with AnthropicServer(answer, reported_input) as server, RecordingServer() as trap:
        env = _base_env(home, trap)
        env["ANTHROPIC_BASE_URL"] = server.origin
        env["ANTHROPIC_API_KEY"] = API_KEY
        env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
        argv = [*command, "-p", prompt, "--resume", sid]
        return _run("claude", argv, env, work, stdin, placed, server, trap)


def resume_pi(
    command: list[str],
    session: Path,
    prompt: str,
    folder: Path,
    answer: str,
    reported_input: int | None = None,
    extensions: Sequence[Path] = (),
    extra_env: Mapping[str, str] | None = None,
) -> Resumed:
    """Resume a pi session file with `pi -p PROMPT --session FILE` (`extensions`: files put in
    ~/.pi/agent/extensions; `extra_env`: variables the run gets besides its own)."""
    home, work, stdin = _layout(folder)
    if extensions:
        installed = home / ".pi" / "agent" / "extensions"
        installed.mkdir(parents=True)
        for extension in extensions:
            shutil.copyfile(extension, installed / extension.name)
    lines = session.read_bytes().split(b"\n")
    header = json.loads(lines[0])
    assert isinstance(header, dict) and header.get("type") == "session", f"{session}: no header"
    header["cwd"] = str(work)
    lines[0] = json.dumps(header, ensure_ascii=False).encode()
    placed = folder / "sessions" / session.name
    placed.parent.mkdir(parents=True)
    placed.write_bytes(b"\n".join(lines))
    with AnthropicServer(answer, reported_input) as server, RecordingServer() as trap:
        config = home / ".pi" / "agent"
        config.mkdir(parents=True, exist_ok=True)
        models = {"providers": {"anthropic": {"baseUrl": server.origin}}}
        (config / "models.json").write_text(json.dumps(models))
        env = _base_env(home, trap)
        env["ANTHROPIC_API_KEY"] = API_KEY
        env["PI_OFFLINE"] = "1"
        env.update(extra_env or {})
        argv = [*command, "-p", prompt, "--session", str(placed)]
        return _run("pi", argv, env, work, stdin, placed, server, trap)


def describe_run(
    agent: str, exit_code: int, requests: Sequence[Received], stdout: str, stderr: str
) -> str:
    """An agent's run in a few lines, for a failing assertion."""
    routes = ", ".join(f"{r.method} {r.route}" for r in requests) or "none"
    return (
        f"{agent} exit {exit_code}; requests: {routes}; "
        f"stdout: {stdout[-500:]!r}; stderr: {stderr[-1500:]!r}"
    )
