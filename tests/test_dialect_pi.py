"""The pi dialect: detection, views, usage and validation on fixtures and on the real corpus file."""

from __future__ import annotations

from pathlib import Path

import pytest

from compactcli.errors import InputError
from compactcli.formats import get_dialect
from compactcli.formats.pi.dialect import PiDialect
from compactcli.formats.pi.views import COMPACTION_PREFIX
from compactcli.images import ImageSize
from compactcli.loading import read_transcript, to_bytes
from compactcli.transcript import Block, Message, Transcript

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus not present")

TRANSCRIPTS = sorted(p.name for p in (FIXTURES / "transcripts").glob("pi-*.jsonl"))
INVALID = sorted(p.name for p in (FIXTURES / "invalid").glob("pi-*.jsonl"))
PI = PiDialect()


def load(name: str, folder: str = "transcripts") -> Transcript:
    return read_transcript(str(FIXTURES / folder / name))


def shape(t: Transcript, messages: list[Message]) -> list[tuple[int, str, list[str]]]:
    """(input line, role, block kinds) of each message."""
    return [(t.line_of(m.index), m.role, [b.kind for b in m.blocks]) for m in messages]


def findings(t: Transcript) -> list[tuple[int, str, str, str]]:
    found = sorted(PI.validate(t), key=lambda f: (f.line, f.code))
    return [(f.line, f.code, f.severity, f.message) for f in found]


def test_fixture_set_is_complete() -> None:
    assert TRANSCRIPTS == [
        "pi-branched.jsonl",
        "pi-compacted.jsonl",
        "pi-image.jsonl",
        "pi-no-final-newline.jsonl",
        "pi-session.jsonl",
        "pi-summarize-session.jsonl",
        "pi-unicode.jsonl",
        "pi-v1.jsonl",
    ]


@pytest.mark.parametrize("name", TRANSCRIPTS)
def test_fixture_is_detected_and_round_trips(name: str) -> None:
    path = FIXTURES / "transcripts" / name
    t = read_transcript(str(path))
    assert t.format == "pi"
    assert to_bytes(t) == path.read_bytes()


@pytest.mark.parametrize("name", INVALID)
def test_invalid_fixture_is_detected_and_round_trips(name: str) -> None:
    path = FIXTURES / "invalid" / name
    t = read_transcript(str(path))
    assert t.format == "pi"
    assert to_bytes(t) == path.read_bytes()


def test_registry_returns_this_dialect() -> None:
    assert isinstance(get_dialect("pi"), PiDialect)


# ---------------------------------------------------------------------------------- sniffing


def test_sniff_scores_header_highest() -> None:
    assert PiDialect.sniff([{"type": "session", "version": 3, "id": "x", "cwd": "/"}]) == 100
    assert PiDialect.sniff([{"type": "session", "cwd": "/"}]) == 90


def test_sniff_headerless_entries_scores_lower() -> None:
    entry = {"type": "message", "id": "1a2b3c4d", "parentId": None, "message": {"role": "user"}}
    assert PiDialect.sniff([entry]) == 60


@pytest.mark.parametrize(
    "objects",
    [
        [{"type": "user", "uuid": "u1", "parentUuid": None, "message": {"role": "user"}}],
        [{"timestamp": "t", "type": "session_meta", "payload": {"id": "x"}}],
        [{"role": "user", "content": "hi"}],
        [{"event": "start", "at": 1}],
        [],
    ],
)
def test_sniff_rejects_other_formats(objects: list[dict[str, object]]) -> None:
    assert PiDialect.sniff(objects) == 0


# ------------------------------------------------------------------------------------ views


def test_session_messages_and_context() -> None:
    t = load("pi-session.jsonl")
    every = [
        (4, "user", ["text"]),
        (5, "assistant", ["thinking", "text", "tool_call", "tool_call"]),
        (6, "tool", ["tool_result"]),
        (7, "tool", ["tool_result"]),
        (8, "assistant", ["text", "tool_call"]),
        (9, "tool", ["tool_result"]),
        (10, "assistant", ["text"]),
        (11, "user", ["text"]),
        (12, "user", ["text"]),
        (13, "user", ["text"]),
        (14, "assistant", ["tool_call"]),
        (15, "tool", ["tool_result"]),
        (16, "assistant", ["text"]),
    ]
    assert shape(t, PI.messages(t)) == every
    # The `!!` shell command (excludeFromContext) on line 12 is not sent to the model.
    assert shape(t, PI.context(t)) == [m for m in every if m[0] != 12]
    assert PI.compactions(t) == []
    assert PI.model(t) == "claude-sonnet-4-5"
    assert findings(t) == []


