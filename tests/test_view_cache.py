"""Views are remembered per transcript, and an edit never sees the views of what it replaced.

A transcript's views (messages, context, usage, compactions, validation) are computed once and
kept on it (`Transcript.view`); `evolve` with other records starts afresh, reusing only what
belongs to records that are the same objects (Claude Code: the parse of each unchanged record,
and a chain whose records did not change). Every test compares the views of an edited transcript
with those of the same records read from scratch.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compactcli import get_dialect, read_transcript
from compactcli.formats.claude_code import chain as claude_code_chain
from compactcli.formats.claude_code import dialect as claude_code
from compactcli.formats.claude_code import state as claude_code_state
from compactcli.transcript import (
    Record,
    Transcript,
    get_in,
    set_in,
)
from tests.conftest import FIXTURES
from tests.transcript_strategies import FORMAT_NAMES, Plan, plans, render

SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _outcome(call: Any) -> Any:
    """What `call()` gives, or the exception it raises (as its type and message)."""
    try:
        return call()
    except Exception as error:  # compared, not hidden: both sides must fail the same way
        return (type(error).__name__, str(error))


def views(transcript: Transcript) -> dict[str, Any]:
    dialect = get_dialect(transcript.format)
    return {
        "messages": _outcome(lambda: dialect.messages(transcript)),
        "context": _outcome(lambda: dialect.context(transcript)),
        "usage": _outcome(lambda: dialect.usage(transcript)),
        "compactions": _outcome(lambda: dialect.compactions(transcript)),
        "validate": _outcome(lambda: dialect.validate(transcript)),
        "model": _outcome(lambda: dialect.model(transcript)),
    }


def fresh(transcript: Transcript) -> Transcript:
    """The same records, parsed again into new objects, in a transcript with no history."""
    records = tuple(
        Record(
            raw=orjson.loads(orjson.dumps(r.raw)) if r.raw is not None else None,
            line=r.line,
            lineno=r.lineno,
            eol=r.eol,
        )
        for r in transcript.records
    )
    return Transcript(records=records, format=transcript.format, source=transcript.source)


def _fixture(name: str) -> Transcript:
    return read_transcript(str(FIXTURES / "transcripts" / f"{name}.jsonl"))


def _replace(transcript: Transcript, index: int, raw: Any) -> Transcript:
    records = list(transcript.records)
    records[index] = records[index].with_raw(raw)
    return transcript.evolve(records=tuple(records))


def _first(transcript: Transcript, test: Any) -> int:
    return next(i for i, r in enumerate(transcript.records) if r.is_object and test(r.raw))


# ---------------------------------------------------------------------------------------------
# remembering


def test_a_view_is_computed_once_per_transcript(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[int] = []
    original = claude_code_state._build_state

    def counting(transcript: Transcript) -> Any:
        built.append(len(transcript.records))
        return original(transcript)

    monkeypatch.setattr(claude_code_state, "_build_state", counting)
    transcript = _fixture("claude-code-session")
    dialect = get_dialect("claude-code")
    first = dialect.context(transcript)
    assert dialect.context(transcript) == first
    assert get_dialect("claude-code").messages(transcript)  # another instance: same views
    get_dialect("claude-code").validate(transcript)
    assert built == [len(transcript.records)]
    # new stats or source, same records: the views carry over
    again = transcript.evolve(stats=(), source="other.jsonl")
    assert dialect.context(again) == first
    assert built == [len(transcript.records)]


def test_a_count_noted_on_a_settled_copy_keeps_what_it_reuses_from_the_original() -> None:
    from compactcli.estimate import context_tokens, note_context_tokens
    from compactcli.tokens import get_counter

    before = _fixture("claude-code-session")
    dialect = get_dialect("claude-code")
    dialect.context(before)
    counter = get_counter("heuristic", format="claude-code")
    copies = tuple(Record(r.raw, r.line, r.lineno, r.eol) for r in before.records)
    after = before.evolve(records=copies)
    note_context_tokens(after, counter, context_tokens(before, counter))
    # the count is remembered, and the parse of every record is still the original's to reuse
    assert context_tokens(after, counter) == context_tokens(before, counter)
    assert after.inherited(claude_code_state._STATE) is not None
    assert views(after) == views(fresh(after))


def test_a_returned_list_is_the_callers_own() -> None:
    transcript = _fixture("claude-code-session")
    dialect = get_dialect("claude-code")
    context = dialect.context(transcript)
    count = len(context)
    context.clear()
    dialect.messages(transcript).clear()
    dialect.validate(transcript).append(None)  # type: ignore[arg-type]
    assert len(dialect.context(transcript)) == count
    assert None not in dialect.validate(transcript)


@pytest.mark.parametrize("fmt", ["codex", "pi", "openai", "anthropic"])
def test_other_formats_remember_their_views_too(fmt: str) -> None:
    transcript = _fixture(f"{fmt}-session")
    dialect = get_dialect(fmt)
    first = dialect.context(transcript)
    assert dialect.context(transcript) == first
    assert dialect.context(transcript) is not dialect.context(transcript)
    assert any(key.startswith(f"{fmt}:") for key in transcript._views)


# ---------------------------------------------------------------------------------------------
# editing


def test_an_edited_tool_result_shows_in_the_new_transcript_only() -> None:
    before = _fixture("claude-code-session")
    dialect = get_dialect("claude-code")
    old = views(before)
    message = next(m for m in dialect.context(before) if m.tool_results)
    block = message.tool_results[0]
    records = list(before.records)
    records[message.index] = dialect.clear_result(records[message.index], block, "[cleared]")
    after = before.evolve(records=tuple(records))
    edited = next(m for m in dialect.context(after) if m.index == message.index)
    assert edited.tool_results[0].text == "[cleared]"
    assert views(after) == views(fresh(after))
    assert views(before) == old


def test_renaming_a_call_renames_its_result_in_later_records() -> None:
    before = _fixture("claude-code-session")
    dialect = get_dialect("claude-code")
    call_message = next(m for m in dialect.messages(before) if m.tool_calls)
    call = call_message.tool_calls[0]
    result = next(
        b for m in dialect.messages(before) for b in m.tool_results if b.call_id == call.call_id
    )
    assert result.name == call.name
    raw = set_in(before.records[call_message.index].raw, (*call.path, "name"), "Renamed")
    after = _replace(before, call_message.index, raw)
    renamed = [
        b for m in dialect.messages(after) for b in m.tool_results if b.call_id == call.call_id
    ]
    assert [b.name for b in renamed] == ["Renamed"]
    assert views(after) == views(fresh(after))


def test_records_inserted_in_front_move_every_message() -> None:
    before = _fixture("claude-code-session")
    dialect = get_dialect("claude-code")
    dialect.context(before)
    blank = Record(raw=None, line=b"", lineno=0)
    after = before.evolve(records=(blank, before.records[0], *before.records))
    assert [m.index for m in dialect.messages(after)][:3] != [
        m.index for m in dialect.messages(before)
    ][:3]
    assert views(after) == views(fresh(after))


def test_a_new_parent_changes_the_chain() -> None:
    before = _fixture("claude-code-session")
    dialect = get_dialect("claude-code")
    context = dialect.context(before)
    last = context[-1]
    root = before.records[context[0].index].raw["uuid"]
    raw = {**before.records[last.index].raw, "parentUuid": root}
    after = _replace(before, last.index, raw)
    assert [m.index for m in dialect.context(after)] == [context[0].index, last.index]
    assert views(after) == views(fresh(after))
    assert dialect.context(before) == context


def test_a_record_given_an_impossible_shape_fails_and_is_reported() -> None:
    before = _fixture("claude-code-session")
    dialect = get_dialect("claude-code")
    dialect.context(before)
    index = _first(before, lambda raw: raw.get("type") == "assistant")
    raw = set_in(before.records[index].raw, ("message", "content"), 5)
    after = _replace(before, index, raw)
    with pytest.raises(Exception, match=r"message\.content is a number"):
        dialect.messages(after)
    assert [f.code for f in dialect.validate(after) if f.severity == "error"][:1] == ["bad-shape"]
    assert views(after) == views(fresh(after))
    # and back: the original content again gives the original views
    restored = _replace(after, index, before.records[index].raw)
    assert views(restored) == views(before)


def _count_calls(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    """The record indexes `claude_code_state.<name>` is called with from now on (its int argument)."""
    calls: list[int] = []
    original = getattr(claude_code_state, name)

    def counting(*args: Any) -> Any:
        calls.append(next(a for a in args if isinstance(a, int)))
        return original(*args)

    monkeypatch.setattr(claude_code_state, name, counting)
    return calls


def test_records_appended_after_every_record_reuse_the_state(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = _fixture("claude-code-session")
    dialect = get_dialect("claude-code")
    dialect.context(before)
    parsed = _count_calls(monkeypatch, "_record_message")
    replayed = _count_calls(monkeypatch, "_replay")
    call = next(b for m in dialect.messages(before) for b in m.tool_calls)
    leaf = dialect.context(before)[-1]
    leaf_raw = before.records[leaf.index].raw
    answer = {
        **before.records[_first(before, lambda raw: raw.get("type") == "user")].raw,
        "parentUuid": leaf_raw["uuid"],
        "uuid": "00000000-0000-4000-8000-000000000001",
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call.call_id, "content": "again"}],
        },
    }
    after = before.evolve(records=(*before.records, Record(raw=answer)))
    [last] = [m for m in dialect.messages(after) if m.index == len(before.records)]
    assert last.tool_results[0].name == call.name  # the name of a call made before
    assert parsed == [len(before.records)]  # only the new record was parsed
    assert replayed == []  # and the others' messages were carried over as they were
    assert views(after) == views(fresh(after))


def test_records_replaced_in_place_reuse_the_state_of_the_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Prune's edit: tool results cleared in place. Only the replaced records are parsed (the
    others' messages are replayed), and their results keep the names of the calls they
    answer."""
    before = _fixture("claude-code-session")
    dialect = get_dialect("claude-code")
    dialect.context(before)
    cleared = [m for m in dialect.messages(before) if m.tool_results][:2]
    records = list(before.records)
    for message in cleared:
        block = message.tool_results[0]
        records[message.index] = dialect.clear_result(records[message.index], block, "[gone]")
    parsed = _count_calls(monkeypatch, "_record_message")
    replayed = _count_calls(monkeypatch, "_replay")
    after = before.evolve(records=tuple(records))
    edited = [m for m in dialect.messages(after) if m.index in {c.index for c in cleared}]
    assert [m.tool_results[0].text for m in edited] == ["[gone]", "[gone]"]
    assert (
        [m.tool_results[0].name for m in edited]
        == [m.tool_results[0].name for m in cleared]
        != [None, None]
    )
    assert parsed == [m.index for m in cleared]
    assert replayed and not set(replayed) & set(parsed)
    assert views(after) == views(fresh(after))


