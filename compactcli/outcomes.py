"""How a tool call went, read from the text of its result, whatever the transcript format.

`outcome(block, shell, command)` says whether a call was `ok`, `failed` or `rejected` (with the
reason the user gave), and for a failure its distinctive error line (`compactcli.error_lines`);
a search that found nothing is no failure, and `aborted` and `refused_call` tell a stopped run
or a refused call from a failure of the work. Prune writes the error line into the placeholder
of a result it clears, and `cleared_error` / `cleared_soft_error` read it back, so a cleared
result keeps its outcome. `carries_error` and `pasted_errors` find error lines in any text.
Nothing here reads a summarizer."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import orjson

from compactcli.error_lines import (
    ERROR_CHARS,
    ERROR_HEAD,
    ERROR_STRONG,
    ERROR_WEAK,
    EXIT_CODE,
    FAIL_HEAD,
    MESSAGE_LINES,
    NOISE_LINE,
    PASS_LINE,
    TOOL_ERROR_TAG,
    TRACEBACK,
    bare,
    cut_error,
    error_line,
    unwrapped,
    with_other_errors,
)
from compactcli.lazy_pattern import compile_lazily
from compactcli.placeholders import CLEARED_DUPLICATE, CLEARED_PREFIXES, CLEARED_RESULT
from compactcli.shell_text import sandbox_denied, shell_output, unmarked, unnumbered
from compactcli.tools import looks_up, read_only_command
from compactcli.transcript import Block
from compactcli.trim import head_tail, one_line

ANSWER_CHARS = 120
"""The longest one-line output kept as a command's answer (characters)."""

_ABORTED = compile_lazily(
    r"^(?:Command aborted|\(command cancelled\)|aborted(?: by user(?: after [\d.]+s)?)?|"
    r"Cancelled: parallel tool call .*)\s*$",
    re.MULTILINE,
)
_SCRIPT_FAILED = "Script failed\n"  # the head of a failed Codex code-mode script's output
_NOT_RUN = compile_lazily(  # what a shell, or Codex, says first when it cannot run the command
    r"\A\s*(?:\S*sh: (?:(?:line )?\d+: )?[^\n:]+: "
    r"(?:(?:command )?not found|No such file or directory|Permission denied)"
    r"|zsh: (?:command not found|no such file or directory|permission denied): \S+"
    r"|execution error: )"  # Codex: the process could not start (its sandbox refused it, ...)
)

_REJECTED = "The user doesn't want to proceed with this tool use"


def rejected(text: str) -> bool:
    """Whether a tool result says the user rejected the call (Claude Code's words)."""
    return text.startswith(_REJECTED)


_REJECTION_REASON = compile_lazily(
    r"(?:The user provided the following reason for the rejection|"
    r"To tell you how to proceed, the user said):\s*(.+)",
    re.DOTALL,
)


# What the prune stage writes after the digest of a result that failed: the error line, so a
# cleared failure still says how it failed (to the model, and to `outcome` here).
CLEARED_FAILURE = "; failed: "
_CLEARED_ERROR = compile_lazily(r"sha256:[0-9a-f]{64}" + re.escape(CLEARED_FAILURE) + r"(.+)\]\Z")


CLEARED_SOFT = "; printed an error: "
_CLEARED_SOFT = compile_lazily(r"sha256:[0-9a-f]{64}" + re.escape(CLEARED_SOFT) + r"(.+)\]\Z")


def cleared_error(text: str) -> str | None:
    """The error line a prune placeholder kept for a result that failed (`CLEARED_RESULT`,
    then `CLEARED_FAILURE` and the line); None otherwise."""
    if not text.startswith((CLEARED_RESULT, CLEARED_DUPLICATE)):
        return None
    match = _CLEARED_ERROR.search(text)
    return match.group(1) if match else None


def cleared_soft_error(text: str) -> str | None:
    """The error line a prune placeholder kept for a result that did not fail but printed an
    error (`content_error`; after `CLEARED_SOFT`); None otherwise."""
    if not text.startswith((CLEARED_RESULT, CLEARED_DUPLICATE)):
        return None
    match = _CLEARED_SOFT.search(text)
    return match.group(1) if match else None


