"""Cut points: the head kept, the middle summarized, the tail kept (compactcli.stages.cuts)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compactcli.stages.cuts import SOFT_CEILING, Cut, NoCut, _choose, find_cut, is_prompt
from compactcli.transcript import Block, Message, Role


def text(value: str = "x") -> Block:
    return Block("text", value)


def call(call_id: str) -> Block:
    return Block("tool_call", "{}", call_id=call_id, name="Read")


def result(call_id: str) -> Block:
    return Block("tool_result", "out", call_id=call_id)


def msg(role: Role, *blocks: Block, unit: str | None = None, summary: bool = False) -> Message:
    return Message(index=0, role=role, blocks=blocks or (text(),), unit=unit, summary=summary)


def cut(messages: Sequence[Message], tokens: Sequence[int], **options: object) -> Cut | NoCut:
    return find_cut(messages, tokens, **options)  # type: ignore[arg-type]


def conversation() -> list[Message]:
    """Three turns; the middle one has a call and its result."""
    return [
        msg("user", text("first prompt")),  # 0
        msg("assistant", text("first answer")),  # 1
        msg("user", text("second prompt")),  # 2
        msg("assistant", call("c1")),  # 3
        msg("tool", result("c1")),  # 4
        msg("assistant", text("second answer")),  # 5
        msg("user", text("third prompt")),  # 6
        msg("assistant", text("third answer")),  # 7
    ]


def test_the_tail_takes_the_newest_messages_that_fit_the_budget() -> None:
    assert cut(conversation(), [10] * 8, keep_recent_tokens=30) == Cut(0, 5, 30)


def test_the_tail_keeps_the_last_prompt_and_three_messages_whatever_they_cost() -> None:
    # budget 0: still the last prompt (6) and 3 messages (5..7)
    assert cut(conversation(), [10] * 8, keep_recent_tokens=0) == Cut(0, 5, 30)
    tokens = [10, 10, 10, 10, 10, 10, 500, 500]
    assert cut(conversation(), tokens, keep_recent_tokens=100) == Cut(0, 5, 1010)


def test_a_cut_never_separates_a_call_from_its_result_nor_starts_on_a_result() -> None:
    # budget 25 would start at 5 (20 tokens) or on the result at 4 (30): 4 is never a start
    assert cut(conversation(), [10] * 8, keep_recent_tokens=25) == Cut(0, 5, 30)


def test_a_unit_crossing_the_budget_is_kept_whole_under_the_soft_ceiling() -> None:
    # tail from 5 costs 30; the unit 3..4 costs 20 more: 50 <= 1.5 * 40, so it is kept
    assert cut(conversation(), [10] * 8, keep_recent_tokens=40) == Cut(0, 3, 50)
    # budget 33: 50 > 1.5 * 33, the unit is left out
    assert cut(conversation(), [10] * 8, keep_recent_tokens=33) == Cut(0, 5, 30)


def test_one_streamed_response_is_one_unit() -> None:
    messages = [
        msg("user", text("prompt")),
        msg("assistant", text("a"), unit="m1"),
        msg("assistant", text("b"), unit="m1"),
        msg("assistant", text("c"), unit="m1"),
        msg("user", text("last prompt")),
        msg("assistant", text("done")),
        msg("assistant", text("really done")),
    ]
    # the 3 records of m1 cost 300 together; the tail may not start at 2 or 3, inside m1
    tokens = [10, 100, 100, 100, 10, 10, 10]
    assert cut(messages, tokens, keep_recent_tokens=150) == Cut(0, 4, 30)
    assert cut(messages, tokens, keep_recent_tokens=300) == Cut(0, 1, 330)


def test_the_head_holds_standing_context_and_protected_messages_widened_to_a_unit() -> None:
    messages = [msg("system"), *conversation(), msg("user", text("p4")), msg("assistant")]
    tokens = [10] * 11
    assert cut(messages, tokens, keep_recent_tokens=0, initial=1) == Cut(1, 8, 30)
    # protecting 4 messages would end between the call (4) and its result (5): the head
    # takes the whole unit
    assert cut(messages, tokens, keep_recent_tokens=0, initial=1, protect_first=4) == Cut(6, 8, 30)


def test_an_earlier_summary_ends_the_head_and_is_never_kept_in_the_tail() -> None:
    messages = [
        msg("developer"),
        msg("user", text("summary of older turns"), summary=True),
        *conversation(),
    ]
    tokens = [10] * 10
    # protect-first would reach past the summary: the head stops before it
    assert cut(messages, tokens, keep_recent_tokens=0, initial=1, protect_first=4) == Cut(1, 7, 30)
    # a budget that would take everything still stops after the summary
    assert cut(messages, tokens, keep_recent_tokens=10_000, initial=1) == NoCut(
        "nothing to summarize but the earlier summary: the rest is kept"
    )


def test_nothing_to_summarize_says_why() -> None:
    assert cut([], [], keep_recent_tokens=10) == NoCut("the context is empty")
    assert cut([msg("user")], [10], keep_recent_tokens=0) == NoCut(
        "the conversation (1 message) is not longer than what must be kept"
    )
    short = conversation()[:3]
    assert cut(short, [10] * 3, keep_recent_tokens=0) == NoCut(
        "the conversation (3 messages) is not longer than what must be kept"
    )
    one_prompt = [msg("user", text("do it all")), *conversation()[3:6]]
    assert cut(one_prompt, [10] * 4, keep_recent_tokens=30) == NoCut(
        "nothing to summarize before the last user prompt (message 1 of 4), "
        "which is kept with everything after it",
        turn_only=True,
    )
    assert cut(one_prompt, [10] * 4, keep_recent_tokens=0) == NoCut(
        "nothing to summarize but the last user prompt (message 1 of 4): what follows it is kept"
    )
    assert cut(conversation(), [10] * 8, keep_recent_tokens=1000) == NoCut(
        "nothing to summarize: the whole conversation fits in the kept tail"
    )


def test_a_protected_head_may_hold_the_last_prompt() -> None:
    messages = [msg("user", text("do it all")), *conversation()[1:2], *conversation()[3:6]]
    messages += [msg("assistant", text("more")), msg("assistant", text("still more"))]
    tokens = [10] * len(messages)
    # the whole turn (70 tokens) fits under 1.5 times the budget: the prompt stays in the tail
    assert cut(messages, tokens, keep_recent_tokens=50) == NoCut(
        "nothing to summarize before the last user prompt (message 1 of 7), "
        "which is kept with everything after it",
        turn_only=True,
    )
    assert cut(messages, tokens, keep_recent_tokens=0, protect_first=1) == Cut(1, 4, 30)


def test_a_turn_larger_than_the_soft_ceiling_is_cut_and_its_prompt_pinned() -> None:
    messages = [msg("user", text("do it all")), *conversation()[1:2], *conversation()[3:6]]
    messages += [msg("assistant", text("more")), msg("assistant", text("still more"))]
    tokens = [10] * len(messages)
    # 70 tokens from the prompt on, over 1.5 * 40: the cut falls inside the turn (keeping the
    # call at 2 with its result, 50 tokens, under the ceiling) and the prompt is pinned
    assert cut(messages, tokens, keep_recent_tokens=40) == Cut(0, 2, 50, pinned=0)
    assert cut(messages, tokens, keep_recent_tokens=20) == Cut(0, 4, 30, pinned=0)
    # the protected head holds the prompt: nothing to pin
    assert cut(messages, tokens, keep_recent_tokens=20, protect_first=1) == Cut(1, 4, 30)
    # a later prompt whose turn fits under the ceiling is kept in the tail as before
    later = [*messages, msg("user", text("and then?")), msg("assistant", text("then this"))]
    tokens = [10] * len(later)
    assert cut(later, tokens, keep_recent_tokens=20) == Cut(0, 6, 30)


SKILL_BODY = (
    "Base directory for this skill: /home/dev/.claude/skills/notes\n\n# Notes\n\nWrite them."
)
COMMAND = "<command-message>notes</command-message>\n<command-name>/notes</command-name>"
SELECTION = "<ide_selection>The user selected the lines 1 to 9 of a.py</ide_selection>"


@pytest.mark.parametrize(
    ("blocks", "expected"),
    [
        ((text("fix the parser"),), True),
        ((text(COMMAND),), True),  # a slash command is typed
        ((text(SELECTION), text("and this?")), True),
        ((text(f"{SELECTION}\nwhy does this fail?"),), True),
        ((text(SKILL_BODY),), False),  # a skill's body, injected after its command
        ((text("<skill>\n<name>ship</name>\n<path>/s/ship</path>\n</skill>\nShip it."),), False),
        ((text(SELECTION),), False),
        ((text("<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>"),), False),
        ((text("<bash-input>ls</bash-input>"),), False),  # a shell command the user ran
        ((text("<bash-stdout>a.py</bash-stdout><bash-stderr></bash-stderr>"),), False),
        ((Block("text", "Ran `ls`\n\na.py", type="bashExecution"),), False),  # pi's `!`
        ((text("[Image #1] make it blue"), Block("image", "")), True),  # a pasted image
        ((text("[Image #1]"), Block("image", "")), False),
        ((text("[Image: source: /home/dev/.claude/image-cache/s/1.png]"),), False),
        ((result("c1"), text("and then?")), True),
        ((result("c1"),), False),
    ],
)
def test_a_prompt_is_text_the_person_typed(blocks: tuple[Block, ...], expected: bool) -> None:
    assert is_prompt(msg("user", *blocks)) is expected
    assert is_prompt(msg("assistant", *blocks)) is False


def one_turn(*before: Message) -> list[Message]:
    """`before`, then one prompt and seven messages of work on it (a call and its result)."""
    work = [msg("assistant", text("more")), msg("assistant", call("c9")), msg("tool", result("c9"))]
    return [*before, msg("user", text("do it all")), *conversation()[3:6], *work, msg("assistant")]


@pytest.mark.parametrize(
    "before",
    [
        (),
        (msg("system", text("standing context")),),  # the format's initial messages
        (msg("user", text("summary of older turns"), summary=True),),  # after a compaction
    ],
    ids=["alone", "after-standing-context", "after-an-earlier-summary"],
)
def test_when_only_the_current_turn_could_be_summarized_the_no_cut_says_so(
    before: tuple[Message, ...],
) -> None:
    messages = one_turn(*before)
    tokens = [10] * len(messages)
    initial = sum(1 for m in before if m.role == "system")
    found = cut(messages, tokens, keep_recent_tokens=20, initial=initial, pin=False)
    assert isinstance(found, NoCut) and found.turn_only
    assert found.reason.startswith("nothing to summarize before the last user prompt")
    # cutting the turn summarizes it, an earlier summary with it, and pins the prompt
    pinned = cut(messages, tokens, keep_recent_tokens=20, initial=initial, pin=True)
    assert pinned == Cut(initial, len(messages) - 3, 30, pinned=len(before))


def test_a_turn_with_earlier_turns_before_it_is_not_turn_only() -> None:
    messages = [*conversation()[:2], *one_turn()]
    tokens = [10] * len(messages)
    # the earlier turn is summarized, the prompt kept with its whole turn
    assert cut(messages, tokens, keep_recent_tokens=20, pin=False) == Cut(0, 2, 80)
    # nothing worth summarizing for other reasons is not turn_only either
    assert cut(conversation(), [10] * 8, keep_recent_tokens=1000) == NoCut(
        "nothing to summarize: the whole conversation fits in the kept tail"
    )


def test_the_current_turn_starts_at_the_typed_command_not_at_the_skill_body_after_it() -> None:
    messages = [*conversation()[:2], msg("user", text(COMMAND)), msg("user", text(SKILL_BODY))]
    messages += [msg("assistant", call("c2")), msg("tool", result("c2")), msg("assistant")]
    tokens = [10, 10, 10, 200, 10, 10, 10]
    # the turn of /notes (240 tokens) fits under 1.5 times 200: it is kept from its command on
    assert cut(messages, tokens, keep_recent_tokens=200) == Cut(0, 2, 240)
    # cut inside it, the command is what is pinned, and the skill body is summarized
    assert cut(messages, tokens, keep_recent_tokens=20) == Cut(0, 4, 30, pinned=2)


def test_alternating_roles_want_an_assistant_at_both_edges() -> None:
    messages = [
        *conversation(),
        msg("user", text("p4")),
        msg("assistant", text("a4")),
        msg("user", text("p5")),
        msg("assistant", text("a5")),
    ]
    tokens = [10] * 7 + [100] + [10] * 4
    assert cut(messages, tokens, keep_recent_tokens=40) == Cut(0, 8, 40)
    assert cut(messages, tokens, keep_recent_tokens=40, alternating=True) == Cut(0, 9, 30)
    # a head of one user message grows to end on an assistant message
    assert cut(messages, tokens, keep_recent_tokens=40, alternating=True, protect_first=1) == Cut(
        2, 9, 30
    )


def test_alternating_roles_fall_back_to_a_user_start() -> None:
    messages = [
        msg("user", text("p1")),
        msg("user", text("p2")),
        msg("user", text("p3")),
        msg("user", text("p4")),
        msg("assistant", text("a4")),
    ]
    assert cut(messages, [10] * 5, keep_recent_tokens=0, alternating=True) == Cut(0, 2, 30)


@pytest.mark.parametrize("accepted", [{2}, set()])
def test_a_format_veto_moves_the_cut_or_says_why(accepted: set[int]) -> None:
    found = cut(
        conversation(),
        [10] * 8,
        keep_recent_tokens=20,
        accept=lambda position: position in accepted,
        refusal="cannot keep that tail",
    )
    assert found == (Cut(0, 2, 60) if accepted else NoCut("cannot keep that tail"))


def _every_position(positions: list[int], suffix: list[int], budget: int) -> int:
    """The rule `_choose` follows, applied to every valid position."""
    fit = [p for p in positions if suffix[p] <= budget]
    over = [p for p in positions if suffix[p] > budget]
    if over and suffix[over[-1]] <= budget * SOFT_CEILING:
        return over[-1]
    if fit:
        return fit[0]
    return positions[-1]


@settings(max_examples=500, deadline=None)
@given(
    tokens=st.lists(st.integers(0, 400), min_size=1, max_size=40),
    valid=st.lists(st.booleans(), min_size=40, max_size=40),
    budget=st.integers(0, 3000),
    low=st.integers(0, 39),
    span=st.integers(-2, 40),
)
def test_the_start_is_chosen_from_the_positions_next_to_the_budget(
    tokens: list[int], valid: list[bool], budget: int, low: int, span: int
) -> None:
    """Testing only the positions next to the budget's edge chooses what testing all would."""
    suffix = [sum(tokens[i:]) for i in range(len(tokens) + 1)]
    high = min(low + span, len(tokens) - 1)
    positions = [p for p in range(low, high + 1) if valid[p]]
    expected = _every_position(positions, suffix, budget) if positions else None
    assert _choose(valid.__getitem__, low, high, suffix, budget) == expected
