"""The tool calls inside a code-mode script: Codex's `exec` tool, whose input is JavaScript.

Codex can run tools from a script (`custom_tool_call` named `exec`, Codex 0.144 and later):

    const r = await tools.exec_command({"cmd": "npm test", "workdir": "/repo"});
    text(r.output);

`script_calls(script)` lists the `tools.NAME(...)` calls a script makes, with their literal
arguments, and `patch_text(script)` decodes its escapes so a patch it holds can be read. Nothing
is run: the script is read, not executed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from compactcli.lazy_pattern import compile_lazily

__all__ = ["ScriptCall", "is_script", "patch_text", "script_calls"]

_CALL = compile_lazily(r"\btools\.([A-Za-z_$][\w$]*)\s*\(")
_NUMBER = compile_lazily(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_NAME = compile_lazily(r"[A-Za-z_$][\w$]*")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}
_WORDS: dict[str, Any] = {"true": True, "false": False, "null": None}
_HEX = frozenset("0123456789abcdefABCDEF")
_PLAIN = {
    '"': compile_lazily(r'[^"\\\n]*'),
    "'": compile_lazily(r"[^'\\\n]*"),
    "`": compile_lazily(r"(?:[^`\\$]|\$(?!\{))*"),
}
"""The characters a string literal holds as they are, by its quote."""
_DEEPEST = 64
"""Objects and arrays nested deeper than this are not read (no argument is that deep)."""


@dataclass(frozen=True, slots=True)
class ScriptCall:
    """One `tools.NAME(...)` of a script: the tool's name and its literal argument (or None)."""

    name: str
    arguments: Any


def is_script(name: str | None, arguments: Any) -> bool:
    """Whether a call is a code-mode script: a tool named `exec` whose input is a string that
    calls `tools.`."""
    return (
        isinstance(arguments, str)
        and bool(name)
        and str(name).rsplit("__", 1)[-1].lower() == "exec"
        and _CALL.search(arguments) is not None
    )


@lru_cache(maxsize=64)  # a script is read for its argument, its command and its files
def script_calls(script: str) -> tuple[ScriptCall, ...]:
    """The `tools.NAME(...)` calls of `script`, in order, each with its argument read when it is a
    literal: a string (single, double or back quotes without `${`), a number, `true`, `false`,
    `null`, or an object or array of those, with quoted or bare keys. An argument that is
    anything else (a variable, an expression, or nested over 64 deep) is None. A call inside a
    loop or a branch is listed once, and a call built at run time is not found.
    """
    calls: list[ScriptCall] = []
    for match in _CALL.finditer(script):
        reader = _Reader(script, match.end())
        try:
            value = reader.value()
            reader.expect(")")
        except _NotLiteral:
            value = None
        calls.append(ScriptCall(match.group(1), value))
    return tuple(calls)


def patch_text(script: str) -> str:
    """`script` with the escapes `\\n`, `\\t`, `\\"` and `\\'` decoded, so the file headers of an
    `apply_patch` envelope written as a string literal (or held in a variable) can be read line
    by line.
    """
    return script.replace("\\n", "\n").replace("\\t", "\t").replace('\\"', '"').replace("\\'", "'")


class _NotLiteral(Exception):
    """The argument is not a literal this reader reads."""