@dataclass(frozen=True, slots=True)
class Outcome:
    status: str  # "ok" | "failed" | "rejected"
    error: str = ""  # the distinctive error line, for a failure
    reason: str = ""  # what the user said when rejecting the call


_MEANING = compile_lazily(r" \(curl: [^()]*\)$")


def only_exit_code(line: str) -> bool:
    """Whether an error line says nothing but an exit code (`Command exited with code 28`), and
    perhaps what the program means by it (`(curl: timed out)`)."""
    return EXIT_CODE.fullmatch(_MEANING.sub("", line.strip())) is not None


def exit_code(text: str) -> int | None:
    """The exit code a shell result reports near its start or end, if any (of a command Codex's
    sandbox stopped, the one its report gives)."""
    if sandbox_denied(text):
        text = shell_output(text)
    for part in (text[:400], text[-300:]):
        match = EXIT_CODE.search(part) if "xit" in part else None  # in every form it takes
        if match:
            return int(match.group(1) or match.group(2))
    return None


def one_line_answer(text: str) -> str:
    """What a shell printed, when that is one short line (a path, a version, a count, a hash:
    the answer the command was run for), out of the agents' wrappers (exit code, wall time,
    `Output:` lines); "" when it printed nothing, more than one line, a line longer than
    `ANSWER_CHARS`, or its output was cleared."""
    text = TOOL_ERROR_TAG.sub("", shell_output(text))
    kept = []
    for raw in text.splitlines():
        line = raw.strip()
        if line and not NOISE_LINE.match(line):
            kept.append(line)
            if len(kept) > 1:
                return ""
    if not kept or len(kept[0]) > ANSWER_CHARS or kept[0].startswith("[Old tool result"):
        return ""
    return kept[0]


_SOFT_ERROR = compile_lazily(  # "Failed to", ENOENT in quotes: source code that says them
    # (a line that opens `failed to connect ...` is a Go or C program's error, as Docker's; a
    # program that names itself first, `nohup: failed to run command ...`, `ls: cannot access
    # ...`, says its own; so does one refusing its command line, `unknown flag: --output`)
    r"^(?:npm ERR!|npm error\b|error TS\d+|.*\berror TS\d+:|Script error\b|Uncaught\b|Unhandled\b|"
    r"(?:[\w.-]+: )?failed to [a-z]|[\w.-]+: cannot [a-z]|"
    r"(?:[\w.-]+: )?(?:unknown (?:shorthand )?flag|unrecognized option|invalid option)\b)|"
    r"(?<![\"'`])(?:\bFailed to [a-z]|\b(?:ENOENT|EACCES|EADDRINUSE|ECONNREFUSED)\b)"
)
# What a shell or a program it sources says went wrong (`zsh:11: operation not permitted: x`,
# `~/.oh-my-zsh/oh-my-zsh.sh:129: nice(5) failed: ...`, `bash: line 3: x: command not found`,
# zsh's `(eval):1: no matches found: *.md` for a glob that matched nothing, `sudo: a password
# is required`),
# and a compiler's or linter's diagnostic at a file position (`src/a.ts:26:10
# lint/correctness/noUnusedImports`, `a.c:3:8: warning: ...`).
_DIAGNOSTIC = compile_lazily(
    r"^(?:[\w./~@-]*(?:sh|rc|\.zsh|\.bash)|\(eval\))(?::\s*(?:line )?\d+)?: .*?\b(?:"
    r"operation not permitted|permission denied|command not found|no such file or directory|"
    r"no matches found|not found|failed|is a directory|not a directory)\b|"
    r"^sudo: (?:a \w+ is required|\d+ incorrect)|"
    r"^[\w./@-]+\.\w+[:(]\d+(?:[:,]\d+)?\)?:?\s+(?:lint/\w|(?:fatal )?error\b|warning\b)",
    re.IGNORECASE,
)
_ACCESS_FAILED = compile_lazily(
    r"^[\w.~/-]+: .*: (?:No such file or directory|Permission denied|Is a directory|"
    r"Not a directory)$"
)
"""A program that could not open what it was given (`ugrep: warning: a/.tsx: No such file or
directory`): when that is all a shell printed, the command failed, whatever its exit status
(`| head` gives 0)."""
SOFT_LINES = 5
"""How many first lines of a tool result that is not a shell's are read for an error."""
_NO_MATCH_PROGRAMS = frozenset(
    {"grep", "egrep", "fgrep", "rg", "ag", "ack", "diff", "cmp"}
    # lookups of programs, which exit 1 when one of those asked for is not there
    | {"which", "where", "where.exe", "Get-Command", "gcm"}
)
_SEARCH = compile_lazily(
    r"(?:^|[|;&(]\s*)(?:\S*/)?(?:"
    + "|".join(re.escape(p) for p in sorted(_NO_MATCH_PROGRAMS))
    + r")\s"
)
"""One of the searches or lookups of `_NO_MATCH_PROGRAMS` run somewhere in a command line."""
_FAILED_HEADING = compile_lazily(r"^Failed to [a-z]+(?: [a-z]+){0,2}\.?$")
"""A build's heading for the errors it prints below it (Next.js `Failed to compile.`, `Failed to
type check.`, then a path, then `Type error: ...`)."""
_COMPLAINT = compile_lazily(
    r"^[\w./-]+: .*\b(?:no such file|permission denied|cannot|can't|not found|error|invalid|"
    r"illegal|unrecognized|missing)\b",
    re.IGNORECASE,
)
"""A program's complaint about its input (`cat: a.ts: No such file or directory`)."""


