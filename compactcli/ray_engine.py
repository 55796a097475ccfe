"""Ray as the engine: the same per-session work as a local run, scheduled over a Ray cluster.

Two ways in (install with `pip install 'compactcli[ray]'`): `map_files` runs a per-file function
in Ray tasks, as the command line's `--engine ray` does with its own work, so outputs and
reports are those of the local run (workers read files by path, so they must see them);
`compact_sessions` and `estimate_sessions` take paths, folders, URIs or a Ray Dataset, run
`compactcli.in_memory` on each session in the workers and return one stats row per session
(`SessionRow`). A session that fails is reported, and the others go on. With LLM summaries the
summary cache and the circuit breaker (`BREAKER_ACTOR`) are shared across workers. `connect`
joins a running Ray or starts a local one."""

from __future__ import annotations

import functools
import os
import posixpath
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

from compactcli import lifetime
from compactcli.errors import UsageError
from compactcli.inputs import largest_first
from compactcli.summarizers.llm import BREAKER_THRESHOLD, CircuitBreaker

if TYPE_CHECKING:
    from ray.data import Dataset

    from compactcli.estimate import EstimateOptions
    from compactcli.summarizers import Summarizer

__all__ = [
    "BREAKER_ACTOR",
    "RETRIES",
    "SessionRow",
    "compact_sessions",
    "connect",
    "estimate_sessions",
    "map_files",
    "require_ray",
]

RETRIES = 3
"""How many times a task whose worker died (killed, out of memory) is run again."""
MIN_BATCH_BYTES = 4 << 20
"""The least bytes of files `map_files` hands a task (but the last), so that a tree of small
files is not a task per file."""
BREAKER_ACTOR = "compactcli-breaker"
"""The named Ray actor that holds the circuit breaker's counts for every worker."""
INSTALL = "pip install 'compactcli[ray]'"
NAMESPACE = "compactcli"

T = TypeVar("T")


class SessionRow(TypedDict):
    """One session's stats row (`compact_sessions`, `estimate_sessions`): what the local run
    reports for the file. `status` is the command's (`compacted`, `unchanged`, ... or, for an
    estimate, `ok`, `over_threshold`, ...), `failed` with `error` set when the session could not
    be done; `output` is where its result was written ("" when nowhere)."""

    path: str
    status: str
    tokens_before: int
    tokens_after: int
    method: str
    llm_calls: int
    code: int
    output: str
    error: str


