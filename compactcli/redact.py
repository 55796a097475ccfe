"""Secret redaction: `redact(text)` replaces each secret with `[REDACTED:<kind>]`.

What counts as a secret (kinds in brackets):

- private keys: a whole PEM block, `-----BEGIN … PRIVATE KEY-----` to its END line, or to the end
  of the base64 when the END line is missing (`private-key`);
- provider keys and tokens by their documented prefixes: Anthropic `sk-ant-…`
  (`anthropic-key`), OpenAI `sk-…`, `sk-proj-…` (`openai-key`), GitHub `ghp_`/`gho_`/`ghu_`/
  `ghs_`/`ghr_`/`github_pat_` (`github-token`), AWS access key ids `AKIA…`/`ASIA…`
  (`aws-access-key`), Slack `xox?-` tokens and webhook URLs (`slack-token`, `slack-webhook`),
  Google `AIza…` (`google-api-key`), Stripe `sk_live_`/`rk_test_`… (`stripe-key`);
- JSON Web Tokens, three base64url parts, the first two starting `eyJ` (`jwt`);
- `Bearer <token>` and `Basic <credentials>` in headers (`bearer-token`, `basic-auth`);
- the password in a URL, `scheme://user:password@host` (`url-password`; the user stays);
- assignments whose name says secret, environment or config style: `API_KEY=…`,
  `PASSWORD: …`, `"client_secret": "…"`, `export GITHUB_TOKEN=…`, `db_password = '…'`
  (`password`, `token`, `api-key` or `secret` after the name; the name stays). Values that
  are references rather than secrets stay: `$VAR`, `${VAR}`, `<placeholder>`, paths, numbers
  (`max_tokens: 4096`), calls and lookups (`os.environ["X"]`), and `null`/`true`/`none`.

Not secrets, and left alone: hashes (sha256, git ids), UUIDs, base64 payloads (images), file
paths. Long random-looking strings are *not* flagged by entropy: in transcripts that would hit
every hash, id and image.

Why home-made patterns rather than a library: detect-secrets (Yelp, 1.5.0) was measured here.
It is a line scanner for repositories that reports *which line* holds a secret: it gives no
spans, and for some plugins the value it reports is only the matched prefix (`ghp` for a
GitHub token), so replacing what it reports leaves the secret in place. Its private-key plugin
finds the BEGIN line, not the block. It has no Anthropic key or Bearer rule, its entropy
plugins flag hashes and base64, it costs about 0.15 s to import (requests, PyYAML) and it
scanned about 1.3 MB/s with nine plugins, where compactcli redacts whole LLM inputs of several
megabytes. The patterns here follow the same published prefixes (and those of gitleaks'
rule set), run as a few compiled regular expressions, each skipped at once when its literal
hint is absent from the text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from compactcli.lazy_pattern import compile_lazily

__all__ = ["SECRET_KINDS", "redact", "redact_count"]


def _mark(kind: str) -> str:
    return f"[REDACTED:{kind}]"


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    hints: tuple[str, ...]  # literal substrings one of which must be present (case-sensitive)
    replace: Callable[[re.Match[str]], str] | None = None


_PEM = compile_lazily(
    r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY((?: BLOCK)?)-----"
    r"(?:.*?-----END \1PRIVATE KEY\2-----|(?:(?:\\[nr]|\s)+[A-Za-z0-9+/=]{8,})*)",
    re.DOTALL,
)
_ANTHROPIC = compile_lazily(r"\bsk-ant-[a-z]{2,8}\d{0,3}-[A-Za-z0-9_-]{20,}")
_OPENAI = compile_lazily(
    r"\bsk-(?:proj-|svcacct-|admin-|None-)?(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}"
)
_GITHUB = compile_lazily(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})\b")
_AWS = compile_lazily(r"\b(?:AKIA|ASIA|ABIA|ACCA|AROA|AIDA)[A-Z0-9]{16}\b")
_SLACK_TOKEN = compile_lazily(r"\bxox[abposre]-[A-Za-z0-9-]{10,}")
_SLACK_HOOK = compile_lazily(r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]+")
_GOOGLE = compile_lazily(r"\bAIza[0-9A-Za-z_-]{35}\b")
_STRIPE = compile_lazily(r"\b[rsp]k_(?:live|test)_[A-Za-z0-9]{16,}\b")
_JWT = compile_lazily(r"\beyJ[A-Za-z0-9_-]{6,}\.eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}")
_BEARER = compile_lazily(r"\b([Bb]earer\s+)([A-Za-z0-9._~+/-]{16,}=*)")
_BASIC = compile_lazily(r"\b([Bb]asic\s+)([A-Za-z0-9+/]{12,}={0,2})(?![A-Za-z0-9+/=])")
_URL_PASSWORD = compile_lazily(r"\b([a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@\"'<>]+:)([^\s@/\"'<>]+)(@)")
_ASSIGNMENT_SOURCE = (
    r"((?:api[_-]?key|apikey|secret|token|passwd|password|pwd|credentials?|"
    r"private[_-]?key|access[_-]?key|auth[_-]?key)[A-Za-z0-9_]*)"
    r"(\"?'?\s*[:=]\s*)(\"|')?([^\s\"'`,;{}\[\]()<>]{3,})"
)
_ASSIGNMENT = compile_lazily(_ASSIGNMENT_SOURCE, re.IGNORECASE)
_ASSIGNMENT_LOWER = compile_lazily(_ASSIGNMENT_SOURCE)
"""`_ASSIGNMENT` for lowercased ASCII text: it finds the same spans, several times faster."""
_NOT_A_VALUE = compile_lazily(
    r"^(?:[$/.~%@*\\]|-?\d+(?:\.\d+)?$|(?:null|none|true|false|nil|undefined|"
    r"string|str|int|bool|optional|required|xxx+|\*+|\.\.\.)$)",
    re.IGNORECASE,
)
_REFERENCE = compile_lazily(r"[A-Za-z_]\w*(?:\.\w+)+")  # os.environ, config.api.key


def _assignment(match: re.Match[str]) -> str:
    name, sep, quote, value = match.group(1), match.group(2), match.group(3) or "", match.group(4)
    after = match.string[match.end() : match.end() + 1]
    if (
        _NOT_A_VALUE.search(value)
        or (not quote and after in ("(", "["))
        or (not quote and _REFERENCE.fullmatch(value))
    ):
        return match.group(0)
    lowered = name.lower()
    if "pass" in lowered or "pwd" in lowered:
        kind = "password"
    elif "token" in lowered:
        kind = "token"
    elif "key" in lowered:
        kind = "api-key"
    else:
        kind = "secret"
    return f"{name}{sep}{quote}{_mark(kind)}"


_RULES: tuple[_Rule, ...] = (
    _Rule("private-key", _PEM, ("PRIVATE KEY",)),
    _Rule("anthropic-key", _ANTHROPIC, ("sk-ant-",)),
    _Rule("openai-key", _OPENAI, ("sk-",)),
    _Rule("github-token", _GITHUB, ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    _Rule("aws-access-key", _AWS, ("AKIA", "ASIA", "ABIA", "ACCA", "AROA", "AIDA")),
    _Rule("slack-webhook", _SLACK_HOOK, ("hooks.slack.com",)),
    _Rule(
        "slack-token", _SLACK_TOKEN, ("xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xoxe-")
    ),
    _Rule("google-api-key", _GOOGLE, ("AIza",)),
    _Rule("stripe-key", _STRIPE, ("_live_", "_test_")),
    _Rule("jwt", _JWT, (".eyJ",)),
    _Rule(
        "bearer-token",
        _BEARER,
        ("earer",),
        lambda m: m.group(1) + _mark("bearer-token"),
    ),
    _Rule("basic-auth", _BASIC, ("asic",), lambda m: m.group(1) + _mark("basic-auth")),
    _Rule(
        "url-password",
        _URL_PASSWORD,
        ("://",),
        lambda m: m.group(1) + _mark("url-password") + m.group(3),
    ),
    _Rule("secret", _ASSIGNMENT, (), _assignment),
)

SECRET_KINDS: tuple[str, ...] = (
    *(rule.kind for rule in _RULES if rule.kind != "secret"),
    "password",
    "token",
    "api-key",
    "secret",
)
"""Every `<kind>` a `[REDACTED:<kind>]` marker can name."""

_ASSIGNMENT_HINTS = compile_lazily(r"(?i)key|secret|token|pass|pwd|credential")


_HINT_WORDS = ("key", "secret", "token", "pass", "pwd", "credential")
"""`_ASSIGNMENT_HINTS` as words to find in lowercased ASCII text."""


def _assignment_hint(text: str) -> bool:
    """Whether `text` holds a word `_ASSIGNMENT` needs (any case)."""
    if text.isascii():
        lowered = text.lower()
        return any(word in lowered for word in _HINT_WORDS)
    return _ASSIGNMENT_HINTS.search(text) is not None


def _assignments(text: str) -> tuple[str, int] | None:
    """The `secret` rule on ASCII `text`: the spans found on its lowercased copy (the same as
    a case-blind search finds), each matched again case-blind in place for `_assignment`.
    None should a span not match again (then the case-blind search runs instead)."""
    parts: list[str] = []
    at = count = 0
    for found in _ASSIGNMENT_LOWER.finditer(text.lower()):
        match = _ASSIGNMENT.match(text, found.start())
        if match is None or match.end() != found.end():
            return None
        replaced = _assignment(match)
        if replaced != match.group(0):
            parts.append(text[at : match.start()])
            parts.append(replaced)
            at = match.end()
            count += 1
    if not count:
        return text, 0
    parts.append(text[at:])
    return "".join(parts), count


def redact(text: str) -> str:
    """`text` with every secret replaced by `[REDACTED:<kind>]`."""
    return redact_count(text)[0]


def redact_count(text: str) -> tuple[str, int]:
    """`redact(text)` and how many secrets it replaced."""
    total = 0
    for rule in _RULES:
        if rule.hints:
            for hint in rule.hints:  # (a loop, not any(): this runs for every rule and text)
                if hint in text:
                    break
            else:
                continue
        elif not _assignment_hint(text):
            continue
        done = _assignments(text) if rule.pattern is _ASSIGNMENT and text.isascii() else None
        if done is not None:
            text, count = done
        elif rule.replace is None:
            text, count = rule.pattern.subn(_mark(rule.kind), text)
        else:
            before = text.count("[REDACTED:")
            text = rule.pattern.sub(rule.replace, text)
            count = text.count("[REDACTED:") - before
        total += count
    return text, total
