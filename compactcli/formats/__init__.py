"""The one registry of transcript formats: one package per format, one line each here.

Each format lives in its own package, `compactcli/formats/<package>/`: its dialect, writer,
repair and whatever else only it needs, and in the package's `__init__` its `FORMAT`
(`compactcli.formats.entry.Format`: where those parts are, and its presets). `PACKAGES` lists
the packages, in the order format detection breaks ties in; `FORMATS` maps each format's name to
its entry. Every part of compactcli that needs something of a format asks here (`get_format`,
`get_dialect`, `summary_wrappers`): a name that is not registered is a `UsageError` naming the
known ones, never a silent default. The modules shared by several formats (`base`, `values`,
`repairing`, `mixed`, `detect`, and the `plain` package for the two plain message lists) are
not formats. Adding a format is one package and one line in `PACKAGES` (docs/formats.md).
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import TYPE_CHECKING

from compactcli.errors import UsageError
from compactcli.formats.entry import Format

if TYPE_CHECKING:
    from compactcli.formats.base import Dialect

__all__ = [
    "FORMATS",
    "PACKAGES",
    "Format",
    "get_dialect",
    "get_format",
    "session_title",
    "summary_wrappers",
]

PACKAGES = (
    "claude_code",
    "codex",
    "codex_legacy",
    "pi",
    "openai",
    "openai_responses",
    "anthropic",
)
"""The format packages under compactcli/formats/, in the order detection breaks ties in."""

FORMATS: dict[str, Format] = {
    entry.name: entry
    for entry in (importlib.import_module(f"{__name__}.{package}").FORMAT for package in PACKAGES)
}
"""Every registered format by name, in the order of `PACKAGES`."""


def get_format(name: str) -> Format:
    """The registered format `name`; `UsageError` naming the known ones otherwise."""
    try:
        return FORMATS[name]
    except KeyError:
        known = ", ".join(FORMATS)
        raise UsageError(f"unknown format {name!r}; known formats: {known}") from None


def get_dialect(name: str) -> Dialect:
    """The dialect of format `name`; `UsageError` for a name that is not registered."""
    return get_format(name).dialect()


@cache
def summary_wrappers() -> tuple[tuple[str, str], ...]:
    """The wrappers the agents put around a summary they wrote, taken off before one is updated."""
    found = (f.wrappers() for f in FORMATS.values())
    return tuple(dict.fromkeys(w for w in found if w is not None))


def session_title(path: str) -> str | None:
    """The title an agent gave the session in file `path` (the first format that reads one and
    finds one there), for display; None when none does."""
    for entry in FORMATS.values():
        if entry.title_reader is not None:
            title = entry.title(path)
            if title is not None:
                return title
    return None
