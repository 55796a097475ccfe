"""The claude-code dialect: fixtures, invalid fixtures and the real corpus files."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compactcli.errors import InputError
from compactcli.formats import get_dialect
from compactcli.formats.claude_code import state as claude_code_state
from compactcli.formats.claude_code.chain import _build_chain, _skeletons
from compactcli.formats.claude_code.chain_nodes import ASSISTANT, OTHER, RESULTS, USER, ChainNodes
from compactcli.formats.claude_code.dialect import ClaudeCodeDialect
from compactcli.formats.claude_code.records import _record_lite, _record_message, _ShapeError
from compactcli.formats.claude_code.state import _chain_of
from compactcli.formats.detect import detect_format
from compactcli.images import ImageSize
from compactcli.loading import read_transcript, to_bytes
from compactcli.summarizers.facts import extract_facts
from compactcli.transcript import Record, Transcript
from compactcli.validation import validate

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TRANSCRIPTS = FIXTURES / "transcripts"
INVALID = FIXTURES / "invalid"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus not present")

DIALECT = ClaudeCodeDialect()
ALL_FIXTURES = sorted(TRANSCRIPTS.glob("claude-code-*.jsonl")) + sorted(
    INVALID.glob("claude-code-*.jsonl")
)


def read(path: Path) -> Transcript:
    return read_transcript(str(path))


def shape(transcript: Transcript, view: str = "messages") -> list[tuple[str, tuple[str, ...]]]:
    messages = getattr(ClaudeCodeDialect(), view)(transcript)
    return [(m.role, tuple(b.kind for b in m.blocks)) for m in messages]


def context_lines(transcript: Transcript) -> list[int]:
    return [transcript.records[m.index].lineno for m in ClaudeCodeDialect().context(transcript)]


def usage_rows(transcript: Transcript) -> list[tuple[int, int, str | None]]:
    return [
        (transcript.records[u.index].lineno, u.context, u.key)
        for u in ClaudeCodeDialect().usage(transcript)
    ]


def findings(transcript: Transcript) -> list[tuple[int, str, str, str]]:
    return [
        (f.line, f.code, f.message, f.severity) for f in ClaudeCodeDialect().validate(transcript)
    ]


def write_jsonl(tmp_path: Path, records: list[dict[str, Any]]) -> Path:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


# ---------------------------------------------------------------------------------------------
# Every fixture


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda p: p.name)
def test_fixture_is_detected_and_round_trips(path: Path) -> None:
    transcript = read(path)
    assert transcript.format == "claude-code"
    assert to_bytes(transcript) == path.read_bytes()


@pytest.mark.parametrize(
    "path", sorted(TRANSCRIPTS.glob("claude-code-*.jsonl")), ids=lambda p: p.name
)
def test_valid_fixtures_have_no_errors(path: Path) -> None:
    assert validate(read(path)).errors == ()


# ---------------------------------------------------------------------------------------------
# The realistic session


def test_session_messages_context_and_usage() -> None:
    t = read(TRANSCRIPTS / "claude-code-session.jsonl")
    assert shape(t) == [
        ("user", ("text",)),
        ("user", ("other",)),  # skill_listing attachment
        ("assistant", ("thinking",)),
        ("assistant", ("tool_call",)),  # Read   } one message.id,
        ("user", ("tool_result",)),  #          } results interleaved
        ("assistant", ("tool_call",)),  # Bash   }
        ("user", ("tool_result",)),
        ("assistant", ("text",)),
        ("assistant", ("tool_call",)),  # Edit
        ("user", ("tool_result",)),
        ("assistant", ("tool_call",)),  # Bash
        ("user", ("tool_result",)),
        ("assistant", ("text",)),
    ]
    assert context_lines(t) == list(range(2, 15))
    assert usage_rows(t) == [
        (7, 17246, "msg_01ioDLS4GCA5SnYNCUoKFeoP"),
        (10, 18598, "msg_01ncpToe8hBxoClxvZSuz85z"),
        (12, 19072, "msg_01YKL1x8IMhNvPPe3lEX4D9g"),
        (14, 19491, "msg_01y2nvTdxr30QxSgHndz9Vlp"),
    ]
    usage = DIALECT.usage(t)[0]
    assert (usage.input, usage.output, usage.cached) == (3, 388, 12034)
    assert DIALECT.compactions(t) == []
    assert DIALECT.model(t) == "claude-opus-4-6"
    assert findings(t) == []


def test_session_blocks() -> None:
    t = read(TRANSCRIPTS / "claude-code-session.jsonl")
    messages = ClaudeCodeDialect().messages(t)
    attachment = messages[1].blocks[0]
    assert (attachment.type, attachment.name, attachment.path) == (
        "attachment",
        "skill_listing",
        ("attachment",),
    )
    assert "release-notes" in attachment.text
    thinking = messages[2].blocks[0]
    assert thinking.kind == "thinking" and thinking.text.startswith("Read the parser first")
    read_call = messages[3].blocks[0]
    assert read_call.name == "Read"
    assert read_call.call_id == "toolu_010tTDY6Mo1NjN0Gaq92RBH4"
    assert read_call.arguments == {"file_path": "/home/dana/src/almanac/src/almanac/dates.py"}
    assert read_call.json and json.loads(read_call.text) == read_call.arguments
    assert read_call.path == ("message", "content", 0)
    read_result = messages[4].blocks[0]
    assert read_result.kind == "tool_result"
    assert read_result.call_id == read_call.call_id
    assert read_result.name == "Read"  # looked up from the call
    assert read_result.text.startswith("     1\tfrom datetime import date")
    assert not read_result.is_error and not read_result.json
    units = [m.unit for m in messages if m.role == "assistant"]
    assert units[:3] == ["msg_01ioDLS4GCA5SnYNCUoKFeoP"] * 3
    assert [m.id for m in messages[:2]] == [
        "5bd21b6a-ec89-47a6-8a0a-c984f71ab247",
        "49dc9b34-eae3-432d-b8c1-15d69a1f7aa5",
    ]


# ---------------------------------------------------------------------------------------------
# Other fixtures


def test_compacted_context_starts_at_the_summary() -> None:
    t = read(TRANSCRIPTS / "claude-code-compacted.jsonl")
    assert context_lines(t) == [8, 9, 10, 11, 12, 13, 14]
    context = ClaudeCodeDialect().context(t)
    assert [m.summary for m in context] == [True] + [False] * 6
    assert shape(t, "context") == [
        ("user", ("text",)),
        ("user", ("other",)),
        ("assistant", ("tool_call",)),
        ("user", ("tool_result",)),
        ("assistant", ("text",)),
        ("user", ("text",)),
        ("assistant", ("text",)),
    ]
    assert usage_rows(t) == [
        (10, 15613, "msg_018S3u0BMkfSTlc81V6CapAe"),
        (12, 15943, "msg_01Qzy3fKWeticWfOvtPasVyN"),
        (14, 16096, "msg_01pENcQdT93zbmZCoULLFldb"),
    ]
    [compaction] = DIALECT.compactions(t)
    assert (compaction.index, compaction.summary_index, compaction.ours) == (6, 7, False)
    assert compaction.summary.startswith("This session is being continued")
    assert "--json flag" in compaction.summary
    assert len(DIALECT.messages(t)) == 11


def test_sidechain_records_are_messages_but_not_context() -> None:
    t = read(TRANSCRIPTS / "claude-code-sidechain.jsonl")
    assert shape(t) == [
        ("user", ("text",)),
        ("assistant", ("tool_call",)),
        ("user", ("text",)),  # sidechain: the subagent's prompt
        ("assistant", ("tool_call",)),
        ("user", ("tool_result",)),
        ("assistant", ("text",)),
        ("user", ("tool_result",)),  # main: the Task result
        ("assistant", ("text",)),
    ]
    assert context_lines(t) == [1, 2, 7, 8]
    assert usage_rows(t) == [
        (2, 16441, "msg_01PAQUobq5GXYnh2cq7iP8VI"),
        (8, 16680, "msg_01NTppH2bqpGELgIW9ZhKGPY"),
    ]
    assert DIALECT.model(t) == "claude-sonnet-4-20250514"


def test_images_in_user_content_and_in_a_tool_result() -> None:
    t = read(TRANSCRIPTS / "claude-code-image.jsonl")
    assert shape(t) == [
        ("user", ("text", "image")),
        ("assistant", ("tool_call",)),
        ("user", ("tool_result",)),
        ("assistant", ("text",)),
    ]
    messages = ClaudeCodeDialect().messages(t)
    image = messages[0].blocks[1]
    assert (image.type, image.path) == ("image", ("message", "content", 1))
    result = messages[2].blocks[0]
    assert (result.images, result.text, result.name) == ((ImageSize(1, 1),), "", "Read")
    assert image.images == (ImageSize(1, 1),)
    assert usage_rows(t) == [
        (2, 16730, "msg_01z61ufgrU5Y0BgblgBC9wWk"),
        (4, 18475, "msg_01RGGWJCX29M4T0UR76WMzbo"),
    ]


def test_unknown_record_types_keys_and_blocks_pass_through() -> None:
    t = read(TRANSCRIPTS / "claude-code-unknown-type.jsonl")
    assert shape(t) == [
        ("user", ("text",)),
        ("assistant", ("text",)),
        ("assistant", ("other",)),
    ]
    other = ClaudeCodeDialect().messages(t)[2].blocks[0]
    assert other.type == "source_note" and other.json
    assert context_lines(t) == [3, 4, 5]
    assert usage_rows(t) == [(5, 16627, "msg_013QzqrdPbYfk6lvrLzZxTF7")]
    assert findings(t) == []


def test_no_final_newline() -> None:
    t = read(TRANSCRIPTS / "claude-code-no-final-newline.jsonl")
    assert not (TRANSCRIPTS / "claude-code-no-final-newline.jsonl").read_bytes().endswith(b"\n")
    assert shape(t, "context") == [("user", ("text",)), ("assistant", ("text",))]
    assert usage_rows(t) == [(2, 15853, "msg_01gvBfJ1smLQL6lO5QYym4VD")]


def test_unicode_text_is_kept() -> None:
    t = read(TRANSCRIPTS / "claude-code-unicode.jsonl")
    messages = ClaudeCodeDialect().messages(t)
    assert messages[0].text == "請閱讀 README.md，把「安裝」一節翻成英文 🙏"
    assert "執行 `pip install almanac` 即可" in messages[2].blocks[0].text
    assert messages[3].text.endswith("✅")
    assert usage_rows(t) == [
        (2, 26191, "msg_01ZrgwJ7VT2e4HnR6tchHyfS"),
        (4, 26349, "msg_01ptCYzCtwYRSeph6otcmg02"),
    ]


def test_interrupted_call_is_a_warning_and_progress_records_are_bridged() -> None:
    t = read(TRANSCRIPTS / "claude-code-interrupted.jsonl")
    # line 8's parent is a progress record (line 7): the chain must bridge over it
    assert context_lines(t) == [3, 4, 6, 8, 9]
    assert shape(t, "context") == [
        ("user", ("text",)),
        ("assistant", ("tool_call",)),
        ("user", ("tool_result",)),
        ("assistant", ("text",)),
        ("assistant", ("tool_call",)),
    ]
    # the streamed records of one response raise output_tokens: the last one counts
    assert usage_rows(t) == [
        (4, 12829, "msg_010H4imM2b6cyxDXHxae4hbW"),
        (9, 13617, "msg_01u0rYRwaU4T8kE6DJkoYhac"),
    ]
    assert findings(t) == [
        (
            9,
            "call-unanswered",
            "tool_use toolu_01xDk73sJl6B04VkHaMiM8hF (Bash) has no tool_result: its branch ends "
            "there (Claude Code adds a placeholder result)",
            "warning",
        )
    ]
    report = validate(t)
    assert report.ok and len(report.warnings) == 1


def test_preserved_segment_is_spliced_after_the_summary() -> None:
    t = read(TRANSCRIPTS / "claude-code-preserved-segment.jsonl")
    # summary (line 7), then the kept head..tail that sit before the boundary, then the rest
    assert context_lines(t) == [7, 4, 5, 8, 9]
    assert ClaudeCodeDialect().context(t)[0].summary
    # the kept assistant record's usage is stale (Claude Code zeroes it on load)
    assert usage_rows(t) == [(9, 14363, "msg_014UbMtz7bSqRFQsSl868as4")]
    assert [c.index for c in DIALECT.compactions(t)] == [5]
    assert findings(t) == []


# ---------------------------------------------------------------------------------------------
# Invalid fixtures: exactly the planted error


INVALID_FINDINGS = {
    "bad-shape": (
        2,
        "assistant record 977d4a64-bc42-4d68-bf22-aa70f3e026a3: parentUuid is not the first key "
        "(found 'uuid')",
    ),
    "broken-chain": (
        3,
        "parentUuid 5d1e2f8a-7b3c-4e9d-a6f1-0c2b8e4d7a93 of user record "
        "f668e573-bf7c-4044-9255-0b478c48979f is not in the file",
    ),
    "call-unanswered": (
        2,
        "tool_use toolu_01ZulRvLF92yvPhHGJRgyQ5L (Bash) has no tool_result, and the conversation "
        "goes on with a user prompt on line 3",
    ),
    "duplicate-id": (
        3,
        "duplicate uuid '04be0703-9214-4f2e-aee0-54d702bd1980' (first on line 2)",
    ),
    "orphan-result": (
        3,
        "tool_result for toolu_01GhostCallNotInThisFile0 has no tool_use in the file",
    ),
    "result-not-adjacent": (
        4,
        "tool_result for toolu_01MqfCPPG24rZN1vhuz5Eg0T has parentUuid "
        "93526a72-2491-4f81-9b14-45a09dab9747, not da2d102c-3192-4ad0-a384-0b93fafb97bc "
        "(the assistant record holding the tool_use)",
    ),
    "summary-parent": (
        3,
        "compact summary ebee0186-463d-446f-8412-09677c7d6045 has parent "
        "94c46668-0283-4f3d-8b71-73dc7adc2230, not a compact_boundary",
    ),
}


@pytest.mark.parametrize("code", sorted(INVALID_FINDINGS))
def test_invalid_fixture_has_exactly_its_error(code: str) -> None:
    t = read(INVALID / f"claude-code-{code}.jsonl")
    line, message = INVALID_FINDINGS[code]
    assert findings(t) == [(line, code, message, "error")]
    report = validate(t)
    assert [(f.line, f.code, f.message) for f in report.errors] == [(line, code, message)]
    assert report.warnings == ()


def test_every_invalid_fixture_is_tested() -> None:
    names = {p.name for p in INVALID.glob("claude-code-*.jsonl")}
    assert names == {f"claude-code-{code}.jsonl" for code in INVALID_FINDINGS}


def test_broken_chain_cuts_the_context() -> None:
    t = read(INVALID / "claude-code-broken-chain.jsonl")
    assert context_lines(t) == [3, 4]


# ---------------------------------------------------------------------------------------------
# Shapes built here


def _envelope(uuid: str, parent: str | None, kind: str, ts: str, **rest: Any) -> dict[str, Any]:
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "type": kind,
        **rest,
        "uuid": uuid,
        "timestamp": ts,
        "sessionId": "s-1",
    }


def _assistant(
    uuid: str, parent: str, msg_id: str, block: dict[str, Any], ts: str
) -> dict[str, Any]:
    usage = {
        "input_tokens": 1,
        "cache_creation_input_tokens": 10,
        "cache_read_input_tokens": 100,
        "output_tokens": 5,
    }
    message = {"id": msg_id, "model": "m", "role": "assistant", "content": [block], "usage": usage}
    return _envelope(uuid, parent, "assistant", ts, message=message)


def _result(uuid: str, parent: str, call: str, ts: str) -> dict[str, Any]:
    content = [{"type": "tool_result", "tool_use_id": call, "content": "ok"}]
    return _envelope(uuid, parent, "user", ts, message={"role": "user", "content": content})


def test_older_dag_shape_recovers_orphaned_parallel_results(tmp_path: Path) -> None:
    """Sibling tool_use records chained, each result hanging off its own call (FORMATS §1.4)."""
    call_a = {"type": "tool_use", "id": "toolu_A", "name": "Read", "input": {"file_path": "a"}}
    call_b = {"type": "tool_use", "id": "toolu_B", "name": "Read", "input": {"file_path": "b"}}
    records = [
        _envelope(
            "u1",
            None,
            "user",
            "2026-01-01T00:00:01.000Z",
            message={"role": "user", "content": "read a and b"},
        ),
        _assistant("a1", "u1", "msg_1", call_a, "2026-01-01T00:00:02.000Z"),
        _assistant("a2", "a1", "msg_1", call_b, "2026-01-01T00:00:02.100Z"),
        _result("r1", "a1", "toolu_A", "2026-01-01T00:00:03.000Z"),
        _result("r2", "a2", "toolu_B", "2026-01-01T00:00:03.100Z"),
        _assistant(
            "a3", "r2", "msg_2", {"type": "text", "text": "done"}, "2026-01-01T00:00:04.000Z"
        ),
    ]
    t = read(write_jsonl(tmp_path, records))
    # the parent walk from a3 misses r1; it comes back after the group, before r2
    assert [m.id for m in ClaudeCodeDialect().context(t)] == ["u1", "a1", "a2", "r1", "r2", "a3"]
    assert [u.key for u in ClaudeCodeDialect().usage(t)] == ["msg_1", "msg_2"]
    assert findings(t) == []


def test_results_chained_after_their_parallel_calls_are_valid_without_a_source(
    tmp_path: Path,
) -> None:
    """Claude Code 2.0 wrote every call of a response, then the results one after another, each
    hanging off the one before, with no sourceToolAssistantUUID (a real 2.0.69 session)."""
    call_a = {"type": "tool_use", "id": "toolu_A", "name": "Read", "input": {"file_path": "a"}}
    call_b = {"type": "tool_use", "id": "toolu_B", "name": "Read", "input": {"file_path": "b"}}
    prompt = {"role": "user", "content": "read a and b"}
    records = [
        _envelope("u1", None, "user", "2026-01-01T00:00:01.000Z", message=prompt),
        _assistant("a1", "u1", "msg_1", call_a, "2026-01-01T00:00:02.000Z"),
        _assistant("a2", "a1", "msg_1", call_b, "2026-01-01T00:00:02.100Z"),
        _result("r2", "a2", "toolu_B", "2026-01-01T00:00:03.000Z"),
        _result("r1", "r2", "toolu_A", "2026-01-01T00:00:03.100Z"),
        _assistant("a3", "r1", "msg_2", {"type": "text", "text": "done"}, "2026-01-01T00:00:04Z"),
    ]
    t = read(write_jsonl(tmp_path, records))
    assert [m.id for m in ClaudeCodeDialect().context(t)] == ["u1", "a1", "a2", "r2", "r1", "a3"]
    assert findings(t) == []
    # a result that names its call's record must hang off it, as current versions write
    records[4] = {**records[4], "sourceToolAssistantUUID": "a1"}
    t = read(write_jsonl(tmp_path, records))
    message = "tool_result for toolu_A has parentUuid r2, not a1 (the assistant record holding the tool_use)"
    assert findings(t) == [(5, "result-not-adjacent", message, "error")]
    # and a run of results leads back to the calls of another response: not this call's
    records[4] = _result("r1", "r2", "toolu_A", "2026-01-01T00:00:03.100Z")
    records[1] = _assistant("a1", "u1", "msg_0", call_a, "2026-01-01T00:00:02.000Z")
    t = read(write_jsonl(tmp_path, records))
    assert findings(t) == [(5, "result-not-adjacent", message, "error")]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("a1", []),
        (
            "zz",
            [
                (
                    3,
                    "result-not-adjacent",
                    "tool_result for toolu_A has sourceToolAssistantUUID zz, not a1 "
                    "(the assistant record holding the tool_use)",
                    "error",
                )
            ],
        ),
        (5, []),  # not a string: not a uuid to compare
        (None, []),
    ],
    ids=["its-call", "another-record", "a-number", "null"],
)
def test_a_result_naming_another_record_as_its_source_is_reported(
    tmp_path: Path, source: Any, expected: list[tuple[int, str, str, str]]
) -> None:
    call_a = {"type": "tool_use", "id": "toolu_A", "name": "Read", "input": {"file_path": "a"}}
    prompt = {"role": "user", "content": "read a"}
    result = _result("r1", "a1", "toolu_A", "2026-01-01T00:00:03.000Z")
    records = [
        _envelope("u1", None, "user", "2026-01-01T00:00:01.000Z", message=prompt),
        _assistant("a1", "u1", "msg_1", call_a, "2026-01-01T00:00:02.000Z"),
        {**result, "sourceToolAssistantUUID": source},
    ]
    t = read(write_jsonl(tmp_path, records))
    assert findings(t) == expected


def test_local_command_and_attachments_that_reach_the_model(tmp_path: Path) -> None:
    records = [
        _envelope(
            "u1",
            None,
            "user",
            "2026-01-01T00:00:01.000Z",
            message={"role": "user", "content": "hi"},
        ),
        _envelope(
            "s1",
            "u1",
            "system",
            "2026-01-01T00:00:02.000Z",
            subtype="local_command",
            content="<local-command-stdout>ok</local-command-stdout>",
        ),
        _envelope(
            "t1", "s1", "system", "2026-01-01T00:00:02.500Z", subtype="turn_duration", durationMs=5
        ),
        _envelope(
            "x1",
            "t1",
            "attachment",
            "2026-01-01T00:00:03.000Z",
            attachment={"type": "command_permissions", "allowedTools": []},
        ),
        _envelope(
            "x2",
            "x1",
            "attachment",
            "2026-01-01T00:00:03.100Z",
            attachment={"type": "queued_command", "prompt": "also run tests"},
        ),
        _assistant(
            "a1", "x2", "msg_1", {"type": "text", "text": "sure"}, "2026-01-01T00:00:04.000Z"
        ),
    ]
    t = read(write_jsonl(tmp_path, records))
    dialect = ClaudeCodeDialect()
    assert [(m.id, m.role) for m in dialect.messages(t)] == [
        ("u1", "user"),
        ("s1", "user"),
        ("x2", "user"),
        ("a1", "assistant"),
    ]
    assert [m.id for m in dialect.context(t)] == ["u1", "s1", "x2", "a1"]
    assert dialect.messages(t)[1].blocks[0].path == ("content",)


def test_synthetic_api_error_is_a_message_but_not_context(tmp_path: Path) -> None:
    error = _assistant(
        "a1", "u1", "msg_x", {"type": "text", "text": "API Error: 529"}, "2026-01-01T00:00:02.000Z"
    )
    error["message"]["model"] = "<synthetic>"
    error["message"]["usage"] = {"input_tokens": 0, "output_tokens": 0}
    error["isApiErrorMessage"] = True
    records = [
        _envelope(
            "u1",
            None,
            "user",
            "2026-01-01T00:00:01.000Z",
            message={"role": "user", "content": "hi"},
        ),
        error,
    ]
    t = read(write_jsonl(tmp_path, records))
    dialect = ClaudeCodeDialect()
    assert [m.id for m in dialect.messages(t)] == ["u1", "a1"]
    assert [m.id for m in dialect.context(t)] == ["u1"]
    assert dialect.usage(t) == []
    assert dialect.model(t) is None


def test_wrong_shape_raises_input_error_and_is_a_bad_shape_finding(tmp_path: Path) -> None:
    records = [
        _envelope("u1", None, "user", "2026-01-01T00:00:01.000Z", message="not an object"),
    ]
    path = write_jsonl(tmp_path, records)
    t = read(path)
    with pytest.raises(InputError) as caught:
        ClaudeCodeDialect().messages(t)
    assert str(caught.value) == f"{path}:1: user record: message is a string, not an object"
    assert findings(t) == [
        (1, "bad-shape", "user record: message is a string, not an object", "error")
    ]


def test_interrupt_marker_makes_an_unanswered_call_a_warning(tmp_path: Path) -> None:
    call = {"type": "tool_use", "id": "toolu_A", "name": "Bash", "input": {"command": "sleep 60"}}
    records = [
        _envelope(
            "u1",
            None,
            "user",
            "2026-01-01T00:00:01.000Z",
            message={"role": "user", "content": "wait"},
        ),
        _assistant("a1", "u1", "msg_1", call, "2026-01-01T00:00:02.000Z"),
        _envelope(
            "u2",
            "a1",
            "user",
            "2026-01-01T00:00:03.000Z",
            message={
                "role": "user",
                "content": [{"type": "text", "text": "[Request interrupted by user]"}],
            },
        ),
        _envelope(
            "u3",
            "u2",
            "user",
            "2026-01-01T00:00:04.000Z",
            message={"role": "user", "content": "never mind"},
        ),
    ]
    t = read(write_jsonl(tmp_path, records))
    assert findings(t) == [
        (
            2,
            "call-unanswered",
            "tool_use toolu_A (Bash) has no tool_result: the turn was interrupted "
            "(Claude Code adds a placeholder result)",
            "warning",
        )
    ]


# ---------------------------------------------------------------------------------------------
# Detection


def test_sniff_scores() -> None:
    assert ClaudeCodeDialect.sniff([{"type": "mode", "mode": "normal", "sessionId": "s"}]) == 60
    chain = {"parentUuid": None, "type": "user", "uuid": "u", "sessionId": "s"}
    assert ClaudeCodeDialect.sniff([{"type": "queue-operation", "sessionId": "s"}, chain]) == 100
    assert ClaudeCodeDialect.sniff([{"role": "user", "content": "hi"}]) == 0
    assert ClaudeCodeDialect.sniff([{"type": "session_meta", "payload": {}}]) == 0
    assert detect_format([chain], "x") == "claude-code"


# ---------------------------------------------------------------------------------------------
# Writing


def test_clear_result_clears_the_tool_use_result_copy_too() -> None:
    t = read(TRANSCRIPTS / "claude-code-session.jsonl")
    dialect = get_dialect("claude-code")
    message = dialect.messages(t)[4]
    record = dialect.clear_result(t.records[message.index], message.blocks[0], "[cleared]")
    assert record.changed
    assert record.raw["message"]["content"][0]["content"] == "[cleared]"
    assert record.raw["toolUseResult"] == "[cleared]"
    assert list(record.raw) == list(t.records[message.index].raw)
    assert t.records[message.index].raw["toolUseResult"]["type"] == "text"  # input untouched


def test_prune_boundary_hangs_off_the_leaf_and_keeps_the_context() -> None:
    t = read(TRANSCRIPTS / "claude-code-session.jsonl")
    dialect = get_dialect("claude-code")
    details = {
        "stage": "prune",
        "tokens_before": 900,
        "tokens_after": 400,
        "cleared": [{"id": "toolu_X"}],
    }
    [marker] = dialect.prune_boundary(t, details)
    raw = marker.raw
    assert list(raw)[:10] == [
        "parentUuid",
        "isSidechain",
        "type",
        "subtype",
        "content",
        "isMeta",
        "timestamp",
        "uuid",
        "level",
        "microcompactMetadata",
    ]
    assert raw["parentUuid"] == t.records[13].raw["uuid"]
    assert raw["microcompactMetadata"] == {
        "trigger": "auto",
        "preTokens": 900,
        "tokensSaved": 500,
        "compactedToolIds": ["toolu_X"],
        "clearedAttachmentUUIDs": [],
    }
    assert raw["compactcli"] == details
    assert raw["sessionId"] == t.records[13].raw["sessionId"]
    assert dialect.prune_boundary(t, details)[0].raw == raw  # reproducible
    after = t.evolve(records=(*t.records, marker))
    assert context_lines(after) == context_lines(t)
    assert ClaudeCodeDialect().compactions(after) == []
    assert findings(after) == []


# records appended to a transcript whose chain is known: the chain made over the uuid map
# carried over from the transcript before is the chain of the whole file
_KINDS = ("system", "attachment", "user", "assistant", "progress", "summary", None)


@st.composite
def _appended(draw: st.DrawFn, uuids: list[str], leaf: str | None) -> list[Record]:
    out: list[Record] = []
    names = [*uuids, "new-1", "new-2", "new-3"]
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(_KINDS))
        if kind is None:
            out.append(Record(raw=None, line=b""))
            continue
        raw: dict[str, Any] = {"type": kind, "timestamp": "2030-01-01T00:00:00.000Z"}
        parent = draw(st.sampled_from([leaf, None, *names]))
        raw["parentUuid"] = parent
        uuid = draw(st.sampled_from([None, *names]))
        if uuid is not None:
            raw["uuid"] = uuid
        if kind == "system" and draw(st.booleans()):
            raw["subtype"] = "compact_boundary"
        if kind in ("user", "assistant"):
            raw["message"] = {"role": kind, "content": "appended"}
        out.append(Record(raw=raw))
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_records_appended_after_the_chain_give_the_chain_of_the_whole_file(
    data: st.DataObject,
) -> None:
    path = data.draw(st.sampled_from(sorted(TRANSCRIPTS.glob("claude-code-*.jsonl"))))
    before = read(path)
    chain = _chain_of(before, DIALECT._state(before))
    uuids = [r.raw["uuid"] for r in before.records if isinstance(r.get("uuid"), str)]
    leaf = before.records[chain.records[-1]].raw["uuid"] if chain.records else None
    after = before.evolve(records=(*before.records, *data.draw(_appended(uuids, leaf))))
    try:
        expected = _build_chain(_skeletons(after))
    except TypeError:  # a record the loader's map cannot take
        return
    assert _chain_of(after, DIALECT._state(after)) == expected


def test_a_prune_marker_keeps_the_chain_it_hangs_off() -> None:
    t = read(TRANSCRIPTS / "claude-code-preserved-segment.jsonl")
    chain = _chain_of(t, DIALECT._state(t))
    [marker] = DIALECT.prune_boundary(t, {"stage": "prune"})
    after = t.evolve(records=(*t.records, marker))
    assert _chain_of(after, DIALECT._state(after)) == chain == _build_chain(_skeletons(after))


# ---------------------------------------------------------------------------------------------
# Real transcripts

CORPUS_FILES = [
    "claude-code-fundwise.jsonl",
    "claude-code-hunch.jsonl",
    "claude-code-octora-apierror.jsonl",
    "claude-code-pv-case-review.jsonl",
    "claude-code-raze-progress.jsonl",
    "claude-code-will-it-rain.jsonl",
]

# file: (messages, context messages, usage anchors, last usage context)
CORPUS_FACTS = {
    "claude-code-fundwise.jsonl": (230, 230, 71, 138382),
    "claude-code-hunch.jsonl": (10, 10, 2, 29927),
    "claude-code-octora-apierror.jsonl": (5, 4, 0, None),
    "claude-code-pv-case-review.jsonl": (943, 53, 9, 64200),
    "claude-code-raze-progress.jsonl": (12, 12, 3, 40045),
    "claude-code-will-it-rain.jsonl": (368, 1, 0, None),
}


@needs_corpus
@pytest.mark.parametrize("name", CORPUS_FILES)
def test_corpus_file(name: str) -> None:
    path = CORPUS / name
    t = read(path)
    assert t.format == "claude-code"
    assert to_bytes(t) == path.read_bytes()
    assert validate(t).errors == ()
    dialect = ClaudeCodeDialect()
    usage = dialect.usage(t)
    facts = (
        len(dialect.messages(t)),
        len(dialect.context(t)),
        len(usage),
        usage[-1].context if usage else None,
    )
    assert facts == CORPUS_FACTS[name]


@needs_corpus
def test_corpus_preserved_segments() -> None:
    t = read(CORPUS / "claude-code-pv-case-review.jsonl")
    dialect = ClaudeCodeDialect()
    assert [(c.index + 1, (c.summary_index or 0) + 1) for c in dialect.compactions(t)] == [
        (330, 331),
        (866, 867),
        (1303, 1304),
    ]
    lines = context_lines(t)
    # the summary after the last boundary, then the 19 preserved uuids' records that sit before
    # the boundary (the message-bearing ones), then what followed the compaction
    assert lines[:3] == [1304, 1270, 1277]
    assert all(line > 1303 for line in lines[lines.index(1305) :])
    assert dialect.context(t)[0].summary
    assert min(lines[1:]) == 1270
    assert validate(t).warnings == ()


@needs_corpus
def test_corpus_will_it_rain_resumes_at_the_summary() -> None:
    t = read(CORPUS / "claude-code-will-it-rain.jsonl")
    dialect = ClaudeCodeDialect()
    assert context_lines(t) == [713]  # line 714 is a <synthetic> rate-limit message
    [compaction] = dialect.compactions(t)
    assert (compaction.index + 1, (compaction.summary_index or 0) + 1) == (712, 713)
    assert dialect.model(t) == "claude-opus-4-5-20251101"


@needs_corpus
def test_corpus_before_the_boundary_bridges_312_progress_records(tmp_path: Path) -> None:
    lines = (CORPUS / "claude-code-will-it-rain.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "before-compaction.jsonl"
    path.write_bytes(b"".join(lines[:711]))
    t = read(path)
    dialect = ClaudeCodeDialect()
    assert len(dialect.context(t)) == len(dialect.messages(t)) == 366
    usage = dialect.usage(t)
    # the boundary record says preTokens 167371; the last request before it measured this
    assert (len(usage), usage[-1].context) == (153, 167347)


@needs_corpus
def test_corpus_unanswered_call_at_the_end_is_a_warning() -> None:
    t = read(CORPUS / "claude-code-raze-progress.jsonl")
    [warning] = validate(t).warnings
    assert (warning.line, warning.code) == (24, "call-unanswered")


@needs_corpus
@pytest.mark.parametrize(
    "name",
    [
        "codex-fundwise.jsonl",
        "codex-raze.jsonl",
        "codex-scout-applypatch.jsonl",
        "codex-xeus-websearch.jsonl",
        "pi-before-compaction.jsonl",
    ],
)
def test_other_formats_score_zero(name: str) -> None:
    objects = []
    with open(CORPUS / name, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                objects.append(json.loads(line))
            if len(objects) == 64:
                break
    assert ClaudeCodeDialect.sniff(objects) == 0


# --- a subagent's own transcript (subagents/agent-<id>.jsonl: every record a sidechain) ------


def test_a_subagent_transcript_has_the_context_of_its_own_chain() -> None:
    agent = read_transcript(str(TRANSCRIPTS / "claude-code-subagent.jsonl"))
    main = read_transcript(str(TRANSCRIPTS / "claude-code-summarize-session.jsonl"))
    assert all(r.raw.get("isSidechain") is True for r in agent.records)
    assert len(DIALECT.context(agent)) == 21
    assert [(m.index, m.role, m.text) for m in DIALECT.context(agent)] == [
        (m.index - 1, m.role, m.text) for m in DIALECT.context(main)
    ]  # the same messages (the main file has one metadata line more)
    assert DIALECT.usage(agent) == [
        dataclasses.replace(u, index=u.index - 1) for u in DIALECT.usage(main)
    ]


def test_a_subagent_transcript_is_compacted_as_a_sidechain(tmp_path: Path) -> None:
    from compactcli.stages.compact import CompactOptions, compact
    from compactcli.stages.prune import PruneOptions
    from compactcli.stages.summarize import SummarizeOptions
    from compactcli.summarizers import get_summarizer
    from compactcli.tokens import get_counter

    agent = read_transcript(str(TRANSCRIPTS / "claude-code-subagent.jsonl"))
    options = CompactOptions(
        force=True,
        prune=PruneOptions(keep_recent=1, min_chars=50),
        summarize=SummarizeOptions(keep_recent_tokens=500),
    )
    counter = get_counter("heuristic", model=DIALECT.model(agent), format="claude-code")
    after = compact(agent, options, summarizer=get_summarizer("extractive"), counter=counter)
    added = after.records[len(agent.records) :]
    assert [(r.raw["type"], r.raw.get("subtype")) for r in added] == [
        ("system", "microcompact_boundary"),
        ("system", "compact_boundary"),
        ("user", None),
    ]
    assert all(r.raw["isSidechain"] is True and r.raw["agentId"] == "a4f2c9e" for r in added)
    assert validate(after).ok
    context = DIALECT.context(after)
    assert context[0].summary and len(context) < len(DIALECT.context(agent))


# ---- orphan recovery against the rule it implements


def _reference_recover_orphans(
    skeletons: list[Any], index: dict[str, int], parent: dict[str, str | None], chain: list[str]
) -> list[str]:
    """`recoverOrphanedParallelToolResults` as Claude Code states it: for each response on the
    chain (first seen), every record of the map with its message.id and every tool result whose
    parent is one of those (each in map order), less what is already placed, sorted by
    timestamp and inserted after the response's last record on the chain."""

    def at(uuid: str) -> Any:
        return skeletons[index[uuid]]

    def stamp(uuid: str) -> str:
        value = at(uuid)[6]
        return value if isinstance(value, str) else ""

    seen = set(chain)
    anchors = {at(u)[7]: u for u in chain if at(u)[0] == "assistant" and at(u)[7]}
    inserts: dict[str, list[str]] = {}
    done: set[str] = set()
    for uuid in chain:
        message_id = at(uuid)[7]
        if at(uuid)[0] != "assistant" or not message_id or message_id in done:
            continue
        done.add(message_id)
        group = [u for u in index if at(u)[0] == "assistant" and at(u)[7] == message_id]
        siblings = [s for s in group if s not in seen]
        results = [
            r
            for member in group
            for r in index
            if at(r)[0] == "user" and at(r)[8] and parent[r] == member and r not in seen
        ]
        if siblings or results:
            recovered = sorted(siblings, key=stamp) + sorted(results, key=stamp)
            seen.update(recovered)
            inserts[anchors[message_id]] = recovered
    return [u for uuid in chain for u in (uuid, *inserts.get(uuid, ()))]


