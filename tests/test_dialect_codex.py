"""The codex dialect: detection, message views, context replay, usage and validation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compactcli import InputError, read_transcript, to_bytes, validate
from compactcli.estimate import EstimateOptions, estimate
from compactcli.formats import get_dialect
from compactcli.formats.base import Finding
from compactcli.formats.codex.dialect import CodexDialect
from compactcli.formats.codex.items import SUMMARY_PREFIX
from compactcli.formats.detect import detect_format
from compactcli.images import ImageSize
from compactcli.stages.summarize import SummarizeOptions, summarize
from compactcli.summarizers import get_summarizer
from compactcli.tokens import get_counter
from compactcli.transcript import Message, Record, Transcript
from tests.cli_runner import run
from tests.conftest import CORPUS, FIXTURES
from tests.transcript_strategies import Plan, plans, render

TRANSCRIPTS = FIXTURES / "transcripts"
INVALID = FIXTURES / "invalid"
VALID_FILES = sorted(p for p in TRANSCRIPTS.glob("codex-*.jsonl") if "codex-legacy-" not in p.name)
FIXTURE_FILES = VALID_FILES + sorted(INVALID.glob("codex-*.jsonl"))
CODEX = CodexDialect()


def load(name: str) -> Transcript:
    folder = INVALID if (INVALID / name).exists() else TRANSCRIPTS
    return read_transcript(str(folder / name))


def shape(messages: list[Message]) -> list[tuple[int, str, list[str]]]:
    return [(m.index, m.role, [b.kind for b in m.blocks]) for m in messages]


def findings(t: Transcript) -> list[tuple[int, str, str, str]]:
    return [(f.line, f.code, f.message, f.severity) for f in CODEX.validate(t)]


def in_memory(*raws: dict[str, Any]) -> Transcript:
    records = tuple(Record(raw=raw, lineno=n) for n, raw in enumerate(raws, 1))
    return Transcript(records=records, format="codex", source="mem.jsonl")


def line(kind: str, payload: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"timestamp": "2026-05-12T09:00:00.000Z", "type": kind, "payload": payload, **extra}


META = line("session_meta", {"id": "s1", "cwd": "/w", "cli_version": "0.140.0"})


def user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def call(call_id: str) -> dict[str, Any]:
    return {"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": call_id}


def output(call_id: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": "ok"}


# --- every fixture ---------------------------------------------------------------------------


def test_fixtures_exist() -> None:
    names = {p.name for p in FIXTURE_FILES}
    assert {
        "codex-session.jsonl",
        "codex-compacted.jsonl",
        "codex-compacted-legacy.jsonl",
        "codex-compacted-remote.jsonl",
        "codex-image.jsonl",
        "codex-unknown-type.jsonl",
        "codex-no-final-newline.jsonl",
        "codex-unicode.jsonl",
        "codex-interrupted.jsonl",
        "codex-rollback.jsonl",
        "codex-session-meta.jsonl",
        "codex-bad-shape.jsonl",
        "codex-duplicate-id.jsonl",
        "codex-orphan-result.jsonl",
    } <= names


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
def test_fixture_detected_and_round_trips(path: Path) -> None:
    t = read_transcript(str(path))
    assert t.format == "codex"
    assert to_bytes(t) == path.read_bytes()


@pytest.mark.parametrize("path", VALID_FILES, ids=lambda p: p.name)
def test_valid_fixtures_have_no_errors(path: Path) -> None:
    t = read_transcript(str(path))
    assert [f for f in CODEX.validate(t) if f.severity == "error"] == []


def test_no_final_newline_is_kept() -> None:
    path = TRANSCRIPTS / "codex-no-final-newline.jsonl"
    assert not path.read_bytes().endswith(b"\n")
    t = read_transcript(str(path))
    assert shape(CODEX.messages(t)) == [(1, "user", ["text"]), (3, "user", ["text"]),
                                        (4, "assistant", ["text"])]  # fmt: skip


# --- sniffing --------------------------------------------------------------------------------


def test_sniff_session_meta_first_is_certain() -> None:
    assert CodexDialect.sniff([META]) == 100


def test_sniff_headless_rollout() -> None:
    objects = [line("response_item", user("hi")), line("event_msg", {"type": "token_count"})]
    assert CodexDialect.sniff(objects) == 60
    assert detect_format(objects, "x.jsonl") == "codex"


@pytest.mark.parametrize(
    "objects",
    [
        [{"parentUuid": None, "type": "user", "timestamp": "t", "message": {"role": "user"}}],
        [{"type": "session", "version": 3, "id": "a", "timestamp": "t", "cwd": "/"}],
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
        [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        [{"type": "message", "timestamp": "t", "message": {"role": "user"}}],
        [],
    ],
)
def test_sniff_other_formats_score_zero(objects: list[dict[str, Any]]) -> None:
    assert CodexDialect.sniff(objects) == 0


# --- messages --------------------------------------------------------------------------------


def test_session_messages() -> None:
    t = load("codex-session.jsonl")
    messages = CODEX.messages(t)
    assert shape(messages) == [
        (2, "developer", ["text"]),
        (3, "user", ["text", "text"]),
        (5, "user", ["text"]),
        (8, "assistant", ["thinking", "other"]),
        (11, "assistant", ["text"]),
        (12, "assistant", ["tool_call"]),
        (13, "assistant", ["tool_call"]),
        (16, "tool", ["tool_result"]),
        (18, "tool", ["tool_result"]),
        (20, "assistant", ["thinking", "other"]),
        (22, "assistant", ["text"]),
        (23, "assistant", ["tool_call"]),
        (26, "tool", ["tool_result"]),
        (28, "assistant", ["tool_call"]),
        (31, "tool", ["tool_result"]),
        (33, "assistant", ["thinking", "other"]),
        (35, "assistant", ["text"]),
    ]
    assert CODEX.context(t) == messages
    # one model response = one unit: reasoning, commentary and parallel calls stay together
    assert [(m.index, m.unit) for m in messages if m.role == "assistant"] == [
        (8, "8"), (11, "8"), (12, "8"), (13, "8"), (20, "20"), (22, "20"), (23, "20"),
        (28, "28"), (33, "33"), (35, "33"),
    ]  # fmt: skip
    assert {m.unit for m in messages if m.role != "assistant"} == {None}
    assert {m.model for m in messages if m.role == "assistant"} == {"gpt-5.5"}
    assert {m.path for m in messages} == {("payload",)}
    assert not any(m.synthetic or m.summary for m in messages)


def test_session_blocks() -> None:
    t = load("codex-session.jsonl")
    by_index = {m.index: m for m in CODEX.messages(t)}

    thinking, encrypted = by_index[8].blocks
    assert thinking.text == (
        "**Finding the failing test**\n\n"
        "I'll run the totals tests and read the totals module side by side."
    )
    assert (thinking.type, thinking.path) == ("reasoning", ("payload",))
    assert (encrypted.kind, encrypted.type, encrypted.text) == ("other", "encrypted_content", "")
    assert encrypted.path == ("payload", "encrypted_content")
    assert by_index[20].blocks[0].text == ""  # summary-less reasoning: nothing to count
    assert by_index[8].id == "rs_0a1b2c3d4e5f60718293a4b5c6d7e8f901"

    (first_call,) = by_index[12].blocks
    assert first_call.kind == "tool_call"
    assert first_call.call_id == "call_Qm3LdT1vXo8aR2nB5cZ7wK0e"
    assert first_call.name == "exec_command"
    assert first_call.json is True
    assert first_call.text == (
        '{"cmd":"pytest -q tests/test_totals.py","workdir":"/home/dev/invoicer",'
        '"yield_time_ms":10000,"max_output_tokens":12000}'
    )
    assert first_call.arguments == {
        "cmd": "pytest -q tests/test_totals.py",
        "workdir": "/home/dev/invoicer",
        "yield_time_ms": 10000,
        "max_output_tokens": 12000,
    }

    (result,) = by_index[16].blocks
    assert (result.kind, result.type, result.call_id, result.name) == (
        "tool_result",
        "function_call_output",
        "call_Qm3LdT1vXo8aR2nB5cZ7wK0e",
        "exec_command",
    )
    assert result.text.startswith("Chunk ID: db122e\nWall time: 0.8123 seconds\n")
    assert (result.json, result.is_error, result.images) == (False, False, ())

    (patch,) = by_index[23].blocks
    assert (patch.type, patch.name, patch.json) == ("custom_tool_call", "apply_patch", False)
    assert patch.text.startswith("*** Begin Patch\n*** Update File: invoicer/totals.py\n")
    assert patch.arguments == patch.text  # free-form input: the tool input is the string
    (patch_result,) = by_index[26].blocks
    assert (patch_result.type, patch_result.name, patch_result.call_id) == (
        "custom_tool_call_output",
        "apply_patch",
        "call_Vb7nK2pQ9sT4wX1yZ6aC3dF8",
    )

    (text,) = by_index[35].blocks
    assert (text.type, text.path) == ("output_text", ("payload", "content", 0))
    assert text.text.startswith("Fixed: `total()` subtracted the discount twice.")


# --- views of a transcript made from another ---------------------------------------------------


def _views(t: Transcript) -> tuple[list[Message], list[Message]]:
    return CODEX.messages(t), CODEX.context(t)


def _fresh(t: Transcript) -> Transcript:
    """The same records in a transcript made from nothing: its views are all read anew."""
    return Transcript(records=t.records, format="codex", source=t.source)


def _derived(parent: Transcript, records: list[Record]) -> Transcript:
    _views(parent)  # the parent's timeline is made first, as a stage's input has it
    return parent.evolve(records=tuple(records))


def _renamed(raw: dict[str, Any], name: str) -> dict[str, Any]:
    return {**raw, "payload": {**raw["payload"], "name": name}}


@pytest.mark.parametrize("path", VALID_FILES, ids=lambda p: p.name)
def test_a_transcript_made_from_another_reads_as_read_anew(path: Path) -> None:
    parent = read_transcript(str(path))
    records = list(parent.records)
    calls = [
        i
        for i, r in enumerate(records)
        if isinstance(r.raw, dict)
        and r.raw.get("type") == "response_item"
        and r.raw["payload"].get("type") == "function_call"
    ]
    turn = line("turn_context", {"model": "other-model"})
    answered = [records[i].raw["payload"]["call_id"] for i in calls[:1]]
    appended = [
        user("and then?"),
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "ok"}],
        },
        *({"type": "function_call_output", "call_id": c, "output": "again"} for c in answered),
    ]
    variants = {
        # the same JSON objects in new records (read back), and more records after them
        "settled": [Record(r.raw, r.line, r.lineno) for r in records],
        "appended": records + [Record(line("response_item", item)) for item in appended],
        # a record changed in the middle: a call's name, which the results after it take
        "renamed": [
            Record(_renamed(r.raw, "renamed_tool")) if i in calls[:1] else r
            for i, r in enumerate(records)
        ],
        # another model from the middle on: the assistant messages after it carry it
        "model": [Record(turn) if i == len(records) // 2 else r for i, r in enumerate(records)],
    }
    for name, changed in variants.items():
        child = _derived(parent, changed)
        assert _views(child) == _views(_fresh(child)), name
    if calls:  # the renamed call's result is named after it
        renamed = _derived(parent, variants["renamed"])
        call_id = records[calls[0]].raw["payload"]["call_id"]
        names = {
            b.name
            for m in CODEX.messages(renamed)
            for b in m.tool_results
            if b.call_id == call_id and records[m.index].raw["payload"].get("name") is None
        }
        assert names <= {"renamed_tool"}


def test_event_mirrors_are_not_messages() -> None:
    t = load("codex-session.jsonl")
    indexes = {m.index for m in CODEX.messages(t)}
    mirrors = {
        i
        for i, r in t.objects()
        if r.raw["type"] == "event_msg"
        and r.raw["payload"]["type"] in ("user_message", "agent_message", "agent_reasoning")
    }
    assert mirrors == {6, 9, 10, 21, 34}
    assert not indexes & mirrors


def test_image_blocks() -> None:
    t = load("codex-image.jsonl")
    by_index = {m.index: m for m in CODEX.messages(t)}
    assert [(b.kind, b.type) for b in by_index[4].blocks] == [
        ("text", "input_text"),
        ("text", "input_text"),
        ("image", "input_image"),
        ("text", "input_text"),
    ]
    assert by_index[4].blocks[2].path == ("payload", "content", 2)
    (only_image,) = by_index[9].blocks
    one = (ImageSize(1, 1),)  # the size read from the data URL's PNG header
    assert (only_image.text, only_image.images, only_image.name) == ("", one, "view_image")
    (mixed,) = by_index[12].blocks
    assert (mixed.text, mixed.images) == ("rendered 0 series (data/revenue.csv has no rows)", one)
    assert by_index[4].blocks[2].images == one
    assert by_index[7].blocks[0].arguments == {"path": "/home/dev/dash/out/revenue.png"}


def test_legacy_output_shapes_and_local_shell() -> None:
    t = load("codex-compacted-legacy.jsonl")
    by_index = {m.index: m for m in CODEX.messages(t)}
    (shell_json,) = by_index[9].blocks
    assert shell_json.json is True  # the old shell tool answered with a JSON string
    assert shell_json.name == "shell"
    (local,) = by_index[10].blocks
    assert (local.kind, local.type, local.name, local.call_id) == (
        "tool_call",
        "local_shell_call",
        "local_shell",
        "call_l2",
    )
    assert local.arguments["command"] == ["git", "mv", "shop/calc.py", "shop/pricing.py"]
    assert local.json is True
    (failed,) = by_index[12].blocks
    assert (failed.is_error, failed.name) == (True, "local_shell")
    assert failed.text.startswith("fatal: not under version control")
    (succeeded,) = by_index[15].blocks
    assert (succeeded.is_error, succeeded.text) == (False, "")
    assert CODEX.model(t) == "gpt-5-codex"


def test_unicode_and_web_search() -> None:
    t = load("codex-unicode.jsonl")
    by_index = {m.index: m for m in CODEX.messages(t)}
    assert by_index[4].text == (
        "この README を日本語に翻訳して、絵文字 🎉 はそのまま残してください。中文术语也保留。"
    )
    (search,) = by_index[7].blocks
    assert (search.kind, search.type, search.name, search.json, search.call_id) == (
        "other",
        "web_search_call",
        "web_search",
        True,
        None,
    )
    assert "README 翻訳 用語集 デプロイ" in search.text
    assert by_index[6].blocks[0].text == "**用語の確認** — 「デプロイ」で統一します 🚀"
    assert by_index[6].unit == by_index[7].unit == by_index[9].unit == "6"


def test_unknown_types_and_keys_pass_through() -> None:
    t = load("codex-unknown-type.jsonl")
    types = [(r.raw["type"], r.raw["payload"].get("type")) for _, r in t.objects()]
    assert ("world_state", "workspace") in types
    assert ("inter_agent_communication", None) in types
    assert ("response_item", "ghost_snapshot") in types
    assert ("response_item", "hologram_call") in types
    assert shape(CODEX.messages(t)) == [
        (2, "developer", ["text"]),
        (3, "user", ["text"]),
        (7, "user", ["text"]),
        (9, "assistant", ["tool_call"]),
        (11, "tool", ["tool_result"]),
        (13, "assistant", ["text"]),
    ]
    assert CODEX.validate(t) == []
    assert CODEX.model(t) == "gpt-5.5"


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (
            {"type": "message", "role": "user", "content": "hi"},
            "response_item: message content is not an array",
        ),
        (
            {"type": "message", "role": "robot", "content": []},
            "response_item: message has an unknown role 'robot'",
        ),
        (
            {"type": "function_call", "name": "x", "arguments": {"a": 1}, "call_id": "c"},
            "response_item: function_call has no string 'arguments'",
        ),
        (
            {"type": "function_call_output", "call_id": "c", "output": 3},
            "response_item: function_call_output output is neither a string, an array "
            "nor an object",
        ),
        ({"type": "reasoning"}, "response_item: reasoning 'summary' is not an array"),
        ({"role": "user"}, "response_item: response item has no string 'type'"),
    ],
)
def test_wrong_shape_raises_and_validates_as_bad_shape(
    payload: dict[str, Any], message: str
) -> None:
    t = in_memory(META, line("response_item", payload))
    with pytest.raises(InputError) as caught:
        CODEX.messages(t)
    assert str(caught.value) == f"mem.jsonl:2: {message}"
    assert CODEX.validate(t) == [Finding(2, "bad-shape", message)]


def test_wrong_compacted_shape_raises() -> None:
    t = in_memory(META, line("compacted", {"message": "s", "replacement_history": {}}))
    with pytest.raises(InputError) as caught:
        CODEX.context(t)
    assert str(caught.value) == "mem.jsonl:2: compacted: 'replacement_history' is not an array"


def test_record_without_payload_raises() -> None:
    t = in_memory(META, {"timestamp": "t", "type": "response_item"})
    with pytest.raises(InputError) as caught:
        CODEX.messages(t)
    assert str(caught.value) == "mem.jsonl:2: response_item record has no object 'payload'"
    assert CODEX.validate(t) == [Finding(2, "bad-shape", "record has no 'payload'")]


# --- context after compactions ---------------------------------------------------------------


def test_compacted_with_replacement_history() -> None:
    t = load("codex-compacted.jsonl")
    context = CODEX.context(t)
    assert [(m.index, m.role, m.synthetic, m.summary, m.path) for m in context] == [
        (15, "developer", True, False, ("payload", "replacement_history", 0)),
        (15, "user", True, False, ("payload", "replacement_history", 1)),
        (15, "user", True, False, ("payload", "replacement_history", 2)),
        (15, "user", True, True, ("payload", "replacement_history", 3)),
        (18, "user", False, False, ("payload",)),
        (20, "assistant", False, False, ("payload",)),
        (21, "assistant", False, False, ("payload",)),
        (23, "tool", False, False, ("payload",)),
        (24, "assistant", False, False, ("payload",)),
    ]
    assert context[1].blocks[1].path == ("payload", "replacement_history", 1, "content", 1)
    assert context[3].text.startswith(SUMMARY_PREFIX)
    assert "\nGoal: add a `--currency` option" in context[3].text
    # the whole file: the first turn, the compacted line's items at its place, then the rest
    assert [m.index for m in CODEX.messages(t)] == [
        1, 2, 4, 6, 7, 9, 10, 12, 13, 15, 15, 15, 15, 18, 20, 21, 23, 24,
    ]  # fmt: skip
    (compaction,) = CODEX.compactions(t)
    assert compaction.index == 15
    assert compaction.summary == context[3].text
    assert (compaction.summary_index, compaction.ours) == (None, False)


def test_compacted_remote_history() -> None:
    t = load("codex-compacted-remote.jsonl")
    assert shape(CODEX.context(t)) == [
        (15, "developer", ["text"]),
        (15, "user", ["text", "text"]),
        (15, "user", ["text"]),
        (15, "assistant", ["other"]),
        (18, "user", ["text"]),
        (20, "assistant", ["thinking", "other"]),
        (21, "assistant", ["text"]),
    ]
    opaque = CODEX.context(t)[3]
    assert (opaque.summary, opaque.synthetic, opaque.blocks[0].type) == (True, True, "compaction")
    assert opaque.blocks[0].text == ""  # encrypted: nothing countable
    (compaction,) = CODEX.compactions(t)
    assert (compaction.index, compaction.summary) == (15, "")


def test_compacted_legacy_rebuilds_history() -> None:
    t = load("codex-compacted-legacy.jsonl")
    context = CODEX.context(t)
    # initial context (before the first real user message) + real user messages + summary
    assert [(m.index, m.role, m.synthetic, m.summary) for m in context] == [
        (1, "user", False, False),
        (2, "user", False, False),
        (4, "user", False, False),
        (19, "user", True, True),
        (22, "user", False, False),
        (24, "assistant", False, False),
    ]
    summary = context[3]
    assert summary.path == ("payload",)
    assert summary.blocks[0].path == ("payload", "message")
    assert summary.text.endswith("Remaining: update imports in `shop/cart.py` and "
                                 "`shop/checkout.py`.")  # fmt: skip
    (compaction,) = CODEX.compactions(t)
    assert (compaction.index, compaction.summary) == (19, summary.text)


def test_legacy_rebuild_keeps_recent_user_messages_within_budget() -> None:
    big = "word " * 20_000  # 25,000 tokens at 4 bytes a token: over the budget alone
    t = in_memory(
        META,
        line("response_item", user("<environment_context>\n</environment_context>")),
        line("response_item", user("oldest")),
        line("response_item", user(big)),
        line("response_item", user("newest")),
        line("compacted", {"message": "S"}),
    )
    # Codex keeps the newest first, truncating the one that overflows and dropping older ones
    assert [m.index for m in CODEX.context(t)] == [1, 3, 4, 5]


def test_rollback_drops_turns() -> None:
    t = load("codex-rollback.jsonl")
    assert shape(CODEX.context(t)) == [
        (1, "developer", ["text"]),
        (2, "user", ["text"]),
        (4, "user", ["text"]),
        (5, "assistant", ["text"]),
        (16, "user", ["text"]),
        (17, "assistant", ["text"]),
    ]
    assert len(CODEX.messages(t)) == 10
    # usage recorded in the rolled-back turn describes a context that no longer exists
    assert [(u.index, u.context) for u in CODEX.usage(t)] == [(6, 4050), (18, 4335)]
    assert CODEX.validate(t) == []


def test_summary_found_in_history_when_message_is_empty() -> None:
    summary = SUMMARY_PREFIX + "\nDid X."
    t = in_memory(
        META,
        line("compacted", {"message": "", "replacement_history": [user("ask"), user(summary)]}),
        line("compacted", {"message": "ours"}, compactcli={"version": "0.1.0"}),
    )
    assert [(c.index, c.summary, c.ours) for c in CODEX.compactions(t)] == [
        (1, summary, False),
        (2, "ours", True),
    ]
    # rebuilt from the first history: its real user message, then the new summary
    assert [(m.index, m.summary, m.synthetic, m.text) for m in CODEX.context(t)] == [
        (1, False, True, "ask"),
        (2, True, True, "ours"),
    ]


# --- usage -----------------------------------------------------------------------------------


def test_session_usage_dedupes_repeated_token_counts() -> None:
    t = load("codex-session.jsonl")
    token_counts = [
        i
        for i, r in t.objects()
        if r.raw["type"] == "event_msg" and r.raw["payload"]["type"] == "token_count"
    ]
    assert token_counts == [7, 14, 19, 24, 27, 29, 32, 36]
    usage = CODEX.usage(t)
    assert [(u.index, u.context, u.input, u.output, u.cached, u.key) for u in usage] == [
        (14, 9430, 9120, 310, 0, "total:9430"),
        (24, 11045, 10840, 205, 9088, "total:20475"),
        (29, 11298, 11210, 88, 10752, "total:31773"),
        (36, 11602, 11460, 142, 11136, "total:43375"),
    ]


def test_usage_starts_after_the_last_compaction() -> None:
    t = load("codex-compacted.jsonl")
    assert [(u.index, u.context, u.cached) for u in CODEX.usage(t)] == [
        (22, 3220, 0),
        (25, 3425, 3072),
    ]
    legacy = load("codex-compacted-legacy.jsonl")
    assert [(u.index, u.context, u.key) for u in CODEX.usage(legacy)] == [(26, 1940, "total:24940")]


def test_codex_estimate_after_a_compaction_is_no_request_usage() -> None:
    # Codex's recompute_token_usage after a compaction: only total_tokens, the new history's
    # estimate; the running total carries over. The next request's usage is one.
    running = {
        "input_tokens": 90000,
        "cached_input_tokens": 80000,
        "output_tokens": 900,
        "reasoning_output_tokens": 100,
        "total_tokens": 90900,
    }
    estimate_only = dict.fromkeys(running, 0) | {"total_tokens": 1234}
    info = {
        "total_token_usage": running,
        "last_token_usage": estimate_only,
        "model_context_window": 258400,
    }
    request = dict(running, input_tokens=1500, output_tokens=40, total_tokens=1540)
    answered = {**info, "last_token_usage": request}
    t = in_memory(
        META,
        line("compacted", {"message": "", "replacement_history": [user("summary")]}),
        line("event_msg", {"type": "token_count", "info": info, "rate_limits": None}),
        line("response_item", user("go on")),
        line("event_msg", {"type": "token_count", "info": answered, "rate_limits": None}),
    )
    assert [(u.index, u.context, u.input, u.output) for u in CODEX.usage(t)] == [
        (4, 1540, 1500, 40)
    ]
    assert CODEX.usage(in_memory(*(r.raw for r in t.records[:3]))) == []


def resume_context(t: Transcript) -> int:
    """The context size Codex resumes a rollout with: the `last_token_usage.total_tokens` of
    its last `token_count` with an `info` (session/mod.rs seeds its token info from it), which
    it compares with its auto-compact limit before the first request; 0 without one."""
    for record in reversed(t.records):
        payload = record.get("payload")
        if record.get("type") == "event_msg" and isinstance(payload, dict):
            info = payload.get("info")
            if payload.get("type") == "token_count" and isinstance(info, dict):
                return int(info["last_token_usage"]["total_tokens"])
    return 0


@settings(max_examples=25, deadline=None)
@given(plan=plans(), keep=st.integers(min_value=0, max_value=400))
def test_compaction_ends_with_codex_token_count_of_the_compacted_context(
    plan: Plan, keep: int
) -> None:
    lines = render(plan, "codex").splitlines()
    before = in_memory(*(orjson.loads(b) for b in lines))
    after = summarize(
        before,
        SummarizeOptions(keep_recent_tokens=keep),
        summarizer=get_summarizer("extractive"),
        counter=get_counter("heuristic", model=CODEX.model(before), format="codex"),
    )
    stats = after.stats[-1]
    if not stats.changed:
        return
    *_, compacted, turn, count = (r.raw for r in after.records)
    assert (compacted["type"], turn["type"], count["type"]) == (
        "compacted",
        "turn_context",
        "event_msg",
    )
    old = next(  # the generated rollouts record usage
        r.raw["payload"]["info"]
        for r in reversed(before.records)
        if r.raw["type"] == "event_msg" and r.raw["payload"]["type"] == "token_count"
    )
    assert count["payload"] == {
        "type": "token_count",
        "info": {
            "total_token_usage": old["total_token_usage"],
            "last_token_usage": {
                "input_tokens": 0,
                "cached_input_tokens": 0,
                "output_tokens": 0,
                "reasoning_output_tokens": 0,
                "total_tokens": stats.tokens_after,
            },
            "model_context_window": old["model_context_window"],
        },
        "rate_limits": None,
    }
    # Codex resumes with compactcli's count of the compacted context, so an auto-compact limit
    # the compacted context is under is not reached (and one the input reached still is)
    assert resume_context(after) == stats.tokens_after < stats.tokens_before
    if resume_context(before) > stats.tokens_after + 1:
        limit = (resume_context(before) + stats.tokens_after + 1) // 2
        assert resume_context(after) < limit <= resume_context(before)
    # compactcli counts the result as it did when it wrote it (the line is no request's usage)
    assert CODEX.usage(after) == []
    assert estimate(after, EstimateOptions()).tokens == stats.tokens_after
    assert validate(after).errors == ()


# --- validation ------------------------------------------------------------------------------


def test_interrupted_calls_are_warnings() -> None:
    t = load("codex-interrupted.jsonl")
    assert findings(t) == [
        (
            6,
            "call-unanswered",
            "function_call 'call_int1' (exec_command) has no output in the turn aborted on "
            'line 8; Codex answers it with "aborted" on load',
            "warning",
        ),
        (
            12,
            "call-unanswered",
            "function_call 'call_int2' (exec_command) has no output by the end of the file; "
            'Codex answers it with "aborted" on load',
            "warning",
        ),
    ]


def test_call_left_before_next_user_message_is_a_warning() -> None:
    t = in_memory(
        META,
        line("response_item", user("first")),
        line("response_item", call("c1")),
        line("response_item", user("second")),
        line("response_item", output("c1")),
    )
    assert findings(t) == [
        (
            3,
            "call-unanswered",
            "function_call 'c1' (exec_command) has no output before the next user message on "
            'line 4; Codex answers it with "aborted" on load',
            "warning",
        )
    ]


INVALID_CASES = [
    (
        "codex-session-meta.jsonl",
        [(9, "session-meta", "second session_meta (first on line 1)")],
    ),
    ("codex-bad-shape.jsonl", [(7, "bad-shape", "record has no 'timestamp'")]),
    (
        "codex-duplicate-id.jsonl",
        [
            (
                7,
                "duplicate-id",
                "function_call call_id 'call_dup1' is already used by the call on line 6",
            )
        ],
    ),
    (
        "codex-orphan-result.jsonl",
        [
            (
                9,
                "orphan-result",
                "function_call_output call_id 'call_or2' has no earlier function_call or "
                "local_shell_call in its history",
            )
        ],
    ),
]


@pytest.mark.parametrize(("name", "expected"), INVALID_CASES)
def test_invalid_fixture(name: str, expected: list[tuple[int, str, str]]) -> None:
    t = load(name)
    assert [(f.line, f.code, f.message) for f in CODEX.validate(t)] == expected
    assert {f.severity for f in CODEX.validate(t)} == {"error"}


def test_first_record_must_be_session_meta() -> None:
    t = in_memory(line("turn_context", {"model": "m"}), META)
    assert [(f.line, f.code, f.message) for f in CODEX.validate(t)] == [
        (1, "session-meta", "first record is 'turn_context', not session_meta"),
        (2, "session-meta", "session_meta is not the first record"),
    ]


def test_replacement_history_orphan_is_an_error() -> None:
    history = [user("ask"), call("c1"), output("c1"), output("c2")]
    t = in_memory(
        META,
        line("response_item", call("c2")),
        line("response_item", output("c2")),
        line("compacted", {"message": "S", "replacement_history": history}),
    )
    assert [(f.line, f.code, f.message) for f in CODEX.validate(t)] == [
        (
            4,
            "orphan-result",
            "function_call_output call_id 'c2' (replacement_history[3]) has no earlier "
            "function_call or local_shell_call in its history",
        )
    ]


def test_output_after_compaction_for_a_call_before_it_is_an_orphan() -> None:
    t = in_memory(
        META,
        line("response_item", user("ask")),
        line("response_item", call("c1")),
        line("compacted", {"message": "S"}),
        line("response_item", output("c1")),
    )
    assert [(f.line, f.code) for f in CODEX.validate(t)] == [
        (3, "call-unanswered"),
        (5, "orphan-result"),
    ]
    assert [m.index for m in CODEX.context(t)] == [1, 3, 4]


def test_legacy_compaction_without_user_message_keeps_everything() -> None:
    # Codex's infer_initial_context: no real user message, so the whole history is "initial"
    t = in_memory(
        META,
        line("response_item", call("c1")),
        line("compacted", {"message": "S"}),
        line("response_item", output("c1")),
    )
    assert [m.index for m in CODEX.context(t)] == [1, 2, 3]
    assert CODEX.validate(t) == []


def test_output_kind_must_match_call_kind_and_answer_once() -> None:
    custom = {"type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": "p"}
    t = in_memory(
        META,
        line("response_item", custom),
        line("response_item", output("c1")),
        line("response_item", {"type": "custom_tool_call_output", "call_id": "c1", "output": ""}),
        line("response_item", {"type": "custom_tool_call_output", "call_id": "c1", "output": ""}),
    )
    assert [(f.line, f.code, f.message) for f in CODEX.validate(t)] == [
        (
            3,
            "orphan-result",
            "function_call_output call_id 'c1' has no earlier function_call or "
            "local_shell_call in its history",
        ),
        (
            5,
            "duplicate-id",
            "custom_tool_call_output call_id 'c1' answers the call on line 2 a second time",
        ),
    ]


# --- the real corpus -------------------------------------------------------------------------

corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus not present")

# file: (messages, tool calls, tool results, usage anchors, last usage context, model)
CORPUS_FACTS = {
    "codex-raze.jsonl": (105, 38, 38, 18, 113006, "gpt-5.4"),
    "codex-fundwise.jsonl": (18, 5, 4, 4, 44353, "gpt-5.5"),
    "codex-scout-applypatch.jsonl": (40, 12, 12, 8, 22888, "gpt-5.5"),
    "codex-xeus-websearch.jsonl": (7, 0, 0, 1, 33512, "gpt-5.5"),
}


@corpus
@pytest.mark.parametrize("name", sorted(CORPUS_FACTS))
def test_corpus_file(name: str) -> None:
    path = CORPUS / name
    t = read_transcript(str(path))
    assert t.format == "codex"
    assert to_bytes(t) == path.read_bytes()
    assert [f for f in CODEX.validate(t) if f.severity == "error"] == []

    messages = CODEX.messages(t)
    calls = [b for m in messages for b in m.tool_calls]
    results = [b for m in messages for b in m.tool_results]
    usage = CODEX.usage(t)
    facts = (len(messages), len(calls), len(results), len(usage), usage[-1].context, CODEX.model(t))
    assert facts == CORPUS_FACTS[name]
    # no compaction: the context is the whole conversation, starting at the permissions message
    assert CODEX.context(t) == messages
    assert messages[0].role == "developer"
    assert messages[0].text.startswith("<permissions instructions>")
    assert all(r.name for r in results)  # every result names its tool, from its call
    assert CODEX.compactions(t) == []


@corpus
def test_corpus_raze_token_counts_repeat_in_pairs() -> None:
    t = read_transcript(str(CORPUS / "codex-raze.jsonl"))
    token_counts = [
        r
        for _, r in t.objects()
        if r.raw["type"] == "event_msg" and r.raw["payload"]["type"] == "token_count"
    ]
    assert len(token_counts) == 36
    assert sum(1 for r in token_counts if r.raw["payload"]["info"] is not None) == 35
    usage = CODEX.usage(t)
    assert len(usage) == 18
    assert len({u.key for u in usage}) == 18
    assert (usage[0].index, usage[0].input, usage[0].output, usage[0].cached) == (14, 11851, 493, 0)


@corpus
def test_corpus_fundwise_unanswered_call_at_the_end_is_a_warning() -> None:
    t = read_transcript(str(CORPUS / "codex-fundwise.jsonl"))
    assert len(t.records) == 33
    assert findings(t) == [
        (
            32,
            "call-unanswered",
            "function_call 'call_7iImZHAbdGa3ScCIPRXVoGW1' (exec_command) has no output by the "
            'end of the file; Codex answers it with "aborted" on load',
            "warning",
        )
    ]


@corpus
def test_corpus_scout_custom_tool_results_name_apply_patch() -> None:
    t = read_transcript(str(CORPUS / "codex-scout-applypatch.jsonl"))
    results = [b for m in CODEX.messages(t) for b in m.tool_results]
    assert [b.name for b in results if b.type == "custom_tool_call_output"] == [
        "apply_patch",
        "apply_patch",
    ]
    assert CODEX.validate(t) == []


@corpus
def test_corpus_xeus_web_search_is_an_other_block() -> None:
    t = read_transcript(str(CORPUS / "codex-xeus-websearch.jsonl"))
    blocks = [(b.kind, b.type) for m in CODEX.messages(t) for b in m.blocks if b.kind == "other"]
    assert blocks == [("other", "encrypted_content"), ("other", "web_search_call")]
    assert CODEX.validate(t) == []


def test_get_dialect() -> None:
    assert isinstance(get_dialect("codex"), CodexDialect)


# --- writing ---------------------------------------------------------------------------------


def test_clear_result_replaces_the_output() -> None:
    t = load("codex-session.jsonl")
    message = next(m for m in CODEX.messages(t) if m.index == 16)
    record = CODEX.clear_result(t.records[16], message.blocks[0], "[cleared]")
    assert record.changed and not t.records[16].changed
    assert record.raw["payload"] == {
        "type": "function_call_output",
        "call_id": "call_Qm3LdT1vXo8aR2nB5cZ7wK0e",
        "output": "[cleared]",
    }
    assert record.raw["timestamp"] == t.records[16].raw["timestamp"]
    edited = t.evolve(records=(*t.records[:16], record, *t.records[17:]))
    assert CODEX.validate(edited) == []
    assert next(m for m in CODEX.messages(edited) if m.index == 16).blocks[0].text == "[cleared]"


def test_clear_result_keeps_the_old_output_object() -> None:
    t = load("codex-compacted-legacy.jsonl")
    message = next(m for m in CODEX.messages(t) if m.index == 12)
    record = CODEX.clear_result(t.records[12], message.blocks[0], "[cleared]")
    assert record.raw["payload"]["output"] == {"content": "[cleared]", "success": False}


def test_clear_result_inside_replacement_history() -> None:
    history = [user("ask"), call("c1"), output("c1")]
    t = in_memory(META, line("compacted", {"message": "S", "replacement_history": history}))
    result = CODEX.context(t)[2]
    record = CODEX.clear_result(t.records[1], result.blocks[0], "[cleared]")
    assert record.raw["payload"]["replacement_history"][2]["output"] == "[cleared]"
    assert t.records[1].raw["payload"]["replacement_history"][2]["output"] == "ok"


def test_replace_image_with_text() -> None:
    t = load("codex-image.jsonl")
    image = next(m for m in CODEX.messages(t) if m.index == 4).blocks[2]
    record = CODEX.replace_with_text(t.records[4], image, "[image removed]")
    assert record.raw["payload"]["content"][2] == {"type": "input_text", "text": "[image removed]"}
    assert CODEX.prune_boundary(t, {"stage": "prune"}) == []


def remote_compacted_rollout(path: Path) -> None:
    """A rollout whose history OpenAI's remote compaction replaced (its summary an encrypted
    `compaction` item), then six turns of reading long files."""
    developer = {
        "type": "message",
        "role": "developer",
        "content": [{"type": "input_text", "text": "<permissions instructions>"}],
    }
    sealed = {"type": "compaction", "encrypted_content": "gAAAA" + "x" * 8000}
    history = [developer, user("Build the payroll page. Never touch the vault."), sealed]
    meta = {
        "id": "019d0000-0000-7000-8000-000000000001",
        "timestamp": "2026-05-12T09:00:00.000Z",
        "cwd": "/w",
        "originator": "codex_cli_rs",
        "cli_version": "0.130.0",
    }
    lines = [line("session_meta", meta), line("response_item", developer)]
    lines.append(line("response_item", history[1]))
    lines.append(line("compacted", {"message": "", "replacement_history": history}))
    for n in range(6):
        call = {"cmd": f"cat src/p{n}.ts"}
        lines += [
            line("turn_context", {"cwd": "/w", "model": "gpt-5.4"}),
            line("response_item", user(f"Now fix part {n} of the page.")),
            line(
                "response_item",
                {
                    "type": "function_call",
                    "name": "exec_command",
                    "arguments": orjson.dumps(call).decode(),
                    "call_id": f"c{n}",
                },
            ),
            line(
                "response_item",
                {
                    "type": "function_call_output",
                    "call_id": f"c{n}",
                    "output": "Process exited with code 0\nOutput:\n" + "const x = 1;\n" * 300,
                },
            ),
        ]
    path.write_bytes(b"".join(orjson.dumps(raw) + b"\n" for raw in lines))


def test_a_remote_compaction_the_summary_cannot_read_is_kept_before_it(tmp_path: Path) -> None:
    """What OpenAI's remote compaction holds of a session is encrypted: compacting again keeps
    its item (once, each round) right before our summary, as real Codex resumes it."""
    source, once, twice = tmp_path / "r.jsonl", tmp_path / "once.jsonl", tmp_path / "twice.jsonl"
    remote_compacted_rollout(source)
    for made_from, out in ((source, once), (once, twice)):
        done = run(
            "compact", str(made_from), "--force", "--keep-recent-tokens", "200", "-o", str(out)
        )
        assert done.exit_code == 0, done.stderr
        validate(read_transcript(str(out)))
        compacted = [orjson.loads(r) for r in out.read_bytes().splitlines()][-3]
        history = compacted["payload"]["replacement_history"]
        kinds = [item.get("type") for item in history]
        assert kinds.count("compaction") == 1
        at = kinds.index("compaction")
        assert history[at]["encrypted_content"].startswith("gAAAA")
        assert history[at + 1]["content"][0]["text"] == compacted["payload"]["message"]
