"""`compile_lazily` stands for `re.compile`: the same results, compiled on first use only."""

from __future__ import annotations

import re

import pytest

from compactcli.lazy_pattern import compile_lazily


def test_nothing_is_compiled_until_the_pattern_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[str] = []
    real = re.compile

    def counting(source: str, flags: int = 0) -> re.Pattern[str]:
        compiled.append(source)
        return real(source, flags)

    monkeypatch.setattr(re, "compile", counting)
    pattern = compile_lazily(r"(\w+)=(\d+)")
    assert compiled == []
    assert pattern.search("a x=12").groups() == ("x", "12")  # type: ignore[union-attr]
    assert pattern.findall("x=1 y=2") == [("x", "1"), ("y", "2")]
    assert compiled == [r"(\w+)=(\d+)"]  # once


def test_every_method_and_attribute_answers_as_the_compiled_pattern() -> None:
    source, flags = r"(?P<key>[a-z]+):\s*(\d+)", re.IGNORECASE
    lazy, real = compile_lazily(source, flags), re.compile(source, flags)
    text = "A: 1, bb: 22\nC:3"
    assert lazy.search(text).span() == real.search(text).span()  # type: ignore[union-attr]
    assert lazy.match(text).group(0) == real.match(text).group(0)  # type: ignore[union-attr]
    assert lazy.fullmatch("c: 4") is not None and lazy.fullmatch(text) is None
    assert lazy.findall(text) == real.findall(text)
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in real.finditer(text)]
    assert lazy.sub(r"\2", text) == real.sub(r"\2", text)
    assert lazy.subn("-", text) == real.subn("-", text)
    assert lazy.split(text) == real.split(text)
    assert (lazy.pattern, lazy.flags, lazy.groups, lazy.groupindex) == (
        real.pattern,
        real.flags,
        real.groups,
        real.groupindex,
    )
    assert repr(compile_lazily("a+", re.M)) == "compile_lazily('a+', 8)"


def test_a_bad_pattern_fails_when_first_used() -> None:
    pattern = compile_lazily(r"(unclosed")
    with pytest.raises(re.error, match="missing \\)"):
        pattern.search("x")
