"""The input is never written over: every writing command refuses an output that is its input
(however the path reaches it) or another output, and `prune` and `summarize` replace their input
only with `--in-place`, as `compact` does (atomically, with a backup); a file that mixes formats
is an error naming the line where the other format starts."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from compactcli import read_transcript, to_bytes
from compactcli.errors import InputError
from compactcli.formats import FORMATS
from tests.cli_runner import run
from tests.conftest import CORPUS, FIXTURES

TRANSCRIPTS = FIXTURES / "transcripts"
SESSION = TRANSCRIPTS / "claude-code-summarize-session.jsonl"

COMMANDS = {
    "compact": ("--force", "--keep-recent-tokens", "2000"),
    "prune": ("--keep-recent", "0", "--min-chars", "50"),
    "summarize": ("--keep-recent-tokens", "2000"),
}


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Each test works in its own folder, holding `s.jsonl`, a copy of SESSION."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(SESSION, tmp_path / "s.jsonl")
    yield tmp_path


def _alias(kind: str, folder: Path) -> str:
    """Another path to `folder/s.jsonl`: as it is, through `..`, a symbolic or a hard link."""
    if kind == "same":
        return str(folder / "s.jsonl")
    if kind == "dotdot":
        (folder / "sub").mkdir(exist_ok=True)
        return str(folder / "sub" / ".." / "s.jsonl")
    if kind == "symlink":
        (folder / "link.jsonl").symlink_to(folder / "s.jsonl")
        return str(folder / "link.jsonl")
    assert kind == "hardlink"
    os.link(folder / "s.jsonl", folder / "hard.jsonl")
    return str(folder / "hard.jsonl")


ALIASES = ["same", "dotdot", "symlink", "hardlink"]
NAMED = {"same": False, "dotdot": False, "symlink": True, "hardlink": True}
"""Whether the message names the input besides the path given (a different file name)."""

WRITING = [
    (command, option)
    for command in COMMANDS
    for option in ("-o", "--stats", "--boundary", "--archive")
    if not (command == "summarize" and option == "--archive")
]


def _listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize("alias", ALIASES)
@pytest.mark.parametrize(("command", "option"), WRITING, ids=lambda v: str(v))
def test_an_output_that_is_the_input_is_refused(
    in_tmp: Path, command: str, option: str, alias: str
) -> None:
    target = _alias(alias, in_tmp)
    before = _listing(in_tmp)
    done = run(command, str(in_tmp / "s.jsonl"), *COMMANDS[command], option, target)
    named = f" {in_tmp / 's.jsonl'}" if NAMED[alias] else ""
    hint = "; use --in-place" if option == "-o" else ""
    assert (done.exit_code, done.stdout) == (2, "")
    assert done.stderr == f"error: {target}: {option} would overwrite the input{named}{hint}\n"
    assert (in_tmp / "s.jsonl").read_bytes() == SESSION.read_bytes()
    assert _listing(in_tmp) == before


@pytest.mark.parametrize("alias", ALIASES)
def test_an_out_dir_file_that_is_the_input_is_refused(in_tmp: Path, alias: str) -> None:
    """`--out-dir` keeps the input's name: the input's own folder, reached any way, is the
    input."""
    if alias == "same":
        folder = str(in_tmp)
    elif alias == "dotdot":
        (in_tmp / "sub").mkdir()
        folder = str(in_tmp / "sub" / "..")
    elif alias == "symlink":
        (in_tmp / "here").symlink_to(in_tmp)
        folder = str(in_tmp / "here")
    else:  # a hard link under the same name in another folder
        (in_tmp / "other").mkdir()
        os.link(in_tmp / "s.jsonl", in_tmp / "other" / "s.jsonl")
        folder = str(in_tmp / "other")
    done = run("compact", "s.jsonl", *COMMANDS["compact"], "--out-dir", folder)
    target = os.path.join(folder, "s.jsonl")
    named = "" if alias in ("same", "dotdot") else " s.jsonl"
    assert (done.exit_code, done.stdout) == (2, "")
    assert done.stderr == (
        f"error: {target}: --out-dir would overwrite the input{named}; use --in-place\n"
    )
    assert (in_tmp / "s.jsonl").read_bytes() == SESSION.read_bytes()


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("option", ["--stats", "--boundary"])
def test_in_place_still_refuses_a_report_that_is_the_input(
    in_tmp: Path, command: str, option: str
) -> None:
    done = run(command, "s.jsonl", *COMMANDS[command], "--in-place", option, "s.jsonl")
    assert (done.exit_code, done.stdout) == (2, "")
    assert done.stderr == f"error: s.jsonl: {option} would overwrite the input\n"
    assert _listing(in_tmp) == ["s.jsonl"]
    assert (in_tmp / "s.jsonl").read_bytes() == SESSION.read_bytes()


PAIRS = [
    (command, first, second)
    for command in COMMANDS
    for first, second in [
        ("-o", "--stats"),
        ("-o", "--boundary"),
        ("--stats", "--boundary"),
        ("-o", "--archive"),
    ]
    if not (command == "summarize" and second == "--archive")
]


@pytest.mark.parametrize(("command", "first", "second"), PAIRS)
@pytest.mark.parametrize("exists", [False, True], ids=["new", "existing"])
def test_two_outputs_that_are_one_file_are_refused(
    in_tmp: Path, command: str, first: str, second: str, exists: bool
) -> None:
    if exists:
        (in_tmp / "out.json").write_bytes(b"old\n")
    (in_tmp / "via").symlink_to(in_tmp)  # the second names it through a linked folder
    done = run(command, "s.jsonl", *COMMANDS[command], first, "out.json", second, "via/out.json")
    assert (done.exit_code, done.stdout) == (2, "")
    assert done.stderr == f"error: via/out.json: {second} would overwrite the {first} output\n"
    assert (in_tmp / "out.json").exists() is exists
    assert (in_tmp / "s.jsonl").read_bytes() == SESSION.read_bytes()


def test_reports_on_the_terminal_or_a_pipe_are_not_files_to_protect(in_tmp: Path) -> None:
    """A device is written as it is: `--stats /dev/null` and `--boundary /dev/null` are one
    device, not one file."""
    done = run("prune", "s.jsonl", "--stats", "/dev/null", "--boundary", "/dev/null", "-o", "o")
    assert (done.exit_code, done.stderr) == (0, "")
    assert not os.path.isfile("/dev/null")  # written to, never replaced by a file


def test_dry_run_writes_nothing_so_checks_nothing(in_tmp: Path) -> None:
    done = run("prune", "s.jsonl", "--dry-run", "-o", "s.jsonl", "--stats", "s.jsonl")
    assert done.exit_code == 0
    assert (in_tmp / "s.jsonl").read_bytes() == SESSION.read_bytes()


@pytest.mark.parametrize(
    "command",
    [
        ["compact", "--force", "--boundary", "b.json", "--out-dir", "out"],
        ["prune", "--boundary", "b.json", "--archive", "archive"],
        ["summarize", "--boundary", "b.json"],
    ],
    ids=["compact", "prune", "summarize"],
)
def test_a_dry_run_writes_no_file_not_even_a_report(in_tmp: Path, command: list[str]) -> None:
    done = run(command[0], "s.jsonl", *command[1:], "--stats", "stats.jsonl", "--dry-run")
    assert done.exit_code in (0, 1), done.stderr
    assert sorted(os.listdir()) == ["s.jsonl"]
    assert (in_tmp / "s.jsonl").read_bytes() == SESSION.read_bytes()


@pytest.mark.parametrize("command", ["compact", "prune", "summarize", "redact"])
def test_o_naming_a_folder_is_a_usage_error_that_names_out_dir(in_tmp: Path, command: str) -> None:
    os.mkdir("results")
    done = run(command, "s.jsonl", "-o", "results")
    assert (done.exit_code, done.stdout) == (2, "")
    assert done.stderr == (
        "error: -o results is a folder: give a file name, or --out-dir results to write each "
        "result into it\n"
    )
    assert os.listdir("results") == []


# ---------------------------------------------------------------------------------------------
# --in-place for prune and summarize


@pytest.mark.parametrize("command", ["prune", "summarize"])
def test_in_place_replaces_the_input_with_what_o_writes_and_keeps_a_backup(
    in_tmp: Path, command: str
) -> None:
    os.chmod("s.jsonl", 0o640)
    expected = run(command, "s.jsonl", *COMMANDS[command]).stdout_bytes
    assert expected != SESSION.read_bytes()
    done = run(command, "s.jsonl", *COMMANDS[command], "--in-place")
    assert (done.exit_code, done.stdout) == (0, "")
    assert (in_tmp / "s.jsonl").read_bytes() == expected
    assert (in_tmp / "s.jsonl.bak").read_bytes() == SESSION.read_bytes()
    assert os.stat("s.jsonl").st_mode & 0o777 == 0o640
    assert os.stat("s.jsonl.bak").st_mode & 0o777 == 0o640
    again = run(command, "s.jsonl", *COMMANDS[command], "--in-place")  # nothing left to do
    assert again.exit_code == 0
    assert _listing(in_tmp) == ["s.jsonl", "s.jsonl.bak"]
    assert (in_tmp / "s.jsonl").read_bytes() == expected
    shutil.copy(SESSION, "s.jsonl")
    third = run(command, "s.jsonl", *COMMANDS[command], "--in-place")
    assert third.exit_code == 0
    assert _listing(in_tmp) == ["s.jsonl", "s.jsonl.1.bak", "s.jsonl.bak"]  # never overwritten


@pytest.mark.parametrize("command", ["prune", "summarize"])
def test_in_place_through_a_symbolic_link_replaces_the_file_and_keeps_the_link(
    in_tmp: Path, command: str
) -> None:
    (in_tmp / "link.jsonl").symlink_to(in_tmp / "s.jsonl")
    expected = run(command, "s.jsonl", *COMMANDS[command]).stdout_bytes
    done = run(command, "link.jsonl", *COMMANDS[command], "--in-place")
    assert done.exit_code == 0
    assert (in_tmp / "link.jsonl").is_symlink()
    assert (in_tmp / "s.jsonl").read_bytes() == expected
    assert (in_tmp / "s.jsonl.bak").read_bytes() == SESSION.read_bytes()


@pytest.mark.parametrize("command", ["prune", "summarize"])
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["s.jsonl", "-o", "x", "--in-place"], "-o and --in-place cannot be used together"),
        (["-", "--in-place"], "--in-place needs a file: standard input cannot be replaced"),
    ],
)
def test_in_place_usage_errors(in_tmp: Path, command: str, args: list[str], message: str) -> None:
    done = run(command, *args, input=SESSION.read_bytes())
    assert (done.exit_code, done.stdout, done.stderr) == (2, "", f"error: {message}\n")
    assert _listing(in_tmp) == ["s.jsonl"]


@pytest.mark.parametrize("command", ["prune", "summarize"])
def test_in_place_dry_run_writes_nothing(in_tmp: Path, command: str) -> None:
    done = run(command, "s.jsonl", *COMMANDS[command], "--in-place", "--dry-run")
    assert done.exit_code == 0
    assert done.stdout.startswith("records: ")
    assert _listing(in_tmp) == ["s.jsonl"]


@pytest.mark.parametrize("command", ["prune", "summarize", "compact"])
def test_help_offers_in_place(command: str) -> None:
    assert "--in-place" in run(command, "--help").stdout


# ---------------------------------------------------------------------------------------------
# permission bits


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


@pytest.mark.usefixtures("umask_022")
@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("bits", [0o600, 0o640])
def test_outputs_keep_the_inputs_permission_bits(in_tmp: Path, command: str, bits: int) -> None:
    os.chmod("s.jsonl", bits)
    archive = ["--archive", "arch"] if command != "summarize" else []
    args = ["-o", "out.jsonl", "--stats", "stats.jsonl", "--boundary", "b.json", *archive]
    done = run(command, "s.jsonl", *COMMANDS[command], *args)
    assert done.exit_code == 0, done.stderr
    for name in ("out.jsonl", "stats.jsonl", "b.json"):
        assert os.stat(name).st_mode & 0o777 == bits, name
    stored = [p for p in (in_tmp / "arch").rglob("*") if p.is_file()] if archive else []
    assert stored or not archive
    for piece in stored:
        assert piece.stat().st_mode & 0o777 == 0o600  # archives are their owner's only


@pytest.mark.usefixtures("umask_022")
def test_a_report_that_exists_keeps_only_the_bits_the_input_has_too(in_tmp: Path) -> None:
    os.chmod("s.jsonl", 0o600)
    Path("stats.jsonl").write_bytes(b'{"old": 1}\n')
    os.chmod("stats.jsonl", 0o644)
    Path("b.json").write_bytes(b"{}\n")
    os.chmod("b.json", 0o640)
    done = run(
        "prune", "s.jsonl", "-o", "o.jsonl", "--stats", "stats.jsonl", "--boundary", "b.json"
    )
    assert done.exit_code == 0
    assert os.stat("stats.jsonl").st_mode & 0o777 == 0o600
    assert os.stat("b.json").st_mode & 0o777 == 0o600
    assert Path("stats.jsonl").read_bytes().startswith(b'{"old": 1}\n{"path":')


@pytest.mark.usefixtures("umask_022")
def test_a_batchs_outputs_keep_each_inputs_bits_and_its_stats_the_bits_all_share(
    in_tmp: Path,
) -> None:
    (in_tmp / "in").mkdir()
    shutil.copy(SESSION, "in/a.jsonl")
    shutil.copy(TRANSCRIPTS / "pi-summarize-session.jsonl", "in/b.jsonl")
    os.chmod("in/a.jsonl", 0o600)
    os.chmod("in/b.jsonl", 0o644)
    done = run("compact", "in", *COMMANDS["compact"], "--out-dir", "out", "--stats", "st.jsonl")
    assert done.exit_code == 0
    assert os.stat("out/a.jsonl").st_mode & 0o777 == 0o600
    assert os.stat("out/b.jsonl").st_mode & 0o777 == 0o644
    assert os.stat("st.jsonl").st_mode & 0o777 == 0o600


# ---------------------------------------------------------------------------------------------
# files that mix formats


FAMILIES = {  # fixture: (the line of its first record only its format writes, what it is)
    "claude-code-session.jsonl": (2, "a Claude Code record", "Claude Code records"),
    "claude-code-summarize-session.jsonl": (2, "a Claude Code record", "Claude Code records"),
    "codex-session.jsonl": (1, "a Codex record", "Codex records"),
    "pi-session.jsonl": (1, "a pi entry", "pi entries"),
    "openai-summarize-session.jsonl": (
        1,
        "a plain chat message (OpenAI or Anthropic)",
        "plain chat messages",
    ),
    "anthropic-summarize-session.jsonl": (
        1,
        "a plain chat message (OpenAI or Anthropic)",
        "plain chat messages",
    ),
}
MIXES = [
    ("claude-code-session.jsonl", "codex-session.jsonl"),
    ("claude-code-session.jsonl", "pi-session.jsonl"),
    ("codex-session.jsonl", "claude-code-summarize-session.jsonl"),
    ("pi-session.jsonl", "codex-session.jsonl"),
    ("pi-session.jsonl", "claude-code-summarize-session.jsonl"),
    ("codex-session.jsonl", "openai-summarize-session.jsonl"),
    ("claude-code-summarize-session.jsonl", "anthropic-summarize-session.jsonl"),
    ("openai-summarize-session.jsonl", "claude-code-summarize-session.jsonl"),
    ("anthropic-summarize-session.jsonl", "codex-session.jsonl"),
]


@pytest.mark.parametrize(("first", "second"), MIXES)
@pytest.mark.parametrize("command", ["validate", "estimate", "prune", "summarize", "compact"])
def test_a_file_that_mixes_formats_is_an_error_naming_the_other_formats_first_line(
    in_tmp: Path, first: str, second: str, command: str
) -> None:
    head = (TRANSCRIPTS / first).read_bytes()
    Path("mixed.jsonl").write_bytes(head + (TRANSCRIPTS / second).read_bytes())
    start, _, kind = FAMILIES[first]
    offset, what, _ = FAMILIES[second]
    line = head.count(b"\n") + offset
    done = run(command, "mixed.jsonl")
    assert (done.exit_code, done.stdout) == (3, "")
    assert done.stderr == (
        f"error: mixed.jsonl:{line}: {what} after {kind} (line {start} on): the file mixes "
        "formats; split it, or name the format to read it as with --format\n"
    )
    with pytest.raises(InputError) as caught:
        read_transcript("mixed.jsonl")
    assert caught.value.line == line
    named = first.split("-session")[0].replace("-summarize", "")
    forced = run("validate", "mixed.jsonl", "--format", named)  # read as named: no such error
    assert forced.exit_code in (0, 1)
    assert "mixes formats" not in forced.stdout + forced.stderr


def _transcripts() -> list[Path]:
    found = sorted(TRANSCRIPTS.glob("*.jsonl")) + sorted((FIXTURES / "invalid").glob("*.jsonl"))
    if CORPUS.is_dir():
        found += sorted(CORPUS.glob("*.jsonl"))
    return found


@pytest.mark.parametrize("path", _transcripts(), ids=lambda p: p.name)
def test_every_fixture_and_real_session_reads_as_one_format(path: Path) -> None:
    """No record of a real session or a fixture passes for another format's: each reads as
    the format its name says, as it did."""
    named = max((f for f in FORMATS if path.name.startswith(f + "-")), key=len)
    transcript = read_transcript(str(path))
    assert transcript.format == named
    assert to_bytes(transcript) == path.read_bytes()


# ---------------------------------------------------------------------------------------------
# eval writes files too


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["s.jsonl", "--probes", "p.jsonl", "--records", "p.jsonl"],
            "p.jsonl: --records would overwrite the input",
        ),
        (
            ["--fixtures", "fx", "--write-baseline", "fx/s.jsonl"],
            "fx/s.jsonl: --write-baseline would overwrite the input",
        ),
        (
            ["s.jsonl", "--probes", "p.jsonl", "--records", "r.json", "--write-baseline", "r.json"],
            "r.json: --write-baseline would overwrite the --records output",
        ),
    ],
)
def test_eval_refuses_outputs_that_are_its_inputs(
    in_tmp: Path, args: list[str], message: str
) -> None:
    Path("p.jsonl").write_bytes(b'{"id": "a"}\n')
    (in_tmp / "fx").mkdir()
    shutil.copy(SESSION, "fx/s.jsonl")
    before = {p: p.read_bytes() for p in in_tmp.rglob("*") if p.is_file()}
    done = run("eval", *args)
    assert (done.exit_code, done.stdout, done.stderr) == (2, "", f"error: {message}\n")
    assert {p: p.read_bytes() for p in in_tmp.rglob("*") if p.is_file()} == before
