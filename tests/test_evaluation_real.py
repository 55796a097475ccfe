"""`compactcli eval` on real public sessions, which live outside the repository.

The sessions are in ../shared/corpus beside the checkout (its SOURCES.md says where each comes
from); they are never copied into the repository. Every test here is skipped when that folder is
absent. The probes used here are written by the tests themselves; the hand-written probe files
of fixtures/real/ are scored by scripts/eval_real.py, and checked here to hold on their sessions.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from compactcli.evaluation import parts
from compactcli.evaluation.measure import count, exact_counter
from compactcli.evaluation.probes import load_probes
from compactcli.evaluation.scorer import found_at_origin, score
from compactcli.evaluation.strategies import STRATEGIES, Backends
from compactcli.evaluation.view import build_view, compactcli_boilerplate, cwd_of
from compactcli.loading import read_transcript
from compactcli.stages.compact import settle
from tests.cli_runner import run
from tests.conftest import CORPUS, ROOT

pytestmark = pytest.mark.skipif(
    not CORPUS.is_dir(),
    reason=f"the real sessions are not here: {CORPUS} (../shared/corpus beside the checkout)",
)

HUNCH = [
    {
        "id": "h1",
        "category": "file_read",
        "fact": "the product spec the user selected",
        "match": {"mode": "path", "any_of": ["/Users/ved08/workspace/hunchdotfun/PRODUCT_SPEC.md"]},
        "origin": {"line": 3, "carrier": "user_text"},
    },
    {
        "id": "h2",
        "category": "identifier",
        "fact": "the skill run",
        "match": {"mode": "exact", "any_of": ["apply-grant"]},
        "origin": {"line": 9, "carrier": "tool_input"},
    },
    {
        "id": "h3",
        "category": "decoy",
        "fact": "never said",
        "match": {"mode": "exact", "any_of": ["Flutter"]},
        "origin": {"line": 0, "carrier": "none"},
    },
]


def test_probe_files_kept_apart_from_the_sessions_they_describe(tmp_path: Path) -> None:
    (tmp_path / "claude-code-hunch.probes.jsonl").write_bytes(
        b"".join(orjson.dumps(p) + b"\n" for p in HUNCH)
    )
    result = run(
        "eval",
        "--fixtures",
        str(tmp_path),
        "--transcripts",
        str(CORPUS),
        "--strategies",
        "compact",
        "--budgets",
        "default,0.1",
        "--json",
    )
    data = orjson.loads(result.stdout)
    assert result.stderr == ""
    assert data["fixtures"] == ["claude-code-hunch"]
    assert data["bad_probes"] == []
    assert [(r["budget"], r["cycle"]) for r in data["runs"]] == [("default", 1), (0.1, 1)]
    assert {r["carrier"] for r in data["parts"]["runs"][0]["failures"]} <= {
        "user_text",
        "tool_input",
    }
    summary = {s["budget"]: s for s in data["summary"]}
    assert set(summary["default"]["carriers"]) == {"user_text", "tool_input"}
    assert summary[0.1]["violations"] == 0


@pytest.mark.parametrize(
    "probes", sorted((ROOT / "fixtures" / "real").glob("*/*.probes.jsonl")), ids=lambda p: p.stem
)
def test_every_hand_written_probe_holds_on_its_session(probes: Path) -> None:
    """A positive probe is found in its session and in the record at its origin line; a
    negative one (a decoy, a superseded value) is not found where it would be violated."""
    transcript = read_transcript(str(CORPUS / probes.name.replace(".probes", "")))
    written = load_probes(str(probes))
    cwd = cwd_of(transcript)
    scores = score(written, build_view(transcript, compactcli_boilerplate()), cwd)
    assert [s.probe.id for s in scores if not s.passed] == []
    lines = {record.lineno: record.raw for record in transcript.records}
    astray = [
        p.id
        for p in written
        if not p.negative
        and p.origin.line
        and not found_at_origin(p, lines.get(p.origin.line), cwd)
    ]
    assert astray == []


def test_a_real_claude_code_part_is_relinked_onto_the_compacted_conversation() -> None:
    transcript = read_transcript(str(CORPUS / "claude-code-fundwise.jsonl"))
    plan = parts.plan_parts(transcript, 3)
    assert isinstance(plan, parts.Parts)
    first = parts.prefix(transcript, plan.starts[0])
    counter = exact_counter("claude-code")
    budget = count(first, counter) // 10
    output = settle(STRATEGIES["compact"].run(first, budget, Backends(counter)))
    grown, relinked = parts.extend(output, transcript, plan.starts[0], plan.starts[1])
    raw = parts.prefix(transcript, plan.starts[1])
    assert relinked  # its next prompt names a stop hook's record, which the loader drops
    assert parts.new_errors(grown, raw) == []
    assert parts.context_problem(output, grown, raw, plan.starts[0]) is None


def test_the_real_probe_script_prints_a_table_per_split() -> None:
    done = subprocess.run(
        [sys.executable, "scripts/eval_real.py", "--split", "heldout"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("## heldout")
    if "not scored" not in done.stdout:
        assert "| budget | kept | weighted | constr |" in done.stdout
        assert "| default |" in done.stdout and "| 10% |" in done.stdout
