"""`compactcli eval` on the committed fixtures: the gates CI runs, the published table, errors.

The full run (every strategy, budget and round, the LLM strategy replayed from the committed
recordings) happens once per module and is compared with compactcli/evaluation/fixtures/
baseline.json at 0% tolerance and with report.txt beside it, the table docs/evaluation.md
shows. The gates are then read from the baseline it matched.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import orjson
import pytest

from compactcli.evaluation.measure import count, exact_counter
from compactcli.evaluation.strategies import STRATEGIES, Backends
from compactcli.loading import read_transcript, to_bytes
from compactcli.stages.compact import settle
from tests.cli_runner import Run, run
from tests.conftest import EVAL_FIXTURES, FIXTURES, ROOT

pytestmark = pytest.mark.llm  # litellm calls in this process: one worker (tests/conftest.py)

EVAL = EVAL_FIXTURES
BASELINE = EVAL / "baseline.json"
REPORT = EVAL / "report.txt"


@pytest.fixture(scope="module")
def full_run() -> Run:
    return run(
        "eval",
        "--fixtures",
        str(EVAL),
        "--recordings",
        str(EVAL / "recordings"),
        "--baseline",
        str(BASELINE),
    )


def test_a_fresh_run_prints_the_published_table(full_run: Run) -> None:
    assert full_run.stderr == ""  # every figure equals the baseline's
    assert full_run.stdout == REPORT.read_text(encoding="utf-8")


def _gates() -> dict[str, dict[str, object]]:
    return {g["name"]: g for g in orjson.loads(BASELINE.read_bytes())["gates"]}


@pytest.mark.parametrize("name", [name for name, gate in _gates().items() if gate["gate"]])
def test_gate_holds_for_the_default_compact_at_10x(full_run: Run, name: str) -> None:
    assert full_run.stderr == ""  # the baseline the gates are read from is this run's
    gate = _gates()[name]
    assert gate["status"] == "pass", gate


def test_the_gate_figures(full_run: Run) -> None:
    assert full_run.stderr == ""
    values = {name: gate["value"] for name, gate in _gates().items()}
    assert values == {
        "user_constraint": 1.0,
        "pending_ask": 1.0,
        "file_modified": 1.0,
        "error_string": 1.0,
        "decision": 1.0,
        "weighted": 1.0,
        "violations": 0.0,
        "integrity": 1.0,
        "budget_10x": 0.6667,
        "weighted_4x": 1.0,
        "must_survive_50x": 1.0,
        "drift": 0.4,
    }


def test_eval_exits_0_when_every_gate_holds(full_run: Run) -> None:
    assert full_run.exit_code == 0


def test_eval_exits_1_exactly_when_a_gate_fails(full_run: Run) -> None:
    failing = [g for g in _gates().values() if g["gate"] and g["status"] == "FAIL"]
    assert full_run.exit_code == (1 if failing else 0)
    assert full_run.stdout.endswith(f"gates: {8 - len(failing)} passed, {len(failing)} failed\n")


def test_the_readme_shows_the_table_a_fresh_run_prints() -> None:
    page = (ROOT / "docs" / "evaluation.md").read_text(encoding="utf-8")
    report = REPORT.read_text(encoding="utf-8")
    first = report.split("\n", 1)[0]
    assert first in page
    start = page.index(first)
    assert page[start : start + len(report)] == report


# ---------------------------------------------------------------------------------------------
# the command on small runs


def _one(tmp_path: Path, name: str = "codex-20k-s2") -> Path:
    folder = tmp_path / "fixtures"
    folder.mkdir(exist_ok=True)
    for suffix in (".jsonl", ".probes.jsonl"):
        shutil.copy(EVAL / f"{name}{suffix}", folder / f"{name}{suffix}")
    return folder


def test_json_and_per_probe_records(tmp_path: Path) -> None:
    folder = _one(tmp_path)
    records = tmp_path / "records.jsonl"
    result = run(
        "eval",
        "--fixtures",
        str(folder),
        "--strategies",
        "prune,compact",
        "--budgets",
        "10%",
        "--rounds",
        "1",
        "--json",
        "--records",
        str(records),
    )
    data = orjson.loads(result.stdout)
    assert result.stderr == ""
    assert set(data) == {
        "settings",
        "fixtures",
        "summary",
        "sweep",
        "gates",
        "passed",
        "inputs",
        "runs",
        "parts",
        "bad_probes",
        "notes",
    }
    assert data["fixtures"] == ["codex-20k-s2"]
    assert [(s["strategy"], s["budget"]) for s in data["summary"]] == [
        ("prune", 0.1),
        ("compact", 0.1),
    ]
    assert result.exit_code == (0 if data["passed"] else 1)
    lines = [orjson.loads(line) for line in records.read_bytes().splitlines()]
    probes = (folder / "codex-20k-s2.probes.jsonl").read_bytes().count(b"\n")
    assert len(lines) == 2 * probes
    assert set(lines[0]) == {
        "fixture",
        "strategy",
        "budget",
        "cycle",
        "id",
        "category",
        "passed",
        "level",
        "where",
        "near",
        "summary",
    }


def test_a_fixture_generated_at_run_time(tmp_path: Path) -> None:
    result = run(
        "eval",
        "--generate",
        "openai:20k:9",
        "--strategies",
        "head-tail",
        "--budgets",
        "0.5",
        "--rounds",
        "1",
    )
    assert result.exit_code == 0, result.stderr
    assert "fixtures: openai-20k-s9\n" in result.stdout
    assert re.search(r"^head-tail +50% ", result.stdout, re.MULTILINE)
    assert result.stdout.startswith("compactcli eval: 1 fixture, 1 strategy, budgets 50%, 1 round;")
    assert "  skipped user constraints retained" in result.stdout  # compact was not run


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (
            ["--strategies", "compact,magic"],
            2,
            "error: unknown strategy 'magic'; known: drop-oldest, prune, head-tail, extractive, "
            "compact, llm-replay\n",
        ),
        (
            ["--budgets", "0.1,x"],
            2,
            "error: --budgets takes shares of the input such as 0.5,0.1 or default, not '0.1,x'\n",
        ),
        (["--budgets", "1.5"], 2, "error: --budgets: 1.5 is not a share between 0 and 1\n"),
        (
            ["--generate", "codex:20k"],
            2,
            "error: --generate takes FORMAT:SIZE:SEED (e.g. claude-code:500k:7), not 'codex:20k'\n",
        ),
    ],
)
def test_usage_errors(args: list[str], code: int, message: str) -> None:
    result = run("eval", *args)
    assert (result.exit_code, result.stdout, result.stderr) == (code, "", message)


def test_unreadable_fixture_folders(tmp_path: Path) -> None:
    missing = run("eval", "--fixtures", str(tmp_path / "nope"))
    assert (missing.exit_code, missing.stderr) == (
        3,
        f"error: {tmp_path / 'nope'}: no such folder\n",
    )
    (tmp_path / "a.probes.jsonl").write_text("")
    alone = run("eval", "--fixtures", str(tmp_path))
    assert (alone.exit_code, alone.stderr) == (
        3,
        f"error: {tmp_path / 'a.jsonl'}: missing (its probe file is a.probes.jsonl)\n",
    )


def test_a_probe_absent_from_its_own_input_is_reported(tmp_path: Path) -> None:
    folder = _one(tmp_path)
    probes = folder / "codex-20k-s2.probes.jsonl"
    probes.write_bytes(
        probes.read_bytes()
        + b'{"id": "zz", "category": "identifier", "fact": "NOT-THERE-42", "match": {"mode": "exact"}}\n'
    )
    result = run(
        "eval",
        "--fixtures",
        str(folder),
        "--strategies",
        "prune",
        "--rounds",
        "1",
        "--budgets",
        "0.5",
    )
    assert (
        "Probes that do not hold on their own input (fix the probe file)\n"
        "  codex-20k-s2 zz (not in its own input): NOT-THERE-42\n"
    ) in result.stdout


def test_a_probe_its_origin_line_does_not_hold_is_reported(tmp_path: Path) -> None:
    folder = _one(tmp_path)
    probes = folder / "codex-20k-s2.probes.jsonl"
    lines = (folder / "codex-20k-s2.jsonl").read_bytes().splitlines()
    first = orjson.loads(probes.read_bytes().splitlines()[0])
    line = first["origin"]["line"]
    words = [first["fact"], *first["match"].get("any_of", [])]
    elsewhere = next(
        n
        for n, text in enumerate(lines, 1)
        if n != line and text.strip() and not any(w.encode() in text for w in words)
    )
    moved = {**first, "id": "moved", "origin": {**first["origin"], "line": elsewhere}}
    kept = {**first, "id": "kept"}
    probes.write_bytes(
        probes.read_bytes() + orjson.dumps(moved) + b"\n" + orjson.dumps(kept) + b"\n"
    )
    result = run("eval", "--fixtures", str(folder), "--strategies", "prune", "--rounds", "1")
    data = orjson.loads(
        run(
            "eval", "--fixtures", str(folder), "--strategies", "prune", "--rounds", "1", "--json"
        ).stdout
    )
    assert data["bad_probes"] == [
        {
            "fixture": "codex-20k-s2",
            "id": "moved",
            "fact": first["fact"],
            "problem": f"not at its origin, line {elsewhere}",
        }
    ]
    assert f"  codex-20k-s2 moved (not at its origin, line {elsewhere}): " in result.stdout


def test_hand_written_probes_on_a_format_the_generator_does_not_write(tmp_path: Path) -> None:
    folder = tmp_path / "hand"
    folder.mkdir()
    shutil.copy(FIXTURES / "transcripts" / "pi-session.jsonl", folder / "pi-session.jsonl")
    probes = [
        {
            "id": "h1",
            "category": "file_modified",
            "fact": "src/lib/geo.ts",
            "match": {"mode": "path"},
        },
        {
            "id": "h2",
            "category": "pending_ask",
            "fact": "Commit it please.",
            "match": {"mode": "key_terms", "key_terms": ["commit"]},
        },
        {"id": "h3", "category": "identifier", "fact": "3f2a1bc", "match": {"mode": "exact"}},
        {"id": "h4", "category": "decoy", "fact": "ETIMEDOUT", "match": {"mode": "normalized"}},
    ]
    (folder / "pi-session.probes.jsonl").write_bytes(
        b"".join(orjson.dumps(p) + b"\n" for p in probes)
    )
    result = run("eval", "--fixtures", str(folder), "--strategies", "compact", "--json")
    data = orjson.loads(result.stdout)
    assert data["bad_probes"] == []
    assert {(r["budget"], r["cycle"]) for r in data["runs"]} == {
        (0.5, 1),
        (0.25, 1),
        (0.1, 1),
        (0.05, 1),
        (0.02, 1),  # no later rounds for pi
    }
    assert [i["weighted"] for i in data["inputs"]] == [1.0]


def test_the_llm_strategy_runs_by_default_only_where_there_are_recordings() -> None:
    generated = run("eval", "--generate", "openai:20k:9", "--budgets", "0.5", "--rounds", "1")
    assert "llm-replay" not in generated.stdout
    assert re.search(r"^compact +50% ", generated.stdout, re.MULTILINE)
    named = run(
        "eval",
        "--generate",
        "openai:20k:9",
        "--strategies",
        "llm-replay",
        "--budgets",
        "0.5",
        "--rounds",
        "1",
    )
    assert named.exit_code == 4
    assert named.stderr.startswith("error: no recording for ")
    record = run(
        "eval", "--generate", "openai:20k:9", "--record", "--upstream", "http://127.0.0.1:9/v1"
    )
    assert (record.exit_code, record.stderr) == (
        2,
        "error: recording needs a folder to write to: --recordings DIR\n",
    )


def test_the_default_budget_is_compact_as_a_user_runs_it(tmp_path: Path) -> None:
    folder = _one(tmp_path)
    result = run(
        "eval",
        "--fixtures",
        str(folder),
        "--strategies",
        "prune,compact",
        "--budgets",
        "default,0.5",
        "--rounds",
        "1",
        "--json",
    )
    data = orjson.loads(result.stdout)
    assert data["settings"]["budgets"] == ["default", 0.5]
    assert [(s["strategy"], s["budget"]) for s in data["summary"]] == [
        ("prune", 0.5),  # a strategy defined by its budget has no default run
        ("compact", "default"),
        ("compact", 0.5),
    ]
    default = next(r for r in data["runs"] if r["budget"] == "default")
    assert (default["budget_tokens"], default["compliant"]) == (None, None)

    out = tmp_path / "out.jsonl"
    done = run("compact", str(folder / "codex-20k-s2.jsonl"), "--force", "-o", str(out))
    assert done.exit_code == 0, done.stderr
    transcript = read_transcript(str(folder / "codex-20k-s2.jsonl"))
    strategy = STRATEGIES["compact"]
    assert strategy.run_default is not None
    output = settle(strategy.run_default(transcript, Backends(exact_counter("codex"))))
    assert to_bytes(output) == out.read_bytes()
    assert default["tokens_out"] == count(output, exact_counter("codex"))

    text = run("eval", "--fixtures", str(folder), "--strategies", "compact", "--budgets", "default")
    assert re.search(r"^compact +default +\S+ +- ", text.stdout, re.MULTILINE)
    assert text.stdout.startswith("compactcli eval: 1 fixture, 1 strategy, budgets default, ")
