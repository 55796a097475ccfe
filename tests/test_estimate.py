"""`estimate`: every method on a transcript whose numbers are worked out by hand, the streaming
reader against the whole-file views, windows and thresholds, and the command line."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings

from compactcli import get_dialect, read_transcript
from compactcli.errors import InputError, UsageError
from compactcli.estimate import (
    EstimateOptions,
    EstimateReport,
    estimate,
    estimate_file,
    failures,
)
from compactcli.estimate_reader import read_lines
from compactcli.estimate_usage import usage_deltas
from compactcli.formats.base import BufferingStreamer, light
from compactcli.formats.claude_code.stream import ClaudeCodeStreamer
from compactcli.jsonl import iter_records
from compactcli.limits import (
    Limits,
    default_threshold,
    model_limits,
    parse_threshold,
    threshold,
)
from compactcli.tokens import TiktokenCounter, get_counter, load_encoding
from tests.cli_runner import run
from tests.conftest import CORPUS, FIXTURES
from tests.transcript_strategies import plans, render

TRANSCRIPTS = sorted((FIXTURES / "transcripts").glob("*.jsonl"))
CORPUS_FILES = sorted(CORPUS.glob("*.jsonl")) if CORPUS.is_dir() else []
METHODS = ("auto", "heuristic", "usage", "calibrated")

# ---------------------------------------------------------------------------------------------
# A Claude Code session small enough to count by hand


def _record(kind: str, uuid: str, parent: str | None, ts: int, **body: Any) -> dict[str, Any]:
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/repo",
        "sessionId": "s-1",
        "version": "2.1.120",
        "type": kind,
        **body,
        "uuid": uuid,
        "timestamp": f"2026-01-01T10:00:0{ts}.000Z",
    }


def _assistant(uuid: str, parent: str, ts: int, mid: str, block: Any, usage: Any) -> Any:
    message = {
        "model": "claude-opus-4-6",
        "id": mid,
        "type": "message",
        "role": "assistant",
        "content": [block],
        "stop_reason": None,
        "usage": usage,
    }
    return _record("assistant", uuid, parent, ts, message=message, requestId="req_" + mid)


FIRST = {
    "input_tokens": 3,
    "cache_creation_input_tokens": 1000,
    "cache_read_input_tokens": 9000,
    "output_tokens": 400,
}  # 10,403 in context
SECOND = {
    "input_tokens": 1,
    "cache_creation_input_tokens": 100,
    "cache_read_input_tokens": 10400,
    "output_tokens": 50,
}  # 10,551 in context
LISTING = "     1\tdef f():\n     2\t    return 1"
SESSION = [
    _record("user", "u1", None, 0, message={"role": "user", "content": "Fix the bug in app.py"}),
    _assistant(
        "a1", "u1", 1, "msg_1", {"type": "thinking", "thinking": "", "signature": "c2ln"}, FIRST
    ),
    _assistant(
        "a2",
        "a1",
        2,
        "msg_1",
        {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "app.py"}},
        FIRST,
    ),
    _record(
        "user",
        "r1",
        "a2",
        3,
        message={
            "role": "user",
            "content": [{"tool_use_id": "toolu_1", "type": "tool_result", "content": LISTING}],
        },
        toolUseResult={"type": "text", "file": {"filePath": "app.py", "content": "def f()"}},
        sourceToolAssistantUUID="a2",
    ),
    _assistant("a3", "r1", 4, "msg_2", {"type": "text", "text": "Fixed."}, SECOND),
    {"type": "ai-title", "sessionId": "s-1", "aiTitle": "Fix the bug"},
    _record("user", "u2", "a3", 5, message={"role": "user", "content": "thanks"}),
]
# The rules (Claude density: prose 3.4, tool output 2.6, JSON 2.2 characters per token, 2.5
# per numbered line, 15 per message, 50 per tool block):
#   prompt      15 + 21/3.4 (6)                                   = 21
#   thinking    15 + 0 (the file keeps only a signature)          = 15
#   tool call   15 + 50 + "Read" (1) + {"file_path":"app.py"} (10) = 76
#   result      15 + 50 + 35/2.6 (13) + 2 numbered lines (5)      = 83
#   answer      15 + "Fixed." (2)                                 = 17
#   thanks      15 + "thanks" (2)                                 = 17   -> 229
# msg_1 recorded 400 output tokens for 91 counted (309 more, thinking), msg_2 50 for 17 (33):
# 229 + 342 = 571.


@pytest.fixture
def session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "cc.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in SESSION))
    return path


def _estimate(path: Path, method: str, **options: Any) -> EstimateReport:
    return estimate_file(path.name, EstimateOptions(method=method, **options))


def test_heuristic_counts_every_block_by_its_rule(session: Path) -> None:
    report = _estimate(session, "heuristic")
    assert (report.method, report.tokens, report.file_tokens) == ("heuristic", 571, 571)
    assert (report.records, report.messages, report.context_messages) == (7, 6, 6)
    assert report.by_role == {"assistant": 450, "user": 121}
    assert report.by_block == {
        "thinking": 342,
        "message": 90,
        "tool_result": 68,
        "tool_call": 61,
        "text": 10,
    }
    assert report.by_tool == {"Read": 129}
    assert sum(report.by_role.values()) == sum(report.by_block.values()) == report.tokens


def test_auto_is_the_last_recorded_usage_plus_what_follows_it(session: Path) -> None:
    report = _estimate(session, "auto")
    assert (report.method, report.tokens, report.after_usage) == ("usage+heuristic", 10568, 17)
    assert report.usage is not None
    assert report.usage.to_dict() == {
        "tokens": 10551,
        "input": 1,
        "output": 50,
        "cached": 10400,
        "line": 5,
        "requests": 2,
    }
    assert (report.file_tokens, report.file_tokens_method) == (571, "heuristic")


def test_usage_is_exactly_what_the_agent_recorded(session: Path) -> None:
    report = _estimate(session, "usage")
    assert (report.method, report.tokens) == ("usage", 10551)


def test_calibrated_fits_the_growth_between_anchors(session: Path) -> None:
    report = _estimate(session, "calibrated")
    assert report.calibration is not None
    assert report.calibration.to_dict() == {
        "factor": 1.8056,
        "chars_per_token": 1.44,
        "deltas": 1,
        "overhead": 9977,
    }
    assert (report.method, report.tokens, report.file_tokens) == ("calibrated", 10569, 592)
    records = list(iter_records(session.name))
    heuristic, no_fit = usage_deltas(records, "claude-code")
    assert [(d.first_line, d.last_line, d.recorded, d.estimated) for d in heuristic] == [
        (3, 5, 148, 133)  # the result (83) and the answer's recorded output (50)
    ]
    assert no_fit is None
    fitted, factor = usage_deltas(records, "claude-code", fit=True)
    assert factor is not None and round(factor, 4) == 1.8056
    assert [d.recorded for d in fitted] == [148]
    assert all(abs(d.estimated - d.recorded) <= 1 for d in fitted)  # the fit, to rounding


def test_exact_counts_text_with_tiktoken(session: Path) -> None:
    report = _estimate(session, "exact")
    assert (report.method, report.tokens, report.breakdown_method) == ("exact", 565, "exact")
    assert report.by_role == {"assistant": 450, "user": 115}
    encoding = load_encoding("o200k_base")
    assert len(encoding.encode_ordinary(LISTING)) + 50 == report.by_block["tool_result"]


@pytest.mark.parametrize("method", ["auto", "usage", "calibrated"])
def test_without_recorded_usage_the_heuristic_answers(method: str) -> None:
    report = estimate_file(
        str(FIXTURES / "transcripts" / "openai-session.jsonl"), EstimateOptions(method=method)
    )
    assert (report.method, report.tokens, report.usage, report.calibration) == (
        "heuristic",
        478,
        None,
        None,
    )
    assert (report.context_window, report.threshold, report.threshold_spec) == (
        200000,
        160000,
        "80%",
    )
    assert report.context_window_source == "default: no model named"


def test_codex_window_is_the_one_codex_recorded() -> None:
    report = estimate_file(str(FIXTURES / "transcripts" / "codex-session.jsonl"))
    assert (report.method, report.tokens, report.model) == ("usage", 11602, "gpt-5.5")
    assert (report.context_window, report.context_window_source) == (
        258400,
        "recorded in the transcript",
    )
    assert (report.threshold, report.threshold_spec) == (232560, "codex")
    named = estimate_file(
        str(FIXTURES / "transcripts" / "codex-session.jsonl"), EstimateOptions(model="gpt-4o")
    )
    assert (named.context_window, named.threshold) == (128000, 115200)


def test_statuses_and_what_is_over(session: Path) -> None:
    assert _estimate(session, "auto").status == "ok"
    over_threshold = _estimate(session, "auto", threshold="5%")
    assert (over_threshold.status, over_threshold.threshold) == ("over_threshold", 10000)
    assert over_threshold.over == [("threshold", 10000, 568)]
    assert failures(over_threshold) == []
    assert failures(over_threshold, fail_on_threshold=True) == [("threshold", 10000, 568)]
    over_budget = _estimate(session, "auto", max_tokens=10000)
    assert (over_budget.status, failures(over_budget)) == ("over_budget", [("budget", 10000, 568)])
    over_window = _estimate(session, "auto", context_window=10000, max_tokens=10000)
    assert over_window.status == "over_window"
    assert over_window.over == [
        ("window", 10000, 568),
        ("budget", 10000, 568),
        ("threshold", 0, 10568),  # the preset leaves nothing of so small a window
    ]


def test_options_are_checked() -> None:
    with pytest.raises(UsageError) as caught:
        EstimateOptions(method="guess")
    assert str(caught.value) == (
        "unknown method 'guess'; known methods: auto, heuristic, exact, usage, calibrated"
    )
    with pytest.raises(UsageError):
        EstimateOptions(threshold="101%")
    with pytest.raises(UsageError):
        EstimateOptions(context_window=0)


# ---------------------------------------------------------------------------------------------
# Streaming gives what reading the whole file gives


@pytest.mark.parametrize("path", TRANSCRIPTS + CORPUS_FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("method", METHODS)
def test_streaming_matches_the_whole_transcript(path: Path, method: str) -> None:
    options = EstimateOptions(method=method)
    streamed = estimate_file(str(path), replace(options, from_end=False)).to_dict()
    whole = estimate(read_transcript(str(path)), options).to_dict()
    assert streamed == whole


@pytest.mark.parametrize("path", TRANSCRIPTS + CORPUS_FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("method", ["heuristic", "exact"])
def test_counting_the_context_alone_gives_the_same_context_figures(path: Path, method: str) -> None:
    transcript = read_transcript(str(path))
    options = EstimateOptions(method=method, max_tokens=1000)
    whole = estimate(transcript, options).to_dict()
    context = estimate(transcript, options, whole_file=False).to_dict()
    file_only = {"file_tokens", "messages"}
    assert {k: v for k, v in context.items() if k not in file_only} == {
        k: v for k, v in whole.items() if k not in file_only
    }
    assert context["messages"] == context["context_messages"] <= whole["messages"]
    assert context["file_tokens"] <= whole["file_tokens"]


@pytest.mark.parametrize("path", TRANSCRIPTS + CORPUS_FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("chars", [1, 300])
def test_exact_counts_in_groups_give_what_counting_one_by_one_gives(
    path: Path, chars: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`exact` counts a streamed file's texts in groups of `batch_chars` (here one message at a
    time, and a few): every figure is the one counting each text as it comes gives."""
    options = EstimateOptions(method="exact", from_end=False)
    monkeypatch.setattr(TiktokenCounter, "batch_chars", 0)
    one_by_one = estimate_file(str(path), options).to_dict()
    monkeypatch.setattr(TiktokenCounter, "batch_chars", chars)
    assert estimate_file(str(path), options).to_dict() == one_by_one


