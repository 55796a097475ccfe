"""The one registry of transcript formats: what compactcli knows of each, in one entry.

`FORMATS` maps each format's name to its `Format`: the modules that hold its dialect (reading,
views, validation, edits), its writer (how a summary and a boundary are written in), its repair
(what the agent fixes on load), and its presets: the tokenizer family its models use when the
model is unknown, the agent's own compaction threshold, and the wrapper the agent puts around a
summary it wrote. The entries name modules instead of importing them, so the registry is cheap
to import and free of cycles; `dialect()`, `writer()`, `repair()` and `wrappers()` load what
they name. Every part of compactcli that needs something of a format asks here: a name that is
not registered is a `UsageError` naming the known ones, never a silent default. Adding a format
is one module for each part it does not share with another format, and one entry here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Literal, cast

from compactcli.errors import UsageError

if TYPE_CHECKING:
    from compactcli.dialects.base import Dialect, Finding
    from compactcli.dialects.repairing import Repair
    from compactcli.injection import Writer
    from compactcli.transcript import Transcript

__all__ = ["FORMATS", "Format", "get_format", "summary_wrappers"]

RepairFunction = Callable[["Transcript", Sequence["Finding"]], tuple["Transcript", list["Repair"]]]


@dataclass(frozen=True, slots=True)
class Format:
    """One format: where its parts live (`module:name`, or a module) and its presets."""

    name: str
    dialect_class: str  # module:class of its `Dialect`
    writer_factory: str  # module:function(format name) -> its `Writer`
    repair_module: str  # module holding `repair(transcript, findings)`
    tokenizer: Literal["openai", "claude"]  # the density its models' tokenizer has
    threshold: str  # the agent's own compaction trigger (`compactcli.limits` spec)
    wrapper: str | None = None  # module:name of (prefix, suffix) around the agent's summary

    def dialect(self) -> Dialect:
        return cast("type[Dialect]", _load(self.dialect_class))()

    def writer(self) -> Writer:
        return cast("Callable[[str], Writer]", _load(self.writer_factory))(self.name)

    def repair(self) -> RepairFunction:
        return cast(RepairFunction, importlib.import_module(self.repair_module).repair)

    def wrappers(self) -> tuple[str, str] | None:
        return None if self.wrapper is None else cast("tuple[str, str]", _load(self.wrapper))


_CLAUDE_CODE = "compactcli.dialects.claude_code"
_CODEX = "compactcli.dialects.codex"
_PI = "compactcli.dialects.pi"

FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format(
            "claude-code",
            f"{_CLAUDE_CODE}:ClaudeCodeDialect",
            "compactcli.injection.claude_code:writer",
            "compactcli.dialects.claude_code_repair",
            tokenizer="claude",
            threshold="claude-code",
            wrapper="compactcli.injection.claude_code:SUMMARY_WRAPPER",
        ),
        Format(
            "codex",
            f"{_CODEX}:CodexDialect",
            "compactcli.injection.codex:writer",
            "compactcli.dialects.codex_repair",
            tokenizer="openai",
            threshold="codex",
            wrapper="compactcli.injection.codex:SUMMARY_WRAPPER",
        ),
        Format(
            "codex-legacy",
            "compactcli.dialects.codex_legacy:CodexLegacyDialect",
            "compactcli.injection.codex_legacy:writer",
            "compactcli.dialects.codex_repair",
            tokenizer="openai",
            threshold="codex",
        ),
        Format(
            "pi",
            f"{_PI}:PiDialect",
            "compactcli.injection.pi:writer",
            "compactcli.dialects.pi_repair",
            tokenizer="claude",
            threshold="pi",
            wrapper="compactcli.injection.pi:SUMMARY_WRAPPER",
        ),
        Format(
            "openai",
            "compactcli.dialects.openai:OpenAIDialect",
            "compactcli.injection.plain:writer",
            "compactcli.dialects.openai_repair",
            tokenizer="openai",
            threshold="80%",
        ),
        Format(
            "openai-responses",
            "compactcli.dialects.openai_responses:OpenAIResponsesDialect",
            "compactcli.injection.codex_legacy:writer",
            "compactcli.dialects.codex_repair",
            tokenizer="openai",
            threshold="80%",
        ),
        Format(
            "anthropic",
            "compactcli.dialects.anthropic:AnthropicDialect",
            "compactcli.injection.plain:writer",
            "compactcli.dialects.anthropic_repair",
            tokenizer="claude",
            threshold="80%",
        ),
    )
}
"""Every format compactcli reads, in the order format detection breaks ties in."""


def get_format(name: str) -> Format:
    """The registered format `name`; `UsageError` naming the known ones otherwise."""
    try:
        return FORMATS[name]
    except KeyError:
        known = ", ".join(FORMATS)
        raise UsageError(f"unknown format {name!r}; known formats: {known}") from None


@cache
def summary_wrappers() -> tuple[tuple[str, str], ...]:
    """The wrappers the agents put around a summary they wrote, taken off before one is updated."""
    found = (f.wrappers() for f in FORMATS.values())
    return tuple(dict.fromkeys(w for w in found if w is not None))


@cache
def _load(target: str) -> Any:
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)
