"""The anthropic dialect: detection, views, usage and validation on fixtures and derived lists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compactcli.errors import InputError
from compactcli.formats import get_dialect
from compactcli.formats.anthropic.dialect import AnthropicDialect
from compactcli.images import ImageSize
from compactcli.loading import read_transcript, to_bytes
from compactcli.transcript import Block, Message, Transcript

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus not present")

TRANSCRIPTS = sorted(p.name for p in (FIXTURES / "transcripts").glob("anthropic-*.jsonl"))
INVALID = sorted(p.name for p in (FIXTURES / "invalid").glob("anthropic-*.jsonl"))
ANTHROPIC = AnthropicDialect()


def load(name: str, folder: str = "transcripts") -> Transcript:
    return read_transcript(str(FIXTURES / folder / name))


def shape(t: Transcript, messages: list[Message]) -> list[tuple[int, str, list[str]]]:
    """(input line, role, block kinds) of each message."""
    return [(t.line_of(m.index), m.role, [b.kind for b in m.blocks]) for m in messages]


def findings(t: Transcript) -> list[tuple[int, str, str, str]]:
    found = sorted(ANTHROPIC.validate(t), key=lambda f: (f.line, f.code))
    return [(f.line, f.code, f.severity, f.message) for f in found]


def write(tmp_path: Path, lines: list[dict[str, object]]) -> Transcript:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return read_transcript(str(path), "anthropic")


def test_fixture_set_is_complete() -> None:
    assert TRANSCRIPTS == [
        "anthropic-image.jsonl",
        "anthropic-interrupted.jsonl",
        "anthropic-no-final-newline.jsonl",
        "anthropic-session.jsonl",
        "anthropic-summarize-session.jsonl",
        "anthropic-unicode.jsonl",
    ]


@pytest.mark.parametrize("name", TRANSCRIPTS)
def test_fixture_is_detected_and_round_trips(name: str) -> None:
    path = FIXTURES / "transcripts" / name
    t = read_transcript(str(path))
    assert t.format == "anthropic"
    assert to_bytes(t) == path.read_bytes()


@pytest.mark.parametrize("name", INVALID)
def test_invalid_fixture_is_detected_and_round_trips(name: str) -> None:
    path = FIXTURES / "invalid" / name
    t = read_transcript(str(path))
    assert t.format == "anthropic"
    assert to_bytes(t) == path.read_bytes()


def test_registry_returns_this_dialect() -> None:
    assert isinstance(get_dialect("anthropic"), AnthropicDialect)


# ---------------------------------------------------------------------------------- sniffing


@pytest.mark.parametrize(
    ("objects", "score"),
    [
        ([{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "input": {}}]}], 95),
        ([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t"}]}], 95),
        ([{"role": "assistant", "content": [{"type": "thinking", "thinking": "…"}]}], 95),
        ([{"role": "user", "content": [{"type": "image", "source": {"type": "url"}}]}], 95),
        ([{"role": "assistant", "content": [{"type": "web_search_tool_result"}]}], 95),
        # Plain strings fit both formats: lower than openai's 50.
        ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}], 40),
        # Lists of text blocks fit both too, but are the Messages API's usual shape: above 50.
        ([{"role": "user", "content": [{"type": "text", "text": "hi"}]}], 60),
        ([{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}], 0),
        ([{"role": "assistant", "content": None}], 0),
        ([{"role": "assistant", "content": "x", "tool_calls": []}], 0),
        ([{"type": "session", "id": "x"}], 0),
        ([{"type": "assistant", "message": {"role": "assistant", "content": []}, "uuid": "u"}], 0),
        ([{"event": "start", "at": 1}], 0),
        ([], 0),
    ],
)
def test_sniff(objects: list[dict[str, object]], score: int) -> None:
    assert AnthropicDialect.sniff(objects) == score


# ------------------------------------------------------------------------------------ views


def test_session_messages_context_and_blocks() -> None:
    t = load("anthropic-session.jsonl")
    every = [
        (1, "user", ["text"]),
        (2, "assistant", ["thinking", "text", "tool_call", "tool_call"]),
        (3, "user", ["tool_result", "tool_result", "text"]),
        (4, "assistant", ["tool_call"]),
        (5, "user", ["tool_result"]),
        (6, "assistant", ["text"]),
    ]
    assert shape(t, ANTHROPIC.messages(t)) == every
    assert shape(t, ANTHROPIC.context(t)) == every
    messages = ANTHROPIC.messages(t)
    assert messages[0].blocks[0].path == ("content",)
    assert (messages[1].id, messages[1].model) == ("msg_01XkW3pQ8vRt2", "claude-sonnet-4-5")
    assert messages[1].blocks[0].type == "thinking"
    assert messages[1].blocks[0].text.startswith("Probably the city is put into")
    assert messages[1].blocks[3] == Block(
        "tool_call",
        '{"pattern":"encodeURIComponent","path":"src"}',
        json=True,
        call_id="toolu_01Gw8sY3zVjPq4",
        name="search",
        arguments={"pattern": "encodeURIComponent", "path": "src"},
        type="tool_use",
        path=("content", 3),
    )
    assert messages[2].blocks[1] == Block(
        "tool_result",
        "No matches found.",
        call_id="toolu_01Gw8sY3zVjPq4",
        type="tool_result",
        path=("content", 1),
    )
    assert messages[4].blocks[0].text == "No matches found."  # list content, flattened
    assert ANTHROPIC.model(t) == "claude-sonnet-4-5"
    assert ANTHROPIC.compactions(t) == []
    assert findings(t) == []


def test_session_usage() -> None:
    t = load("anthropic-session.jsonl")
    usage = [
        (t.line_of(u.index), u.context, u.input, u.output, u.cached, u.key)
        for u in ANTHROPIC.usage(t)
    ]
    assert usage == [
        (2, 4305, 4123, 182, 0, "msg_01XkW3pQ8vRt2"),
        (4, 4496, 4435, 61, 4120, "msg_01YlX4qR9wSu3"),
        (6, 4612, 4554, 58, 4430, "msg_01ZmY5rS0xTv4"),
    ]


def test_images_and_documents() -> None:
    t = load("anthropic-image.jsonl")
    messages = ANTHROPIC.messages(t)
    assert shape(t, messages) == [
        (1, "user", ["image", "text"]),
        (2, "assistant", ["tool_call"]),
        (3, "user", ["tool_result"]),
        (4, "user", ["document", "text"]),
        (5, "assistant", ["text"]),
    ]
    result = messages[2].blocks[0]
    assert (result.text, result.images) == (
        "Screenshot of http://localhost:3000/dashboard",
        (ImageSize(1, 1),),  # the size read from the PNG header
    )
    assert messages[3].blocks[0].images == (None,)  # a document: no size
    # Two user messages in a row: the API merges them, the tool result still comes first.
    assert findings(t) == [
        (
            4,
            "role-order",
            "warning",
            "second user message in a row (after line 3); the API merges them into one turn",
        )
    ]


def test_unicode_text_survives() -> None:
    t = load("anthropic-unicode.jsonl")
    messages = ANTHROPIC.messages(t)
    assert messages[0].text == "请把 README 的第一段翻译成日本語，保留 emoji 🙏🚀"
    assert messages[3].text == "Weatherly は、どの都市でも 7 日間の天気予報を表示します 🌍。🙏🚀"
    assert findings(t) == []


def test_no_final_newline() -> None:
    t = load("anthropic-no-final-newline.jsonl")
    assert t.records[-1].eol == b""
    assert [m.role for m in ANTHROPIC.context(t)] == ["user", "assistant", "user", "assistant"]
    assert findings(t) == []


def test_interrupted_call_at_the_end_is_a_warning() -> None:
    t = load("anthropic-interrupted.jsonl")
    assert shape(t, ANTHROPIC.messages(t)) == [
        (1, "user", ["text"]),
        (2, "assistant", ["thinking", "text", "tool_call"]),
    ]
    assert ANTHROPIC.messages(t)[1].blocks[0] == Block(
        "thinking", type="redacted_thinking", path=("content", 0)
    )
    assert findings(t) == [
        (
            2,
            "call-unanswered",
            "warning",
            "tool_use 'toolu_01InTeRr1' has no tool_result (end of file)",
        )
    ]


def test_server_tools_are_other_blocks(tmp_path: Path) -> None:
    t = write(
        tmp_path,
        [
            {"role": "user", "content": "Weather in Oslo?"},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "server_tool_use",
                        "id": "srvtoolu_1",
                        "name": "web_search",
                        "input": {},
                    },
                    {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
                    {"type": "text", "text": "Rain, 7 °C."},
                ],
            },
        ],
    )
    blocks = ANTHROPIC.messages(t)[1].blocks
    assert [(b.kind, b.type, b.call_id, b.name) for b in blocks] == [
        ("other", "server_tool_use", "srvtoolu_1", "web_search"),
        ("other", "web_search_tool_result", "srvtoolu_1", None),
        ("text", "text", None, None),
    ]
    assert findings(t) == []


def test_ours_is_a_summary(tmp_path: Path) -> None:
    t = write(
        tmp_path,
        [
            {"role": "user", "content": "Earlier turns, compacted: ...", "compactcli": {"v": 1}},
            {"role": "assistant", "content": "ok"},
        ],
    )
    [compaction] = ANTHROPIC.compactions(t)
    assert (compaction.index, compaction.summary_index, compaction.ours) == (0, 0, True)
    assert compaction.summary == "Earlier turns, compacted: ..."


# ------------------------------------------------------------------------------ validation

EXPECTED_INVALID = {
    "anthropic-bad-shape.jsonl": [
        (5, "bad-shape", "error", "user content is an object, not a string or a list of blocks")
    ],
    "anthropic-call-unanswered.jsonl": [
        (
            2,
            "call-unanswered",
            "error",
            "tool_use 'toolu_01AaA' has no tool_result in the next message (line 3)",
        )
    ],
    "anthropic-duplicate-id.jsonl": [
        (4, "duplicate-id", "error", "tool_use id 'toolu_01AaA' used twice (first on line 2)")
    ],
    "anthropic-first-role.jsonl": [
        (1, "first-role", "error", "the first message is assistant, not user")
    ],
    "anthropic-orphan-result.jsonl": [
        (3, "orphan-result", "error", "tool_result for unknown tool_use 'toolu_01NoSuCh'")
    ],
    "anthropic-result-not-adjacent.jsonl": [
        (
            5,
            "result-not-adjacent",
            "error",
            "tool_result for 'toolu_01AaA' is not in the message right after its tool_use (line 2)",
        )
    ],
    "anthropic-result-order.jsonl": [
        (
            3,
            "result-order",
            "error",
            "tool_result for 'toolu_01AaA' comes after other content; "
            "tool_result blocks must come first",
        )
    ],
}


def test_every_invalid_fixture_has_its_expectation() -> None:
    assert sorted(EXPECTED_INVALID) == INVALID


@pytest.mark.parametrize("name", sorted(EXPECTED_INVALID))
def test_invalid_fixture_findings(name: str) -> None:
    assert findings(load(name, "invalid")) == EXPECTED_INVALID[name]


def test_malformed_message_raises_input_error() -> None:
    t = load("anthropic-bad-shape.jsonl", "invalid")
    with pytest.raises(InputError) as caught:
        ANTHROPIC.messages(t)
    assert caught.value.line == 5


def test_results_split_over_merged_user_messages(tmp_path: Path) -> None:
    use = {"type": "tool_use", "id": "t1", "name": "ls", "input": {}}
    t = write(
        tmp_path,
        [
            {"role": "user", "content": "ls"},
            {"role": "assistant", "content": [use]},
            {"role": "user", "content": [{"type": "text", "text": "here:"}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}]},
        ],
    )
    # Merged, the turn is [text, tool_result]: the result is answered but not first.
    assert [(f[0], f[1]) for f in findings(t)] == [(4, "result-order"), (4, "role-order")]


def test_calls_and_results_on_the_wrong_side(tmp_path: Path) -> None:
    t = write(
        tmp_path,
        [
            {
                "role": "user",
                "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {}}],
            },
            {"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "t1"}]},
        ],
    )
    assert findings(t) == [
        (1, "bad-shape", "error", "tool_use block in a user message"),
        (2, "bad-shape", "error", "tool_result block in an assistant message"),
    ]


# ---------------------------------------------------------------------------------- corpus

# No real plain Anthropic list is public (corpus/SOURCES.md); Claude Code's `message` field has
# this shape, one content block per record. These lists are derived in memory, never stored.
DERIVED = {
    "claude-code-hunch.jsonl": (8, 2, [(3, "role-order"), (5, "role-order"), (7, "role-order")]),
    "claude-code-raze-progress.jsonl": (
        12,
        3,
        [
            (3, "role-order"),
            (5, "role-order"),
            (7, "role-order"),
            (8, "role-order"),
            (11, "role-order"),
            (12, "call-unanswered"),
            (12, "role-order"),
        ],
    ),
}


@needs_corpus
@pytest.mark.parametrize("name", sorted(DERIVED))
def test_messages_derived_from_claude_code(name: str, tmp_path: Path) -> None:
    records = [json.loads(line) for line in (CORPUS / name).read_text().splitlines()]
    messages = [
        r["message"]
        for r in records
        if r.get("type") in ("user", "assistant")
        and isinstance(r.get("message"), dict)
        and not r.get("isSidechain")
    ]
    path = tmp_path / "messages.jsonl"
    path.write_text("".join(json.dumps(message) + "\n" for message in messages))
    t = read_transcript(str(path))
    assert t.format == "anthropic"
    assert to_bytes(t) == path.read_bytes()
    count, usages, expected = DERIVED[name]
    assert len(ANTHROPIC.messages(t)) == count
    # Claude Code repeats one API response's usage on each of its records: counted once.
    assert len(ANTHROPIC.usage(t)) == usages
    found = sorted(ANTHROPIC.validate(t), key=lambda f: (f.line, f.code))
    assert [f for f in found if f.severity == "error"] == []
    assert [(f.line, f.code) for f in found] == expected


# ---------------------------------------------------------------------------------- writing


def test_clear_result_and_no_boundary() -> None:
    t = load("anthropic-session.jsonl")
    message = ANTHROPIC.messages(t)[2]
    record = ANTHROPIC.clear_result(t.records[message.index], message.blocks[0], "[cleared]")
    assert record.raw["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "toolu_01Fq7rT2yUiOp3",
        "content": "[cleared]",
    }
    assert record.raw["content"][1:] == t.records[message.index].raw["content"][1:]
    assert ANTHROPIC.prune_boundary(t, {"stage": "prune"}) == []


def test_replace_image_with_text() -> None:
    t = load("anthropic-image.jsonl")
    message = ANTHROPIC.messages(t)[0]
    record = ANTHROPIC.replace_with_text(t.records[message.index], message.blocks[0], "[image]")
    assert record.raw["content"][0] == {"type": "text", "text": "[image]"}
