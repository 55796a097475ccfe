"""How a tool call went, read from the text of its result, whatever the transcript format.

`outcome(block, shell, command)` says whether a call was `ok`, `failed` or `rejected` (with the
reason the user gave), and for a failure its distinctive error line (`error_line`: an exception,
an `Error:` or `error[...]:` line, a FAIL line, a panic; at most `ERROR_CHARS`); with `soft`, a
call that did not fail but printed an error is `ok` with that line (`content_error`). A shell
result fails on a non-zero exit code (`exit_code`), an aborted run, a traceback, a shell that
could not run the command, or a failed code-mode script; a search that found nothing, or a
lookup of programs that did not find one, does not. `aborted` and `refused_call` tell a stopped
run and a call the tool refused to run as written from a failure of the work. Prune writes the
error line into the placeholder of a result it clears (`CLEARED_RESULT`, then `CLEARED_FAILURE`
or `CLEARED_SOFT`), which `cleared_error` / `cleared_soft_error` read back. `carries_error` and
`pasted_errors` find error lines in any text. Nothing here reads a summarizer.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import orjson

from compactcli.lazy_pattern import compile_lazily
from compactcli.placeholders import CLEARED_DUPLICATE, CLEARED_PREFIXES, CLEARED_RESULT
from compactcli.shell_text import shell_output, unmarked, unnumbered
from compactcli.tools import looks_up, read_only_command
from compactcli.transcript import Block
from compactcli.trim import clip, head_tail, one_line

ERROR_CHARS = 240
"""The longest error line kept (characters)."""
ANSWER_CHARS = 120
"""The longest one-line output kept as a command's answer (characters)."""


_MESSAGE_FIELD = compile_lazily(r"""(["'])message\1\s*:\s*(["'])((?:\\.|(?!\2).){8,}?)\2""")
"""The `message` field of an error object printed in a line (`{'type': 'error', 'error':
{'message': "..."}}`, a JSON-RPC `{"error": {"code": -32000, "message": "..."}}`)."""


def message_first(line: str) -> str:
    """A long error line that prints an error object, said as what comes before the object and
    the object's `message` (`anthropic.RateLimitError: Error code: 429: This request would
    exceed ...`): the ids and links around the message are what a cut keeps least of."""
    if len(line) <= ERROR_CHARS:
        return line
    found = _MESSAGE_FIELD.search(line)
    if found is None:
        return line
    brace = line.find("{")
    head = line[:brace].rstrip(" -:") if 0 < brace < found.start() else ""
    message = found.group(3).replace('\\"', '"')
    return f"{head}: {message}" if head else message


_ELABORATION = compile_lazily(
    r"^(?:Types? of (?:property|parameters) |Type '|Property '|Argument of type '|"
    r"The types (?:of|returned by) |Object literal may only)"
)
"""A line of TypeScript's elaboration of a type error, below its first line: which property,
which types differ."""


def _cut(line: str, following: Sequence[str] = ()) -> str:
    """An error line at most `ERROR_CHARS` long, its object's message first (`message_first`).
    A type error too long to say whole gives its head, then the short lines of TypeScript's
    elaboration below it (`Types of property 'active' are incompatible. Type 'boolean |
    undefined' is not assignable to type 'boolean'.`), which say what differs."""
    said = message_first(line)
    if len(said) > ERROR_CHARS and following:
        details: list[str] = []
        for detail in itertools.takewhile(_ELABORATION.match, following):
            if len(detail) <= ERROR_CHARS // 2:  # the short lines say what differs
                if sum(len(d) + 1 for d in details) + len(detail) > ERROR_CHARS * 2 // 3:
                    break
                details.append(detail)
        tail = " ".join(details)
        if tail:
            return f"{clip(said, ERROR_CHARS - len(tail) - 1)} {tail}"
    return head_tail(said, ERROR_CHARS)


_REJECTED = "The user doesn't want to proceed with this tool use"


