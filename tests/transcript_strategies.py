"""Hypothesis strategies that generate valid transcripts in every format.

A `Plan` is a format-free conversation: turns of a user prompt followed by assistant steps (text,
thinking, and batches of parallel tool calls with their results), optionally an earlier
compaction before some turn, optionally a last call left unanswered (an interrupted turn). Before
a prompt, and last of all, the user may have run a command (pi writes a `bashExecution` message;
the other formats have no place for one and leave it out). A prompt may load a skill, whose body
follows it as a user message nobody typed (Claude Code writes an `isMeta` record; the other
formats leave it out).
`render(plan, format)` writes it as that format's JSONL bytes, following FORMATS.md; every
rendering is valid for its format (no validate error).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from compactcli.formats.codex.items import SUMMARY_START

FORMAT_NAMES = (
    "claude-code",
    "codex",
    "codex-legacy",
    "pi",
    "openai",
    "openai-responses",
    "anthropic",
)

TOOLS = {
    "claude-code": ["Read", "Bash", "Grep", "Edit", "Write"],
    "anthropic": ["Read", "Bash", "Grep", "Edit", "Write"],
    "codex": ["exec_command", "apply_patch", "read_file"],
    "codex-legacy": ["shell", "read_file"],
    "openai-responses": ["shell", "read_file"],
    "pi": ["read", "bash", "edit", "write"],
    "openai": ["read_file", "run_shell", "search", "write_file"],
}


@dataclass(frozen=True)
class Call:
    tool: int  # index into the format's tool list
    argument: str
    output: str
    is_error: bool = False


@dataclass(frozen=True)
class Step:
    text: str = ""
    thinking: str = ""
    calls: tuple[Call, ...] = ()


@dataclass(frozen=True)
class Turn:
    prompt: str
    steps: tuple[Step, ...]
    shell: Call | None = None  # a command the user ran before the prompt (pi's `!cmd`)
    skill: str | None = None  # a skill's body sent after the prompt (Claude Code `isMeta`)


@dataclass(frozen=True)
class Plan:
    turns: tuple[Turn, ...]
    compacted_before: int | None = None  # an earlier compaction before this turn index
    interrupted: bool = False  # the last step's calls have no results
    trailing_shell: Call | None = None  # a command the user ran last (pi's `!cmd`), kept whole
    system: str = "You are a careful coding agent."
    seed: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


WORDS = (
    "fix",
    "the",
    "failing",
    "test",
    "in",
    "src/app.py",
    "use",
    "pnpm",
    "never",
    "push",
    "to",
    "main",
    "错误",
    "日志",
    "🙂",
    "ECONNREFUSED",
    "port",
    "5432",
    "config",
    "auth",
)


def _words(count: int, choice: int) -> str:
    """`count` of WORDS, the i-th picked by the i-th base-20 digit of `choice`."""
    picked = []
    for _ in range(count):
        choice, digit = divmod(choice, len(WORDS))
        picked.append(WORDS[digit])
    return " ".join(picked)


# Two draws per text (its length and its words' digits), not one per word: generating the
# plans is most of the property tests' time, and a text shrinks all the same (to one "fix").
texts = st.builds(
    _words, st.integers(min_value=1, max_value=12), st.integers(0, len(WORDS) ** 12 - 1)
)
_ARGUMENTS = ("src/app.py", "tests/test_api.py", "ls -la", "README.md", "TODO")


def _call(choice: int) -> Call:
    """A call read off the digits of `choice`: its tool (of 4), argument (of `_ARGUMENTS`),
    whether it failed, its output's line count (1-60) and the words of that line (1-12 of
    WORDS). One draw per call; 0 is the simplest call."""
    choice, tool = divmod(choice, 4)
    choice, argument = divmod(choice, len(_ARGUMENTS))
    choice, failed = divmod(choice, 2)
    choice, lines = divmod(choice, 60)
    choice, count = divmod(choice, 12)
    line = _words(count + 1, choice)
    output = "\n".join(f"{i:4d}  {line}" for i in range(lines + 1))
    return Call(tool, _ARGUMENTS[argument], output, is_error=bool(failed))


calls = st.builds(_call, st.integers(0, 4 * len(_ARGUMENTS) * 2 * 60 * 12 * len(WORDS) ** 12 - 1))
steps = st.builds(
    Step,
    text=texts | st.just(""),
    thinking=st.just("") | texts,
    calls=st.lists(calls, max_size=3).map(tuple),
).filter(lambda s: bool(s.text or s.calls))


SKILL_BODY = "Base directory for this skill: /work/.claude/skills/tidy\n\n# Tidy\n\n{}"

# Built once: a strategy made inside `plans` is validated again on every draw.
_turn_steps = st.lists(steps, min_size=1, max_size=3).map(tuple)
_shells = st.none() | calls
_skills = st.none() | texts.map(SKILL_BODY.format)
_seeds = st.integers(0, 10**6)


@st.composite
def plans(draw: st.DrawFn, max_turns: int = 5) -> Plan:
    turns = tuple(
        Turn(
            prompt=draw(texts),
            steps=draw(_turn_steps),
            shell=draw(_shells),
            skill=draw(_skills),
        )
        for _ in range(draw(st.integers(min_value=1, max_value=max_turns)))
    )
    compacted = None
    if len(turns) > 1 and draw(st.booleans()):
        compacted = draw(st.integers(min_value=1, max_value=len(turns) - 1))
    last = turns[-1].steps[-1]
    interrupted = bool(last.calls) and draw(st.booleans())
    trailing = draw(_shells)
    return Plan(turns, compacted, interrupted, seed=draw(_seeds), trailing_shell=trailing)


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class _Ids:
    def __init__(self, seed: int) -> None:
        self.n = seed * 1000

    def uuid(self) -> str:
        self.n += 1
        return f"{self.n:08x}-0000-4000-8000-{self.n:012x}"

    def short(self) -> str:
        self.n += 1
        return f"{self.n:08x}"[-8:]

    def call(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n:012d}"


def _ts(i: int) -> str:
    return f"2026-05-01T10:{(i // 60) % 60:02d}:{i % 60:02d}.000Z"


def _arguments(fmt: str, tool: str, argument: str) -> dict[str, Any]:
    if tool.lower() in ("bash", "run_shell", "exec_command", "shell"):
        key = "cmd" if fmt == "codex" else "command"
        return {key: argument}
    if tool.lower() == "grep" or tool == "search":
        return {"pattern": argument}
    if fmt == "pi":
        return {"path": argument}
    return {"file_path": argument}


def _codex_legacy(plan: Plan) -> list[dict[str, Any]]:
    """A rollout as Codex CLI wrote them in mid-2025: a meta line, bare items, state lines; an
    earlier compaction is a summary message that starts with Codex's summary prefix."""
    meta = {
        "id": "5973b6c0-94b8-487b-a530-2aeb6098ae0e",
        "timestamp": _ts(0),
        "instructions": plan.system,
        "git": {"commit_hash": "1f2e3d4c", "branch": "main"},
    }
    return [meta, {"record_type": "state"}, *_items(plan, "codex-legacy")]


