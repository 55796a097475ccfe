"""The summarize stage and the `summarize` command: cuts, injection in every format, checks."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compactcli import get_dialect, read_transcript, to_bytes, validate
from compactcli.estimate import EstimateOptions, estimate
from compactcli.formats.base import atomic_units
from compactcli.formats.codex.items import SUMMARY_PREFIX
from compactcli.injection import (
    CLOSING,
    HEAD_HEADING,
    PREAMBLE,
    REQUEST_HEADING,
    STUB_RESULT,
    TASK_PREAMBLE,
    Injection,
    get_writer,
    has_preamble,
)
from compactcli.stages.cuts import Cut, is_prompt
from compactcli.stages.summarize import SummarizeOptions, default_summary_tokens, summarize
from compactcli.summarizers import SummaryRequest, SummaryResult, get_summarizer
from compactcli.summarizers.facts import Facts
from compactcli.tokens import Costs, Density, HeuristicCounter, get_counter
from compactcli.transcript import Message, Transcript
from tests.cli_runner import run
from tests.conftest import CORPUS, FIXTURES
from tests.transcript_strategies import FORMAT_NAMES, Plan, plans, render

TRANSCRIPTS = FIXTURES / "transcripts"
COUNTER = HeuristicCounter(
    Density("test", prose=4.0, output=4.0, json=4.0, costs=Costs(message=4, tool=8))
)
"""A counter with round constants, so cut positions here do not move when the real ones are
recalibrated."""


def session(fmt: str) -> Path:
    return TRANSCRIPTS / f"{fmt}-summarize-session.jsonl"


@dataclass
class FakeSummarizer:
    """A deterministic summarizer: one line per request, files read from the call arguments."""

    text: str | None = None
    requests: list[SummaryRequest] = field(default_factory=list)

    @property
    def name(self) -> str:
        return "fake"

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        self.requests.append(request)
        files = tuple(
            dict.fromkeys(
                str(b.arguments[key])
                for m in request.messages
                for b in m.tool_calls
                if isinstance(b.arguments, dict)
                for key in ("file_path", "path")
                if key in b.arguments
            )
        )
        body = self.text
        if body is None:
            body = (
                f"## Goal\n{len(request.messages)} messages summarized; files: {', '.join(files)}"
            )
        return SummaryResult(
            text=body,
            summarizer="fake",
            facts=Facts(goal="goal", files_read=files),
            model="fake-1",
            llm_calls=1,
            prompt_tokens=100,
            completion_tokens=20,
            cost=0.5,
        )


def compact(
    source: Path | Transcript, summarizer: Any = None, **options: Any
) -> tuple[Transcript, Transcript]:
    before = read_transcript(str(source)) if isinstance(source, Path) else source
    after = summarize(
        before,
        SummarizeOptions(**options),
        summarizer=summarizer or FakeSummarizer(),
        counter=COUNTER,
    )
    return before, after


def context(t: Transcript) -> list[Message]:
    return get_dialect(t.format).context(t)


def lines(t: Transcript) -> list[bytes]:
    return to_bytes(t).splitlines(keepends=True)


def kept_tail(before: Transcript, after: Transcript) -> list[Message]:
    count = after.stats[-1].details["summarize"]["kept"]["tail_messages"]
    return context(before)[len(context(before)) - count :]


def shape(message: Message) -> tuple[Any, ...]:
    """What a message says, wherever it is stored (a Codex copy has other paths)."""
    return (
        message.role,
        tuple((b.kind, b.text, b.call_id, b.name, b.is_error) for b in message.blocks),
    )


def same_units(tail: Sequence[Message], kept: Sequence[Message]) -> bool:
    """The kept messages are the tail's, unit by unit (a Claude Code relink may reorder a unit)."""
    return len(kept) == len(tail) and all(
        sorted(shape(tail[i]) for i in unit) == sorted(shape(kept[i]) for i in unit)
        for unit in atomic_units(tail)
    )


def read_back(t: Transcript, path: Path) -> Transcript:
    """`t` written to `path` and read again (what the next command in a pipe sees)."""
    path.write_bytes(to_bytes(t))
    return read_transcript(str(path))


# ---------------------------------------------------------------------------------------------
# The injected records, format by format


def test_claude_code_boundary_summary_and_preserved_tail() -> None:
    before, after = compact(session("claude-code"), keep_recent_tokens=300)
    stats = after.stats[-1]
    assert stats.details["summarize"]["kept"] == {
        "head_messages": 0,
        "tail_messages": 7,
        "tail_tokens": 215,
    }
    tail = kept_tail(before, after)
    assert [before.line_of(m.index) for m in tail] == [16, 17, 18, 19, 20, 21, 22]
    # append-only: every input line is still there, byte for byte, and two records follow
    assert to_bytes(after).startswith(to_bytes(before))
    assert len(after.records) == len(before.records) + 2
    boundary, summary = after.records[-2].raw, after.records[-1].raw
    leaf = before.records[tail[-1].index].raw
    head = before.records[tail[0].index].raw
    walk = [before.records[m.index].raw["uuid"] for m in tail]
    assert list(boundary)[:4] == ["parentUuid", "logicalParentUuid", "isSidechain", "type"]
    assert boundary["parentUuid"] is None
    assert boundary["logicalParentUuid"] == leaf["uuid"]
    assert (boundary["type"], boundary["subtype"], boundary["content"]) == (
        "system",
        "compact_boundary",
        "Conversation compacted",
    )
    assert boundary["compactMetadata"] == {
        "trigger": "manual",
        "preTokens": stats.tokens_before,
        "postTokens": stats.tokens_after,
        "preservedSegment": {
            "headUuid": head["uuid"],
            "anchorUuid": summary["uuid"],
            "tailUuid": leaf["uuid"],
        },
        "preservedMessages": {"anchorUuid": summary["uuid"], "uuids": walk, "allUuids": walk},
    }
    assert boundary["compactcli"] == stats.details["boundary"]
    assert (leaf["timestamp"], boundary["timestamp"]) == (
        "2026-04-02T10:00:42.000Z",
        "2026-04-02T10:00:41.999Z",
    )
    assert summary["parentUuid"] == boundary["uuid"]
    assert summary["isCompactSummary"] is True and summary["isVisibleInTranscriptOnly"] is True
    content = summary["message"]["content"]
    assert content.startswith(PREAMBLE + "\n\n## Goal\n14 messages summarized; files: ")
    assert content.endswith("\n\nRecent messages are preserved verbatim.")
    for key in ("sessionId", "cwd", "version", "gitBranch", "userType", "entrypoint"):
        assert boundary[key] == summary[key] == leaf[key]
    assert validate(after).errors == ()
    after_context = context(after)
    assert after_context[0].summary and after_context[0].index == len(after.records) - 1
    assert after_context[1:] == tail


