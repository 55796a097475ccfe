"""Context windows, output limits and compaction thresholds.

`model_limits(model)` looks a model's window and output limit up in the model table shipped with
compactcli (`compactcli/data/model_windows.json`: litellm's model table trimmed to those two
figures by scripts/model_windows.py, so the figures are the same whether litellm is installed or
not), and falls back to `DEFAULT_WINDOW` / `DEFAULT_MAX_OUTPUT` (saying so in `Limits.source`)
for a model it does not know. `threshold(spec, limits)` turns `--threshold` into tokens, and
`default_threshold(format)` is the preset of the agent that writes that format. The presets that
reproduce an agent's own trigger are its format's (`compactcli.formats`: `Format.threshold_rule`)
and those of agents without a format of their own (`AGENT_PRESETS`). Nothing here prints or
reads the environment.
"""

from __future__ import annotations

import functools
import json
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from compactcli.errors import UsageError
from compactcli.formats import FORMATS, get_format

if TYPE_CHECKING:
    from compactcli.formats.entry import ThresholdRule

__all__ = [
    "AGENT_PRESETS",
    "DEFAULT_MAX_OUTPUT",
    "DEFAULT_WINDOW",
    "Limits",
    "Threshold",
    "default_threshold",
    "model_limits",
    "model_table_path",
    "parse_threshold",
    "presets",
    "threshold",
]

DEFAULT_WINDOW = 200_000
"""Window assumed for a model the table does not know (Claude Code's own default)."""
DEFAULT_MAX_OUTPUT = 32_000
"""Output limit assumed for a model the table does not know (Claude Code's own default)."""
ANTHROPIC_DEFAULT_WINDOW = 200_000
TABLE_NAME = "model_windows.json"