def rejected(text: str) -> bool:
    """Whether a tool result says the user rejected the call (Claude Code's words)."""
    return text.startswith(_REJECTED)


_REJECTION_REASON = compile_lazily(
    r"(?:The user provided the following reason for the rejection|"
    r"To tell you how to proceed, the user said):\s*(.+)",
    re.DOTALL,
)


_EXIT_CODE = compile_lazily(
    r"(?:Process exited with code|Command exited with code|exited with code|Exit code:?|"
    r"exit code:?|exit status:?)\s*(-?\d+)|\"exit_code\"\s*:\s*(-?\d+)",
)
_ABORTED = compile_lazily(
    r"^(?:Command aborted|\(command cancelled\)|aborted(?: by user(?: after [\d.]+s)?)?|"
    r"Cancelled: parallel tool call .*)\s*$",
    re.MULTILINE,
)
_TRACEBACK = "Traceback (most recent call last):"
_EXCEPTION_LINE = compile_lazily(r"^(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?::\s|:?$)")
"""A traceback's exception line: its class, and its message after a colon."""
_SCRIPT_FAILED = "Script failed\n"  # the head of a failed Codex code-mode script's output
_NOT_RUN = compile_lazily(  # what a shell, or Codex, says first when it cannot run the command
    r"\A\s*(?:\S*sh: (?:(?:line )?\d+: )?[^\n:]+: "
    r"(?:(?:command )?not found|No such file or directory|Permission denied)"
    r"|zsh: (?:command not found|no such file or directory|permission denied): \S+"
    r"|execution error: )"  # Codex: the process could not start (its sandbox refused it, ...)
)
_NOISE_LINE = compile_lazily(
    r"^(?:Exit code:?\s*-?\d+|Chunk ID:.*|Wall time:.*|Process exited with code.*|"
    r"Command exited with code.*|Original token count:.*|Output:|Process running with.*|"
    r"Script (?:completed|running with cell ID \S+)|Wall time [\d.]+ seconds?|"
    r"\(no output\)|\(Bash completed with no output\)|[>$#]\s.*|```.*|(?!--- FAIL)[-=─━_*]{3,}.*)$"
)
_ERROR_STRONG = compile_lazily(
    r"\b[A-Z][A-Za-z0-9_.]*(?:Error|Exception|Failure|Fault)\b|\berror(?:\[\w+\])?:|"
    r"\bERROR\b|\bE[A-Z]{4,}\b|\bfatal:|\bpanic:|\bFAILED\b|\berror TS\d+|✘|×",
)
_ERROR_WEAK = compile_lazily(
    r"\b(?:error|failed|failure|fails|cannot|can't|could not|couldn't|unable to|not found|"
    r"no such file|denied|refused|invalid|unexpected|undefined|missing|timed? ?out)\b",
    re.IGNORECASE,
)
_SHELL_SAYS = compile_lazily(r"^(?:[\w.~/-]*/)?(?:ba|z|da|k)?sh(?::\s*(?:line\s*)?\d+)?: \S")
"""The shell's own word on what failed (`/bin/bash: line 0: read: ...: not a valid identifier`):
before a line of output that only says an error word (`Result: undefined/api`)."""
# A line that is an error by its start: an exception class (with pytest's `E` marker), an
# `Error:` / `Exception:` / `error[E0308]:` / Node's `Error [ERR_MODULE_NOT_FOUND]:` / `fatal:` /
# `panic:` line, a log's ERROR line (after its time: `2026-05-21 16:25:41 [ERROR] ...`), a Rust
# panic, Ginkgo's `[FAILED] message`; a build's own word for its error (`Type error: ...`), what
# a tool says failed (`apply_patch verification failed: ...`, a sub-agent's `API Error: ...`).
_ERROR_HEAD = compile_lazily(
    r"^(?:E\s+)?(?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Failure|Fault)\b(?!\.\w)|"
    r"^(?:Error|error|Exception|Fatal|fatal|panic)(?: ?\[[\w.-]+\])?:|"
    r"^(?:\[?\d{4}-\d\d-\d\d[T ][\d:.,]+Z?\]?\s+(?:[-|]\s+)?)?\[?(?:ERROR|FATAL|PANIC|CRITICAL)\b|"
    r"^(?:Type|Syntax|Reference|Build|Compile|Runtime|Module|Parse) error:|"
    r"^(?!(?:[Nn]o|[Zz]ero|0)\b)[\w.-]+(?: [\w.-]+){0,2} (?:failed|[Ee]rror): \S|"
    r"^thread '[^']*' panicked|^\[FAILED\] (?!\[|in \[)\S"
)
# Jest marks a failing test with `●` (`● cart › adds an item`, `● Test suite failed to run`);
# other tools print it as a bullet (`● 0 nodes, 75 edges`): only the first kind is a failure.
# A tool's own mark for a failure (`❌ Could not parse "..."`), or a warning sign before what
# failed (`⚠️ Fetch failed: fetch failed`), is a failure too; a warning sign alone is not.
_PYTEST_EXCEPTION = compile_lazily(r"^E\s+(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)\b")
"""pytest's line for the exception a test or a collection raised (`E   ModuleNotFoundError: No
module named 'bcrypt'`): the message, where its own lines around it (`ImportError while loading
conftest '...'`, `ERROR collecting ...`) only say where."""
_FAIL_HEAD = compile_lazily(
    r"^(?:(?:FAIL|FAILED|--- FAIL:|✗|✘|×|❌)(?:\s|$)|●\s(?=.*(?:›|\b[Ff]ail|\b[Ee]rror))|"
    r"⚠\ufe0f?\s(?=.*\b(?:[Ff]ail(?:ed|s|ure)?|[Ee]rror)\b))"
)
# A line that reports success (a passing test), whatever words its test or file name holds.
_PASS_LINE = compile_lazily(r"^(?:✓|✔|√|PASS|PASSED|ok|--- PASS:)(?:\s|$)")
_TAG = compile_lazily(r"</?tool_use_error>")


