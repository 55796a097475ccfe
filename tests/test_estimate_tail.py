"""`usage` and `auto` read from the end of a file: the forward read's figures, on every fixture,
every corpus session, generated sessions and damaged tails, and only the end of the file read."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compactcli import estimate_tail
from compactcli.errors import InputError
from compactcli.estimate import EstimateDict, EstimateOptions, estimate_file
from compactcli.estimate_tail import TailStats
from tests.cli_runner import run
from tests.conftest import CORPUS, EVAL_FIXTURES, FIXTURES
from tests.transcript_strategies import FORMAT_NAMES, Plan, plans, render

FIXTURE_FILES = sorted(
    p
    for root in (FIXTURES, EVAL_FIXTURES)
    for p in root.rglob("*")
    if p.suffix in (".jsonl", ".traj") and p.is_file()
)
CORPUS_FILES = sorted(p for p in CORPUS.glob("*") if p.suffix in (".jsonl", ".traj"))
WHOLE_FILE_ONLY = (
    "file_tokens",
    "file_tokens_method",
    "records",
    "messages",
    "context_messages",
    "by_role",
    "by_block",
    "by_tool",
    "breakdown_method",
)
SMALL_BLOCKS = (97, 512, 4096)


def _outcome(path: str, method: str, from_end: bool, stats: TailStats | None = None) -> Any:
    """The `--json` object of `path`, or the error that stopped it."""
    options = EstimateOptions(method=method, from_end=from_end)
    try:
        return estimate_file(path, options, tail=stats).to_dict()
    except InputError as error:
        return f"InputError: {error}"


def _from_end_only(forward: EstimateDict | dict[str, Any]) -> dict[str, Any]:
    """What a read from the end reports for a file whose forward read is `forward`."""
    expected: dict[str, Any] = dict(forward)
    for key in WHOLE_FILE_ONLY:
        expected[key] = None
    usage = forward["usage"]
    if usage is not None:
        expected["usage"] = {**usage, "line": None, "requests": None}
    return expected


@cache
def _committed_forward(path: str, method: str) -> Any:
    """The forward read of a committed fixture or corpus session (files no test changes), made
    once per worker for the several block sizes its end is read with. The forward read does
    not use `estimate_tail.BLOCK`."""
    return _outcome(path, method, False)


def same_as_forward(path: str, method: str, committed: bool = False) -> bool:
    """Assert that `path` read from its end gives the forward read's figures; whether the end
    decided them (False: the forward read answered). `committed`: `path` is a file no test
    changes, whose forward read may be remembered."""
    stats = TailStats()
    tail = _outcome(path, method, True, stats)
    forward = _committed_forward(path, method) if committed else _outcome(path, method, False)
    if isinstance(tail, dict) and tail["file_tokens"] is None:
        assert isinstance(forward, dict)
        assert tail == _from_end_only(forward)
        assert stats.reason == ""
        return True
    assert tail == forward
    return False


@pytest.fixture
def block(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    size: int = request.param
    monkeypatch.setattr(estimate_tail, "BLOCK", size)
    yield size


@pytest.mark.parametrize("block", [*SMALL_BLOCKS, estimate_tail.BLOCK], indirect=True)
@pytest.mark.parametrize("method", ["usage", "auto"])
@pytest.mark.parametrize("path", FIXTURE_FILES + CORPUS_FILES, ids=lambda p: p.name)
def test_from_the_end_gives_the_forward_figures(path: Path, method: str, block: int) -> None:
    same_as_forward(str(path), method, committed=True)


DECIDED_AT_THE_END = [
    "claude-code-session.jsonl",
    "claude-code-compacted.jsonl",
    "claude-code-summarize-parallel.jsonl",
    "claude-code-interrupted.jsonl",
    "codex-summarize-session.jsonl",
    "codex-code-mode.jsonl",
]


@pytest.mark.parametrize("block", [97], indirect=True)
@pytest.mark.parametrize("name", DECIDED_AT_THE_END)
def test_the_end_decides_the_usual_sessions(name: str, block: int) -> None:
    for method in ("usage", "auto"):
        assert same_as_forward(str(FIXTURES / "transcripts" / name), method)


@pytest.mark.skipif(not CORPUS.is_dir(), reason="no corpus at ../shared/corpus")
def test_the_end_decides_a_real_session_at_the_default_block() -> None:
    path = CORPUS / "claude-code-fundwise.jsonl"
    stats = TailStats()
    report = estimate_file(str(path), EstimateOptions(method="auto"), tail=stats)
    assert (report.tokens, report.method, report.file_tokens) == (138382, "usage", None)
    assert stats.bytes_read < path.stat().st_size // 8
    assert same_as_forward(str(path), "auto")


@pytest.mark.skipif(not CORPUS.is_dir(), reason="no corpus at ../shared/corpus")
@pytest.mark.parametrize("block", [97, 4096], indirect=True)
def test_a_preserved_segment_is_spliced_in_from_the_end(block: int) -> None:
    """The last of three compactions keeps a preserved segment: the records read decide once
    its walk from tail to head lies among them."""
    stats = TailStats()
    path = str(CORPUS / "claude-code-pv-case-review.jsonl")
    report = estimate_file(path, EstimateOptions(method="usage"), tail=stats)
    assert (report.tokens, report.file_tokens) == (64200, None)
    assert same_as_forward(path, "usage") and same_as_forward(path, "auto")


@pytest.mark.skipif(not CORPUS.is_dir(), reason="no corpus at ../shared/corpus")
def test_no_usage_after_the_last_compaction_is_the_heuristic_of_the_context() -> None:
    path = str(CORPUS / "claude-code-will-it-rain.jsonl")
    stats = TailStats()
    report = estimate_file(path, EstimateOptions(method="usage"), tail=stats)
    assert (report.tokens, report.method, report.usage, report.file_tokens) == (
        4816,
        "heuristic",
        None,
        None,
    )
    assert stats.bytes_read < Path(path).stat().st_size // 8
    assert same_as_forward(path, "usage") and same_as_forward(path, "auto")


# ---------------------------------------------------------------------------------------------
# generated sessions and damaged tails


def _lines(data: bytes) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in data.splitlines() if line.strip()]


def _dump(records: list[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in records)


def _sidechain_after(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A subagent's records appended after the leaf, with usage and a model of their own."""
    leaf = next(r for r in reversed(records) if r.get("type") in ("user", "assistant"))
    env = {k: leaf[k] for k in ("userType", "cwd", "sessionId", "version") if k in leaf}
    prompt = {
        "parentUuid": None,
        "isSidechain": True,
        **env,
        "type": "user",
        "message": {"role": "user", "content": "look for the config files"},
        "uuid": "5ade0000-0000-4000-8000-000000000001",
        "timestamp": "2026-05-01T11:00:00.000Z",
    }
    reply = {
        "parentUuid": prompt["uuid"],
        "isSidechain": True,
        **env,
        "type": "assistant",
        "message": {
            "model": "claude-haiku-4-5",
            "id": "msg_side",
            "type": "message",
            "role": "assistant",
            "content": [{"type": "text", "text": "Found two: a.toml and b.toml."}],
            "usage": {"input_tokens": 5, "output_tokens": 12, "cache_read_input_tokens": 900},
        },
        "uuid": "5ade0000-0000-4000-8000-000000000002",
        "timestamp": "2026-05-01T11:00:01.000Z",
    }
    return [*records, prompt, reply]


