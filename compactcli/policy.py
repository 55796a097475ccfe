"""Policy files: defaults and per-glob budgets for `compact` and `estimate`.

A policy lives in a folder (`compactcli.toml`, else the `[tool.compactcli]` table of
`pyproject.toml`: `find_policy_file`); an input's policy is the nearest one walking up from its
folder to its repository's root (the first folder holding `.git`), else the nearest one walking
up from the working folder (`Policies`, as ruff and pytest find their configuration). It gives
settings by option name: top-level keys are
defaults for every file, and each `[budgets."GLOB"]` table applies to the files whose path
matches GLOB, later tables overriding earlier ones. `load_policy` reads one into a `Policy`
(unknown keys and bad values raise `UsageError` naming the file and the key), and `resolve` ranks
it below command-line options and their environment variables. Nothing here prints; the only I/O
is reading the policy file.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from compactcli.errors import UsageError
from compactcli.limits import parse_threshold

if TYPE_CHECKING:
    from compactcli.estimate import EstimateOptions

__all__ = [
    "BUDGET_KEYS",
    "POLICY_FILE",
    "POLICY_METHOD",
    "PYPROJECT",
    "SETTINGS",
    "Policies",
    "Policy",
    "estimate_options",
    "fail_on_threshold",
    "find_policy_file",
    "glob_pattern",
    "load_policy",
    "parse_policy",
    "resolve",
]

POLICY_FILE = "compactcli.toml"
PYPROJECT = "pyproject.toml"


def _int(minimum: int) -> Callable[[Any], Any]:
    def convert(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"expected a whole number, found {value!r}")
        if value < minimum:
            raise ValueError(f"must be at least {minimum}, found {value}")
        return value

    return convert


def _str(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"expected a non-empty string, found {value!r}")
    return value


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, found {value!r}")
    return value


def _seconds(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError(f"expected a number of seconds above 0, found {value!r}")
    return float(value)


def _threshold(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError(f"expected a preset, a percentage or a token count, found {value!r}")
    try:
        return parse_threshold(str(value))
    except UsageError as error:
        raise ValueError(str(error)) from None


def _choice(*allowed: str) -> Callable[[Any], Any]:
    def convert(value: Any) -> str:
        if value not in allowed:
            raise ValueError(f"expected one of {', '.join(allowed)}, found {value!r}")
        return str(value)

    return convert


def _names(value: Any) -> str:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ",".join(value)
    return _str(value)


SETTINGS: Mapping[str, Callable[[Any], Any]] = {
    # budgets: what "over" means (compact and estimate)
    "threshold": _threshold,
    "max_tokens": _int(0),
    "context_window": _int(1),
    "fail_on_threshold": _bool,
    # summarize
    "summarizer": _choice("extractive", "llm"),
    "model": _str,
    "api_base": _str,
    "summary_tokens": _int(1),
    "keep_recent_tokens": _int(0),
    "protect_first": _int(0),
    "cut_turn": _bool,
    "focus": _str,
    "redact": _bool,
    "redact_records": _bool,
    "timeout": _seconds,
    # prune
    "keep_recent": _int(0),
    "min_chars": _int(0),
    "tools": _names,
    "dedupe": _bool,
    "images": _bool,
    "archive": _str,
    # counting
    "method": _choice("heuristic", "exact"),
}
"""Every key a policy may set, with the check that turns its TOML value into the option's."""

BUDGET_KEYS = ("threshold", "max_tokens", "context_window", "fail_on_threshold", "method")
"""The keys `estimate` takes from a policy (the rest concern compaction only)."""

POLICY_METHOD = "heuristic"
"""How `estimate` counts under a policy that names no `method`: as `compact` does by default, so
the two agree on every budget."""


