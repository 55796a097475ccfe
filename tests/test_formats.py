"""The format registry (`compactcli.formats`): every registered format loads whole, a name that is
not registered is an error everywhere (never a silent default), what the limits, the mixed-format
check, the hooks and the evaluation know of a format comes from its entry, and no stage, counter
or command imports a format's own modules: they ask the registry; and no module of the package
is over `MODULE_LINES` lines."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest

from compactcli.errors import UsageError
from compactcli.evaluation.render import RENDER_FORMATS, render
from compactcli.evaluation.scenario import build_session
from compactcli.formats import FORMATS, PACKAGES, get_dialect, get_format, summary_wrappers
from compactcli.formats.mixed import families
from compactcli.hooks import compaction_events
from compactcli.injection import get_writer
from compactcli.limits import (
    AGENT_PRESETS,
    Limits,
    Threshold,
    default_threshold,
    parse_threshold,
    presets,
    threshold,
)
from compactcli.tokens import CLAUDE, OPENAI, density_for
from tests.cli_runner import run
from tests.conftest import ROOT

PACKAGE = ROOT / "compactcli"
# a format's own modules: everything in its package (and in the plain formats' shared one)
OWN = tuple(f"compactcli.formats.{p}" for p in (*PACKAGES, "plain"))


@pytest.mark.parametrize("name", list(FORMATS))
def test_every_registered_format_loads_its_parts(name: str) -> None:
    entry = get_format(name)
    assert entry.dialect().name == name
    assert get_dialect(name).name == name
    writer = entry.writer()
    assert isinstance(writer.refusal, str) and isinstance(writer.quotes_head, bool)
    assert callable(entry.repair())
    density = density_for(None, name)
    assert density.name == (OPENAI if entry.tokenizer == "openai" else CLAUDE).name
    assert density.costs.sent_as == entry.sends()
    assert default_threshold(name) == parse_threshold(entry.threshold)


def test_the_registry_lists_one_package_per_format_in_order() -> None:
    assert [name.replace("-", "_") for name in FORMATS] == list(PACKAGES)
    for package in PACKAGES:
        assert (PACKAGE / "formats" / package / "__init__.py").is_file()


@pytest.mark.parametrize(
    "ask",
    [get_format, get_dialect, get_writer, lambda n: density_for(None, n), default_threshold],
    ids=["get_format", "get_dialect", "get_writer", "density_for", "default_threshold"],
)
def test_an_unregistered_format_is_an_error_not_a_default(ask: Callable[[str], object]) -> None:
    with pytest.raises(UsageError) as error:
        ask("opencode")
    assert str(error.value) == ("unknown format 'opencode'; known formats: " + ", ".join(FORMATS))


def test_the_command_line_accepts_exactly_the_registered_formats() -> None:
    done = run("validate", "--format", "opencode", "fixtures/transcripts/codex-session.jsonl")
    assert done.exit_code == 2
    assert "'opencode' is not one of " + ", ".join(repr(n) for n in FORMATS) in done.stderr
    for name in FORMATS:
        assert name in run("validate", "--help").stdout


def test_the_agents_summary_wrappers_come_from_their_formats() -> None:
    wrappers = summary_wrappers()
    assert len(wrappers) == len({f.wrapper for f in FORMATS.values() if f.wrapper})
    assert all(prefix or suffix for prefix, suffix in wrappers)


def test_the_threshold_presets_of_agents_come_from_their_formats() -> None:
    limits = Limits("m", 200_000, 64_000, "test")
    own = [f for f in FORMATS.values() if f.threshold_rule is not None]
    assert list(presets()) == [*(f.name for f in own), *AGENT_PRESETS]
    for entry in own:
        rule = entry.rule()
        assert rule is not None
        tokens, words = rule(limits)
        assert threshold(entry.name, limits) == Threshold(tokens, entry.name, words)


def test_the_record_families_come_from_their_formats() -> None:
    named = [f.record_family() for f in FORMATS.values() if f.family is not None]
    assert list(families()) == list(dict.fromkeys(k.name for k in named if k is not None))
    assert list(families()) == ["claude-code", "codex", "pi", "plain"]


def test_what_the_hooks_and_the_evaluation_ask_comes_from_the_formats() -> None:
    assert compaction_events() == {
        f.compaction_event: f.name for f in FORMATS.values() if f.compaction_event
    }
    assert [f.name for f in FORMATS.values() if f.hook_json] == ["codex"]
    assert tuple(n for n, f in FORMATS.items() if f.render() is not None) == RENDER_FORMATS
    links = {n: get_dialect(n).link_keys for n in FORMATS if get_dialect(n).link_keys}
    assert links == {"claude-code": ("uuid", "parentUuid"), "pi": ("id", "parentId")}
    session = build_session(1, 2_000)
    assert render(session, "codex").records
    with pytest.raises(UsageError, match="the evaluation renders no pi sessions"):
        render(session, "pi")
    with pytest.raises(UsageError, match="unknown format 'opencode'"):
        render(session, "opencode")


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def _outside_formats() -> list[Path]:
    return [
        p for p in sorted(PACKAGE.rglob("*.py")) if p.relative_to(PACKAGE).parts[0] != "formats"
    ]


@pytest.mark.parametrize("path", _outside_formats(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_nothing_outside_the_formats_imports_a_format_package(path: Path) -> None:
    found = [m for m in _imports(path) if m.startswith(OWN)]
    assert not found


MODULE_LINES = 800
"""The most lines a module of the package may have: a module a newcomer reads in one sitting."""


def test_no_module_is_over_its_size() -> None:
    sizes = {
        str(p.relative_to(PACKAGE)): len(p.read_text(encoding="utf-8").splitlines())
        for p in sorted(PACKAGE.rglob("*.py"))
    }
    assert {name: n for name, n in sizes.items() if n > MODULE_LINES} == {}
    assert len(sizes) > 50  # the whole package was read
