"""The real Codex CLI resumes original and compacted rollouts (`codex exec resume ID PROMPT`).

Each rollout (the bundled Codex fixtures and the corpus's Codex rollouts) is resumed as it is and
after `compactcli compact --force` at each setting (`sessions.SETTINGS`), against the fake
Responses API server (`responses_server`); the first model request after the resume is checked.
A rollout the compaction left unchanged must come out byte for byte.

A compacted rollout is resumed with Codex's auto-compact limit set to the original's last
recorded context size (`last_context`): Codex would compact the original at once, and must not
compact the compacted rollout, whose `token_count` line after the `compacted` line gives the
compacted context's size. The same rollout without that line does compact at that limit (Codex
then reads the size from before the compaction), which shows the limit is live.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compactcli.formats import get_format
from compactcli.formats.codex.sent import RESULT_BYTES
from compactcli.redact import redact
from compactcli.tokens import Costs
from tests.agents.codex_resume import CodexResumed, resume_codex
from tests.agents.conftest import Agents, Runs
from tests.agents.responses_api import (
    is_context,
    items,
    key,
    pairing_problems,
    request_tokens,
    subsequence_gap,
    user_texts,
    view_keys,
)
from tests.agents.resume import ANSWER, PROMPT
from tests.agents.sessions import SETTINGS, Compacted, Session, require, view
from tests.cli_runner import run
from tests.conftest import CORPUS, FIXTURES
from tests.test_dialect_codex import remote_compacted_rollout
from tests.test_summarize import instructions_after_kept_messages


def codex_sessions() -> list[Session]:
    """The Codex fixtures (not the pre-envelope `codex-legacy-*` ones, which this Codex cannot
    resume), then the corpus's Codex rollouts, or a placeholder when the corpus is absent."""
    found = [
        Session(f"fixtures/{p.stem}", p, "codex")
        for p in sorted((FIXTURES / "transcripts").glob("codex-*.jsonl"))
        if not p.name.startswith("codex-legacy-")
    ]
    if CORPUS.is_dir():
        found += [
            Session(f"corpus/{p.stem}", p, "codex") for p in sorted(CORPUS.glob("codex-*.jsonl"))
        ]
    else:
        found.append(Session("corpus", CORPUS, "codex"))
    return found


SESSIONS = [pytest.param(s, id=s.name) for s in codex_sessions()]

REFUSED = {
    "fixtures/codex-unknown-type": "its session_meta has history_mode 'full', which Codex 0.171 "
    "refuses (it reads 'legacy' or 'paginated')",
}
"""Rollouts this Codex will not load, original or not, and why."""

ORIGINALS = [
    pytest.param(s, id=s.name, marks=pytest.mark.xfail(reason=REFUSED[s.name], strict=True))
    if s.name in REFUSED
    else pytest.param(s, id=s.name)
    for s in codex_sessions()
]


class CodexRuns:
    """Codex resumes, each done once per test session."""

    def __init__(self, folder: Path, agents: Agents) -> None:
        self.folder = folder
        self.agents = agents
        self._done: dict[tuple[Path, int | None], CodexResumed] = {}

    def resumed(self, path: Path, limit: int | None = None) -> CodexResumed:
        found = self._done.get((path, limit))
        if found is None:
            folder = self.folder / f"{len(self._done) + 1}-{path.stem}"
            command = self.agents.command("codex")
            found = resume_codex(command, path, PROMPT, folder, ANSWER, limit)
            self._done[(path, limit)] = found
        return found


@pytest.fixture(scope="session")
def codex_runs(tmp_path_factory: pytest.TempPathFactory, agents: Agents) -> CodexRuns:
    return CodexRuns(tmp_path_factory.mktemp("codex"), agents)


def records(data: bytes) -> list[dict[str, Any]]:
    out = []
    for line in data.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            out.append(record)
    return out


def compacted_lines(data: bytes) -> int:
    return sum(r.get("type") == "compacted" for r in records(data))


def token_counts(data: bytes) -> list[dict[str, Any]]:
    """The `info` of every `token_count` event that has one, in order."""
    return [
        r["payload"]["info"]
        for r in records(data)
        if r.get("type") == "event_msg"
        and isinstance(r.get("payload"), dict)
        and r["payload"].get("type") == "token_count"
        and isinstance(r["payload"].get("info"), dict)
    ]


def last_context(path: Path) -> int | None:
    """The context size of a rollout's last `token_count`, which Codex resumes with."""
    counts = token_counts(path.read_bytes())
    return int(counts[-1]["last_token_usage"]["total_tokens"]) if counts else None


