"""`Format`: what compactcli knows of one transcript format, the `FORMAT` each package defines.

A `Format` names the modules that hold the format's dialect (reading, views, validation, edits),
its writer (how a summary and a boundary are written in) and its repair (what the agent fixes on
load) as `module:name` strings, so an entry is cheap to import and free of cycles; `dialect()`,
`writer()`, `repair()` and the other methods load what they name. Its presets (tokenizer family,
the agent's own compaction threshold, summary wrapper, title, tail check, record family, hooks,
evaluation renderer) are plain values or `module:name` strings too, each read by the module that
needs it."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Literal, cast

if TYPE_CHECKING:
    from compactcli.evaluation.render_common import Renderer
    from compactcli.formats.base import Dialect, Finding, RecordFamily, TailCheck
    from compactcli.formats.repairing import Repair
    from compactcli.injection import Writer
    from compactcli.limits import Limits
    from compactcli.transcript import Transcript

__all__ = ["Format", "RepairFunction", "ThresholdRule"]

ThresholdRule = Callable[["Limits"], tuple[int, str]]
"""An agent's own auto-compaction trigger: (a model's limits) -> (tokens, the rule in words)."""

RepairFunction = Callable[["Transcript", Sequence["Finding"]], tuple["Transcript", list["Repair"]]]


@dataclass(frozen=True, slots=True)
class Format:
    """One format: where its parts live (`module:name`, or a module) and its presets.

    The presets: the tokenizer family its models use when the model is unknown; the agent's own
    compaction threshold (a `compactcli.limits` spec) and, for an agent whose trigger is a rule
    of its own, that rule (`threshold_rule`, the preset named after the format); the wrapper the
    agent puts around a summary it wrote; where the title it gives a session is read (`title`);
    the check that says whether a file's last records decide its last usage (`tail`, for
    `compactcli.estimate_tail`); what the agent sends its model of a long tool output
    (`sent_result`, for `compactcli.tokens.Costs`); the shape of the records only this format's
    family writes (`family`, for `compactcli.formats.mixed`); what the agent does with
    `compactcli hook` (`hook_json`, `compaction_event`, for `compactcli.hooks`); and how the
    synthetic evaluation writes a generated session in the format (`renderer`). How a record
    appended to a session names its parent is the dialect's (`Dialect.link_keys`,
    `Dialect.append_parent`).
    """

    name: str
    dialect_class: str  # module:class of its `Dialect`
    writer_factory: str  # module:function(format name) -> its `Writer`
    repair_module: str  # module holding `repair(transcript, findings)`
    tokenizer: Literal["openai", "claude"]  # the density its models' tokenizer has
    threshold: str  # the agent's own compaction trigger (`compactcli.limits` spec)
    wrapper: str | None = None  # module:name of (prefix, suffix) around the agent's summary
    title_reader: str | None = None  # module:function(path) -> the session's title, or None
    tail_check: str | None = None  # module:function, a `TailCheck`
    threshold_rule: str | None = None  # module:function, a `ThresholdRule` (preset `name`)
    sent_result: str | None = None  # module:function(text) -> what the agent sends of an output
    family: str | None = None  # module:name of the `RecordFamily` of the records only it writes
    hook_json: bool = False  # the agent reads what a SessionStart hook prints as JSON
    compaction_event: str | None = None  # the event its extension sends `compactcli hook`
    renderer: str | None = None  # module:function, the evaluation's `Renderer` of the format

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

    def rule(self) -> ThresholdRule | None:
        """The agent's own auto-compaction trigger, when it is a rule of its own (the preset
        named after the format)."""
        if self.threshold_rule is None:
            return None
        return cast("ThresholdRule", _load(self.threshold_rule))

    def sends(self) -> Callable[[str], str] | None:
        """What the agent sends its model of a tool output, when it does not send it whole."""
        if self.sent_result is None:
            return None
        return cast("Callable[[str], str]", _load(self.sent_result))

    def record_family(self) -> RecordFamily | None:
        """The family of the records only this format (and its kin) writes, when it has one."""
        return None if self.family is None else cast("RecordFamily", _load(self.family))

    def render(self) -> Renderer | None:
        """How the synthetic evaluation writes a generated session in this format, if it does."""
        return None if self.renderer is None else cast("Renderer", _load(self.renderer))


@cache
def _load(target: str) -> Any:
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)
