"""Reading and writing JSONL: byte-exact round trips and one clear line for each bad input."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compactcli import InputError, read_transcript, to_bytes, write_transcript
from compactcli.errors import OutputError
from compactcli.jsonl import BadLines, iter_records, render, write_bytes
from compactcli.transcript import Record
from tests.cli_runner import run
from tests.conftest import FIXTURES

BROKEN = FIXTURES / "broken"

BROKEN_CASES = [
    (
        "invalid-json.jsonl",
        "invalid-json.jsonl:2: invalid JSON: unexpected end of data at column 51",
    ),
    (
        "truncated.jsonl",
        "truncated.jsonl:2: truncated last line: no closing newline and not complete JSON",
    ),
    ("invalid-utf8.jsonl", "invalid-utf8.jsonl:1: invalid UTF-8 at byte 30 of the line"),
    (
        "utf-16.jsonl",
        "utf-16.jsonl:1: not UTF-8 but UTF-16 (it starts with a UTF-16 byte-order mark, as "
        "Windows PowerShell's > writes files): convert it first, e.g. iconv -f UTF-16 -t UTF-8",
    ),
    ("not-object.jsonl", "not-object.jsonl:2: expected a JSON object, found an array"),
    ("empty.jsonl", "empty.jsonl: empty file: no records"),
    ("blank.jsonl", "blank.jsonl: no records: the file holds only blank lines"),
    (
        "json-document.jsonl",
        "json-document.jsonl:1: not JSON Lines: the file is one JSON object over 7 lines (its "
        "'history' list as JSON Lines: jq -c '.history[]' json-document.jsonl)",
    ),
    (
        "json-array.jsonl",
        "json-array.jsonl:1: not JSON Lines: the file is one JSON array of 2 items (as JSON "
        "Lines: jq -c '.[]' json-array.jsonl)",
    ),
    (
        "json-object.jsonl",
        "json-object.jsonl:1: not JSON Lines: the file is one JSON object over 4 lines",
    ),
    (
        "pretty-printed.jsonl",
        "pretty-printed.jsonl:1: not JSON Lines: the file is 2 JSON objects over 30 lines, not "
        "one per line (as JSON Lines: jq -c . pretty-printed.jsonl)",
    ),
    (
        "conversations-per-line.jsonl",
        "conversations-per-line.jsonl: not a transcript: each line holds a whole conversation in "
        "its 'messages' list (a fine-tuning dataset or a log of API requests), not one record per "
        "line (the first as a transcript: head -n 1 conversations-per-line.jsonl | jq -c "
        "'.messages[]')",
    ),
    (
        "claude-code-history.jsonl",
        "claude-code-history.jsonl: not a transcript: Claude Code's prompt history "
        "(~/.claude/history.jsonl: one line per prompt typed, in every session); its sessions are "
        "under ~/.claude/projects",
    ),
    (
        "codex-history.jsonl",
        "codex-history.jsonl: not a transcript: Codex's prompt history (~/.codex/history.jsonl: "
        "one line per prompt typed, in every session); its sessions are under ~/.codex/sessions",
    ),
    (
        "unknown-format.jsonl",
        "unknown-format.jsonl: unknown transcript format (first record's keys: at, event); "
        "name one with --format (claude-code, codex, codex-legacy, pi, openai, openai-responses, "
        "anthropic)",
    ),
]


@pytest.mark.parametrize(("name", "message"), BROKEN_CASES)
def test_broken_input_raises_one_line(
    name: str, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(BROKEN)
    with pytest.raises(InputError) as caught:
        read_transcript(name)
    assert str(caught.value) == message
    assert caught.value.exit_code == 3


@pytest.mark.parametrize(("name", "message"), BROKEN_CASES)
def test_broken_input_on_the_command_line(
    name: str, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(BROKEN)
    result = run("validate", name)
    assert result.exit_code == 3
    assert result.stdout == ""
    assert result.stderr == f"error: {message}\n"


def test_broken_standard_input_is_named_stdin() -> None:
    result = run("validate", "-", input=(BROKEN / "not-object.jsonl").read_bytes())
    assert result.exit_code == 3
    assert result.stderr == "error: <stdin>:2: expected a JSON object, found an array\n"


def test_conversations_per_line_on_standard_input_get_no_command_to_run() -> None:
    data = (BROKEN / "conversations-per-line.jsonl").read_bytes()
    result = run("estimate", "-", input=data)
    assert result.exit_code == 3
    assert result.stderr == (
        "error: <stdin>: not a transcript: each line holds a whole conversation in its "
        "'messages' list (a fine-tuning dataset or a log of API requests), not one record per "
        "line\n"
    )


def test_a_json_document_on_standard_input_is_told_line_by_line() -> None:
    # standard input cannot be read again as a whole: the first line's own error
    result = run("estimate", "-", input=(BROKEN / "json-array.jsonl").read_bytes())
    assert result.exit_code == 3
    assert result.stderr == "error: <stdin>:1: expected a JSON object, found an array\n"


def test_a_json_document_is_named_by_estimate_and_compact(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(BROKEN)
    expected = (
        "error: json-document.jsonl:1: not JSON Lines: the file is one JSON object over 7 lines "
        "(its 'history' list as JSON Lines: jq -c '.history[]' json-document.jsonl)\n"
    )
    for command in (["estimate"], ["compact", "--dry-run"]):
        result = run(*command, "json-document.jsonl")
        assert (result.exit_code, result.stdout, result.stderr) == (3, "", expected)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # pretty-printed objects followed by something that is not JSON: the first line's error
        ('{\n  "a": 1\n}\n{\n  "b": 2\n}\nnot json\n', "invalid JSON: unexpected end of data"),
        # a pretty-printed array among the objects
        ('{\n  "a": 1\n}\n[\n  2\n]\n', "invalid JSON: unexpected end of data"),
        # one object alone is one JSON document
        ('{\n  "a": 1\n}\n', "not JSON Lines: the file is one JSON object over 3 lines"),
        # invalid UTF-8 among pretty-printed objects
        (b'{\n  "a": "\xe9"\n}\n{\n  "b": 2\n}\n', "invalid JSON: unexpected end of data"),
    ],
)
def test_pretty_printed_objects_only_when_the_whole_file_is_them(
    text: str | bytes, message: str, tmp_path: Path
) -> None:
    path = tmp_path / "records.jsonl"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(InputError) as caught:
        read_transcript(str(path))
    assert str(caught.value).startswith(f"{path}:1: {message}")


def test_pretty_printed_objects_with_a_bom_are_named(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{\n  "a": 1\n}\n\n{\n  "b": 2\n}')
    with pytest.raises(InputError) as caught:
        read_transcript(str(path))
    assert str(caught.value) == (
        f"{path}:1: not JSON Lines: the file is 2 JSON objects over 7 lines, not one per line "
        f"(as JSON Lines: jq -c . {path})"
    )


def test_missing_file() -> None:
    result = run("validate", "no/such/file.jsonl")
    assert result.exit_code == 3
    assert result.stderr == "error: no/such/file.jsonl: no such file or folder\n"


def test_skip_reports_each_skipped_line() -> None:
    bad = BadLines()
    transcript = read_transcript(str(BROKEN / "invalid-json.jsonl"), on_bad_line="skip", bad=bad)
    assert [r.lineno for r in transcript.records] == [1, 3]
    assert bad.lines == [(2, "invalid JSON: unexpected end of data at column 51")]
    result = run("validate", "--on-bad-line", "skip", str(BROKEN / "invalid-json.jsonl"))
    assert result.exit_code == 0
    assert result.stderr == (
        f"warning: {BROKEN / 'invalid-json.jsonl'}:2: skipped: "
        "invalid JSON: unexpected end of data at column 51\n"
    )


def test_keep_carries_a_bad_line_through_verbatim() -> None:
    path = BROKEN / "invalid-json.jsonl"
    transcript = read_transcript(str(path), on_bad_line="keep")
    assert transcript.records[1].raw is None
    assert to_bytes(transcript) == path.read_bytes()


def test_skip_with_nothing_left_is_an_error() -> None:
    with pytest.raises(InputError) as caught:
        read_transcript(str(BROKEN / "invalid-utf8.jsonl"), on_bad_line="skip")
    assert str(caught.value).endswith(
        "invalid-utf8.jsonl: no readable record: all 1 bad lines skipped"
    )


def test_round_trip_keeps_crlf_bom_blank_lines_and_missing_final_newline(tmp_path: Path) -> None:
    data = (
        b'\xef\xbb\xbf{"role":"user","content":"caf\\u00e9"}\r\n'
        b"\n"
        b'{ "role" : "assistant", "content" : "ok" }\r\n'
        b'{"role":"user","content":"\xe4\xbd\xa0\xe5\xa5\xbd"}'
    )
    path = tmp_path / "t.jsonl"
    path.write_bytes(data)
    transcript = read_transcript(str(path))
    assert all(isinstance(r.line, bytes) for r in transcript.records)
    assert transcript.format == "openai"
    assert to_bytes(transcript) == data
    out = tmp_path / "out.jsonl"
    write_transcript(transcript, str(out))
    assert out.read_bytes() == data


def test_edited_record_is_reserialised_and_others_are_not() -> None:
    records = [
        Record(raw={"a": 1}, line=b'{"a" : 1}', lineno=1, eol=b"\r\n"),
        Record(raw={"b": 2}, line=b'{"b":2}', lineno=2, eol=b""),
    ]
    edited = [records[0].with_raw({"a": 2}), records[1]]
    assert b"".join(render(edited)) == b'{"a":2}\r\n{"b":2}'


def test_appending_after_a_last_line_without_newline_adds_one() -> None:
    records = [Record(raw={"b": 2}, line=b'{"b":2}', lineno=1, eol=b""), Record(raw={"c": 3})]
    assert b"".join(render(records)) == b'{"b":2}\n{"c":3}\n'


def test_write_to_unwritable_folder_leaves_nothing(tmp_path: Path) -> None:
    transcript = read_transcript(str(FIXTURES / "broken" / "not-object.jsonl"), on_bad_line="skip")
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("running as a user who can write anywhere")
        with pytest.raises(OutputError) as caught:
            write_transcript(transcript, str(folder / "out.jsonl"))
        assert str(caught.value) == f"{folder / 'out.jsonl'}: cannot write: Permission denied"
        assert list(folder.iterdir()) == []
    finally:
        folder.chmod(0o700)


def test_write_into_missing_folder_fails_cleanly(tmp_path: Path) -> None:
    transcript = read_transcript(str(FIXTURES / "broken" / "not-object.jsonl"), on_bad_line="skip")
    target = tmp_path / "missing" / "out.jsonl"
    with pytest.raises(OutputError) as caught:
        write_transcript(transcript, str(target))
    assert str(caught.value) == f"{target}: cannot write: No such file or directory"


def test_atomic_write_replaces_and_keeps_mode(tmp_path: Path) -> None:
    source = tmp_path / "s.jsonl"
    source.write_bytes(b'{"role":"user","content":"hi"}\n')
    source.chmod(0o640)
    transcript = read_transcript(str(source))
    write_transcript(transcript, str(source), mode_from=str(source))
    assert source.read_bytes() == b'{"role":"user","content":"hi"}\n'
    assert source.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["s.jsonl"]


@pytest.mark.parametrize("short", [0, 1, 5, 1023, 1024, 1025, 2100], ids=lambda n: f"short-{n}")
def test_vectored_writes_go_on_after_a_short_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, short: int
) -> None:
    """`write_all` writes the pieces in batches with `os.writev`; when the system writes only
    part of a batch (as a signal or a full pipe may make it), the rest follows in order."""
    chunks = [f"{i:04d}".encode() * (i % 3) + b"\n" for i in range(2600)]
    expected = b"".join(chunks)
    real = os.writev
    calls = []

    def writev(fd: int, buffers: list[bytes]) -> int:
        calls.append(len(buffers))
        if len(calls) == 2:  # the second batch: only its first `short` bytes get written
            return os.write(fd, b"".join(buffers)[:short]) if short else 0
        return real(fd, buffers)

    monkeypatch.setattr(os, "writev", writev)
    target = tmp_path / "out.jsonl"
    write_bytes(chunks, str(target))
    assert target.read_bytes() == expected
    assert calls == [1024, 1024, 552]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@st.composite
def jsonl_files(draw: st.DrawFn) -> bytes:
    lines: list[bytes] = []
    for _ in range(draw(st.integers(min_value=1, max_value=6))):
        if draw(st.booleans()) and lines:
            lines.append(b"  " if draw(st.booleans()) else b"")
            continue
        obj = draw(st.dictionaries(st.text(max_size=6), json_values, max_size=4))
        spaced = draw(st.booleans())
        text = json.dumps(
            obj,
            ensure_ascii=draw(st.booleans()),
            separators=(", ", ": ") if spaced else (",", ":"),
        )
        lines.append(text.encode("utf-8", "surrogatepass"))
    eol = draw(st.sampled_from([b"\n", b"\r\n"]))
    body = eol.join(lines)
    if not lines[-1].strip() or draw(st.booleans()):
        body += eol
    return body


@settings(max_examples=200, deadline=None)
@given(jsonl_files())
def test_any_jsonl_round_trips_byte_for_byte(
    tmp_path_factory: pytest.TempPathFactory, data: bytes
) -> None:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return  # lone surrogates: not UTF-8, covered by the invalid UTF-8 case
    path = tmp_path_factory.mktemp("rt") / "t.jsonl"
    path.write_bytes(data)
    records = list(iter_records(str(path)))
    assert b"".join(render(records)) == data


def _large_file(path: Path) -> bytes:
    """About 3.5 MB: lines of many lengths, one longer than a read block (1 MiB), CRLF and LF
    endings, a blank line, and no final newline."""
    lines = []
    for i in range(3000):
        text = "x" * (i * 37 % 2500) + ("é" if i % 7 == 0 else "")
        lines.append(json.dumps({"role": "user", "content": text}).encode())
    lines.insert(1500, json.dumps({"role": "assistant", "content": "y" * (1 << 20)}).encode())
    lines.insert(10, b"")
    data = b"".join(line + (b"\r\n" if i % 5 == 0 else b"\n") for i, line in enumerate(lines))
    data = data.rstrip(b"\n").rstrip(b"\r")
    path.write_bytes(data)
    return data


def test_a_large_file_reads_byte_for_byte(tmp_path: Path) -> None:
    """Lines across read blocks, one longer than a block: every record, the hash and the size."""
    import hashlib

    from compactcli.jsonl import SourceInfo

    path = tmp_path / "large.jsonl"
    data = _large_file(path)
    info = SourceInfo(str(path))
    records = list(iter_records(str(path), info=info))
    assert b"".join(render(records)) == data
    assert [r.lineno for r in records] == list(range(1, len(records) + 1))
    assert info.size == len(data)
    transcript = read_transcript(str(path))
    assert transcript.sha256 == info.sha256 == hashlib.sha256(data).hexdigest()
    assert to_bytes(transcript) == data


def test_a_record_pickles_with_its_bytes(tmp_path: Path) -> None:
    import pickle

    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"role":"user","content":"hi"}\n')
    record = read_transcript(str(path)).records[0]
    copy = pickle.loads(pickle.dumps(record))
    assert (copy.raw, copy.line, copy.lineno, copy.eol) == (
        {"role": "user", "content": "hi"},
        b'{"role":"user","content":"hi"}',
        1,
        b"\n",
    )


def test_standard_input_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    data = b'{"role":"user","content":"hi"}\n'
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    transcript = read_transcript("-")
    assert [type(r.line) for r in transcript.records] == [bytes]
    assert to_bytes(transcript) == data