# What the prune stage writes after the digest of a result that failed: the error line, so a
# cleared failure still says how it failed (to the model, and to `outcome` here).
CLEARED_FAILURE = "; failed: "
_CLEARED_ERROR = compile_lazily(r"sha256:[0-9a-f]{64}" + re.escape(CLEARED_FAILURE) + r"(.+)\]\Z")


CLEARED_SOFT = "; printed an error: "
_CLEARED_SOFT = compile_lazily(r"sha256:[0-9a-f]{64}" + re.escape(CLEARED_SOFT) + r"(.+)\]\Z")


def cleared_error(text: str) -> str | None:
    """The error line a prune placeholder kept for a result that failed; None otherwise."""
    if not text.startswith((CLEARED_RESULT, CLEARED_DUPLICATE)):
        return None
    match = _CLEARED_ERROR.search(text)
    return match.group(1) if match else None


def cleared_soft_error(text: str) -> str | None:
    """The error line a prune placeholder kept for a result that did not fail but printed an
    error (`content_error`); None otherwise."""
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
    return _EXIT_CODE.fullmatch(_MEANING.sub("", line.strip())) is not None


def exit_code(text: str) -> int | None:
    """The exit code a shell result reports near its start or end, if any."""
    for part in (text[:400], text[-300:]):
        match = _EXIT_CODE.search(part) if "xit" in part else None  # in every form it takes
        if match:
            return int(match.group(1) or match.group(2))
    return None


def one_line_answer(text: str) -> str:
    """What a shell printed, when that is one short line (a path, a version, a count, a hash:
    the answer the command was run for), out of the agents' wrappers (exit code, wall time,
    `Output:` lines); "" when it printed nothing, more than one line, a line longer than
    `ANSWER_CHARS`, or its output was cleared."""
    text = _TAG.sub("", shell_output(text))
    kept = []
    for raw in text.splitlines():
        line = raw.strip()
        if line and not _NOISE_LINE.match(line):
            kept.append(line)
            if len(kept) > 1:
                return ""
    if not kept or len(kept[0]) > ANSWER_CHARS or kept[0].startswith("[Old tool result"):
        return ""
    return kept[0]


