"""The `compactcli` command line: a thin Typer layer over the library.

Each command lives in its own module under `compactcli.cli` and only turns options into library
calls and renders results; `main()` is the console-script entry point. Importing this package
must stay cheap: no litellm, no tiktoken (a test guards it). Commands are built when asked for
(`_Commands`): `compactcli estimate FILE` imports and reads the options of `estimate` alone,
and each command imports the library modules it needs when it runs; `--help` builds them all.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping
from typing import Annotated, Any

import typer
from typer.core import TyperGroup
from typer.main import get_command_from_info
from typer.models import CommandInfo

from compactcli import __version__, lifetime
from compactcli.cli.panels import PanelCommand

COMMANDS = {
    "compact": "compactcli.cli.compact:compact_command",
    "estimate": "compactcli.cli.estimate:estimate_command",
    "validate": "compactcli.cli.validate:validate_command",
    "prune": "compactcli.cli.prune:prune_command",
    "summarize": "compactcli.cli.summarize:summarize_command",
    "diff": "compactcli.cli.diff:diff_command",
    "redact": "compactcli.cli.redact:redact_command",
    "restore": "compactcli.cli.restore:restore_command",
    "gc": "compactcli.cli.gc:gc_command",
    "export": "compactcli.cli.export:export_command",
    "hook": "compactcli.cli.hook:hook_command",
    "eval": "compactcli.cli.eval:eval_command",
}
"""Every command, in the order `--help` lists them (the main job first, then checks, the
stages it composes, and evaluation): where its function is."""


class _Commands(MutableMapping[str, Any]):
    """The group's commands by name, each made from its function on first access.

    Every name is there from the start (so a mistyped command still gets suggestions), but a
    command's module is imported, and its options read, only when the command is looked up.
    """

    def __init__(self) -> None:
        self._made: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        made = self._made.get(name)
        if made is None:
            if name not in COMMANDS:
                raise KeyError(name)
            module, function = COMMANDS[name].split(":")
            info = CommandInfo(
                name, cls=PanelCommand, callback=getattr(importlib.import_module(module), function)
            )
            made = self._made[name] = get_command_from_info(
                info,
                pretty_exceptions_short=app.pretty_exceptions_short,
                rich_markup_mode=app.rich_markup_mode,
            )
        return made

    def __setitem__(self, name: str, command: Any) -> None:
        self._made[name] = command

    def __delitem__(self, name: str) -> None:
        raise TypeError("commands cannot be removed")

    def __iter__(self) -> Iterator[str]:
        yield from COMMANDS
        yield from (name for name in self._made if name not in COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS) + sum(1 for name in self._made if name not in COMMANDS)

    def __contains__(self, name: object) -> bool:
        return name in COMMANDS or name in self._made


class _Group(TyperGroup):
    """The root group, with `_Commands` for its commands."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = _Commands()

    def invoke(self, ctx: Any) -> Any:
        """Run the command; an unknown option suggests only the options close to it (click's
        own cut-off offers `--jobs` for `--bogus`). Click's `NoSuchOption` is matched by name:
        typer 0.28 carries its own copy of click."""
        try:
            return super().invoke(ctx)
        except Exception as error:
            possible = getattr(error, "possibilities", None)
            if type(error).__name__ != "NoSuchOption" or not possible:
                raise
            import difflib

            name: str = getattr(error, "option_name")  # noqa: B009
            close = difflib.get_close_matches(name, possible, cutoff=0.75)
            kind: Any = type(error)
            raise kind(name, possibilities=close, ctx=getattr(error, "ctx", ctx)) from None


app = typer.Typer(
    name="compactcli",
    cls=_Group,
    help="Measure and compact LLM coding-agent transcripts (Claude Code, Codex, pi, "
    "OpenAI and Anthropic message lists), offline.",
    no_args_is_help=True,
    add_completion=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"compactcli {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Show the version and exit."
        ),
    ] = False,
) -> None:
    """Measure and compact LLM coding-agent transcripts, offline."""


def main() -> None:
    """Console-script entry point. The process ends without freeing what the command leaves
    behind when it safely can (`compactcli.lifetime`)."""
    lifetime.enable()
    try:
        app(prog_name="compactcli")
    except SystemExit as done:
        if done.code is not None and not isinstance(done.code, int):
            raise  # a message for the interpreter to print
        lifetime.exit_now(done.code or 0)
    lifetime.exit_now(0)