def require_ray() -> None:
    """`UsageError` with the install line when Ray Data is not installed (found, not imported:
    importing Ray takes a second, and `connect` must see it imported first)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("ray")
    except (ImportError, ValueError):
        spec = None
    folders = (spec.submodule_search_locations or []) if spec is not None else []
    if not any(os.path.isdir(os.path.join(folder, "data")) for folder in folders):
        raise UsageError(f"the Ray engine needs Ray Data: {INSTALL}")


def connect(address: str | None = None, *, num_cpus: int | None = None) -> None:
    """Join the Ray at `address` (`auto`: the one `ray start` runs on this machine, or
    `ray://HOST:PORT`), or start
    a local one when None (of `num_cpus`, default all); quietly (errors only), in the
    `compactcli` namespace (Ray says nothing of its own actors there). Nothing when this process
    is connected already. A command line that joined a running Ray ends without disconnecting
    (`compactcli.lifetime.exit_past`)."""
    import atexit
    import sys
    import threading

    imported = "ray" in sys.modules
    threads, handlers = set(threading.enumerate()), atexit._ncallbacks()
    require_ray()
    import logging  # after the count: Ray's loggers are what it registers an exit handler for

    import ray

    logging.getLogger("ray").setLevel(logging.ERROR)  # failures come back as results
    if ray.is_initialized():
        return
    options: dict[str, Any] = {
        "namespace": NAMESPACE,
        "logging_level": logging.ERROR,
        "log_to_driver": False,
        "configure_logging": True,
    }
    if address is None:
        options["include_dashboard"] = False
        options["num_cpus"] = num_cpus
    else:
        options["address"] = address
    ray.init(**options)
    if address is not None and not imported:
        # the cluster ends this driver's job when its connection closes: a command line that
        # is done need not disconnect first (`compactcli.lifetime.exit_past`; a Ray started
        # here is shut down at exit as usual, its processes being this one's)
        started = [t for t in threading.enumerate() if t not in threads]
        lifetime.exit_past(started, atexit._ncallbacks() - handlers)


def _data() -> None:
    """Ray Data loaded (it sets up its own loggers) and quietened: no progress bars, errors
    only."""
    import logging

    import ray.data

    logging.getLogger("ray.data").setLevel(logging.ERROR)
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.print_on_execution_start = False


# ---------------------------------------------------------------------------------------------
# the command line's files


def map_files(
    paths: Sequence[str],
    work: Callable[[str], T],
    failed: Callable[[str, BaseException], T],
    *,
    address: str | None = None,
    on_result: Callable[[T], None] | None = None,
) -> list[T]:
    """`work(path)` for every path in Ray tasks: the results in input order, each also given to
    `on_result` as soon as it and every result before it have arrived; a path whose `work`
    raised gets `failed(path, error)`, made in the worker. `work` and `failed` must be picklable
    (module-level functions, or `functools.partial`s of them); so must results. Files go out in
    batches that shrink as the work runs out, largest files first, one task each (`_batches`),
    and a task whose worker died is run again at most `RETRIES` times. Workers read the files by
    path, so they must see them (a local Ray, or a shared filesystem). Plain Ray tasks, not a
    Ray Data map: the files are names, not data to stream, and a Ray Data job costs more to
    start on a running Ray (docs/ray.md)."""
    if not paths:
        return []
    connect(address)
    import ray

    resources: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]
    cpus = max(1, int(resources.get("CPU", 1)))
    run = ray.remote(num_cpus=1, max_retries=RETRIES)(_run_batch)
    shared = ray.put((work, failed))  # sent once, not with every task
    pending = [
        run.remote(batch, [paths[i] for i in batch], shared) for batch in _batches(paths, cpus)
    ]
    results: dict[int, T] = {}
    reported = 0
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        for index, outcome in ray.get(done[0]):
            results[index] = outcome
        while reported in results:
            if on_result is not None:
                on_result(results[reported])
            reported += 1
    return [results[index] for index in range(len(paths))]


def _batches(paths: Sequence[str], cpus: int) -> list[list[int]]:
    """The indexes of `paths` in batches, one Ray task each (a task's overhead is paid per
    batch, not per file), in the order they go out: the largest files first, each batch a
    `1 / (2 * cpus)` share of the bytes not yet handed out and at least `MIN_BATCH_BYTES` (or
    one file). The batches shrink as the work runs out, so that the last ones are small and
    every worker finishes at about the same time (guided self-scheduling), whatever a file's
    bytes cost."""
    sizes = []
    for path in paths:
        try:
            sizes.append(os.path.getsize(path))
        except OSError:
            sizes.append(0)
    remaining = sum(sizes)
    batches: list[list[int]] = []
    batch: list[int] = []
    taken = target = 0
    for index in largest_first(paths):
        if not batch:
            target = max(remaining // (2 * cpus), MIN_BATCH_BYTES)
        batch.append(index)
        taken += sizes[index]
        remaining -= sizes[index]
        if taken >= target:
            batches.append(batch)
            batch, taken = [], 0
    if batch:
        batches.append(batch)
    return batches


def _mapped(dataset: Dataset, fn: Callable[[dict[str, Any]], SessionRow]) -> Dataset:
    """`dataset.map(fn)`, one task per block, a task whose worker died run again at most
    `RETRIES` times (Ray Data's default is forever: a session that kills every worker it runs
    on would hold the job). Ray 2.60 warns that `max_retries` goes in 2.64 (the extra pins
    below it)."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="`ray_remote_args` is deprecated")
        mapped: Dataset = dataset.map(functools.partial(_as_dict, fn), max_retries=RETRIES)
    return mapped


def _as_dict(fn: Callable[[dict[str, Any]], SessionRow], row: dict[str, Any]) -> dict[str, Any]:
    """`fn(row)` as the plain dict Ray Data's `map` takes."""
    return dict(fn(row))


def _run_batch(
    indexes: Sequence[int],
    paths: Sequence[str],
    shared: tuple[Callable[[str], Any], Callable[[str, BaseException], Any]],
) -> list[tuple[int, Any]]:
    """One batch of `map_files`: (index, result) for each of its files, or `failed`'s result
    for an exception its `work` raised, made here (an exception need not cross processes). The
    worker keeps each file's data until the next file's comes, as the command line's own worker
    processes do (`compactcli.lifetime`)."""
    from compactcli import lifetime

    lifetime.enable()  # as in the command line's own worker processes: no freeing file by file
    work, failed = shared
    done = []
    for index, path in zip(indexes, paths, strict=True):
        try:
            outcome = work(path)
        except Exception as error:  # the file fails alone
            outcome = failed(path, error)
        done.append((index, outcome))
    return done


