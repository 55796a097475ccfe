"""The LLM summarizer: a structured summary written by any model litellm reaches.

`LLMSummarizer(model, api_base=..., api_key=..., timeout=..., retries=...)` satisfies
`Summarizer`: it asks the model for the fixed-heading template (`compactcli.summarizers.prompt`),
with the extractive summarizer's facts as ground truth and its summary as the fallback when the
backend fails, and raises `BackendError` (exit 4) only for settings to fix. A `CircuitBreaker`
stops calling a backend that keeps failing. litellm is imported only when the first request is
summarized.
"""

from __future__ import annotations

import email.utils
import importlib
import os
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import Any

from compactcli.errors import BackendError, UsageError
from compactcli.limits import model_limits
from compactcli.redact import redact
from compactcli.summarizers import Summarizer, SummaryRequest, SummaryResult, get_summarizer
from compactcli.summarizers.calls import note_call
from compactcli.summarizers.prompt import (
    Part,
    answer_problem,
    build_messages,
    clean_answer,
    cut_middle,
    dropped_facts,
    focus_terms,
    render_facts,
    render_message,
)
from compactcli.tokens import TokenCounter

__all__ = ["BREAKER", "BREAKER_THRESHOLD", "CircuitBreaker", "LLMSummarizer"]

BREAKER_THRESHOLD = 3
"""Consecutive failed requests after which a backend is no longer called."""

NO_KEY = "no-key"
"""The key sent to a server named by `api_base` when the provider's key variable is unset
(local servers such as vLLM or llama.cpp accept any key; a real provider answers 401)."""

_MARGIN = 0.9  # share of the computed input room used: token counts are estimates
_FRAMING_TOKENS = 64  # chat framing around the two messages


class CircuitBreaker:
    """Counts consecutive failed requests per (model, api_base); open at `threshold`."""

    def __init__(self, threshold: int = BREAKER_THRESHOLD) -> None:
        self.threshold = threshold
        self._failures: dict[tuple[str, str | None], int] = {}
        self._lock = threading.Lock()

    def failures(self, key: tuple[str, str | None]) -> int:
        with self._lock:
            return self._failures.get(key, 0)

    def is_open(self, key: tuple[str, str | None]) -> bool:
        return self.failures(key) >= self.threshold

    def failed(self, key: tuple[str, str | None]) -> int:
        with self._lock:
            self._failures[key] = self._failures.get(key, 0) + 1
            return self._failures[key]

    def succeeded(self, key: tuple[str, str | None]) -> None:
        with self._lock:
            self._failures.pop(key, None)

    def reset(self) -> None:
        """Forget every failure (a new batch)."""
        with self._lock:
            self._failures.clear()


BREAKER = CircuitBreaker()
"""The process-wide breaker every `LLMSummarizer` uses unless given its own."""


class _Failure(Exception):
    """A request that produced no usable summary; the extractive summary takes over."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class _Tally:
    calls: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    requests: int = 0  # summary requests made (one per part)
    waits: list[float] = field(default_factory=list)


def _import_litellm() -> ModuleType:
    """litellm, imported with `LITELLM_LOCAL_MODEL_COST_MAP` set so it never fetches its price
    table.
    """
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        litellm: Any = importlib.import_module("litellm")
    except ImportError as exc:  # the command line checks first (`require_llm`)
        raise BackendError(
            f"the llm summarizer needs litellm, which cannot be imported: {exc}"
        ) from None
    litellm.suppress_debug_info = True  # no "Give Feedback" banner on standard output
    module: ModuleType = litellm
    return module


_PREFIX = re.compile(r"^(?:litellm\.\w+:\s*)?(?:\w+Error:\s*)?(?:\w+Exception\s*-\s*)?")


def _message(exc: BaseException, limit: int = 160) -> str:
    """The provider's own words from a litellm exception, on one line."""
    text = str(getattr(exc, "message", "") or exc)
    text = _PREFIX.sub("", text.strip())
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _connection_failure(exc: BaseException) -> str | None:
    """What the connection itself said, when a failure comes from one (litellm reports a
    refused connection as an HTTP 500)."""
    found: BaseException | None = None
    link: BaseException | None = exc
    for _ in range(16):
        link = link.__cause__ or link.__context__ if link is not None else None
        if link is None:
            break
        if isinstance(link, ConnectionError) or type(link).__name__ in (
            "ConnectError",
            "APIConnectionError",
        ):
            found = link
    return " ".join(str(found).split()) if found is not None else None


