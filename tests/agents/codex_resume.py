"""Resuming a rollout with the real Codex CLI, against the fake Responses API server.

`resume_codex(command, rollout, prompt, folder, answer, auto_compact_limit)` places a copy of the
rollout where Codex looks for it, inside a throwaway HOME under `folder`, runs
`codex exec --skip-git-repo-check resume ID PROMPT` once with standard input an empty file, and
returns a `CodexResumed`: the exit code and output, every request the model server received,
every request that tried to leave 127.0.0.1, and the rollout's bytes before and after the run.

Where Codex looks: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<id>.jsonl`, the
date and time being the session's start (`session_meta.payload.timestamp`) and `<id>` its
`session_meta.payload.id`; `codex exec resume ID` finds the file by that id in its name (the
state databases Codex keeps in CODEX_HOME are created on the first run; none is needed before).

Configuration (`$CODEX_HOME/config.toml`, with CODEX_HOME = `$HOME/.codex`): `openai_base_url`
points the built-in OpenAI provider at the fake server (the key is a dummy `OPENAI_API_KEY`);
`model` is the rollout's last `turn_context` model, so Codex resumes without a model switch;
`model_auto_compact_token_limit`, when given, is the context size at which Codex compacts
before its first request. Analytics, the update check, plugins and apps are off, so nothing
tries to reach another host; the environment is built from nothing, with HTTP(S)_PROXY pointing
at a second recording server (the trap) and NO_PROXY for 127.0.0.1, so any request that still
tries is caught there.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.agents.fake_server import Received, RecordingServer
from tests.agents.responses_server import RESPONSES, ResponsesServer, is_compaction
from tests.agents.resume import describe_run, run_agent

"""Seconds one run may take before the test fails."""

API_KEY = "sk-compactcli-test-not-a-key"


@dataclass(frozen=True)
class CodexResumed:
    """One resume of a rollout by the real Codex CLI."""

    rollout: Path  # the rollout Codex resumed, as it is after the run
    before: bytes  # its bytes as placed, before the run
    exit_code: int
    stdout: str
    stderr: str
    requests: list[Received]  # every request the model server received, in order
    outside: list[Received]  # every request that tried to reach another host

    @property
    def model_requests(self) -> list[Received]:
        """The requests to the model (`POST /v1/responses`, compactions included), in order."""
        return [r for r in self.requests if r.method == "POST" and r.route.startswith(RESPONSES)]

    @property
    def compactions(self) -> list[Received]:
        """The model requests that asked for a compaction."""
        return [r for r in self.model_requests if is_compaction(r)]

    @property
    def first(self) -> dict[str, Any]:
        """The body of the first model request after the resume."""
        found = [r.body for r in self.model_requests if isinstance(r.body, dict)]
        assert found, f"codex sent no model request: {self.describe()}"
        body: dict[str, Any] = found[0]
        return body

    @property
    def after(self) -> bytes:
        return self.rollout.read_bytes()

    def describe(self) -> str:
        """The run in a few lines, for a failing assertion."""
        return describe_run("codex", self.exit_code, self.requests, self.stdout, self.stderr)


def session_meta(rollout: Path) -> dict[str, Any]:
    """The payload of a rollout's first line, its `session_meta`."""
    with rollout.open("rb") as lines:
        first = json.loads(lines.readline())
    assert first.get("type") == "session_meta", f"{rollout}: the first line is not session_meta"
    payload: dict[str, Any] = first["payload"]
    return payload


def placed_name(rollout: Path) -> Path:
    """Where under `$CODEX_HOME/sessions` Codex looks for this rollout."""
    meta = session_meta(rollout)
    started = str(meta["timestamp"])
    year, month, day = started[:4], started[5:7], started[8:10]
    stamp = started[:19].replace(":", "-")
    return Path(year, month, day, f"rollout-{stamp}-{meta['id']}.jsonl")


def last_model(rollout: Path) -> str | None:
    """The `model` of the rollout's last `turn_context`."""
    model = None
    for line in rollout.read_bytes().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        payload = record.get("payload") if isinstance(record, dict) else None
        if (
            record.get("type") == "turn_context"
            and isinstance(payload, dict)
            and isinstance(payload.get("model"), str)
        ):
            model = payload["model"]
    return model


def _config(origin: str, model: str | None, auto_compact_limit: int | None) -> str:
    lines = [
        f"openai_base_url = {json.dumps(origin + '/v1')}",
        "check_for_update_on_startup = false",
    ]
    if model is not None:
        lines.append(f"model = {json.dumps(model)}")
    if auto_compact_limit is not None:
        lines.append(f"model_auto_compact_token_limit = {auto_compact_limit}")
    lines += ["[analytics]", "enabled = false", "[features]", "plugins = false", "apps = false"]
    return "\n".join(lines) + "\n"


def _env(home: Path, codex_home: Path, trap: RecordingServer) -> dict[str, str]:
    node = shutil.which("node")
    path = os.pathsep.join(
        dict.fromkeys([*([str(Path(node).parent)] if node else []), "/usr/bin", "/bin"])
    )
    tmp = home / "tmp"
    tmp.mkdir(exist_ok=True)
    env = {
        "PATH": path,
        "HOME": str(home),
        "CODEX_HOME": str(codex_home),
        "TMPDIR": str(tmp),
        "LANG": "C.UTF-8",
        "OPENAI_API_KEY": API_KEY,
    }
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
        env[name] = trap.origin
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    return env


def resume_codex(
    command: list[str],
    rollout: Path,
    prompt: str,
    folder: Path,
    answer: str,
    auto_compact_limit: int | None = None,
    hooks: dict[str, Any] | None = None,
) -> CodexResumed:
    """Resume `rollout` with `codex exec resume ID PROMPT` in a throwaway HOME under `folder`
    (`hooks`: the user's ~/.codex/hooks.json, run without the trust review, as a reviewed hook
    runs)."""
    home = folder / "home"
    codex_home = home / ".codex"
    work = folder / "work"
    for made in (codex_home, work):
        made.mkdir(parents=True)
    stdin = folder / "stdin"
    stdin.write_bytes(b"")
    placed = codex_home / "sessions" / placed_name(rollout)
    placed.parent.mkdir(parents=True)
    shutil.copyfile(rollout, placed)
    before = placed.read_bytes()
    session_id = str(session_meta(rollout)["id"])
    with ResponsesServer(answer) as server, RecordingServer() as trap:
        config = _config(server.origin, last_model(rollout), auto_compact_limit)
        (codex_home / "config.toml").write_text(config)
        trust: list[str] = []
        if hooks is not None:
            (codex_home / "hooks.json").write_text(json.dumps(hooks))
            trust = ["--dangerously-bypass-hook-trust"]
        argv = [*command, *trust, "exec", "--skip-git-repo-check", "resume", session_id, prompt]
        env = _env(home, codex_home, trap)
        done = run_agent("codex", argv, env, work.resolve(), stdin, server.received)
        return CodexResumed(
            rollout=placed,
            before=before,
            exit_code=done.returncode,
            stdout=done.stdout,
            stderr=done.stderr,
            requests=server.received(),
            outside=trap.received(),
        )
