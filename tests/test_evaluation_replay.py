"""Record and replay of LLM summary requests: keys, hits, misses, recording through a server."""

from __future__ import annotations

import json
import re
import shutil
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import orjson
import pytest

from compactcli.evaluation.replay import Cassettes, replay_server, request_key
from tests.cli_runner import run
from tests.conftest import EVAL_FIXTURES
from tests.llm_server import completion, ok, serve

BODY = {
    "model": "compactcli-scripted",
    "messages": [{"role": "system", "content": "rules"}, {"role": "user", "content": "turns"}],
    "max_tokens": 1200,
}


def _post(url: str, body: dict[str, Any], key: str | None = None) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(
        url + "/chat/completions", data=json.dumps(body).encode(), headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_the_key_covers_model_messages_and_parameters_but_not_volatile_ones() -> None:
    key = request_key(BODY)
    assert re.fullmatch(r"[0-9a-f]{64}", key)
    assert request_key({**BODY, "stream": False, "timeout": 30}) == key
    assert request_key({**BODY, "max_tokens": 1300}) != key
    assert request_key({**BODY, "model": "other"}) != key
    assert request_key({**BODY, "messages": BODY["messages"][:1]}) != key


def test_a_recorded_request_is_answered_and_a_missing_one_is_refused(tmp_path: Path) -> None:
    cassettes = Cassettes(str(tmp_path))
    cassettes.put(request_key(BODY), BODY, completion("## Goal\n- fix it"))
    with replay_server(Cassettes(str(tmp_path))) as server:
        status, answer = _post(server.url, BODY)
        assert (status, answer["choices"][0]["message"]["content"]) == (200, "## Goal\n- fix it")
        other = {**BODY, "max_tokens": 99}
        status, answer = _post(server.url, other)
        assert status == 400
        assert answer["error"]["message"] == f"no recording for request {request_key(other)}"
        assert (server.hits, server.take_misses(), server.misses) == (1, [request_key(other)], [])


def test_recording_forwards_to_the_upstream_and_stores_the_answer(tmp_path: Path) -> None:
    cassettes = Cassettes(str(tmp_path), file="fixture-a")
    with (
        serve(ok("## Goal\n- recorded")) as upstream,
        replay_server(cassettes, upstream.url) as server,
    ):
        status, answer = _post(server.url, BODY, key="sk-test")
        assert status == 200 and answer["choices"][0]["message"]["content"] == "## Goal\n- recorded"
        assert upstream.requests[0].body == BODY
        assert upstream.requests[0].headers["Authorization"] == "Bearer sk-test"
        _post(server.url, BODY)  # the second time it is replayed, not forwarded
        assert len(upstream.requests) == 1
    lines = (tmp_path / "fixture-a.jsonl").read_bytes().splitlines()
    assert len(lines) == 1
    entry = orjson.loads(lines[0])
    assert entry["key"] == request_key(BODY)
    assert entry["messages"]["count"] == 2 and entry["params"] == {"max_tokens": 1200}
    assert Cassettes(str(tmp_path)).get(request_key(BODY)) == answer


@pytest.mark.llm
def test_an_llm_run_without_its_recordings_fails(tmp_path: Path) -> None:
    folder = tmp_path / "fixtures"
    folder.mkdir()
    for name in ("openai-20k-s3.jsonl", "openai-20k-s3.probes.jsonl"):
        shutil.copy(EVAL_FIXTURES / name, folder / name)
    result = run(
        "eval",
        "--fixtures",
        str(folder),
        "--strategies",
        "llm-replay",
        "--budgets",
        "0.1",
        "--rounds",
        "1",
        "--recordings",
        str(tmp_path / "none"),
    )
    assert result.exit_code == 4
    assert result.stdout == ""
    assert re.fullmatch(
        r"error: no recording for \d+ LLM request\(s\) of openai-20k-s3 at 10%, round 1 "
        r"\(first key [0-9a-f]{64}\); record them with `compactcli eval --record --upstream "
        r"URL` and review the new recordings\n",
        result.stderr,
    )


def test_record_needs_an_upstream() -> None:
    result = run("eval", "--record")
    assert (result.exit_code, result.stderr) == (
        2,
        "error: --record needs --upstream URL (the server that answers)\n",
    )


@pytest.mark.parametrize(
    "name", sorted(p.name for p in (EVAL_FIXTURES / "recordings").glob("*.jsonl"))
)
def test_committed_recordings_are_well_formed(name: str) -> None:
    for line in (EVAL_FIXTURES / "recordings" / name).read_bytes().splitlines():
        entry = orjson.loads(line)
        assert set(entry) == {"key", "model", "messages", "params", "response"}
        assert entry["model"] == "compactcli-scripted"
        assert entry["response"]["choices"][0]["message"]["content"].startswith("## Goal\n")