def _openai_responses(plan: Plan) -> list[dict[str, Any]]:
    """Responses API items: a developer message, then the turns as bare items (an earlier
    compaction is a user summary and an acknowledgement)."""
    return [_message("developer", plan.system), *_items(plan, "openai-responses")]


def _message(role: str, text: str) -> dict[str, Any]:
    part = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": part, "text": text}]}


def _items(plan: Plan, fmt: str) -> list[dict[str, Any]]:
    """The turns as bare Responses items (with state lines in a legacy Codex rollout)."""
    ids = _Ids(plan.seed)
    legacy = fmt == "codex-legacy"
    out: list[dict[str, Any]] = []
    if legacy:
        context = "<environment_context>\n  <cwd>/work/project</cwd>\n</environment_context>"
        out.append(_message("user", context))
    tools = TOOLS[fmt]
    for ti, turn in enumerate(plan.turns):
        if plan.compacted_before == ti and legacy:
            out.append(_message("user", f"{SUMMARY_START}\n{SUMMARY}"))
        elif plan.compacted_before == ti:
            out.append(_message("user", SUMMARY))
            out.append(_message("assistant", "Understood."))
        out.append(_message("user", turn.prompt))
        for si, step in enumerate(turn.steps):
            if step.thinking:
                out.append(
                    {
                        "type": "reasoning",
                        "id": f"rs_{ids.short()}",
                        "summary": [{"type": "summary_text", "text": step.thinking}],
                        "encrypted_content": "gAAAA",
                    }
                )
            if step.text:
                out.append(_message("assistant", step.text))
            out.extend(
                _call_items(
                    step.calls,
                    _is_answered(plan, ti, si),
                    ids,
                    tools,
                    item_ids=True,
                    output_of=lambda c: _dumps(
                        {"output": c.output, "metadata": {"exit_code": int(c.is_error)}}
                    ),
                )
            )
        if legacy:
            out.append({"record_type": "state"})
    return out