# ---------------------------------------------------------------------------------------------
# LLM summaries across workers


class RayBreaker(CircuitBreaker):
    """A circuit breaker whose counts live in the named actor `BREAKER_ACTOR`, so that every
    worker of the job stops asking a model that keeps failing."""

    def __init__(self, actor: Any, threshold: int = BREAKER_THRESHOLD) -> None:
        super().__init__(threshold)
        self._actor = actor

    def __reduce__(self) -> tuple[Any, ...]:
        return (RayBreaker, (self._actor, self.threshold))

    def failures(self, key: tuple[str, str | None]) -> int:
        import ray

        return int(ray.get(self._actor.failures.remote(key)))

    def failed(self, key: tuple[str, str | None]) -> int:
        import ray

        return int(ray.get(self._actor.failed.remote(key)))

    def succeeded(self, key: tuple[str, str | None]) -> None:
        import ray

        ray.get(self._actor.succeeded.remote(key))

    def reset(self) -> None:
        import ray

        ray.get(self._actor.reset.remote())


class _Counts:
    """The breaker actor's state: consecutive failures per (model, api_base)."""

    def __init__(self) -> None:
        self._failures: dict[tuple[str, str | None], int] = {}

    def failures(self, key: tuple[str, str | None]) -> int:
        return self._failures.get(tuple(key), 0)  # type: ignore[arg-type]

    def failed(self, key: tuple[str, str | None]) -> int:
        key = tuple(key)  # type: ignore[assignment]
        self._failures[key] = self._failures.get(key, 0) + 1
        return self._failures[key]

    def succeeded(self, key: tuple[str, str | None]) -> None:
        self._failures.pop(tuple(key), None)  # type: ignore[arg-type]

    def reset(self) -> None:
        self._failures.clear()


def shared_breaker() -> RayBreaker:
    """The job's breaker: the named actor (it lives as long as the job's driver), made on first
    use (the driver calls this after `connect`) and reset for the run."""
    import ray

    actor = (
        ray.remote(num_cpus=0)(_Counts)
        .options(name=BREAKER_ACTOR, get_if_exists=True, lifetime="detached")
        .remote()
    )
    breaker = RayBreaker(actor)
    breaker.reset()
    return breaker


class Summarizers:
    """Picklable: the summarizer for resolved settings, made once per worker process (the LLM
    one with the summary cache in `cache_dir` and the shared `breaker`)."""

    def __init__(self, cache_dir: str | None, breaker: RayBreaker | None) -> None:
        self.cache_dir = cache_dir
        self.breaker = breaker

    def __call__(self, settings: Mapping[str, Any]) -> Summarizer:
        key = (
            settings.get("summarizer"),
            settings.get("model"),
            settings.get("api_base"),
            settings.get("timeout"),
            self.cache_dir,
        )
        found = _MADE.get(key)
        if found is None:
            found = _MADE[key] = self._make(settings)
        return found

    def _make(self, settings: Mapping[str, Any]) -> Summarizer:
        from compactcli.compact_file import make_summarizer

        if settings.get("summarizer") != "llm":
            return make_summarizer(settings)
        from compactcli.cache import CachedSummarizer, SummaryCache
        from compactcli.summarizers.llm import LLMSummarizer

        made = make_summarizer({**settings, "summarizer": "llm"})
        if isinstance(made, LLMSummarizer) and self.breaker is not None:
            made.breaker = self.breaker
        if self.cache_dir is None:
            return made
        chosen = {"model": settings.get("model"), "api_base": settings.get("api_base")}
        return CachedSummarizer(made, SummaryCache(self.cache_dir), chosen)


_MADE: dict[tuple[Any, ...], Summarizer] = {}
"""The summarizers this worker process made (`Summarizers`)."""


# ---------------------------------------------------------------------------------------------
# sessions from any filesystem