def _streamed(path: str) -> tuple[list[Any], Any]:
    transcript = read_transcript(path)
    streamer = ClaudeCodeStreamer(transcript.source)
    found: list[Any] = []
    for index, record in enumerate(transcript.records):
        found.extend(light(m) for m in streamer.add(index, record))
    return found, streamer.finish()


def _buffered(path: str) -> tuple[list[Any], Any]:
    transcript = read_transcript(path)
    buffering = BufferingStreamer(get_dialect("claude-code"), transcript.source)
    for index, record in enumerate(transcript.records):
        buffering.add(index, record)
    view = buffering.finish()
    return [light(m) for m in view.messages], view


def _assert_same_views(path: str) -> None:
    messages, view = _streamed(path)
    expected_messages, expected = _buffered(path)
    assert messages == expected_messages
    assert list(view.context) == list(expected.context)
    assert list(view.usage) == list(expected.usage)
    assert view.model == expected.model
    transcript = read_transcript(path)
    fast = ClaudeCodeStreamer()
    taken: list[Any] = []
    for index, record in enumerate(transcript.records):
        if record.raw is not None:
            taken.extend(fast.add_light(index, record.raw, record.lineno))
    assert taken == expected_messages
    fed = fast.finish()
    assert (list(fed.context), list(fed.usage)) == (list(expected.context), list(expected.usage))


