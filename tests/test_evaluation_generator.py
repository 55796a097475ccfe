"""The fixture generator: valid in every format, reproducible byte for byte, facts where planted."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest

from compactcli import get_dialect, validate
from compactcli.errors import UsageError
from compactcli.evaluation.generator import SPECS, Spec, generate, parse_spec
from compactcli.evaluation.harness import _append
from compactcli.evaluation.matching import Haystack, find, key_terms
from compactcli.evaluation.measure import count, exact_counter
from compactcli.evaluation.probes import dump_probes
from compactcli.evaluation.render import RENDER_FORMATS, render_more
from compactcli.evaluation.scenario import continue_session
from compactcli.evaluation.strategies import STRATEGIES, Backends
from compactcli.evaluation.view import build_view, compactcli_boilerplate, cwd_of
from compactcli.stages.compact import settle
from tests.conftest import EVAL_FIXTURES, ROOT

SMALL = [Spec(fmt, "20k", seed) for fmt in RENDER_FORMATS for seed in (11, 12, 13)]


@pytest.fixture(scope="module", params=SMALL, ids=[s.name for s in SMALL])
def fixture(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    spec: Spec = request.param
    return generate(spec, exact_counter(spec.format))


def test_every_generated_transcript_validates(fixture) -> None:  # type: ignore[no-untyped-def]
    report = validate(fixture.transcript)
    assert (report.errors, report.warnings) == ((), ())


def test_the_size_is_about_the_target(fixture) -> None:  # type: ignore[no-untyped-def]
    tokens = count(fixture.transcript, exact_counter(fixture.transcript.format))
    assert 15_000 <= tokens <= 25_000  # about: episodes are a few thousand tokens each


def test_every_fact_is_in_its_input_and_every_decoy_is_not(fixture) -> None:  # type: ignore[no-untyped-def]
    view = build_view(fixture.transcript, compactcli_boilerplate())
    cwd = cwd_of(fixture.transcript)
    for probe in fixture.probes:
        hit = find(probe, view.whole, cwd=cwd)
        if probe.category == "decoy":
            assert hit is None, probe
        else:
            assert hit is not None and hit.level in ("exact", "normalized", "path"), probe


def test_key_terms_are_found_and_deferred_asks_are_in_the_todo_list(fixture) -> None:  # type: ignore[no-untyped-def]
    view = build_view(fixture.transcript, compactcli_boilerplate())
    for probe in fixture.probes:
        if probe.match.key_terms:
            assert key_terms(probe.match, view.whole) is not None, probe
    todos = Haystack(
        [
            s.text
            for s in view.segments
            if s.kind == "tool_call"
            and s.text.split()[0] in ("TodoWrite", "update_plan", "todo_write")
        ]
    )
    asks = [p for p in fixture.probes if p.category == "pending_ask"]
    last = max(asks, key=lambda p: p.origin.depth or 0.0)
    for probe in asks:
        if probe is not last:
            assert key_terms(probe.match, todos) is not None, probe


def test_probes_say_where_they_were_planted(fixture) -> None:  # type: ignore[no-untyped-def]
    context = get_dialect(fixture.transcript.format).context(fixture.transcript)
    for probe in fixture.probes:
        if probe.category == "decoy":
            assert probe.origin.carrier == "none"
            continue
        origin = probe.origin
        assert origin.line is not None and origin.message_index is not None
        assert 0.0 <= (origin.depth or 0.0) < 1.0
        assert context[origin.message_index].index == origin.line - 1
        line = (fixture.transcript.records[origin.line - 1].line or b"").decode()
        fact = probe.fact.split("/")[-1] if probe.match.mode == "path" else probe.fact
        escaped = json.dumps(fact, ensure_ascii=False)[1:-1]
        twice = json.dumps(escaped, ensure_ascii=False)[1:-1]  # inside a JSON string argument
        assert fact in line or escaped in line or twice in line, probe


def test_every_category_and_carrier_is_covered() -> None:
    fixture = generate(SPECS[4], exact_counter(SPECS[4].format))
    categories = Counter(p.category for p in fixture.probes)
    assert set(categories) == {
        "user_constraint",
        "pending_ask",
        "file_modified",
        "file_read",
        "error_string",
        "decision",
        "identifier",
        "superseded",
        "decoy",
    }
    carriers = {p.origin.carrier for p in fixture.probes}
    assert carriers == {"user_text", "assistant_text", "tool_input", "tool_result", "none"}
    depths = Counter(
        min(4, int((p.origin.depth or 0) * 5)) for p in fixture.probes if p.origin.depth
    )
    assert sorted(depths) == [0, 1, 2, 3, 4]  # early, middle and late
    images = [
        b
        for m in get_dialect("claude-code").context(fixture.transcript)
        for b in m.blocks
        if b.kind == "image"
    ]
    assert len(images) == 1  # the pasted screenshot, a distractor
    superseded = [p for p in fixture.probes if p.category == "superseded"]
    for probe in superseded:
        new = next(p for p in fixture.probes if p.id == probe.superseded_by)
        assert new.category == "identifier" and (new.origin.line or 0) > (probe.origin.line or 0)


def test_the_same_spec_gives_the_same_bytes() -> None:
    spec = Spec("codex", "20k", 21)
    one, two = (generate(spec, exact_counter("codex")) for _ in range(2))
    assert one.data == two.data
    assert dump_probes(one.probes) == dump_probes(two.probes)
    assert generate(Spec("codex", "20k", 22), exact_counter("codex")).data != one.data


def test_the_committed_fixtures_are_what_the_generator_makes() -> None:
    done = subprocess.run(
        [sys.executable, "scripts/eval_fixtures.py", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    names = sorted(p.name for p in EVAL_FIXTURES.glob("*.probes.jsonl"))
    assert names == sorted(f"{s.name}.probes.jsonl" for s in SPECS)


@pytest.mark.parametrize("fmt", RENDER_FORMATS)
def test_new_turns_appended_to_a_compacted_transcript_stay_valid(fmt: str) -> None:
    spec = Spec(fmt, "20k", 31)
    counter = exact_counter(fmt)
    fixture = generate(spec, counter)
    assert fixture.session is not None
    budget = count(fixture.transcript, counter) // 10
    compacted = settle(STRATEGIES["compact"].run(fixture.transcript, budget, Backends(counter)))
    turns, facts = continue_session(fixture.session, 2, 4000)
    rendered = render_more(turns, compacted, fixture.session, 2)
    appended = _append(compacted, rendered.records)
    assert validate(appended).errors == ()
    context = get_dialect(fmt).context(appended)
    assert context[-1].index == len(appended.records) - 1 or fmt == "codex"
    kinds = Counter(f.category for f in facts)
    assert kinds["user_constraint"] == kinds["decision"] == kinds["error_string"] == 1
    view = build_view(appended, compactcli_boilerplate())
    for fact in facts:
        if fact.category != "superseded":
            assert fact.fact in "\n".join(view.whole.segments) or fact.category == "file_modified"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "claude-code:500k",
            "--generate takes FORMAT:SIZE:SEED (e.g. claude-code:500k:7), not 'claude-code:500k'",
        ),
        (
            "pi:20k:1",
            "--generate: unknown format 'pi'; generated formats: claude-code, codex, openai, anthropic",
        ),
        ("codex:30k:1", "--generate: unknown size '30k'; sizes: 20k, 100k, 500k"),
        ("codex:20k:x", "--generate: the seed must be a whole number, not 'x'"),
    ],
)
def test_generate_specs_are_checked(text: str, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_spec(text)
    assert str(caught.value) == message
    assert parse_spec("claude-code:500k:7") == Spec("claude-code", "500k", 7)


def test_a_500k_session_is_generated_in_seconds() -> None:
    spec = Spec("claude-code", "500k", 7)
    fixture = generate(spec, exact_counter("claude-code"))
    tokens = count(fixture.transcript, exact_counter("claude-code"))
    assert 450_000 <= tokens <= 550_000
    assert validate(fixture.transcript).errors == ()
    assert len(fixture.probes) > 150


@pytest.mark.parametrize("fmt", RENDER_FORMATS)
def test_many_seeds_plant_their_facts(fmt: str) -> None:
    # every seed plants without a clash (a setting changed twice, a decoy that occurs)
    for seed in range(100, 106):
        fixture = generate(Spec(fmt, "100k", seed), exact_counter(fmt))
        assert validate(fixture.transcript).errors == ()
        assert len({p.id for p in fixture.probes}) == len(fixture.probes)
