"""Token counters: how many tokens a text, a block or a message costs.

Every counter satisfies `TokenCounter` and reports its `method` next to every number it makes;
blocks and messages are costed by the same rules whatever counts the text (`Costs`: fixed
overheads per message, tool block and typed user turn, and each image or document by what its
provider charges). `HeuristicCounter` (`heuristic`, or `calibrated` when fitted) divides
characters by a `Density` fitted on recorded usage and needs no tokenizer; `TiktokenCounter`
(`exact`) counts with tiktoken, loaded offline and never from the network. The same inputs give
the same counts, one at a time or in batches. `get_counter(method, model=..., format=...)`
builds the counter a method name asks for."""

from __future__ import annotations

import contextlib
import functools
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from compactcli.errors import BackendError, UsageError
from compactcli.formats import get_format
from compactcli.images import ImageRule, image_tokens
from compactcli.transcript import Block, Images, Message

if TYPE_CHECKING:
    from compactcli.formats.base import LightBlock

__all__ = [
    "CLAUDE",
    "DEFAULT_ENCODING",
    "OPENAI",
    "Costs",
    "Density",
    "HeuristicCounter",
    "TiktokenCounter",
    "TokenCounter",
    "bundled_encoding_dir",
    "cjk_chars",
    "density_for",
    "encoding_for_model",
    "get_counter",
    "load_encoding",
]

DEFAULT_ENCODING = "o200k_base"

# Hiragana and Katakana, CJK symbols, CJK unified ideographs (and extension A), Hangul
# syllables, compatibility ideographs, full-width forms: one token or more per character in
# every tokenizer we know, where Latin text is four characters or so per token.
_CJK_RANGES = (
    "[\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]+"
)


@functools.cache
def _cjk_run() -> re.Pattern[str]:
    """The runs of CJK characters, compiled on first use (compiling them takes a while, and
    most texts are ASCII)."""
    return re.compile(_CJK_RANGES)


def _ascii_but_arrows(text: str) -> bool:
    """Whether the arrows of a numbered listing are the only non-ASCII characters of `text`.

    Replacing each arrow by one ASCII character keeps the length, which `str.replace` does in
    about half the time it takes to remove them. (Were the copy not narrowed to ASCII, the
    answer would be False and the caller's general path would give the same count.)
    """
    return text.replace("\u2192", "\t").isascii()


def cjk_chars(text: str) -> int:
    """How many characters of `text` are CJK (0 at once for ASCII text)."""
    if text.isascii() or ("\u2192" in text and _ascii_but_arrows(text)):
        return 0
    return sum(map(len, _cjk_run().findall(text)))


@runtime_checkable
class TokenCounter(Protocol):
    """What every token counter offers (the prune and diff stages use the same shape): `method`
    (the name reported next to every number it makes), `text_tokens(text)`,
    `block_tokens(block)` (and `block_parts(block)`, the same split into fixed costs and text),
    `message_tokens(message)`, and `count_texts(texts)` for many texts."""

    @property
    def method(self) -> str: ...

    def text_tokens(self, text: str) -> int: ...

    def block_parts(self, block: Block) -> tuple[int, int]: ...

    def block_tokens(self, block: Block) -> int: ...

    def message_tokens(self, message: Message) -> int: ...

    def count_texts(self, texts: Sequence[str]) -> list[int]: ...


@dataclass(frozen=True, slots=True)
class Costs:
    """Fixed costs that are not text: framing per message and per tool block, media.

    `image` is the cost of an image whose size is unknown; an image whose size was read costs
    what `image_rule`'s provider charges for it (`compactcli.images.image_tokens`: Anthropic's
    rule for Claude's profile, OpenAI's tiles for OpenAI's). A document costs `document`, not
    its base64 length.
    `sent_as` is what an agent sends its model of a tool output, when it does not send it whole
    (its format's `compactcli.formats.Format.sends`: Codex sends a long output as its head and
    tail; the file holds the whole output), and a tool output costs that (`sent`).
    """

    message: int = 4
    tool: int = 8
    turn: int = 0  # context an agent injects with each typed user turn (reminders, state)
    image: int = 1600
    document: int = 1600
    image_rule: ImageRule = "anthropic"
    sent_as: Callable[[str], str] | None = None

    def sent(self, text: str) -> str:
        """A tool output as the agent sends it to the model (`sent_as`; whole by default)."""
        sent_as = self.sent_as
        return text if sent_as is None else sent_as(text)

    def media(self, images: Images) -> int:
        """The tokens of the images and documents `images` lists: each sized image as its
        provider charges for it, the others at the fixed cost."""
        total = 0
        for size in images:
            total += self.image if size is None else image_tokens(size, self.image_rule)
        return total

    def framing(self, message: Message) -> int:
        """The fixed tokens of a message itself (not of its blocks)."""
        return self.framing_of_kinds(message.role, (b.kind for b in message.blocks))

    def framing_of(self, role: str, blocks: Sequence[tuple[Any, ...]]) -> int:
        """`framing` for a message given as its role and its blocks as plain values (each
        block's kind first)."""
        return self.framing_of_kinds(role, (b[0] for b in blocks))

    def framing_of_kinds(self, role: str, kinds: Iterable[str]) -> int:
        """The fixed tokens of a message of `role` whose blocks are of `kinds`: `message`, and
        `turn` more for a user message that opens a turn (it holds text, not only tool
        results). `kinds` is read only when `turn` applies."""
        if role != "user" or not self.turn:
            return self.message
        seen = set(kinds)
        if "text" in seen and "tool_result" not in seen:
            return self.message + self.turn
        return self.message