@st.composite
def _orphan_cases(draw: st.DrawFn) -> tuple[list[Any], dict[str, int], dict[str, Any], list[str]]:
    """A uuid map of assistant, user (with and without results) and system records, message
    ids and timestamps from small pools (so responses span records and stamps tie), parents
    among the records, and a chain of some of them in any order."""
    count = draw(st.integers(1, 24))
    skeletons: list[Any] = []
    for i in range(count):
        kind = draw(st.sampled_from(["assistant", "assistant", "user", "user", "system"]))
        message_id = draw(st.sampled_from([None, "", "m1", "m2", "m3"]))
        stamp = draw(st.sampled_from([None, 3, "t1", "t2", "t3"]))
        results = kind == "user" and draw(st.booleans())
        skeletons.append((kind, f"u{i}", None, False, None, False, stamp, message_id, results))
    index = {f"u{i}": i for i in range(count)}
    uuids = list(index)
    parent = {u: draw(st.sampled_from([None, *uuids])) for u in uuids}
    chain = draw(st.permutations(uuids).map(lambda p: p[: draw(st.integers(0, len(p)))]))
    return skeletons, index, parent, list(chain)


def _skeleton_of(kind: str, uuid: str, message_id: str | None, stamp: str | None) -> Any:
    return (kind, uuid, None, False, None, False, stamp, message_id, kind == "user")