_TEST_LINES = 12
"""How far below a failed test's mark (`× name`, `FAIL file > name`) its exception is looked
for (`SqliteError: CHECK constraint failed ...`)."""

JSON_ERROR_CHARS = 64_000
"""The longest output read as a JSON response for the error it carries (`json_error`)."""


def json_error(text: str) -> str:
    """The error a JSON response carries, whatever the exit status of what printed it: a top
    object's (or, for a batch, an array's first such object's) `error` string or `error`
    object's `message` (with its `code`), an `errors` list's first message, the `message` of
    an object whose `error` is true or whose `status` says it failed, or the `result` of one
    whose `message` is `NOTOK` (Etherscan's APIs): `curl` to an API that answered with an
    error body, a JSON-RPC `{"error": {"code": -32000, "message": "..."}}`. "" when it carries
    none."""
    body = text.strip()
    if not body or body[0] not in "{[" or len(body) > JSON_ERROR_CHARS:
        return ""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return ""
    for item in (data if isinstance(data, list) else [data])[:20]:
        found = _error_of(item) if isinstance(item, dict) else ""
        if found:
            return cut_error(" ".join(found.split()))
    return ""


_HTTP_STATUS = compile_lazily(r"^HTTP/\d(?:\.\d)? (\d{3})\b.*$", re.MULTILINE)


def http_error(text: str) -> str:
    """The status line of an HTTP response that failed (4xx, 5xx), as `curl -i` prints it
    (`HTTP/1.1 405 Method Not Allowed`); the last status line counts, so a redirect followed to a
    page that answered is none. '' when there is none or it did not fail."""
    statuses = list(_HTTP_STATUS.finditer(shell_output(text)))
    if not statuses or statuses[-1].group(1)[0] not in "45":
        return ""
    return cut_error(statuses[-1].group(0).strip())


_FAILED_STATUS = frozenset({"error", "fail", "failed", "failure"})


def _error_of(item: dict[str, object]) -> str:
    error = item.get("error")
    message: object = None
    code: object = None
    if isinstance(error, str):
        message = error
    elif isinstance(error, dict):
        message = error.get("message") or error.get("msg")
        code = error.get("code") if error.get("code") is not None else error.get("status")
    elif error is True or str(item.get("status")).lower() in _FAILED_STATUS:
        message = item.get("message")  # `{"status": "error", "message": ...}` (JSend)
    if item.get("message") == "NOTOK":  # Etherscan's: `{"status": "0", "message": "NOTOK"}`
        message = item.get("result")
    errors = item.get("errors")
    if not message and isinstance(errors, list) and errors:
        first = errors[0]
        message = first.get("message") if isinstance(first, dict) else first
    if not isinstance(message, str) or not message.strip():
        return ""
    if isinstance(code, (int, str)) and not isinstance(code, bool) and str(code).strip():
        return f"error {code}: {message}"
    return f"error: {message}"