@dataclass(frozen=True, slots=True)
class Density:
    """A tokenizer family's density: characters per token by kind of text, and fixed costs.

    `prose` is for messages and thinking, `output` for tool results that are not JSON (file
    contents, command output, mostly code), `json` for tool-call arguments and JSON results.
    `cjk` is tokens per CJK character. `numbered_line` is added per line of tool output that is
    a line-numbered listing (`     1\tcode`, `     1→code`: how file-reading tools show files),
    whose number prefixes tokenize poorly. `wordy` is the range of a tool output's share of
    ASCII letters over which its density goes from `output` (at the low end and below: code,
    logs) to `prose` (at the high end and above: articles, documentation), for an output of at
    least `WORDY_CHARS` characters that is not a numbered listing; None keeps `output`.
    """

    name: str
    prose: float
    output: float
    json: float
    cjk: float = 1.0
    numbered_line: float = 0.0
    wordy: tuple[float, float] | None = None
    costs: Costs = Costs()

    def scaled(self, factor: float) -> Density:
        """The same profile with every density multiplied by `factor` (a calibration)."""
        return replace(
            self,
            prose=self.prose * factor,
            output=self.output * factor,
            json=self.json * factor,
        )


# Fitted on the deltas between consecutive usage anchors of real Claude Code and Codex
# transcripts (scripts/estimate_accuracy.py prints how close they land). Claude's tokenizer is
# denser than o200k_base on code and JSON; the per-block costs also absorb what the agents add
# around each request and result (tool-use framing, reminders).
CLAUDE = Density(
    "claude",
    prose=3.4,
    output=2.6,
    json=2.2,
    cjk=1.2,
    numbered_line=2.5,
    wordy=(0.40, 0.65),
    costs=Costs(message=15, tool=50),
)
OPENAI = Density(
    "openai",
    prose=4.0,
    output=4.0,
    json=3.2,
    cjk=1.0,
    costs=Costs(message=10, tool=30, image_rule="openai"),
)

WORDY_CHARS = 200
"""The shortest tool output whose share of letters moves its density (`Density.wordy`)."""
_LETTERS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

_NUMBERED = re.compile(r" *\d+(?:\t|\u2192)")
"""The start of a line-numbered listing (cat -n style, or Claude Code's arrow)."""


def _numbered_lines(text: str) -> int:
    """Lines of a numbered listing: its arrows (Claude Code marks each number with one), else
    its lines."""
    arrows = text.count("\u2192")
    return arrows if arrows else text.count("\n") + 1


_OPENAI_PREFIXES = ("gpt", "o1", "o3", "o4", "chatgpt", "codex", "text-embedding", "davinci")
_LARGE_VOCABULARY = ("deepseek", "glm", "kimi")
"""Models whose tokenizers have vocabularies about the size of o200k's (DeepSeek, GLM, Kimi),
which cut code and prose into about as many tokens: they count with OpenAI's density."""


def _model_name(model: str) -> str:
    """`model` without a provider prefix or fine-tune marker, lower-cased."""
    name = model.strip().lower()
    if name.startswith("ft:"):
        name = name[3:]
    return name.rsplit("/", 1)[-1]


def density_for(model: str | None, format: str | None = None) -> Density:
    """The density profile of the tokenizer `model` uses; when the model is unknown, the one
    format `format` names in its registry entry (`compactcli.formats`; `UsageError` for a name
    that is not registered), and `CLAUDE` when no format is given either. The format's agent
    sets what it sends of a tool output (`Costs.sent_as`, from its entry's `sends`)."""
    density = _tokenizer_density(model, format)
    sends = get_format(format).sends() if format is not None else None
    if sends is None:
        return density
    return replace(density, costs=replace(density.costs, sent_as=sends))