def _retry_after(exc: BaseException) -> float | None:
    """Seconds a 429 asks to wait (Retry-After, retry-after-ms, or an HTTP date)."""
    headers: Any = getattr(exc, "litellm_response_headers", None)
    if headers is None:
        headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


_PROVIDER_KEYS = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "groq": "GROQ_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
}
"""The one key variable of the providers whose key litellm reads from that variable alone: a
model named `provider/...` of these, with no key and no `--api-base`, is refused before litellm
is imported (seconds)."""


def missing_key(model: str, api_key: str | None, api_base: str | None) -> str | None:
    """The variable a model named `provider/name` of `_PROVIDER_KEYS` needs and that is not
    set (no key given, no local server), else None (litellm's own check decides)."""
    import os

    provider, slash, _ = model.partition("/")
    variable = _PROVIDER_KEYS.get(provider) if slash else None
    if variable is None or api_key or api_base is not None or os.environ.get(variable):
        return None
    return variable


def _no_key(model: str, missing: Sequence[str]) -> BackendError:
    return BackendError(
        f"no API key for {model}: set {', '.join(missing)} (or use --api-base for a local server)"
    )


def _key_variables(names: Sequence[str]) -> list[str]:
    """The credential variables among litellm's missing settings (not bases or regions)."""
    return [n for n in names if any(w in n for w in ("KEY", "TOKEN", "SECRET"))]


def _tokens_to_chars(text: str, tokens: int, counter: TokenCounter) -> int:
    """How many characters of `text` make about `tokens` tokens."""
    total = counter.text_tokens(text)
    if total <= tokens:
        return len(text)
    return max(0, int(len(text) * tokens / max(total, 1)))


