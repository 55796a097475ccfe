"""Summarizers: turn a run of old conversation turns into one structured summary text.

Every summarizer meets `Summarizer`: given a `SummaryRequest` (the messages to summarize, an
earlier summary to update, the focus, a token budget), it returns a `SummaryResult` (the summary
body, which summarizer and model made it, LLM calls, tokens and cost, and the facts it is built
on). The body carries no framing: the summarize stage adds the preamble and writes it in the
format's native summary record. `get_summarizer(name, **settings)` builds `extractive` (offline,
deterministic) or `llm` (through litellm, imported only when asked for). litellm is an optional
dependency (`compactcli[llm]`): `require_llm()` raises `UsageError` naming `LLM_INSTALL` when it
is not installed, and `llm_installed()` says whether it is, neither importing it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict

from compactcli.errors import UsageError
from compactcli.summarizers.facts import Facts
from compactcli.tokens import TokenCounter
from compactcli.transcript import Message

SUMMARIZERS = ("extractive", "llm")

LLM_INSTALL = "pip install 'compactcli[llm]'"
"""The command that installs what the LLM summarizer needs (litellm)."""

REQUEST_HEADING = "## The user's latest request (verbatim; the kept turns continue it)"
"""The heading under which the summarize stage quotes `SummaryRequest.quoted_request` after
the summary body."""


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    """What to summarize and how."""

    messages: tuple[Message, ...]  # the turns being replaced, in context order
    counter: TokenCounter  # counts the budget
    budget_tokens: int  # the summary should fit in this many tokens
    format: str = ""
    previous: str | None = None  # an earlier summary (ours or the agent's) to update
    previous_facts: Facts | None = None  # facts an earlier compactcli summary recorded
    # `previous_facts` are those of a summary of ours that the agent's own compaction replaced
    # (`previous` is the agent's summary, which does not restate them): both are carried on
    facts_replaced: bool = False
    focus: str | None = None  # terms that get the larger share of the budget
    redact: bool = True  # remove secrets from everything sent and written
    # the user's latest prompt, one of `messages`, which the stage quotes verbatim after the
    # summary (under `REQUEST_HEADING`: the turn it opened was cut); the summary refers to it
    # instead of restating it
    quoted_request: Message | None = None
    cwd: str | None = None  # the session's working directory (`Dialect.cwd`)


class ExtractiveDetails(TypedDict):
    """How the extractive summary was fitted to its budget (`extractive.render_facts`): its
    tokens, the budget, whether it is over it, and the items left out per section."""

    summary_tokens: int
    budget_tokens: int
    over_budget: bool
    omitted: dict[str, int]


class SummarizerDetails(TypedDict, total=False):
    """`SummaryResult.details`: what the summarizer that made it reports (the extractive
    summary's fitting; the LLM summarizer's requests, retries, messages cut from what it sent,
    and facts it appended), as a boundary's `summarizer_details` writes it."""

    extractive: ExtractiveDetails
    llm_requests: int
    llm_retries: int
    llm_messages_cut: int
    llm_facts_appended: int


class SummaryMaking(TypedDict):
    """How a summary was made: by which summarizer and model, its calls, tokens and cost, the
    fallback taken and the warnings given (in `SummaryResultDict` and the stage's report)."""

    summarizer: str
    model: str | None
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: float
    fallback: str | None
    warnings: list[str]


class SummaryResultDict(SummarizerDetails, SummaryMaking):
    """`SummaryResult.to_dict()`: how a summary was made, its details beside the rest."""


@dataclass(frozen=True, slots=True)
class SummaryResult:
    """A summary and how it was made."""

    text: str
    summarizer: str  # the one that produced `text` ("extractive" after a fallback)
    facts: Facts
    model: str | None = None
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    fallback: str | None = None  # why the requested summarizer was replaced, if it was
    warnings: tuple[str, ...] = ()
    details: SummarizerDetails = field(default_factory=lambda: SummarizerDetails())

    def to_dict(self) -> SummaryResultDict:
        return {
            "summarizer": self.summarizer,
            "model": self.model,
            "llm_calls": self.llm_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost": self.cost,
            "fallback": self.fallback,
            "warnings": list(self.warnings),
            **self.details,
        }


class Summarizer(Protocol):
    """Anything that can summarize a request."""

    @property
    def name(self) -> str: ...

    def summarize(self, request: SummaryRequest) -> SummaryResult: ...


def llm_installed() -> bool:
    """Whether litellm can be found (looked up without importing it)."""
    import importlib.util

    try:
        return importlib.util.find_spec("litellm") is not None
    except (ImportError, ValueError):
        return False


def require_llm(what: str = "--summarizer llm") -> None:
    """Raise `UsageError` (one line: `what` needs litellm, and `LLM_INSTALL`) when litellm is not
    installed; the commands call it before they read any input."""
    if not llm_installed():
        raise UsageError(f"{what} needs litellm, which is not installed: {LLM_INSTALL}")


def get_summarizer(name: str, **settings: Any) -> Summarizer:
    """The summarizer called `name`, built with `settings` (the LLM one imports lazily;
    `require_llm` first)."""
    if name == "extractive":
        from compactcli.summarizers.extractive import ExtractiveSummarizer

        return ExtractiveSummarizer(**settings)
    if name == "llm":
        require_llm()
        from compactcli.summarizers.llm import LLMSummarizer

        return LLMSummarizer(**settings)
    raise UsageError(f"unknown summarizer {name!r}; known: {', '.join(SUMMARIZERS)}")
