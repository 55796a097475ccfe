"""Codex rollout files and OpenAI chat lists, written from a generated session.

`write_codex` follows FORMATS.md and the fixtures under fixtures/transcripts/: `session_meta` and
the initial developer and user context (when not appending), then per turn `turn_context`, the
user message, a reasoning item per step, `exec_command` function calls (a read as `sed -n`, a
search as `rg -n`), `apply_patch` custom tool calls for edits and writes, `update_plan` for the
todo list, and the `event_msg` mirrors (task start and end, user and agent messages, command and
patch ends, token counts). `write_openai` writes one chat completions message per line: the
system prompt (when not appending), the user turn, each step as an assistant message with its
`tool_calls`, and one `tool` message per result.
"""

from __future__ import annotations

import json
import random
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
    random_uuid7,
    seeded_rng,
)
from compactcli.evaluation.session_model import Call, Session, Todo, Turn


def write_codex(
    session: Session,
    turns: list[Turn],
    out: AnchoredRecords,
    existing: Sequence[Mapping[str, Any]] | None,
    salt: int,
) -> None:
    rng = seeded_rng(session, "codex", salt)
    p = session.project
    clock = Clock(rng, START + timedelta(hours=salt))
    if existing:
        clock.now = max(clock.now, latest_timestamp(existing))

    def line(kind: str, payload: JsonObject, facts: Sequence[str] = ()) -> None:
        out.add({"timestamp": clock.tick(), "type": kind, "payload": payload}, facts)

    def message(role: str, parts: list[JsonObject], phase: str | None = None) -> JsonObject:
        item: JsonObject = {"type": "message", "role": role, "content": parts}
        if phase:
            item["phase"] = phase
        return item

    if not existing:
        session_id = random_uuid7(random.Random(session.seed))
        line(
            "session_meta",
            {
                "id": session_id,
                "timestamp": clock.tick(),
                "cwd": p.cwd,
                "originator": "codex_cli_rs",
                "cli_version": "0.130.0",
                "source": "cli",
                "model_provider": "openai",
                "base_instructions": {
                    "text": "You are Codex, a coding agent working in the user's workspace. "
                    "(Base instructions shortened for this generated fixture.)"
                },
                "git": {
                    "commit_hash": f"{rng.getrandbits(160):040x}",
                    "branch": p.branch,
                    "repository_url": f"git@github.com:example/{p.name}.git",
                },
            },
        )
        line(
            "response_item",
            message(
                "developer",
                [
                    {
                        "type": "input_text",
                        "text": "<permissions instructions>\nSandbox: workspace-write. Network "
                        "access is off.\n</permissions instructions>",
                    }
                ],
            ),
        )
        line(
            "response_item",
            message(
                "user",
                [
                    {
                        "type": "input_text",
                        "text": f"# AGENTS.md instructions for {p.cwd}\n\n<INSTRUCTIONS>\nRun "
                        f"`{p.test_command()}` before you finish a change.\n</INSTRUCTIONS>",
                    },
                    {
                        "type": "input_text",
                        "text": f"<environment_context>\n  <cwd>{p.cwd}</cwd>\n  <shell>bash"
                        "</shell>\n</environment_context>",
                    },
                ],
            ),
        )
    total = 9000
    for turn in turns:
        turn_id = random_uuid7(rng)
        line(
            "event_msg",
            {"type": "task_started", "turn_id": turn_id, "model_context_window": 258400},
        )
        line(
            "turn_context",
            {
                "turn_id": turn_id,
                "cwd": p.cwd,
                "approval_policy": "on-request",
                "sandbox_policy": {"type": "workspace-write", "network_access": False},
                "model": "gpt-5.5",
                "effort": "medium",
                "summary": "auto",
            },
        )
        parts: list[JsonObject] = [{"type": "input_text", "text": turn.user}]
        if turn.image:
            parts += [
                {"type": "input_text", "text": "<image>"},
                {"type": "input_image", "image_url": f"data:image/png;base64,{session.image_png}"},
                {"type": "input_text", "text": "</image>"},
            ]
        line("response_item", message("user", parts), turn.facts)
        line(
            "event_msg",
            {"type": "user_message", "message": turn.user, "images": [], "local_images": []},
        )
        for number, step in enumerate(turn.steps):
            final = number == len(turn.steps) - 1 and not step.calls
            line(
                "response_item",
                {
                    "type": "reasoning",
                    "id": "rs_" + f"{rng.getrandbits(136):034x}",
                    "summary": [{"type": "summary_text", "text": step.thinking}]
                    if step.thinking
                    else [],
                    "content": None,
                    "encrypted_content": "gAAAAA" + random_blob(rng, 96),
                },
            )
            if step.text:
                phase = "final_answer" if final else "commentary"
                line(
                    "event_msg",
                    {"type": "agent_message", "message": step.text, "phase": phase},
                )
                line(
                    "response_item",
                    message("assistant", [{"type": "output_text", "text": step.text}], phase),
                    step.facts,
                )
            pending: list[tuple[str, Call]] = []
            for call in step.calls:
                call_id = "call_" + random_token(rng, 24)
                pending.append((call_id, call))
                if call.kind in ("edit", "write"):
                    line(
                        "response_item",
                        {
                            "type": "custom_tool_call",
                            "status": "completed",
                            "call_id": call_id,
                            "name": "apply_patch",
                            "input": _patch(call),
                        },
                        call.input_facts,
                    )
                else:
                    name, arguments = _codex_tool(call, p.cwd)
                    line(
                        "response_item",
                        {
                            "type": "function_call",
                            "name": name,
                            "arguments": json.dumps(arguments, ensure_ascii=False),
                            "call_id": call_id,
                        },
                        call.input_facts,
                    )
            for call_id, call in pending:
                if call.kind in ("edit", "write"):
                    marker = "M" if call.kind == "edit" else "A"
                    text = f"Success. Updated the following files:\n{marker} {call.path}\n"
                    line(
                        "event_msg",
                        {
                            "type": "patch_apply_end",
                            "call_id": call_id,
                            "turn_id": turn_id,
                            "stdout": text,
                            "stderr": "",
                            "success": True,
                        },
                    )
                    line(
                        "response_item",
                        {
                            "type": "custom_tool_call_output",
                            "call_id": call_id,
                            "output": f"Exit code: 0\nWall time: 0.1 seconds\nOutput:\n{text}",
                        },
                        call.output_facts,
                    )
                    continue
                if call.kind != "todo":
                    line(
                        "event_msg",
                        {
                            "type": "exec_command_end",
                            "call_id": call_id,
                            "turn_id": turn_id,
                            "command": ["/bin/bash", "-lc", _codex_command(call)],
                            "cwd": p.cwd,
                            "exit_code": call.exit_code,
                        },
                    )
                line(
                    "response_item",
                    {
                        "type": "function_call_output",
                        "call_id": call_id,
                        "output": _codex_output(rng, call),
                    },
                    call.output_facts,
                )
            total += 300 + step.chars() // 4
            usage = {
                "input_tokens": total,
                "cached_input_tokens": total - rng.randint(200, 3000),
                "output_tokens": rng.randint(40, 600),
                "reasoning_output_tokens": rng.randint(0, 300),
                "total_tokens": total + 500,
            }
            line(
                "event_msg",
                {
                    "type": "token_count",
                    "info": {
                        "total_token_usage": usage,
                        "last_token_usage": usage,
                        "model_context_window": 258400,
                    },
                    "rate_limits": None,
                },
            )
        last_text = next((s.text for s in reversed(turn.steps) if s.text), "")
        line(
            "event_msg",
            {"type": "task_complete", "turn_id": turn_id, "last_agent_message": last_text},
        )


