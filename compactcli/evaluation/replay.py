"""Record and replay of LLM summary requests, so the LLM path can be scored offline and in CI.

`ReplayServer` is an OpenAI-compatible server on 127.0.0.1 that the LLM summarizer
(`compactcli.summarizers.llm`, through litellm) can be pointed at: it keys each request by the
sha256 of its canonical JSON (`request_key`) and answers with the response recorded under that
key in a `Cassettes` store. In replay mode (the default; what CI runs) a request with no
recording fails and is remembered, so a missing recording always fails the evaluation
(`ReplayMiss`); in record mode it is forwarded to a real server and its answer stored. Record
mode is the only path that reaches beyond 127.0.0.1, and only when asked for.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson

PROMPT_VERSION = "1"
"""Part of every request key. The prompt's own text is inside the request's system message, so a
change of prompt changes every key; this is bumped when the request shape changes in a way the
messages do not show."""
REPLAY_MODEL = "openai/compactcli-scripted"
"""The model name the committed recordings were made under (see fixtures/eval/README.md)."""

_VOLATILE = frozenset({"stream", "user", "timeout", "request_timeout", "api_key"})


class ReplayMiss(RuntimeError):
    """A summary request with no recording (replay mode)."""


def request_key(body: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of a chat request: model, messages, other parameters
    (volatile ones such as `stream` left out) and the prompt version."""
    params = {k: v for k, v in sorted(body.items()) if k not in ("model", "messages")}
    params = {k: v for k, v in params.items() if k not in _VOLATILE}
    canonical = {
        "model": body.get("model"),
        "messages": body.get("messages"),
        "params": params,
        "prompt_version": PROMPT_VERSION,
    }
    data = json.dumps(canonical, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(data.encode()).hexdigest()


def _messages_digest(body: dict[str, Any]) -> dict[str, Any]:
    messages = body.get("messages") or []
    data = json.dumps(messages, sort_keys=True, ensure_ascii=False).encode()
    return {"count": len(messages), "chars": len(data), "sha256": hashlib.sha256(data).hexdigest()}


@dataclass(slots=True)
class Cassettes:
    """Recorded responses by request key, read from (and appended to) a folder.

    Every `*.jsonl` file in `folder` is read: one recording per line,
    `{"key", "model", "messages", "params", "response"}`, where `messages` is the sha256 and size
    of the request's messages (kept small; the key covers them exactly) and `response` the
    server's JSON answer. New recordings are appended to `folder/<file>.jsonl`, in the order they
    were made.
    """

    folder: str
    responses: dict[str, dict[str, Any]] = field(default_factory=dict)
    file: str = "recordings"  # where new recordings go: folder/<file>.jsonl
    recorded: int = 0

    def __post_init__(self) -> None:
        if not os.path.isdir(self.folder):
            return
        for name in sorted(os.listdir(self.folder)):
            if not name.endswith(".jsonl"):
                continue
            with open(os.path.join(self.folder, name), "rb") as handle:
                for line in handle:
                    if line.strip():
                        entry = orjson.loads(line)
                        self.responses[entry["key"]] = entry["response"]

    def get(self, key: str) -> dict[str, Any] | None:
        return self.responses.get(key)

    def put(self, key: str, body: dict[str, Any], response: dict[str, Any]) -> None:
        """Store `response` for the request `body` (appended to folder/<file>.jsonl)."""
        os.makedirs(self.folder, exist_ok=True)
        entry = {
            "key": key,
            "model": body.get("model"),
            "messages": _messages_digest(body),
            "params": {k: v for k, v in sorted(body.items()) if k not in ("model", "messages")},
            "response": response,
        }
        with open(os.path.join(self.folder, f"{self.file}.jsonl"), "ab") as handle:
            handle.write(orjson.dumps(entry) + b"\n")
        self.responses[key] = response
        self.recorded += 1


@dataclass(slots=True)
class _State:
    cassettes: Cassettes
    upstream: str | None
    misses: list[str] = field(default_factory=list)
    hits: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def _handler(state: _State) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw)
            except ValueError:
                self._send(400, {"error": {"message": "invalid JSON"}})
                return
            key = request_key(body)
            with state.lock:
                response = state.cassettes.get(key)
            if response is None and state.upstream:
                try:
                    response = _forward(state.upstream, raw, self.headers.get("Authorization"))
                except _UpstreamError as error:
                    self._send(error.status, error.body)
                    return
                with state.lock:
                    state.cassettes.put(key, body, response)
            if response is None:
                with state.lock:
                    state.misses.append(key)
                self._send(
                    400,
                    {
                        "error": {
                            "message": f"no recording for request {key}",
                            "type": "invalid_request_error",
                        }
                    },
                )
                return
            with state.lock:
                state.hits += 1
            self._send(200, response)

        def _send(self, status: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


class _UpstreamError(Exception):
    def __init__(self, status: int, body: Any) -> None:
        super().__init__(status)
        self.status = status
        self.body = body


def _forward(upstream: str, raw: bytes, authorization: str | None) -> dict[str, Any]:
    """Send a chat request to the real server; its JSON answer, or `_UpstreamError`."""
    headers = {"Content-Type": "application/json"}
    if authorization:
        headers["Authorization"] = authorization
    url = upstream.rstrip("/") + "/chat/completions"
    request = urllib.request.Request(url, data=raw, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=600) as answer:
            data: dict[str, Any] = json.loads(answer.read())
            return data
    except urllib.error.HTTPError as error:
        try:
            body = json.loads(error.read())
        except ValueError:
            body = {"error": {"message": str(error)}}
        raise _UpstreamError(error.code, body) from None
    except (urllib.error.URLError, OSError) as error:
        raise _UpstreamError(
            502, {"error": {"message": f"upstream unreachable: {error}"}}
        ) from None


class ReplayServer:
    """An OpenAI-compatible server on 127.0.0.1 answering from `Cassettes`.

    - Replay (no `upstream`): a request with no recording is answered with HTTP 400 and
      remembered in `misses`; the evaluation turns any miss into a `ReplayMiss` error, so the
      summarizer's fallback to its extractive summary is never mistaken for an LLM answer.
    - Record (`upstream=URL`): a request with no recording is forwarded to the real server at
      `URL` (its `/chat/completions`, with the caller's `Authorization` header), and the answer
      is stored before it is returned.
    """

    def __init__(self, cassettes: Cassettes, upstream: str | None = None) -> None:
        self.state = _State(cassettes, upstream)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self.state))
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    @property
    def misses(self) -> list[str]:
        with self.state.lock:
            return list(self.state.misses)

    @property
    def hits(self) -> int:
        with self.state.lock:
            return self.state.hits

    def take_misses(self) -> list[str]:
        """The misses since the last call, cleared."""
        with self.state.lock:
            misses = list(self.state.misses)
            self.state.misses.clear()
            return misses

    def start(self) -> ReplayServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


@contextmanager
def replay_server(cassettes: Cassettes, upstream: str | None = None) -> Iterator[ReplayServer]:
    """A running `ReplayServer`, stopped on exit."""
    server = ReplayServer(cassettes, upstream).start()
    try:
        yield server
    finally:
        server.stop()