def _bare(line: str) -> str:
    """A line of output on one line, without the mark a wrapper puts before a program's own
    words: PowerShell 7's `| ` before a message, a TAP runner's `# ` before what the test
    process printed (`# TypeError [ERR_INVALID_ARG_TYPE]: ...`)."""
    return one_line(line).removeprefix("| ").removeprefix("# ")


def error_line(text: str) -> str:
    """The most distinctive error line of a failed result (exception, `error:` line, the
    message of a PowerShell error record, ...), else
    its last line when that reads as a message, else its exit code line."""
    text = unmarked(_TAG.sub("", shell_output(text)))
    lines = [_bare(line) for line in text.splitlines()]  # PowerShell 7's
    kept = [line for line in lines if line and not _NOISE_LINE.match(line)]  # `     | message`
    exits = [line for line in lines if _EXIT_CODE.search(line)]
    if not kept:  # nothing but the exit code: that is the error
        return _cut((exits or [line for line in lines if line] or [""])[0])
    lines = kept
    if _PS_RECORD.search(text):  # a PowerShell error record: its first line is the message
        for at, line in enumerate(lines):
            if _PS_MESSAGE.match(line):
                rest = []
                for following in lines[at + 1 : at + 3]:
                    if _PS_LOCATION.match(following):
                        break
                    rest.append(following)
                return _cut(" ".join([line, *rest]))
    if _TRACEBACK in text:  # the exception line is the first unindented line after the frames
        tail = text[text.rfind(_TRACEBACK) :].splitlines()
        first = next((raw for raw in tail[1:] if raw and not raw[0].isspace()), "")
        if _EXCEPTION_LINE.match(first):  # not what the program printed after it
            return _cut(one_line(first))
        for raw in reversed(tail):  # not the exit code line an agent's shell tool adds
            if (
                raw
                and not raw[0].isspace()
                and not raw.startswith(_TRACEBACK)
                and not _NOISE_LINE.match(raw.strip())
            ):
                return _cut(one_line(raw))
    short = [line for line in lines if len(line) <= 2 * ERROR_CHARS] or lines
    failing = [line for line in short if not _PASS_LINE.search(line)]
    for pattern in (
        _PYTEST_EXCEPTION,
        _ERROR_HEAD,
        _FAIL_HEAD,
        _ERROR_STRONG,
        _SHELL_SAYS,
        _ERROR_WEAK,
    ):
        for at, line in enumerate(failing):
            if pattern.search(line):
                return _with_other_errors(
                    _cut(
                        _unwrapped(line, failing[at + 1 : at + _MESSAGE_LINES]),
                        failing[at + 1 : at + 8],
                    ),
                    line,
                    [*failing[:at], *failing[at + 1 :]],
                )
    last = (failing or short)[-1]  # errors come last; output that says nothing is no error
    if (
        len(failing) > 2
        and any(_FIX_TO_RUN.search(line) for line in failing[1:-1])
        and _words(failing[0]) >= MESSAGE_WORDS
    ):
        last = failing[0]  # what it announced (`by running:`) is a fix; the message came first
    words = _words(last)
    if exits and (  # a short line of numbers or an address is output (`HTTP 000`, `final URL:`)
        not words or (words < MESSAGE_WORDS and (any(c.isdigit() for c in last) or "://" in last))
    ):
        return _cut(exits[0])
    return _cut(last)


_QUOTED = compile_lazily(r"`[^`]*`|'[^'\n]*'|\"[^\"\n]*\"|\d+")
_ERROR_COUNT = compile_lazily(
    r"\b\d+ (?:previous )?errors?\b|\baborting due to\b|\bdue to (?:\d+ )?previous errors?\b"
)
_DIAGNOSTIC_KIND = compile_lazily(r"\berror(?:\[\w+\]:|:| TS\d+)")
"""A compiler's diagnostic inside a line (`src/a.ts(3,5): error TS2345:`, mypy's and gcc's
`file:3: error:`), where an error that only starts a line is a log's or a runner's."""
ERROR_SEPARATOR = "; "