def _boundary_at_the_end(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A compaction after the last record: a boundary and its summary, nothing after them."""
    leaf = next(r for r in reversed(records) if r.get("type") in ("user", "assistant"))
    env = {k: leaf[k] for k in ("isSidechain", "userType", "cwd", "sessionId") if k in leaf}
    boundary = {
        "parentUuid": None,
        "logicalParentUuid": leaf["uuid"],
        **env,
        "type": "system",
        "subtype": "compact_boundary",
        "content": "Conversation compacted",
        "uuid": "b0da0000-0000-4000-8000-000000000001",
        "timestamp": "2026-05-01T12:00:00.000Z",
        "compactMetadata": {"trigger": "auto", "preTokens": 9000},
    }
    summary = {
        "parentUuid": boundary["uuid"],
        **env,
        "type": "user",
        "message": {"role": "user", "content": "This session is being continued. Summary: x."},
        "isCompactSummary": True,
        "uuid": "b0da0000-0000-4000-8000-000000000002",
        "timestamp": "2026-05-01T12:00:01.000Z",
    }
    return [*records, boundary, summary]


def _no_usage(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for raw in records:
        message = raw.get("message")
        if isinstance(message, dict) and "usage" in message:
            raw = {**raw, "message": {k: v for k, v in message.items() if k != "usage"}}
        payload = raw.get("payload")
        if isinstance(payload, dict) and payload.get("type") == "token_count":
            raw = {**raw, "payload": {**payload, "info": None}}
        out.append(raw)
    return out


MUTATIONS = ("none", "truncated", "sidechain", "boundary", "no-usage")


def _mutated(data: bytes, mutation: str, format: str) -> bytes:
    if mutation == "truncated":  # the last line cut in its middle, as a crash leaves it
        return data[: len(data) - len(data.splitlines()[-1]) // 2 - 1]
    records = _lines(data)
    if mutation == "sidechain" and format == "claude-code":
        return _dump(_sidechain_after(records))
    if mutation == "boundary" and format == "claude-code":
        return _dump(_boundary_at_the_end(records))
    if mutation == "no-usage":
        return _dump(_no_usage(records))
    return data


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    plan=plans(max_turns=6),
    format=st.sampled_from(["claude-code", "claude-code", "codex", "codex", *FORMAT_NAMES]),
    mutation=st.sampled_from(MUTATIONS),
    size=st.sampled_from(SMALL_BLOCKS),
    method=st.sampled_from(["usage", "auto"]),
)
def test_generated_sessions_and_damaged_tails(
    plan: Plan,
    format: str,
    mutation: str,
    size: int,
    method: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = tmp_path / f"{format}-{mutation}.jsonl"
    path.write_bytes(_mutated(render(plan, format), mutation, format))
    monkeypatch.setattr(estimate_tail, "BLOCK", size)
    decided = same_as_forward(str(path), method)
    if mutation == "truncated" or (mutation == "no-usage" and plan.compacted_before is None):
        assert not decided  # a bad last line; no usage and no compaction: all is read
    if mutation == "sidechain" and format == "claude-code" and decided:
        report = estimate_file(str(path), EstimateOptions(method=method))
        assert report.model == "claude-haiku-4-5"  # the last model named, not the leaf's


@pytest.mark.parametrize("block", [512], indirect=True)
def test_a_sidechain_after_the_leaf_is_read_from_the_end(tmp_path: Path, block: int) -> None:
    source = FIXTURES / "transcripts" / "claude-code-session.jsonl"
    path = tmp_path / "side.jsonl"
    path.write_bytes(_dump(_sidechain_after(_lines(source.read_bytes()))))
    assert same_as_forward(str(path), "auto")
    plain = estimate_file(str(source), EstimateOptions(method="auto"))
    report = estimate_file(str(path), EstimateOptions(method="auto"))
    assert (report.tokens, report.model) == (plain.tokens, "claude-haiku-4-5")


# ---------------------------------------------------------------------------------------------
# only the end is read


def _chain(count: int, day: str, prefix: str) -> list[dict[str, Any]]:
    """`count` user prompts in one chain, on `day`."""
    out: list[dict[str, Any]] = []
    parent: str | None = None
    for i in range(count):
        uuid = f"{prefix}{i:04x}-0000-4000-8000-000000000000"
        out.append(
            {
                "parentUuid": parent,
                "isSidechain": False,
                "userType": "external",
                "cwd": "/repo",
                "sessionId": "5e55a0e0-0000-4000-8000-000000000001",
                "type": "user",
                "message": {"role": "user", "content": f"old prompt {i}"},
                "uuid": uuid,
                "timestamp": f"{day}T09:{i // 60 % 60:02d}:{i % 60:02d}.000Z",
            }
        )
        parent = uuid
    return out


def test_only_the_end_of_a_long_file_is_read(tmp_path: Path) -> None:
    """A session after a long stretch of lines that do not even parse: read from the end, the
    answer is that of the file without them, and the bytes read are the last block's."""
    head = _dump(_chain(80, "2020-01-01", "0d1d"))  # older records, read to detect the format
    session = (FIXTURES / "transcripts" / "claude-code-session.jsonl").read_bytes()
    middle = b"this line is not JSON and is never read\n" * 200_000  # 8 MB
    damaged = tmp_path / "long.jsonl"
    damaged.write_bytes(head + middle + session)
    clean = tmp_path / "clean.jsonl"
    clean.write_bytes(head + session)
    with pytest.raises(InputError):
        estimate_file(str(damaged), EstimateOptions(method="auto", from_end=False))
    for method in ("usage", "auto"):
        stats = TailStats()
        report = estimate_file(str(damaged), EstimateOptions(method=method), tail=stats)
        assert stats.bytes_read <= 4 * estimate_tail.BLOCK < len(middle) // 100
        expected = _from_end_only(
            estimate_file(str(clean), EstimateOptions(method=method, from_end=False)).to_dict()
        )
        assert report.to_dict() == {**expected, "path": str(damaged)}


# ---------------------------------------------------------------------------------------------
# the command


def test_the_table_shows_what_the_end_does_not_tell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(estimate_tail, "BLOCK", 512)
    source = FIXTURES / "transcripts" / "claude-code-session.jsonl"
    (tmp_path / "cc.jsonl").write_bytes(source.read_bytes())
    (tmp_path / "oa.jsonl").write_bytes(
        (FIXTURES / "transcripts" / "openai-session.jsonl").read_bytes()
    )
    result = run("estimate", "cc.jsonl", "oa.jsonl", "--jobs", "1")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout.splitlines() == [
        "file             tokens  method      window  used  threshold  status  file tokens",
        "cc.jsonl         19,491  usage      200,000   10%    167,000  ok                -",
        "oa.jsonl            478  heuristic  200,000    0%    160,000  ok              478",
        "total (2 files)  19,969                                       ok                -",
    ]
    by = run("estimate", "cc.jsonl", "--by", "role", "--jobs", "1")  # needs the whole context
    assert by.stdout.splitlines()[1].split()[-1] == "1,811"
    assert by.stdout.splitlines()[3:] == [
        "assistant          1,201    66%",
        "user                 610    34%",
        "total              1,811   100%",
    ]
    found = orjson.loads(run("estimate", "cc.jsonl", "--json").stdout)
    assert (found["tokens"], found["file_tokens"], found["usage"]["requests"]) == (
        19491,
        None,
        None,
    )


def _prompt_after(data: bytes) -> bytes:
    """A prompt the user typed after the last record, not yet answered."""
    records = _lines(data)
    leaf = next(r for r in reversed(records) if r.get("type") in ("user", "assistant"))
    prompt = {
        **{k: v for k, v in leaf.items() if k not in ("message", "requestId", "toolUseResult")},
        "parentUuid": leaf["uuid"],
        "type": "user",
        "message": {"role": "user", "content": "Now run the whole test suite, please."},
        "uuid": "9a0a0000-0000-4000-8000-000000000001",
        "timestamp": "2026-12-31T23:59:59.000Z",
    }
    return _dump([*records, prompt])


@pytest.mark.parametrize("block", [97], indirect=True)
@pytest.mark.parametrize(
    ("name", "model", "other"),
    [
        ("codex-summarize-session.jsonl", b'"model":"gpt-5.5"', b'"model":"claude-sonnet-4-6"'),
        ("claude-code-session.jsonl", b'"model":"claude-opus-4-6"', b'"model":"gpt-5.4"'),
    ],
)
def test_the_count_after_the_usage_follows_the_model_of_the_first_records(
    name: str, model: bytes, other: bytes, tmp_path: Path, block: int
) -> None:
    """A session whose model has the other tokenizer: what follows the last usage is counted
    with that tokenizer's density, read from the end as forward."""
    data = (FIXTURES / "transcripts" / name).read_bytes()
    if name.startswith("claude-code"):
        data = _prompt_after(data)
    assert model in data
    original = tmp_path / f"original-{name}"
    original.write_bytes(data)
    path = tmp_path / name
    path.write_bytes(data.replace(model, other))
    for method in ("auto", "usage"):
        assert same_as_forward(str(path), method)
    changed = estimate_file(str(path), EstimateOptions(method="auto"))
    plain = estimate_file(str(original), EstimateOptions(method="auto"))
    assert changed.method == plain.method == "usage+heuristic"
    assert changed.file_tokens is plain.file_tokens is None
    assert changed.after_usage != plain.after_usage
