"""Where a summary cuts a conversation: the head it keeps, the middle it replaces, the tail.

`find_cut(context, tokens, ...)` looks at the context view (the messages the model would see,
with their token counts) and returns a `Cut` (`context[:head]` kept first, `context[head:start]`
summarized, `context[start:]` kept after the summary) or a `NoCut` that says why nothing is worth
summarizing. A cut keeps the format's standing context, the newest `keep_recent_tokens` and the
last user prompt (or says it must quote that prompt), and never falls inside an atomic unit.
Everything here is a pure function of the messages and their counts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from compactcli.formats.base import atomic_units
from compactcli.transcript import Message
from compactcli.user_text import has_typed_text

SOFT_CEILING = 1.5
"""How far past `keep_recent_tokens` the tail may grow to keep a unit whole."""

MIN_TAIL_MESSAGES = 3
"""The tail keeps at least this many messages (and the last user prompt)."""


@dataclass(frozen=True, slots=True)
class Cut:
    """A cut of the context view: `[:head]` kept, `[head:start]` summarized, `[start:]` kept.

    `pinned` is the last user prompt when it lies in the summarized middle (the current turn was
    cut): the summary must quote it verbatim.
    """

    head: int
    start: int
    tail_tokens: int
    pinned: int | None = None

    @property
    def middle(self) -> range:
        return range(self.head, self.start)


@dataclass(frozen=True, slots=True)
class NoCut:
    """Why nothing is summarized.

    `turn_only`: the last user prompt is kept with everything after it and nothing before it
    can be summarized, so only cutting its turn (`find_cut(..., pin=True)`) could summarize
    anything (a session of one prompt and the work on it).
    """

    reason: str
    turn_only: bool = False


def is_prompt(message: Message) -> bool:
    """A user message with text the person typed (`compactcli.user_text`; after any tool results
    it answers), not a summary. Text an agent injects as a user message (a skill's body,
    environment context, a shell command the user ran and its output) opens no turn."""
    return message.role == "user" and not message.summary and has_typed_text(message)


def can_start(message: Message) -> bool:
    """Whether a kept part may begin with this message: a user or assistant turn."""
    return (
        message.role in ("user", "assistant")
        and not message.summary
        and not any(b.kind == "tool_result" for b in message.blocks)
    )


def find_cut(
    context: Sequence[Message],
    tokens: Sequence[int],
    *,
    keep_recent_tokens: int,
    protect_first: int = 0,
    initial: int = 0,
    alternating: bool = False,
    accept: Callable[[int], bool] | None = None,
    refusal: str = "the format cannot keep a tail that starts at any place that fits",
    pin: bool = True,
) -> Cut | NoCut:
    """The cut of `context` (whose messages cost `tokens`), or why there is none.

    - The head is the format's standing context (`initial` leading messages: system and
      developer prompts, injected instructions) plus the first `protect_first` messages, widened
      to the end of the atomic unit it ends in. An earlier summary ends the head: messages it
      already replaced are not there to protect.
    - The tail is the newest `keep_recent_tokens` of the conversation, and at least
      `MIN_TAIL_MESSAGES` messages, whatever they cost. It holds the last user prompt
      (`is_prompt`; unless the protected head holds it) while the tail from that prompt stays
      under the soft ceiling; when the current turn alone is larger (one prompt followed by a
      long run of work), the cut may fall inside it (`pin`) and the prompt is `pinned`:
      summarized with the middle, and quoted verbatim in the summary by the stage. When nothing
      before that prompt can be summarized, the `NoCut` says so (`turn_only`). When the budget
      falls inside an atomic unit, the tail takes that unit whole if it then stays under
      `SOFT_CEILING` times the budget, and leaves it out otherwise. `pin=False` never cuts the
      current turn: the last user prompt stays in the tail.
    - A cut only falls where an atomic unit starts (`compactcli.formats.base.atomic_units`:
      never inside one streamed response, never between a call and its result), on a user or
      assistant message that holds no tool result and is not a summary (`can_start`). It never
      falls before an earlier summary: an earlier summary in the middle is updated (the stage
      passes it to the summarizer), never kept in the tail.
    - `alternating` formats (Anthropic Messages: roles must alternate, and the summary is a user
      message) want the head to end on an assistant message and prefer a tail that starts on
      one; a tail starting on a user message is taken only when no other cut exists (the
      injection then merges the summary into that message).
    - `accept(start)`, when given, vetoes cuts the format cannot write (a Claude Code tail that
      is not one run of the chain); `refusal` says why when it vetoes them all.
    """
    count = len(context)
    if count == 0:
        return NoCut("the context is empty")
    units = atomic_units(context)
    starts = {unit[0] for unit in units}
    ends = sorted(unit[-1] + 1 for unit in units)
    summaries = [i for i, m in enumerate(context) if m.summary]

    head = _unit_end(ends, min(count, initial + protect_first)) if initial + protect_first else 0
    later = [i for i in summaries if i >= initial]
    if later and later[0] < head:
        head = max((s for s in starts if s <= later[0]), default=0)
    if alternating and head > 0 and context[head - 1].role != "assistant":
        head = next((e for e in ends if e > head and context[e - 1].role == "assistant"), count)
    floor = max([head, *(i + 1 for i in summaries if i >= head)])

    suffix = [0] * (count + 1)
    for i in range(count - 1, -1, -1):
        suffix[i] = suffix[i + 1] + tokens[i]

    # the last user prompt at or after the head (the only one the rules look at)
    prompt = next((i for i in range(count - 1, head - 1, -1) if is_prompt(context[i])), None)
    limit = min(count - MIN_TAIL_MESSAGES, prompt if prompt is not None else count)
    split = pin and prompt is not None and suffix[prompt] > keep_recent_tokens * SOFT_CEILING
    if split:
        limit = count - MIN_TAIL_MESSAGES
    if limit < floor:
        return _nothing(context, head, floor, prompt, limit)

    def valid(position: int, check: bool) -> bool:
        return (
            position in starts
            and can_start(context[position])
            and (accept is None or not check or accept(position))
        )

    pinnable = prompt if split else None

    def summarizes(start: int) -> bool:
        return any(not context[i].summary and i != pinnable for i in range(head, start))

    for check in (False, True):

        def ok(position: int, check: bool = check) -> bool:
            return valid(position, check)

        def turn(position: int, check: bool = check) -> bool:
            return valid(position, check) and context[position].role == "assistant"

        chosen = _choose(ok, floor, limit, suffix, keep_recent_tokens)
        if chosen is None:
            if check:
                return NoCut(refusal)
            return NoCut("no place to cut that keeps every tool call with its result")
        start = chosen
        if not summarizes(start):
            return _nothing(context, head, start, prompt, limit)
        if alternating and context[start].role != "assistant":
            other = _choose(turn, floor, limit, suffix, keep_recent_tokens)
            if other is not None:
                start = other
                if not summarizes(start):
                    return _nothing(context, head, start, prompt, limit)
        if accept is None:
            break
    pinned = prompt if split and prompt is not None and start > prompt else None
    return Cut(head=head, start=start, tail_tokens=suffix[start], pinned=pinned)


def _nothing(
    context: Sequence[Message], head: int, start: int, prompt: int | None, limit: int
) -> NoCut:
    """Why the middle `context[head:start]` holds nothing to summarize (`prompt`: the last user
    prompt from the head on)."""
    count = len(context)
    if prompt is not None and limit > prompt and start > prompt:
        return NoCut(
            f"nothing to summarize but the last user prompt (message {prompt + 1} of "
            f"{count}): what follows it is kept"
        )
    if prompt is not None and limit == prompt and start >= limit:
        return NoCut(
            f"nothing to summarize before the last user prompt (message {prompt + 1} of "
            f"{count}), which is kept with everything after it",
            turn_only=True,
        )
    if limit < start or count <= MIN_TAIL_MESSAGES:
        size = f"{count} message{'' if count == 1 else 's'}"
        return NoCut(f"the conversation ({size}) is not longer than what must be kept")
    if start > head:
        return NoCut("nothing to summarize but the earlier summary: the rest is kept")
    return NoCut("nothing to summarize: the whole conversation fits in the kept tail")


def _unit_end(ends: Sequence[int], position: int) -> int:
    """The first unit end at or after `position`."""
    return next((e for e in ends if e >= position), ends[-1])


def _choose(
    ok: Callable[[int], bool], low: int, high: int, suffix: Sequence[int], budget: int
) -> int | None:
    """The start whose tail best fits `budget`, among the positions `low..high` that are `ok`;
    None when none is. The tail just over the budget when it stays under the soft ceiling, else
    the largest that fits, else the smallest there is.

    `suffix` (the tail's tokens from each position) never grows with the position, so the
    positions over the budget come first: only those next to the budget's edge are tested, from
    it outwards, not every position (the tail is short, the conversation long).
    """
    edge = high + 1  # the first position whose tail fits the budget
    while edge > low and suffix[edge - 1] <= budget:
        edge -= 1
    over = next((p for p in range(edge - 1, low - 1, -1) if ok(p)), None)
    if over is not None and suffix[over] <= budget * SOFT_CEILING:
        return over
    fit = next((p for p in range(edge, high + 1) if ok(p)), None)
    return fit if fit is not None else over
