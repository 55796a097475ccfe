"""The error line of a failed command (`compactcli.error_lines`), and Codex's report of a command
its sandbox stopped read as what the command printed (`compactcli.shell_text`)."""

from __future__ import annotations

import orjson
import pytest

from compactcli.error_lines import error_line
from compactcli.outcomes import content_error, exit_code, outcome
from compactcli.shell_text import shell_output
from compactcli.transcript import Block

PNPM_PREPARE = (
    "> webtech-monorepo@1.0.0 prepare /Users/u/fix-access\n> husky install\n\n"
    "command not found: husky\n ELIFECYCLE  Command failed with exit code 127.\n"
    " WARN   Local package.json exists, but node_modules missing, did you mean to install?\n"
)


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (  # zsh's word for a missing program, not the line of the script runner that ran it
            "Exit code 1\n" + PNPM_PREPARE,
            "command not found: husky",
        ),
        (  # the message that announced an address, not the exit code
            'Exit code 1\na pull request for branch "u:fix-access" into branch "main" already '
            "exists:\nhttps://github.com/org/repo/pull/6689",
            'a pull request for branch "u:fix-access" into branch "main" already exists:',
        ),
        (  # an address alone, or after a line that announced nothing, is output: the exit code
            "Exit code 1\nsee the pull request\nhttps://github.com/org/repo/pull/6689",
            "Exit code 1",
        ),
        (  # ESLint's count, not a warning that says "missing"
            "Exit code: 1\nOutput:\n/repo/src/hooks/useVenues.ts\n"
            "  12:5  error  `'` can be escaped with `&apos;`  react/no-unescaped-entities\n"
            "  119:6  warning  React Hook useEffect has a missing dependency: 'fetchVenues'  "
            "react-hooks/exhaustive-deps\n\n✖ 31 problems (2 errors, 29 warnings)\n"
            "  0 errors and 6 warnings potentially fixable with the `--fix` option.\n",
            "✖ 31 problems (2 errors, 29 warnings)",
        ),
        (  # Windows PowerShell's parse error: the message under the caret, not its record
            "Exit code: 1\nWall time: 0.8 seconds\nOutput:\nAt line:2 char:17\r\n"
            "+ where.exe codex && where.exe node\r\n+                 ~~\r\n"
            "The token '&&' is not a valid statement separator in this version.\r\n"
            "    + CategoryInfo          : ParserError: (:) [], ParentContainsErrorReco \r\n"
            "   rdException\r\n    + FullyQualifiedErrorId : InvalidEndOfLine\r\n",
            "The token '&&' is not a valid statement separator in this version.",
        ),
        (  # npm's code and errno lines say which error, the next line what it was
            "Exit code: 1\nOutput:\nnpm error code EACCES\nnpm error errno EACCES\n"
            "npm error FetchError: request to https://registry.npmjs.org/create-vite failed\n"
            "npm error     at ClientRequest.<anonymous> (index.js:130:14)\n",
            "npm error code EACCES npm error FetchError: request to "
            "https://registry.npmjs.org/create-vite failed",
        ),
        (  # pytest's line for the exception, not its own word on where it happened
            "Exit code: 4\nOutput:\nImportError while loading conftest '/r/tests/conftest.py'.\n"
            "tests/conftest.py:3: in <module>\n    import bcrypt\n"
            "E   ModuleNotFoundError: No module named 'bcrypt'\n",
            "E ModuleNotFoundError: No module named 'bcrypt'",
        ),
    ],
)
def test_the_error_line_is_the_message_not_a_wrapper_or_output(output: str, expected: str) -> None:
    assert error_line(output) == expected


def test_a_script_that_went_on_after_a_missing_program_printed_that_error() -> None:
    printed = PNPM_PREPARE + "prepare failed, trying alternative\n"
    assert content_error(printed, shell=True) == "command not found: husky"