class _Reader:
    """A reader of one JavaScript literal at `at` in `text`."""

    def __init__(self, text: str, at: int) -> None:
        self.text = text
        self.at = at
        self.depth = 0  # objects and arrays open around the reader's place

    def space(self) -> None:
        text, end = self.text, len(self.text)
        while self.at < end:
            char = text[self.at]
            if char in " \t\r\n":
                self.at += 1
            elif text.startswith("//", self.at):
                stop = text.find("\n", self.at)
                self.at = end if stop < 0 else stop
            elif text.startswith("/*", self.at):
                stop = text.find("*/", self.at + 2)
                if stop < 0:
                    raise _NotLiteral
                self.at = stop + 2
            else:
                return

    def expect(self, char: str) -> None:
        self.space()
        if not self.text.startswith(char, self.at):
            raise _NotLiteral
        self.at += 1

    def value(self) -> Any:
        self.space()
        if self.at >= len(self.text):
            raise _NotLiteral
        char = self.text[self.at]
        if char in "\"'`":
            return self.string()
        if char in "{[":
            self.depth += 1
            if self.depth > _DEEPEST:
                raise _NotLiteral
            nested = self.object() if char == "{" else self.array()
            self.depth -= 1
            return nested
        number = _NUMBER.match(self.text, self.at)
        if number:
            self.at = number.end()
            digits = number.group(0)
            if any(c in digits for c in ".eE"):
                return float(digits)
            if len(digits.lstrip("-")) > 100:  # `int` is slow past that, and refuses 4,300
                raise _NotLiteral
            return int(digits)
        name = _NAME.match(self.text, self.at)
        if name and name.group(0) in _WORDS:
            self.at = name.end()
            return _WORDS[name.group(0)]
        raise _NotLiteral

    def string(self) -> str:
        text, quote = self.text, self.text[self.at]
        plain = _PLAIN[quote]
        self.at += 1
        parts: list[str] = []
        while True:
            run = plain.match(text, self.at)
            assert run is not None  # it matches the empty string
            parts.append(run.group(0))
            self.at = run.end()
            if self.at >= len(text):
                raise _NotLiteral
            char = text[self.at]
            if char == quote:
                self.at += 1
                return "".join(parts)
            if char == "\\":
                parts.append(self.escape())
            elif char == "$":  # `${` in a template literal: interpolated at run time
                raise _NotLiteral
            else:  # a line break in a quoted string
                raise _NotLiteral

    def escape(self) -> str:
        text = self.text
        self.at += 1  # the backslash
        if self.at >= len(text):
            raise _NotLiteral
        char = text[self.at]
        self.at += 1
        if char in _ESCAPES:
            return _ESCAPES[char]
        if char == "\n":  # a line continuation
            return ""
        if char == "x":
            return chr(self.hex(2))
        if char == "u":
            code = self.hex(4)
            if 0xD800 <= code < 0xDC00 and text.startswith("\\u", self.at):  # a surrogate pair
                self.at += 2
                low = self.hex(4)
                if not 0xDC00 <= low < 0xE000:
                    raise _NotLiteral
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
            if 0xD800 <= code < 0xE000:  # a lone surrogate is no text
                raise _NotLiteral
            return chr(code)
        return char

    def hex(self, size: int) -> int:
        """The code of `size` hex digits at the reader's place, or of `{digits}`."""
        text = self.text
        if size == 4 and text.startswith("{", self.at):
            stop = text.find("}", self.at)
            digits, after = text[self.at + 1 : stop], stop + 1
            if stop < 0:
                raise _NotLiteral
        else:
            digits, after = text[self.at : self.at + size], self.at + size
        if not digits or len(digits) > 6 or any(c not in _HEX for c in digits):
            raise _NotLiteral
        code = int(digits, 16)
        if code > 0x10FFFF:
            raise _NotLiteral
        self.at = after
        return code

    def object(self) -> dict[str, Any]:
        self.at += 1  # {
        found: dict[str, Any] = {}
        while True:
            self.space()
            if self.text.startswith("}", self.at):
                self.at += 1
                return found
            key = self.key()
            self.expect(":")
            found[key] = self.value()
            self.space()
            if self.text.startswith(",", self.at):
                self.at += 1
            elif not self.text.startswith("}", self.at):
                raise _NotLiteral

    def key(self) -> str:
        if self.at < len(self.text) and self.text[self.at] in "\"'":
            return self.string()
        name = _NAME.match(self.text, self.at) or _NUMBER.match(self.text, self.at)
        if not name:
            raise _NotLiteral
        self.at = name.end()
        return name.group(0)

    def array(self) -> list[Any]:
        self.at += 1  # [
        found: list[Any] = []
        while True:
            self.space()
            if self.text.startswith("]", self.at):
                self.at += 1
                return found
            found.append(self.value())
            self.space()
            if self.text.startswith(",", self.at):
                self.at += 1
            elif not self.text.startswith("]", self.at):
                raise _NotLiteral
