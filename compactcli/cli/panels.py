"""Help in panels, and an environment variable for every option that has a default.

`PanelCommand` is the class every command is built with. Each option without an environment
variable of its own gets `COMPACTCLI_<LONG_NAME>` (not where results go, nor `eval`'s). Its help
lists the arguments, then,
for a command named in `PANELS`, its options under each panel's heading in that order (an
option in no panel under "Other options"), else one "Options" list, as click does. The panels
name options by their long names; an option a command does not have is skipped.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperCommand

_WHERE = ("--output", "--out-dir", "--in-place", "--dry-run", "--show-summary")
_LIMITS = ("--force", "--threshold", "--max-tokens", "--context-window", "--fail-on-threshold")
_SUMMARY = (
    "--summarizer",
    "--model",
    "--api-base",
    "--timeout",
    "--summary-tokens",
    "--keep-recent-tokens",
    "--protect-first",
    "--cut-turn",
    "--focus",
    "--no-redact",
    "--redact",
)
_PRUNE = ("--keep-recent", "--min-chars", "--tools", "--dedupe", "--images", "--archive")
_INPUT = ("--format", "--on-bad-line", "--repair", "--method", "--jobs")
_REPORTS = ("--json", "--as", "--by", "--stats", "--boundary", "--verbose", "--quiet")

PANELS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "compact": (
        ("Where results go", _WHERE),
        ("When to compact, and how far", _LIMITS),
        ("Summary", _SUMMARY),
        ("Pruning old tool output", ("--keep-recent-tokens", *_PRUNE)),
        ("Input and counting", _INPUT),
        ("Running", ("--engine", "--address", "--llm-jobs", "--fail-fast", "--cache")),
        ("Reports", _REPORTS),
    ),
    "estimate": (
        ("Limits", (*_LIMITS, "--model")),
        ("Input and counting", _INPUT),
        ("Running", ("--engine", "--address")),
        ("Reports", _REPORTS),
    ),
    "summarize": (
        ("Where results go", (*_WHERE, "--archive")),
        ("Summary", _SUMMARY),
        ("Input and counting", _INPUT),
        ("Reports", _REPORTS),
    ),
    "prune": (
        ("Where results go", _WHERE),
        ("What is cleared", ("--keep-recent-tokens", *_PRUNE)),
        ("Input and counting", _INPUT),
        ("Reports", _REPORTS),
    ),
    "gc": (
        ("Where results go", (*_WHERE, "--archive")),
        ("Input", ("--format",)),
        ("Reports", _REPORTS),
    ),
    "restore": (
        ("Where results go", (*_WHERE, "--archive")),
        ("What is undone", ("--all",)),
        ("Reports", _REPORTS),
    ),
}
"""Each command's panels: (heading, the long names of its options), in the order shown."""


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
    """A command whose help shows its options in panels (`PANELS`), and each of whose options
    (but `NO_ENVVAR`'s, and `eval`'s) is read from its environment variable (`envvar_of`) when
    the command line does not give it."""

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
        grouped: dict[str, list[tuple[str, str]]] = {heading: [] for heading, _ in panels}
        other: list[tuple[str, str]] = []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                arguments.append(record)
                continue
            heading = next((h for h, names in panels if any(o in names for o in param.opts)), None)
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
