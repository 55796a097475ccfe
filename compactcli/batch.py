"""Many files at once: parallel runs, failures kept to their file, and the results table's data.

`run_batch(paths, work, jobs=..., mode=...)` calls `work(path)` for every path, in worker
processes or threads when `jobs` (0: one per core) allows several, the largest files handed out
first, and returns one `FileResult` per path in input order,
reporting each in that order as soon as it and those before it are done: a file that fails is a
failed result and the others go on (unless `fail_fast`), and on Ctrl-C the writes in progress
finish (`WRITES`) before the interrupt is raised again. `SharedBackend` shares
one summarizer among a batch of threads; `totals(results)` is the data of the final table, and
`FileResult.details` what a `--json` row adds. Nothing here prints.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypedDict

from compactcli.errors import CompactError, ExitCode, InvalidFinding, InvalidTranscript
from compactcli.inputs import largest_first, workers_for
from compactcli.summarizers import Summarizer, SummaryRequest, SummaryResult

if TYPE_CHECKING:
    from compactcli.boundary import BoundaryDetails
    from compactcli.diff import DiffReport
    from compactcli.formats.repairing import RepairDict
    from compactcli.gc_file import GcDict
    from compactcli.redact_transcript import RedactionDict
    from compactcli.restore_file import RestoreDict
    from compactcli.stages.compact import CompactCheckDict
    from compactcli.stats import StatsReport

__all__ = [
    "WRITES",
    "FileDetails",
    "FileResult",
    "Interrupted",
    "SharedBackend",
    "WriteGate",
    "run_batch",
    "totals",
]

Mode = Literal["process", "thread"]
STATUSES = ("compacted", "unchanged", "repaired", "kept", "failed", "skipped")


class FileDetails(TypedDict, total=False):
    """What a file's run found beyond the fields of `FileResult`; each key only when it applies.

    `findings`: what `validate` found in a file refused as an invalid transcript; `repairs`:
    what `--repair` did; `check`: the `compact` check (`CompactCheck.to_dict()`); `diff`: the
    difference `--dry-run` shows; `stats`: the stats report (`--stats`); `redact`: the figures
    of `redact` and of `compact --redact`; `boundary`: the last boundary's details
    (`--boundary`; None when no stage made one); `policy`: the policy file its settings came
    from, when one did; `summary`: the text of the summary the run wrote (`--show-summary`);
    `restore`: what `restore` undid; `gc`: the sizes `gc` left.
    """

    findings: list[InvalidFinding]
    repairs: list[RepairDict]
    check: CompactCheckDict
    diff: DiffReport
    stats: StatsReport
    redact: RedactionDict
    boundary: BoundaryDetails | None
    policy: str
    summary: str
    restore: RestoreDict
    gc: GcDict


@dataclass(frozen=True, slots=True)
class FileResult:
    """What happened to one file.

    `status`: `compacted` (a smaller transcript was produced), `unchanged` (nothing to do; the
    output is the input), `repaired` (nothing to do but `--repair`'s repairs: the output is the
    repaired input), `kept` (the result would have been invalid or larger, so the input
    was kept), `failed` (`code` and `message` say why), `skipped` (not run: `--fail-fast`).
    `over` is by how many tokens the result is still at or over `target` (0 when under).
    `llm_calls` is how many model requests the file's run sent (every attempt and retry; none
    for a summary the cache answered). `details` holds what else the run found (`FileDetails`).
    """

    path: str
    status: str
    tokens_before: int = 0
    tokens_after: int = 0
    method: str = ""
    output: str | None = None
    backup: str | None = None
    code: int = 0
    message: str = ""
    target: int | None = None
    target_name: str = ""
    over: int = 0
    llm_calls: int = 0
    summarized: bool = False
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()  # what happened that is not a problem (why nothing changed)
    details: FileDetails = field(default_factory=FileDetails)

    @property
    def saved(self) -> int:
        return self.tokens_before - self.tokens_after

    @property
    def failed(self) -> bool:
        return self.status == "failed"


@dataclass(frozen=True, slots=True)
class Totals:
    files: int
    failed: int
    skipped: int
    tokens_before: int
    tokens_after: int
    llm_calls: int

    @property
    def saved(self) -> int:
        return self.tokens_before - self.tokens_after


def totals(results: Sequence[FileResult]) -> Totals:
    """The sums of the final table (tokens of failed and skipped files count as zero)."""
    done = [r for r in results if r.status not in ("failed", "skipped")]
    return Totals(
        files=len(results),
        failed=sum(1 for r in results if r.status == "failed"),
        skipped=sum(1 for r in results if r.status == "skipped"),
        tokens_before=sum(r.tokens_before for r in done),
        tokens_after=sum(r.tokens_after for r in done),
        llm_calls=sum(r.llm_calls for r in results),
    )


def failed_result(path: str, error: BaseException) -> FileResult:
    """The result of a file whose work raised `error`."""
    if isinstance(error, InvalidTranscript):  # the findings `validate` prints, as data
        found: FileDetails = {"findings": error.to_dicts()}
        return FileResult(
            path, "failed", code=int(error.exit_code), message=str(error), details=found
        )
    if isinstance(error, CompactError):
        return FileResult(path, "failed", code=int(error.exit_code), message=str(error))
    return FileResult(
        path,
        "failed",
        code=int(ExitCode.CHECK_FAILED),
        message=f"unexpected {type(error).__name__}: {error}",
    )


# ---------------------------------------------------------------------------------------------
# interruption: writes in progress finish, none starts after a stop


class Interrupted(KeyboardInterrupt):
    """Raised by `WriteGate.writing` once the batch is stopping."""


class WriteGate:
    """Lets a stop wait for the writes in progress, and refuses writes after it."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._active = 0
        self.stopped = False

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        with self._condition:
            if self.stopped:
                raise Interrupted()
            self._active += 1
        try:
            yield
        finally:
            with self._condition:
                self._active -= 1
                self._condition.notify_all()

    def stop(self, timeout: float = 30.0) -> None:
        """Refuse new writes and wait (up to `timeout` seconds) for those in progress."""
        with self._condition:
            self.stopped = True
            self._condition.wait_for(lambda: self._active == 0, timeout=timeout)

    def reset(self) -> None:
        with self._condition:
            self.stopped = False


