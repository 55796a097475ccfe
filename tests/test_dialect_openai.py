"""The openai dialect: detection, views, usage and validation on fixtures and SWE-agent histories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compactcli.errors import InputError
from compactcli.formats import get_dialect
from compactcli.formats.detect import detect_format
from compactcli.formats.openai.dialect import OpenAIDialect
from compactcli.images import ImageSize
from compactcli.loading import read_transcript, to_bytes
from compactcli.transcript import Block, Message, Transcript

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus not present")

TRANSCRIPTS = sorted(
    p.name
    for p in (FIXTURES / "transcripts").glob("openai-*.jsonl")
    if not p.name.startswith("openai-responses-")  # tests/test_dialect_openai_responses.py
)
INVALID = sorted(p.name for p in (FIXTURES / "invalid").glob("openai-*.jsonl"))
OPENAI = OpenAIDialect()


def load(name: str, folder: str = "transcripts") -> Transcript:
    return read_transcript(str(FIXTURES / folder / name))


def shape(t: Transcript, messages: list[Message]) -> list[tuple[int, str, list[str]]]:
    """(input line, role, block kinds) of each message."""
    return [(t.line_of(m.index), m.role, [b.kind for b in m.blocks]) for m in messages]


def findings(t: Transcript) -> list[tuple[int, str, str, str]]:
    found = sorted(OPENAI.validate(t), key=lambda f: (f.line, f.code))
    return [(f.line, f.code, f.severity, f.message) for f in found]


def test_fixture_set_is_complete() -> None:
    assert TRANSCRIPTS == [
        "openai-hermes.jsonl",
        "openai-image.jsonl",
        "openai-kimi.jsonl",
        "openai-no-final-newline.jsonl",
        "openai-session.jsonl",
        "openai-summarize-session.jsonl",
        "openai-unicode.jsonl",
    ]


@pytest.mark.parametrize("name", TRANSCRIPTS)
def test_fixture_is_detected_and_round_trips(name: str) -> None:
    path = FIXTURES / "transcripts" / name
    t = read_transcript(str(path))
    assert t.format == "openai"
    assert to_bytes(t) == path.read_bytes()


@pytest.mark.parametrize("name", INVALID)
def test_invalid_fixture_is_detected_and_round_trips(name: str) -> None:
    path = FIXTURES / "invalid" / name
    t = read_transcript(str(path))
    assert t.format == "openai"
    assert to_bytes(t) == path.read_bytes()


def test_registry_returns_this_dialect() -> None:
    assert isinstance(get_dialect("openai"), OpenAIDialect)


# ---------------------------------------------------------------------------------- sniffing


@pytest.mark.parametrize(
    ("objects", "score"),
    [
        ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}], 50),
        ([{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}], 95),
        ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": None}], 95),
        ([{"role": "session_meta", "model": "m"}, {"role": "user", "content": "hi"}], 95),
        ([{"role": "_checkpoint", "id": 0}, {"role": "user", "content": "hi"}], 95),
        ([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "u"}}]}], 95),
        ([{"role": "tool", "tool_call_ids": ["c1"], "content": "ok"}], 95),
        ([{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "input": {}}]}], 0),
        ([{"type": "session", "id": "x"}], 0),
        ([{"type": "user", "message": {"role": "user", "content": "hi"}, "uuid": "u"}], 0),
        ([{"timestamp": "t", "type": "response_item", "payload": {"role": "user"}}], 0),
        ([{"event": "start", "at": 1}], 0),
        ([{"role": "human", "value": "hi"}], 0),
        ([], 0),
    ],
)
def test_sniff(objects: list[dict[str, object]], score: int) -> None:
    assert OpenAIDialect.sniff(objects) == score


def test_plain_list_reads_as_openai() -> None:
    """A list of plain user/assistant strings fits both plain formats: openai wins."""
    objects = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    assert detect_format(objects, "-") == "openai"
    # Text-block lists, the Messages API's usual shape, lean the other way.
    blocks = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    assert OpenAIDialect.sniff(blocks) == 50
    assert detect_format(blocks, "-") == "anthropic"


# ------------------------------------------------------------------------------------ views


def test_session_messages_context_and_blocks() -> None:
    t = load("openai-session.jsonl")
    every = [
        (1, "system", ["text"]),
        (2, "user", ["text"]),
        (3, "assistant", ["tool_call", "tool_call"]),
        (4, "tool", ["tool_result"]),
        (5, "tool", ["tool_result"]),
        (6, "assistant", ["text", "tool_call"]),
        (7, "tool", ["tool_result"]),
        (8, "assistant", ["text"]),
    ]
    assert shape(t, OPENAI.messages(t)) == every
    assert shape(t, OPENAI.context(t)) == every
    messages = OPENAI.messages(t)
    assert messages[2].blocks[1] == Block(
        "tool_call",
        '{"pattern": "encodeURIComponent", "path": "src"}',
        json=True,
        call_id="call_Wz7cY1dR5pHs",
        name="search",
        arguments={"pattern": "encodeURIComponent", "path": "src"},
        type="function",
        path=("tool_calls", 1),
    )
    assert messages[4].blocks[0] == Block(
        "tool_result", "No matches found.", call_id="call_Wz7cY1dR5pHs", type="tool"
    )
    structured = messages[6].blocks[0]
    assert (structured.json, structured.text) == (
        True,
        '{"ok":true,"path":"src/lib/geo.ts","replacements":1}',
    )
    assert messages[5].blocks[0].path == ("content",)
    assert OPENAI.usage(t) == []
    assert OPENAI.compactions(t) == []
    assert OPENAI.model(t) is None
    assert findings(t) == []


def test_hermes_session_meta_passes_through() -> None:
    t = load("openai-hermes.jsonl")
    messages = OPENAI.messages(t)
    assert shape(t, messages) == [
        (2, "user", ["text"]),
        (3, "assistant", ["thinking", "text", "tool_call"]),
        (4, "tool", ["tool_result"]),
        (5, "assistant", ["text"]),
    ]
    assert messages[1].blocks[0].text.startswith("The user wants disk usage")
    assert messages[1].blocks[0].path == ("reasoning",)
    assert messages[2].blocks[0].name == "terminal"
    assert messages[2].blocks[0].json is True
    assert OPENAI.model(t) == "hermes-4-70b"  # from session_meta: no assistant names a model
    assert findings(t) == []


def test_kimi_underscore_roles_and_usage_anchors() -> None:
    t = load("openai-kimi.jsonl")
    messages = OPENAI.messages(t)
    assert shape(t, messages) == [
        (3, "user", ["text"]),
        (4, "assistant", ["thinking", "text", "tool_call"]),
        (5, "tool", ["tool_result"]),
        (7, "assistant", ["text"]),
        (10, "user", ["text"]),
        (11, "assistant", ["text"]),
    ]
    assert messages[1].blocks[0] == Block(
        "thinking", "Check package.json engines first.", type="think", path=("content", 0)
    )
    assert messages[1].blocks[2].call_id == "ReadFile:0"
    assert [(t.line_of(u.index), u.context) for u in OPENAI.usage(t)] == [
        (6, 2345),
        (8, 2398),
        (12, 2421),
    ]
    assert findings(t) == []


def test_image_parts() -> None:
    t = load("openai-image.jsonl")
    assert shape(t, OPENAI.messages(t)) == [
        (1, "developer", ["text"]),
        (2, "user", ["text", "image"]),
        (3, "assistant", ["text"]),
    ]
    image = OPENAI.messages(t)[1].blocks[1]
    assert (image.type, image.path) == ("image_url", ("content", 1))
    assert image.images == (ImageSize(1, 1, low=True),)  # `detail: low`
    assert findings(t) == []


def test_unicode_text_survives() -> None:
    t = load("openai-unicode.jsonl")
    messages = OPENAI.messages(t)
    assert messages[1].text == "请把 README 的第一段翻译成日本語，保留 emoji 🙏🚀"
    assert messages[4].text == "Weatherly は、どの都市でも 7 日間の天気予報を表示します 🌍。🙏🚀"
    assert findings(t) == []


def test_interrupted_call_at_the_end_is_a_warning() -> None:
    t = load("openai-no-final-newline.jsonl")
    assert findings(t) == [
        (
            3,
            "call-unanswered",
            "warning",
            "tool call 'call_Rt5yU7iO9pAs' has no tool message (end of file)",
        )
    ]


def test_ours_and_usage_on_assistant_messages(tmp_path: Path) -> None:
    lines = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "Earlier turns, compacted: ...", "compactcli": {"v": 1}},
        {
            "role": "assistant",
            "id": "chatcmpl-1",
            "model": "gpt-4.1",
            "content": "ok",
            "usage": {
                "prompt_tokens": 900,
                "completion_tokens": 12,
                "total_tokens": 912,
                "prompt_tokens_details": {"cached_tokens": 640},
            },
        },
    ]
    path = tmp_path / "ours.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    t = read_transcript(str(path))
    assert t.format == "openai"
    [compaction] = OPENAI.compactions(t)
    assert (compaction.index, compaction.summary_index, compaction.ours) == (1, 1, True)
    assert compaction.summary == "Earlier turns, compacted: ..."
    assert OPENAI.messages(t)[1].summary
    [usage] = OPENAI.usage(t)
    assert (usage.index, usage.context, usage.input, usage.output, usage.cached, usage.key) == (
        2,
        912,
        900,
        12,
        640,
        "chatcmpl-1",
    )
    assert OPENAI.model(t) == "gpt-4.1"


# ------------------------------------------------------------------------------ validation

EXPECTED_INVALID = {
    "openai-bad-shape.jsonl": [
        (3, "bad-shape", "error", "assistant content is an object, not a string, a list or null")
    ],
    "openai-call-unanswered.jsonl": [
        (3, "call-unanswered", "error", "tool call 'call_Bb2' has no tool message before line 5")
    ],
    "openai-duplicate-id.jsonl": [
        (3, "duplicate-id", "error", "tool call id 'call_Aa1' appears twice in one message")
    ],
    "openai-first-role.jsonl": [
        (1, "first-role", "error", "the list starts with a tool message, not a call")
    ],
    "openai-orphan-result.jsonl": [
        (4, "orphan-result", "error", "tool message for unknown call 'call_Zz9NoSuch'")
    ],
    "openai-result-not-adjacent.jsonl": [
        (
            6,
            "result-not-adjacent",
            "error",
            "tool message for call 'call_Aa1' does not follow the assistant message that made "
            "the call (line 3) and its other results",
        )
    ],
}


def test_every_invalid_fixture_has_its_expectation() -> None:
    assert sorted(EXPECTED_INVALID) == INVALID


@pytest.mark.parametrize("name", sorted(EXPECTED_INVALID))
def test_invalid_fixture_findings(name: str) -> None:
    assert findings(load(name, "invalid")) == EXPECTED_INVALID[name]


def test_malformed_message_raises_input_error() -> None:
    t = load("openai-bad-shape.jsonl", "invalid")
    with pytest.raises(InputError) as caught:
        OPENAI.messages(t)
    assert caught.value.line == 3
    assert caught.value.message == "assistant content is an object, not a string, a list or null"


def _write(tmp_path: Path, lines: list[dict[str, object]]) -> Transcript:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return read_transcript(str(path), "openai")


def test_role_warnings(tmp_path: Path) -> None:
    t = _write(
        tmp_path,
        [
            {"role": "assistant", "content": "Hello!"},
            {"role": "user", "content": "hi"},
            {"role": "system", "content": "be brief"},
        ],
    )
    assert findings(t) == [
        (
            1,
            "first-role",
            "warning",
            "the list starts with an assistant message, not a system or user message",
        ),
        (3, "first-role", "warning", "system message is not first (the list starts on line 1)"),
    ]


def test_tool_message_without_id_and_answered_twice(tmp_path: Path) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
    t = _write(
        tmp_path,
        [
            {"role": "user", "content": "ls"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "a"},
            {"role": "tool", "tool_call_id": "c1", "content": "a"},
            {"role": "tool", "content": "b"},
        ],
    )
    assert findings(t) == [
        (4, "duplicate-id", "error", "second tool message for call 'c1' (the first is on line 3)"),
        (5, "bad-shape", "error", "tool message has no tool_call_id"),
    ]


# ---------------------------------------------------------------------------------- corpus

SWE_AGENT = {
    # .traj files are single JSON documents; their `history` is an OpenAI message list.
    "swe-agent-function-calling-simple.traj": (12, []),
    "swe-agent-marshmallow-1867-function-calling.traj": (
        24,
        # The demonstration replays reuse call ids across turns: legal, as each result sits
        # right after its call, so only warnings.
        [
            (9, "duplicate-id"),
            (13, "duplicate-id"),
            (15, "duplicate-id"),
            (19, "duplicate-id"),
            (21, "duplicate-id"),
        ],
    ),
}


@needs_corpus
@pytest.mark.parametrize("name", sorted(SWE_AGENT))
def test_swe_agent_history(name: str, tmp_path: Path) -> None:
    history = json.loads((CORPUS / name).read_text())["history"]
    path = tmp_path / "history.jsonl"
    path.write_text("".join(json.dumps(message) + "\n" for message in history))
    t = read_transcript(str(path))
    assert t.format == "openai"
    assert to_bytes(t) == path.read_bytes()
    messages = OPENAI.messages(t)
    count, expected = SWE_AGENT[name]
    assert len(messages) == count
    assert [m.role for m in messages[:4]] == ["system", "user", "assistant", "tool"]
    # SWE-agent tool messages answer by a `tool_call_ids` list.
    assert messages[3].tool_results[0].call_id == messages[2].tool_calls[0].call_id
    found = OPENAI.validate(t)
    assert [f for f in found if f.severity == "error"] == []
    assert [(f.line, f.code) for f in found] == expected


# ---------------------------------------------------------------------------------- writing


def test_clear_result_and_no_boundary() -> None:
    t = load("openai-session.jsonl")
    message = OPENAI.messages(t)[3]
    record = OPENAI.clear_result(t.records[message.index], message.blocks[0], "[cleared]")
    assert record.raw == {
        "role": "tool",
        "tool_call_id": "call_Qm3xT8vB2nLk",
        "content": "[cleared]",
    }
    assert OPENAI.prune_boundary(t, {"stage": "prune"}) == []


def test_replace_image_part_with_text() -> None:
    t = load("openai-image.jsonl")
    message = OPENAI.messages(t)[1]
    record = OPENAI.replace_with_text(t.records[message.index], message.blocks[1], "[image]")
    assert record.raw["content"][1] == {"type": "text", "text": "[image]"}