def _shape(line: str) -> str:
    """An error line without what it quotes and its numbers: the same error at another place
    (`the trait bound `{snapshot}: Handler` is not satisfied`, then `{events}`) has one shape."""
    return _QUOTED.sub("", line)


def _kind(line: str) -> str | None:
    """What marks `line` as a compiler's error, without its code (`error[E0277]:` and
    `error[E0308]:` are one kind, `error:` another; `error TS2345` and `error TS2304` one), or
    an exception's class when the line starts with it; None for any other line."""
    found = _ERROR_HEAD.search(line) or _DIAGNOSTIC_KIND.search(line)
    return _QUOTED.sub("", re.sub(r"\[\w+\]", "[]", found.group(0))) if found else None


_REMOTE_REFUSED = compile_lazily(
    r"^remote: .*\b(?:denied|rejected|not found|forbidden|error|invalid|unauthori[sz]ed)\b",
    re.IGNORECASE,
)
"""What a git server said when it refused (`remote: Permission to a/b.git denied to c.`), above
git's own `fatal: unable to access ...: 403`."""


def _with_other_errors(first: str, line: str, others: Sequence[str]) -> str:
    """`first`, the error picked from `line`, followed by the `others` (the output's other lines,
    in order) that are error lines of the same kind (`_kind`: an error line's start, or a
    compiler's diagnostic) and other shapes (`_shape`) while they fit in `ERROR_CHARS`
    together: a compiler that stops on three different errors said three things, and the first
    alone may not be the one the agent went on to fix (`error[E0277]: ... is not satisfied;
    error[E0277]: `(dyn Venue + 'static)` cannot be shared between threads safely`). What a
    shell says failed (`bash: line 1: gh: command not found`, zsh's `(eval):1: no matches
    found: apps/*/node_modules` in an agent's tool) is of every kind, and so is a git
    server's refusal above git's `fatal:` line (`_REMOTE_REFUSED`). A line that only counts the
    errors (`could not compile ... due to 7 previous errors`) is not one."""
    found = [first]
    shapes = {_shape(first)}
    kind = _kind(line)
    for other in others:
        said = bool(_SHELL_SAYS.search(other) or other.startswith("(eval):")) and not (
            _SHELL_SAYS.search(line)
        )
        remote = line.startswith("fatal:") and _REMOTE_REFUSED.match(other) is not None
        unlike = _ERROR_COUNT.search(other) or ((kind is None or _kind(other) != kind) and not said)
        if unlike and not remote:
            continue
        shape = _shape(other)
        if shape in shapes:
            continue
        if sum(map(len, found)) + len(ERROR_SEPARATOR) * len(found) + len(other) > ERROR_CHARS:
            break
        found.append(other)
        shapes.add(shape)
    return ERROR_SEPARATOR.join(found)


_FIX_TO_RUN = compile_lazily(
    r"\b(?:run|running|execute|install|installing|try|resolve|fix)\b[^:]*:$", re.IGNORECASE
)
"""A line that announces what to do to fix what failed (`You can set it by running:`, `You can
resolve this by installing a distribution with the instructions below:`)."""


def _words(line: str) -> int:
    return sum(word.strip(",.:;!").isalpha() for word in line.split())


MESSAGE_WORDS = 4
"""A failed command's last line of no word, or of fewer words than this and a number (`HTTP
000`, `16027 out.html`, an `ls -l` line), is output, not its message (`Killed`, `Segmentation
fault (core dumped)`): its exit code is the error then."""