def _call_items(
    calls: Sequence[Call],
    answered: bool,
    ids: _Ids,
    tools: Sequence[str],
    *,
    item_ids: bool,
    output_of: Callable[[Call], str],
) -> list[dict[str, Any]]:
    """A step's `function_call` items (with `fc_` ids when `item_ids`), then, when the step
    was answered, their `function_call_output` items, as Codex and the Responses API write them."""
    out: list[dict[str, Any]] = []
    outputs: list[dict[str, Any]] = []
    for call in calls:
        call_id = ids.call("call_")
        tool = tools[call.tool % len(tools)]
        item: dict[str, Any] = {"type": "function_call"}
        if item_ids:
            item["id"] = f"fc_{ids.short()}"
        item["name"] = tool
        item["arguments"] = _dumps(_arguments("codex", tool, call.argument))
        item["call_id"] = call_id
        out.append(item)
        outputs.append(
            {"type": "function_call_output", "call_id": call_id, "output": output_of(call)}
        )
    return out + outputs if answered else out


def _is_answered(plan: Plan, ti: int, si: int) -> bool:
    last_turn = ti == len(plan.turns) - 1
    last_step = si == len(plan.turns[ti].steps) - 1
    return not (plan.interrupted and last_turn and last_step)


def render(plan: Plan, fmt: str) -> bytes:
    """The plan as JSONL bytes of format `fmt`."""
    lines = {
        "claude-code": _claude_code,
        "codex": _codex,
        "codex-legacy": _codex_legacy,
        "pi": _pi,
        "openai": _openai,
        "openai-responses": _openai_responses,
        "anthropic": _anthropic,
    }[fmt](plan)
    return "".join(_dumps(line) + "\n" for line in lines).encode()


SUMMARY = "Summary of earlier turns: the user asked to fix src/app.py; tests were run."


