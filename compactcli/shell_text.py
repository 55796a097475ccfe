"""What a tool printed, out of the wrappers an agent or a launcher put around it.

`shell_output(text)` gives the text a shell or a tool printed: out of Codex's JSON envelope
(`{"output": "...", "metadata": {...}}`), the report of a command Codex's sandbox stopped
(`exec_command failed: CreateProcess { message: "Codex(Sandbox(Denied { output: ...`, or an
earlier Codex's `failed in sandbox ... exit code: 128, stdout: ..., stderr: ...`: its exit code
and output), or an MCP tool's content items printed as JSON, without
terminal colours or the NUL characters of UTF-16 output read as UTF-8. `unmarked(text)` takes
out the mark a launcher puts before each line of a process (`[rank0]: `, `api-1  | `),
so an exception line reads as the program printed it; `unnumbered(text)` the number a read tool
puts before each line of a file. Each gives other text as it is.
"""

from __future__ import annotations

import re

import orjson

from compactcli.lazy_pattern import compile_lazily

__all__ = ["sandbox_denied", "shell_output", "unmarked", "unnumbered"]

_ANSI = compile_lazily(r"\x1b\[[0-?]*[ -/]*[@-~]")
"""A terminal's escape sequence: a colour, a cursor move."""


_CONTENT_ITEMS = '[{"type":"text","text":'


def _content_text(text: str) -> str:
    """`text` with the MCP content items an agent printed as JSON after its header (Codex's
    `Wall time: 0.04 seconds\nOutput:\n[{"type":"text","text":"### Result\\n..."}]`, or
    alone) given as their texts, one after another; `text` as it is when they do not parse."""
    at = text.find(_CONTENT_ITEMS)
    if at > 0 and text[at - 1] != "\n":
        return text
    try:
        items = orjson.loads(text[at:])
    except orjson.JSONDecodeError:
        return text
    if not isinstance(items, list):
        return text
    texts = [
        item["text"]
        for item in items
        if isinstance(item, dict) and isinstance(item.get("text"), str)
    ]
    return text[:at] + "\n".join(texts)


_SANDBOX_DENIED = 'CreateProcess { message: "Codex(Sandbox(Denied { output: ExecToolCallOutput {'
_DEBUG_ESCAPE = compile_lazily(r"\\(u\{[0-9a-fA-F]+\}|.)", re.DOTALL)
_DEBUG_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0"}
_MESSAGE = compile_lazily(r'message: "((?:[^"\\]|\\.)*)"', re.DOTALL)
_DENIED_EXIT = compile_lazily(r"\bexit_code: (-?\d+)")
_DENIED_TEXT = compile_lazily(
    r'aggregated_output: StreamOutput \{ text: "((?:[^"\\]|\\.)*)"', re.DOTALL
)


def _undebug(text: str) -> str:
    """A string as Rust's `{:?}` printed it, without its escapes (`\\n`, `\\"`, `\\u{e9}`)."""

    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code.startswith("u{"):
            return chr(int(code[2:-1], 16))
        return _DEBUG_ESCAPES.get(code, code)

    return _DEBUG_ESCAPE.sub(one, text)


_DENIED_BEFORE = "failed in sandbox "
_DENIED_PARTS = compile_lazily(
    r"\Afailed in sandbox \S+ with execution error: sandbox denied exec error, "
    r"exit code: (-?\d+), stdout: (.*), stderr: ",
    re.DOTALL,
)


def _denied_before(text: str) -> str:
    """What a command an earlier Codex's sandbox stopped printed (`failed in sandbox
    LinuxSeccomp with execution error: sandbox denied exec error, exit code: 128, stdout: ...,
    stderr: ...`): its exit code, its output and its errors, each from the start of a line."""
    stdout, marker, stderr = text.rpartition(", stderr: ")
    found = _DENIED_PARTS.match(stdout + marker) if marker else None
    if found is None:
        return text
    return f"Exit code: {found.group(1)}\n{found.group(2)}\n{stderr}"


def sandbox_denied(text: str) -> bool:
    """Whether `text` is Codex's report of a command its sandbox stopped (`_denied_output`)."""
    return _SANDBOX_DENIED in text[:200]


def _denied_output(text: str) -> str:
    """What a command Codex's sandbox stopped printed, after its exit code (`Exit code: 128`),
    out of the error Codex reports for it (a Rust value printed twice over:
    `exec_command failed: CreateProcess { message: "Codex(Sandbox(Denied { output:
    ExecToolCallOutput { exit_code: 128, ..., aggregated_output: StreamOutput { text: \\"fatal:
    ...\\"`); `text` as it is when it does not read so."""
    message = _MESSAGE.search(text)
    if message is None:
        return text
    inner = _undebug(message.group(1))
    code, printed = _DENIED_EXIT.search(inner), _DENIED_TEXT.search(inner)
    if code is None or printed is None:
        return text
    return f"Exit code: {code.group(1)}\n{_undebug(printed.group(1))}"


def shell_output(text: str) -> str:
    """What a shell printed, out of the JSON some agents wrap it in (Codex's
    `{"output": "...", "metadata": {"exit_code": 1, ...}}`, or an MCP tool's content items:
    `_content_text`), its terminal colours taken out
    (PowerShell colours its error records) and so are NUL characters (a Windows program that
    prints UTF-16, such as WSL's `bash.exe`, read as UTF-8: one after every character); other
    text as it is."""
    if text.startswith('{"output"'):
        try:
            wrapped = orjson.loads(text)
        except orjson.JSONDecodeError:
            wrapped = None
        output = wrapped.get("output") if isinstance(wrapped, dict) else None
        text = output if isinstance(output, str) else text
    if sandbox_denied(text):  # at its start: no scan of a long output
        text = _denied_output(text)
    elif text.startswith(_DENIED_BEFORE):
        text = _denied_before(text)
    if _CONTENT_ITEMS in text:
        text = _content_text(text)
    if "\x00" in text:
        text = text.replace("\x00", "")
    return _ANSI.sub("", text) if "\x1b" in text else text


_PROCESS_PREFIX = compile_lazily(
    r"^(?:\[rank\d+\]:|\((?:[\w.-]+ )?pid=\d+(?:, ip=[\d.]+)?\)|[\w.-]+-\d+ +\|) ?", re.MULTILINE
)
"""The mark a launcher puts before each line a process of it printed: PyTorch's distributed
runs (`[rank0]: `), Ray and vLLM (`(APIServer pid=7309) `, `(pid=12, ip=10.0.0.2) `), Docker
Compose (`api-1  | `)."""


def unmarked(text: str) -> str:
    """Output without its processes' marks (`_PROCESS_PREFIX`): a traceback or an exception line
    as the program printed it."""
    if "pid=" not in text and "[rank" not in text and " | " not in text:
        return text
    return _PROCESS_PREFIX.sub("", text)


_NUMBERED = compile_lazily(r"^ *\d+(?:→|\t)", re.MULTILINE)
"""The number a read tool puts before each line of a file (Claude Code's `  12→`, `cat -n`'s
tab)."""


def unnumbered(text: str) -> str:
    """A file's text as a read tool gave it, without the numbers before its lines."""
    return _NUMBERED.sub("", text)
