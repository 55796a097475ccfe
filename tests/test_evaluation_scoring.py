"""Scoring a compacted transcript: the view, our boilerplate, negative probes, integrity."""

from __future__ import annotations

import orjson
import pytest

from compactcli.evaluation.generator import Spec, generate, transcript_from_records
from compactcli.evaluation.integrity import check
from compactcli.evaluation.measure import count, exact_counter
from compactcli.evaluation.probes import make_probe
from compactcli.evaluation.scorer import score
from compactcli.evaluation.strategies import DROPPED, STRATEGIES, Backends
from compactcli.evaluation.view import build_view, compactcli_boilerplate
from compactcli.injection import PREAMBLE
from compactcli.stages.compact import settle
from compactcli.summarizers.extractive import FILES_MODIFIED
from compactcli.transcript import Transcript

BOILERPLATE = compactcli_boilerplate()


def _openai(*messages: dict[str, object]) -> Transcript:
    return transcript_from_records(list(messages), "openai", "t.jsonl")


def _summary(text: str) -> dict[str, object]:
    # a plain-format summary message as the summarize stage writes it (marked as ours)
    return {
        "role": "user",
        "content": f"{PREAMBLE}\n\n{text}",
        "compactcli": {"stage": "summarize"},
    }


def test_our_headings_and_framing_never_satisfy_a_probe() -> None:
    transcript = _openai(
        {"role": "system", "content": "s"},
        _summary(f"{FILES_MODIFIED}\n- src/a.py\n\n## Pending asks and todos\n- none"),
        {"role": "user", "content": "go on"},
        {"role": "assistant", "content": "ok"},
    )
    view = build_view(transcript, BOILERPLATE)
    assert view.has_summary
    heading = make_probe("h", "decision", "files modified", key_terms=("files", "modified"))
    framing = make_probe(
        "f", "decision", "reference material, not instructions", key_terms=("reference material",)
    )
    path = make_probe("p", "file_modified", "src/a.py")
    scores = {s.probe.id: s for s in score([heading, framing, path], view, None)}
    assert not scores["h"].passed and not scores["f"].passed
    assert scores["p"].passed and scores["p"].whole.where == {
        "message": 1,
        "record": 1,
        "role": "user",
        "block": "text",
        "summary": True,
    }
    assert scores["p"].summary is not None and scores["p"].summary.passed


def test_summary_scope_only_sees_the_summary() -> None:
    transcript = _openai(
        _summary("- Decided: use pnpm"),
        {"role": "user", "content": "CI runs with LIMIT=40"},
        {"role": "assistant", "content": "ok"},
    )
    probes = [make_probe("i", "identifier", "LIMIT=40", mode="exact")]
    [result] = score(probes, build_view(transcript, BOILERPLATE), None)
    assert result.passed and result.summary is not None and not result.summary.passed


@pytest.mark.parametrize(
    ("texts", "violated"),
    [
        (["port was X=1, now X=2"], False),  # next to the new value
        (["X=1", "later: X=2"], False),  # followed by the new value
        (["X=2", "use X=1"], True),  # the old value last: it reads as current
        (["X=1 " + "y" * 300], True),  # alone
        (["nothing here"], False),
    ],
)
def test_a_superseded_value_may_appear_only_beside_or_before_the_new_one(
    texts: list[str], violated: bool
) -> None:
    transcript = _openai(*({"role": "user", "content": t} for t in texts))
    new = make_probe("n", "identifier", "X=2", mode="exact")
    old = make_probe("o", "superseded", "X=1", superseded_by="n", window=40)
    results = {s.probe.id: s for s in score([old, new], build_view(transcript, BOILERPLATE), None)}
    assert results["o"].violated is violated


def test_a_superseded_value_without_its_replacement_may_not_appear_at_all() -> None:
    transcript = _openai({"role": "user", "content": "port X=1 then X=2"})
    old = make_probe("o", "superseded", "X=1")
    [result] = score([old], build_view(transcript, BOILERPLATE), None)
    assert result.violated and result.whole.where == {
        "message": 0,
        "record": 0,
        "role": "user",
        "block": "text",
        "summary": False,
    }


def test_a_decoy_is_violated_when_found_and_a_near_miss_is_reported() -> None:
    transcript = _openai({"role": "user", "content": "The Redis pool is configured. Never push."})
    decoy = make_probe("d", "decoy", "Never push")
    constraint = make_probe(
        "c", "user_constraint", "Never push to main.", key_terms=("never push",)
    )
    results = {
        s.probe.id: s for s in score([decoy, constraint], build_view(transcript, BOILERPLATE), None)
    }
    assert results["d"].violated
    assert not results["c"].passed and results["c"].whole.near


def test_images_and_encrypted_items_are_not_searched() -> None:
    transcript = _openai(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "see"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,QUJD"}},
            ],
        }
    )
    view = build_view(transcript, BOILERPLATE)
    assert view.whole.segments == ["see"]


# ---------------------------------------------------------------------------------------------
# integrity


def _records(t: Transcript) -> list[dict[str, object]]:
    return [r.raw for r in t.records]


def test_integrity_catches_a_lost_result_an_orphan_and_an_altered_code_block() -> None:
    before = _openai(
        {"role": "user", "content": "fix it"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "x"},
        {"role": "assistant", "content": "Done:\n```python\nx = 1\n```"},
    )
    assert check(before, before) == []
    records = _records(before)
    lost = _openai(*records[:2], records[3])
    assert check(before, lost)[0].startswith("invalid: line 2: ")
    assert "unpaired-call: tool call c1 lost its result" in check(before, lost)
    altered = _openai(
        *records[:3], {"role": "assistant", "content": "Done:\n```python\nx = 2\n```"}
    )
    assert check(before, altered) == [
        "code-block: a kept code block differs from the input (```python)"
    ]


# ---------------------------------------------------------------------------------------------
# strategies


@pytest.fixture(scope="module")
def fixture():  # type: ignore[no-untyped-def]
    return generate(Spec("anthropic", "20k", 41), exact_counter("anthropic"))


@pytest.mark.parametrize("name", ["drop-oldest", "prune", "head-tail", "extractive", "compact"])
def test_every_strategy_fits_a_reachable_budget_and_stays_intact(fixture, name: str) -> None:  # type: ignore[no-untyped-def]
    counter = exact_counter("anthropic")
    budget = count(fixture.transcript, counter) * 6 // 10
    output = settle(STRATEGIES[name].run(fixture.transcript, budget, Backends(counter)))
    tokens = count(output, counter)
    assert tokens <= budget
    if name == "head-tail":  # its limit is continuous: the search fills the budget
        assert tokens >= budget * 0.9
    assert check(fixture.transcript, output) == []
    view = build_view(output, BOILERPLATE)
    assert view.has_summary is (name in ("drop-oldest", "extractive", "compact"))
    if name == "drop-oldest":
        assert not any(DROPPED in s for s in view.whole.segments)  # our marker is boilerplate
        assert any(DROPPED in orjson.dumps(r.raw).decode() for r in output.records)


def test_a_budget_out_of_reach_gives_the_smallest_result(fixture) -> None:  # type: ignore[no-untyped-def]
    counter = exact_counter("anthropic")
    output = STRATEGIES["head-tail"].run(fixture.transcript, 10, Backends(counter))
    shortest = max(
        len(b.text)
        for m in build_view(output, BOILERPLATE).segments
        for b in [m]
        if m.kind == "tool_result"
    )
    assert shortest < 80  # every output cut down to its marker
