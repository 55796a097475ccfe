"""Claude Code session files and Anthropic Messages lists, written from a generated session.

`write_claude_code` follows FORMATS.md and the fixtures under fixtures/transcripts/: per turn a
`file-history-snapshot` and the user record, then one assistant record per content block
(thinking, text, each tool use) with the tool results interleaved as user records that keep a
`toolUseResult` copy, each record chained to the one before it by `parentUuid`; appended turns
chain from the last message of the existing context (`render.render_more` passes it last, as a
`leaf` entry). `write_anthropic` writes one API message per line: the user turn's blocks, each
step as one assistant message with its tool uses, and their results in one user message. Both
name the tools as Claude Code does (`Read`, `Edit`, `Write`, `Grep`, `TodoWrite`, `Bash`) and
word their results as it does (a read numbered as by `cat -n`).
"""

from __future__ import annotations

import random
import uuid as uuidlib
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from compactcli.evaluation.render_common import (
    START,
    AnchoredRecords,
    Clock,
    JsonObject,
    latest_timestamp,
    random_blob,
    random_token,
    random_uuid,
    seeded_rng,
)
from compactcli.evaluation.session_model import Call, Session, Turn


def write_claude_code(
    session: Session,
    turns: list[Turn],
    out: AnchoredRecords,
    existing: Sequence[Mapping[str, Any]] | None,
    salt: int,
) -> None:
    rng = seeded_rng(session, "claude-code", salt)
    p = session.project
    session_id = str(uuidlib.UUID(int=random.Random(session.seed).getrandbits(128), version=4))
    clock = Clock(rng, START + timedelta(hours=salt))
    parent: str | None = None
    if existing:
        parent = _claude_leaf(existing)
        clock.now = max(clock.now, latest_timestamp(existing))
    env = {
        "isSidechain": False,
        "userType": "external",
        "entrypoint": "cli",
        "cwd": p.cwd,
        "sessionId": session_id,
        "version": "2.1.112",
        "gitBranch": p.branch,
    }

    def record(
        kind: str, body: JsonObject, parent_uuid: str | None, facts: Sequence[str] = ()
    ) -> str:
        uuid = random_uuid(rng)
        head: JsonObject = {"parentUuid": parent_uuid, "isSidechain": False}
        rest = {k: v for k, v in env.items() if k != "isSidechain"}
        out.add(
            {**head, **body, "type": kind, "uuid": uuid, "timestamp": clock.tick(), **rest}, facts
        )
        return uuid

    context_tokens = 12000
    for turn in turns:
        prompt_id = random_uuid(rng)
        content: Any = turn.user
        if turn.image:
            content = [
                {"type": "text", "text": turn.user},
                {
                    "type": "image",
                    "source": {
                        "type": "base64",
                        "media_type": "image/png",
                        "data": session.image_png,
                    },
                },
            ]
        uuid = random_uuid(rng)
        out.add(
            {
                "type": "file-history-snapshot",
                "messageId": uuid,
                "snapshot": {
                    "messageId": uuid,
                    "trackedFileBackups": {},
                    "timestamp": clock.tick(),
                },
                "isSnapshotUpdate": False,
            }
        )
        user_record: JsonObject = {
            "parentUuid": parent,
            "isSidechain": False,
            "promptId": prompt_id,
            "type": "user",
            "message": {"role": "user", "content": content},
            "uuid": uuid,
            "timestamp": clock.tick(5, 40),
            "permissionMode": "acceptEdits",
            **{k: v for k, v in env.items() if k != "isSidechain"},
        }
        if turn.image:
            user_record["imagePasteIds"] = [1]
        out.add(user_record, turn.facts)
        parent = uuid
        for step in turn.steps:
            context_tokens += 400 + step.chars() // 4
            message_id = "msg_01" + random_token(rng, 22)
            request_id = "req_011C" + random_token(rng, 20)
            usage = {
                "input_tokens": rng.randint(1, 9),
                "cache_creation_input_tokens": rng.randint(200, 4000),
                "cache_read_input_tokens": context_tokens,
                "output_tokens": rng.randint(40, 900),
                "service_tier": "standard",
            }
            stop = "tool_use" if step.calls else "end_turn"

            def assistant(
                block: JsonObject,
                parent_uuid: str | None,
                facts: Sequence[str] = (),
                message_id: str = message_id,
                request_id: str = request_id,
                usage: JsonObject = usage,
                stop: str = stop,
            ) -> str:
                return record(
                    "assistant",
                    {
                        "message": {
                            "model": "claude-opus-4-6",
                            "id": message_id,
                            "type": "message",
                            "role": "assistant",
                            "content": [block],
                            "stop_reason": stop,
                            "stop_sequence": None,
                            "usage": usage,
                        },
                        "requestId": request_id,
                    },
                    parent_uuid,
                    facts,
                )

            if step.thinking:
                parent = assistant(
                    {
                        "type": "thinking",
                        "thinking": step.thinking,
                        "signature": random_blob(rng, 48),
                    },
                    parent,
                )
            if step.text:
                parent = assistant({"type": "text", "text": step.text}, parent, step.facts)
            for call in step.calls:
                call_id = "toolu_01" + random_token(rng, 22)
                name, arguments = _claude_tool(call, p.cwd)
                holder = assistant(
                    {"type": "tool_use", "id": call_id, "name": name, "input": arguments},
                    parent,
                    call.input_facts,
                )
                text, copy = _claude_result(call, p.cwd)
                result: JsonObject = {
                    "tool_use_id": call_id,
                    "type": "tool_result",
                    "content": text,
                }
                if call.is_error:
                    result["is_error"] = True
                parent = record(
                    "user",
                    {
                        "promptId": prompt_id,
                        "message": {"role": "user", "content": [result]},
                        "toolUseResult": copy,
                        "sourceToolAssistantUUID": holder,
                    },
                    holder,
                    call.output_facts,
                )


