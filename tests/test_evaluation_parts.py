"""The drift of a real session: cut into parts, each appended to the last output and compacted."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from compactcli.evaluation import EvalOptions, EvalSettings, parts, run
from compactcli.evaluation.generator import transcript_from_records
from compactcli.evaluation.measure import count, exact_counter
from compactcli.evaluation.probes import Origin, make_probe
from compactcli.evaluation.strategies import STRATEGIES, Backends
from compactcli.formats import get_dialect
from compactcli.formats.base import Finding, atomic_units
from compactcli.loading import read_transcript
from compactcli.stages.compact import settle
from compactcli.stages.cuts import can_start, is_prompt
from compactcli.transcript import Transcript
from compactcli.validation import validate
from tests.cli_runner import run as cli
from tests.conftest import EVAL_FIXTURES

FORMATS = ["claude-code-20k-s1", "codex-20k-s2", "openai-20k-s3", "anthropic-20k-s4"]


def _session(name: str) -> Transcript:
    return read_transcript(str(EVAL_FIXTURES / f"{name}.jsonl"))


@pytest.mark.parametrize("name", [*FORMATS, "claude-code-100k-s5", "codex-100k-s6"])
def test_parts_are_cut_where_a_turn_starts_near_each_third(name: str) -> None:
    transcript = _session(name)
    plan = parts.plan_parts(transcript, 3)
    assert isinstance(plan, parts.Parts)
    assert len(plan.starts) == 2 and 0 < plan.starts[0] < plan.starts[1]
    assert plan.lines == tuple(transcript.records[i].lineno for i in plan.starts)
    messages = get_dialect(transcript.format).messages(transcript)
    units = atomic_units(messages)
    first = {messages[u[0]].index: messages[u[0]] for u in units}
    sizes = [len(r.line or b"") for r in transcript.records]
    share = [sum(sizes[:i]) / sum(sizes) for i in range(len(sizes) + 1)]
    for k, start in enumerate(plan.starts, 1):
        assert can_start(first[start])  # a unit starts there, with a turn
        for unit in units:  # no unit spans the cut
            indexes = [messages[p].index for p in unit]
            assert not min(indexes) < start <= max(indexes)
        assert validate(parts.prefix(transcript, start)).errors == ()
        assert abs(share[start] - k / 3) <= 1 / 6
        prompts = [i for i, m in first.items() if is_prompt(m) and abs(share[i] - k / 3) <= 1 / 6]
        assert is_prompt(first[start]) or not prompts  # a prompt near the target is preferred


def test_one_part_needs_no_cut_and_a_single_message_has_none() -> None:
    transcript = _session("openai-20k-s3")
    assert parts.plan_parts(transcript, 1) == parts.Parts((), ())
    lone = transcript_from_records([{"role": "user", "content": "hi"}], "openai", "lone.jsonl")
    assert parts.plan_parts(lone, 3) == "no valid cut near 1/3 of the file"


def test_the_probes_each_round_is_scored_on() -> None:
    probes = [
        make_probe("a", "user_constraint", "use pnpm", origin=Origin(line=5)),
        make_probe("b", "decision", "use Redis", origin=Origin(line=50)),
        make_probe("old", "superseded", "port 5432", origin=Origin(line=8), superseded_by="new"),
        make_probe("new", "identifier", "port 6543", origin=Origin(line=40)),
        make_probe("x", "decoy", "never said", origin=Origin(line=0)),
        make_probe("n", "identifier", "v1.2.3"),  # no line: only when everything was seen
    ]
    ids = [[p.id for p in parts.probes_seen(probes, line)] for line in (10, 45, None)]
    assert ids == [
        ["a", "x"],  # the old port is current until the new one is seen
        ["a", "old", "new", "x"],
        ["a", "b", "old", "new", "x", "n"],
    ]


def _relink_case() -> tuple[Transcript, int, int, str]:
    """A generated Claude Code session with a `system` record between the first part's last
    message and the next prompt, which names it as its parent (as a stop hook's record does)."""
    transcript = _session("claude-code-20k-s1")
    plan = parts.plan_parts(transcript, 3)
    assert isinstance(plan, parts.Parts)
    raws: list[dict[str, Any]] = [dict(r.raw) for r in transcript.records]
    cut = plan.starts[0]
    prompt = raws[cut]
    system = {
        "parentUuid": prompt["parentUuid"],
        "isSidechain": False,
        "type": "system",
        "subtype": "stop_hook_summary",
        "uuid": "0000-stop-hook",
        "timestamp": prompt["timestamp"],
    }
    raws[cut] = {**prompt, "parentUuid": "0000-stop-hook"}
    raws.insert(cut, system)
    grown = transcript_from_records(raws, "claude-code", "stop-hook.jsonl")
    return grown, cut + 1, plan.starts[1] + 1, prompt["parentUuid"]


def test_an_appended_record_is_relinked_when_it_would_cut_the_conversation_off() -> None:
    transcript, start, end, _ = _relink_case()
    counter = exact_counter("claude-code")
    first = parts.prefix(transcript, start)
    output = settle(
        STRATEGIES["compact"].run(first, count(first, counter) // 10, Backends(counter))
    )
    dialect = get_dialect("claude-code")
    leaf = output.records[dialect.context(output)[-1].index].raw["uuid"]
    raw = parts.prefix(transcript, end)

    unlinked = parts._append(output, transcript.records[start:end])
    problem = parts.context_problem(output, unlinked, raw, start)
    assert problem is not None and problem.startswith("cuts the compacted conversation off (")

    grown, relinked = parts.extend(output, transcript, start, end)
    assert relinked
    assert parts.new_errors(grown, raw) == []
    assert parts.context_problem(output, grown, raw, start) is None
    first_added = grown.records[len(output.records)]
    assert first_added.raw["parentUuid"] == leaf
    changed = [
        i
        for i, record in enumerate(transcript.records[start:end])
        if grown.records[len(output.records) + i].line != record.line
    ]
    assert changed == [0]  # only the re-linked record differs from the session's bytes


@pytest.mark.parametrize("name", FORMATS)
def test_a_later_part_appended_to_a_compacted_output_continues_it(name: str) -> None:
    transcript = _session(name)
    plan = parts.plan_parts(transcript, 3)
    assert isinstance(plan, parts.Parts)
    counter = exact_counter(transcript.format)
    first = parts.prefix(transcript, plan.starts[0])
    output = settle(
        STRATEGIES["compact"].run(first, count(first, counter) // 10, Backends(counter))
    )
    grown, _ = parts.extend(output, transcript, plan.starts[0], plan.starts[1])
    raw = parts.prefix(transcript, plan.starts[1])
    assert parts.new_errors(grown, raw) == []
    assert parts.context_problem(output, grown, raw, plan.starts[0]) is None


def _real_like(tmp_path: Path, name: str = "codex-20k-s2") -> Path:
    """A generated fixture under another name: evaluated as a real session (no session to
    continue), so its drift runs over its parts."""
    folder = tmp_path / "real"
    folder.mkdir(exist_ok=True)
    shutil.copy(EVAL_FIXTURES / f"{name}.jsonl", folder / f"mine-{name}.jsonl")
    shutil.copy(EVAL_FIXTURES / f"{name}.probes.jsonl", folder / f"mine-{name}.probes.jsonl")
    return folder


def test_eval_reports_the_drift_over_parts_of_a_real_session(tmp_path: Path) -> None:
    folder = _real_like(tmp_path)
    records = tmp_path / "records.jsonl"
    result = cli(
        "eval",
        "--fixtures",
        str(folder),
        "--strategies",
        "compact",
        "--budgets",
        "default,0.1",
        "--json",
        "--records",
        str(records),
    )
    data = orjson.loads(result.stdout)
    assert data["notes"] == []
    assert {(r["budget"], r["cycle"]) for r in data["runs"]} == {("default", 1), (0.1, 1)}
    assert [(r["budget"], r["cycle"]) for r in data["parts"]["runs"]] == [
        (0.1, 1),
        (0.1, 2),
        (0.1, 3),
        ("default", 1),
        ("default", 2),
        ("default", 3),
    ]
    runs = data["parts"]["runs"]
    assert runs[2]["tokens_in"] < data["inputs"][0]["tokens_in"]  # compacted parts and a raw one
    assert runs[2]["budget_tokens"] == int(data["inputs"][0]["tokens_in"] * 0.1)
    assert [r["budget_tokens"] for r in runs[3:]] == [None, None, None]
    drift = data["parts"]["drift"]
    assert [(d["budget"], len(d["rounds"])) for d in drift] == [(0.1, 3), ("default", 3)]
    first = drift[0]["rounds"]
    assert drift[0]["loss"] == pytest.approx(
        round((first[0]["first_part_weighted"] - first[2]["first_part_weighted"]) * 100, 2)
    )
    lines = [orjson.loads(line) for line in records.read_bytes().splitlines()]
    assert {line.get("parts", False) for line in lines} == {True, False}
    assert {g["name"] for g in data["gates"]} >= {"drift_parts"}

    text = cli("eval", "--fixtures", str(folder), "--strategies", "compact", "--budgets", "0.1")
    assert "\nDrift over 3 parts of each real session (" in text.stdout
    assert "  drift over 3 parts (points)" in text.stdout


def test_an_append_that_breaks_the_file_ends_the_rounds_with_a_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _real_like(tmp_path)

    def broken(grown: Transcript, raw: Transcript) -> list[Finding]:
        return [Finding(7, "orphan-result", "a tool result answers no call")]

    monkeypatch.setattr(parts, "new_errors", broken)
    settings = EvalSettings(budgets=(0.1,), strategies=("compact",))
    evaluation, _ = run(EvalOptions(folders=(str(folder),), settings=settings))
    assert [r.cycle for r in evaluation.parts] == [1]
    assert evaluation.notes == [
        "mine-codex-20k-s2: compact at 10%, round 2: the previous output with part 2's records "
        "appended does not validate (line 7: orphan-result: a tool result answers no call); "
        "this and later rounds skipped"
    ]


def test_a_session_with_no_valid_cut_gets_a_note(tmp_path: Path) -> None:
    (tmp_path / "lone.jsonl").write_bytes(b'{"role": "user", "content": "use pnpm please"}\n')
    (tmp_path / "lone.probes.jsonl").write_bytes(
        b'{"id": "c", "category": "user_constraint", "fact": "use pnpm", '
        b'"origin": {"line": 1, "carrier": "user_text"}}\n'
    )
    settings = EvalSettings(budgets=(0.5,), strategies=("compact",))
    evaluation, _ = run(EvalOptions(folders=(str(tmp_path),), settings=settings))
    assert evaluation.parts == []
    assert evaluation.notes == ["lone: no drift over parts: no valid cut near 1/3 of the file"]


def _pi_session(turns: int) -> Transcript:
    """A pi session of `turns` long user/assistant turns, its entries chained by `parentId`."""
    raws: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": "s-1", "timestamp": "2026-02-03T09:00:00.000Z"}
    ]
    parent: str | None = None
    for n in range(2 * turns):
        role = "user" if n % 2 == 0 else "assistant"
        words = " ".join(f"{role}{n}-word{k}" for k in range(400))
        entry = f"e{n:04d}"
        raws.append(
            {
                "type": "message",
                "id": entry,
                "parentId": parent,
                "timestamp": f"2026-02-03T09:{n // 60:02d}:{n % 60:02d}.000Z",
                "message": {
                    "role": role,
                    "content": [{"type": "text", "text": f"Turn {n}: {words}"}],
                    "timestamp": 1770110000000 + n,
                },
            }
        )
        parent = entry
    return transcript_from_records(raws, "pi", "pi-long.jsonl")


def test_a_later_part_appended_to_a_compacted_pi_output_hangs_under_its_compaction() -> None:
    """pi writes what comes after a compaction under the compaction entry, the branch's leaf:
    a part appended to a compacted output is re-linked there, not left under the last message
    (which would leave the compaction off the branch)."""
    transcript = _pi_session(12)
    plan = parts.plan_parts(transcript, 3)
    assert isinstance(plan, parts.Parts)
    counter = exact_counter("pi")
    first = parts.prefix(transcript, plan.starts[0])
    output = settle(
        STRATEGIES["compact"].run(first, count(first, counter) // 10, Backends(counter))
    )
    assert get_dialect("pi").compactions(output)  # the first part was compacted
    grown, relinked = parts.extend(output, transcript, plan.starts[0], plan.starts[1])
    raw = parts.prefix(transcript, plan.starts[1])
    assert relinked
    assert grown.records[len(output.records)].raw["parentId"] == output.records[-1].raw["id"]
    assert parts.new_errors(grown, raw) == []
    assert parts.context_problem(output, grown, raw, plan.starts[0]) is None
