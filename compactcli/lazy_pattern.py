"""Regular expressions compiled on first use, for modules with many patterns that a run may
never use (compiling them all at import costs milliseconds of every command's start-up).

`compile_lazily(source, flags)` stands for `re.compile(source, flags)`. The pattern is compiled
the first time an attribute is read; its matching methods (`search`, `match`, `fullmatch`,
`sub`, `subn`, `findall`, `finditer`, `split`) then become the compiled pattern's own bound
methods, so later calls cost what they cost on a compiled pattern. Any other attribute
(`pattern`, `flags`, `groups`, ...) is read from the compiled pattern. The stand-in is not an
`re.Pattern`: it is for calling its methods, not for handing to the `re` module's functions.
"""

from __future__ import annotations

import re
from typing import Any, cast

_METHODS = ("search", "match", "fullmatch", "sub", "subn", "findall", "finditer", "split")


class _LazyPattern:
    def __init__(self, source: str, flags: int) -> None:
        self._source = source
        self._flags = flags

    def __getattr__(self, name: str) -> Any:  # only for attributes not set yet
        if name.startswith("__"):
            raise AttributeError(name)
        compiled = re.compile(self._source, self._flags)
        for method in _METHODS:
            setattr(self, method, getattr(compiled, method))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"compile_lazily({self._source!r}, {self._flags!r})"


def compile_lazily(source: str, flags: int | re.RegexFlag = 0) -> re.Pattern[str]:
    """`re.compile(source, flags)`, done when the pattern is first used (see the module)."""
    return cast("re.Pattern[str]", _LazyPattern(source, int(flags)))