def _tokenizer_density(model: str | None, format: str | None) -> Density:
    if model:
        name = _model_name(model)
        if name.startswith(_OPENAI_PREFIXES) or name.startswith(_LARGE_VOCABULARY):
            return OPENAI
        if "claude" in name:
            return CLAUDE
    if format is None:
        return CLAUDE
    return OPENAI if get_format(format).tokenizer == "openai" else CLAUDE


class _Costing:
    """Block and message costs on top of a text count; shared by every counter."""

    costs: Costs
    _memo: dict[int, tuple[Any, Any]] | None = None  # blocks' parts and messages' tokens
    batch_chars = 0
    """Blocks fed many at once are best counted in groups (`parts_of`) of about this many
    characters of text; 0: one at a time, as they come."""

    def _prose(self, text: str) -> int:
        raise NotImplementedError

    def _output(self, text: str) -> int:
        return self._prose(text)

    def _json(self, text: str) -> int:
        return self._prose(text)

    def block_parts(self, block: Block) -> tuple[int, int]:
        """(fixed, text) tokens of one block: framing and media costs, and its text's count.

        Only the text part depends on the density (a calibration scales it). Remembered per
        block object for the counter's lifetime: blocks are immutable and shared by the
        transcripts that one run's stages make, so each is counted once.
        """
        parts: tuple[int, int] | None = self._recall(block)
        if parts is None:
            parts = self.parts(block.kind, block.text, block.json, block.name, block.images)
            self._keep(block, parts)
        return parts

    def _recall(self, item: Block | Message) -> Any:
        """What was counted for `item` itself (None when it was not), by identity."""
        memo = self._memo
        if memo is None:
            memo = self._memo = {}
        found = memo.get(id(item))
        return found[1] if found is not None and found[0] is item else None

    def _keep(self, item: Block | Message, value: Any) -> None:
        assert self._memo is not None  # made by `_recall`, asked first
        self._memo[id(item)] = (item, value)  # holding the item keeps its id from being reused

    def parts(
        self, kind: str, text: str, is_json: bool, name: str | None, images: Images
    ) -> tuple[int, int]:
        """`block_parts` for a block given by its fields (no `Block` needed)."""
        costs = self.costs
        media = costs.media(images) if images else 0
        if kind == "tool_result":
            text = costs.sent(text)
            count = self._json(text) if is_json else self._output(text)
            return costs.tool + media, count
        if kind == "tool_call":
            return costs.tool, self._prose(name or "") + self._json(text)
        if kind == "image":
            return (media if images else costs.image), 0
        if kind == "document":
            return costs.document, self._prose(text) if text else 0
        if is_json:
            return media, self._json(text)
        return media, self._prose(text)

    def parts_of(self, blocks: Sequence[LightBlock]) -> list[tuple[int, int]]:
        """`parts` of each of `blocks`, in order."""
        parts = self.parts
        return [parts(*block) for block in blocks]

    def block_tokens(self, block: Block) -> int:
        """The tokens of one block: its text by kind, plus tool framing and media costs."""
        fixed, text = self.block_parts(block)
        return fixed + text

    def message_tokens(self, message: Message) -> int:
        """A message's tokens: its framing plus each of its blocks. Remembered per message
        object, as `block_parts` is per block: the stages count the same messages again."""
        tokens: int | None = self._recall(message)
        if tokens is None:
            tokens = self.costs.framing(message) + sum(self.block_tokens(b) for b in message.blocks)
            self._keep(message, tokens)
        return tokens