@functools.lru_cache(maxsize=256)  # an output met again (a retried call, a copy) is read once
def content_error(text: str, *, shell: bool, lines: int = SOFT_LINES) -> str:
    """The error line an output carries although its call did not fail ('' when none): an
    exception, an `Error:`/`error[...]`/`fatal:` line, a FAIL line, `npm ERR!`, a TypeScript
    error, a code-mode `Script error:`, a shell's complaint (`zsh:11: operation not permitted`),
    a compiler's or linter's diagnostic at a file position; in a shell's output anywhere, in
    another tool's output only in its first `lines`. A shell's output that is only
    programs' complaints that they could not open a path (`access_failed`) is an error too."""
    text = unmarked(TOOL_ERROR_TAG.sub("", shell_output(text)))
    if shell and TRACEBACK in text:
        return error_line(text)
    answered = json_error(text)
    if answered:
        return answered
    said = [bare(line) for line in text.splitlines()]
    if not shell:  # the first lines of what the tool said, after its wrapper's (`Wall time:`)
        said = [line for line in said if line and not NOISE_LINE.match(line)][:lines]
    for at, line in enumerate(said):
        if not line or len(line) > 4 * ERROR_CHARS or PASS_LINE.search(line):
            continue
        if (
            ERROR_HEAD.search(line)
            or FAIL_HEAD.search(line)
            or _SOFT_ERROR.search(line)
            or _DIAGNOSTIC.search(line)
        ):
            if FAIL_HEAD.search(line) and not ERROR_HEAD.search(line):
                # a test runner's mark on a test's name: its message is the exception below
                near = range(at + 1, min(len(said), at + _TEST_LINES))
                raised = next((n for n in near if ERROR_HEAD.search(said[n])), None)
                if raised is not None:
                    at, line = raised, said[raised]
            following = [rest for rest in said[at + 1 : at + MESSAGE_LINES] if rest]
            if _FAILED_HEADING.match(line):  # `Failed to compile.`: the error is below it
                below = [rest for rest in said[at + 1 : at + 10] if rest]
                found = next(
                    (
                        i
                        for i, r in enumerate(below[:3])
                        if ERROR_STRONG.search(r) or ERROR_WEAK.search(r)
                    ),
                    None,
                )
                if found is not None:
                    return cut_error(f"{line} {below[found]}", below[found + 1 :])
            first = cut_error(unwrapped(line, following), [r for r in said[at + 1 : at + 8] if r])
            return with_other_errors(first, line, [*said[:at], *said[at + 1 :]])
    return access_failed(text) if shell else ""


def access_failed(text: str) -> str:
    """The last line of a shell's output that is only programs' complaints that they could not
    open a path (`_ACCESS_FAILED`); '' for any other output. A read-only command (a search, a
    look) that printed only that failed to look, whatever its exit status."""
    if "directory" not in text and "Permission denied" not in text:  # no line can be one
        return ""
    last, said = (
        "",
        (one_line(raw) for raw in TOOL_ERROR_TAG.sub("", shell_output(text)).splitlines()),
    )
    for line in (line for line in said if line and not NOISE_LINE.match(line)):
        if not _ACCESS_FAILED.match(line):
            return ""
        last = line
    return cut_error(last) if last else ""


