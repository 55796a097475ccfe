"""Fake model servers on 127.0.0.1 that record every request a real agent sends them.

`RecordingServer` is a threaded HTTP server on a free port of 127.0.0.1. It records every
request (`requests`: method, path, headers and body, the body parsed as JSON when it is JSON) and
answers each one with the `Reply` its subclass's `answer` gives; a request no subclass route
takes gets a 404 in the Anthropic error shape, recorded like the rest, so a test sees what an
agent tried. It takes every method, CONNECT included, so given as an agent's `HTTPS_PROXY` it
records each host the agent tried to reach beyond 127.0.0.1 (and lets none through). Use it as
a context manager (`with AnthropicServer() as server:`); a subclass for another API overrides
`answer` (a `Reply` body may be bytes, such as server-sent events from `sse`).

`AnthropicServer` speaks the Anthropic Messages API as Claude Code and pi call it:
`POST /v1/messages` (streamed as server-sent events when the body asks for `stream`, else one
JSON message), `POST /v1/messages/count_tokens` (Claude Code's `/context` counts with it) and
Claude Code's reachability probe `HEAD /api/hello`. Every answer is the final text `answer_text`
with no tool call, so an agent ends its turn after one request. The usage it reports counts the
request's input as a quarter of its JSON length, so an agent's own bookkeeping sees figures of
the right size, or as `reported_input` tokens when that is given (a context near its window).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


@dataclass(frozen=True)
class Received:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any  # the parsed JSON body, else the raw bytes (b"" when there was none)
    size: int  # the body's length in bytes

    @property
    def route(self) -> str:
        """The path without its query string."""
        return self.path.split("?", 1)[0]


@dataclass(frozen=True)
class Reply:
    """One answer: a status, a body (bytes, or a JSON value) and its headers."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)

    def data(self) -> bytes:
        """The body as sent."""
        if isinstance(self.body, bytes):
            return self.body
        return json.dumps(self.body).encode()


class _QuietServer(ThreadingHTTPServer):
    """A threaded server that does not print a client's dropped connection."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


class RecordingServer:
    """The recording HTTP server; subclasses route requests in `answer`."""

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self._lock = threading.Lock()
        self._httpd = _QuietServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def origin(self) -> str:
        """`http://127.0.0.1:PORT`, with no path."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def answer(self, received: Received) -> Reply | None:
        """The reply to one request, or None for a path this server does not serve (a 404)."""
        return None

    def not_found(self, received: Received) -> Reply:
        """The 404 for a path no route takes."""
        message = f"no route for {received.method} {received.route}"
        return Reply(
            404, {"type": "error", "error": {"type": "not_found_error", "message": message}}
        )

    def received(self, route: str | None = None) -> list[Received]:
        """The requests so far, in arrival order (only those to `route` when given)."""
        with self._lock:
            found = list(self.requests)
        return [r for r in found if route is None or r.route == route]

    def clear(self) -> None:
        """Forget the requests recorded so far."""
        with self._lock:
            self.requests.clear()

    def _record(self, received: Received) -> Reply:
        with self._lock:
            self.requests.append(received)
        return self.answer(received) or self.not_found(received)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length", "0") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body: Any = json.loads(raw) if raw else b""
                except ValueError:
                    body = raw
                received = Received(self.command, self.path, dict(self.headers), body, len(raw))
                reply = server._record(received)
                data = reply.data()
                headers = {"Content-Type": "application/json", **reply.headers}
                try:
                    self.send_response(reply.status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(data)
                except OSError:  # the client went away
                    pass

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = do_CONNECT = _serve

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


def sse(events: list[dict[str, Any]]) -> bytes:
    """Server-sent events, one `event:`/`data:` pair per event (named by its `type`)."""
    return b"".join(
        f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode() for event in events
    )


class AnthropicServer(RecordingServer):
    """The Anthropic Messages API, answering every message request with `answer_text`."""

    MESSAGES = "/v1/messages"
    COUNT_TOKENS = "/v1/messages/count_tokens"
    HELLO = (
        "/api/hello"  # Claude Code's reachability probe (HEAD), part of its non-essential traffic
    )

    def __init__(
        self, answer_text: str = "Resumed: the task is done.", reported_input: int | None = None
    ) -> None:
        super().__init__()
        self.answer_text = answer_text
        self.reported_input = reported_input
        self._count = 0
        self.routes: dict[str, Callable[[Received], Reply]] = {
            self.MESSAGES: self._message,
            self.COUNT_TOKENS: self._count_tokens,
        }

    def answer(self, received: Received) -> Reply | None:
        if received.route == self.HELLO:
            return Reply(200, b"")
        route = self.routes.get(received.route)
        if route is None or received.method != "POST" or not isinstance(received.body, dict):
            return None
        return route(received)

    def messages(self) -> list[dict[str, Any]]:
        """The bodies of the message requests (`POST /v1/messages`), in order."""
        return [r.body for r in self.received(self.MESSAGES) if isinstance(r.body, dict)]

    @staticmethod
    def input_tokens(received: Received) -> int:
        """The input a request holds, as a quarter of its body's length."""
        return max(1, received.size // 4)

    def _count_tokens(self, received: Received) -> Reply:
        return Reply(200, {"input_tokens": self.input_tokens(received)})

    def _message(self, received: Received) -> Reply:
        with self._lock:
            self._count += 1
            number = self._count
        body = received.body
        model = str(body.get("model", "claude-test"))
        reported = self.reported_input
        usage = {
            "input_tokens": self.input_tokens(received) if reported is None else reported,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": max(1, len(self.answer_text) // 4),
        }
        message = {
            "id": f"msg_fake{number:08d}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": self.answer_text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": usage,
        }
        headers = {"request-id": f"req_fake{number:08d}"}
        if not body.get("stream"):
            return Reply(200, message, headers)
        start = {
            **message,
            "content": [],
            "stop_reason": None,
            "usage": {**usage, "output_tokens": 1},
        }
        events: list[dict[str, Any]] = [
            {"type": "message_start", "message": start},
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
            {"type": "ping"},
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": self.answer_text},
            },
            {"type": "content_block_stop", "index": 0},
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": usage["output_tokens"]},
            },
            {"type": "message_stop"},
        ]
        return Reply(
            200,
            sse(events),
            {**headers, "Content-Type": "text/event-stream", "Cache-Control": "no-cache"},
        )