_PS_RECORD = compile_lazily(r"^\s*\+ FullyQualifiedErrorId\s*:", re.MULTILINE)
_PS_MESSAGE = compile_lazily(r"^[\w.-]+ : \S")
"""`Get-Content : Cannot find path ...`: a PowerShell error record's message line, which the
location (`At line:1 char:1`, in the system's language), the command and the record's
`+ CategoryInfo` and `+ FullyQualifiedErrorId` lines follow."""
_PS_LOCATION = compile_lazily(r"^(?:\+ |.{1,24}:\d+\s+.{1,12}:\d+$)")


_WRAPPER = compile_lazily(
    r"^(?:[\w ]{0,30}(?:error|Error|ERROR|exception|Exception|failed|Failed|FAILED)|"
    r"npm (?:ERR!|error) code \w+|Traceback.*)\s*:?$"
)


_BANNER = compile_lazily(r"^[A-Z]{2,}(?: [A-Z]{2,}){2,}$")
"""A heading in capitals over the error it announces (Spring Boot's `APPLICATION FAILED TO
START`, then `Description:` and the message)."""
_LABEL = compile_lazily(r"^[A-Z][a-z]+(?: [a-z]+){0,2}:$")
"""A label of a line that follows it (`Description:`)."""


_MESSAGE_LINES = 6
"""How far below a line that only announces an error (`_unwrapped`) its message is looked for,
past npm's lines that detail its code."""
_NPM_DETAIL = compile_lazily(r"^npm (?:ERR!|error) (?:code|errno|syscall|path|dest|signal)\b")
"""npm's lines about an error that are not its message (`npm error errno EACCES`), between its
`code` line and the message (`npm error FetchError: request to ... failed`)."""


def _unwrapped(line: str, following: Sequence[str]) -> str:
    """An error line that only announces the error (`Script error:`, `Error:`, `npm ERR! code
    E404`, npm 10's `npm error code ERESOLVE`, `There's one or more errors in your config
    file:`, a heading in capitals) joined with the line after it, which holds the message (and
    the one after that when the first is a label: `Description:`)."""
    following = [rest for rest in following if not _NPM_DETAIL.match(rest)] or following[:2]
    if (_WRAPPER.match(line) or line.endswith(":") or _BANNER.match(line)) and following:
        if _LABEL.match(following[0]) and len(following) > 1:
            return f"{line} {following[0]} {following[1]}"
        return f"{line} {following[0]}"
    return line