def check_answered_once(resumed: CodexResumed) -> None:
    """One model request, answered, ending with the prompt, pairing kept, no compaction."""
    run = resumed.describe()
    assert resumed.exit_code == 0, run
    assert resumed.stdout.strip() == ANSWER, run
    assert resumed.outside == [], f"tried to leave 127.0.0.1: {resumed.outside}"
    assert resumed.compactions == [], f"Codex compacted before answering: {run}"
    assert len(resumed.model_requests) == 1, f"expected one model request: {run}"
    body = resumed.first
    assert user_texts(body)[-1] == PROMPT, f"the request does not end with the prompt: {run}"
    assert pairing_problems(body) == []
    before, after = compacted_lines(resumed.before), compacted_lines(resumed.after)
    assert after == before, f"the resume wrote {after - before} compacted line(s)"


def check_holds_view(resumed: CodexResumed, path: Path) -> None:
    """The request holds the conversation of compactcli's view of the rollout in order, and no
    call outside it (standing context is left out: Codex injects it afresh)."""
    wanted = [k for k in view_keys(path) if not is_context(k)]
    assert wanted, f"compactcli's view of {path} holds no conversation"
    found = [k for k in map(key, items(resumed.first)) if not is_context(k)]
    gap = subsequence_gap(wanted, found)
    assert gap is None, f"the request lacks {str(gap)[:300]} of the view (or has it out of order)"
    calls = {k for k in wanted if k[0] == "call"}
    extra = [k[1] for k in found if k[0] == "call" and k not in calls]
    assert extra == [], f"the request holds calls that are not in the rollout's view: {extra}"


def _compacted(session: Session, setting: str, runs: Runs) -> Compacted | None:
    """The compaction of `session` at `setting`; None (after checking it) when unchanged."""
    require(session)
    compacted = runs.compacted(session, setting)
    if not compacted.changed:
        assert compacted.report["status"] == "unchanged", compacted.report
        assert compacted.path.read_bytes() == session.path.read_bytes()
        return None
    return compacted


@pytest.mark.parametrize("session", ORIGINALS)
def test_original_resumes_with_its_history(session: Session, codex_runs: CodexRuns) -> None:
    require(session)
    resumed = codex_runs.resumed(session.path)
    check_answered_once(resumed)
    check_holds_view(resumed, session.path)


@pytest.mark.parametrize("setting", SETTINGS)
@pytest.mark.parametrize("session", SESSIONS)
def test_compacted_resumes_from_the_summary_without_compacting(
    session: Session, setting: str, runs: Runs, codex_runs: CodexRuns
) -> None:
    compacted = _compacted(session, setting, runs)
    if compacted is None:
        return
    limit = last_context(session.path)
    resumed = codex_runs.resumed(compacted.path, limit)
    check_answered_once(resumed)
    check_holds_view(resumed, compacted.path)
    # what it resumed with: our token_count, last, with the compacted context's size
    out = records(compacted.path.read_bytes())
    count = out[-1]
    assert count["type"] == "event_msg" and count["payload"]["type"] == "token_count"
    size = count["payload"]["info"]["last_token_usage"]["total_tokens"]
    assert size == compacted.report["tokens_after"]
    assert limit is None or size < limit
    body = resumed.first
    summary = next(r for r in reversed(out) if r.get("type") == "compacted")["payload"]["message"]
    # the summary is the user message Codex keeps in place of the summarized turns, once
    assert [t for t in user_texts(body) if t == summary] == [summary]
    # the last thing the person typed is still there: kept, or quoted in the summary (where
    # its secrets are redacted)
    last_prompt = view(session.path).last_prompt
    if last_prompt is not None:
        sent = _squeezed(" ".join(user_texts(body)))
        forms = {_squeezed(last_prompt), _squeezed(redact(last_prompt))}
        assert any(f in sent for f in forms), f"the last prompt is gone: {last_prompt[:300]!r}"
    original = codex_runs.resumed(session.path)
    size_now, size_before = request_tokens(body), request_tokens(original.first)
    assert size_now < size_before, f"the request is not smaller: {size_now} >= {size_before}"


