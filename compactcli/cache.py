"""The summary cache: a re-run pays no summarizer call twice.

`CachedSummarizer(inner, cache, settings)` is a `Summarizer` that looks each request up in a
`SummaryCache` before asking `inner`, keyed by everything that changes the answer
(`request_key`). A hit returns the stored `SummaryResult` as it was first made, so a cached run
writes the same bytes as the run that filled the cache; the summarize stage never knows a cache
is there, and a cache that cannot be read or written never fails the run. `default_cache_dir` is
where the command line keeps it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import tempfile
import threading
from collections.abc import Mapping
from typing import Any

import orjson

from compactcli.summarizers import Summarizer, SummaryRequest, SummaryResult
from compactcli.summarizers.facts import Facts
from compactcli.transcript import Message

__all__ = ["CACHE_VERSION", "CachedSummarizer", "SummaryCache", "default_cache_dir", "request_key"]

CACHE_VERSION = 1
"""Bumped when the key or the stored shape changes, so old entries are never misread."""


def default_cache_dir(environ: Mapping[str, str]) -> str:
    """The cache folder for this user: `COMPACTCLI_CACHE_DIR`, else `$XDG_CACHE_HOME/compactcli`,
    else `~/.cache/compactcli`.
    """
    explicit = environ.get("COMPACTCLI_CACHE_DIR")
    if explicit:
        return explicit
    xdg = environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return os.path.join(xdg, "compactcli")
    return os.path.join(os.path.expanduser("~"), ".cache", "compactcli")


def _plain(value: Any) -> Any:
    """`value` as plain JSON data, for hashing."""
    if isinstance(value, Message):
        return {
            "role": value.role,
            "summary": value.summary,
            "blocks": [
                {
                    "kind": b.kind,
                    "type": b.type,
                    "text": b.text,
                    "json": b.json,
                    "call_id": b.call_id,
                    "name": b.name,
                    "arguments": b.arguments,
                    "is_error": b.is_error,
                    "images": len(b.images),
                }
                for b in value.blocks
            ],
        }
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        items = [_plain(v) for v in value]
        return sorted(items, key=repr) if isinstance(value, set | frozenset) else items
    if value is None or isinstance(value, str | int | float | bool):
        return value
    method = getattr(value, "method", None)  # a token counter: its method is what matters
    if isinstance(method, str):
        return {"counter": method}
    return repr(value)


def request_key(request: SummaryRequest, summarizer: str, settings: Mapping[str, Any]) -> str:
    """The sha256 naming the answer to `request` from `summarizer` with `settings`: every field of
    the `SummaryRequest` (the messages' roles and blocks, the earlier summary and its facts, the
    focus, the budget, the counting method, redaction) together with the summarizer's name and
    its `settings` (model, API base, anything else that changes the answer).
    """
    fields = {f.name: _plain(getattr(request, f.name)) for f in dataclasses.fields(request)}
    data = {
        "version": CACHE_VERSION,
        "summarizer": summarizer,
        "settings": _plain(dict(settings)),
        "request": fields,
    }
    blob = orjson.dumps(data, option=orjson.OPT_SORT_KEYS, default=repr)
    return hashlib.sha256(blob).hexdigest()


class SummaryCache:
    """Summary results stored as JSON files under `folder`, by key:
    `FOLDER/summaries/<xx>/<sha256>.json` (`xx` the key's first two hex digits), written
    atomically.
    """

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def path(self, key: str) -> str:
        return os.path.join(self.folder, "summaries", key[:2], f"{key}.json")

    def get(self, key: str) -> SummaryResult | None:
        """The stored result for `key`, or None (missing or unreadable)."""
        try:
            with open(self.path(key), "rb") as handle:
                data = orjson.loads(handle.read())
            if not isinstance(data, dict) or data.get("version") != CACHE_VERSION:
                return None
            return _result(data["result"])
        except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            return None

    def put(self, key: str, result: SummaryResult) -> None:
        """Store `result` under `key`, atomically. Raises OSError when it cannot."""
        path = self.path(key)
        folder = os.path.dirname(path)
        os.makedirs(folder, exist_ok=True)
        data = {"version": CACHE_VERSION, "result": _stored(result)}
        fd, tmp = tempfile.mkstemp(prefix=f".{key[:12]}.", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(orjson.dumps(data, default=repr))
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def _stored(result: SummaryResult) -> dict[str, Any]:
    data = {f.name: getattr(result, f.name) for f in dataclasses.fields(result)}
    data["facts"] = result.facts.to_dict()
    data["warnings"] = list(result.warnings)
    data["details"] = dict(result.details)
    return data


def _result(data: dict[str, Any]) -> SummaryResult:
    values = dict(data)
    values["facts"] = Facts.from_dict(values.get("facts") or {})
    values["warnings"] = tuple(values.get("warnings") or ())
    return SummaryResult(**values)


class CachedSummarizer:
    """A `Summarizer` that answers from a `SummaryCache` when it can (thread-safe counters).

    `hits` and `misses` count what happened. A result that fell back to another summarizer
    (`fallback` set) is not stored, so a later run asks the real backend again. An entry that
    cannot be read is a miss, and a cache that cannot be written is reported in `warnings`
    without failing the run.
    """

    def __init__(
        self, inner: Summarizer, cache: SummaryCache, settings: Mapping[str, Any] | None = None
    ) -> None:
        self.inner = inner
        self.cache = cache
        self.settings = dict(settings or {})
        self.hits = 0
        self.misses = 0
        self.warnings: list[str] = []
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.inner.name

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        key = request_key(request, self.inner.name, self.settings)
        found = self.cache.get(key)
        if found is not None:
            with self._lock:
                self.hits += 1
            return found
        result = self.inner.summarize(request)
        with self._lock:
            self.misses += 1
        if result.fallback is None and result.summarizer == self.inner.name:
            try:
                self.cache.put(key, result)
            except OSError as error:
                with self._lock:
                    message = (
                        f"summary cache {self.cache.folder}: cannot write: "
                        f"{error.strerror or error}"
                    )
                    if message not in self.warnings:
                        self.warnings.append(message)
        return result
