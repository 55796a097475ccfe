"""Shared test set-up: a clean environment, paths to fixtures and corpus, a CLI runner."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
EVAL_FIXTURES = ROOT / "compactcli" / "evaluation" / "fixtures"
"""The synthetic evaluation fixtures, shipped inside the package."""
CORPUS = ROOT.parent / "shared" / "corpus"


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
    yield