def test_a_claude_code_session_that_ended_on_a_rate_limit_is_summarized() -> None:
    """The session ends on the prompt, an attachment Claude Code wrote after it, and an API
    error it does not send (`You've hit your limit`): the context ends on the attachment. The
    preserved segment runs to the API error, the chain's leaf, so the loader keeps both; the
    kept records are unchanged, and the context after ends as the one before did."""
    before, after = compact(TRANSCRIPTS / "claude-code-rate-limited.jsonl", keep_recent_tokens=300)
    assert after.stats[-1].details.get("reason") is None
    error = before.records[24].raw
    assert error["isApiErrorMessage"] is True
    boundary = after.records[-2].raw
    assert boundary["compactMetadata"]["preservedSegment"]["tailUuid"] == error["uuid"]
    assert boundary["logicalParentUuid"] == error["uuid"]
    assert to_bytes(before) == b"".join(lines(after)[: len(before.records)])
    assert validate(after).errors == ()
    ends = [m.index for m in context(before)[-2:]]
    assert [before.records[i].raw["type"] for i in ends] == ["user", "attachment"]
    assert [m.index for m in context(after)[-2:]] == ends


def test_claude_code_parallel_results_written_the_older_way_are_relinked_in_order() -> None:
    """Two tool_use records first, each result off its own call: not one run of the chain."""
    before, after = compact(
        TRANSCRIPTS / "claude-code-summarize-parallel.jsonl", keep_recent_tokens=300
    )
    stats = after.stats[-1]
    tail = kept_tail(before, after)
    assert [before.line_of(m.index) for m in tail] == [16, 17, 18, 19, 20, 21, 22, 23, 24]
    # the second call (line 21) now follows the first call's result (line 23), and the answer
    # (line 24) the second result (line 22); only their parentUuid changed
    assert stats.details["summarize"]["rewritten"] == [21, 24]
    uuid = {line: before.records[line - 1].raw["uuid"] for line in (21, 22, 23, 24)}
    for line, parent in ((21, uuid[23]), (24, uuid[22])):
        old, new = before.records[line - 1].raw, after.records[line - 1].raw
        assert new["parentUuid"] == parent != old["parentUuid"]
        assert {**new, "parentUuid": None} == {**old, "parentUuid": None}
    unchanged = [i for i in range(len(before.records)) if i + 1 not in (21, 24)]
    assert all(after.records[i].line == before.records[i].line for i in unchanged)
    boundary = after.records[-2].raw
    assert boundary["compactMetadata"]["preservedSegment"]["tailUuid"] == uuid[24]
    assert boundary["compactMetadata"]["preservedMessages"]["uuids"][-5:] == [
        before.records[19].raw["uuid"],
        uuid[23],
        uuid[21],
        uuid[22],
        uuid[24],
    ]
    assert validate(after).errors == ()
    assert [after.line_of(m.index) for m in context(after)[1:]] == [
        16,
        17,
        18,
        19,
        20,
        23,
        21,
        22,
        24,
    ]
    again = summarize(
        after,
        SummarizeOptions(keep_recent_tokens=300),
        summarizer=FakeSummarizer(),
        counter=COUNTER,
    )
    assert to_bytes(again) == to_bytes(after)


def test_claude_code_tail_reaching_into_an_earlier_preserved_segment_is_relinked() -> None:
    fake = FakeSummarizer()
    before, after = compact(
        TRANSCRIPTS / "claude-code-preserved-segment.jsonl", fake, keep_recent_tokens=0
    )
    # line 8 hangs off the earlier summary on disk; it now follows the kept line 5
    assert after.stats[-1].details["summarize"]["rewritten"] == [8]
    assert after.records[7].raw["parentUuid"] == before.records[4].raw["uuid"]
    assert fake.requests[0].previous is not None
    assert fake.requests[0].previous.startswith("This session is being continued")
    assert [m.text for m in fake.requests[0].messages] == [
        "Now implement merge() for patient sections."
    ]
    assert [after.line_of(m.index) for m in context(after)[1:]] == [5, 8, 9]
    assert validate(after).errors == ()


def test_codex_compacted_line_holds_the_whole_new_history() -> None:
    before, after = compact(session("codex"), keep_recent_tokens=300)
    stats = after.stats[-1]
    assert stats.details["summarize"]["kept"] == {
        "head_messages": 3,
        "tail_messages": 7,
        "tail_tokens": 250,
    }
    tail = kept_tail(before, after)
    assert [before.line_of(m.index) for m in tail] == [28, 29, 31, 34, 36, 37, 39]
    assert to_bytes(after).startswith(to_bytes(before))
    compacted, turn, count = (r.raw for r in after.records[-3:])
    assert list(compacted) == ["timestamp", "type", "payload", "compactcli"]
    assert compacted["type"] == "compacted"
    assert compacted["compactcli"] == stats.details["boundary"]
    history = compacted["payload"]["replacement_history"]
    originals = [before.records[m.index].raw["payload"] for m in context(before)]
    summary_item = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": compacted["payload"]["message"]}],
    }
    assert history == [*originals[:3], summary_item, *originals[-7:]]
    assert compacted["payload"]["message"].startswith(f"{SUMMARY_PREFIX}\n{PREAMBLE}\n\n## Goal\n")
    last_turn = next(r.raw for r in reversed(before.records) if r.raw["type"] == "turn_context")
    assert turn == {
        "timestamp": compacted["timestamp"],
        "type": "turn_context",
        "payload": last_turn["payload"],
    }
    # then Codex's token_count after a compaction: the new context's size, the rest carried
    last_info = next(
        r.raw["payload"]["info"]
        for r in reversed(before.records)
        if r.raw["type"] == "event_msg" and r.raw["payload"]["type"] == "token_count"
    )
    assert count == {
        "timestamp": compacted["timestamp"],
        "type": "event_msg",
        "payload": {
            "type": "token_count",
            "info": {
                "total_token_usage": last_info["total_token_usage"],
                "last_token_usage": {
                    "input_tokens": 0,
                    "cached_input_tokens": 0,
                    "output_tokens": 0,
                    "reasoning_output_tokens": 0,
                    "total_tokens": stats.tokens_after,
                },
                "model_context_window": last_info["model_context_window"],
            },
            "rate_limits": None,
        },
    }
    assert validate(after).errors == ()
    after_context = context(after)
    assert [m.role for m in after_context[:4]] == ["developer", "user", "user", "user"]
    assert after_context[3].summary
    assert [shape(m) for m in after_context[4:]] == [shape(m) for m in tail]


def instructions_after_kept_messages(path: Path) -> list[Any]:
    """Write to `path` a rollout whose `compacted` line is laid out as newer Codex lays out its
    own: the user message it kept, then the standing instructions (the developer message,
    AGENTS.md's), then its summary; two turns follow. Returns the first three items."""
    lines = (TRANSCRIPTS / "codex-compacted.jsonl").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if '"type":"compacted"' in line)
    record = json.loads(lines[at])
    developer, agents, asked, summary = record["payload"]["replacement_history"]
    record["payload"]["replacement_history"] = [asked, developer, agents, summary]
    lines[at] = json.dumps(record)
    turn = lines[at + 2 :]  # a second turn after the compaction, with a call of its own
    lines += [
        line.replace("call_sym1", "call_sym2").replace("Now show", "Then show") for line in turn
    ]
    path.write_text("\n".join(lines) + "\n")
    return [asked, developer, agents]