@pytest.mark.parametrize("stop", [["error"], {"reason": "error"}, 3])
def test_a_stop_reason_that_is_not_a_string_keeps_its_message(stop: object) -> None:
    """pi leaves out an assistant message whose `stopReason` is "error" or "aborted", compared as
    strings: one of another type stays in the context, and nothing fails on it."""
    t = load("pi-session.jsonl")
    line = 9  # the assistant message at line 10 (record index 9)
    raw = t.records[line].raw
    changed = {**raw, "message": {**raw["message"], "stopReason": stop}}
    mutated = t.evolve(
        records=(*t.records[:line], t.records[line].with_raw(changed), *t.records[line + 1 :])
    )
    assert shape(mutated, PI.context(mutated)) == shape(t, PI.context(t))
    assert findings(mutated) == findings(t)


def test_session_blocks() -> None:
    t = load("pi-session.jsonl")
    messages = {t.line_of(m.index): m for m in PI.messages(t)}
    assistant = messages[5]
    assert assistant.id == "e7a90b31"
    assert assistant.model == "claude-sonnet-4-5"
    assert assistant.path == ("message",)
    assert assistant.blocks[0].text.startswith("A space in the city name breaks something")
    assert assistant.blocks[0].type == "thinking"
    assert assistant.blocks[2] == Block(
        "tool_call",
        '{"path":"src/routes/forecast.ts"}',
        json=True,
        call_id="toolu_01Hq3XbYd6wJ1fRr8sKcA2mN",
        name="read",
        arguments={"path": "src/routes/forecast.ts"},
        type="toolCall",
        path=("message", "content", 2),
    )
    result = messages[7].blocks[0]
    assert result == Block(
        "tool_result",
        "No matches found",
        call_id="toolu_01PzV4nL7eT2gUu9kDbW5cYq",
        name="grep",
        type="toolResult",
        path=("message",),
    )
    bash = messages[11].blocks[0]
    assert bash.type == "bashExecution"
    assert bash.path == ("message",)
    assert bash.text == (
        "Ran `npm test -- forecast`\n```\n\n> weatherly@1.4.0 test\n> vitest run forecast\n\n"
        " ✓ test/forecast.test.ts (4 tests) 31ms\n\n Test Files  1 passed (1)\n"
        "      Tests  4 passed (4)\n\n```"
    )
    user = messages[4].blocks[0]
    assert user.path == ("message", "content", 0)
    assert user.text.startswith("The /forecast endpoint returns 500")


def test_session_usage() -> None:
    t = load("pi-session.jsonl")
    assert [
        (t.line_of(u.index), u.context, u.input, u.output, u.cached, u.key) for u in PI.usage(t)
    ] == [
        (5, 4305, 4123, 182, 0, "e7a90b31"),
        (8, 5675, 5435, 240, 4120, "4a7be3c0"),
        (10, 6003, 5926, 77, 5430, "61d0a9e4"),
        (14, 6293, 6229, 64, 5922, "a9b8c7d6"),
        (16, 6354, 6336, 18, 6223, "2468ace0"),
    ]


def test_compacted_context_starts_with_the_summary() -> None:
    t = load("pi-compacted.jsonl")
    context = PI.context(t)
    # Summary (the compaction on line 12), the kept entries from firstKeptEntryId (line 8) up to
    # the compaction, then what follows it.
    assert shape(t, context) == [
        (12, "user", ["text"]),
        (8, "user", ["text"]),
        (9, "assistant", ["tool_call"]),
        (10, "tool", ["tool_result"]),
        (11, "assistant", ["text"]),
        (13, "user", ["text"]),
        (14, "assistant", ["tool_call"]),
        (15, "tool", ["tool_result"]),
        (16, "assistant", ["text"]),
    ]
    summary = context[0]
    assert (summary.summary, summary.synthetic, summary.id, summary.path) == (
        True,
        True,
        "e1f2a3b4",
        (),
    )
    assert summary.blocks[0].path == ("summary",)
    assert summary.blocks[0].type == "compaction"
    assert summary.text.startswith(COMPACTION_PREFIX + "## Goal\nAdd retry")
    assert summary.text.endswith("</modified-files>\n</summary>")
    # All 16 lines but the header are messages in file order, the compaction among them.
    assert [t.line_of(m.index) for m in PI.messages(t)] == list(range(2, 17))
    assert findings(t) == []


def test_compacted_usage_counts_only_requests_after_the_compaction() -> None:
    t = load("pi-compacted.jsonl")
    assert [(t.line_of(u.index), u.context) for u in PI.usage(t)] == [(14, 2913), (16, 2948)]