@pytest.mark.parametrize("setting", SETTINGS)
@pytest.mark.parametrize("session", SESSIONS)
def test_without_the_token_count_codex_compacts_again(
    session: Session, setting: str, runs: Runs, codex_runs: CodexRuns, tmp_path: Path
) -> None:
    compacted = _compacted(session, setting, runs)
    if compacted is None:
        return
    limit = last_context(session.path)
    assert limit is not None, f"{session.path} records no token_count"
    lines = compacted.path.read_bytes().splitlines(keepends=True)
    assert b'"token_count"' in lines[-1]
    stripped = tmp_path / compacted.path.name
    stripped.write_bytes(b"".join(lines[:-1]))
    resumed = codex_runs.resumed(stripped, limit)
    assert resumed.exit_code == 0, resumed.describe()
    assert resumed.compactions, f"Codex did not compact at {limit}: {resumed.describe()}"
    assert resumed.model_requests[0] is resumed.compactions[0]
    assert compacted_lines(resumed.after) == compacted_lines(resumed.before) + 1


def _squeezed(text: str) -> str:
    return " ".join(text.split())


def test_a_kept_remote_compaction_reaches_codex_before_the_summary(
    codex_runs: CodexRuns, tmp_path: Path
) -> None:
    """A rollout whose history OpenAI's remote compaction replaced (its summary encrypted),
    compacted again by compactcli: Codex resumes it and sends the encrypted compaction, then
    our summary, then the kept turns."""
    source, out = tmp_path / "remote.jsonl", tmp_path / "compacted.jsonl"
    remote_compacted_rollout(source)
    done = run("compact", str(source), "--force", "--keep-recent-tokens", "200", "-o", str(out))
    assert done.exit_code == 0, done.stderr
    resumed = codex_runs.resumed(out)
    check_answered_once(resumed)
    sent = items(resumed.first)
    kinds = [i.get("type") for i in sent]
    assert kinds.count("compaction") == 1
    at = kinds.index("compaction")
    assert str(sent[at].get("encrypted_content", "")).startswith("gAAAA")
    summary = next(r for r in reversed(records(out.read_bytes())) if r["type"] == "compacted")
    assert user_texts({"input": sent[at + 1 :]})[0] == summary["payload"]["message"]


def test_codex_sends_a_long_tool_output_as_its_estimate_counts_it(
    codex_runs: CodexRuns, tmp_path: Path
) -> None:
    """Codex keeps a tool output whole in the rollout and sends the model its head and tail
    (12,000 tokens of 4 bytes for a model it knows, gpt-5.5): the text `estimate` and `compact`
    count for it (`compactcli.tokens.Costs.sent` with the Codex entry's `sends`) is what
    Codex sent, byte for byte."""
    source = FIXTURES / "transcripts" / "codex-session.jsonl"
    lines = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    outputs = [r for r in lines if r["payload"].get("type") == "function_call_output"]
    target = outputs[-1]["payload"]
    words = ("alpha", "beta", "gamma", "delta", "render", "value", "config", "token")
    long = "".join(
        f"line {i}: {' '.join(words[(i * 7 + j) % len(words)] for j in range(12))}\n"
        for i in range(4000)
    )
    target["output"] = f"Chunk ID: 2b97fd\nProcess exited with code 0\nOutput:\n{long}"
    rollout = tmp_path / "long-output.jsonl"
    rollout.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    resumed = codex_runs.resumed(rollout)
    check_answered_once(resumed)
    sent = next(
        i["output"]
        for i in items(resumed.first)
        if i.get("type") == "function_call_output" and i.get("call_id") == target["call_id"]
    )
    sends = get_format("codex").sends()
    assert sends is not None and len(target["output"]) > 4 * RESULT_BYTES
    assert sent == Costs(sent_as=sends).sent(target["output"])


def test_the_instructions_a_codex_compaction_kept_reach_codex_after_ours(
    codex_runs: CodexRuns, tmp_path: Path
) -> None:
    """A rollout whose Codex compaction put the standing instructions after the user message it
    kept (as newer Codex does), compacted again by compactcli: Codex resumes it and sends that
    message, the developer message and AGENTS.md's instructions, then our summary."""
    source, out = tmp_path / "codex-instructions.jsonl", tmp_path / "compacted.jsonl"
    asked, developer, agents = instructions_after_kept_messages(source)
    done = run("compact", str(source), "--force", "--keep-recent-tokens", "0", "-o", str(out))
    assert done.exit_code == 0, done.stderr
    resumed = codex_runs.resumed(out)
    check_answered_once(resumed)
    texts = [
        _squeezed(part.get("text", ""))
        for item in items(resumed.first)
        if item.get("type") == "message"
        for part in item.get("content", [])
        if isinstance(part, dict)
    ]
    wanted = [_squeezed(i["content"][0]["text"]) for i in (asked, developer, agents)]
    summary = next(r for r in reversed(records(out.read_bytes())) if r["type"] == "compacted")
    found = [texts.index(text) for text in [*wanted, _squeezed(summary["payload"]["message"])]]
    assert found == sorted(found), found