def test_codex_keeps_the_instructions_its_own_compaction_put_after_kept_user_messages(
    tmp_path: Path,
) -> None:
    """Newer Codex puts the standing instructions (the developer message, AGENTS.md's) after
    the user messages its compaction keeps: they stay in the new history, before the summary,
    with those messages, as Codex keeps them, and are not summarized away."""
    path = tmp_path / "rollout.jsonl"
    head = instructions_after_kept_messages(path)
    _, after = compact(read_transcript(str(path)), keep_recent_tokens=0)
    new = after.records[-3].raw["payload"]["replacement_history"]
    assert new[:3] == head
    assert new[3]["content"][0]["text"].startswith(SUMMARY_PREFIX)
    assert after.stats[-1].details["summarize"]["kept"]["head_messages"] == 3
    assert validate(after).errors == ()


def test_codex_lines_numbered_by_ordinal_get_the_next_numbers(tmp_path: Path) -> None:
    # Codex 0.150 and later number every line from 0 ("ordinal", after "timestamp")
    numbered = tmp_path / "numbered.jsonl"
    lines = []
    for i, line in enumerate(session("codex").read_bytes().splitlines()):
        raw = orjson.loads(line)
        lines.append(orjson.dumps({"timestamp": raw.pop("timestamp"), "ordinal": i, **raw}))
    numbered.write_bytes(b"\n".join(lines) + b"\n")
    before, after = compact(numbered, keep_recent_tokens=300)
    assert to_bytes(after).startswith(to_bytes(before))
    compacted, turn, count = (r.raw for r in after.records[-3:])
    assert len(before.records) == 40
    assert list(compacted) == ["timestamp", "ordinal", "type", "payload", "compactcli"]
    assert (compacted["ordinal"], turn["ordinal"], count["ordinal"]) == (40, 41, 42)
    assert list(turn) == list(count) == ["timestamp", "ordinal", "type", "payload"]
    assert validate(after).errors == ()


def test_pi_compaction_entry_names_the_first_kept_entry() -> None:
    before, after = compact(session("pi"), keep_recent_tokens=300)
    stats = after.stats[-1]
    tail = kept_tail(before, after)
    assert [before.line_of(m.index) for m in tail] == [15, 16, 17, 18, 19, 20, 21]
    assert to_bytes(after).startswith(to_bytes(before))
    entry = after.records[-1].raw
    assert list(entry) == [
        "type",
        "id",
        "parentId",
        "timestamp",
        "summary",
        "firstKeptEntryId",
        "tokensBefore",
        "details",
        "compactcli",
    ]
    assert entry["type"] == "compaction"
    assert len(entry["id"]) == 8 and int(entry["id"], 16) >= 0
    assert entry["parentId"] == before.records[-1].raw["id"]
    assert entry["timestamp"] == before.records[-1].raw["timestamp"]
    assert entry["firstKeptEntryId"] == tail[0].id == "5a026aac"
    assert entry["tokensBefore"] == stats.tokens_before
    assert entry["details"] == {
        "readFiles": ["src/report/export.py", "src/report/cli.py"],
        "modifiedFiles": [],
    }
    assert entry["summary"].startswith(PREAMBLE)
    assert validate(after).errors == ()
    after_context = context(after)
    assert after_context[0].summary and after_context[0].synthetic
    assert after_context[1:] == tail


def test_openai_list_is_rewritten_head_summary_tail() -> None:
    before, after = compact(session("openai"), keep_recent_tokens=300)
    tail = kept_tail(before, after)
    assert [before.line_of(m.index) for m in tail] == [14, 15, 16, 17, 18, 19, 20]
    old, new = lines(before), lines(after)
    assert new[0] == old[0]  # the system message
    assert new[2:] == old[13:]  # the kept tail, byte for byte
    summary = orjson.loads(new[1])
    assert list(summary) == ["role", "content", "compactcli"]
    assert summary["role"] == "user"
    assert summary["content"].startswith(PREAMBLE + "\n\n## Goal\n12 messages summarized")
    assert summary["compactcli"] == after.stats[-1].details["boundary"]
    assert summary["compactcli"]["facts"]["files_read"] == [
        "src/report/export.py",
        "src/report/cli.py",
    ]
    assert validate(after).errors == ()
    assert [m.role for m in context(after)] == ["system", "user", *(m.role for m in tail)]


def test_a_plain_list_keeps_its_other_lines_but_not_the_usage_of_what_was_summarized() -> None:
    before, after = compact(TRANSCRIPTS / "openai-kimi.jsonl", keep_recent_tokens=0)
    old, new = lines(before), lines(after)
    # _system_prompt and _checkpoint stay; the _usage line that measured the summarized turn
    # (line 6) goes with it; the kept tail (from line 7) is untouched
    assert new[:2] == old[:2]
    assert orjson.loads(new[2])["compactcli"]["stage"] == "summarize"
    assert new[3:] == old[6:]
    assert validate(after).errors == ()


def test_anthropic_summary_stands_alone_before_an_assistant_turn() -> None:
    before, after = compact(session("anthropic"), keep_recent_tokens=300)
    tail = kept_tail(before, after)
    assert tail[0].role == "assistant"
    assert [before.line_of(m.index) for m in tail] == [12, 13, 14, 15, 16, 17, 18]
    old, new = lines(before), lines(after)
    assert new[1:] == old[11:]
    summary = orjson.loads(new[0])
    assert summary["role"] == "user"
    assert summary["content"] == [
        {"type": "text", "text": summary["content"][0]["text"]},
    ]
    assert summary["content"][0]["text"].startswith(PREAMBLE)
    assert validate(after).errors == ()
    assert validate(after).warnings == ()


def test_anthropic_summary_merges_into_a_user_turn_when_no_assistant_can_start(
    tmp_path: Path,
) -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Background, at length: " + "details " * 400},
        {"role": "user", "content": [{"type": "text", "text": "Now write the summary."}]},
        {"role": "user", "content": "And keep it short."},
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
    ]
    path = tmp_path / "merge.jsonl"
    path.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in messages))
    before, after = compact(path, keep_recent_tokens=0)
    old, new = lines(before), lines(after)
    assert len(new) == 3
    assert new[1:] == old[2:]  # the rest of the tail, byte for byte
    merged = orjson.loads(new[0])
    text = merged["content"][0]["text"]
    assert text.startswith(PREAMBLE) and text.endswith(f"\n\n{CLOSING}")
    assert merged["content"][1:] == messages[1]["content"]
    assert merged["compactcli"]["stage"] == "summarize"
    assert validate(after).errors == ()
    again = summarize(
        after, SummarizeOptions(keep_recent_tokens=0), summarizer=FakeSummarizer(), counter=COUNTER
    )
    assert to_bytes(again) == to_bytes(after)


