"""A fake OpenAI Responses API on 127.0.0.1, as the Codex CLI calls it, recording every request.

`ResponsesServer` is a `fake_server.RecordingServer` that serves:

- `POST /v1/responses`: one model turn, streamed as server-sent events when the body asks for
  `stream` (Codex always does): `response.created`, `response.output_item.added`,
  `response.output_text.delta`, `response.output_item.done` (an assistant `message` with one
  `output_text` part holding `answer_text`), `response.completed` (with usage). No tool call, so
  the agent ends its turn after one request.
- `POST /v1/responses/compact`: the older server-side compaction endpoint.
- `GET /v1/models`: an empty model list (Codex then uses the models it ships with).
- `GET /v1/responses` (Codex's WebSocket upgrade): 426, on which Codex falls back to HTTP at
  once instead of retrying.

A compaction request (`is_compaction`: the compact endpoint, or a model request whose input
ends with Codex's `compaction_trigger` item or its local compaction prompt) is answered with one
opaque `compaction` item, which is what Codex expects back, so a run that compacts goes on to
its real request and a test sees both.

The usage it reports counts the request's input as a quarter of its JSON length, or as
`reported_input` tokens when that is given. Anything else gets the base class's 404.
"""

from __future__ import annotations

import json
from typing import Any

from tests.agents.fake_server import Received, RecordingServer, Reply

RESPONSES = "/v1/responses"
COMPACT = "/v1/responses/compact"
MODELS = "/v1/models"


def _sse(events: list[dict[str, Any]]) -> bytes:
    """Server-sent events, one `event:`/`data:` pair per event, numbered as OpenAI does."""
    out = []
    for number, event in enumerate(events):
        event = {**event, "sequence_number": number}
        out.append(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
    return b"".join(out)


LOCAL_COMPACT_PROMPT = "You are performing a CONTEXT CHECKPOINT COMPACTION"
"""How Codex's own compaction prompt (templates/compact/prompt.md) starts."""


def is_compaction(received: Received) -> bool:
    """Whether a request asks for a compaction rather than a model turn."""
    if received.method != "POST" or not isinstance(received.body, dict):
        return False
    if received.route == COMPACT:
        return True
    items = received.body.get("input")
    if received.route != RESPONSES or not isinstance(items, list) or not items:
        return False
    last = items[-1]
    if not isinstance(last, dict):
        return False
    if last.get("type") == "compaction_trigger":
        return True
    content = last.get("content")
    texts = (
        [p.get("text") for p in content if isinstance(p, dict)] if isinstance(content, list) else []
    )
    return any(isinstance(t, str) and t.startswith(LOCAL_COMPACT_PROMPT) for t in texts)


class ResponsesServer(RecordingServer):
    """The Responses API, answering every model request with `answer_text`."""

    def __init__(
        self, answer_text: str = "Resumed: the task is done.", reported_input: int | None = None
    ) -> None:
        super().__init__()
        self.answer_text = answer_text
        self.reported_input = reported_input
        self._count = 0

    def answer(self, received: Received) -> Reply | None:
        if received.method == "GET" and received.route == MODELS:
            return Reply(200, {"object": "list", "data": [], "models": []})
        if received.method == "GET" and received.route == RESPONSES:
            error = {"message": "no WebSocket here", "type": "invalid_request_error"}
            return Reply(426, {"error": error})
        if received.method != "POST" or not isinstance(received.body, dict):
            return None
        if received.route == COMPACT:
            return Reply(200, {"output": [self._compaction_item()]})
        if received.route == RESPONSES:
            if is_compaction(received):
                return self._response(received, self._compaction_item())
            return self._response(received, self._message())
        return None

    def _number(self) -> int:
        with self._lock:
            self._count += 1
            return self._count

    def _usage(self, received: Received) -> dict[str, Any]:
        input_tokens = (
            max(1, received.size // 4) if self.reported_input is None else self.reported_input
        )
        output_tokens = max(1, len(self.answer_text) // 4)
        return {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input_tokens + output_tokens,
        }

    def _message(self) -> dict[str, Any]:
        part = {"type": "output_text", "text": self.answer_text, "annotations": []}
        return {
            "type": "message",
            "id": f"msg_fake{self._number():08d}",
            "status": "completed",
            "role": "assistant",
            "content": [part],
        }

    def _compaction_item(self) -> dict[str, Any]:
        return {
            "type": "compaction",
            "id": f"cmp_fake{self._number():08d}",
            "encrypted_content": "ZmFrZSBjb21wYWN0aW9u",
        }

    def _response(self, received: Received, item: dict[str, Any]) -> Reply:
        number = self._number()
        model = str(received.body.get("model", "gpt-test"))
        response = {
            "id": f"resp_fake{number:08d}",
            "object": "response",
            "created_at": 1_700_000_000 + number,
            "status": "completed",
            "model": model,
            "output": [item],
            "usage": self._usage(received),
        }
        if not received.body.get("stream"):
            return Reply(200, response)
        started = {**response, "status": "in_progress", "output": [], "usage": None}
        events: list[dict[str, Any]] = [
            {"type": "response.created", "response": started},
            {"type": "response.in_progress", "response": started},
            {"type": "response.output_item.added", "output_index": 0, "item": item},
        ]
        if item["type"] == "message":
            events.append(
                {
                    "type": "response.output_text.delta",
                    "item_id": item["id"],
                    "output_index": 0,
                    "content_index": 0,
                    "delta": self.answer_text,
                }
            )
        events += [
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": response},
        ]
        return Reply(
            200,
            _sse(events),
            {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"},
        )