_SOFT_ERROR = compile_lazily(  # "Failed to", ENOENT in quotes: source code that says them
    # (a line that opens `failed to connect ...` is a Go or C program's error, as Docker's)
    r"^(?:npm ERR!|npm error\b|error TS\d+|.*\berror TS\d+:|Script error\b|Uncaught\b|Unhandled\b|"
    r"failed to [a-z])|"
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
            return _cut(" ".join(found.split()))
    return ""


_HTTP_STATUS = compile_lazily(r"^HTTP/\d(?:\.\d)? (\d{3})\b.*$", re.MULTILINE)


def http_error(text: str) -> str:
    """The status line of an HTTP response that failed (4xx, 5xx), as `curl -i` prints it
    (`HTTP/1.1 405 Method Not Allowed`); the last status line counts, so a redirect followed to a
    page that answered is none. '' when there is none or it did not fail."""
    statuses = list(_HTTP_STATUS.finditer(shell_output(text)))
    if not statuses or statuses[-1].group(1)[0] not in "45":
        return ""
    return _cut(statuses[-1].group(0).strip())


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


def content_error(text: str, *, shell: bool, lines: int = SOFT_LINES) -> str:
    """The error line an output carries although its call did not fail ('' when none): an
    exception, an `Error:`/`error[...]`/`fatal:` line, a FAIL line, `npm ERR!`, a TypeScript
    error, a code-mode `Script error:`, a shell's complaint (`zsh:11: operation not permitted`),
    a compiler's or linter's diagnostic at a file position; in a shell's output anywhere, in
    another tool's output only in its first `lines`. A shell's output that is only
    programs' complaints that they could not open a path (`access_failed`) is an error too."""
    text = unmarked(_TAG.sub("", shell_output(text)))
    if shell and _TRACEBACK in text:
        return error_line(text)
    answered = json_error(text)
    if answered:
        return answered
    said = [_bare(line) for line in text.splitlines()]
    if not shell:  # the first lines of what the tool said, after its wrapper's (`Wall time:`)
        said = [line for line in said if line and not _NOISE_LINE.match(line)][:lines]
    for at, line in enumerate(said):
        if not line or len(line) > 4 * ERROR_CHARS or _PASS_LINE.search(line):
            continue
        if (
            _ERROR_HEAD.search(line)
            or _FAIL_HEAD.search(line)
            or _SOFT_ERROR.search(line)
            or _DIAGNOSTIC.search(line)
        ):
            if _FAIL_HEAD.search(line) and not _ERROR_HEAD.search(line):
                # a test runner's mark on a test's name: its message is the exception below
                near = range(at + 1, min(len(said), at + _TEST_LINES))
                raised = next((n for n in near if _ERROR_HEAD.search(said[n])), None)
                if raised is not None:
                    at, line = raised, said[raised]
            following = [rest for rest in said[at + 1 : at + _MESSAGE_LINES] if rest]
            if _FAILED_HEADING.match(line):  # `Failed to compile.`: the error is below it
                below = [rest for rest in said[at + 1 : at + 10] if rest]
                found = next(
                    (
                        i
                        for i, r in enumerate(below[:3])
                        if _ERROR_STRONG.search(r) or _ERROR_WEAK.search(r)
                    ),
                    None,
                )
                if found is not None:
                    return _cut(f"{line} {below[found]}", below[found + 1 :])
            first = _cut(_unwrapped(line, following), [r for r in said[at + 1 : at + 8] if r])
            return _with_other_errors(first, line, [*said[:at], *said[at + 1 :]])
    return access_failed(text) if shell else ""


def access_failed(text: str) -> str:
    """The last line of a shell's output that is only programs' complaints that they could not
    open a path (`_ACCESS_FAILED`); '' for any other output. A read-only command (a search, a
    look) that printed only that failed to look, whatever its exit status."""
    if "directory" not in text and "Permission denied" not in text:  # no line can be one
        return ""
    last, said = "", (one_line(raw) for raw in _TAG.sub("", shell_output(text)).splitlines())
    for line in (line for line in said if line and not _NOISE_LINE.match(line)):
        if not _ACCESS_FAILED.match(line):
            return ""
        last = line
    return _cut(last) if last else ""


def _no_match(command: str, code: int | None, text: str) -> bool:
    """A search that found nothing (`grep`, `rg` exit 1 with no error printed; a lookup of
    programs, `which` or `Get-Command`, that did not find each of them, their versions asked
    only after it: `which x && x --version`), or a look that
    found nothing (a read-only command, `ls x 2>/dev/null`, exit 1 or 2 with nothing printed;
    `echo "== tasks" && grep -c x f`, exit 1 with no error line printed): not a failure."""
    if code not in (1, 2) or not command:
        return False
    body = "\n".join(line for line in text.splitlines() if not _NOISE_LINE.match(line.strip()))
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
    text = unnumbered(_TAG.sub("", shell_output(text)))
    lines = [line.strip() for line in text.splitlines()]
    if not any(
        (carries_error(line) or _SOFT_ERROR.search(line)) and not _PASS_LINE.search(line)
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
    """How a tool call went, from its result block. A search or a look that found nothing
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
            failed = _TRACEBACK in text or bool(_NOT_RUN.match(text))
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
    return bool(_ERROR_HEAD.search(line) or _FAIL_HEAD.search(line) or _ERROR_STRONG.search(line))


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
        elif _ERROR_HEAD.search(line) or _FAIL_HEAD.search(line) or _ERROR_IN_LINE.search(line):
            found.append(head_tail(line, ERROR_CHARS))
        if len(found) >= PASTED_ERRORS:
            break
    return found