_DATE_SUFFIX = re.compile(r"(-\d{8}|-\d{4}-\d{2}-\d{2}|@\d{8})$")
_ONE_MILLION = re.compile(r"\[1m\]$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Limits:
    """A model's context window and output limit, and where they came from."""

    model: str | None
    context_window: int
    max_output: int
    source: str  # "model table (KEY)", "--context-window", or "default: ..."


def model_table_path() -> str:
    """The model table shipped with compactcli (`compactcli/data/model_windows.json`)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", TABLE_NAME)


def _table_bytes(path: str | None) -> bytes:
    if path is None:
        return b""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return b""


_FIGURES = re.compile(rb"\[(\d+),(\d+|null)\]")
"""An entry's value: `[window, output]`, output null when the table gives none."""


def _entry(key: str, data: bytes) -> tuple[int, int] | None:
    """(window, output) of `key` in the table's bytes `data`, or None.

    Only the one entry is decoded: the table is compact JSON whose values are `[int, int|null]`,
    so a key is a JSON string directly after `{` or `,` and followed by `:[`.
    """
    needle = json.dumps(key, ensure_ascii=False).encode() + b":["
    at = data.find(needle)
    while at >= 0:
        if at > 0 and data[at - 1 : at] in (b"{", b","):
            match = _FIGURES.match(data, at + len(needle) - 1)
            if match is None:
                return None
            window = int(match.group(1))
            output = match.group(2)
            if window <= 0:
                return None
            if output == b"null" or int(output) <= 0:
                return window, DEFAULT_MAX_OUTPUT
            return window, int(output)
        at = data.find(needle, at + 1)
    return None


def _candidates(model: str) -> list[str]:
    name = _ONE_MILLION.sub("", model.strip())
    names = [name]
    if "/" in name:
        names.append(name.rsplit("/", 1)[-1])
    for candidate in list(names):
        undated = _DATE_SUFFIX.sub("", candidate)
        if undated != candidate:
            names.append(undated)
    lowered = [n.lower() for n in names if n.lower() != n]
    return list(dict.fromkeys([*names, *lowered]))


@functools.lru_cache(maxsize=64)
def _table_entry(path: str | None, model: str) -> tuple[str, int, int] | None:
    """(key, window, output) of the first of `model`'s names the table knows; the table's
    bytes are read once for all the names."""
    data = _table_bytes(path)  # read once for all the names
    for key in _candidates(model):
        entry = _entry(key, data)
        if entry is not None:
            return (key, *entry)
    return None


@functools.lru_cache(maxsize=4)
def _has_table(path: str | None) -> bool:
    return path is not None and os.path.isfile(path)


def model_limits(
    model: str | None, *, context_window: int | None = None, table_path: str | None = ""
) -> Limits:
    """The window and output limit of `model`; `context_window` overrides the window.

    The model table is the one shipped with compactcli (`model_table_path`); `table_path` is the
    table to read, in the same format ("" for the shipped one; None means no table). A model name
    is tried as given, then without a provider prefix (`anthropic/`), then without a date suffix
    (`-20251101`). Anthropic models are given
    the 200,000-token window the API and Claude Code use unless the name carries Claude Code's
    `[1m]` suffix (the 1M window is a beta the client opts into). An unknown model, or none,
    falls back to `DEFAULT_WINDOW` / `DEFAULT_MAX_OUTPUT` and says so in `Limits.source`.
    """
    path = model_table_path() if table_path == "" else table_path
    found = _table_entry(path, model) if model else None
    if found is not None:
        key, window, output = found
        source = f"model table ({key})"
        if (
            "claude" in key.lower()
            and window > ANTHROPIC_DEFAULT_WINDOW
            and not _ONE_MILLION.search(model or "")
        ):
            window = ANTHROPIC_DEFAULT_WINDOW
            source = f"model table ({key}), 200K without the [1m] suffix"
    else:
        window, output = DEFAULT_WINDOW, DEFAULT_MAX_OUTPUT
        if not model:
            source = "default: no model named"
        elif not _has_table(path):
            source = f"default: no model table found for {model}"
        else:
            source = f"default: {model} is not in the model table"
    if context_window is not None:
        return Limits(model, context_window, output, "--context-window")
    return Limits(model, window, output, source)


# ---------------------------------------------------------------------------------------------
# thresholds


@dataclass(frozen=True, slots=True)
class Threshold:
    """Where auto-compaction triggers, in tokens, and the rule that gave it."""

    tokens: int
    spec: str  # the preset name, "80%", or the token count as given
    rule: str  # the arithmetic, for reports


def _opencode(limits: Limits) -> tuple[int, str]:
    # sst/opencode packages/opencode/src/session/overflow.ts: output = min(model output limit,
    # OUTPUT_TOKEN_MAX = 32,000); reserved = min(COMPACTION_BUFFER = 20,000, output);
    # overflow when count >= context - output - reserved (models.dev `limit.context` models;
    # for models that list a separate input limit opencode uses input - reserved instead).
    output = min(limits.max_output, 32_000)
    reserved = min(20_000, output)
    return (
        limits.context_window - output - reserved,
        "window - min(max output, 32,000) - min(20,000, that)",
    )


def _hermes(limits: Limits) -> tuple[int, str]:
    # NousResearch/hermes-agent agent/context_compressor.py: threshold_percent 0.50, raised to
    # 0.75 for windows under 512,000 (_SMALL_CTX_THRESHOLD_PERCENT); floored at
    # MINIMUM_CONTEXT_LENGTH = 64,000, and when that floor reaches the window, 85% of it
    # (_MIN_CTX_TRIGGER_RATIO); no output reservation unless max_tokens is configured.
    window = limits.context_window
    percent = 0.75 if window < 512_000 else 0.50
    tokens = max(int(window * percent), 64_000)
    if tokens >= window:
        tokens = max(1, min(int(window * 0.85), window - 1))
    return tokens, "75% of window under 512K, else 50%; at least 64,000"


AGENT_PRESETS: dict[str, ThresholdRule] = {"opencode": _opencode, "hermes": _hermes}
"""The triggers of agents whose files are read as a format of another name (opencode's; hermes
writes `openai` messages)."""


def presets() -> dict[str, ThresholdRule]:
    """Every preset reproducing an agent's own auto-compaction trigger, by name: those of the
    registered formats whose agent has a rule of its own (`Format.threshold_rule`, named after
    the format), in the order of the registry, then `AGENT_PRESETS`."""
    found: dict[str, ThresholdRule] = {}
    for entry in FORMATS.values():
        rule = entry.rule()
        if rule is not None:
            found[entry.name] = rule
    return {**found, **AGENT_PRESETS}


PLAIN_DEFAULT = "80%"


def default_threshold(format: str | None) -> str:
    """The threshold spec of the agent that writes `format`, from its registry entry
    (`compactcli.formats`; `UsageError` for a name that is not registered); `PLAIN_DEFAULT`
    when no format is given."""
    if format is None:
        return PLAIN_DEFAULT
    return get_format(format).threshold


_PERCENT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*$")


def parse_threshold(spec: str) -> str:
    """`spec` checked: a preset name, a percentage in (0, 100], or a positive token count.

    Raises `UsageError` naming what is accepted.
    """
    value = spec.strip()
    known = presets()
    if value in known:
        return value
    match = _PERCENT.match(value)
    if match:
        percent = float(match.group(1))
        if 0 < percent <= 100:
            return f"{match.group(1)}%"
    elif value.replace("_", "").isdigit() and int(value.replace("_", "")) > 0:
        return str(int(value.replace("_", "")))
    names = ", ".join(known)
    raise UsageError(
        f"invalid threshold {spec!r}: use a preset ({names}), a percentage such as 80%, "
        "or a token count"
    )


def threshold(spec: str, limits: Limits) -> Threshold:
    """The threshold `spec` (see `parse_threshold`) for a model with `limits`: a preset that
    reproduces an agent's own auto-compaction trigger (`presets`), a percentage of the window
    (`80%`), or a token count.
    """
    value = parse_threshold(spec)
    known = presets()
    if value in known:
        tokens, rule = known[value](limits)
        return Threshold(max(tokens, 0), value, rule)
    if value.endswith("%"):
        percent = float(value[:-1])
        return Threshold(int(limits.context_window * percent / 100), value, f"{value} of window")
    return Threshold(int(value), value, "token count")