def _codex_command(call: Call) -> str:
    if call.kind == "read":
        lines = call.output.count("\n") + 1
        return f"sed -n '1,{lines}p' {call.path}"
    if call.kind == "grep":
        return f"rg -n {call.pattern} {call.path}"
    return call.command


def _codex_tool(call: Call, cwd: str) -> tuple[str, JsonObject]:
    if call.kind == "todo":
        return "update_plan", {
            "explanation": "Tracking the remaining work.",
            "plan": [{"step": t.content, "status": t.status} for t in call.todos],
        }
    return "exec_command", {
        "cmd": _codex_command(call),
        "workdir": cwd,
        "yield_time_ms": 10000,
        "max_output_tokens": 12000,
    }


def _codex_output(rng: random.Random, call: Call) -> str:
    if call.kind == "todo":
        return "Plan updated"
    seconds = rng.randint(10, 4000) / 1000
    return (
        f"Chunk ID: {rng.getrandbits(24):06x}\nWall time: {seconds:.4f} seconds\n"
        f"Process exited with code {call.exit_code}\nOutput:\n{call.output}"
    )


def _patch(call: Call) -> str:
    if call.kind == "write":
        body = "".join(f"+{line}\n" for line in call.content.splitlines())
        return f"*** Begin Patch\n*** Add File: {call.path}\n{body}*** End Patch\n"
    return (
        f"*** Begin Patch\n*** Update File: {call.path}\n@@\n-{call.old}\n+{call.new}\n"
        "*** End Patch\n"
    )


