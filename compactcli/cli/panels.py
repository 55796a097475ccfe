"""Help in panels, and an environment variable for every option that has a default.

`PanelCommand` is the class every command is built with. Each option without an environment
variable of its own gets `COMPACTCLI_<LONG_NAME>` (not where results go, nor `eval`'s). Each
option names its panel where it is declared (typer's `rich_help_panel`: one of the names below,
in `compactcli.cli.options` or the command's module). A command's help lists the arguments,
then, for a command named in `PANELS`, its options under each of its headings in that order (an
option whose panel the command does not show under "Other options"), else one "Options" list,
as click does. Within a heading, options are in the order the command declares them.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperCommand

WHERE = "Where results go"
LIMITS = "Limits"
SUMMARY = "Summary"
KEPT_TAIL = "Kept tail"
PRUNING = "Pruning"
ARCHIVE = "Archive"
INPUT = "Input and counting"
RUNNING = "Running"
REPORTS = "Reports"
UNDONE = "What is undone"

PANELS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "compact": (
        (WHERE, (WHERE,)),
        ("When to compact, and how far", (LIMITS,)),
        (SUMMARY, (SUMMARY, KEPT_TAIL)),
        ("Pruning old tool output", (PRUNING, ARCHIVE)),
        (INPUT, (INPUT,)),
        (RUNNING, (RUNNING,)),
        (REPORTS, (REPORTS,)),
    ),
    "estimate": (
        (LIMITS, (LIMITS,)),
        (INPUT, (INPUT,)),
        (RUNNING, (RUNNING,)),
        (REPORTS, (REPORTS,)),
    ),
    "summarize": (
        (WHERE, (WHERE, ARCHIVE)),
        (SUMMARY, (SUMMARY, KEPT_TAIL)),
        (INPUT, (INPUT,)),
        (REPORTS, (REPORTS,)),
    ),
    "prune": (
        (WHERE, (WHERE,)),
        ("What is cleared", (KEPT_TAIL, PRUNING, ARCHIVE)),
        (INPUT, (INPUT,)),
        (REPORTS, (REPORTS,)),
    ),
    "gc": (
        (WHERE, (WHERE, ARCHIVE)),
        ("Input", (INPUT,)),
        (RUNNING, (RUNNING,)),
        (REPORTS, (REPORTS,)),
    ),
    "restore": (
        (WHERE, (WHERE, ARCHIVE)),
        (UNDONE, (UNDONE,)),
        (RUNNING, (RUNNING,)),
        (REPORTS, (REPORTS,)),
    ),
}
"""Each command's headings, in the order shown, and the panels each gathers: a panel's options
are shown under a heading of the command's own where that says more (compact's limits are
"When to compact, and how far"; prune's kept tail, pruning options and archive are "What is
cleared"; the archive of summarize, gc and restore is where results go)."""


NO_ENVVAR = frozenset(
    {"--output", "--out-dir", "--in-place", "--dry-run", "--help", "--install-completion"}
)
"""Options without an environment variable: where results go is said on each run."""
PREFIX = "COMPACTCLI_"


def envvar_of(long: str) -> str:
    """The environment variable of option `long`: `--keep-recent-tokens` is
    `COMPACTCLI_KEEP_RECENT_TOKENS`."""
    return PREFIX + long.lstrip("-").replace("-", "_").upper()


class PanelCommand(TyperCommand):
    """A command whose help shows its options under its headings (`PANELS`), and each of whose
    options (but `NO_ENVVAR`'s, and `eval`'s) is read from its environment variable
    (`envvar_of`) when the command line does not give it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.name == "eval":
            return
        for param in self.params:
            if param.param_type_name != "option" or param.envvar:
                continue
            long = next((o for o in param.opts if o.startswith("--")), None)
            if long is not None and long not in NO_ENVVAR:
                param.envvar = envvar_of(long)
                param.show_envvar = True  # type: ignore[attr-defined]

    def format_options(self, ctx: Any, formatter: Any) -> None:  # click's, as typer has it
        panels = PANELS.get(self.name or "")
        if panels is None:
            super().format_options(ctx, formatter)
            return
        arguments: list[tuple[str, str]] = []
        heading_of = {panel: heading for heading, names in panels for panel in names}
        grouped: dict[str, list[tuple[str, str]]] = {heading: [] for heading, _ in panels}
        other: list[tuple[str, str]] = []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                arguments.append(record)
                continue
            heading = heading_of.get(getattr(param, "rich_help_panel", None) or "")
            (grouped[heading] if heading is not None else other).append(record)
        if arguments:
            with formatter.section("Arguments"):
                formatter.write_dl(arguments)
        for heading, records in grouped.items():
            if records:
                with formatter.section(heading):
                    formatter.write_dl(records)
        if other:
            with formatter.section("Other options"):
                formatter.write_dl(other)