@dataclass(frozen=True, slots=True)
class Policy:
    """A parsed policy: defaults, and per-glob settings in file order.

        threshold = "claude-code"
        max_tokens = 150_000

        [budgets."codex/**"]
        threshold = "codex"
        max_tokens = 100_000

    Keys are option names, with `_` or `-` (`keep_recent_tokens`, `keep-recent-tokens`);
    `SETTINGS` lists them. A glob is matched against the file's path relative to the policy's
    folder (`glob_pattern`); standard input matches no glob.
    """

    path: str  # the file it was read from
    folder: str  # globs are relative to this folder
    defaults: Mapping[str, Any] = field(default_factory=dict)
    budgets: tuple[tuple[str, Mapping[str, Any]], ...] = ()

    def matching(self, path: str) -> list[str]:
        """The globs that match `path`, in file order."""
        relative = self.relative(path)
        if relative is None:
            return []
        return [glob for glob, _ in self.budgets if glob_pattern(glob).fullmatch(relative)]

    def settings_for(self, path: str) -> dict[str, Any]:
        """The policy's settings for `path`: its defaults, then every matching glob's."""
        settings = dict(self.defaults)
        relative = self.relative(path)
        if relative is not None:
            for glob, values in self.budgets:
                if glob_pattern(glob).fullmatch(relative):
                    settings.update(values)
        return settings

    def relative(self, path: str) -> str | None:
        """`path` relative to the policy's folder, `/`-separated; None for standard input."""
        if path in ("-", "<stdin>"):
            return None
        absolute = os.path.abspath(path)
        folder = os.path.abspath(self.folder)
        if os.path.commonpath([absolute, folder]) == folder:
            relative = os.path.relpath(absolute, folder)
        else:
            relative = absolute.lstrip(os.sep)
        return relative.replace(os.sep, "/")


def resolve(
    given: Mapping[str, Any], policy: Policy | None, path: str, defaults: Mapping[str, Any]
) -> dict[str, Any]:
    """The settings for `path`: `given` (options and environment) over the policy over defaults.

    Precedence, highest first: a command-line option, its `COMPACTCLI_*` environment variable
    (both resolved by the command line, in `given`), the matching `[budgets]` tables, the
    policy's top level, the built-in default. Only the names in `defaults` are returned; a policy
    key that a command does not take is left out.
    """
    from_file = policy.settings_for(path) if policy is not None else {}
    merged = dict(defaults)
    for name in defaults:
        if name in given:
            merged[name] = given[name]
        elif name in from_file:
            merged[name] = from_file[name]
    return merged


def estimate_options(
    options: EstimateOptions, path: str, policy: Policy | None, given: Collection[str]
) -> EstimateOptions:
    """`options` for `path` with the policy's budgets filled in where no option set them, and
    its counting method (`POLICY_METHOD` when it names none): under a policy, `estimate` counts
    as `compact` does.

    `given` names the settings an option or environment variable set (they win).
    """
    if policy is None:
        return options
    values = policy.settings_for(path)
    changes: dict[str, Any] = {
        name: values[name]
        for name in ("threshold", "max_tokens", "context_window")
        if name in values and name not in given
    }
    if "method" not in given:
        changes["method"] = values.get("method", POLICY_METHOD)
    return dataclasses.replace(options, **changes)


def fail_on_threshold(
    value: bool, path: str, policy: Policy | None, given: Collection[str]
) -> bool:
    """`--fail-on-threshold` for `path`: the option when given, else the policy's, else `value`."""
    if policy is None or "fail_on_threshold" in given:
        return value
    return bool(policy.settings_for(path).get("fail_on_threshold", value))


def find_policy_file(folder: str = ".") -> str | None:
    """`compactcli.toml` in `folder`, else a `pyproject.toml` with a `[tool.compactcli]` table."""
    own = os.path.join(folder, POLICY_FILE)
    if os.path.isfile(own):
        return own
    pyproject = os.path.join(folder, PYPROJECT)
    if os.path.isfile(pyproject):
        data = _read_toml(pyproject)
        tool = data.get("tool")
        if isinstance(tool, dict) and "compactcli" in tool:
            return pyproject
    return None


