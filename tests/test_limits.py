"""Model windows: the table shipped with the package, its lookup rules, and the script that makes
it from litellm's model table."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

import compactcli
from compactcli.limits import (
    DEFAULT_MAX_OUTPUT,
    Limits,
    _entry,
    model_limits,
    model_table_path,
)

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "model_windows.py"


def _litellm_table() -> Path:
    spec = importlib.util.find_spec("litellm")
    assert spec is not None and spec.submodule_search_locations, "the test extra installs litellm"
    return Path(spec.submodule_search_locations[0]) / "model_prices_and_context_window_backup.json"


def test_the_table_ships_with_the_package() -> None:
    path = Path(model_table_path())
    assert path == Path(compactcli.__file__).parent / "data" / "model_windows.json"
    data = path.read_bytes()
    table = json.loads(data)
    assert data == json.dumps(table, sort_keys=True, separators=(",", ":")).encode() + b"\n"
    assert table["gpt-4o"] == [128000, 16384]
    assert all(
        isinstance(w, int) and w > 0 and (o is None or (isinstance(o, int) and o > 0))
        for w, o in table.values()
    )
    for name in ("LICENSE-litellm", "LICENSE-tiktoken", "README.md"):
        assert (path.parent / name).is_file()


def test_the_table_is_what_the_script_makes_from_litellms() -> None:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--check", "--table", str(_litellm_table())],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.endswith(": up to date\n")


def test_every_model_has_the_figures_litellms_table_gives() -> None:
    """The rules limits.py applied to litellm's table, applied to the shipped one: a positive
    `max_input_tokens`, and `max_output_tokens` else `max_tokens` else the default."""
    litellm = json.loads(_litellm_table().read_bytes())
    data = Path(model_table_path()).read_bytes()

    def positive(value: object) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and value > 0

    known = 0
    for key, entry in litellm.items():
        window = entry.get("max_input_tokens") if isinstance(entry, dict) else None
        if not positive(window):
            assert _entry(key, data) is None, key
            continue
        output = entry.get("max_output_tokens", entry.get("max_tokens"))
        assert _entry(key, data) == (window, output if positive(output) else DEFAULT_MAX_OUTPUT)
        known += 1
    assert known > 3000


def test_lookup_rules() -> None:
    assert model_limits("gpt-4o") == Limits("gpt-4o", 128000, 16384, "model table (gpt-4o)")
    # a provider prefix and a date suffix are dropped in turn
    assert model_limits("openai/gpt-4o-2024-08-06").source == "model table (gpt-4o-2024-08-06)"
    assert model_limits("openai/gpt-4o-2099-01-01").source == "model table (gpt-4o)"
    assert model_limits("anthropic/claude-sonnet-4-5-20250929") == Limits(
        "anthropic/claude-sonnet-4-5-20250929",
        200000,
        64000,
        "model table (claude-sonnet-4-5-20250929)",
    )
    # Anthropic models get 200K unless Claude Code's [1m] suffix asks for the beta window
    assert model_limits("claude-opus-4-7") == Limits(
        "claude-opus-4-7",
        200000,
        128000,
        "model table (claude-opus-4-7), 200K without the [1m] suffix",
    )
    assert model_limits("claude-opus-4-7[1m]") == Limits(
        "claude-opus-4-7[1m]", 1000000, 128000, "model table (claude-opus-4-7)"
    )
    assert model_limits("GPT-4o").source == "model table (gpt-4o)"  # lower-cased last
    assert model_limits("no-such-model") == Limits(
        "no-such-model", 200000, 32000, "default: no-such-model is not in the model table"
    )
    assert model_limits(None).source == "default: no model named"
    assert model_limits("gpt-4o", table_path=None) == Limits(
        "gpt-4o", 200000, 32000, "default: no model table found for gpt-4o"
    )
    assert model_limits("gpt-4o", context_window=5000) == Limits(
        "gpt-4o", 5000, 16384, "--context-window"
    )


def test_a_table_of_ones_own(tmp_path: Path) -> None:
    table = tmp_path / "windows.json"
    table.write_text('{"a/m":[1000,null],"m":[2000,300],"x-m":[3000,400]}\n')
    assert model_limits("m", table_path=str(table)) == Limits(
        "m", 2000, 300, "model table (m)"
    )  # not the end of "x-m"
    assert model_limits("a/m", table_path=str(table)).max_output == DEFAULT_MAX_OUTPUT
    assert _entry("m", b'{"x":[1,2],"\\"m":[5,6]}') is None  # only a whole key matches


@pytest.mark.parametrize("model", ["gpt-4o", "claude-opus-4-6", "no-such-model"])
def test_reading_the_table_does_not_parse_it_whole(
    model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import compactcli.limits as limits

    def refuse(*args: object, **kwargs: object) -> object:
        raise AssertionError("the table was parsed whole")

    monkeypatch.setattr(json, "loads", refuse)
    limits._table_entry.cache_clear()
    try:
        model_limits(model)
    finally:
        limits._table_entry.cache_clear()