def _no_match(command: str, code: int | None, text: str) -> bool:
    """A search that found nothing (`grep`, `rg` exit 1 with no error printed; a lookup of
    programs, `which` or `Get-Command`, that did not find each of them, their versions asked
    only after it: `which x && x --version`), or a look that
    found nothing (a read-only command, `ls x 2>/dev/null`, exit 1 or 2 with nothing printed;
    `echo "== tasks" && grep -c x f`, exit 1 with no error line printed): not a failure."""
    if code not in (1, 2) or not command:
        return False
    body = "\n".join(line for line in text.splitlines() if not NOISE_LINE.match(line.strip()))
    if body.strip():  # a read-only chain whose search found nothing, and nothing complained
        return (
            code == 1
            and bool(_SEARCH.search(command))
            and looks_up(command)
            and not content_error(text, shell=True)
            and not any(_COMPLAINT.match(line.strip()) for line in body.splitlines())
        )
    words = command.strip().split()
    program = next((w.rsplit("/", 1)[-1] for w in words if "=" not in w and w != "cd"), "")
    return (code == 1 and program in _NO_MATCH_PROGRAMS) or read_only_command(command)


_LOG_FILE = compile_lazily(
    r"(?:\.(?:log|err)|(?:^|[/\\])nohup\.out)(?:\.\d+)?$|(?:^|[/\\])tasks[/\\][^/\\]+\.output$",
    re.IGNORECASE,
)


def reads_log(paths: Sequence[str]) -> bool:
    """Whether one of `paths` is a log (`server.log`, `app.err`, `nohup.out`, `x.log.1`, the
    `tasks/ID.output` file Claude Code writes a background command's output to): what it holds
    is output, and its error lines are errors of the work."""
    return any(_LOG_FILE.search(path) for path in paths)


def log_error(text: str) -> str:
    """The error line of a log's text (`error_line`; its lines numbered by a read tool or
    not), or "" when no line of it reads as an error."""
    text = unnumbered(TOOL_ERROR_TAG.sub("", shell_output(text)))
    lines = [line.strip() for line in text.splitlines()]
    if not any(
        (carries_error(line) or _SOFT_ERROR.search(line)) and not PASS_LINE.search(line)
        for line in lines
    ):
        return ""
    return error_line(text)


def outcome(
    block: Block,
    shell: bool,
    command: str = "",
    *,
    soft: bool = False,
    log: bool = False,
    soft_lines: int = SOFT_LINES,
) -> Outcome:
    """How a tool call went, from its result block: `ok`, `failed` or `rejected` (with the
    reason the user gave), and for a failure its distinctive error line. A shell result fails
    on a non-zero exit code (`exit_code`), an aborted run, a traceback, a shell that could not
    run the command, or a failed code-mode script. A search or a look that found nothing
    (`_no_match`: `grep` exit 1, `ls x 2>/dev/null` exit 1 or 2) did not fail. With `soft`, a
    call that did not fail but whose output carries an error (`content_error`; of a read-only
    command, whose output is what it read, only `access_failed`) is `ok` with that error line;
    with `log` (the call read a log, `reads_log`), so is one whose text shows an error
    (`log_error`), whatever read it."""
    text = block.text
    if rejected(text):
        match = _REJECTION_REASON.search(text)
        return Outcome("rejected", reason=match.group(1).strip() if match else "")
    cleared = cleared_error(text)
    if cleared is not None:  # cleared by prune, which kept the error line
        return Outcome("failed", error=cleared)
    cleared = cleared_soft_error(text)
    if cleared is not None:
        return Outcome("ok", error=cleared)
    if text.startswith(CLEARED_PREFIXES):  # cleared with no error line: none to quote
        return Outcome("failed", error="failed") if block.is_error else Outcome("ok")
    failed = block.is_error
    if shell and not failed:
        code = exit_code(text)
        failed = (code is not None and code != 0) or bool(_ABORTED.search(text[-200:]))
        failed = failed or text.startswith(_SCRIPT_FAILED)
        if code is None and not failed:
            failed = TRACEBACK in text or bool(_NOT_RUN.match(text))
    if failed and shell and _no_match(command, exit_code(text), text):
        return Outcome("ok")
    if not failed:
        found = log_error(text) if log else ""
        if found:  # a log read: its error is the work's, whatever read it
            return Outcome("ok", error=found)
        network = shell and bool(_CURL.search(command))
        if soft and not (command and read_only_command(command)):
            found = content_error(text, shell=shell, lines=soft_lines)
            return Outcome("ok", error=found or (http_error(text) if network else ""))
        if soft and shell:  # what it read is not its error, but an API's answer is
            if not network:
                return Outcome("ok", error=access_failed(text))
            return Outcome("ok", error=access_failed(text) or http_error(text) or json_error(text))
        return Outcome("ok")
    return Outcome("failed", error=_explained(error_line(text) or "failed", command))