@pytest.mark.parametrize(
    ("fmt", "head", "start"),
    [
        ("openai", 3, 6),
        ("anthropic", 2, 4),
        ("codex", 7, 10),
        ("codex-legacy", 6, 11),
        ("openai-responses", 5, 10),
    ],
)
def test_the_final_pass_stubs_a_lost_result_and_drops_an_orphan(
    fmt: str, head: int, start: int
) -> None:
    """A cut that splits pairs (the stage never makes one) is still written paired."""
    before = read_transcript(str(session(fmt)))
    view = context(before)
    lost = [b.call_id for b in view[head - 1].tool_calls]
    orphan = [b.call_id for b in view[start].tool_results]
    assert lost and orphan  # the cut leaves calls without results and a result without call
    injection = Injection(
        view, Cut(head, start, 0), f"{PREAMBLE}\n\nshort", {"stage": "test"}, Facts(), 0, 0
    )
    after = before.evolve(records=get_writer(fmt).write(before, injection))
    assert validate(after).errors == ()
    results = {b.call_id: b for m in context(after) for b in m.tool_results}
    for call_id in lost:
        assert results[call_id].text == STUB_RESULT
    assert not set(orphan) & set(results)


def test_protected_head_messages_are_quoted_where_the_format_keeps_one_run(
    tmp_path: Path,
) -> None:
    fake = FakeSummarizer()
    before, after = compact(session("pi"), fake, keep_recent_tokens=300, protect_first=1)
    prompt = context(before)[0].text
    assert [m.text for m in fake.requests[0].messages].count(prompt) == 0
    assert len(fake.requests[0].messages) == 11
    summary = after.records[-1].raw["summary"]
    assert summary == (
        f"{PREAMBLE}\n\n{HEAD_HEADING}\n[user]\n{prompt}\n{HEAD_HEADING} ends\n\n"
        "## Goal\n11 messages summarized; files: src/report/export.py, src/report/cli.py"
    )
    # the quote is carried into the next summary with the same head
    grown = before.evolve(records=after.records)
    again = summarize(
        read_back(grown, tmp_path / "again.jsonl"),
        SummarizeOptions(keep_recent_tokens=0, protect_first=1),
        summarizer=FakeSummarizer(),
        counter=COUNTER,
    )
    assert again.stats[-1].changed
    assert (
        again.records[-1]
        .raw["summary"]
        .startswith(
            f"{PREAMBLE}\n\n{HEAD_HEADING}\n[user]\n{prompt}\n{HEAD_HEADING} ends\n\n## Goal\n"
        )
    )


# ---------------------------------------------------------------------------------------------
# Earlier summaries


@pytest.mark.parametrize(
    ("name", "where"),
    [
        ("claude-code-compacted.jsonl", "message"),
        ("codex-compacted.jsonl", "codex"),
        ("pi-compacted.jsonl", "summary"),
        ("pi-v1.jsonl", "summary"),
    ],
)
def test_the_agents_own_summary_is_updated_and_replaced(name: str, where: str) -> None:
    fake = FakeSummarizer()
    before, after = compact(TRANSCRIPTS / name, fake, keep_recent_tokens=0)
    assert after.stats[-1].changed, after.stats[-1].details
    old_summary = next(m for m in context(before) if m.summary)
    raw = before.records[old_summary.index].raw
    if where == "message":
        expected = raw["message"]["content"]
    elif where == "summary":
        expected = raw["summary"]
    else:
        expected = raw["payload"]["message"][len(SUMMARY_PREFIX) + 1 :]
    assert fake.requests[0].previous == expected
    assert all(not m.summary for m in fake.requests[0].messages)
    assert after.stats[-1].details["summarize"]["updated_earlier_summary"] is True
    summaries = [m for m in context(after) if m.summary]
    assert len(summaries) == 1 and PREAMBLE in summaries[0].text
    assert validate(after).errors == ()


NEXT_PROMPT = "Also add a --quote-all flag in src/report/quote.py."


def _continue(t: Transcript, path: Path) -> Transcript:
    """`t` with one more turn: a prompt, a Read of src/report/quote.py and an answer."""
    fmt = t.format
    out = [r.raw for r in t.records]
    output = "quote.py listing " * 60
    if fmt == "openai":
        out += [
            {"role": "user", "content": NEXT_PROMPT},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_next",
                        "type": "function",
                        "function": {
                            "name": "read_file",
                            "arguments": '{"path": "src/report/quote.py"}',
                        },
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_next", "content": output},
            {"role": "assistant", "content": "Added --quote-all."},
            {"role": "user", "content": "Thanks."},
            {"role": "assistant", "content": "You're welcome."},
        ]
    elif fmt == "claude-code":
        leaf = t.records[context(t)[-1].index].raw
        env = {k: leaf[k] for k in ("userType", "entrypoint", "cwd", "sessionId", "version")}

        def record(uuid: str, parent: str, kind: str, message: Any, **extra: Any) -> None:
            stamp = f"2026-04-02T11:00:{len(out) % 60:02d}.000Z"
            out.append(
                {
                    "parentUuid": parent,
                    "isSidechain": False,
                    "type": kind,
                    "message": message,
                    "uuid": uuid,
                    "timestamp": stamp,
                    **env,
                    **extra,
                }
            )

        def said(mid: str, block: Any) -> Any:
            return {"id": mid, "type": "message", "role": "assistant", "content": [block]}

        record("n1", leaf["uuid"], "user", {"role": "user", "content": NEXT_PROMPT})
        call = {"type": "tool_use", "id": "toolu_next", "name": "Read"}
        record("n2", "n1", "assistant", said("msg_n2", {**call, "input": {"file_path": "q.py"}}))
        result = {"type": "tool_result", "tool_use_id": "toolu_next", "content": output}
        record(
            "n3", "n2", "user", {"role": "user", "content": [result]}, sourceToolAssistantUUID="n2"
        )
        record("n4", "n3", "assistant", said("msg_n4", {"type": "text", "text": "Added."}))
        record("n5", "n4", "user", {"role": "user", "content": "Thanks."})
        record("n6", "n5", "assistant", said("msg_n6", {"type": "text", "text": "Welcome."}))
    else:
        raise AssertionError(fmt)
    path.write_bytes(b"".join(orjson.dumps(raw) + b"\n" for raw in out))
    return read_transcript(str(path))


@pytest.mark.parametrize("fmt", ["openai", "claude-code"])
def test_our_earlier_summary_is_updated_and_its_file_lists_carry_over(
    tmp_path: Path, fmt: str
) -> None:
    _, first = compact(session(fmt), keep_recent_tokens=300)
    grown = _continue(first, tmp_path / "grown.jsonl")
    fake = FakeSummarizer()
    _, second = compact(grown, fake, keep_recent_tokens=100)
    assert second.stats[-1].changed
    request = fake.requests[0]
    assert request.previous is not None
    assert request.previous.startswith("## Goal\n")
    assert not has_preamble(request.previous)
    earlier = first.stats[-1].details["boundary"]["facts"]["files_read"]
    assert len(earlier) == 2
    assert request.previous_facts is not None
    assert list(request.previous_facts.files_read) == earlier
    facts = second.stats[-1].details["boundary"]["facts"]
    assert facts["files_read"][:2] == earlier
    assert len(facts["files_read"]) == 3  # the file read after the first compaction
    summaries = [m for m in context(second) if m.summary]
    assert len(summaries) == 1
    assert validate(second).errors == ()
    assert context(second)[-1].text in ("You're welcome.", "Welcome.")