class LLMSummarizer:
    """A summarizer that asks a model, through litellm, for the fixed-heading summary.

    For each request it:

    1. runs the extractive summarizer first: its facts are given to the model as ground truth,
       and its summary is the fallback;
    2. renders the turns as text (`compactcli.summarizers.prompt`), secrets redacted
       (`compactcli.redact`) unless `request.redact` is false, and fits them to the model's
       window (`compactcli.limits`; `_plan`): long messages keep their head and tail around a
       marked omitted middle, cut harder until the request fits, and when even that is too large
       the turns are sent in parts, each part's summary carried into the next as the summary to
       update (redacted, as everything sent is);
    3. asks for the fixed-heading template (`prompt.HEADINGS`), strips an `<analysis>` scratchpad
       and rejects an empty, headless or incomplete answer;
    4. appends the files, errors and user constraints the answer dropped
       (`prompt.dropped_facts`), and redacts the result.

    Failures: 429 and 5xx (waiting what Retry-After says, capped at `max_retry_wait`), timeouts,
    connection errors and unusable answers (among them one far longer than the `max_tokens` asked
    for: more than 16 characters a token) are retried `retries` times with exponential backoff;
    after that, or on any other provider error, the extractive summary is returned with
    `fallback` set to the reason and a warning. A missing API key, an unknown provider, a model
    the server does not know or a rejected key (HTTP 401 or 403, whatever exception litellm makes
    of it) raise `BackendError` instead: falling back would hide a setting to fix. After
    `BREAKER_THRESHOLD` consecutive failed requests with the same model and server in one
    process, the backend is not called again and requests fall back at once (`CircuitBreaker`).
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        retries: int = 2,
        backoff: float = 1.0,
        max_retry_wait: float = 60.0,
        context_window: int | None = None,
        max_message_tokens: int = 4_000,
        min_message_tokens: int = 256,
        max_parts: int = 8,
        temperature: float | None = None,
        breaker: CircuitBreaker | None = None,
        extractive: Summarizer | None = None,
    ) -> None:
        if not model or not model.strip():
            raise UsageError("the llm summarizer needs a model: pass --model (or COMPACTCLI_MODEL)")
        if retries < 0 or timeout <= 0 or backoff < 0 or max_parts < 1:
            raise UsageError("retries and backoff must be at least 0, timeout above 0")
        self.model = model.strip()
        self.api_base = api_base or None
        self.api_key = api_key or None
        self.timeout = float(timeout)
        self.retries = retries
        self.backoff = backoff
        self.max_retry_wait = max_retry_wait
        self.context_window = context_window
        self.max_message_tokens = max_message_tokens
        self.min_message_tokens = min_message_tokens
        self.max_parts = max_parts
        self.temperature = temperature
        self.breaker = breaker if breaker is not None else BREAKER
        self._extractive = extractive
        self._checked_key: str | None = None
        self._checked = False

    @property
    def name(self) -> str:
        return "llm"

    def __repr__(self) -> str:
        base = f", api_base={self.api_base!r}" if self.api_base else ""
        return f"LLMSummarizer({self.model!r}{base})"

    @property
    def _breaker_key(self) -> tuple[str, str | None]:
        return (self.model, self.api_base)

    # -----------------------------------------------------------------------------------------

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        if self._extractive is None:
            self._extractive = get_summarizer("extractive")
        base = self._extractive.summarize(request)
        tally = _Tally()
        key = self._breaker_key
        if self.breaker.is_open(key):
            reason = (
                f"not called after {self.breaker.failures(key)} consecutive failures "
                f"of {self.model}"
            )
            return self._fallback(base, tally, reason)
        variable = missing_key(self.model, self.api_key, self.api_base)
        if variable is not None:
            raise _no_key(self.model, [variable])
        litellm = _import_litellm()
        api_key = self._check(litellm)
        try:
            answer, cut = self._summarize(request, base, litellm, api_key, tally)
        except _Failure as failure:
            self.breaker.failed(key)
            calls = f"{tally.calls} call{'s' if tally.calls != 1 else ''}"
            return self._fallback(base, tally, f"{failure.reason} ({calls})")
        self.breaker.succeeded(key)
        appended, count = dropped_facts(answer, base.facts)
        text = f"{answer}\n\n{appended}" if appended else answer
        if request.redact:
            text = redact(text)
        return SummaryResult(
            text=text,
            summarizer="llm",
            facts=base.facts,
            model=self.model,
            llm_calls=tally.calls,
            prompt_tokens=tally.prompt_tokens,
            completion_tokens=tally.completion_tokens,
            cost=tally.cost,
            details={
                "llm_requests": tally.requests,
                "llm_retries": tally.retries,
                "llm_messages_cut": cut,
                "llm_facts_appended": count,
            },
        )

    def _fallback(self, base: SummaryResult, tally: _Tally, reason: str) -> SummaryResult:
        warning = f"llm summarizer: {reason}; the extractive summary was used"
        return replace(
            base,
            model=self.model,
            llm_calls=tally.calls,
            prompt_tokens=tally.prompt_tokens,
            completion_tokens=tally.completion_tokens,
            cost=tally.cost,
            fallback=reason,
            warnings=(*base.warnings, warning),
            details={**base.details, "llm_retries": tally.retries},
        )

    # -----------------------------------------------------------------------------------------
    # settings that cannot work: one line, exit 4

    def _check(self, litellm: ModuleType) -> str | None:
        """The key to send; `BackendError` for an unknown provider or a missing key."""
        if self._checked:
            return self._checked_key
        try:
            litellm.get_llm_provider(self.model, api_base=self.api_base)
        except Exception:
            raise BackendError(
                f"unknown model {self.model!r}: litellm cannot tell its provider; name it as "
                "provider/model, e.g. openai/gpt-4o-mini, anthropic/claude-haiku-4-5 or "
                "ollama/llama3"
            ) from None
        key = self.api_key
        if key is None:
            try:
                found = litellm.validate_environment(model=self.model, api_base=self.api_base)
            except Exception:
                found = {}
            missing = _key_variables(list(found.get("missing_keys", ())))
            if missing and self.api_base is None:
                raise _no_key(self.model, missing)
            if missing:
                key = NO_KEY
        self._checked_key = key
        self._checked = True
        return key

    # -----------------------------------------------------------------------------------------
    # the input, fitted to the window

    def _summarize(
        self,
        request: SummaryRequest,
        base: SummaryResult,
        litellm: ModuleType,
        api_key: str | None,
        tally: _Tally,
    ) -> tuple[str, int]:
        counter = request.counter

        def clean(text: str) -> str:
            return redact(text) if request.redact else text

        limits = model_limits(self.model, context_window=self.context_window)
        budget = max(request.budget_tokens, 1)
        max_tokens = min(limits.max_output, max(1_024, 2 * budget + 1_024))
        room = int((limits.context_window - max_tokens) * _MARGIN)
        if room < 4 * self.min_message_tokens:
            raise _Failure(
                f"the window of {self.model} ({limits.context_window:,} tokens) is too small"
            )
        focus = clean(request.focus) if request.focus and request.focus.strip() else None
        facts = clean(render_facts(base.facts))
        facts = cut_middle(facts, _tokens_to_chars(facts, room // 4, counter))
        previous = clean(request.previous) if request.previous else None
        if previous:
            previous = cut_middle(previous, _tokens_to_chars(previous, room // 4, counter))
        quoted = request.quoted_request is not None
        frame = build_messages(
            conversation="",
            facts=facts,
            budget_tokens=budget,
            previous=previous,
            focus=focus,
            quoted_request=quoted,
        )
        fixed = sum(counter.text_tokens(m["content"]) for m in frame) + _FRAMING_TOKENS

        texts = [clean(render_message(m)) for m in request.messages]
        sizes = counter.count_texts(texts)
        terms = focus_terms(request.focus)
        weights = [2 if terms and any(t in text.lower() for t in terms) else 1 for text in texts]

        carried = max(counter.text_tokens(previous or ""), max_tokens)
        caps, parts = _plan(
            sizes,
            weights,
            whole=room - fixed,
            per_part=room - (fixed - counter.text_tokens(previous or "") + carried),
            max_cap=self.max_message_tokens,
            min_cap=self.min_message_tokens,
            max_parts=self.max_parts,
        )
        if not parts:
            raise _Failure(
                f"the window of {self.model} ({limits.context_window:,} tokens) is too small "
                "to summarize in parts"
            )
        cut = 0
        rendered: list[str] = []
        for text, size, limit in zip(texts, sizes, caps, strict=True):
            if size > limit:
                text = cut_middle(text, _tokens_to_chars(text, limit, counter))
                cut += 1
            rendered.append(text)

        running = previous
        answer = ""
        for number, indices in enumerate(parts, start=1):
            part = Part(number, len(parts))
            conversation = "\n\n".join(rendered[i] for i in indices)
            messages = build_messages(
                conversation=conversation,
                facts=facts,
                budget_tokens=budget,
                previous=running,
                focus=focus,
                part=part,
                quoted_request=quoted,
            )
            answer = self._ask(litellm, messages, max_tokens, api_key, tally)
            running = clean(answer)  # sent with the next part: redacted like all that is sent
        return answer, cut

    # -----------------------------------------------------------------------------------------
    # one request, with retries

    def _ask(
        self,
        litellm: ModuleType,
        messages: list[dict[str, str]],
        max_tokens: int,
        api_key: str | None,
        tally: _Tally,
    ) -> str:
        tally.requests += 1
        options: dict[str, Any] = {}
        if self.temperature is not None:
            options["temperature"] = self.temperature
        reason = "no answer"
        wait = 0.0
        for attempt in range(self.retries + 1):
            if attempt:
                tally.retries += 1
                tally.waits.append(wait)
                time.sleep(wait)
            tally.calls += 1
            note_call()
            try:
                response = litellm.completion(
                    model=self.model,
                    messages=messages,
                    api_base=self.api_base,
                    api_key=api_key,
                    timeout=self.timeout,
                    max_tokens=max_tokens,
                    num_retries=0,  # retries are ours, so each one is counted and logged
                    max_retries=0,
                    **options,
                )
            except Exception as exc:
                reason, retry = self._classify(litellm, exc)
                if not retry:
                    raise _Failure(reason) from None
                asked = _retry_after(exc)  # 429s, and 503s that say when to come back
                wait = self._backoff(attempt) if asked is None else asked
                wait = min(wait, self.max_retry_wait)
                continue
            self._count(litellm, response, tally)
            answer = clean_answer(_content(response))
            problem = _too_large(answer, max_tokens) or answer_problem(answer)
            if problem is None:
                return answer
            reason = problem
            wait = min(self._backoff(attempt), self.max_retry_wait)
        raise _Failure(reason)

    def _backoff(self, attempt: int) -> float:
        return float(self.backoff * (2**attempt))

    def _classify(self, litellm: ModuleType, exc: Exception) -> tuple[str, bool]:
        """(reason, retry?) for a failed call; `BackendError` for settings to fix."""
        status = getattr(exc, "status_code", None)
        message = _message(exc)
        where = f" at {self.api_base}" if self.api_base else ""
        rejected = isinstance(exc, (litellm.AuthenticationError, litellm.PermissionDeniedError))
        if rejected or status in (401, 403) or "Missing credentials" in message:
            raise BackendError(
                f"{self.model}{where} refused the API key (HTTP {status}): {message}; "
                "check the provider's key variable"
            ) from None
        if isinstance(exc, litellm.NotFoundError):
            raise BackendError(f"model {self.model} not found{where}: {message}") from None
        if isinstance(exc, litellm.BadRequestError) and "LLM Provider NOT provided" in message:
            raise BackendError(f"unknown model {self.model!r}: {message}") from None
        if isinstance(exc, litellm.Timeout):
            return f"no answer within {self.timeout:g} s", True
        if isinstance(exc, litellm.RateLimitError):
            return f"rate limited (HTTP 429): {message}", True
        if isinstance(exc, litellm.ContextWindowExceededError):
            return f"input too large for {self.model}: {message}", False
        refused = _connection_failure(exc)
        if isinstance(exc, litellm.APIConnectionError) or refused is not None:
            return f"cannot reach {self.model}{where}: {refused or message}", True
        if isinstance(status, int) and status >= 500:
            return f"HTTP {status}: {message}", True
        if isinstance(status, int):
            return f"HTTP {status}: {message}", False
        return f"{type(exc).__name__}: {message}", False

    def _count(self, litellm: ModuleType, response: Any, tally: _Tally) -> None:
        usage = getattr(response, "usage", None)
        tally.prompt_tokens += int(getattr(usage, "prompt_tokens", 0) or 0)
        tally.completion_tokens += int(getattr(usage, "completion_tokens", 0) or 0)
        try:
            cost = litellm.completion_cost(completion_response=response, model=self.model)
        except Exception:  # a model litellm has no price for
            cost = 0.0
        tally.cost += float(cost or 0.0)


_MARKER_TOKENS = 8  # the omitted-middle marker and the blank line between messages


def _plan(
    sizes: Sequence[int],
    weights: Sequence[int],
    *,
    whole: int,
    per_part: int,
    max_cap: int,
    min_cap: int,
    max_parts: int,
) -> tuple[list[int], list[list[int]]]:
    """Each message's token limit, and the messages of each request (empty: cannot fit).

    One request when the messages fit in `whole` tokens with each cut to a cap between
    `max_cap` and `min_cap` (the largest that fits; focus messages, weight 2, get twice it).
    Otherwise several requests of at most `per_part` tokens, messages cut to `min_cap`, or
    less when that would need more than `max_parts` requests.
    """
    indices = list(range(len(sizes)))

    def total(cap: int) -> int:
        return sum(
            min(size, cap * w) + _MARKER_TOKENS for size, w in zip(sizes, weights, strict=True)
        )

    if total(max_cap) <= whole:
        return [max_cap * w for w in weights], [indices]
    if total(min_cap) <= whole:
        low, high = min_cap, max_cap
        while low < high:  # the largest cap that fits in one request
            middle = (low + high + 1) // 2
            if total(middle) <= whole:
                low = middle
            else:
                high = middle - 1
        return [low * w for w in weights], [indices]
    if per_part < min_cap:
        return [], []
    cap = min(min_cap, per_part // 2)
    while cap > 32 and total(cap) > per_part * max_parts:
        cap = max(32, cap * 3 // 4)
    limits = [min(cap * w, per_part - _MARKER_TOKENS) for w in weights]
    parts: list[list[int]] = []
    current: list[int] = []
    used = 0
    for i, (size, limit) in enumerate(zip(sizes, limits, strict=True)):
        need = min(size, limit) + _MARKER_TOKENS
        if current and used + need > per_part:
            parts.append(current)
            current, used = [], 0
        current.append(i)
        used += need
    parts.append(current)
    return limits, parts


_MAX_CHARS_PER_TOKEN = 16
"""More characters than this per token of `max_tokens` is no answer a model kept to that limit
could give (text runs at about four)."""


def _too_large(answer: str, max_tokens: int) -> str | None:
    """Why `answer` is too large to use as the summary, or None."""
    if len(answer) <= max_tokens * _MAX_CHARS_PER_TOKEN:
        return None
    return f"answer too large to use ({len(answer):,} characters for {max_tokens:,} tokens)"


def _content(response: Any) -> str | None:
    """The text of the first choice, or None when there is none."""
    choices = getattr(response, "choices", None)
    if not choices:
        return None
    message = getattr(choices[0], "message", None)
    content = getattr(message, "content", None)
    return content if isinstance(content, str) else None