def _claude_code(plan: Plan) -> list[dict[str, Any]]:
    ids = _Ids(plan.seed)
    session = "5e55a0e0-0000-4000-8000-000000000001"
    env = {
        "isSidechain": False,
        "userType": "external",
        "cwd": "/work/project",
        "sessionId": session,
        "version": "2.1.112",
        "gitBranch": "main",
    }
    out: list[dict[str, Any]] = []
    parent: str | None = None
    clock = 0

    def add(kind: str, body: dict[str, Any], parent_uuid: str | None) -> str:
        nonlocal clock
        clock += 1
        uuid = ids.uuid()
        out.append(
            {
                "parentUuid": parent_uuid,
                **env,
                "type": kind,
                **body,
                "uuid": uuid,
                "timestamp": _ts(clock),
            }
        )
        return uuid

    tools = TOOLS["claude-code"]
    for ti, turn in enumerate(plan.turns):
        if plan.compacted_before == ti:
            clock += 1
            boundary = ids.uuid()
            out.append(
                {
                    "parentUuid": None,
                    "logicalParentUuid": parent,
                    **env,
                    "type": "system",
                    "subtype": "compact_boundary",
                    "content": "Conversation compacted",
                    "isMeta": False,
                    "timestamp": _ts(clock),
                    "uuid": boundary,
                    "level": "info",
                    "compactMetadata": {"trigger": "auto", "preTokens": 12000},
                }
            )
            parent = add(
                "user",
                {
                    "message": {
                        "role": "user",
                        "content": "This session is being continued. " + SUMMARY,
                    },
                    "isVisibleInTranscriptOnly": True,
                    "isCompactSummary": True,
                },
                boundary,
            )
        parent = add("user", {"message": {"role": "user", "content": turn.prompt}}, parent)
        if turn.skill is not None:
            body = {"role": "user", "content": [{"type": "text", "text": turn.skill}]}
            parent = add("user", {"message": body, "isMeta": True}, parent)
        for si, step in enumerate(turn.steps):
            msg_id = f"msg_{ids.call('')}"
            blocks: list[dict[str, Any]] = []
            if step.thinking:
                blocks.append({"type": "thinking", "thinking": step.thinking, "signature": "c2ln"})
            if step.text:
                blocks.append({"type": "text", "text": step.text})
            answered = _is_answered(plan, ti, si)
            usage = {
                "input_tokens": 10,
                "cache_creation_input_tokens": 100 * (ti + 1),
                "cache_read_input_tokens": 1000 + 50 * si,
                "output_tokens": 20,
            }

            def assistant(
                block: dict[str, Any],
                stop: str | None,
                parent_uuid: str | None,
                msg_id: str = msg_id,
                usage: dict[str, int] = usage,
            ) -> str:
                return add(
                    "assistant",
                    {
                        "message": {
                            "model": "claude-opus-4-5",
                            "id": msg_id,
                            "type": "message",
                            "role": "assistant",
                            "content": [block],
                            "stop_reason": stop,
                            "stop_sequence": None,
                            "usage": usage,
                        },
                        "requestId": "req_" + msg_id[4:],
                    },
                    parent_uuid,
                )

            for block in blocks:
                parent = assistant(block, None if step.calls else "end_turn", parent)
            for call in step.calls:
                call_id = ids.call("toolu_")
                tool = tools[call.tool]
                tool_use = {
                    "type": "tool_use",
                    "id": call_id,
                    "name": tool,
                    "input": _arguments("claude-code", tool, call.argument),
                }
                holder = assistant(tool_use, "tool_use", parent)
                parent = holder
                if answered:
                    result: dict[str, Any] = {
                        "type": "tool_result",
                        "tool_use_id": call_id,
                        "content": call.output,
                    }
                    if call.is_error:
                        result["is_error"] = True
                    parent = add(
                        "user",
                        {
                            "message": {"role": "user", "content": [result]},
                            "toolUseResult": {
                                "stdout": call.output,
                                "stderr": "",
                                "interrupted": False,
                            },
                            "sourceToolAssistantUUID": holder,
                        },
                        holder,
                    )
    return out