# two records of one response, each answered off the chain, the later one's answer first in
# the file: the answers keep their parents' order when their timestamps tie
_PARENTS_ORDER = (
    [
        _skeleton_of("assistant", "a0", "m1", "t1"),
        _skeleton_of("assistant", "a1", "m1", "t1"),
        _skeleton_of("user", "r1", None, "t2"),
        _skeleton_of("user", "r0", None, "t2"),
    ],
    {"a0": 0, "a1": 1, "r1": 2, "r0": 3},
    {"a0": None, "a1": "a0", "r1": "a1", "r0": "a0"},
    ["a0", "a1"],
)


@settings(max_examples=600, deadline=None)
@given(case=_orphan_cases())
@example(case=_PARENTS_ORDER)
def test_orphan_recovery_follows_the_rule(
    case: tuple[list[Any], dict[str, int], dict[str, Any], list[str]],
) -> None:
    skeletons, index, parent, chain = case
    assert _recovered(skeletons, index, parent, chain) == _reference_recover_orphans(
        skeletons, index, parent, chain
    )


def _recovered(
    skeletons: list[Any], index: dict[str, int], parent: dict[str, str | None], chain: list[str]
) -> list[str]:
    """`ChainNodes`' recovery over the case: its records mapped in order, every one live."""
    nodes = ChainNodes()
    codes = {"user": USER, "assistant": ASSISTANT}
    for uuid, i in index.items():
        kind, _, _, _, _, _, stamp, message_id, results = skeletons[i]
        unit = message_id if kind == "assistant" else None
        flags = RESULTS if results else 0
        nodes.add(i, uuid, parent[uuid], codes.get(kind, OTHER), flags, stamp, unit, None)
    walk = [nodes.node[uuid] for uuid in chain]
    on_chain = bytearray(len(index))
    for node in walk:
        on_chain[node] = 1
    alive = bytearray(b"\x01") * len(index)
    recovered = nodes._recover(alive, nodes.resolved_parents(), walk, on_chain)
    uuids = list(nodes.node)
    return [uuids[node] for node in recovered]