WRITES = WriteGate()
"""The gate every output write of this process goes through (see `run_batch`)."""


# ---------------------------------------------------------------------------------------------
# running


def run_batch(
    paths: Sequence[str],
    work: Callable[[str], FileResult],
    *,
    jobs: int = 1,
    mode: Mode = "process",
    fail_fast: bool = False,
    on_result: Callable[[FileResult], None] | None = None,
    reraise: bool = False,
) -> list[FileResult]:
    """Run `work` on every path: one `FileResult` per path, in input order.

    `on_result` is called (in the calling thread) with each result in input order, as soon as it
    and every result before it have arrived. With `jobs` other than 1 (0: one per core) files
    run in parallel, the largest handed out first: in worker processes (`mode="process"`, for
    the CPU-bound offline path; `work` must then be picklable, such as a `functools.partial` of a
    module-level function, and is handed to each worker once, then only paths, at most two per
    worker at a time) or in threads (`mode="thread"`, for LLM calls, which wait on the network).

    - A file that fails is a `FileResult` with `status="failed"`, its exit code and one-line
      message; the others go on, unless `fail_fast`: then no new file starts after the first
      failure, files already running (or handed to a worker) finish, and the rest are reported
      as `skipped`. When a worker process dies (killed, out of memory), the files its pool held
      fail with "worker process died", and the others go on in a new pool.
    - Ctrl-C (`KeyboardInterrupt`): no new file starts, files being written finish their atomic
      write or remove their temporary file, and the interrupt is raised again. Worker processes
      react to SIGINT only while they run a file; worker threads are never waited for beyond the
      writes in progress (`WRITES`), so a hung LLM call cannot hold the exit.

    `reraise` re-raises an unexpected (non-`CompactError`) exception instead of reporting it
    as a failed file, for debugging and tests.
    """
    results: dict[int, FileResult] = {}
    stop = False
    reported = 0  # results before this index have gone to `on_result`

    def record(index: int, result: FileResult) -> None:
        nonlocal stop, reported
        results[index] = result
        if fail_fast and result.failed:
            stop = True
        while reported in results:
            if on_result is not None:
                on_result(results[reported])
            reported += 1

    WRITES.reset()
    workers = workers_for(jobs, len(paths))
    try:
        if workers == 1:
            for index, path in enumerate(paths):
                if stop:
                    break
                record(index, _call(work, path, reraise))
        elif mode == "thread":
            _threads(paths, work, workers, record, lambda: stop, reraise)
        else:
            _processes(paths, work, workers, record, lambda: stop, reraise)
    except KeyboardInterrupt:
        WRITES.stop()
        raise
    if on_result is not None:  # those that came after a file --fail-fast left unstarted
        for index in sorted(i for i in results if i >= reported):
            on_result(results[index])
    return [
        results.get(index) or FileResult(path, "skipped", message="not run: --fail-fast")
        for index, path in enumerate(paths)
    ]


def _call(work: Callable[[str], FileResult], path: str, reraise: bool) -> FileResult:
    try:
        return work(path)
    except CompactError as error:
        return failed_result(path, error)
    except BrokenPipeError:
        raise  # standard output was closed (`| head`): the whole run ends, quietly
    except Exception as error:
        if reraise:
            raise
        return failed_result(path, error)