def _codex(plan: Plan) -> list[dict[str, Any]]:
    ids = _Ids(plan.seed)
    clock = 0
    out: list[dict[str, Any]] = []

    def line(kind: str, payload: dict[str, Any]) -> None:
        nonlocal clock
        clock += 1
        out.append({"timestamp": _ts(clock), "type": kind, "payload": payload})

    def message(role: str, text: str) -> dict[str, Any]:
        part = "output_text" if role == "assistant" else "input_text"
        return {"type": "message", "role": role, "content": [{"type": part, "text": text}]}

    line(
        "session_meta",
        {
            "id": "019a0000-0000-7000-8000-000000000001",
            "timestamp": _ts(0),
            "cwd": "/work/project",
            "originator": "codex_cli_rs",
            "cli_version": "0.128.0",
            "source": "cli",
            "model_provider": "openai",
            "base_instructions": {"text": plan.system},
        },
    )
    developer = message(
        "developer", "<permissions instructions>sandboxed</permissions instructions>"
    )
    line("response_item", developer)
    prompts: list[str] = []
    tools = TOOLS["codex"]
    total = 0
    for ti, turn in enumerate(plan.turns):
        if plan.compacted_before == ti:
            history = [developer, *(message("user", p) for p in prompts), message("user", SUMMARY)]
            line("compacted", {"message": SUMMARY, "replacement_history": history})
        line(
            "turn_context",
            {
                "cwd": "/work/project",
                "approval_policy": "never",
                "model": "gpt-5.4",
                "summary": "auto",
            },
        )
        line("response_item", message("user", turn.prompt))
        line("event_msg", {"type": "user_message", "message": turn.prompt, "images": []})
        prompts.append(turn.prompt)
        for si, step in enumerate(turn.steps):
            if step.thinking:
                line(
                    "response_item",
                    {
                        "type": "reasoning",
                        "summary": [{"type": "summary_text", "text": step.thinking}],
                        "content": None,
                        "encrypted_content": "gAAAA",
                    },
                )
            if step.text:
                line("response_item", message("assistant", step.text))
            answered = _is_answered(plan, ti, si)
            for item in _call_items(
                step.calls, answered, ids, tools, item_ids=False, output_of=lambda c: c.output
            ):
                line("response_item", item)
            total += 500
            usage = {
                "input_tokens": total,
                "cached_input_tokens": total // 2,
                "output_tokens": 40,
                "reasoning_output_tokens": 0,
                "total_tokens": total + 40,
            }
            line(
                "event_msg",
                {
                    "type": "token_count",
                    "info": {
                        "total_token_usage": usage,
                        "last_token_usage": usage,
                        "model_context_window": 272000,
                    },
                    "rate_limits": None,
                },
            )
    return out


def _pi(plan: Plan) -> list[dict[str, Any]]:
    ids = _Ids(plan.seed)
    clock = 0
    out: list[dict[str, Any]] = [
        {
            "type": "session",
            "version": 3,
            "id": "6a1d0c2e-0000-4000-8000-000000000001",
            "timestamp": _ts(0),
            "cwd": "/work/project",
        }
    ]
    parent: str | None = None
    first_of_turn: list[str] = []

    def entry(body: dict[str, Any]) -> str:
        nonlocal clock, parent
        clock += 1
        entry_id = ids.short()
        out.append(
            {
                "type": body.pop("type"),
                "id": entry_id,
                "parentId": parent,
                "timestamp": _ts(clock),
                **body,
            }
        )
        parent = entry_id
        return entry_id

    tools = TOOLS["pi"]
    ms = 1_777_000_000_000
    for ti, turn in enumerate(plan.turns):
        if plan.compacted_before == ti:
            entry(
                {
                    "type": "compaction",
                    "summary": SUMMARY,
                    "firstKeptEntryId": first_of_turn[-1],
                    "tokensBefore": 50000,
                }
            )
        if turn.shell is not None:
            entry(_bash_execution(turn.shell, ms))
        first_of_turn.append(
            entry(
                {
                    "type": "message",
                    "message": {
                        "role": "user",
                        "content": [{"type": "text", "text": turn.prompt}],
                        "timestamp": ms,
                    },
                }
            )
        )
        for si, step in enumerate(turn.steps):
            content: list[dict[str, Any]] = []
            if step.thinking:
                content.append({"type": "thinking", "thinking": step.thinking})
            if step.text:
                content.append({"type": "text", "text": step.text})
            pending = []
            for call in step.calls:
                call_id = ids.call("toolu_")
                tool = tools[call.tool % len(tools)]
                content.append(
                    {
                        "type": "toolCall",
                        "id": call_id,
                        "name": tool,
                        "arguments": _arguments("pi", tool, call.argument),
                    }
                )
                pending.append((call_id, tool, call))
            entry(
                {
                    "type": "message",
                    "message": {
                        "role": "assistant",
                        "content": content,
                        "api": "anthropic-messages",
                        "provider": "anthropic",
                        "model": "claude-opus-4-5",
                        "usage": {
                            "input": 100,
                            "output": 20,
                            "cacheRead": 1000 * (ti + 1),
                            "cacheWrite": 10,
                            "totalTokens": 1130 + 1000 * ti,
                            "cost": {"total": 0.01},
                        },
                        "stopReason": "toolUse" if pending else "stop",
                        "timestamp": ms,
                    },
                }
            )
            if _is_answered(plan, ti, si):
                for call_id, tool, call in pending:
                    entry(
                        {
                            "type": "message",
                            "message": {
                                "role": "toolResult",
                                "toolCallId": call_id,
                                "toolName": tool,
                                "content": [{"type": "text", "text": call.output}],
                                "isError": call.is_error,
                                "timestamp": ms,
                            },
                        }
                    )
    if plan.trailing_shell is not None:
        entry(_bash_execution(plan.trailing_shell, ms))
    return out