def test_records_edited_where_no_chain_rule_reads_keep_the_chain(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Results cleared in place leave every skeleton as it was: the chain and the uuid map
    are carried over, not built again."""
    before = _fixture("claude-code-session")
    dialect = get_dialect("claude-code")
    dialect.context(before)
    records = list(before.records)
    for message in [m for m in dialect.messages(before) if m.tool_results][:2]:
        block = message.tool_results[0]
        records[message.index] = dialect.clear_result(records[message.index], block, "[gone]")
    built: list[object] = []
    original = claude_code_state._build_chain
    monkeypatch.setattr(
        claude_code_state, "_build_chain", lambda *a: built.append(a) or original(*a)
    )
    after = before.evolve(records=tuple(records))
    assert [m.index for m in dialect.context(after)] == [m.index for m in dialect.context(before)]
    assert built == []
    assert views(after) == views(fresh(after))


def test_a_replaced_record_that_answers_another_call_is_parsed_in_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A replaced record whose results answer a call the old one did not answer reads the tool
    names as they stand at its place: every record is parsed again, in order."""
    before = _fixture("claude-code-session")
    dialect = get_dialect("claude-code")
    dialect.context(before)
    results = [m for m in dialect.messages(before) if m.tool_results]
    calls = [b for m in dialect.messages(before) for b in m.tool_calls]
    target = results[-1]
    other = next(c for c in calls if c.call_id != target.tool_results[0].call_id)
    raw = set_in(
        before.records[target.index].raw,
        (*target.tool_results[0].path, "tool_use_id"),
        other.call_id,
    )
    parsed = _count_calls(monkeypatch, "_record_message")
    after = _replace(before, target.index, raw)
    [edited] = [m for m in dialect.messages(after) if m.index == target.index]
    assert edited.tool_results[0].name == other.name
    assert set(parsed) == {target.index}  # the others are replayed in order, not parsed
    assert views(after) == views(fresh(after))


@pytest.mark.parametrize("name", ["claude-code-compacted", "claude-code-preserved-segment"])
def test_the_uuid_map_of_appended_records_extends_the_one_before(name: str) -> None:
    """A transcript that adds records after another's extends that one's uuid map: the same map,
    in the same order, as one made from scratch."""
    before = _fixture(name)
    dialect = get_dialect("claude-code")
    leaf = dialect.context(before)[-1]  # the chain, and so the uuid map, is made
    leaf_raw = before.records[leaf.index].raw
    added = [
        {**leaf_raw, "type": "progress", "uuid": "p-1", "parentUuid": leaf_raw["uuid"]},
        {**leaf_raw, "uuid": "u-1", "parentUuid": "p-1"},
    ]
    after = before.evolve(records=(*before.records, *(Record(raw=r) for r in added)))
    state = claude_code.ClaudeCodeDialect()._state(after)
    assert state.base is not None and state.graph is None
    made, scratch = state.uuid_graph(), claude_code_chain._graph(state.skeletons)
    for part in ("index", "parent", "raw_parent", "bridge"):
        assert list(getattr(made, part).items()) == list(getattr(scratch, part).items())
    assert made.parent["u-1"] == leaf_raw["uuid"]  # bridged over the progress record
    assert views(after) == views(fresh(after))


def test_views_of_a_settled_copy_match() -> None:
    before = _fixture("claude-code-summarize-session")
    dialect = get_dialect("claude-code")
    dialect.validate(before)
    copies = tuple(
        Record(raw=orjson.loads(orjson.dumps(r.raw)), line=r.line, lineno=r.lineno, eol=r.eol)
        if i % 2 and r.raw is not None
        else r
        for i, r in enumerate(before.records)
    )
    after = before.evolve(records=copies)
    assert views(after) == views(before)


# ---------------------------------------------------------------------------------------------
# any edit, any format


def _leaves(value: Any, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    if isinstance(value, dict):
        found = [path] if path else []
        for key, item in value.items():
            found.extend(_leaves(item, (*path, key)))
        return found
    if isinstance(value, list):
        found = [path] if path else []
        for position, item in enumerate(value):
            found.extend(_leaves(item, (*path, position)))
        return found
    return [path]


def _strings(transcript: Transcript) -> list[str]:
    found: list[str] = []
    for record in transcript.records:
        stack = [record.raw]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                found.append(item)
            elif isinstance(item, dict):
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)
    return found


def edit(transcript: Transcript, rng: random.Random) -> Transcript:
    """One random edit: drop, repeat, move or re-parse a record, or change one value in it."""
    records = list(transcript.records)
    objects = [i for i, r in enumerate(records) if r.is_object]
    index = rng.choice(objects)
    action = rng.randrange(6)
    if action == 0 and len(objects) > 1:
        del records[index]
    elif action == 1:
        records.insert(rng.randrange(len(records) + 1), records[index])
    elif action == 2:
        record = records.pop(index)
        records.insert(rng.randrange(len(records) + 1), record)
    elif action == 3:
        records[index] = records[index].with_raw(orjson.loads(orjson.dumps(records[index].raw)))
    else:
        raw = records[index].raw
        path = rng.choice(_leaves(raw))
        old = get_in(raw, path)
        strings = _strings(transcript)
        choices: list[Any] = [None, 5, [], {}, "x", *rng.sample(strings, min(3, len(strings)))]
        value = rng.choice([c for c in choices if c != old] or [None])
        records[index] = records[index].with_raw(set_in(raw, path, value))
    return transcript.evolve(records=tuple(records))


def _edits_match_fresh_reads(
    transcript: Transcript,
    edit: Callable[[Transcript, random.Random], Transcript],
    rng: random.Random,
    *,
    rounds: int,
) -> None:
    """After each of `rounds` edits the views equal a fresh read's; the original's are intact."""
    original = views(transcript)
    current = transcript
    for _ in range(rounds):
        current = edit(current, rng)
        assert views(current) == views(fresh(current))
    assert views(transcript) == original


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
@SETTINGS
@given(plan=plans(), seed=st.integers(0, 2**32 - 1))
def test_edited_transcripts_have_the_views_of_a_fresh_read(
    tmp_path: Path, fmt: str, plan: Plan, seed: int
) -> None:
    path = tmp_path / f"{fmt}.jsonl"
    path.write_bytes(render(plan, fmt))
    _edits_match_fresh_reads(read_transcript(str(path)), edit, random.Random(seed), rounds=4)


CHAIN_KEYS = ("parentUuid", "uuid", "timestamp", "isSidechain", "type", "subtype", "isVirtual")
CLAUDE_CODE_FIXTURES = (
    "claude-code-session",
    "claude-code-compacted",
    "claude-code-preserved-segment",
    "claude-code-sidechain",
    "claude-code-summarize-parallel",
    "claude-code-interrupted",
)


def chain_edit(transcript: Transcript, rng: random.Random) -> Transcript:
    """One edit of what the Claude Code chain is built from: a parent, a uuid, a timestamp, a
    type, a preserved segment, a message id; or a record dropped, repeated or moved."""
    if rng.random() < 0.25:
        return edit(transcript, rng)
    objects = [i for i, r in enumerate(transcript.records) if r.is_object]
    index = rng.choice(objects[-3:] if rng.random() < 0.4 else objects)  # the leaf, often
    raw = transcript.records[index].raw
    if isinstance(raw.get("message"), dict) and rng.random() < 0.15:
        # another record's content: tool results come and go
        donor = transcript.records[rng.choice(objects)].raw.get("message")
        if isinstance(donor, dict) and "content" in donor:
            message = {**raw["message"], "content": donor["content"]}
            return _replace(transcript, index, {**raw, "message": message})
    values: dict[str, list[Any]] = {}
    for record in transcript.records:
        if record.is_object:
            for key in CHAIN_KEYS:
                if key in record.raw:
                    values.setdefault(key, []).append(record.raw[key])
    segment = get_in(raw, ("compactMetadata",)) if "compactMetadata" in raw else None
    found = segment.get("preservedSegment") if isinstance(segment, dict) else None
    if isinstance(segment, dict) and isinstance(found, dict) and rng.random() < 0.5:
        # one end of the segment, set or added (an earlier edit may have dropped it)
        key = rng.choice(["headUuid", "anchorUuid", "tailUuid"])
        value = rng.choice([*values.get("uuid", []), None, 7])
        metadata = {**segment, "preservedSegment": {**found, key: value}}
        return _replace(transcript, index, {**raw, "compactMetadata": metadata})
    elif isinstance(raw.get("message"), dict) and rng.random() < 0.2:
        message = {**raw["message"], "id": rng.choice(["msg_a", "msg_b", None])}
        return _replace(transcript, index, {**raw, "message": message})
    else:
        key = rng.choice(CHAIN_KEYS)
        pool = [*values.get(key, []), None, True, 3, "2030-01-01T00:00:00.000Z", "user"]
        return _replace(transcript, index, {**raw, key: rng.choice(pool)})


@pytest.mark.parametrize("name", CLAUDE_CODE_FIXTURES)
@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_claude_code_chain_edits_have_the_views_of_a_fresh_read(name: str, seed: int) -> None:
    _edits_match_fresh_reads(_fixture(name), chain_edit, random.Random(seed), rounds=6)