# --------------------------------------------------------------------------------------------
# Messages left unmade (before the last compact boundary) are the messages made at once

_ODD = st.sampled_from([None, 3, 2.5, True, [], {}, "x"])
_IDS = st.sampled_from(["t1", "t2", "t3", ""])
_tool_result_parts = st.lists(
    st.one_of(
        st.text(max_size=3),
        st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=3)}),
        st.fixed_dictionaries({"type": st.sampled_from(["image", "other"])}),
        _ODD,
    ),
    max_size=3,
)
_blocks = st.one_of(
    st.text(max_size=3),
    _ODD,
    st.fixed_dictionaries({"type": st.just("text")}, optional={"text": st.text(max_size=3) | _ODD}),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["thinking", "redacted_thinking", "image", "server_tool_use"])}
    ),
    st.fixed_dictionaries(
        {"type": st.just("tool_use")},
        optional={
            "id": _IDS | _ODD,
            "name": st.sampled_from(["Bash", "Read"]) | _ODD,
            "input": st.just({"command": "ls"}),
        },
    ),
    st.fixed_dictionaries(
        {"type": st.just("tool_result")},
        optional={
            "tool_use_id": _IDS | _ODD,
            "content": st.text(max_size=3) | _tool_result_parts | _ODD,
            "is_error": st.booleans(),
        },
    ),
)
_content = st.text(max_size=3) | st.lists(_blocks, max_size=4) | _ODD
_raw_records = st.one_of(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["user", "assistant"])},
        optional={
            "message": st.fixed_dictionaries(
                {},
                optional={
                    "content": _content,
                    "model": st.sampled_from(["m", "<synthetic>"]) | _ODD,
                },
            )
            | _ODD,
            "uuid": st.just("u"),
        },
    ),
    st.fixed_dictionaries(
        {"type": st.just("attachment")},
        optional={
            "attachment": st.fixed_dictionaries(
                {"type": st.sampled_from(["queued_command", "todo_reminder", "hook_success"])}
            )
            | _ODD
        },
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("system"),
            "subtype": st.sampled_from(["local_command", "compact_boundary"]),
        },
        optional={"content": _content},
    ),
    st.fixed_dictionaries({"type": st.sampled_from(["summary", "file-history-snapshot"]) | _ODD}),
)