def compact_sessions(
    inputs: str | Sequence[str] | Dataset,
    *,
    output: str | None = None,
    stats: str | None = None,
    stats_format: str = "parquet",
    settings: Mapping[str, Any] | None = None,
    cache_dir: str | None = None,
    address: str | None = None,
) -> Dataset:
    """Compact every session `inputs` name (paths, folders, URIs such as `s3://` or `gs://`
    through pyarrow's filesystems, or a Dataset of `path` and `bytes` rows) in Ray workers, as
    `compactcli compact` does (`settings`: its settings, as `compactcli.in_memory.compact_bytes`
    takes them). Each result is written by the workers under `output` (a folder or URI; None:
    nothing written) at the session's path below the inputs' common folder (atomically on a
    local filesystem, a temporary file renamed; an object store writes an object whole); the
    stats rows (`SessionRow`; a session that fails is a row with its `error`, and the job goes
    on) are written under `stats` (`stats_format` `parquet` or `json`, JSON lines) and returned
    as a materialized Dataset. The LLM summarizer's cache (`cache_dir`, a folder: shared by
    every worker of a machine, and of a cluster when it is on a shared filesystem) and circuit
    breaker (`BREAKER_ACTOR`, `shared_breaker`) work across workers."""
    from compactcli.compact_file import DEFAULTS

    given = dict(settings or {})
    unknown = sorted(set(given) - set(DEFAULTS))
    if unknown:
        raise UsageError(f"unknown compact setting {', '.join(map(repr, unknown))}")
    connect(address)
    summarizers = Summarizers(
        cache_dir, shared_breaker() if given.get("summarizer") == "llm" else None
    )
    job = functools.partial(_compact_session, settings=given, summarizers=summarizers)
    return _run_sessions(inputs, job, output, stats, stats_format)


def estimate_sessions(
    inputs: str | Sequence[str] | Dataset,
    *,
    options: EstimateOptions | None = None,
    stats: str | None = None,
    stats_format: str = "parquet",
    address: str | None = None,
) -> Dataset:
    """`compactcli estimate` of every session `inputs` names, in Ray workers: one `SessionRow`
    per session (`tokens_before` and `tokens_after` both the count, `status` the estimate's),
    written under `stats` when given, and returned as a materialized Dataset."""
    connect(address)
    job = functools.partial(_estimate_session, options=options)
    return _run_sessions(inputs, job, None, stats, stats_format)


def _run_sessions(
    inputs: str | Sequence[str] | Dataset,
    job: Callable[[bytes, str], tuple[SessionRow, bytes | None]],
    output: str | None,
    stats: str | None,
    stats_format: str,
) -> Dataset:
    if stats_format not in ("parquet", "json"):
        raise UsageError(f"stats_format must be parquet or json, not {stats_format!r}")
    import ray.data

    _data()
    output, stats = _absolute(output), _absolute(stats)
    if isinstance(inputs, ray.data.Dataset):
        sessions, root = inputs, None
    else:
        sessions, root = _read(inputs)
    mapped = _mapped(sessions, functools.partial(_session_row, job=job, output=output, root=root))
    rows: Dataset = mapped.materialize()
    if stats is not None:
        if stats_format == "parquet":
            rows.write_parquet(stats)
        else:
            rows.write_json(stats)
    return rows


def _absolute(path: str | None) -> str | None:
    """A local `path` relative to this process's folder, made absolute: the workers resolve paths
    in folders of their own (where their Ray was started). A URI stays as it is."""
    return path if path is None or "://" in path else os.path.abspath(path)


def _read(inputs: str | Sequence[str]) -> tuple[Dataset, str]:
    """The sessions below `inputs` (every `.jsonl` and `.traj` of a folder), and the folder they
    share (paths as Ray reads them: no scheme)."""
    import ray.data

    given = [inputs] if isinstance(inputs, str) else list(inputs)
    if not given:
        raise UsageError("no inputs")
    expanded: list[str] = []
    for item in given:
        if "://" not in item and any(c in item for c in "*?["):
            import glob

            found = sorted(glob.glob(item, recursive=True))
            if not found:
                raise UsageError(f"{item}: no file matches")
            expanded += found
        else:
            expanded.append(item)
    filesystem, bare = _filesystem(expanded)
    sessions = ray.data.read_binary_files(
        bare if len(bare) > 1 else bare[0],
        include_paths=True,
        filesystem=filesystem,
        file_extensions=["jsonl", "traj"],
    )
    return sessions, _common_folder(bare, filesystem)


def _filesystem(paths: Sequence[str]) -> tuple[Any, list[str]]:
    """The pyarrow filesystem of `paths` (all on one) and the paths on it."""
    import pyarrow.fs

    chosen = None
    bare: list[str] = []
    for path in paths:
        if "://" in path:
            filesystem, inner = pyarrow.fs.FileSystem.from_uri(path)
        else:
            filesystem, inner = pyarrow.fs.LocalFileSystem(), os.path.abspath(path)
        if chosen is not None and chosen.type_name != filesystem.type_name:
            raise UsageError("inputs on more than one filesystem: run one job per filesystem")
        chosen = filesystem
        bare.append(inner)
    return chosen, bare