# ---------------------------------------------------------------------------------------------
# What never happens


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_a_second_run_with_the_same_options_changes_nothing(tmp_path: Path, fmt: str) -> None:
    _, first = compact(session(fmt), keep_recent_tokens=300)
    reread = read_back(first, tmp_path / "first.jsonl")
    _, second = compact(reread, keep_recent_tokens=300)
    assert to_bytes(second) == to_bytes(first)
    assert second.stats[-1].details["reason"] == (
        "nothing to summarize but the earlier summary: the rest is kept"
    )


@pytest.mark.parametrize("path", sorted(TRANSCRIPTS.glob("*.jsonl")), ids=lambda p: p.name)
def test_default_summarize_of_a_small_transcript_is_a_byte_exact_no_op(path: Path) -> None:
    result = run("summarize", str(path))
    assert result.exit_code == 0
    assert result.stdout_bytes == path.read_bytes()
    assert result.stderr.startswith(f"{path}: unchanged: ")


def test_a_summary_that_would_not_make_the_context_smaller_is_not_used() -> None:
    before, after = compact(
        session("openai"), FakeSummarizer(text="word " * 20_000), keep_recent_tokens=300
    )
    assert after.records is before.records
    reason = after.stats[-1].details["reason"]
    assert reason.startswith("the summary would not make the context smaller (")
    assert after.stats[-1].details["summarize"]["summarizer"] == "fake"


def test_a_result_that_fails_a_check_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    from compactcli.injection import get_writer
    from compactcli.stages import summarize as stage

    class DropsTheLeaf:
        def __init__(self, writer: Any) -> None:
            self.writer = writer

        def __getattr__(self, name: str) -> Any:
            return getattr(self.writer, name)

        def write(self, transcript: Transcript, injection: Any) -> Any:
            records = self.writer.write(transcript, injection)
            return records[:-1] if len(records) > 2 else records

    monkeypatch.setattr(stage, "get_writer", lambda fmt: DropsTheLeaf(get_writer(fmt)))
    before, after = compact(session("openai"), keep_recent_tokens=300)
    assert after.records is before.records
    assert (
        after.stats[-1]
        .details["reason"]
        .startswith(
            "the result failed a check and was not used: the context no longer ends with the kept tail"
        )
    )


def test_stats_say_what_was_summarized() -> None:
    before, after = compact(session("pi"), keep_recent_tokens=300, focus="delimiter")
    stats = after.stats[-1]
    assert (stats.stage, stats.method, stats.changed) == ("summarize", "heuristic", True)
    heuristic = EstimateOptions(method="heuristic")  # as `estimate` counts each context
    assert stats.tokens_after == estimate(after, heuristic, counter=COUNTER).tokens
    assert stats.tokens_before == estimate(before, heuristic, counter=COUNTER).tokens
    assert (stats.messages_before, stats.messages_after) == (19, 8)
    assert (stats.records_before, stats.records_after) == (21, 22)
    info = stats.details["summarize"]
    assert {k: info[k] for k in ("summarizer", "model", "llm_calls", "cost", "fallback")} == {
        "summarizer": "fake",
        "model": "fake-1",
        "llm_calls": 1,
        "cost": 0.5,
        "fallback": None,
    }
    assert (info["prompt_tokens"], info["completion_tokens"]) == (100, 20)
    assert info["messages_summarized"] == 12
    assert info["range"] == {
        "first": {"id": "5a003dde", "line": 3},
        "last": {"id": "5a022cce", "line": 14},
    }
    boundary = stats.details["boundary"]
    assert boundary["stage"] == "summarize"
    assert boundary["source_sha256"] == before.sha256
    assert boundary["focus"] == "delimiter"
    assert boundary["tokens_after"] == stats.tokens_after
    assert boundary["summary_tokens"] == info["summary_tokens"] > 0


# ---------------------------------------------------------------------------------------------
# The command


def test_summarize_command_writes_stats_and_boundary_files(tmp_path: Path) -> None:
    stats, boundary, out = tmp_path / "s.jsonl", tmp_path / "b.json", tmp_path / "o.jsonl"
    source = session("openai")
    result = run(
        "summarize",
        str(source),
        "--keep-recent-tokens",
        "300",
        "--stats",
        str(stats),
        "--boundary",
        str(boundary),
        "-o",
        str(out),
    )
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")
    report = orjson.loads(stats.read_bytes())
    stage = report["stages"][0]
    assert stage["stage"] == "summarize"
    assert stage["details"]["summarize"]["summarizer"] == "extractive"
    assert report["tokens_after"] < report["tokens_before"]
    details = orjson.loads(boundary.read_bytes())
    assert details == stage["details"]["boundary"]
    written = read_transcript(str(out))
    assert validate(written).errors == ()
    recorded = orjson.loads(out.read_bytes().splitlines()[1])["compactcli"]
    assert recorded.pop("undo")["source_sha256"] == details["source_sha256"]  # for restore
    assert recorded == details


def test_prune_then_summarize_in_a_pipe() -> None:
    source = session("claude-code")
    pruned = run("prune", str(source), "--keep-recent", "1", "--min-chars", "50")
    assert pruned.exit_code == 0
    summarized = run("summarize", "--keep-recent-tokens", "300", input=pruned.stdout_bytes)
    assert summarized.exit_code == 0, summarized.stderr
    assert summarized.stdout_bytes.startswith(pruned.stdout_bytes)
    assert len(summarized.stdout_bytes.splitlines()) == len(pruned.stdout_bytes.splitlines()) + 2


def test_dry_run_shows_the_diff_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    result = run(
        "summarize",
        str(session("openai")),
        "--keep-recent-tokens",
        "300",
        "--dry-run",
        "-o",
        str(out),
    )
    assert result.exit_code == 0
    assert not out.exists()
    first = result.stdout.splitlines()[0]
    assert first == "records: 20 -> 9  kept 8, cleared 0, edited 0, removed 12, added 1"


LLM_ANSWER = """\
## Goal
Quoted CSV fields must keep their commas; add a --delimiter option.

## Constraints and preferences
- Never change the signature of export_rows().

## Progress
### Done
- export_rows() writes through csv.writer; parse_rows() reads with csv.reader.
### In progress
- none
### Blocked
- none

## Key decisions
- Use the csv module instead of joining with commas.

## Resolved questions
- none

## Pending user asks
- none

## Relevant files
- src/report/export.py
- src/report/cli.py

## Remaining work
- none

## Critical context
- tests/test_export.py passes (4 tests)."""


@pytest.mark.llm
def test_llm_summary_from_a_local_server_is_used(tmp_path: Path) -> None:
    from tests.llm_server import ok, serve

    stats = tmp_path / "stats.jsonl"
    with serve(ok(LLM_ANSWER, prompt_tokens=2000, completion_tokens=150)) as server:
        result = run(
            "summarize",
            str(session("pi")),
            "--keep-recent-tokens",
            "300",
            "--summarizer",
            "llm",
            "--model",
            "openai/test-model",
            "--api-base",
            server.url,
            "--stats",
            str(stats),
        )
    assert (result.exit_code, result.stderr) == (0, "")
    assert len(server.requests) == 1
    entry = orjson.loads(result.stdout_bytes.splitlines()[-1])
    assert entry["summary"].startswith(f"{PREAMBLE}\n\n{LLM_ANSWER}")
    info = orjson.loads(stats.read_bytes())["stages"][0]["details"]["summarize"]
    assert {k: info[k] for k in ("summarizer", "model", "llm_calls", "fallback")} == {
        "summarizer": "llm",
        "model": "openai/test-model",
        "llm_calls": 1,
        "fallback": None,
    }
    assert (info["prompt_tokens"], info["completion_tokens"]) == (2000, 150)