def _threads(
    paths: Sequence[str],
    work: Callable[[str], FileResult],
    workers: int,
    record: Callable[[int, FileResult], None],
    stopping: Callable[[], bool],
    reraise: bool,
) -> None:
    """Daemon threads: an interrupt never waits for a thread stuck in a network call."""
    todo: queue.Queue[tuple[int, str]] = queue.Queue()
    for index in largest_first(paths):
        todo.put((index, paths[index]))
    done: queue.Queue[tuple[int, FileResult | BaseException]] = queue.Queue()
    halt = threading.Event()

    def loop() -> None:
        while not halt.is_set():
            try:
                index, path = todo.get_nowait()
            except queue.Empty:
                return
            try:
                outcome: FileResult | BaseException = _call(work, path, reraise)
            except BaseException as error:
                outcome = error
            done.put((index, outcome))

    threads = [threading.Thread(target=loop, daemon=True) for _ in range(workers)]
    for thread in threads:
        thread.start()
    received = 0
    try:
        while received < len(paths):
            try:
                index, outcome = done.get(timeout=0.1)
            except queue.Empty:
                if not any(t.is_alive() for t in threads) and done.empty():
                    break  # stopped early (fail-fast): nothing more will come
                continue
            received += 1
            if isinstance(outcome, BaseException):
                raise outcome
            record(index, outcome)
            if stopping():
                halt.set()
    finally:
        halt.set()


_busy = False
_work: Callable[[str], FileResult] | None = None  # in a worker process: what each file gets


def _worker_init(work: Callable[[str], FileResult]) -> None:
    """In a worker process: keep `work` (sent once per process, not with every file: it holds
    the plan of the whole batch); SIGINT interrupts a file being worked on, and is ignored
    between files (so an idle worker does not die with a traceback)."""
    global _work
    _work = work

    def handler(signum: int, frame: object) -> None:
        if _busy:
            raise KeyboardInterrupt()

    signal.signal(signal.SIGINT, handler)


def _in_worker(path: str, reraise: bool) -> FileResult:
    global _busy
    assert _work is not None
    _busy = True
    try:
        return _call(_work, path, reraise)
    finally:
        _busy = False


def _processes(
    paths: Sequence[str],
    work: Callable[[str], FileResult],
    workers: int,
    record: Callable[[int, FileResult], None],
    stopping: Callable[[], bool],
    reraise: bool,
) -> None:
    # imported here: a run of one file at a time does not load multiprocessing
    from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    def new_pool() -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=workers, initializer=_worker_init, initargs=(work,))

    pools = [new_pool()]  # a new one replaces a pool whose worker died
    pending: dict[Future[FileResult], int] = {}
    todo = ((index, paths[index]) for index in largest_first(paths))
    window = 2 * workers  # files handed out at a time: enough to keep every worker busy

    def died(index: int, error: BaseException) -> None:  # a worker was killed, out of memory
        message = f"worker process died: {error}"
        record(
            index,
            FileResult(paths[index], "failed", code=int(ExitCode.CHECK_FAILED), message=message),
        )

    def hand_out() -> None:
        while len(pending) < window and not stopping():
            item = next(todo, None)
            if item is None:
                return
            index, path = item
            try:
                future = pools[-1].submit(_in_worker, path, reraise)
            except BrokenProcessPool:  # the files it held have failed: go on in a new pool
                pools[-1].shutdown(wait=False, cancel_futures=True)
                pools.append(new_pool())
                future = pools[-1].submit(_in_worker, path, reraise)
            pending[future] = index

    try:
        hand_out()
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                index = pending.pop(future)
                try:
                    record(index, future.result())
                except BrokenProcessPool as error:
                    died(index, error)
            hand_out()
    except KeyboardInterrupt:
        for future in pending:
            future.cancel()
        _interrupt_workers()
        raise
    finally:
        for pool in pools:
            pool.shutdown(wait=True, cancel_futures=True)


def _interrupt_workers() -> None:
    """Pass Ctrl-C on to the worker processes (a terminal does it; `kill -INT` does not)."""
    import multiprocessing

    for child in multiprocessing.active_children():
        if child.pid is not None:
            with contextlib.suppress(OSError):
                os.kill(child.pid, signal.SIGINT)


# ---------------------------------------------------------------------------------------------
# one backend shared by a batch of threads


class SharedBackend:
    """A `Summarizer` shared by threads, with at most `limit` requests in flight at a time.

    It also counts the LLM calls made through it. (A failing LLM backend is stopped by the LLM
    summarizer's own process-wide breaker, which threads share.)
    """

    def __init__(self, inner: Summarizer, *, limit: int) -> None:
        self.inner = inner
        self.limit = max(1, limit)
        self._slots = threading.BoundedSemaphore(self.limit)
        self._lock = threading.Lock()
        self.calls = 0

    @property
    def name(self) -> str:
        return self.inner.name

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        with self._slots:
            result = self.inner.summarize(request)
        with self._lock:
            self.calls += result.llm_calls
        return result
