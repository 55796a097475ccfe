"""What compactcli knows of one transcript format: `Format`, the entry each format package
defines as its `FORMAT`.

A `Format` names the modules that hold the format's dialect (reading, views, validation,
edits), its writer (how a summary and a boundary are written in) and its repair (what the agent
fixes on load), as `module:name` strings, so an entry is cheap to import and free of cycles;
`dialect()`, `writer()`, `repair()` and `wrappers()` load what they name. Its presets are plain
values: the tokenizer family its models use when the model is unknown, the agent's own
compaction threshold (a `compactcli.limits` spec), the wrapper the agent puts around a
summary it wrote, where the title it gives a session is read (`title`), the check that says
whether a file's last records decide its last usage (`tail`, for `compactcli.estimate_tail`), and
the longest tool output the agent sends its model whole (`result_bytes`, for
`compactcli.tokens.Costs`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Literal, cast

if TYPE_CHECKING:
    from compactcli.formats.base import Dialect, Finding, TailCheck
    from compactcli.formats.repairing import Repair
    from compactcli.injection import Writer
    from compactcli.transcript import Transcript

__all__ = ["Format", "RepairFunction"]

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
    title_reader: str | None = None  # module:function(path) -> the session's title, or None
    tail_check: str | None = None  # module:function, a `TailCheck`
    result_bytes: int | None = None  # the longest tool output the agent sends whole (bytes)

    def dialect(self) -> Dialect:
        return cast("type[Dialect]", _load(self.dialect_class))()

    def writer(self) -> Writer:
        return cast("Callable[[str], Writer]", _load(self.writer_factory))(self.name)

    def repair(self) -> RepairFunction:
        return cast(RepairFunction, importlib.import_module(self.repair_module).repair)

    def wrappers(self) -> tuple[str, str] | None:
        return None if self.wrapper is None else cast("tuple[str, str]", _load(self.wrapper))

    def title(self, path: str) -> str | None:
        """The title the agent gave the session in file `path`, when it gives one."""
        if self.title_reader is None:
            return None
        return cast("Callable[[str], str | None]", _load(self.title_reader))(path)

    def tail(self) -> TailCheck | None:
        """The format's tail check, when it has one: reading a file's usage from its end."""
        return None if self.tail_check is None else cast("TailCheck", _load(self.tail_check))


@cache
def _load(target: str) -> Any:
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)
