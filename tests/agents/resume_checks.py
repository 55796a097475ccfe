"""What a good resume looks like, checked the same way for Claude Code and pi.

- `check_answered_once(resumed)`: the agent exited 0 with the model's answer, asked the model
  once (a compaction would be a second request, the summary prompt, before the answer), tried no
  host beyond 127.0.0.1, ended its request with the resume prompt, kept tool pairing, and wrote
  no new compaction record into the session file.
- `check_holds_view(resumed, view)`: the request holds compactcli's context view of the session
  file: its texts and tool calls in order, every tool result, and no tool call that is not in
  it (nothing from before a compaction came back).
- `check_compacted(...)`: for a compacted session, against the resume of its original: the
  summary opens the conversation, the original's last prompt is still there (kept, or quoted in
  the summary), no call the original answered is answered only by the agent's placeholder, and
  the request is smaller.
"""

from __future__ import annotations

import json

from tests.agents.messages_api import (
    Item,
    call_ids,
    conversation,
    items,
    last_user_text,
    pairing_problems,
    request_tokens,
    subsequence_gap,
    texts,
)
from tests.agents.resume import ANSWER, PROMPT, Resumed
from tests.agents.sessions import View


def compaction_records(agent: str, data: bytes) -> int:
    """How many compaction records a session file holds (Claude Code's compact_boundary
    records, pi's compaction entries)."""
    count = 0
    for line in data.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        if agent == "claude":
            count += record.get("type") == "system" and record.get("subtype") == "compact_boundary"
        else:
            count += record.get("type") == "compaction"
    return count


def check_answered_once(resumed: Resumed) -> None:
    """One request, answered, with the prompt last, pairing kept, no compaction, no outside."""
    run = resumed.describe()
    assert resumed.exit_code == 0, run
    assert resumed.stdout.strip() == ANSWER, run
    assert resumed.outside == [], f"tried to leave 127.0.0.1: {resumed.outside}"
    assert len(resumed.bodies) == 1, f"expected one request (no compaction first): {run}"
    body = resumed.first
    assert last_user_text(body) == PROMPT, f"the request does not end with the prompt: {run}"
    assert pairing_problems(body) == []
    before = compaction_records(resumed.agent, resumed.before)
    after = compaction_records(resumed.agent, resumed.after)
    assert after == before, f"the resume wrote {after - before} compaction record(s)"


def check_holds_view(resumed: Resumed, view: View) -> None:
    """The request holds the view in order, and no tool call outside it."""
    found = items(conversation(resumed.first))
    # results in order of the calls they answer: the API puts the results of parallel calls
    # after all of them, a session file puts each after its own call
    ordered = [i for i in view.items if i.kind != "result"]
    gap = subsequence_gap(ordered, [i for i in found if i.kind != "result"])
    assert gap is None, f"the request lacks {gap} of compactcli's view (or has it out of order)"
    results = {i.key for i in found if i.kind == "result"}
    missing = [i.key for i in view.items if i.kind == "result" and i.key not in results]
    assert missing == [], f"the request lacks the results of calls {missing}"
    wanted = {i.key for i in view.items if i.kind == "call"}
    extra = [c for c in call_ids(resumed.first) if c not in wanted]
    assert extra == [], f"the request holds tool calls that are not in the session's view: {extra}"


def check_compacted(compacted: Resumed, view: View, original: Resumed, original_view: View) -> None:
    """The compacted session resumed from its summary, smaller, with its last prompt."""
    body = compacted.first
    messages = conversation(body)
    assert view.summary is not None, "compactcli's view of the output does not start with a summary"
    assert messages and messages[0]["role"] == "user"
    assert Item("user", "text", view.summary) in items(messages[:1]), (
        "the first message of the request is not the summary"
    )
    if original_view.last_prompt is not None:
        # what the person typed, white space squeezed (a cut turn's prompt is quoted)
        assert _squeezed(original_view.last_prompt) in _squeezed(texts(body)), (
            f"the last user prompt is gone: {original_view.last_prompt[:200]!r}"
        )
    placeholders = [
        c for c in call_ids(body) if c in original_view.answered and c not in view.answered
    ]
    assert placeholders == [], f"calls whose result the compaction lost: {placeholders}"
    size, before = request_tokens(body), request_tokens(original.first)
    assert size < before, f"the request is not smaller: {size} tokens, {before} for the original"


def _squeezed(text: str) -> str:
    return " ".join(text.split())
