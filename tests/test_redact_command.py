"""`compactcli redact` and `compact --redact`: every secret of every record goes, nothing else
changes; results go where `compact` sends them; bad input and bad options are refused."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import orjson
import pytest

from compactcli import redact_transcript as module
from compactcli.loading import read_transcript, to_bytes
from compactcli.redact_transcript import redact_transcript, redact_value
from compactcli.validation import validate
from tests.cli_runner import run
from tests.conftest import FIXTURES

SESSION = FIXTURES / "secrets" / "claude-code-session.jsonl"
GITHUB = "ghp_" + "AoxLU0Sq3vsEToxFBfWl6j1N961mCgMnen0a"
AWS = "AKIAQ3EGRTPLVXNYZ2KB"


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _write(name: str, records: list[Any]) -> Path:
    path = Path(name)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


OPENAI = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": f"Use the token {GITHUB} to push."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {
                    "name": "run_shell",
                    "arguments": json.dumps(
                        {"command": 'export PASSWORD="p@ss word"; git push', "timeout": 30}
                    ),
                },
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "pushed"},
    {"role": "assistant", "content": "Pushed."},
]


def test_only_the_secrets_change_and_the_rest_keeps_its_bytes() -> None:
    path = _write("s.jsonl", OPENAI)
    before = path.read_bytes()
    redaction = redact_transcript(read_transcript(str(path)))
    after = to_bytes(redaction.transcript)
    assert (redaction.records, dict(redaction.counts)) == (2, {"github-token": 1, "password": 1})
    old, new = before.splitlines(), after.splitlines()
    assert [a == b for a, b in zip(old, new, strict=True)] == [True, False, False, True, True]
    assert new[1] == old[1].replace(GITHUB.encode(), b"[REDACTED:github-token]")
    arguments = orjson.loads(new[2])["tool_calls"][0]["function"]["arguments"]
    assert json.loads(arguments) == {  # still JSON, keys in their order
        "command": 'export PASSWORD="[REDACTED:password]"; git push',
        "timeout": 30,
    }
    assert list(orjson.loads(new[2])) == list(OPENAI[2])
    assert validate(redaction.transcript).errors == ()


def test_a_secret_that_recurs_is_replaced_and_counted_wherever_it_is() -> None:
    """A short string is redacted once per transcript however often it recurs (ids and names
    recur in most records): each occurrence is still replaced and counted, as a field name
    that says secret or as text, and the result is that of redacting each record alone."""
    records = [
        {"role": "system", "content": "You are a coding agent."},
        *(
            {"role": "user", "content": f"Use the token {GITHUB} to push.", "api_key": "hunter22"}
            for _ in range(3)
        ),
        {"role": "user", "content": "hunter22", "name": f"token {GITHUB}"},
    ]
    whole = redact_transcript(read_transcript(str(_write("s.jsonl", records))))
    alone = [
        redact_transcript(read_transcript(str(_write(f"r{i}.jsonl", [record]))))
        for i, record in enumerate(records)
    ]
    assert dict(whole.counts) == {"github-token": 4, "api-key": 3}
    assert sum(r.secrets for r in alone) == whole.secrets
    assert to_bytes(whole.transcript).splitlines() == [
        to_bytes(r.transcript).rstrip(b"\n") for r in alone
    ]
    assert len(f"Use the token {GITHUB} to push.") <= module.SEEN_CHARS


def test_opaque_values_are_never_touched() -> None:
    looks_like_a_key = f"EqQB+{AWS}+Zz9"
    record = {
        "type": "assistant",
        "message": {
            "content": [
                {"type": "thinking", "thinking": "ok", "signature": looks_like_a_key},
                {"type": "redacted_thinking", "data": looks_like_a_key},
                {
                    "type": "image",
                    "source": {
                        "type": "base64",
                        "media_type": "image/png",
                        "data": looks_like_a_key,
                    },
                },
                {"type": "text", "text": f"data:image/png;base64,{looks_like_a_key}"},
                {"type": "reasoning", "encrypted_content": looks_like_a_key},
                {"type": "text", "text": looks_like_a_key},
            ]
        },
    }
    redacted, counts = redact_value(record)
    blocks = redacted["message"]["content"]
    assert blocks[0]["signature"] == looks_like_a_key
    assert blocks[1]["data"] == looks_like_a_key
    assert blocks[2]["source"]["data"] == looks_like_a_key
    assert blocks[3]["text"] == f"data:image/png;base64,{looks_like_a_key}"
    assert blocks[4]["encrypted_content"] == looks_like_a_key
    assert blocks[5]["text"] == "EqQB+[REDACTED:aws-access-key]+Zz9"  # plain text: redacted
    assert counts == {"aws-access-key": 1}


def test_a_field_named_as_a_secret_loses_its_value() -> None:
    value = {"input": {"password": "hunter2", "user": "dana", "token": "$TOKEN", "n": 3}}
    assert redact_value(value) == (
        {"input": {"password": "[REDACTED:password]", "user": "dana", "token": "$TOKEN", "n": 3}},
        {"password": 1},
    )
    same = {"a": ["no secret", {"b": 1}]}
    assert redact_value(same)[0] is same


def test_a_result_that_would_not_validate_is_not_written(monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write("s.jsonl", OPENAI)
    real = module.redact_named

    def breaks_pairing(name: str, value: str) -> tuple[str, dict[str, int]]:
        if name == "tool_call_id":
            return "call_other", {"secret": 1}
        return real(name, value)

    monkeypatch.setattr(module, "redact_named", breaks_pairing)
    done = run("redact", str(path), "-o", "out.jsonl")
    assert done.exit_code == 1
    assert done.stderr.startswith(
        "error: s.jsonl: the redacted transcript would not validate (line "
    )
    assert done.stderr.rstrip().endswith("nothing written")
    assert not Path("out.jsonl").exists()


def test_standard_output_carries_the_records_and_nothing_else() -> None:
    path = _write("s.jsonl", OPENAI)
    done = run("redact", str(path))
    assert done.exit_code == 0
    assert done.stderr == ""
    lines = done.stdout_bytes.splitlines()
    assert len(lines) == len(OPENAI) and b"[REDACTED:github-token]" in lines[1]


def test_dry_run_counts_by_kind_and_writes_nothing() -> None:
    path = _write("s.jsonl", OPENAI)
    before = path.read_bytes()
    done = run("redact", str(path), "--dry-run", "--json")
    assert done.exit_code == 0
    assert orjson.loads(done.stdout) == {
        "path": "s.jsonl",
        "status": "redacted",
        "output": None,
        "backup": None,
        "records": 5,
        "records_changed": 2,
        "secrets": 2,
        "kinds": {"github-token": 1, "password": 1},
        "exit_code": 0,
        "message": None,
        "warnings": [],
    }
    assert path.read_bytes() == before
    assert sorted(p.name for p in Path().iterdir()) == ["s.jsonl"]


def test_in_place_keeps_a_backup_and_a_second_run_changes_nothing() -> None:
    path = _write("s.jsonl", OPENAI)
    path.chmod(0o640)
    before = path.read_bytes()
    done = run("redact", str(path), "--in-place", "--json")
    assert done.exit_code == 0
    report = orjson.loads(done.stdout)
    assert (report["output"], report["backup"]) == ("s.jsonl", "s.jsonl.bak")
    assert Path("s.jsonl.bak").read_bytes() == before
    assert GITHUB.encode() not in path.read_bytes()
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    again = run("redact", str(path), "--in-place", "--json")
    assert orjson.loads(again.stdout)["status"] == "unchanged"
    assert orjson.loads(again.stdout)["backup"] is None
    assert sorted(p.name for p in Path().iterdir()) == ["s.jsonl", "s.jsonl.bak"]


def test_many_files_go_to_a_folder_with_a_total_row() -> None:
    Path("in").mkdir()
    _write("in/a.jsonl", OPENAI)
    _write("in/b.jsonl", [*OPENAI[:1], {"role": "user", "content": "nothing secret"}])
    done = run("redact", "in", "--out-dir", "out")
    assert done.exit_code == 0, done.stderr
    assert done.stdout.splitlines()[-1].split() == [
        "total", "(2", "files)", "7", "2", "2", "github-token", "1,", "password", "1",
    ]  # fmt: skip
    assert Path("out/b.jsonl").read_bytes() == Path("in/b.jsonl").read_bytes()
    assert b"[REDACTED:github-token]" in Path("out/a.jsonl").read_bytes()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["s.jsonl", "-o", "s.jsonl"],
            "error: s.jsonl: -o would overwrite the input; use --in-place",
        ),
        (
            ["s.jsonl", "t.jsonl"],
            "error: 2 inputs: choose where the results go with --out-dir DIR or --in-place (or --dry-run)",
        ),
        (
            ["s.jsonl", "-o", "x.jsonl", "--in-place"],
            "error: -o and --in-place cannot be used together",
        ),
        (["-", "--in-place"], "error: --in-place needs files: standard input cannot be replaced"),
    ],
)
def test_bad_options_exit_2(args: list[str], message: str) -> None:
    _write("s.jsonl", OPENAI)
    _write("t.jsonl", OPENAI)
    done = run("redact", *args)
    assert (done.exit_code, done.stderr.strip()) == (2, message)


def test_unreadable_input_exits_3_naming_file_and_line() -> None:
    Path("bad.jsonl").write_text('{"role": "user", "content": "hi"}\n{not json\n')
    done = run("redact", "bad.jsonl", "-o", "out.jsonl")
    assert done.exit_code == 3
    assert done.stderr.startswith("error: bad.jsonl:2: ")
    assert not Path("out.jsonl").exists()
    missing = run("redact", "nope.jsonl")
    assert (missing.exit_code, missing.stderr.strip()) == (
        3,
        "error: nope.jsonl: no such file or folder",
    )


def test_compact_redact_writes_in_place_when_only_redaction_changed_it() -> None:
    path = _write("s.jsonl", OPENAI)
    before = path.read_bytes()
    plain = run("compact", str(path), "--in-place", "--json")
    assert orjson.loads(plain.stdout)["status"] == "unchanged"
    assert path.read_bytes() == before and not Path("s.jsonl.bak").exists()
    done = run("compact", str(path), "--in-place", "--redact", "--json")
    report = orjson.loads(done.stdout)
    assert (done.exit_code, report["status"], report["backup"]) == (0, "redacted", "s.jsonl.bak")
    assert report["redacted"] == {
        "records": 5,
        "records_changed": 2,
        "secrets": 2,
        "kinds": {"github-token": 1, "password": 1},
    }
    assert GITHUB.encode() not in path.read_bytes()
    assert Path("s.jsonl.bak").read_bytes() == before


def test_compact_redact_is_in_the_stats_report() -> None:
    done = run(
        "compact", str(SESSION), "--force", "--redact", "-o", "c.jsonl", "--stats", "s.jsonl"
    )
    assert done.exit_code == 0, done.stderr
    stats = orjson.loads(Path("s.jsonl").read_bytes())
    assert stats["redact"]["secrets"] == 6
    assert b"Hunter2-staging" not in Path("c.jsonl").read_bytes()
    assert b"Hunter2-staging" in SESSION.read_bytes()