@pytest.mark.llm
def test_a_failing_llm_server_falls_back_to_the_extractive_summary_and_says_so(
    tmp_path: Path,
) -> None:
    from tests.llm_server import error, serve

    stats = tmp_path / "stats.jsonl"
    with serve(error(400, "bad parameter")) as server:
        result = run(
            "summarize",
            str(session("pi")),
            "--keep-recent-tokens",
            "300",
            "--summarizer",
            "llm",
            "--model",
            "openai/test-model",
            "--api-base",
            server.url,
            "--stats",
            str(stats),
        )
    assert result.exit_code == 0
    assert result.stderr == (
        f"warning: {session('pi')}: llm summarizer: HTTP 400: bad parameter (1 call); "
        "the extractive summary was used\n"
    )
    info = orjson.loads(stats.read_bytes())["stages"][0]["details"]["summarize"]
    assert (info["summarizer"], info["fallback"]) == (
        "extractive",
        "HTTP 400: bad parameter (1 call)",
    )
    assert validate(read_transcript(str(session("pi")))).errors == ()
    assert orjson.loads(result.stdout_bytes.splitlines()[-1])["type"] == "compaction"


def test_dry_run_of_a_claude_code_session_lists_the_two_records_it_adds() -> None:
    result = run(
        "summarize", str(session("claude-code")), "--keep-recent-tokens", "300", "--dry-run"
    )
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "records: 22 -> 24  kept 22, cleared 0, edited 0, removed 0, added 2"
    assert lines[2] == (
        "first change: new line 23 (added system compact_boundary); prompt cache breaks here"
    )
    assert [line.split()[:4] for line in lines[3:]] == [
        ["added", "-", "23", "system"],
        ["added", "-", "24", "user"],
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--summarizer", "abstract"],
            "error: --summarizer must be one of extractive, llm, not 'abstract'\n",
        ),
        (
            ["--summarizer", "llm"],
            "error: the llm summarizer needs a model: pass --model (or COMPACTCLI_MODEL)\n",
        ),
        (["--method", "exactly"], "error: --method must be heuristic or exact, not 'exactly'\n"),
    ],
)
def test_bad_options_exit_2_with_one_line(args: list[str], message: str) -> None:
    result = run("summarize", str(session("openai")), *args)
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", message)


# ---------------------------------------------------------------------------------------------
# Properties over generated transcripts in every format


def _pairs(t: Transcript) -> tuple[set[str], set[str]]:
    calls: set[str] = set()
    orphans: set[str] = set()
    answered: set[str] = set()
    for message in context(t):
        for block in message.blocks:
            if block.kind == "tool_call" and block.call_id:
                calls.add(block.call_id)
            elif block.kind == "tool_result" and block.call_id:
                (answered if block.call_id in calls else orphans).add(block.call_id)
    return calls - answered, orphans


def _prompts(t: Transcript) -> Iterator[str]:
    """What the person typed (a skill's body after it is not), and the summaries' text."""
    for message in context(t):
        if is_prompt(message) or (message.role == "user" and has_preamble(message.text)):
            yield from (b.text for b in message.blocks if b.kind == "text")


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    plan=plans(),
    keep=st.sampled_from([0, 60, 400]),
    protect=st.sampled_from([0, 1, 3]),
    extractive=st.booleans(),
)
def test_summarize_properties_in_every_format(
    tmp_path: Path, fmt: str, plan: Plan, keep: int, protect: int, extractive: bool
) -> None:
    path = tmp_path / f"{fmt}.jsonl"
    path.write_bytes(render(plan, fmt))
    backend = get_summarizer("extractive") if extractive else FakeSummarizer()
    options = SummarizeOptions(keep_recent_tokens=keep, protect_first=protect)
    before, after = compact(path, backend, keep_recent_tokens=keep, protect_first=protect)
    stats = after.stats[-1]
    assert validate(after).errors == ()
    assert stats.tokens_after <= stats.tokens_before
    unanswered_before, _ = _pairs(before)
    unanswered_after, orphans = _pairs(after)
    assert orphans == set()
    assert unanswered_after <= unanswered_before
    last_prompt = list(_prompts(before))[-1]
    assert any(last_prompt in text for text in _prompts(after))
    if not stats.changed:
        assert to_bytes(after) == to_bytes(before)
        return
    tail = kept_tail(before, after)
    new_context = context(after)
    assert [shape(m) for m in new_context[len(new_context) - len(tail) :]] == [
        shape(m) for m in tail
    ]
    if fmt in ("claude-code", "codex", "pi"):
        assert to_bytes(after).startswith(to_bytes(before))
    else:
        merged = new_context[len(new_context) - len(tail)].summary
        tail_bytes = b"".join(lines(before)[tail[1 if merged else 0].index :])
        assert to_bytes(after).endswith(tail_bytes)
    again = summarize(
        read_back(after, tmp_path / "again.jsonl"),
        options,
        summarizer=backend,
        counter=COUNTER,
    )
    assert to_bytes(again) == to_bytes(after)


# ---------------------------------------------------------------------------------------------
# Real transcripts


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus not present")
@pytest.mark.parametrize(
    "name", sorted(p.name for p in CORPUS.glob("*.jsonl")) if CORPUS.is_dir() else []
)
@pytest.mark.parametrize("keep", [2_000, 20_000])
def test_summarize_on_real_transcripts(tmp_path: Path, name: str, keep: int) -> None:
    before = read_transcript(str(CORPUS / name))
    counter = get_counter("heuristic", model=get_dialect(before.format).model(before))
    extractive = get_summarizer("extractive")
    options = SummarizeOptions(keep_recent_tokens=keep)
    after = summarize(before, options, summarizer=extractive, counter=counter)
    assert validate(after).errors == ()
    stats = after.stats[-1]
    if not stats.changed:
        assert after.records is before.records
        return
    tail = kept_tail(before, after)
    new_context = context(after)
    assert same_units(tail, new_context[len(new_context) - len(tail) :])
    assert stats.tokens_after < stats.tokens_before
    assert stats.tokens_after == sum(counter.message_tokens(m) for m in new_context)
    again = summarize(
        read_back(after, tmp_path / "again.jsonl"), options, summarizer=extractive, counter=counter
    )
    assert to_bytes(again) == to_bytes(after)


# ---------------------------------------------------------------------------------------------
# --cut-turn: a turn larger than the kept tail is cut, its prompt quoted verbatim

