"""Shared set-up of the real-agent tests: the `agents` marker, the agents, memoized runs.

Every test collected under tests/agents gets the `agents` marker (registered in pyproject.toml),
so `pytest -m "not agents"` leaves the suite out, and the xdist group of its agent (`GROUPS`):
under pytest-xdist the tests of one agent run on one worker, which runs each of that agent's
resumes once (`Runs`), while the other agents' tests run beside them. The agents are installed
once per test session (the `agents` fixture, through `install.agent_command`, which lets one
process install at a time); when npm or its registry cannot be reached, every test that runs an
agent skips with the same one-line reason (`Agents.command`).

`runs` memoizes the expensive steps across tests of one session: each compaction
(`sessions.compact`) and each resume by a real agent (`resume.resume_*`), so the test of an
original and the tests of its compactions share one run of the agent on the original; the
agents run two at a time beside the compactions (`Runs`).
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.agents.install import PACKAGES, agent_command
from tests.agents.resume import ANSWER, PROMPT, Resumed, resume_claude_code, resume_pi
from tests.agents.resume_checks import check_answered_once, check_compacted, check_holds_view
from tests.agents.sessions import Compacted, Session, View, compact, require, view

HERE = Path(__file__).resolve().parent


GROUPS = {"test_claude_code_resume": "claude", "test_codex_resume": "codex", "test_pi_resume": "pi"}
"""The agent whose tests each module holds (test_second_compaction names it in its `agent`)."""


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    inside: dict[Path, bool] = {}  # each test file's folder resolved once, not once per test
    for item in items:
        if item.path not in inside:
            inside[item.path] = HERE in Path(str(item.path)).resolve().parents
        if inside[item.path]:
            item.add_marker(pytest.mark.agents)
            params = getattr(getattr(item, "callspec", None), "params", {})
            agent = params.get("agent", GROUPS.get(Path(str(item.path)).stem))
            if agent is not None:
                item.add_marker(pytest.mark.xdist_group(f"agents-{agent}"))


class Runs:
    """Compactions and resumes, each done once per test session.

    The agents run on a pool of `WORKERS` threads (each run is a subprocess), so they overlap
    with each other and with the compactions, which run in the calling test. The first test of
    an agent that needs a run starts every run the selected tests of that agent will need
    (`plan`: the originals, and each compaction as soon as it is made); later tests wait for
    their own.
    """

    WORKERS = 2

    def __init__(
        self, folder: Path, agents: Agents, plan: dict[str, list[tuple[Session, str | None]]]
    ) -> None:
        self.folder = folder
        self.agents = agents
        self.plan = plan
        self.pool = ThreadPoolExecutor(max_workers=self.WORKERS)
        self._compacted: dict[tuple[Path, str], Compacted] = {}
        self._resumed: dict[tuple[str, Path], Future[Resumed]] = {}
        self._started: set[str] = set()
        self._count = 0

    def compacted(self, session: Session, setting: str) -> Compacted:
        key = (session.path, setting)
        if key not in self._compacted:
            before = None
            if setting != "default":
                before = int(self.compacted(session, "default").report["tokens_before"])
            folder = self.folder / "compacted" / session.agent
            folder.mkdir(parents=True, exist_ok=True)
            self._compacted[key] = compact(session, setting, folder, before)
        return self._compacted[key]

    def checked_compaction(self, session: Session, setting: str) -> tuple[Compacted, View] | None:
        """`session` compacted at `setting` and resumed by its agent, with the checks every
        agent shares passed (see resume_checks); None when compactcli left it unchanged, which
        is asserted to be byte for byte."""
        require(session)
        compacted = self.compacted(session, setting)
        if not compacted.changed:
            assert compacted.report["status"] == "unchanged", compacted.report
            assert compacted.path.read_bytes() == session.path.read_bytes()
            return None
        resumed = self.resumed(session.agent, compacted.path)
        check_answered_once(resumed)
        after = view(compacted.path)
        check_holds_view(resumed, after)
        original = self.resumed(session.agent, session.path)
        check_compacted(resumed, after, original, view(session.path))
        return compacted, after

    def resumed(self, agent: str, path: Path) -> Resumed:
        """The resume of `path` by `agent`, started once and shared."""
        self.start(agent)
        return self._submit(agent, path).result()

    def start(self, agent: str) -> None:
        """Start every run the selected tests of `agent` need (once)."""
        if agent in self._started:
            return
        self.agents.command(agent)  # skips here when the agents cannot run
        self._started.add(agent)
        planned = [(s, setting) for s, setting in self.plan.get(agent, []) if s.path.is_file()]
        for session, _ in planned:
            self._submit(agent, session.path)
        for session, setting in planned:
            if setting is None:
                continue
            try:
                compacted = self.compacted(session, setting)
            except Exception:  # not this test's: the test of that compaction reports it
                continue
            if compacted.changed:
                self._submit(agent, compacted.path)

    def _submit(self, agent: str, path: Path) -> Future[Resumed]:
        key = (agent, path)
        if key not in self._resumed:
            self._count += 1
            folder = self.folder / "runs" / f"{agent}-{self._count}-{path.stem}"
            command = self.agents.command(agent)
            run = resume_claude_code if agent == "claude" else resume_pi
            self._resumed[key] = self.pool.submit(run, command, path, PROMPT, folder, ANSWER)
        return self._resumed[key]

    def resume(
        self,
        agent: str,
        path: Path,
        folder: Path,
        prompt: str = PROMPT,
        reported_input: int | None = None,
    ) -> Resumed:
        """One resume, now and not shared (`reported_input`: the input usage the model reports)."""
        run = resume_claude_code if agent == "claude" else resume_pi
        return run(self.agents.command(agent), path, prompt, folder, ANSWER, reported_input)


class Agents:
    """The pinned agents' commands, or why they cannot run (then each use skips).

    The skip is raised here, not in a fixture, so that every test it stops shares one location
    and `-ra` reports it as one line.
    """

    def __init__(self, commands: dict[str, list[str]], reason: str | None) -> None:
        self.commands = commands
        self.reason = reason

    def command(self, name: str) -> list[str]:
        """The argv prefix that runs agent `name` (`claude`, `codex` or `pi`)."""
        if self.reason is not None:
            pytest.skip(self.reason)
        return self.commands[name]


@pytest.fixture(scope="session")
def agents() -> Agents:
    """The pinned agents (`claude`, `codex`, `pi`), installed on first use.

    Resolved at session scope, before the function-scoped environment clean-up of
    tests/conftest.py removes `COMPACTCLI_*` variables (`COMPACTCLI_AGENTS_CACHE` among them).
    """
    try:
        return Agents({name: agent_command(name) for name in PACKAGES}, None)
    except pytest.skip.Exception as skipped:
        return Agents({}, str(skipped.msg))


@pytest.fixture(scope="session")
def runs(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, agents: Agents
) -> Iterator[Runs]:
    plan: dict[str, list[tuple[Session, str | None]]] = {}
    for item in request.session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        session = params.get("session")
        if isinstance(session, Session):
            plan.setdefault(session.agent, []).append((session, params.get("setting")))
    runs = Runs(tmp_path_factory.mktemp("agents"), agents, plan)
    yield runs
    runs.pool.shutdown(wait=True, cancel_futures=True)