def test_compacted_compactions() -> None:
    t = load("pi-compacted.jsonl")
    [compaction] = PI.compactions(t)
    assert (t.line_of(compaction.index), compaction.summary_index, compaction.ours) == (
        12,
        None,
        False,
    )
    assert compaction.summary.startswith("## Goal\nAdd retry with exponential backoff")


def test_ours_is_recognised_by_the_compactcli_key() -> None:
    t = load("pi-compacted.jsonl")
    index = 11
    raw = {**t.records[index].raw, "compactcli": {"version": "0.1.0"}}
    records = list(t.records)
    records[index] = records[index].with_raw(raw)
    [compaction] = PI.compactions(t.evolve(records=tuple(records)))
    assert compaction.ours


def test_branched_context_follows_the_active_branch() -> None:
    t = load("pi-branched.jsonl")
    assert shape(t, PI.messages(t)) == [
        (2, "user", ["text"]),
        (3, "assistant", ["tool_call"]),
        (4, "tool", ["tool_result"]),
        (5, "assistant", ["text", "tool_call"]),
        (6, "tool", ["tool_result"]),
        (7, "assistant", ["text"]),
        (8, "user", ["text"]),
        (9, "user", ["text"]),
        (10, "assistant", ["tool_call", "tool_call"]),
        (11, "tool", ["tool_result"]),
        (12, "tool", ["tool_result"]),
        (13, "assistant", ["text"]),
    ]
    # Lines 5-7 are the abandoned branch; line 8 is the branch summary pi sends instead.
    assert [t.line_of(m.index) for m in PI.context(t)] == [2, 3, 4, 8, 9, 10, 11, 12, 13]
    branch_summary = PI.context(t)[3]
    assert branch_summary.text.startswith(
        "The following is a summary of a branch that this conversation came back from:"
    )
    assert branch_summary.summary is False
    assert [(t.line_of(u.index), u.context) for u in PI.usage(t)] == [
        (3, 2945),
        (10, 3344),
        (13, 3292),
    ]
    assert findings(t) == []


def test_v1_compaction_uses_the_line_index() -> None:
    t = load("pi-v1.jsonl")
    # firstKeptEntryIndex 5 counts the header as 0, so it names line 6. Line 12 is an aborted
    # assistant message, which pi does not send.
    assert shape(t, PI.context(t)) == [
        (10, "user", ["text"]),
        (6, "user", ["text"]),
        (7, "assistant", ["tool_call"]),
        (8, "tool", ["tool_result"]),
        (9, "assistant", ["text"]),
        (11, "user", ["text"]),
        (13, "user", ["text"]),
        (14, "assistant", ["text"]),
    ]
    assert (12, "assistant", []) in shape(t, PI.messages(t))
    assert all(m.id is None for m in PI.messages(t))
    assert [(t.line_of(u.index), u.context, u.key) for u in PI.usage(t)] == [(14, 1585, None)]
    assert [t.line_of(c.index) for c in PI.compactions(t)] == [10]
    assert PI.model(t) == "claude-opus-4-5"
    assert findings(t) == []


def test_images_in_user_message_tool_result_and_custom_message() -> None:
    t = load("pi-image.jsonl")
    messages = PI.messages(t)
    assert shape(t, messages) == [
        (2, "user", ["text", "image"]),
        (3, "assistant", ["tool_call"]),
        (4, "tool", ["tool_result"]),
        (5, "user", ["text", "image"]),
        (6, "assistant", ["text"]),
    ]
    assert messages[2].blocks[0].images == (ImageSize(1, 1),)
    assert messages[0].blocks[1].images == (ImageSize(1, 1),)
    assert messages[2].blocks[0].text == "Read image file [image/png]"
    assert messages[3].blocks[1].path == ("content", 1)  # the custom_message entry's content
    assert [t.line_of(m.index) for m in PI.context(t)] == [2, 3, 4, 5, 6]
    assert findings(t) == []


def test_unicode_text_survives() -> None:
    t = load("pi-unicode.jsonl")
    messages = PI.messages(t)
    assert messages[0].text == "请把 README 的第一段翻译成日本語，保留 emoji 🙏🚀"
    # Line 4 is written with \u escapes; the view decodes them.
    assert messages[2].blocks[0].text.startswith("# 天气 Weatherly ☀️")
    assert messages[3].text.endswith("🙏🚀")
    assert findings(t) == []


def test_interrupted_call_is_a_warning() -> None:
    t = load("pi-no-final-newline.jsonl")
    assert shape(t, PI.context(t)) == [(2, "user", ["text"]), (3, "assistant", ["tool_call"])]
    assert findings(t) == [
        (
            3,
            "call-unanswered",
            "warning",
            "toolCall 'toolu_01NoNeWlInE' (bash) has no toolResult; pi sends 'No result provided'",
        )
    ]


