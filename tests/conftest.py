"""Shared test set-up: a clean environment, paths to fixtures and corpus, a CLI runner, and the
groups that keep tests on one pytest-xdist worker.

`scripts/test` runs the suite on several workers (two per core, with `--dist loadgroup` from
pyproject.toml). A test that uses a fixture wider than one test (module, class or package scope)
runs on the worker of the other tests of its module, so that fixture is made once; the console
examples of the documentation (tests/test_readme.py) run on one worker in document order, since a
block may read a file under /tmp an earlier block wrote. The tests that use the local Ray
(`local_ray`: those of tests/test_ray.py and the Ray example of docs/ray.md) run on one worker,
in a row, which starts that Ray once and stops it after them; so do the tests marked `llm` (litellm calls in the test's process),
whose worker alone imports litellm. tests/agents/conftest.py groups the real-agent tests by agent.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
EVAL_FIXTURES = ROOT / "compactcli" / "evaluation" / "fixtures"
"""The synthetic evaluation fixtures, shipped inside the package."""
CORPUS = ROOT.parent / "shared" / "corpus"

_SHARED_SCOPES = {"module", "class", "package"}


def script_module(name: str) -> ModuleType:
    """`scripts/NAME.py` imported as module NAME (the scripts are not a package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def representative(paths: Sequence[Path]) -> list[Path]:
    """Of `paths`, the first transcript of each format and every one with images or non-ASCII
    text (its name says `image` or `unicode`): the inputs a check too slow for every file runs
    on."""
    from compactcli import read_transcript

    chosen: dict[str, Path] = {}
    for path in paths:
        special = "image" in path.stem or "unicode" in path.stem
        chosen.setdefault(path.stem if special else read_transcript(str(path)).format, path)
    return sorted(chosen.values())


def _group(item: pytest.Item) -> str | None:
    """The xdist group `item` must run in, or None when any worker may run it."""
    if isinstance(item, pytest.Function) and item.originalname == "test_console_example":
        return "readme-console"
    if item.get_closest_marker("llm") is not None:
        return "llm"  # litellm takes seconds to import: one worker imports it
    info = getattr(item, "_fixtureinfo", None)
    if info is not None and "local_ray" in info.names_closure:
        return "ray"  # one local Ray per run, on the worker of every test that uses it
    definitions = info.name2fixturedefs.values() if info is not None else ()
    if any(defs and defs[-1].scope in _SHARED_SCOPES for defs in definitions):
        return item.nodeid.split("::", 1)[0]
    return None


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            group = _group(item)
            if group is not None:
                item.add_marker(pytest.mark.xdist_group(group))


def pytest_configure(config: pytest.Config) -> None:
    """Refuse to distribute under --dist loadgroup with a pytest whose node ids pytest-xdist
    3.8 cannot tag with a group (pytest 9.2 and later): the groups would be ignored."""
    distributed = config.getoption("dist", "no") == "loadgroup" and config.getoption("tx", None)
    if not distributed or hasattr(config, "workerinput"):
        return
    from importlib.metadata import version

    def release(name: str) -> tuple[int, ...]:
        return tuple(int(part) for part in re.findall(r"\d+", version(name))[:3])

    if release("pytest") >= (9, 2) and release("pytest-xdist") <= (3, 8, 0):
        raise pytest.UsageError(
            "pytest-xdist 3.8 cannot keep the xdist_group tests together under pytest 9.2 or "
            "later; install the test extra (pyproject.toml pins pytest below 9.2)"
        )


@pytest.fixture
def local_ray() -> None:
    """A local Ray of 2 CPUs, started by the first test that uses it (they run on one worker, in
    a row: `_group`) and shut down after the last of them (`pytest_runtest_teardown`): an idle
    Ray's processes take about 4% of a core, which the other workers need."""
    import os

    from compactcli import ray_engine

    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # the workers' environment too
    # Ray starts its workers at niceness 15: beside the other test workers, which keep both
    # cores busy, they would barely run, and the Ray tests (one worker's queue) would end last
    os.environ["RAY_worker_niceness"] = "0"  # noqa: SIM112 (Ray reads this spelling)
    ray_engine.connect(num_cpus=2)  # nothing when this worker's Ray is running


def _uses_ray(item: pytest.Item | None) -> bool:
    return item is not None and "local_ray" in getattr(item, "fixturenames", ())


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Shut the local Ray down after the last test in a row that uses it."""
    if _uses_ray(item) and not _uses_ray(nextitem) and "ray" in sys.modules:
        import ray

        if ray.is_initialized():
            ray.shutdown()


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No COMPACTCLI_* settings leak in; litellm stays offline; output is plain and wide."""
    import os

    for name in list(os.environ):
        if name.startswith("COMPACTCLI_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("COMPACTCLI_TRACEBACK", "1")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("TERM", "dumb")
    monkeypatch.setenv("RAY_worker_niceness", "0")  # a Ray a test starts: see `local_ray`
    yield