def _claude_leaf(existing: Sequence[Mapping[str, Any]]) -> str | None:
    """The uuid new records chain from: the context's last message (`render_more` puts it
    last, as a `leaf` entry)."""
    for raw in reversed(existing):
        if raw.get("type") in ("leaf", "user", "assistant") and isinstance(raw.get("uuid"), str):
            return str(raw["uuid"])
    return None


def _absolute(cwd: str, path: str) -> str:
    return path if path.startswith("/") else f"{cwd}/{path}"


def _claude_tool(call: Call, cwd: str) -> tuple[str, JsonObject]:
    if call.kind == "read":
        return "Read", {"file_path": _absolute(cwd, call.path)}
    if call.kind == "edit":
        return "Edit", {
            "file_path": _absolute(cwd, call.path),
            "old_string": call.old,
            "new_string": call.new,
        }
    if call.kind == "write":
        return "Write", {"file_path": _absolute(cwd, call.path), "content": call.content}
    if call.kind == "grep":
        return "Grep", {
            "pattern": call.pattern,
            "path": _absolute(cwd, call.path),
            "output_mode": "content",
            "-n": True,
        }
    if call.kind == "todo":
        return "TodoWrite", {
            "todos": [
                {"content": t.content, "status": t.status, "activeForm": t.active}
                for t in call.todos
            ]
        }
    return "Bash", {"command": call.command, "description": _describe(call.command)}


def _describe(command: str) -> str:
    if "pytest" in command or "vitest" in command or "test" in command:
        return "Run the tests"
    return "Run " + command.split()[0]


TODO_RESULT = (
    "Todos have been modified successfully. Ensure that you continue to use the todo list to "
    "track your progress. Please proceed with the current tasks if applicable"
)


