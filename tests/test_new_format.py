"""Adding a format as docs/formats.md says: one package and one line in the registry.

A copy of the package gets the toy format of `tests/new_format/toy_chat/` as
`compactcli/formats/toy_chat/` and the line `"toy_chat",` in `PACKAGES`, and nothing else
changes; the library (`read_transcript`, `validate`, `estimate`, `compact_bytes`) and the
command line of that copy, run in a process of their own, then read, check, count and compact a
file of the format. In the package as it is, the name is an error, never a default.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from compactcli.errors import UsageError
from compactcli.formats import FORMATS, get_format
from compactcli.limits import default_threshold
from compactcli.loading import read_transcript
from compactcli.tokens import density_for
from tests.conftest import ROOT

TOY = ROOT / "tests" / "new_format" / "toy_chat"
REGISTRY_LINE = '    "anthropic",\n'


@pytest.fixture(scope="module")
def with_toy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the package with the toy format added (its folder and one registry line);
    returns the folder to put on `PYTHONPATH`."""
    root = tmp_path_factory.mktemp("with-toy")
    package = root / "compactcli"
    shutil.copytree(
        ROOT / "compactcli", package, ignore=shutil.ignore_patterns("__pycache__", "fixtures")
    )
    shutil.copytree(TOY, package / "formats" / "toy_chat")
    registry = package / "formats" / "__init__.py"
    text = registry.read_text(encoding="utf-8")
    assert text.count(REGISTRY_LINE) == 1
    registry.write_text(
        text.replace(REGISTRY_LINE, REGISTRY_LINE + '    "toy_chat",\n'), encoding="utf-8"
    )
    return root


@pytest.fixture(scope="module")
def chat(tmp_path_factory: pytest.TempPathFactory) -> Path:
    lines = []
    for turn in range(12):
        lines.append({"speaker": "user", "said": f"Step {turn}: fix the parser in src/p{turn}.py"})
        lines.append({"speaker": "agent", "said": f"Done with step {turn}. " + "detail " * 200})
    path = tmp_path_factory.mktemp("chat") / "chat.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run(
        [sys.executable, *args], env=env, capture_output=True, text=True, timeout=120, cwd=root
    )


LIBRARY = """
import json, sys
from compactcli import compact_bytes
from compactcli.estimate import estimate
from compactcli.loading import read_transcript
from compactcli.validation import validate

t = read_transcript(sys.argv[1])
report = estimate(t)
data = open(sys.argv[1], "rb").read()
out = compact_bytes(data, name="chat.jsonl", settings={"force": True, "keep_recent_tokens": 300})
lines = [json.loads(line) for line in out.data.splitlines()]
print(json.dumps({
    "format": t.format,
    "ok": validate(t).ok,
    "tokens": report.tokens,
    "threshold": report.threshold,
    "before": len(t.records),
    "after": len(lines),
    "status": out.status,
    "summary": any("compactcli" in line for line in lines),
}))
"""


def test_a_new_format_is_one_package_and_one_registry_line(with_toy: Path, chat: Path) -> None:
    done = _run(with_toy, "-c", LIBRARY, str(chat))
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["format"] == "toy-chat" and found["ok"] and found["status"] == "compacted"
    assert found["tokens"] > 2_000 and found["threshold"] > 0
    assert found["after"] < found["before"] and found["summary"]


def test_the_command_line_of_the_copy_takes_the_new_format(with_toy: Path, chat: Path) -> None:
    validated = _run(with_toy, "-m", "compactcli", "validate", str(chat))
    assert validated.returncode == 0, validated.stderr
    assert "valid toy-chat transcript (0 errors, 0 warnings)" in validated.stdout
    counted = _run(with_toy, "-m", "compactcli", "estimate", "--format", "toy-chat", str(chat))
    assert counted.returncode == 0, counted.stderr
    out = chat.parent / "compacted.jsonl"
    compacted = _run(
        with_toy,
        "-m",
        "compactcli",
        "compact",
        str(chat),
        "--force",
        "--keep-recent-tokens",
        "300",
        "-o",
        str(out),
    )
    assert compacted.returncode == 0, compacted.stderr
    assert len(out.read_text(encoding="utf-8").splitlines()) < 24


def test_a_format_that_is_not_registered_is_an_error(chat: Path) -> None:
    assert "toy-chat" not in FORMATS
    for ask in (
        get_format,
        default_threshold,
        lambda name: density_for(None, name),
        lambda name: read_transcript(str(chat), name),
    ):
        with pytest.raises(UsageError, match="unknown format 'toy-chat'; known formats: "):
            ask("toy-chat")
