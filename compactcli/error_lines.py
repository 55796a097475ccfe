"""The distinctive error line of a failed command's output, and the patterns that find one.

`error_line(text)` reads what a tool printed (out of its agent's wrapper: `shell_output`) and
gives the line that says how it failed: a traceback's exception, an `Error:` / `error[...]:` /
`fatal:` line, a FAIL line, a PowerShell error record's message, a panic; else its last line
when that reads as a message, else its exit code line; at most `ERROR_CHARS`, an error object's
message first (`message_first`). The line patterns here (`ERROR_HEAD`, `ERROR_STRONG`, ...) are
shared with `compactcli.outcomes`, which decides whether a call failed at all.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Sequence

from compactcli.lazy_pattern import compile_lazily
from compactcli.shell_text import shell_output, unmarked
from compactcli.trim import clip, head_tail, one_line

ERROR_CHARS = 240
"""The longest error line kept (characters)."""


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


def cut_error(line: str, following: Sequence[str] = ()) -> str:
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


EXIT_CODE = compile_lazily(
    r"(?:Process exited with code|Command exited with code|exited with code|Exit code:?|"
    r"exit code:?|exit status:?)\s*(-?\d+)|\"exit_code\"\s*:\s*(-?\d+)",
)
TRACEBACK = "Traceback (most recent call last):"
_EXCEPTION_LINE = compile_lazily(r"^(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?::\s|:?$)")
"""A traceback's exception line: its class, and its message after a colon."""
NOISE_LINE = compile_lazily(
    r"^(?:Exit code:?\s*-?\d+|Chunk ID:.*|Wall time:.*|Process exited with code.*|"
    r"Command exited with code.*|Original token count:.*|Output:|Process running with.*|"
    r"Script (?:completed|running with cell ID \S+)|Wall time [\d.]+ seconds?|"
    r"\(no output\)|\(Bash completed with no output\)|[>$#]\s.*|```.*|(?!--- FAIL)[-=─━_*]{3,}.*)$"
)
ERROR_STRONG = compile_lazily(
    r"\b[A-Z][A-Za-z0-9_.]*(?:Error|Exception|Failure|Fault)\b|\berror(?:\[\w+\])?:|"
    r"\bERROR\b|\bE[A-Z]{4,}\b|\bfatal:|\bpanic:|\bFAILED\b|\berror TS\d+|✘|×",
)
ERROR_WEAK = compile_lazily(
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
# a tool says failed (`apply_patch verification failed: ...`, a sub-agent's `API Error: ...`);
# zsh's `command not found: husky` (before the `ELIFECYCLE` line of the script that ran it).
ERROR_HEAD = compile_lazily(
    r"^(?:E\s+)?(?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Failure|Fault)\b(?!\.\w)|"
    r"^(?:Error|error|Exception|Fatal|fatal|panic)(?: ?\[[\w.-]+\])?:|"
    r"^(?:\[?\d{4}-\d\d-\d\d[T ][\d:.,]+Z?\]?\s+(?:[-|]\s+)?)?\[?(?:ERROR|FATAL|PANIC|CRITICAL)\b|"
    r"^(?:Type|Syntax|Reference|Build|Compile|Runtime|Module|Parse) error:|"
    r"^(?!(?:[Nn]o|[Zz]ero|0)\b)[\w.-]+(?: [\w.-]+){0,2} (?:failed|[Ee]rror): \S|"
    r"^thread '[^']*' panicked|^\[FAILED\] (?!\[|in \[)\S|^(?:zsh: )?command not found: \S"
)
# Jest marks a failing test with `●` (`● cart › adds an item`, `● Test suite failed to run`);
# other tools print it as a bullet (`● 0 nodes, 75 edges`): only the first kind is a failure.
# A tool's own mark for a failure (`❌ Could not parse "..."`), or a warning sign before what
# failed (`⚠️ Fetch failed: fetch failed`), is a failure too; a warning sign alone is not.
_PYTEST_EXCEPTION = compile_lazily(r"^E\s+(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)\b")
"""pytest's line for the exception a test or a collection raised (`E   ModuleNotFoundError: No
module named 'bcrypt'`): the message, where its own lines around it (`ImportError while loading
conftest '...'`, `ERROR collecting ...`) only say where."""
FAIL_HEAD = compile_lazily(
    r"^(?:(?:FAIL|FAILED|--- FAIL:|✗|✘|×|❌)(?:\s|$)|✖ \d+ problems? \(\d+ errors?\b|"
    r"●\s(?=.*(?:›|\b[Ff]ail|\b[Ee]rror))|"
    r"⚠\ufe0f?\s(?=.*\b(?:[Ff]ail(?:ed|s|ure)?|[Ee]rror)\b))"
)
# ESLint's count of what it found (`✖ 31 problems (2 errors, 29 warnings)`) says it failed.
# A line that reports success (a passing test), whatever words its test or file name holds.
PASS_LINE = compile_lazily(r"^(?:✓|✔|√|PASS|PASSED|ok|--- PASS:)(?:\s|$)")
TOOL_ERROR_TAG = compile_lazily(r"</?tool_use_error>")


def bare(line: str) -> str:
    """A line of output on one line, without the mark a wrapper puts before a program's own
    words: PowerShell 7's `| ` before a message, a TAP runner's `# ` before what the test
    process printed (`# TypeError [ERR_INVALID_ARG_TYPE]: ...`)."""
    return one_line(line).removeprefix("| ").removeprefix("# ")


@functools.lru_cache(maxsize=256)  # an output met again (a retried call, a copy) is read once
def error_line(text: str) -> str:
    """The most distinctive error line of a failed result (exception, `error:` line, the
    message of a PowerShell error record, ...), else
    its last line when that reads as a message, else its exit code line."""
    text = unmarked(TOOL_ERROR_TAG.sub("", shell_output(text)))
    lines = [bare(line) for line in text.splitlines()]  # PowerShell 7's
    kept = [line for line in lines if line and not NOISE_LINE.match(line)]  # `     | message`
    exit_line = next((line for line in lines if EXIT_CODE.search(line)), None)
    if not kept:  # nothing but the exit code: that is the error
        found = exit_line if exit_line is not None else next((line for line in lines if line), "")
        return cut_error(found)
    lines = kept
    if _PS_RECORD.search(text):  # a PowerShell error record: its first line is the message
        for at, line in enumerate(lines):
            if _PS_MESSAGE.match(line):
                rest = []
                for following in lines[at + 1 : at + 3]:
                    if _PS_LOCATION.match(following):
                        break
                    rest.append(following)
                return cut_error(" ".join([line, *rest]))
        for at, line in enumerate(lines[:-1]):  # a parse error: the message under its caret
            if _PS_CARET.match(line) and not _PS_LOCATION.match(lines[at + 1]):
                return cut_error(lines[at + 1])
    if TRACEBACK in text:  # the exception line is the first unindented line after the frames
        tail = text[text.rfind(TRACEBACK) :].splitlines()
        first = next((raw for raw in tail[1:] if raw and not raw[0].isspace()), "")
        if _EXCEPTION_LINE.match(first):  # not what the program printed after it
            return cut_error(one_line(first))
        for raw in reversed(tail):  # not the exit code line an agent's shell tool adds
            if (
                raw
                and not raw[0].isspace()
                and not raw.startswith(TRACEBACK)
                and not NOISE_LINE.match(raw.strip())
            ):
                return cut_error(one_line(raw))
    short = [line for line in lines if len(line) <= 2 * ERROR_CHARS] or lines
    failing = [line for line in short if not PASS_LINE.search(line)]
    for pattern in (
        _PYTEST_EXCEPTION,
        ERROR_HEAD,
        FAIL_HEAD,
        ERROR_STRONG,
        _SHELL_SAYS,
        ERROR_WEAK,
    ):
        for at, line in enumerate(failing):
            if pattern.search(line):
                return with_other_errors(
                    cut_error(
                        unwrapped(line, failing[at + 1 : at + MESSAGE_LINES]),
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
    # a short line of numbers or an address is output (`HTTP 000`, `final URL:`)
    if exit_line is not None and (
        not words or (words < MESSAGE_WORDS and (any(c.isdigit() for c in last) or "://" in last))
    ):
        at = len(failing) - 1 if failing and failing[-1] == last else -1
        if at > 0 and failing[at - 1].endswith(":") and _words(failing[at - 1]) >= MESSAGE_WORDS:
            return cut_error(failing[at - 1])  # the message that announced it (`... exists:`)
        return cut_error(exit_line)
    return cut_error(last)


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
    found = ERROR_HEAD.search(line) or _DIAGNOSTIC_KIND.search(line)
    return _QUOTED.sub("", re.sub(r"\[\w+\]", "[]", found.group(0))) if found else None


_REMOTE_REFUSED = compile_lazily(
    r"^remote: .*\b(?:denied|rejected|not found|forbidden|error|invalid|unauthori[sz]ed)\b",
    re.IGNORECASE,
)
"""What a git server said when it refused (`remote: Permission to a/b.git denied to c.`), above
git's own `fatal: unable to access ...: 403`."""


def with_other_errors(first: str, line: str, others: Sequence[str]) -> str:
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
_PS_CARET = compile_lazily(r"^\+\s+~+$")
"""The line under the command of a PowerShell parse error record that marks where it failed
(`+ ~~`); its message (`The token '&&' is not a valid statement separator in this version.`)
follows it, not the record's first line (`At line:2 char:17`)."""
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


MESSAGE_LINES = 6
"""How far below a line that only announces an error (`unwrapped`) its message is looked for,
past npm's lines that detail its code."""
_NPM_DETAIL = compile_lazily(r"^npm (?:ERR!|error) (?:code|errno|syscall|path|dest|signal)\b")
"""npm's lines about an error that are not its message (`npm error errno EACCES`), between its
`code` line and the message (`npm error FetchError: request to ... failed`)."""


def unwrapped(line: str, following: Sequence[str]) -> str:
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