# ------------------------------------------------------------------------------ validation

EXPECTED_INVALID = {
    "pi-bad-cut.jsonl": [
        (
            6,
            "bad-cut",
            "error",
            "firstKeptEntryId '33cc44dd' points at a toolResult (line 4); "
            "the kept part must not start with a tool result",
        )
    ],
    "pi-bad-shape.jsonl": [
        (6, "bad-shape", "error", "message entry's message is a string, not an object")
    ],
    "pi-broken-chain.jsonl": [
        (6, "broken-chain", "error", "parentId '0badc0de' of entry '55ee66ff' names no entry")
    ],
    "pi-duplicate-id.jsonl": [
        (7, "duplicate-id", "error", "duplicate entry id '55ee66ff' (first on line 6)")
    ],
    "pi-header.jsonl": [
        (
            1,
            "header",
            "error",
            "first record is a 'message' record, not the session header "
            '({"type":"session","id":…})',
        )
    ],
    "pi-orphan-result.jsonl": [
        (5, "orphan-result", "error", "toolResult for unknown call 'toolu_01NoSuChCaLl'")
    ],
    "pi-result-not-adjacent.jsonl": [
        (
            3,
            "call-unanswered",
            "warning",
            "toolCall 'toolu_01InVaLiD2' (read) has no toolResult; pi sends 'No result provided'",
        ),
        (
            6,
            "result-not-adjacent",
            "error",
            "toolResult for call 'toolu_01InVaLiD2' is not among the results right after the "
            "assistant message that made the call (line 3)",
        ),
    ],
}


def test_every_invalid_fixture_has_its_expectation() -> None:
    assert sorted(EXPECTED_INVALID) == INVALID


@pytest.mark.parametrize("name", sorted(EXPECTED_INVALID))
def test_invalid_fixture_findings(name: str) -> None:
    assert findings(load(name, "invalid")) == EXPECTED_INVALID[name]


def test_malformed_message_raises_input_error() -> None:
    t = load("pi-bad-shape.jsonl", "invalid")
    with pytest.raises(InputError) as caught:
        PI.messages(t)
    assert str(caught.value).endswith(
        "pi-bad-shape.jsonl:6: message entry's message is a string, not an object"
    )


def _edit(t: Transcript, index: int, **changes: object) -> Transcript:
    records = list(t.records)
    records[index] = records[index].with_raw({**records[index].raw, **changes})
    return t.evolve(records=tuple(records))


def test_compaction_pointing_off_its_branch_is_a_bad_cut() -> None:
    t = _edit(load("pi-compacted.jsonl"), 11, firstKeptEntryId="2a3b4c5d")
    assert findings(t) == [
        (
            12,
            "bad-cut",
            "error",
            "firstKeptEntryId '2a3b4c5d' (line 16) is not an earlier entry on the "
            "compaction's branch",
        )
    ]


def test_compaction_naming_no_entry_is_a_broken_chain() -> None:
    t = _edit(load("pi-compacted.jsonl"), 11, firstKeptEntryId="ffffffff")
    assert findings(t) == [
        (12, "broken-chain", "error", "firstKeptEntryId 'ffffffff' names no entry")
    ]
    # pi then keeps nothing before the compaction: the summary, then what follows it.
    assert [t.line_of(m.index) for m in PI.context(t)] == [12, 13, 14, 15, 16]


def test_v1_index_out_of_range_is_a_broken_chain() -> None:
    t = _edit(load("pi-v1.jsonl"), 9, firstKeptEntryIndex=40)
    assert findings(t) == [(10, "broken-chain", "error", "firstKeptEntryIndex 40 names no entry")]


def test_duplicate_tool_call_id_is_reported() -> None:
    t = load("pi-session.jsonl")
    raw = t.records[13].raw  # line 14: an assistant message with one toolCall
    content = [{**raw["message"]["content"][0], "id": "toolu_01Hq3XbYd6wJ1fRr8sKcA2mN"}]
    t = _edit(t, 13, message={**raw["message"], "content": content})
    assert findings(t) == [
        (
            14,
            "call-unanswered",
            "warning",
            "toolCall 'toolu_01Hq3XbYd6wJ1fRr8sKcA2mN' (bash) has no toolResult; "
            "pi sends 'No result provided'",
        ),
        (
            14,
            "duplicate-id",
            "error",
            "duplicate toolCall id 'toolu_01Hq3XbYd6wJ1fRr8sKcA2mN' (first on line 5)",
        ),
        (
            15,
            "orphan-result",
            "error",
            "toolResult for unknown call 'toolu_01Rk2WcZ9pQ4mSx6vTn8JbGd'",
        ),
    ]