def _claude_result(call: Call, cwd: str) -> tuple[str, Any]:
    path = _absolute(cwd, call.path)
    if call.kind == "read":
        lines = call.output.count("\n") or 1
        return _numbered(call.output), {
            "type": "text",
            "file": {
                "filePath": path,
                "content": call.output,
                "numLines": lines,
                "startLine": 1,
                "totalLines": lines,
            },
        }
    if call.kind == "edit":
        text = (
            f"The file {path} has been updated. Here's the result of running `cat -n` on a "
            f"snippet of the edited file:\n{call.output}"
        )
        return text, {
            "filePath": path,
            "oldString": call.old,
            "newString": call.new,
            "userModified": False,
            "replaceAll": False,
        }
    if call.kind == "write":
        return f"File created successfully at: {path}", {
            "type": "create",
            "filePath": path,
            "content": call.content,
            "structuredPatch": [],
        }
    if call.kind == "grep":
        lines = call.output.count("\n")
        return call.output.rstrip("\n"), {
            "mode": "content",
            "numFiles": lines,
            "filenames": [],
            "content": call.output.rstrip("\n"),
            "numLines": lines,
        }
    if call.kind == "todo":
        todos = [
            {"content": t.content, "status": t.status, "activeForm": t.active} for t in call.todos
        ]
        return TODO_RESULT, {"oldTodos": [], "newTodos": todos}
    if call.is_error:
        body = f"Exit code {call.exit_code}\n{call.output.rstrip()}"
        return body, f"Error: {body}"
    return call.output.rstrip("\n"), {
        "stdout": call.output.rstrip("\n"),
        "stderr": "",
        "interrupted": False,
        "isImage": False,
    }


def _numbered(text: str) -> str:
    """`cat -n` style numbering, as Claude Code's Read shows a file."""
    return "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(text.splitlines(), 1))


def write_anthropic(
    session: Session,
    turns: list[Turn],
    out: AnchoredRecords,
    _existing: Sequence[Mapping[str, Any]] | None,  # a plain list needs nothing from before
    salt: int,
) -> None:
    rng = seeded_rng(session, "anthropic", salt)
    p = session.project
    context_tokens = 6000
    for turn in turns:
        blocks: list[JsonObject] = [{"type": "text", "text": turn.user}]
        if turn.image:
            blocks.append(
                {
                    "type": "image",
                    "source": {
                        "type": "base64",
                        "media_type": "image/png",
                        "data": session.image_png,
                    },
                }
            )
        out.add({"role": "user", "content": blocks}, turn.facts)
        for step in turn.steps:
            context_tokens += 300 + step.chars() // 4
            content: list[JsonObject] = []
            if step.thinking:
                content.append(
                    {
                        "type": "thinking",
                        "thinking": step.thinking,
                        "signature": random_blob(rng, 48),
                    }
                )
            if step.text:
                content.append({"type": "text", "text": step.text})
            results: list[JsonObject] = []
            for call in step.calls:
                call_id = "toolu_01" + random_token(rng, 22)
                name, arguments = _claude_tool(call, p.cwd)
                content.append(
                    {"type": "tool_use", "id": call_id, "name": name, "input": arguments}
                )
                text, _ = _claude_result(call, p.cwd)
                result: JsonObject = {
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": text,
                }
                if call.is_error:
                    result["is_error"] = True
                results.append(result)
            index = out.add(
                {
                    "id": "msg_01" + random_token(rng, 22),
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "content": content,
                    "stop_reason": "tool_use" if step.calls else "end_turn",
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": rng.randint(1, 9),
                        "cache_creation_input_tokens": rng.randint(200, 4000),
                        "cache_read_input_tokens": context_tokens,
                        "output_tokens": rng.randint(40, 900),
                    },
                },
                step.facts,
            )
            for call in step.calls:
                for fact in call.input_facts:
                    out.anchors.setdefault(fact, index)
            if results:
                facts = [f for call in step.calls for f in call.output_facts]
                out.add({"role": "user", "content": results}, facts)


__all__ = ["TODO_RESULT", "write_anthropic", "write_claude_code"]
