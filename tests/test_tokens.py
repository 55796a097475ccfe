"""Token counters: the heuristic's per-block rules, the exact counter, model and encoding choice."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compactcli.errors import BackendError, UsageError
from compactcli.tokens import (
    CLAUDE,
    OPENAI,
    WORDY_CHARS,
    Costs,
    Density,
    HeuristicCounter,
    TiktokenCounter,
    TokenCounter,
    bundled_encoding_dir,
    cjk_chars,
    density_for,
    encoding_for_model,
    get_counter,
    load_encoding,
)
from compactcli.transcript import Block, Images, Message

PLAIN = Density("plain", prose=4.0, output=4.0, json=2.0, cjk=1.0, costs=Costs(message=4, tool=8))


def test_prose_json_and_output_densities() -> None:
    counter = HeuristicCounter(PLAIN)
    assert counter.text_tokens("a" * 400) == 100
    assert counter.parts("text", "a" * 400, False, None, ()) == (0, 100)
    assert counter.parts("text", "a" * 400, True, None, ()) == (0, 200)  # JSON is denser
    assert counter.parts("tool_result", "a" * 400, False, "Bash", ()) == (8, 100)
    assert counter.parts("tool_result", '{"a": 1}' * 50, True, "Bash", ()) == (8, 200)
    # a tool call: its name as prose, its arguments as JSON, one tool framing
    assert counter.parts("tool_call", '{"command": "ls"}', True, "Bash", ()) == (8, 1 + 9)


def test_rounding_is_to_the_nearest_token() -> None:
    counter = HeuristicCounter(PLAIN)
    assert [counter.text_tokens("a" * n) for n in (0, 1, 2, 3, 5, 6)] == [0, 0, 1, 1, 1, 2]


def test_cjk_counts_one_token_per_character() -> None:
    counter = HeuristicCounter(PLAIN)
    assert cjk_chars("請閱讀 the doc，謝謝") == 6
    assert cjk_chars("ascii only") == 0
    assert cjk_chars("     1\u2192arrows are not CJK") == 0
    assert counter.text_tokens("請閱讀文件") == 5
    # 8 Latin characters at 4 per token, plus 5 CJK characters
    assert counter.text_tokens("abcdefgh請閱讀文件") == 7
    assert HeuristicCounter(CLAUDE).text_tokens("請閱讀文件") == 6  # 1.2 per character


def test_images_and_documents_cost_a_fixed_amount_not_their_base64() -> None:
    counter = HeuristicCounter(PLAIN)
    assert counter.block_tokens(Block(kind="image")) == 1600
    assert counter.block_tokens(Block(kind="document")) == 1600
    assert counter.parts("tool_result", "okay", False, "Read", (None, None)) == (8 + 3200, 1)


def test_numbered_listings_pay_for_their_line_numbers() -> None:
    counter = HeuristicCounter(CLAUDE)
    tabbed = "     1\tdef f():\n     2\t    return 1"
    arrows = "     1\u2192def f():\n     2\u2192    return 1"
    # 35 characters at 2.6 per token, plus `numbered_line` tokens for each of the 2 lines
    numbers = int(2 * CLAUDE.numbered_line + 0.5)
    assert numbers > 0
    assert counter.parts("tool_result", tabbed, False, "Read", ()) == (50, 13 + numbers)
    assert counter.parts("tool_result", arrows, False, "Read", ()) == (50, 13 + numbers)
    assert counter.parts("tool_result", "not numbered\nat all", False, "Bash", ()) == (50, 7)


PROSE_OUTPUT = (
    "The committee approved the proposal after a long discussion about the budget, and the "
    "members agreed that the schedule should be reviewed again before the end of the month. "
) * 3
CODE_OUTPUT = "x = f(a[0], b[1]) + 42;\n" * 12 + "}" * (len(PROSE_OUTPUT) - 24 * 12)


def _output_tokens(counter: HeuristicCounter, text: str) -> int:
    return counter.parts("tool_result", text, False, "WebFetch", ())[1]


def test_a_claude_output_that_is_mostly_words_counts_at_the_prose_density() -> None:
    counter = HeuristicCounter(CLAUDE)
    assert len(PROSE_OUTPUT) == len(CODE_OUTPUT) >= WORDY_CHARS
    assert _output_tokens(counter, PROSE_OUTPUT) == round(len(PROSE_OUTPUT) / CLAUDE.prose)
    assert _output_tokens(counter, CODE_OUTPUT) == round(len(CODE_OUTPUT) / CLAUDE.output)
    short = PROSE_OUTPUT[: WORDY_CHARS - 1]  # too short to judge: the output density
    assert _output_tokens(counter, short) == round(len(short) / CLAUDE.output)
    numbered = "\n".join(f"{n:6}\t{PROSE_OUTPUT[:80]}" for n in range(1, 6))  # a file read
    assert _output_tokens(counter, numbered) == round(len(numbered) / CLAUDE.output) + int(
        5 * CLAUDE.numbered_line + 0.5
    )
    # OpenAI's profile has one density for both: nothing to move
    assert _output_tokens(HeuristicCounter(OPENAI), PROSE_OUTPUT) == round(len(PROSE_OUTPUT) / 4)
    # a calibration scales the densities the output moves between
    scaled = HeuristicCounter(CLAUDE.scaled(2.0))
    assert _output_tokens(scaled, PROSE_OUTPUT) == round(len(PROSE_OUTPUT) / CLAUDE.prose / 2)


@given(words=st.text(alphabet="abcdefgh ", min_size=0, max_size=400), code=st.integers(0, 400))
def test_an_outputs_count_falls_as_its_share_of_letters_rises(words: str, code: int) -> None:
    counter = HeuristicCounter(CLAUDE)
    text = words + "{}" * code
    tokens = _output_tokens(counter, text)
    assert round(len(text) / CLAUDE.prose) <= tokens <= round(len(text) / CLAUDE.output)
    wordier = words + "ab" + "{}" * (code - 1) if code else text  # same length, one more letter
    assert _output_tokens(counter, wordier) <= tokens


def test_message_framing() -> None:
    counter = HeuristicCounter(PLAIN)
    message = Message(
        index=0,
        role="assistant",
        blocks=(Block(kind="text", text="a" * 40), Block(kind="tool_call", text="{}", json=True)),
    )
    assert counter.message_tokens(message) == 4 + 10 + 8 + 1
    with_turn = HeuristicCounter(Density("t", 4.0, 4.0, 2.0, costs=Costs(message=4, turn=100)))
    typed = Message(index=0, role="user", blocks=(Block(kind="text", text="hi"),))
    result = Message(index=0, role="user", blocks=(Block(kind="tool_result", text="hi"),))
    assert with_turn.message_tokens(typed) == 4 + 100 + 1
    assert with_turn.message_tokens(result) == 4 + 8 + 1


@given(
    role=st.sampled_from(["user", "assistant", "system"]),
    kinds=st.lists(st.sampled_from(["text", "tool_result", "tool_call", "image", "thinking"])),
    turn=st.sampled_from([0, 100]),
)
def test_a_messages_framing_is_the_same_from_the_message_and_from_its_plain_blocks(
    role: str, kinds: list[str], turn: int
) -> None:
    """`Costs.framing` (a `Message`) and `Costs.framing_of` (its role and plain blocks, as the
    estimate ledger has them) apply one rule: `turn` more for a user message with text and no
    tool result."""
    costs = Costs(message=4, turn=turn)
    message = Message(index=0, role=role, blocks=tuple(Block(kind=k, text="x") for k in kinds))
    plain = [(k, "x") for k in kinds]
    opens = role == "user" and "text" in kinds and "tool_result" not in kinds
    assert costs.framing(message) == costs.framing_of(role, plain) == 4 + (turn if opens else 0)


def test_density_follows_the_model_then_the_format() -> None:
    assert density_for("claude-opus-4-7") is CLAUDE
    claude_in_codex = density_for("anthropic/claude-sonnet-4-5", "codex")
    assert claude_in_codex.name == "claude" and claude_in_codex.prose == CLAUDE.prose
    assert density_for("gpt-5.5") is OPENAI
    assert density_for("openai/o3-mini") is OPENAI
    assert density_for(None, "codex").name == "openai"  # with Codex's tool output limit
    assert density_for(None, "openai") is OPENAI
    assert density_for("some-local-model", "pi") is CLAUDE
    assert density_for(None, "claude-code") is CLAUDE
    # tokenizers with vocabularies the size of o200k's, as pi records their models
    for model in (
        "glm-5.1",
        "deepseek-v4-flash-free",
        "kimi-k2.5",
        "openrouter/moonshotai/kimi-k2",
    ):
        assert density_for(model, "pi").prose == OPENAI.prose, model


def test_scaled_density_divides_characters_per_token() -> None:
    scaled = CLAUDE.scaled(0.5)
    assert (scaled.prose, scaled.output, scaled.json) == (1.7, 1.3, 1.1)
    assert scaled.costs == CLAUDE.costs


def test_encoding_for_model() -> None:
    assert encoding_for_model(None) == "o200k_base"
    assert encoding_for_model("gpt-4o-mini") == "o200k_base"
    assert encoding_for_model("gpt-4.1") == "o200k_base"
    assert encoding_for_model("gpt-5.5") == "o200k_base"
    assert encoding_for_model("claude-opus-4-7") == "o200k_base"
    assert encoding_for_model("gpt-4") == "cl100k_base"
    assert encoding_for_model("gpt-4-turbo") == "cl100k_base"
    assert encoding_for_model("azure/gpt-35-turbo") == "cl100k_base"
    assert encoding_for_model("ft:gpt-3.5-turbo-0125:org::id") == "cl100k_base"
    assert encoding_for_model("text-embedding-3-small") == "cl100k_base"


class FakeEncoding:
    """Counts words; records how often it was loaded."""

    loads = 0

    def encode_ordinary(self, text: str) -> list[int]:
        return list(range(len(text.split())))


def fake_loader(name: str) -> FakeEncoding:
    FakeEncoding.loads += 1
    assert name == "cl100k_base"
    return FakeEncoding()


def test_exact_counter_uses_the_injected_encoding_and_loads_it_once() -> None:
    FakeEncoding.loads = 0
    counter = TiktokenCounter("cl100k_base", loader=fake_loader, costs=PLAIN.costs)
    assert counter.method == "exact"
    assert counter.text_tokens("one two three") == 3
    assert counter.count_texts(["a b", "", "c"]) == [2, 0, 1]
    assert counter.parts("tool_call", '{"x": 1}', True, "Bash", ()) == (8, 1 + 2)
    assert FakeEncoding.loads == 1
    assert isinstance(counter, TokenCounter)
    assert isinstance(HeuristicCounter(), TokenCounter)


def test_exact_counter_counts_blocks_in_one_group_as_one_by_one() -> None:
    counter = TiktokenCounter("cl100k_base", loader=fake_loader, costs=PLAIN.costs)
    blocks = [
        ("tool_call", '{"x": 1}', True, "Bash", ()),
        ("tool_result", "a b c", False, "Bash", ()),
        ("text", "", False, None, ()),
        ("document", "d e", False, None, ()),
        ("image", "", False, None, ()),
        ("thinking", "why not", False, None, ()),
    ]
    one_by_one = [counter.parts(*block) for block in blocks]
    assert counter.parts_of(blocks) == one_by_one
    assert HeuristicCounter().parts_of(blocks) == [HeuristicCounter().parts(*b) for b in blocks]
    assert counter.text_tokens("one two") == 2  # counting one text still works afterwards


def test_exact_counts_match_tiktoken_offline() -> None:
    counter = TiktokenCounter()
    assert counter.text_tokens("hello world") == 2
    assert counter.text_tokens("hello world, 你好") == len(
        load_encoding("o200k_base").encode_ordinary("hello world, 你好")
    )
    assert TiktokenCounter("cl100k_base").text_tokens("hello world") == 2
    assert load_encoding("o200k_base") is load_encoding("o200k_base")


def test_unsupported_encoding_is_a_backend_error() -> None:
    with pytest.raises(BackendError) as caught:
        load_encoding("o200k_harmony")
    assert str(caught.value) == (
        "tiktoken encoding 'o200k_harmony' is not supported offline; "
        "use one of o200k_base, cl100k_base"
    )
    assert caught.value.exit_code == 4


def test_missing_encoding_file_is_a_backend_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import compactcli.tokens as tokens

    monkeypatch.setattr(tokens, "_cache_dirs", lambda: iter(()))
    load_encoding.cache_clear()
    try:
        with pytest.raises(BackendError) as caught:
            TiktokenCounter("cl100k_base").text_tokens("x")
    finally:
        load_encoding.cache_clear()
    assert str(caught.value) == (
        "cannot load the tiktoken encoding 'cl100k_base' offline: no local copy (looked in "
        "TIKTOKEN_CACHE_DIR, DATA_GYM_CACHE_DIR and compactcli/data/tiktoken); use --method "
        "heuristic, or put the encoding file in TIKTOKEN_CACHE_DIR"
    )


# the encoding files are tiktoken's own, shipped with the package under their cache names

# encoding -> (tiktoken's cache name: the sha1 of its download address, the sha256 tiktoken
# checks the file against: tiktoken_ext/openai_public.py)
SHIPPED = {
    "o200k_base": (
        "fb374d419588a4632f3f557e76b4b70aebbca790",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
    "cl100k_base": (
        "9b5ad71b2ce5302211f9c61530b329a4922fc6a4",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
}


def test_the_package_ships_both_encodings() -> None:
    import compactcli
    import compactcli.tokens as tokens

    folder = Path(bundled_encoding_dir())
    assert folder == Path(compactcli.__file__).parent / "data" / "tiktoken"
    assert tuple(SHIPPED) == tokens._SHIPPED
    assert sorted(p.name for p in folder.iterdir()) == sorted(k for k, _ in SHIPPED.values())
    for name, (key, sha256) in SHIPPED.items():
        blob = f"https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
        assert hashlib.sha1(blob.encode()).hexdigest() == key
        assert hashlib.sha256((folder / key).read_bytes()).hexdigest() == sha256


def test_the_users_tiktoken_cache_comes_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import compactcli.tokens as tokens

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("DATA_GYM_CACHE_DIR", "/nowhere")
    assert list(tokens._cache_dirs()) == [str(tmp_path), "/nowhere", bundled_encoding_dir()]
    assert tokens._cached_file("o200k_base") == bundled_encoding_dir()
    key = SHIPPED["o200k_base"][0]
    (tmp_path / key).write_bytes((Path(bundled_encoding_dir()) / key).read_bytes())
    assert tokens._cached_file("o200k_base") == str(tmp_path)
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR")
    monkeypatch.delenv("DATA_GYM_CACHE_DIR")
    assert list(tokens._cache_dirs()) == [bundled_encoding_dir()]


def test_get_counter() -> None:
    assert get_counter("heuristic", model="gpt-5").density is OPENAI  # type: ignore[union-attr]
    assert get_counter("auto", format="claude-code").method == "heuristic"
    exact = get_counter("exact", model="gpt-4")
    assert isinstance(exact, TiktokenCounter)
    assert exact.encoding == "cl100k_base"
    with pytest.raises(UsageError) as caught:
        get_counter("magic")
    assert str(caught.value) == (
        "unknown method 'magic'; known methods: auto, heuristic, exact, usage, calibrated"
    )


def test_a_block_is_counted_once_per_counter() -> None:
    calls: list[tuple[object, ...]] = []

    class Recording(HeuristicCounter):
        def parts(
            self, kind: str, text: str, is_json: bool, name: str | None, images: Images
        ) -> tuple[int, int]:
            calls.append((kind, text))
            return super().parts(kind, text, is_json, name, images)

    counter = Recording()
    block = Block(kind="tool_result", text="x" * 400, name="Read")
    twin = Block(kind="tool_result", text="x" * 400, name="Read")
    expected = HeuristicCounter().parts("tool_result", "x" * 400, False, "Read", ())
    assert counter.block_parts(block) == expected
    assert counter.block_parts(block) == expected
    assert calls == [("tool_result", "x" * 400)]
    assert counter.block_parts(twin) == expected  # an equal block, another object: counted
    assert len(calls) == 2
    assert Recording().block_parts(block) == expected  # a new counter remembers nothing
    assert len(calls) == 3


def test_a_codex_tool_output_costs_what_codex_sends_of_it() -> None:
    """Codex sends a tool output longer than its limit as head and tail (`Costs.sent`; the real
    Codex sends the same bytes: tests/agents/test_codex_resume.py): a longer output costs no
    more, other formats count every byte, and a cut never splits a character."""
    codex = density_for(None, "codex")
    assert codex.costs.sent_as is not None
    assert density_for("gpt-5.5", "codex").costs.sent_as is codex.costs.sent_as
    assert density_for(None, "claude-code").costs.sent_as is None
    assert density_for(None, "openai").costs.sent_as is None
    costs = codex.costs
    short = "x" * 48_000
    assert costs.sent(short) == short
    long = "a" * 30_000 + "b" * 40_000 + "c" * 30_000
    sent = costs.sent(long)
    assert sent == "a" * 24_000 + "…13000 tokens truncated…" + "c" * 24_000
    wide = "é" * 30_000  # 60,000 bytes: the cut at 24,000 bytes falls between two characters
    assert costs.sent(wide).startswith("é" * 12_000 + "…") and costs.sent(wide).endswith(
        "é" * 12_000
    )
    odd = "€" * 20_000  # 3 bytes each: 24,000 bytes end inside a character, which is left out
    head = costs.sent(odd).split("…", 1)[0]
    assert head == "€" * 8_000
    counter = HeuristicCounter(codex)
    one = counter.parts("tool_result", long, False, None, ())
    two = counter.parts("tool_result", long + "d" * 100_000, False, None, ())
    assert one == two
    plain = HeuristicCounter(density_for(None, "openai"))
    assert plain.parts("tool_result", long, False, None, ())[1] > 2 * one[1]