# ---------------------------------------------------------------------------------- corpus

CORPUS_FILES = ["pi-before-compaction.jsonl"]


@needs_corpus
@pytest.mark.parametrize("name", CORPUS_FILES)
def test_corpus_file_reads_round_trips_and_validates(name: str) -> None:
    path = CORPUS / name
    t = read_transcript(str(path))
    assert t.format == "pi"
    assert to_bytes(t) == path.read_bytes()
    found = PI.validate(t)
    assert [f for f in found if f.severity == "error"] == []
    # The one call left without a result sits right before the second compaction.
    assert [(f.line, f.code) for f in found] == [(628, "call-unanswered")]


@needs_corpus
def test_corpus_v1_context_and_usage() -> None:
    t = read_transcript(str(CORPUS / "pi-before-compaction.jsonl"))
    compactions = PI.compactions(t)
    # Two v1 compactions (firstKeptEntryIndex 293 and 551), lines 360 and 629.
    assert [t.line_of(c.index) for c in compactions] == [360, 629]
    assert compactions[-1].summary.startswith("# Context Checkpoint: Coding Agent Refactoring")
    context = PI.context(t)
    # The summary of the last compaction, then the kept part from line 552 (index 551, the
    # header being index 0): 1 + 77 kept + 361 after, aborted and errored replies left out.
    assert len(context) == 439
    assert context[0].summary and t.line_of(context[0].index) == 629
    assert t.line_of(context[1].index) == 552
    assert context[1].text == "can leave it"
    assert len(PI.messages(t)) == 992  # 990 message entries and the 2 compaction summaries
    usage = PI.usage(t)
    assert len(usage) == 174
    assert (t.line_of(usage[0].index), usage[0].context) == (631, 29011)
    assert (t.line_of(usage[-1].index), usage[-1].context) == (1001, 168018)
    assert PI.model(t) == "claude-opus-4-5"


# ---------------------------------------------------------------------------------- writing


def test_clear_result_keeps_pi_content_shape() -> None:
    t = load("pi-session.jsonl")
    message = PI.messages(t)[2]  # line 6: the toolResult for `read`
    block = message.blocks[0]
    record = PI.clear_result(t.records[message.index], block, "[cleared]")
    assert record.changed
    assert record.raw["message"]["content"] == [{"type": "text", "text": "[cleared]"}]
    assert record.raw["message"]["toolCallId"] == "toolu_01Hq3XbYd6wJ1fRr8sKcA2mN"
    records = list(t.records)
    records[message.index] = record
    edited = t.evolve(records=tuple(records))
    assert PI.messages(edited)[2].blocks[0].text == "[cleared]"
    assert findings(edited) == []


def test_replace_image_with_text() -> None:
    t = load("pi-image.jsonl")
    message = PI.messages(t)[0]
    record = PI.replace_with_text(t.records[message.index], message.blocks[1], "[image]")
    assert record.raw["message"]["content"][1] == {"type": "text", "text": "[image]"}


def test_prune_boundary_is_a_custom_entry_on_the_leaf() -> None:
    t = load("pi-session.jsonl")
    details = {"stage": "prune", "tokens_before": 900, "tokens_after": 300}
    [record] = PI.prune_boundary(t, details)
    raw = record.raw
    assert list(raw) == ["type", "id", "parentId", "timestamp", "customType", "compactcli"]
    assert (raw["type"], raw["parentId"], raw["customType"]) == ("custom", "9e8d7c6b", "compactcli")
    assert raw["timestamp"] == t.records[-1].raw["timestamp"]
    assert raw["compactcli"] == details
    assert len(raw["id"]) == 8 and int(raw["id"], 16) >= 0
    assert PI.prune_boundary(t, details) == [record]  # the same input gives the same bytes
    after = t.evolve(records=(*t.records, record))
    assert shape(after, PI.context(after)) == shape(t, PI.context(t))
    assert PI.compactions(after) == []
    assert findings(after) == []


def test_prune_boundary_in_a_v1_file_has_no_ids() -> None:
    t = load("pi-v1.jsonl")
    [record] = PI.prune_boundary(t, {"stage": "prune"})
    assert list(record.raw) == ["type", "timestamp", "customType", "compactcli"]
    after = t.evolve(records=(*t.records, record))
    assert [m.index for m in PI.context(after)] == [m.index for m in PI.context(t)]
    assert findings(after) == []