PINNED = {
    "claude-code": 2,
    "codex": 6,
    "codex-legacy": 5,
    "pi": 13,
    "openai": 2,
    "openai-responses": 2,
    "anthropic": 3,
}


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_a_single_prompt_session_is_cut_inside_its_turn_and_the_prompt_quoted(fmt: str) -> None:
    path = TRANSCRIPTS / f"{fmt}-session.jsonl"
    before = read_transcript(path)
    dialect = get_dialect(fmt)
    prompts = [m for m in dialect.context(before) if is_prompt(m)]
    options = SummarizeOptions(keep_recent_tokens=100, cut_turn=True)
    counter = get_counter("heuristic", format=fmt)
    after = summarize(before, options, summarizer=get_summarizer("extractive"), counter=counter)
    stats = after.stats[-1]
    assert stats.changed and stats.tokens_after < stats.tokens_before
    assert stats.details["summarize"]["pinned_prompt"]["line"] == PINNED[fmt]
    assert before.line_of(prompts[-1].index) == PINNED[fmt]
    assert validate(after).errors == ()
    summary = next(m for m in dialect.context(after) if m.summary or "compactcli" in m.text)
    quoted = f"{REQUEST_HEADING}\n{prompts[-1].text}"
    assert quoted in summary.text
    # the preamble names the quoted request as the task to carry on
    assert TASK_PREAMBLE in summary.text and PREAMBLE not in summary.text
    # a second run finds nothing more worth summarizing and changes nothing
    again = summarize(after, options, summarizer=get_summarizer("extractive"), counter=counter)
    assert to_bytes(again) == to_bytes(after)


SKILL_SESSION = TRANSCRIPTS / "claude-code-skill.jsonl"
CLAUDE_CODE_CLOSING = "Recent messages are preserved verbatim."


def summarize_skill_session(transcript: Transcript, **options: Any) -> tuple[Transcript, str]:
    """The skill session summarized with `options`, and its summary's text."""
    after = summarize(
        transcript,
        SummarizeOptions(**options),
        summarizer=get_summarizer("extractive"),
        counter=get_counter("heuristic", format="claude-code"),
    )
    assert after.stats[-1].changed and validate(after).errors == ()
    summary = next(m for m in get_dialect("claude-code").context(after) if has_preamble(m.text))
    return after, summary.text


def test_a_skill_turn_is_kept_from_the_command_the_user_typed() -> None:
    before = read_transcript(SKILL_SESSION)
    after, summary = summarize_skill_session(before, keep_recent_tokens=300)
    kept = [m for m in get_dialect("claude-code").context(after) if not has_preamble(m.text)]
    # the tail opens on /release-notes (line 7), with the skill's body (line 8) after it
    assert [after.line_of(m.index) for m in kept[:2]] == [7, 8]
    assert "/release-notes" not in summary


def test_a_cut_skill_turn_quotes_the_command_and_names_the_skill_file() -> None:
    after, summary = summarize_skill_session(
        read_transcript(SKILL_SESSION), keep_recent_tokens=100, cut_turn=True
    )
    assert after.stats[-1].details["summarize"]["pinned_prompt"]["line"] == 7
    assert summary.endswith(f"{REQUEST_HEADING}\n/release-notes 2.3.0\n\n{CLAUDE_CODE_CLOSING}")
    lines = summary.splitlines()
    read = lines[lines.index("## Files read") + 1 :]
    assert read[:3] == [
        "- /home/dana/.claude/skills/release-notes/SKILL.md",
        "- CHANGELOG.md",  # under the session's working directory: named as the agent does
        "",
    ]
    # the body is not copied, its binding lines are kept with the skill's name
    rules = summary[summary.index("\n- Skill release-notes:\n") :].splitlines()[2:5]
    assert "  - 5. Never rewrite an existing section." in rules
    assert "Group the merged pull requests" not in summary


def test_a_quoted_request_leaves_out_the_ide_selection_sent_with_it() -> None:
    before = read_transcript(SKILL_SESSION)
    first_turn = before.evolve(records=before.records[:6])  # the prompt and its work
    _, summary = summarize_skill_session(first_turn, keep_recent_tokens=40, cut_turn=True)
    assert summary.endswith(
        f"{REQUEST_HEADING}\nThe changelog stops at 2.2.0 but we merged a lot since. Find what "
        f"went in after the v2.2.0 tag, and don't touch the 2.2.0 section.\n\n{CLAUDE_CODE_CLOSING}"
    )
    assert "ide_selection" not in summary and "CHANGELOG.md:" not in summary


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_a_cut_turn_summary_points_to_the_quoted_request_instead_of_repeating_it(fmt: str) -> None:
    before = read_transcript(TRANSCRIPTS / f"{fmt}-summarize-session.jsonl")
    after = summarize(
        before,
        SummarizeOptions(keep_recent_tokens=100, cut_turn=True),
        summarizer=get_summarizer("extractive"),
        counter=get_counter("heuristic", format=fmt),
    )
    assert after.stats[-1].details["summarize"]["pinned_prompt"] is not None
    summary = next(m for m in get_dialect(fmt).context(after) if has_preamble(m.text)).text
    assert TASK_PREAMBLE in summary and PREAMBLE not in summary
    lines = summary.splitlines()
    messages = lines[lines.index("## User messages (oldest first)") + 1 :]
    assert messages[:4] == [
        "1. (the goal above)",
        "2. Thanks. Now add a --delimiter option to the export command in src/report/cli.py.",
        "3. (the latest request below)",
        "",
    ]
    pending = lines[lines.index("## Pending asks and todos") + 1 :]
    assert pending[:3] == ["- Ask: (the latest request below)", "", REQUEST_HEADING]
    assert pending[3] == "Does it work with tabs?"
    assert summary.count("Does it work with tabs?") == 1


@pytest.mark.parametrize("cut_turn", [True, False])
def test_a_turn_under_the_ceiling_keeps_its_prompt_in_the_tail(cut_turn: bool) -> None:
    before = read_transcript(TRANSCRIPTS / "codex-session.jsonl")
    after = summarize(
        before,
        SummarizeOptions(keep_recent_tokens=20_000, cut_turn=cut_turn),
        summarizer=get_summarizer("extractive"),
        counter=get_counter("heuristic", format="codex"),
    )
    assert to_bytes(after) == to_bytes(before)
    assert after.stats[-1].details["reason"] == (
        "nothing to summarize before the last user prompt (message 3 of 17), "
        "which is kept with everything after it; its turn (980 tokens) is within 1.5 times the "
        "kept tail (20,000 tokens)"
    )


def test_without_cut_turn_a_prompt_after_earlier_turns_stays_in_the_tail() -> None:
    before = read_transcript(TRANSCRIPTS / "codex-summarize-session.jsonl")
    dialect = get_dialect("codex")
    last = [m for m in dialect.context(before) if is_prompt(m)][-1]
    after = summarize(
        before,
        SummarizeOptions(keep_recent_tokens=100),
        summarizer=get_summarizer("extractive"),
        counter=get_counter("heuristic", format="codex"),
    )
    info = after.stats[-1].details["summarize"]
    assert after.stats[-1].changed and "pinned_prompt" not in info
    context = dialect.context(after)
    summary = next(m for m in context if has_preamble(m.text))
    assert PREAMBLE in summary.text and REQUEST_HEADING not in summary.text
    assert [m.text for m in context if is_prompt(m)][-1] == last.text