class HeuristicCounter(_Costing):
    """Characters over a density, by kind of text; CJK by character. No tokenizer needed.

    The density depends on what the text is (prose, tool output, JSON; a tool output that is
    mostly words, by its share of ASCII letters, nearer prose's), and comes from a `Density`
    profile fitted on recorded usage: `CLAUDE` (Anthropic's tokenizer, denser on code and JSON)
    or `OPENAI` (o200k_base), as `density_for(model, format)` picks. Each string is read with
    C-level string methods only (`str.isascii` first; the arrows of numbered file listings
    removed and checked again; `bytes.translate` to count letters; a compiled regular
    expression for the rest).
    """

    __slots__ = (
        "_cjk",
        "_json_rate",
        "_numbered",
        "_output_rate",
        "_prose_rate",
        "_wordy",
        "costs",
        "density",
        "method",
    )

    def __init__(self, density: Density = CLAUDE, *, method: str = "heuristic") -> None:
        self.density = density
        self.method = method
        self.costs = density.costs
        self._prose_rate = 1.0 / density.prose
        self._output_rate = 1.0 / density.output
        self._json_rate = 1.0 / density.json
        self._cjk = density.cjk
        self._numbered = density.numbered_line
        wordy = density.wordy
        self._wordy = wordy if wordy is not None and density.prose > density.output else None

    def __repr__(self) -> str:
        return f"HeuristicCounter({self.density!r}, method={self.method!r})"

    def _count(self, text: str, rate: float) -> int:
        if text.isascii() or ("\u2192" in text and _ascii_but_arrows(text)):
            # ASCII, or ASCII but for the arrows of a numbered listing: no CJK to look for
            return int(len(text) * rate + 0.5)
        cjk = sum(map(len, _cjk_run().findall(text)))
        return int((len(text) - cjk) * rate + cjk * self._cjk + 0.5)

    def _prose(self, text: str) -> int:
        return self._count(text, self._prose_rate)

    def _output(self, text: str) -> int:
        if self._numbered and _NUMBERED.match(text):
            tokens = self._count(text, self._output_rate)
            return tokens + int(_numbered_lines(text) * self._numbered + 0.5)
        if self._wordy is None or len(text) < WORDY_CHARS:
            return self._count(text, self._output_rate)
        ascii_text = text.encode("ascii", "ignore")
        letters = len(ascii_text) - len(ascii_text.translate(None, _LETTERS))
        low, high = self._wordy
        share = min(1.0, max(0.0, (letters / len(text) - low) / (high - low)))
        output, prose = self.density.output, self.density.prose  # characters per token
        return self._count(text, 1.0 / (output + (prose - output) * share))

    def _json(self, text: str) -> int:
        return self._count(text, self._json_rate)

    def text_tokens(self, text: str) -> int:
        """Tokens of prose text."""
        return self._count(text, self._prose_rate)

    def count_texts(self, texts: Sequence[str]) -> list[int]:
        return [self._count(t, self._prose_rate) for t in texts]


# ---------------------------------------------------------------------------------------------
# tiktoken, offline

_BLOB = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"
_SHIPPED = ("o200k_base", "cl100k_base")
"""The encodings `encoding_for_model` picks, whose files ship in `compactcli/data/tiktoken/`."""
_CL100K_PREFIXES = (
    "gpt-4-",
    "gpt-3.5",
    "gpt-35",
    "text-embedding-ada",
    "text-embedding-3",
    "davinci-002",
    "babbage-002",
)


def encoding_for_model(model: str | None) -> str:
    """The tiktoken encoding for `model`: `cl100k_base` for GPT-4 (not 4o / 4.1 / 4.5) and
    GPT-3.5, else `o200k_base` (GPT-4o and later, o-series, and the default for other models)."""
    if not model:
        return DEFAULT_ENCODING
    name = _model_name(model)
    if name == "gpt-4" or name.startswith(_CL100K_PREFIXES):
        return "cl100k_base"
    return DEFAULT_ENCODING


def bundled_encoding_dir() -> str:
    """The folder of tiktoken encoding files shipped with compactcli (`_SHIPPED`), each named as
    tiktoken's cache names it (the sha1 of the file's download address)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tiktoken")


def _cache_dirs() -> Iterator[str]:
    """Folders an encoding file is looked for in: the user's tiktoken cache (TIKTOKEN_CACHE_DIR,
    DATA_GYM_CACHE_DIR) first, then the copy shipped with compactcli."""
    for variable in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        value = os.environ.get(variable)
        if value:
            yield value
    yield bundled_encoding_dir()


def _cached_file(name: str) -> str | None:
    """The folder holding encoding `name`'s file, or None when no local copy exists."""
    import hashlib

    key = hashlib.sha1(_BLOB.format(name).encode()).hexdigest()
    for folder in _cache_dirs():
        if os.path.isfile(os.path.join(folder, key)):
            return folder
    return None


@contextlib.contextmanager
def _tiktoken_cache(folder: str) -> Iterator[None]:
    before = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = folder
    try:
        yield
    finally:
        if before is None:
            del os.environ["TIKTOKEN_CACHE_DIR"]
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = before