def _common_folder(paths: Sequence[str], filesystem: Any) -> str:
    """The folder `paths` share: a folder given is its own root; a file's root is its folder."""
    import pyarrow.fs

    folders = []
    for path in paths:
        info = filesystem.get_file_info(path)
        is_folder = info.type == pyarrow.fs.FileType.Directory
        folders.append(path.rstrip("/") if is_folder else posixpath.dirname(path))
    return posixpath.commonpath(folders) if len(folders) > 1 else folders[0]


def _session_row(
    row: dict[str, Any],
    job: Callable[[bytes, str], tuple[SessionRow, bytes | None]],
    output: str | None,
    root: str | None,
) -> SessionRow:
    """One session: the job on its bytes, its output written, its stats row. Never raises: a
    session that fails is a `failed` row with its error."""
    from compactcli.errors import CompactError

    path = str(row["path"])
    try:
        done, data = job(bytes(row["bytes"]), path)
        if output is not None and data is not None:
            done["output"] = _write(output, _relative(path, root), data)
    except CompactError as error:
        done = _failed(path, str(error), int(error.exit_code))
    except Exception as error:
        done = _failed(path, f"unexpected {type(error).__name__}: {error}", 1)
    return done


def _failed(path: str, error: str, code: int) -> SessionRow:
    return _row(path, "failed", 0, 0, "", 0, code, error)


def _row(
    path: str,
    status: str,
    before: int,
    after: int,
    method: str,
    llm_calls: int,
    code: int,
    error: str = "",
) -> SessionRow:
    """A stats row; `output` is filled in once the result is written."""
    return SessionRow(
        path=path,
        status=status,
        tokens_before=before,
        tokens_after=after,
        method=method,
        llm_calls=llm_calls,
        code=code,
        output="",
        error=error,
    )


def _relative(path: str, root: str | None) -> str:
    """Where below the output a session's result goes: its path below `root` (the inputs'
    common folder), or below the folder all given rows share."""
    if root is None:
        return path.lstrip("/")
    relative = posixpath.relpath(path, root)
    return posixpath.basename(path) if relative.startswith("..") else relative


def _write(output: str, relative: str, data: bytes) -> str:
    """`data` written to `relative` below the folder or URI `output`: to a temporary file that
    is renamed on a local filesystem (a partial file is never seen), as one object elsewhere."""
    import pyarrow.fs

    if "://" in output:
        filesystem, base = pyarrow.fs.FileSystem.from_uri(output)
    else:
        filesystem, base = pyarrow.fs.LocalFileSystem(), os.path.abspath(output)
    target = posixpath.join(base, relative)
    filesystem.create_dir(posixpath.dirname(target), recursive=True)
    local = filesystem.type_name == "local"
    written = f"{target}.{os.getpid()}.tmp" if local else target
    with filesystem.open_output_stream(written) as stream:
        stream.write(data)
    if local:
        filesystem.move(written, target)
    return target if "://" not in output else f"{output.rstrip('/')}/{relative}"


def _compact_session(
    data: bytes, path: str, settings: Mapping[str, Any], summarizers: Summarizers
) -> tuple[SessionRow, bytes | None]:
    from compactcli.in_memory import compact_bytes

    resolved = {**settings}
    summarizer = summarizers(_resolved(resolved))
    result = compact_bytes(data, name=path, settings=resolved, summarizer=summarizer)
    row = _row(
        path,
        result.status,
        result.tokens_before,
        result.tokens_after,
        result.method,
        result.llm_calls,
        result.code,
    )
    return row, result.data


def _resolved(settings: Mapping[str, Any]) -> dict[str, Any]:
    from compactcli.compact_file import DEFAULTS

    return {**DEFAULTS, **settings}


def _estimate_session(
    data: bytes, path: str, options: EstimateOptions | None
) -> tuple[SessionRow, bytes | None]:
    from compactcli.estimate import failures
    from compactcli.in_memory import estimate_bytes

    report = estimate_bytes(data, options, name=path)
    code = 1 if failures(report) else 0  # over `max_tokens`, as the CI check exits
    return _row(path, report.status, report.tokens, report.tokens, report.method, 0, code), None


def rows(dataset: Dataset) -> Iterable[SessionRow]:
    """The stats rows of a dataset `compact_sessions` or `estimate_sessions` returned."""
    for row in dataset.iter_rows():
        yield SessionRow(**row)  # type: ignore[typeddict-item]
