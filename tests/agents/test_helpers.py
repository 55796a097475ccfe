"""The real-agent suite's own helpers: the fake server and the request checks find what they
must (without an agent, so a helper that could never fail would show here)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tests.agents.fake_server import AnthropicServer, RecordingServer
from tests.agents.messages_api import (
    Item,
    items,
    last_user_text,
    pairing_problems,
    request_tokens,
    subsequence_gap,
)


def _post(url: str, body: dict[str, Any]) -> tuple[int, str, bytes]:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        return answer.status, answer.headers["Content-Type"], answer.read()


def test_the_fake_server_streams_the_answer_and_records_the_request() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    with AnthropicServer("All done.") as server:
        status, kind, data = _post(server.origin + "/v1/messages?beta=true", body)
        counted = _post(server.origin + "/v1/messages/count_tokens", body)
    assert (status, kind) == (200, "text/event-stream")
    events = [
        json.loads(line[6:]) for line in data.decode().splitlines() if line.startswith("data: ")
    ]
    assert events[0]["type"] == "message_start"
    assert events[-1]["type"] == "message_stop"
    deltas = [e["delta"]["text"] for e in events if e["type"] == "content_block_delta"]
    assert "".join(deltas) == "All done."
    assert json.loads(counted[2]) == {"input_tokens": len(json.dumps(body)) // 4}
    assert server.messages() == [body]
    assert [r.route for r in server.received()] == ["/v1/messages", "/v1/messages/count_tokens"]


def test_an_unknown_route_is_recorded_and_refused() -> None:
    with RecordingServer() as server:
        try:
            _post(server.origin + "/elsewhere", {})
        except urllib.error.HTTPError as error:
            assert error.code == 404
        else:
            raise AssertionError("no 404")
    assert [(r.method, r.route) for r in server.received()] == [("POST", "/elsewhere")]


def _call(i: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": i, "name": "Bash", "input": {}}


def _result(i: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": i, "content": "ok"}


def test_pairing_problems_name_each_broken_pair() -> None:
    good = {
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [_call("a"), _call("b")]},
            {
                "role": "user",
                "content": [_result("a"), _result("b"), {"type": "text", "text": "x"}],
            },
            {"role": "system", "content": "per-turn context"},
        ]
    }
    assert pairing_problems(good) == []
    unanswered = {"messages": [*good["messages"][:2], {"role": "user", "content": [_result("a")]}]}
    assert pairing_problems(unanswered) == [
        "message 1: tool_use b has no tool_result in the next message"
    ]
    orphan = {"messages": [{"role": "user", "content": [_result("z")]}]}
    assert pairing_problems(orphan) == [
        "message 0: tool_result z answers no tool_use of the message before"
    ]
    late = {
        "messages": [
            good["messages"][1],
            {
                "role": "user",
                "content": [_result("a"), {"type": "text", "text": "x"}, _result("b")],
            },
        ]
    }
    assert pairing_problems(late) == ["message 1: a tool_result comes after other content"]
    assert last_user_text(good) == "x"  # Claude Code's system messages are not conversation
    assert last_user_text({"messages": good["messages"][:2]}) is None  # the assistant's turn


@given(st.lists(st.sampled_from(["a", "b", "c"]), max_size=8), st.data())
def test_subsequence_gap_finds_the_first_missing_item(keys: list[str], data: st.DataObject) -> None:
    found = [Item("user", "text", k) for k in keys]
    kept = data.draw(st.lists(st.booleans(), min_size=len(found), max_size=len(found)))
    wanted = [item for item, keep in zip(found, kept, strict=True) if keep]
    assert subsequence_gap(wanted, found) is None
    assert subsequence_gap([*wanted, Item("user", "text", "d")], found) == Item("user", "text", "d")
    backwards = list(reversed(found))
    if backwards != found:  # as long as `found`: a subsequence only when equal
        assert subsequence_gap(backwards, found) is not None


def test_items_and_tokens_follow_the_content() -> None:
    short = {"messages": [{"role": "user", "content": "  hi  "}]}
    long = {"messages": [{"role": "user", "content": "hi " * 400}]}
    assert items(short["messages"]) == [Item("user", "text", "hi")]
    assert 0 < request_tokens(short) < request_tokens(long)