@pytest.mark.parametrize(
    ("printed", "expected"),
    [
        (
            "Status: 000\n---\nnohup: failed to run command 'python3': No such file or directory\n"
            "---\nno port\n",
            "nohup: failed to run command 'python3': No such file or directory",
        ),
        ("ls: cannot access 'dist': No such file or directory\nbuild.log\n", None),
        ("The app cannot start without a key.\nsee README\n", ""),
        ("unknown flag: --output\n\nUsage:  gh api <endpoint> [flags]\n", None),
        ("grep: unrecognized option '--bar'\nUsage: grep [OPTION]...\n", None),
        ("The unknown flag handling was fixed.\n", ""),
    ],
)
def test_a_program_that_names_itself_says_what_failed(printed: str, expected: str | None) -> None:
    """`nohup: failed to run command ...`, `ls: cannot access ...`, `unknown flag: --output`: a
    program's own complaint, whatever the exit status of the line it ran in; prose that says
    "cannot" or "unknown flag" is none."""
    found = content_error(printed, shell=True)
    assert found == (printed.splitlines()[0] if expected is None else expected)


def _debug(text: str) -> str:
    """`text` as Rust's `{:?}` prints a string (its quotes included)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _denied(stderr: str, code: int = 128) -> str:
    """What Codex's `exec_command` returns for a command its sandbox stopped."""
    stream = "StreamOutput {{ text: {}, truncated_after_lines: None }}"
    inner = (
        f"Codex(Sandbox(Denied {{ output: ExecToolCallOutput {{ exit_code: {code}, "
        f"stdout: {stream.format(_debug(''))}, stderr: {stream.format(_debug(stderr))}, "
        f"aggregated_output: {stream.format(_debug(stderr))}, duration: 0ns, "
        "timed_out: false }, network_policy_decision: None }))"
    )
    return f"exec_command failed: CreateProcess {{ message: {_debug(inner)} }}"


def test_a_command_codex_s_sandbox_stopped_gives_what_it_printed() -> None:
    lock = "fatal: Unable to create '/repo/.git/index.lock': Operation not permitted"
    report = _denied(lock + "\n")
    assert report.count("\\\\n") == 2  # printed twice over, as Codex writes it
    assert shell_output(report) == f"Exit code: 128\n{lock}\n"
    assert error_line(report) == lock
    block = Block("tool_result", text=report, call_id="c1")
    assert exit_code(report) == 128
    found = outcome(block, shell=True, command="git add README.md")
    assert (found.status, found.error) == ("failed", lock)
    # a quote and a non-ASCII character in what it printed come back as printed
    said = _denied('error: pathspec "docs/é.md" did not match\n', code=1)
    assert shell_output(said) == 'Exit code: 1\nerror: pathspec "docs/é.md" did not match\n'


def test_a_report_that_does_not_read_so_stays_as_it_is() -> None:
    rejected = 'exec_command failed: CreateProcess { message: "Rejected(\\"rejected by user\\")" }'
    assert shell_output(rejected) == rejected
    broken = 'exec_command failed: CreateProcess { message: "Codex(Sandbox(Denied { output: Exec'
    assert shell_output(broken + "ToolCallOutput { exit_code: 1 }") == (
        broken + "ToolCallOutput { exit_code: 1 }"
    )
    wrapped = orjson.dumps({"output": _denied("fatal: x\n"), "metadata": {}}).decode()
    assert shell_output(wrapped) == "Exit code: 128\nfatal: x\n"


def test_a_command_an_earlier_codex_s_sandbox_stopped_gives_what_it_printed() -> None:
    report = (
        "failed in sandbox LinuxSeccomp with execution error: sandbox denied exec error, exit "
        "code: 128, stdout: [main 548dd49] feat: add import\n 3 files changed\n, stderr: fatal: "
        "Could not read from remote repository.\n"
    )
    assert shell_output(report) == (
        "Exit code: 128\n[main 548dd49] feat: add import\n 3 files changed\n\n"
        "fatal: Could not read from remote repository.\n"
    )
    assert error_line(report) == "fatal: Could not read from remote repository."
    timed_out = "failed in sandbox None with execution error: command timed out"
    assert shell_output(timed_out) == timed_out


def test_an_output_met_again_is_read_for_its_error_once() -> None:
    """The same output (a retried call, a copy of it) gives the same error line, read once."""
    output = "Exit code 1\n" + PNPM_PREPARE + "\nseen once"
    before = error_line.cache_info().hits, content_error.cache_info().hits
    first = error_line(output), content_error(output, shell=True)
    again = error_line(output), content_error(output, shell=True)
    assert again == first == ("command not found: husky", "command not found: husky")
    assert (error_line.cache_info().hits, content_error.cache_info().hits) == (
        before[0] + 1,
        before[1] + 1,
    )