CLAUDE_FILES = [p for p in TRANSCRIPTS + CORPUS_FILES if p.name.startswith("claude-code-")]


@pytest.mark.parametrize("path", CLAUDE_FILES, ids=lambda p: p.name)
def test_claude_code_streamer_rebuilds_the_same_chain(path: Path) -> None:
    _assert_same_views(str(path))


def test_claude_code_streamer_reads_a_record_type_that_is_no_string(tmp_path: Path) -> None:
    """A record with a uuid whose type is an array or object is no chain record, to `add` and
    `add_light` as to the views (the streamer maps records by the loader's skeletons)."""
    lines = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "message": {"content": "hi"}},
        {"type": ["user"], "uuid": "x1", "parentUuid": "u1"},
        {"type": {"kind": "user"}, "uuid": "x2", "parentUuid": "x1"},
        {"type": 7, "uuid": "x3", "parentUuid": "u1"},
    ]
    path = tmp_path / "odd-types.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    _assert_same_views(str(path))
    assert list(_streamed(str(path))[1].context) == [0]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(plan=plans())
def test_claude_code_streamer_on_generated_sessions(plan: Any, tmp_path: Path) -> None:
    path = tmp_path / "generated.jsonl"
    path.write_bytes(render(plan, "claude-code"))
    _assert_same_views(str(path))