OPENAI_SYSTEM = (
    "You are a coding assistant working in {cwd}. Use the tools to read and change files; keep "
    "answers short."
)


def write_openai(
    session: Session,
    turns: list[Turn],
    out: AnchoredRecords,
    existing: Sequence[Mapping[str, Any]] | None,
    salt: int,
) -> None:
    rng = seeded_rng(session, "openai", salt)
    p = session.project
    if not existing:
        out.add({"role": "system", "content": OPENAI_SYSTEM.format(cwd=p.cwd)})
    for turn in turns:
        content: Any = turn.user
        if turn.image:
            content = [
                {"type": "text", "text": turn.user},
                {
                    "type": "image_url",
                    "image_url": {"url": f"data:image/png;base64,{session.image_png}"},
                },
            ]
        out.add({"role": "user", "content": content}, turn.facts)
        for step in turn.steps:
            message: JsonObject = {"role": "assistant", "content": step.text or None}
            calls: list[tuple[str, Call]] = []
            if step.calls:
                message["tool_calls"] = []
                for call in step.calls:
                    call_id = "call_" + random_token(rng, 24)
                    name, arguments = _openai_tool(call)
                    message["tool_calls"].append(
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {
                                "name": name,
                                "arguments": json.dumps(arguments, ensure_ascii=False),
                            },
                        }
                    )
                    calls.append((call_id, call))
            index = out.add(message, step.facts)
            for _, call in calls:
                for fact in call.input_facts:
                    out.anchors.setdefault(fact, index)
            for call_id, call in calls:
                out.add(
                    {"role": "tool", "tool_call_id": call_id, "content": _openai_output(call)},
                    call.output_facts,
                )


def _openai_tool(call: Call) -> tuple[str, JsonObject]:
    if call.kind == "read":
        return "read_file", {"path": call.path}
    if call.kind == "edit":
        return "edit_file", {"path": call.path, "old": call.old, "new": call.new}
    if call.kind == "write":
        return "write_file", {"path": call.path, "content": call.content}
    if call.kind == "grep":
        return "search", {"pattern": call.pattern, "path": call.path}
    if call.kind == "todo":
        return "todo_write", {
            "todos": [{"content": t.content, "status": t.status} for t in call.todos]
        }
    return "run_shell", {"command": call.command}


def _openai_output(call: Call) -> str:
    if call.kind == "read":
        return call.output
    if call.kind == "edit":
        return json.dumps({"ok": True, "path": call.path, "replacements": 1})
    if call.kind == "write":
        return json.dumps({"ok": True, "path": call.path, "bytes": len(call.content.encode())})
    if call.kind == "todo":
        return f"Todo list updated ({len(call.todos)} items):\n{_todo_text(call.todos)}"
    if call.is_error:
        return f"Command failed with exit code {call.exit_code}\n{call.output}"
    return call.output


def _todo_text(todos: Sequence[Todo]) -> str:
    return "\n".join(f"[{t.status}] {t.content}" for t in todos)


__all__ = ["OPENAI_SYSTEM", "write_codex", "write_openai"]