def _made(raw: dict[str, Any], names: dict[str, str], index: int = 7) -> Any:
    try:
        return _record_message(index, raw, names)
    except _ShapeError as error:
        return str(error)


def _lite(raw: dict[str, Any], names: dict[str, str]) -> Any:
    try:
        return _record_lite(raw, names)
    except _ShapeError as error:
        return str(error)


@settings(max_examples=400, deadline=None)
@given(st.lists(_raw_records, min_size=1, max_size=6))
def test_an_unmade_message_reads_and_makes_as_the_message_made_at_once(
    raws: list[dict[str, Any]],
) -> None:
    """The same error, the same calls noted, and the same message once made, record by record
    (the tool names a result reads depend on the records before it)."""
    names_made: dict[str, str] = {}
    names_lite: dict[str, str] = {}
    for raw in raws:
        made = _made(raw, names_made)
        lite = _lite(raw, names_lite)
        assert names_lite == names_made
        if isinstance(made, str) or made is None:
            assert lite == made
            continue
        assert lite is not None and not isinstance(lite, str)
        assert (lite.role, lite.model) == (made.role, made.model)
        assert lite.calls == [(b.call_id, b.name) for b in made.blocks if b.kind == "tool_call"]
        assert lite.results == [(b.call_id, b.name) for b in made.blocks if b.kind == "tool_result"]
        assert lite.make(7, raw) == made


