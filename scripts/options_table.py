#!/usr/bin/env python3
"""Write docs/options.md: every option of every command, its environment variable, and its
default in each command that has it, read from the command line itself.

    python scripts/options_table.py            # print the page
    python scripts/options_table.py --write    # write docs/options.md

tests/test_options_table.py checks that the page is current.
"""

from __future__ import annotations

import argparse
import enum
import os
import sys
from typing import Any

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
PAGE = os.path.join(ROOT, "docs", "options.md")

HEAD = """# Options, their defaults and their environment variables

Generated from the command line by `scripts/options_table.py`; `tests/test_options_table.py`
checks that it is current. An option given on the command line beats its environment variable,
which beats a [policy file](compact.md#policy-files-budgets-per-folder). Where one option has
different defaults in different commands, the row says so: each command's default is the one
that suits what it does alone: `prune` keeps the newest 40,000 tokens of tool output whole,
`summarize` keeps the newest 20,000 tokens as they are, and `compact`, given none, runs each stage
with its own default and fits the kept tail to a budget; `estimate` reports what the agent
recorded, the stages count with the heuristic. Options that say where results go (`-o`,
`--out-dir`, `--in-place`, `--dry-run`) and `eval`'s options have no environment variable.

| option | environment variable | default |
|---|---|---|
"""


def _shown(value: Any) -> str:
    if isinstance(value, enum.Enum):
        value = value.value
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, (list, tuple)):
        return ", ".join(_shown(v) for v in value) or "none"
    return str(value)


def render() -> str:
    """The page, as `--write` writes it."""
    sys.path.insert(0, ROOT)
    import typer

    from compactcli.cli import app

    group: Any = typer.main.get_command(app)  # a group: its commands by name
    options: dict[str, dict[str, tuple[str, str]]] = {}
    for name in group.list_commands(None):
        command = group.get_command(None, name)
        assert command is not None
        for param in command.params:
            if param.param_type_name != "option" or param.name in ("help", "version"):
                continue
            long = next((o for o in param.opts if o.startswith("--")), param.opts[0])
            envvar = param.envvar if isinstance(param.envvar, str) else ""
            default = param.default() if callable(param.default) else param.default
            options.setdefault(long, {})[name] = (_shown(default), envvar)
    lines = [HEAD.rstrip("\n")]
    for long in sorted(options, key=lambda o: o.lstrip("-")):
        per = options[long]
        envvars = sorted({e for _, e in per.values() if e})
        defaults = {d for d, _ in per.values()}
        if len(defaults) == 1:
            default = f"{next(iter(defaults))} ({', '.join(per)})"
        else:
            default = "; ".join(f"{command}: {d}" for command, (d, _) in per.items())
        envvar = ", ".join(f"`{e}`" for e in envvars) or "-"
        lines.append(f"| `{long}` | {envvar} | {default} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="write docs/options.md")
    args = parser.parse_args()
    page = render()
    if args.write:
        with open(PAGE, "w", encoding="utf-8") as handle:
            handle.write(page)
    else:
        sys.stdout.write(page)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