def _bash_execution(call: Call, ms: int) -> dict[str, Any]:
    """A pi `message` entry for a command the user ran with `!`."""
    return {
        "type": "message",
        "message": {
            "role": "bashExecution",
            "command": call.argument,
            "output": call.output,
            "exitCode": 1 if call.is_error else 0,
            "cancelled": False,
            "truncated": False,
            "timestamp": ms,
        },
    }


def _openai(plan: Plan) -> list[dict[str, Any]]:
    ids = _Ids(plan.seed)
    out: list[dict[str, Any]] = [{"role": "system", "content": plan.system}]
    tools = TOOLS["openai"]
    for ti, turn in enumerate(plan.turns):
        if plan.compacted_before == ti:
            out.append({"role": "user", "content": SUMMARY})
            out.append({"role": "assistant", "content": "Understood."})
        out.append({"role": "user", "content": turn.prompt})
        for si, step in enumerate(turn.steps):
            message: dict[str, Any] = {"role": "assistant", "content": step.text or None}
            pending = []
            if step.calls:
                message["tool_calls"] = []
                for call in step.calls:
                    call_id = ids.call("call_")
                    tool = tools[call.tool % len(tools)]
                    message["tool_calls"].append(
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {
                                "name": tool,
                                "arguments": _dumps(_arguments("openai", tool, call.argument)),
                            },
                        }
                    )
                    pending.append((call_id, call))
            out.append(message)
            if _is_answered(plan, ti, si):
                out.extend(
                    {"role": "tool", "tool_call_id": cid, "content": c.output} for cid, c in pending
                )
    return out


def _anthropic(plan: Plan) -> list[dict[str, Any]]:
    ids = _Ids(plan.seed)
    out: list[dict[str, Any]] = []
    tools = TOOLS["anthropic"]

    def user_text(text: str) -> None:
        if out and out[-1]["role"] == "user":
            out[-1]["content"].append({"type": "text", "text": text})
        else:
            out.append({"role": "user", "content": [{"type": "text", "text": text}]})

    for ti, turn in enumerate(plan.turns):
        if plan.compacted_before == ti:
            user_text(SUMMARY)
            out.append({"role": "assistant", "content": [{"type": "text", "text": "Understood."}]})
        user_text(turn.prompt)
        for si, step in enumerate(turn.steps):
            content: list[dict[str, Any]] = []
            if step.thinking:
                content.append({"type": "thinking", "thinking": step.thinking, "signature": "c2ln"})
            if step.text:
                content.append({"type": "text", "text": step.text})
            results = []
            for call in step.calls:
                call_id = ids.call("toolu_")
                tool = tools[call.tool]
                content.append(
                    {
                        "type": "tool_use",
                        "id": call_id,
                        "name": tool,
                        "input": _arguments("anthropic", tool, call.argument),
                    }
                )
                result: dict[str, Any] = {
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": call.output,
                }
                if call.is_error:
                    result["is_error"] = True
                results.append(result)
            if out and out[-1]["role"] == "assistant":
                out.append({"role": "user", "content": [{"type": "text", "text": "Continue."}]})
            out.append({"role": "assistant", "content": content})
            if results and _is_answered(plan, ti, si):
                out.append({"role": "user", "content": results})
    return out