def test_keep_recent_tokens_is_read_from_its_variable_as_prune_and_compact_read_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = str(session("claude-code"))
    monkeypatch.setenv("COMPACTCLI_KEEP_RECENT_TOKENS", "300")
    from_variable = run("summarize", path)
    assert from_variable.exit_code == 0
    assert (
        from_variable.stdout_bytes
        == run("summarize", path, "--keep-recent-tokens", "300").stdout_bytes
    )
    assert (
        from_variable.stdout_bytes
        != run("summarize", path, "--keep-recent-tokens", "20000").stdout_bytes
    )


@pytest.mark.parametrize(
    ("name", "cwd"),
    [
        ("claude-code-session.jsonl", "/home/dana/src/almanac"),
        ("codex-session.jsonl", None),  # read from the file below
    ],
)
def test_the_summary_names_files_as_the_agent_working_in_its_directory_does(
    name: str, cwd: str | None
) -> None:
    fake = FakeSummarizer()
    before, _ = compact(TRANSCRIPTS / name, fake, keep_recent_tokens=0)
    expected = get_dialect(before.format).cwd(before)
    assert expected and fake.requests[0].cwd == expected
    assert cwd is None or expected == cwd
    _, after = compact(TRANSCRIPTS / name, get_summarizer("extractive"), keep_recent_tokens=0)
    summary = next(m.text for m in get_dialect(after.format).context(after) if m.summary)
    listed = summary[summary.index("## Files") :].split("\n\n## ")[0].splitlines()[1:]
    assert listed and all(line.startswith("- ") for line in listed)
    assert not any(expected.rstrip("/") + "/" in line for line in listed)


AGENT_SUMMARY = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The summary below covers the earlier portion of the conversation.\n\nSummary:\n"
    "1. Primary Request and Intent:\n   Add a --delimiter option to the export command.\n"
)


def _agent_compacts(t: Transcript, path: Path, rewound_to: str | None = None) -> Transcript:
    """`t` compacted by Claude Code itself (a boundary and its summary, which says nothing of
    the rule our summary recorded), then one more turn; with `rewound_to`, first a prompt on a
    branch from that record (the session rewound to before the last compaction)."""
    leaf = t.records[context(t)[-1].index].raw
    env = {k: leaf[k] for k in ("userType", "entrypoint", "cwd", "sessionId", "version")}
    out = [r.raw for r in t.records]
    if rewound_to is not None:
        leaf = {
            "parentUuid": rewound_to,
            "isSidechain": False,
            "type": "user",
            "message": {"role": "user", "content": "Start over from the export fix."},
            "uuid": "rewound-prompt",
            "timestamp": "2026-04-02T10:58:00.000Z",
            **env,
        }
        out.append(leaf)
    out.append(
        {
            "parentUuid": None,
            "logicalParentUuid": leaf["uuid"],
            "isSidechain": False,
            "type": "system",
            "subtype": "compact_boundary",
            "content": "Conversation compacted",
            "timestamp": "2026-04-02T10:59:00.000Z",
            "uuid": "agent-boundary",
            "level": "info",
            "compactMetadata": {"trigger": "auto", "preTokens": 9000, "postTokens": 900},
            **env,
        }
    )
    out.append(
        {
            "parentUuid": "agent-boundary",
            "isSidechain": False,
            "type": "user",
            "message": {"role": "user", "content": AGENT_SUMMARY},
            "isCompactSummary": True,
            "isVisibleInTranscriptOnly": True,
            "uuid": "agent-summary",
            "timestamp": "2026-04-02T10:59:01.000Z",
            **env,
        }
    )
    path.write_bytes(b"".join(orjson.dumps(raw) + b"\n" for raw in out))
    return _continue(read_transcript(str(path)), path)


def test_our_facts_outlive_the_agents_own_compaction_of_our_summary(tmp_path: Path) -> None:
    """compactcli, then Claude Code's own compaction (written from our summary, dropping the
    user's rule), then compactcli again: the rule and the rest our summary recorded are carried
    on beside the agent's summary, which is kept too."""
    extractive = get_summarizer("extractive")
    _, first = compact(session("claude-code"), extractive, keep_recent_tokens=300)
    recorded = first.stats[-1].details["boundary"]["facts"]
    assert recorded["constraints"] == ["Never change the signature of export_rows()."]
    grown = _agent_compacts(first, tmp_path / "grown.jsonl")
    assert [m.text for m in context(grown) if m.summary] == [AGENT_SUMMARY]
    fake = FakeSummarizer()
    compact(grown, fake, keep_recent_tokens=100)
    request = fake.requests[0]
    assert request.facts_replaced is True
    assert request.previous is not None and "--delimiter" in request.previous
    assert request.previous_facts is not None
    assert request.previous_facts.constraints == tuple(recorded["constraints"])
    assert request.previous_facts.files_modified == tuple(recorded["files_modified"])

    _, third = compact(grown, extractive, keep_recent_tokens=100)
    assert third.stats[-1].changed
    text = next(m.text for m in context(third) if m.summary)
    assert "Never change the signature of export_rows()." in text
    assert "src/report/export.py" in text
    assert "## Earlier summary" in text and "Add a --delimiter option" in text
    assert validate(third).errors == ()


def test_our_facts_on_a_branch_the_session_left_are_not_carried(tmp_path: Path) -> None:
    """The session rewound to before our compaction, then the agent compacted that branch: what
    our summary recorded was left behind on purpose and does not come back."""
    extractive = get_summarizer("extractive")
    source, first = compact(session("claude-code"), extractive, keep_recent_tokens=300)
    rewound = source.records[context(source)[0].index].raw["uuid"]
    grown = _agent_compacts(first, tmp_path / "grown.jsonl", rewound_to=rewound)
    fake = FakeSummarizer()
    compact(grown, fake, keep_recent_tokens=100)
    assert fake.requests[0].facts_replaced is False
    assert fake.requests[0].previous_facts is None


def test_the_agents_own_compaction_of_raw_turns_carries_no_facts(tmp_path: Path) -> None:
    """The same compaction over turns never compacted by us: nothing of ours to carry on."""
    fake = FakeSummarizer()
    grown = _agent_compacts(read_transcript(str(session("claude-code"))), tmp_path / "g.jsonl")
    _, after = compact(grown, fake, keep_recent_tokens=100)
    assert after.stats[-1].changed
    assert fake.requests[0].previous_facts is None
    assert fake.requests[0].facts_replaced is False


def test_the_default_summary_budget_is_a_tenth_of_what_it_replaces_up_to_12000() -> None:
    """Long sessions get room for their facts: 12,000 tokens for 300,000 replaced (a budget of
    8,000 left a third of the decisions a person needs out of the longest real sessions), and
    never more than half of what a short middle holds."""
    assert default_summary_tokens(300_000) == 12_000
    assert default_summary_tokens(90_000) == 9_000
    assert default_summary_tokens(2_000) == 400
    assert default_summary_tokens(500) == 250