@functools.cache
def load_encoding(name: str) -> Any:
    """tiktoken encoding `name`, loaded once per process from a local copy; never downloads.

    The copy is read from TIKTOKEN_CACHE_DIR or DATA_GYM_CACHE_DIR when the file is there, else
    from the one shipped with compactcli (`compactcli/data/tiktoken/`).

    Raises `BackendError` when tiktoken is missing or no local copy of the encoding exists.
    """
    if name not in _SHIPPED:
        known = ", ".join(_SHIPPED)
        raise BackendError(
            f"tiktoken encoding {name!r} is not supported offline; use one of {known}"
        )
    folder = _cached_file(name)
    if folder is None:
        raise BackendError(
            f"cannot load the tiktoken encoding {name!r} offline: no local copy (looked in "
            "TIKTOKEN_CACHE_DIR, DATA_GYM_CACHE_DIR and compactcli/data/tiktoken); "
            "use --method heuristic, or put the encoding file in TIKTOKEN_CACHE_DIR"
        )
    try:
        import tiktoken
    except ImportError:
        raise BackendError(
            "--method exact needs tiktoken: pip install tiktoken (or use --method heuristic)"
        ) from None
    try:
        with _tiktoken_cache(folder):
            return tiktoken.get_encoding(name)
    except Exception as error:  # tiktoken raises many kinds; all mean "cannot load"
        raise BackendError(
            f"cannot load the tiktoken encoding {name!r} from {folder}: "
            f"{type(error).__name__}: {error}; use --method heuristic"
        ) from None


class TiktokenCounter(_Costing):
    """Exact tiktoken counts of the text; the encoding is loaded on first use.

    The encoding is `o200k_base` by default and `cl100k_base` for older OpenAI models
    (`encoding_for_model`); tiktoken is imported only when the first text is counted, and the
    encoding is loaded once per process by `load_encoding` (offline: one that cannot be loaded
    raises `BackendError` with what to do instead). Fed many blocks at once (`parts_of`), it
    counts their texts in a row (`batch_chars`), with the same counts as one at a time.
    `loader(name)` returns the encoding (an object with `encode_ordinary`); tests inject one.
    """

    method = "exact"

    def __init__(
        self,
        encoding: str = DEFAULT_ENCODING,
        *,
        costs: Costs = OPENAI.costs,
        loader: Callable[[str], Any] = load_encoding,
    ) -> None:
        self.encoding = encoding
        self.costs = costs
        self._loader = loader
        self._counter: Callable[[str], int] | None = None
        self._pending: list[str] | None = None  # texts `parts_of` collects, to count at once

    def __repr__(self) -> str:
        return f"TiktokenCounter({self.encoding!r})"

    def load(self) -> Callable[[str], int]:
        """Load the encoding now (raises `BackendError` when it cannot be loaded)."""
        if self._counter is None:
            ordinary = self._loader(self.encoding).encode_ordinary
            self._counter = lambda text: len(ordinary(text))
        return self._counter

    def _prose(self, text: str) -> int:
        if self._pending is not None:
            if text:
                self._pending.append(text)
            return 0
        return (self._counter or self.load())(text) if text else 0

    def text_tokens(self, text: str) -> int:
        return self._prose(text)

    batch_chars = 256_000
    """tiktoken takes 5% to 10% less time over a run of texts than over texts taken one by one
    between the parsing of the records they come from, which pushes its tables out of the
    processor's caches (`scripts/bench_estimate.py --exact-on`, on the benchmark shapes)."""

    def parts_of(self, blocks: Sequence[LightBlock]) -> list[tuple[int, int]]:
        """`parts` of each of `blocks`, their texts counted one after another at the end."""
        texts: list[str] = []
        spans: list[tuple[int, int, int]] = []
        self._pending = texts
        try:
            for block in blocks:
                start = len(texts)
                fixed, _ = self.parts(*block)
                spans.append((fixed, start, len(texts)))
        finally:
            self._pending = None
        counts = self.count_texts(texts)
        return [(fixed, sum(counts[start:end])) for fixed, start, end in spans]

    def count_texts(self, texts: Sequence[str]) -> list[int]:
        """Token counts of `texts`, in order, counted in this thread (tiktoken's own thread
        pool is slower than one thread)."""
        count = self._counter or self.load()
        return [count(t) if t else 0 for t in texts]


METHODS = ("auto", "heuristic", "exact", "usage", "calibrated")


def get_counter(
    method: str, *, model: str | None = None, format: str | None = None
) -> HeuristicCounter | TiktokenCounter:
    """The counter for content under `method`: tiktoken for `exact`, else the heuristic
    (which `usage`, `auto` and `calibrated` use for what the agent did not record)."""
    if method not in METHODS:
        raise UsageError(f"unknown method {method!r}; known methods: {', '.join(METHODS)}")
    if method == "exact":
        return TiktokenCounter(encoding_for_model(model), costs=density_for(model, format).costs)
    return HeuristicCounter(density_for(model, format))