@dataclass
class Policies:
    """The policy of each input (`for_path`), found once per folder.

    Walking up from the input's folder (the working folder for standard input), the first
    folder with a policy file gives it; the walk stops after a repository's root (a folder
    holding `.git`) or at the file system's root. An input with none there takes the one found
    walking up from the working folder in the same way. A folder inside the working folder is
    named relative to it, so messages and reports name `compactcli.toml` as a user typed it.
    Raises `UsageError` for a bad policy file when its folder is first asked about.
    """

    working: str = "."
    _nearest: dict[str, Policy | None] = field(default_factory=dict)

    def for_path(self, path: str) -> Policy | None:
        here = os.path.abspath(self.working)
        stdin = path in ("-", "<stdin>")
        start = here if stdin else os.path.dirname(os.path.abspath(path))
        found = self._walk(start)
        if found is None and start != here:
            found = self._walk(here)
        return found

    def _walk(self, folder: str) -> Policy | None:
        seen: list[str] = []
        found: Policy | None = None
        while True:
            if folder in self._nearest:
                found = self._nearest[folder]
                break
            seen.append(folder)
            found = load_policy(self._name(folder))
            parent = os.path.dirname(folder)
            if (
                found is not None
                or os.path.exists(os.path.join(folder, ".git"))
                or parent == folder
            ):
                break
            folder = parent
        for each in seen:
            self._nearest[each] = found
        return found

    def _name(self, folder: str) -> str:
        here = os.path.abspath(self.working)
        if os.path.commonpath([folder, here]) == here:
            return os.path.relpath(folder, here) if folder != here else self.working
        return folder


def load_policy(folder: str = ".") -> Policy | None:
    """The policy of `folder`, or None when it has none. Raises `UsageError` for a bad file."""
    path = find_policy_file(folder)
    if path is None:
        return None
    data = _read_toml(path)
    if os.path.basename(path) == PYPROJECT:
        table = data["tool"]["compactcli"]
        where = f"{path} [tool.compactcli]"
    else:
        table, where = data, path
    if not isinstance(table, dict):
        raise UsageError(f"{where}: expected a table of settings")
    return parse_policy(table, path=path, folder=folder, where=where)


def parse_policy(
    table: Mapping[str, Any], *, path: str, folder: str = ".", where: str | None = None
) -> Policy:
    """A `Policy` from a parsed TOML table; `where` names it in error messages."""
    where = where or path
    budgets_raw = table.get("budgets", {})
    if not isinstance(budgets_raw, dict):
        raise UsageError(f'{where}: budgets must be tables such as [budgets."logs/**"]')
    defaults = _settings({k: v for k, v in table.items() if k != "budgets"}, where)
    budgets: list[tuple[str, Mapping[str, Any]]] = []
    for glob, values in budgets_raw.items():
        if not isinstance(values, dict):
            raise UsageError(f"{where}: budgets.{glob!r} must be a table of settings")
        if not glob.strip():
            raise UsageError(f"{where}: a budgets glob is empty")
        budgets.append((glob, _settings(values, f"{where} budgets.{glob!r}")))
    return Policy(path=path, folder=folder, defaults=defaults, budgets=tuple(budgets))


def _settings(values: Mapping[str, Any], where: str) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    for key, value in values.items():
        name = key.replace("-", "_")
        convert = SETTINGS.get(name)
        if convert is None:
            known = ", ".join(sorted(SETTINGS))
            raise UsageError(f"{where}: unknown setting {key!r}; known settings: {known}")
        try:
            settings[name] = convert(value)
        except ValueError as error:
            raise UsageError(f"{where}: {key}: {error}") from None
    return settings


def _read_toml(path: str) -> dict[str, Any]:
    import tomllib  # only once there is a file to read (about 2 ms to import)

    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as error:
        raise UsageError(f"{path}: invalid TOML: {error}") from None
    except OSError as error:
        raise UsageError(f"{path}: cannot read: {error.strerror or error}") from None


_GLOB_CACHE: dict[str, re.Pattern[str]] = {}


def glob_pattern(glob: str) -> re.Pattern[str]:
    """The regular expression of `glob`, matched against a `/`-separated relative path: `*` and `?`
    stay inside one folder name, `**` spans folders, and a glob without a `/` matches a file name
    at any depth (`*.jsonl`).
    """
    found = _GLOB_CACHE.get(glob)
    if found is not None:
        return found
    text = glob.strip().replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    if text.endswith("/"):
        text += "**"
    if "/" not in text.rstrip("/"):
        text = "**/" + text
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if text.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif text.startswith("**", i):
            out.append(".*")
            i += 2
        elif char == "*":
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            end = text.find("]", i + 2)
            if end == -1:
                out.append(re.escape(char))
                i += 1
            else:
                body = text[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end + 1
        else:
            out.append(re.escape(char))
            i += 1
    pattern = re.compile("".join(out))
    _GLOB_CACHE[glob] = pattern
    return pattern