def _with_boundary_at_the_end(path: Path) -> Transcript:
    """`path`'s records, then a compact boundary: every message before it is left unmade."""
    transcript = read_transcript(str(path))
    boundary = {"type": "system", "subtype": "compact_boundary", "parentUuid": None, "uuid": "b"}
    records = (*transcript.records, Record(raw=boundary, lineno=len(transcript.records) + 1))
    return transcript.evolve(records=records)


@pytest.mark.parametrize(
    "path",
    [p for p in sorted(TRANSCRIPTS.glob("claude-code-*.jsonl"))]
    + [p for p in sorted(INVALID.glob("claude-code-*.jsonl"))],
    ids=lambda p: p.name,
)
def test_messages_left_unmade_read_as_messages_made_at_once(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """messages(), the model, the checks and the context of a file whose messages were left
    unmade (all before a boundary at its end) are those made one record after the other."""
    dialect = ClaudeCodeDialect()
    lazy = _with_boundary_at_the_end(path)
    assert dialect._state(lazy).messages and all(
        type(m).__name__ == "_Lite" for m in dialect._state(lazy).messages.values()
    )
    findings = [f.to_dict() for f in dialect.validate(lazy)]
    with monkeypatch.context() as patch:
        patch.setattr(claude_code_state, "_last_boundary", lambda records, start: start)
        eager = dataclasses.replace(lazy)  # a new transcript, no views: its state made anew
        made = dialect._state(eager).messages.values()
        assert all(type(m).__name__ == "Message" for m in made)
        assert findings == [f.to_dict() for f in dialect.validate(eager)]
    names: dict[str, str] = {}
    expected = []
    for i, record in enumerate(lazy.records):
        message = _made(record.raw, names, i) if isinstance(record.raw, dict) else None
        if isinstance(message, str):
            assert any(f["code"] == "bad-shape" for f in findings)
            with pytest.raises(InputError):
                dialect.model(lazy)
            return
        expected.append(message)
    model = dialect.model(lazy)
    assert dialect.messages(lazy) == [m for m in expected if m is not None]
    assert model == next(
        (m.model for m in reversed(expected) if m and m.model and not m.model.startswith("<")),
        None,
    )


def test_text_claude_code_put_in_a_user_record_is_not_what_the_person_typed() -> None:
    """A user record marked `isMeta` (a built-in skill's body after "Launching skill: ...", a
    command's expansion, "Continue from where you left off.") holds text the agent put there:
    its text blocks are named `meta`, and the facts read no user message, no ask, from them."""

    def user(uuid: str, parent: str | None, content: Any, **extra: Any) -> dict[str, Any]:
        message = {"role": "user", "content": content}
        return {"type": "user", "uuid": uuid, "parentUuid": parent, "message": message, **extra}

    skill = "# Update Config Skill\n\nModify Claude Code configuration by updating settings."
    records = [
        user("u1", None, "Turn the LED on when a Teams message arrives."),
        {
            "type": "assistant",
            "uuid": "a1",
            "parentUuid": "u1",
            "message": {
                "id": "m1",
                "role": "assistant",
                "model": "claude-sonnet-4-6",
                "content": [{"type": "tool_use", "id": "t1", "name": "Skill", "input": {}}],
            },
        },
        user("u2", "a1", [{"type": "tool_result", "tool_use_id": "t1", "content": "Launching"}]),
        user("u3", "u2", [{"type": "text", "text": skill}], isMeta=True),
    ]
    transcript = Transcript(records=tuple(Record(raw=r) for r in records), format="claude-code")
    messages = ClaudeCodeDialect().messages(transcript)
    assert [b.name for b in messages[-1].blocks] == ["meta"]
    assert [b.name for b in messages[0].blocks] == [None]
    facts = extract_facts(messages)
    assert facts.user_messages == ("Turn the LED on when a Teams message arrives.",)
    assert not any("Update Config" in ask for ask in facts.pending)
