"""The faster paths of reading and writing give what the plain ones give.

`to_bytes` joins the records' bytes in one go and must equal `render`; `collector_paused` holds off
automatic garbage collection inside and restores the collector's state after, also on error.
"""

from __future__ import annotations

import gc

import pytest

from compactcli.jsonl import render
from compactcli.lifetime import collector_paused
from compactcli.loading import read_transcript, to_bytes
from compactcli.transcript import Record, Transcript
from tests.conftest import FIXTURES


@pytest.mark.parametrize(
    "name", ["claude-code-session", "claude-code-no-final-newline", "codex-no-final-newline"]
)
def test_to_bytes_is_render_joined(name: str) -> None:
    transcript = read_transcript(str(FIXTURES / "transcripts" / f"{name}.jsonl"))
    records = transcript.records
    edited = transcript.evolve(
        records=(
            records[0].with_raw({**records[0].raw, "edited": True}),
            *records[1:],
            Record(raw={"new": "record"}, eol=b""),
        )
    )
    for case in (transcript, edited):
        assert to_bytes(case) == b"".join(render(case.records))
    assert to_bytes(transcript) == (FIXTURES / "transcripts" / f"{name}.jsonl").read_bytes()


def test_an_unchanged_last_line_without_newline_gets_one_only_when_followed() -> None:
    records = (
        Record(raw={"a": 1}, line=b'{"a":1}', lineno=1, eol=b""),
        Record(raw={"b": 2}, line=b'{"b":2}', lineno=2, eol=b""),
    )
    assert to_bytes(Transcript(records=records, format="openai")) == b'{"a":1}\n{"b":2}'


def test_collector_paused_holds_off_collection_and_restores_it() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("stop")
    assert gc.isenabled()


def test_collector_paused_leaves_a_disabled_collector_disabled() -> None:
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_collector_paused_decorates_a_function() -> None:
    @collector_paused()
    def inside() -> bool:
        return gc.isenabled()

    assert inside() is False
    assert inside() is False
    assert gc.isenabled()