_CURL = compile_lazily(r"(?:^|[|;&(]\s*|\s)(?:\S*/)?curl\s")
CURL_EXITS = {
    6: "could not resolve the host",
    7: "could not connect",
    22: "the server answered with an HTTP error",
    28: "timed out",
    35: "the TLS handshake failed",
    47: "too many redirects",
    52: "the server sent nothing",
    56: "the connection broke while receiving",
    60: "the server's certificate is not trusted",
}
"""What curl's exit codes mean (curl(1), EXIT CODES): all a `curl -s` that failed says."""


def _explained(error: str, command: str) -> str:
    """An error that is only an exit code, said with what curl means by it when the command ran
    curl (`Command exited with code 7 (curl: could not connect)`)."""
    if not only_exit_code(error) or not _CURL.search(command):
        return error
    meaning = CURL_EXITS.get(exit_code(error) or 0)
    return f"{error} (curl: {meaning})" if meaning else error


_REFUSED_CALL = compile_lazily(
    r"^(?:InputValidationError: |Validation failed for tool \"|failed to parse function arguments)"
)


def refused_call(error: str) -> bool:
    """Whether an error line says the tool refused the call itself, before doing anything: a
    parameter missing, unexpected or of the wrong type (Claude Code `InputValidationError`,
    pi `Validation failed for tool "edit"`), or arguments that are not JSON (Codex)."""
    return bool(_REFUSED_CALL.match(error))


def aborted(error: str) -> bool:
    """Whether an error line only says the run was stopped (by the user, or by Claude Code when
    a call run beside it failed), not how it failed."""
    return bool(_ABORTED.fullmatch(error))


def carries_error(line: str) -> bool:
    """Whether a line reads as an error: it starts as one, or names an exception or error code."""
    return bool(ERROR_HEAD.search(line) or FAIL_HEAD.search(line) or ERROR_STRONG.search(line))


PASTED_ERRORS = 3
"""How many error lines one user message gives at most."""
_ERROR_IN_LINE = compile_lazily(r"\b\w*(?:Error|Exception)\b:|\bERR!|\bFAILED\b|\berror TS\d+")
_ERROR_PAGE = compile_lazily(
    r"<(?:title|h1)>\s*((?:HTTP (?:Status|ERROR) )?[45]\d\d\b[^<]{0,80}?)\s*</(?:title|h1)>", re.I
)
"""An HTML error page's title (`<title>HTTP Status 400 – Bad Request</title>`, `<h1>502 Bad
Gateway</h1>`): a server's error as a browser or Swagger shows it."""


def pasted_errors(text: str) -> list[str]:
    """Error lines a user pasted into a message: lines that start as an error does, or name an
    exception or error code with its message (`Uncaught TypeError: x is not a function`); of a
    pasted HTML error page, its title (`_ERROR_PAGE`), not its markup."""
    if (
        "rror" not in text
        and "xception" not in text
        and "FAIL" not in text
        and "ERR" not in text
        and "</" not in text
    ):
        return []
    found: list[str] = []
    for raw in text.splitlines():
        line = one_line(raw)
        if len(line) < 8 or line.endswith("?"):
            continue
        page = _ERROR_PAGE.search(line) if "</" in line else None
        if page:
            found.append(head_tail(page.group(1), ERROR_CHARS))
        elif ERROR_HEAD.search(line) or FAIL_HEAD.search(line) or _ERROR_IN_LINE.search(line):
            found.append(head_tail(line, ERROR_CHARS))
        if len(found) >= PASTED_ERRORS:
            break
    return found