@pytest.mark.parametrize(
    "path", sorted((FIXTURES / "broken").glob("*.jsonl")), ids=lambda p: p.name
)
def test_fast_reader_fails_like_the_reader(path: Path) -> None:
    def outcome(read: Any) -> str:
        try:
            list(read(str(path)))
        except InputError as error:
            return str(error)
        return "read"

    assert outcome(read_lines) == outcome(iter_records)


_ODD_LINES = (
    b'\xef\xbb\xbf{"type":"user","n":1}\r\n'
    b"\n"
    b"   \r\n"
    b'{"type":"x","text":"' + b"long " * 40 + b'"}\n'
    b"[1, 2]\n"
    b'{"broken": \n'
    b'{"last":"\xe2\x86\x92 no newline"}'
)


@pytest.mark.parametrize("block", [1, 2, 7, 64, 1 << 18])
@pytest.mark.parametrize("policy", ["keep", "skip"])
def test_fast_reader_reads_like_the_reader_across_blocks(
    block: int, policy: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lines split anywhere between the blocks read give the same records and bad lines."""
    monkeypatch.setattr("compactcli.estimate_reader._BLOCK", block)
    path = tmp_path / "odd.jsonl"
    path.write_bytes(_ODD_LINES)
    expected = [
        (r.lineno, r.raw, None if r.raw is not None else r.line + r.eol)
        for r in iter_records(str(path), on_bad_line=policy)
    ]
    assert list(read_lines(str(path), on_bad_line=policy)) == expected
    assert [lineno for lineno, _, _ in expected] == (
        [1, 2, 3, 4, 5, 6, 7] if policy == "keep" else [1, 2, 3, 4, 7]
    )


@pytest.mark.parametrize("block", [3, 100])
def test_streamed_estimate_does_not_depend_on_the_block_size(
    block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(FIXTURES / "transcripts" / "claude-code-session.jsonl")
    whole = estimate_file(path, EstimateOptions(method="heuristic"))
    monkeypatch.setattr("compactcli.estimate_reader._BLOCK", block)
    assert estimate_file(path, EstimateOptions(method="heuristic")) == whole


# ---------------------------------------------------------------------------------------------
# Windows and thresholds


def test_model_limits_from_the_bundled_table() -> None:
    assert model_limits("gpt-4o") == Limits("gpt-4o", 128000, 16384, "model table (gpt-4o)")
    opus = model_limits("claude-opus-4-7")
    assert (opus.context_window, opus.max_output) == (200000, 128000)
    assert opus.source == "model table (claude-opus-4-7), 200K without the [1m] suffix"
    assert model_limits("claude-opus-4-7[1m]").context_window == 1000000
    assert model_limits("anthropic/claude-sonnet-4-5-20250929").context_window == 200000
    assert model_limits("no-such-model") == Limits(
        "no-such-model", 200000, 32000, "default: no-such-model is not in the model table"
    )
    assert model_limits(None).source == "default: no model named"
    assert model_limits("gpt-4o", context_window=5000).context_window == 5000


@pytest.mark.parametrize(
    ("spec", "opus", "gpt4o"),
    [
        ("claude-code", 167000, 98616),
        ("codex", 180000, 115200),
        ("pi", 183616, 111616),
        ("opencode", 148000, 95232),
        ("hermes", 150000, 96000),
        ("80%", 160000, 102400),
        ("150000", 150000, 150000),
    ],
)
def test_threshold_presets(spec: str, opus: int, gpt4o: int) -> None:
    assert threshold(spec, Limits("opus", 200000, 128000, "")).tokens == opus
    assert threshold(spec, Limits("gpt-4o", 128000, 16384, "")).tokens == gpt4o


def test_hermes_on_a_small_window_triggers_at_85_percent() -> None:
    assert threshold("hermes", Limits(None, 64000, 8000, "")).tokens == 54400
    assert threshold("hermes", Limits(None, 1000000, 64000, "")).tokens == 500000


def test_threshold_specs() -> None:
    assert [default_threshold(f) for f in ("claude-code", "codex", "pi", "openai")] == [
        "claude-code",
        "codex",
        "pi",
        "80%",
    ]
    assert parse_threshold(" 85 % ") == "85%"
    assert parse_threshold("120_000") == "120000"
    with pytest.raises(UsageError) as caught:
        parse_threshold("0%")
    assert str(caught.value) == (
        "invalid threshold '0%': use a preset (claude-code, codex, pi, opencode, hermes), "
        "a percentage such as 80%, or a token count"
    )


# ---------------------------------------------------------------------------------------------
# The command line

HEADER = "file          tokens  method            window  used  threshold  status  file tokens\n"


def test_table_on_one_file(session: Path) -> None:
    result = run("estimate", "cc.jsonl")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == (
        HEADER
        + "cc.jsonl      10,568  usage+heuristic  200,000    5%    167,000  ok              571\n"
    )


def test_breakdown_table(session: Path) -> None:
    result = run("estimate", "cc.jsonl", "--method", "heuristic", "--by", "role")
    assert result.stdout.splitlines()[2:] == [
        "role (heuristic)  tokens  share",
        "assistant            450    79%",
        "user                 121    21%",
        "total                571   100%",
    ]
    tools = run("estimate", "cc.jsonl", "--by", "tool").stdout.splitlines()[2:]
    assert tools == ["tool (heuristic)  tokens  share", "Read                 129   100%"]


def test_json_is_one_object_per_file(session: Path) -> None:
    result = run(
        "estimate", "--json", "--method", "heuristic", "cc.jsonl", "-", input=session.read_bytes()
    )
    assert result.exit_code == 0
    first, second = (orjson.loads(line) for line in result.stdout.splitlines())
    assert first == {
        "path": "cc.jsonl",
        "format": "claude-code",
        "method": "heuristic",
        "tokens": 571,
        "file_tokens": 571,
        "file_tokens_method": "heuristic",
        "records": 7,
        "messages": 6,
        "context_messages": 6,
        "by_role": {"assistant": 450, "user": 121},
        "by_block": {
            "thinking": 342,
            "message": 90,
            "tool_result": 68,
            "tool_call": 61,
            "text": 10,
        },
        "by_tool": {"Read": 129},
        "breakdown_method": "heuristic",
        "usage": {
            "tokens": 10551,
            "input": 1,
            "output": 50,
            "cached": 10400,
            "line": 5,
            "requests": 2,
        },
        "after_usage": None,
        "calibration": None,
        "model": "claude-opus-4-6",
        "context_window": 200000,
        "context_window_source": "model table (claude-opus-4-6), 200K without the [1m] suffix",
        "max_output": 128000,
        "threshold": 167000,
        "threshold_spec": "claude-code",
        "threshold_rule": "window - min(max output, 20,000) - 13,000",
        "max_tokens": None,
        "status": "ok",
    }
    assert second == {**first, "path": "<stdin>"}


def test_ci_budget_fails_with_one_line_per_file(session: Path) -> None:
    (session.parent / "big").mkdir()
    (session.parent / "big" / "cc.jsonl").write_bytes(session.read_bytes())
    passing = run("estimate", "cc.jsonl", "--max-tokens", "20000")
    assert (passing.exit_code, passing.stderr) == (0, "")
    result = run("estimate", "cc.jsonl", "big", "--max-tokens", "10000", "--json")
    assert result.exit_code == 1
    assert [orjson.loads(line)["status"] for line in result.stdout.splitlines()] == [
        "over_budget",
        "over_budget",
    ]
    assert result.stderr == (
        "cc.jsonl: 10,568 tokens (usage+heuristic) over --max-tokens 10,000 by 568\n"
        "big/cc.jsonl: 10,568 tokens (usage+heuristic) over --max-tokens 10,000 by 568\n"
    )


def test_ci_threshold_fails_only_when_asked(session: Path) -> None:
    quiet = run("estimate", "cc.jsonl", "--threshold", "5%")
    assert (quiet.exit_code, quiet.stderr) == (0, "")
    result = run("estimate", "cc.jsonl", "--threshold", "5%", "--fail-on-threshold", "--json")
    assert result.exit_code == 1
    assert result.stderr == (
        "cc.jsonl: 10,568 tokens (usage+heuristic) at or over the 5% threshold of 10,000 by 568\n"
    )


def test_folder_gets_a_total_row(session: Path) -> None:
    (session.parent / "more.jsonl").write_bytes(session.read_bytes())
    result = run("estimate", ".", "--jobs", "1")
    assert result.exit_code == 0
    assert result.stdout == (
        "file             tokens  method            window  used  threshold  status  file tokens\n"
        "./cc.jsonl       10,568  usage+heuristic  200,000    5%    167,000  ok              571\n"
        "./more.jsonl     10,568  usage+heuristic  200,000    5%    167,000  ok              571\n"
        "total (2 files)  21,136                                             ok            1,142\n"
    )
    assert run("estimate", ".", "--jobs", "2").stdout == result.stdout


def test_unreadable_file_is_reported_and_the_others_counted(session: Path) -> None:
    (session.parent / "bad.jsonl").write_bytes(b'{"type": "user"\n')
    result = run("estimate", ".", "--json")
    assert result.exit_code == 3
    assert (
        result.stderr == "error: ./bad.jsonl:1: invalid JSON: unexpected end of data at column 16\n"
    )
    assert [orjson.loads(line)["path"] for line in result.stdout.splitlines()] == ["./cc.jsonl"]


def test_bad_threshold_is_a_usage_error(session: Path) -> None:
    result = run("estimate", "cc.jsonl", "--threshold", "most")
    assert result.exit_code == 2
    assert result.stderr == (
        "error: invalid threshold 'most': use a preset (claude-code, codex, pi, opencode, "
        "hermes), a percentage such as 80%, or a token count\n"
    )


def test_missing_tokenizer_exits_4(session: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import compactcli.tokens as tokens

    monkeypatch.setattr(tokens, "_cache_dirs", lambda: iter(()))
    load_encoding.cache_clear()
    try:
        result = run("estimate", "cc.jsonl", "--method", "exact")
    finally:
        load_encoding.cache_clear()
    assert result.exit_code == 4
    assert result.stderr.startswith(
        "error: cannot load the tiktoken encoding 'o200k_base' offline: no local copy"
    )


# ---------------------------------------------------------------------------------------------
# The examples docs/estimate.md shows, on the fixtures in this repository

CC = "fixtures/transcripts/claude-code-session.jsonl"
CODEX = "fixtures/transcripts/codex-session.jsonl"
OPENAI = "fixtures/transcripts/openai-session.jsonl"


@pytest.fixture
def in_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FIXTURES.parent)


@pytest.mark.usefixtures("in_repository")
def test_readme_table() -> None:
    result = run("estimate", CC, CODEX, OPENAI)
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == (
        "file                                            tokens  method      window  used  "
        "threshold  status  file tokens\n"
        "fixtures/transcripts/claude-code-session.jsonl  19,491  usage      200,000   10%  "
        "  167,000  ok            1,811\n"
        "fixtures/transcripts/codex-session.jsonl        11,602  usage      258,400    4%  "
        "  232,560  ok            1,352\n"
        "fixtures/transcripts/openai-session.jsonl          478  heuristic  200,000    0%  "
        "  160,000  ok              478\n"
        "total (3 files)                                 31,571                            "
        "           ok            3,641\n"
    )


@pytest.mark.usefixtures("in_repository")
def test_readme_ci_check() -> None:
    result = run("estimate", CC, "--max-tokens", "15000")
    assert result.exit_code == 1
    assert result.stderr == (
        "fixtures/transcripts/claude-code-session.jsonl: 19,491 tokens (usage) "
        "over --max-tokens 15,000 by 4,491\n"
    )
    assert run("estimate", CC, "--max-tokens", "20000").exit_code == 0


@pytest.mark.usefixtures("in_repository")
def test_readme_breakdown_by_tool() -> None:
    result = run("estimate", CC, "--method", "heuristic", "--by", "tool")
    assert result.stdout.splitlines()[2:] == [
        "tool (heuristic)  tokens  share",
        "Bash                 416    43%",
        "Edit                 340    35%",
        "Read                 222    23%",
    ]


@pytest.mark.usefixtures("in_repository")
@pytest.mark.parametrize(
    ("name", "by_tool"),
    [
        # their results do not name the tool: each counts under the tool of its call
        ("anthropic-session.jsonl", {"search": 229, "read_file": 181}),
        ("openai-session.jsonl", {"read_file": 119, "edit_file": 106, "search": 81}),
    ],
)
def test_results_of_the_plain_formats_count_under_their_calls_tool(
    name: str, by_tool: dict[str, int]
) -> None:
    path = f"fixtures/transcripts/{name}"
    streamed = estimate_file(path, EstimateOptions(method="heuristic"))
    read = estimate(read_transcript(path), EstimateOptions(method="heuristic"))
    assert streamed.by_tool == read.by_tool == by_tool


@pytest.mark.usefixtures("in_repository")
def test_readme_python_example() -> None:
    report = estimate_file(CC, EstimateOptions(method="auto", max_tokens=15_000))
    assert (report.tokens, report.method, report.status) == (19491, "usage", "over_budget")


@pytest.mark.parametrize("method", ["heuristic", "exact"])
@pytest.mark.parametrize("path", TRANSCRIPTS + CORPUS_FILES, ids=lambda p: p.name)
def test_counting_messages_whole_gives_every_figure_but_the_breakdowns(
    path: Path, method: str
) -> None:
    """`breakdown=False` (what compaction counts with) sums each message's `message_tokens`."""
    transcript = read_transcript(str(path))
    dialect = get_dialect(transcript.format)
    counter = get_counter(method, model=dialect.model(transcript), format=transcript.format)
    options = EstimateOptions(method=method)
    full = estimate(transcript, options, counter=counter, whole_file=False).to_dict()
    whole = estimate(
        transcript, options, counter=counter, whole_file=False, breakdown=False
    ).to_dict()
    for report in (full, whole):
        for key in ("by_role", "by_block", "by_tool"):
            report.pop(key)
    assert whole == full
