"""Secret redaction: `redact(text)` replaces each secret in a text with `[REDACTED:<kind>]`.

Three rule sets run in turn, each on what the one before left: compactcli's own rules for what
transcripts hold most (`_RULES`), gitleaks' rule set (`compactcli.gitleaks`), and assignments
whose name says secret (`_assignments`). Hashes, git ids, UUIDs, base64 payloads and paths are
not secrets, and no string is flagged by entropy alone. A span that overlaps a marker already in
the text is left, so redacting twice changes nothing. `redact_kinds` also counts what it
replaced, `redact_named` redacts a JSON field's value, and `secret_kinds()` lists every kind a
marker can name.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from compactcli import gitleaks
from compactcli.lazy_pattern import compile_lazily

__all__ = [
    "MARKER",
    "SECRET_KINDS",
    "Counts",
    "redact",
    "redact_count",
    "redact_kinds",
    "redact_named",
    "secret_kinds",
]

Counts = dict[str, int]
"""How many secrets of each kind were replaced."""

MARKER = compile_lazily(r"\[REDACTED:[a-z0-9-]+\]")
"""A marker `redact` writes."""


def _mark(kind: str) -> str:
    return f"[REDACTED:{kind}]"


def _count(counts: Counts, kind: str, number: int = 1) -> None:
    counts[kind] = counts.get(kind, 0) + number


Replace = Callable[[re.Match[str], Counts], str]


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    hints: tuple[str, ...]  # literal substrings one of which must be present (none: always run)
    replace: Replace | None = None  # None: the whole match becomes the marker
    lowered: bool = False  # the hints are looked for in the lowercased text
    secret: int = 0  # the group that holds the secret (0: the whole match)


def _keep_group(before: int, kind: str, after: int | None = None) -> Replace:
    """A replacement keeping group `before` (and `after`) and marking what is between."""

    def replace(match: re.Match[str], counts: Counts) -> str:
        _count(counts, kind)
        tail = (match.group(after) or "") if after is not None else ""
        return (match.group(before) or "") + _mark(kind) + tail

    return replace


_VALUE = r"('[^'\n]*'|\"[^\"\n]*\"|[^\s'\"|;&<>()]+)"
"""A command-line argument: quoted, or up to a blank or a shell operator."""

_PEM = compile_lazily(
    r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY((?: BLOCK)?)-----"
    r"(?:.*?-----END \1PRIVATE KEY\2-----|(?:(?:\\[nr]|\s)+[A-Za-z0-9+/=]{8,})*)",
    re.DOTALL,
)
_ANTHROPIC = compile_lazily(r"\bsk-ant-[a-z]{2,8}\d{0,3}-[A-Za-z0-9_-]{20,}")
_OPENAI = compile_lazily(
    r"sk-(?<!\wsk-)(?:proj-|svcacct-|admin-|None-)?(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}"
)
_GITHUB = compile_lazily(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})\b")
_AWS = compile_lazily(r"\b(?:AKIA|ASIA|ABIA|ACCA|AROA|AIDA)[A-Z0-9]{16}\b")
_SLACK_TOKEN = compile_lazily(r"\bxox[abposre]-[A-Za-z0-9-]{10,}")
_SLACK_HOOK = compile_lazily(r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]+")
_GOOGLE = compile_lazily(r"\bAIza[0-9A-Za-z_-]{35}")
_STRIPE = compile_lazily(r"\b(?:[rsp]k_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,})\b")
_TWILIO = compile_lazily(
    r"AC(?<!\wAC)[0-9a-f]{32}\b(?:(\\?[\"']?[ \t]*[,:][ \t]*\\?[\"']?)([0-9a-f]{32})\b)?"
)
_HUGGINGFACE = compile_lazily(r"\bhf_[A-Za-z0-9]{30,}\b")
_TELEGRAM = compile_lazily(r"(?<!\d)\d{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])")
_DISCORD = compile_lazily(
    r"[MNO](?<!\w[MNO])(?=[A-Za-z0-9]{0,25}\d)[A-Za-z0-9]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}"
    r"(?![A-Za-z0-9_-])"
)
_JWT = compile_lazily(r"\beyJ[A-Za-z0-9_-]{6,}\.eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}")
_BEARER = compile_lazily(r"([Bb]earer(?<!\w[Bb]earer)\s+)([A-Za-z0-9._~+/-]{16,}=*)")
_BASIC = compile_lazily(r"([Bb]asic(?<!\w[Bb]asic)\s+)([A-Za-z0-9+/]{12,}={0,2})(?![A-Za-z0-9+/=])")
_AUTHORIZATION = compile_lazily(
    r"(uthorization\\?[\"']?\s*[:=]\s*\\?[\"']?"
    r"(?:(?:[Tt]oken|[Bb]ot|[Aa]pi-?[Kk]ey|[Kk]ey|SSWS|[Dd]igest|[Nn]egotiate)\s+)?)"
    r"((?=[A-Za-z._~+/=:-]*\d)[A-Za-z0-9._~+/=:-]{16,})"
)
_MYSQL = compile_lazily(
    r"\b((?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mysqlsh|mariadb|"
    r"mariadb-dump|mariadb-admin)\b[^\n|;&]{0,300}?[ \t]-p)" + _VALUE
)
_SSHPASS = compile_lazily(r"\b(sshpass[ \t]+-p[ \t]*)" + _VALUE)
_CURL_USER = compile_lazily(
    r"(curl\b(?<!\wcurl)[^\n|;&]{0,300}?[ \t](?:-u|--user)(?:[ \t]*=?[ \t]*)([\"']?)[^\s:\"'@]+:)"
    r"([^\s\"'@]+)(\2)"
)
_OPTION = compile_lazily(
    r"(--(?<![\w-]--)(?:password|passwd|pass|token|api-key|apikey|secret|client-secret|"
    r"auth-token|access-token)[ \t]+)('[^'\n]*'|\"[^\"\n]*\"|[^\s'\"|;&<>()-][^\s'\"|;&<>()]*)"
)
_AZURE = compile_lazily(
    r"\b((?:AccountKey|SharedAccessKey|SharedSecretValue)[ \t]*=[ \t]*)([A-Za-z0-9+/]{20,}={0,2})"
)
_AZURE_SAS = compile_lazily(r"([?&]sig=)([A-Za-z0-9%+/=]{20,})")
_AWS_SECRET = compile_lazily(
    r"(?i)(aws[ _-]?secret[ _-]?access[ _-]?key|secret[ _-]?access[ _-]?key)"
    r"([^\n:=]{0,40}?[:=]\s*\\?[\"']?)([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
)
_URL_PASSWORD = compile_lazily(r"(://[^\s:/@\"'<>]*:)([^\s@/\"'<>]+)(@)")
_URL_KEY = compile_lazily(
    r"([?&](?:key|token|access[_-]?token|auth[_-]?token|auth|secret|signature)=)"
    r"((?=[A-Za-z0-9._~%+/-]*\d)[A-Za-z0-9._~%+/-]{16,})"
)

_NAME_WORDS = (
    r"api[_-]?key|apikey|secret|token|passwd|password|pwd|credentials?|private[_-]?key|"
    r"access[_-]?key|auth[_-]?key|encryption[_-]?key|signing[_-]?key|master[_-]?key|"
    r"license[_-]?key|hmac[_-]?key|jwt[_-]?key|consumer[_-]?key|client[_-]?key|"
    r"webhook[_-]?key|pass(?<![a-z0-9]pass)(?:phrase)?(?![a-z0-9])"
)
_ASSIGNMENT_SOURCE = (
    r"((?:" + _NAME_WORDS + r")[A-Za-z0-9_]*)"
    r"(\\?\"?'?\s*[:=]\s*)(\\?[\"'])?([^\s\"'`,;{}\[\]()<>\\]{3,})"
)
_ASSIGNMENT = compile_lazily(_ASSIGNMENT_SOURCE, re.IGNORECASE)
_ASSIGNMENT_LOWER = compile_lazily(_ASSIGNMENT_SOURCE)
"""`_ASSIGNMENT` for lowercased text: it finds the same spans, several times faster."""
_LABEL_SEPARATOR = compile_lazily(r"[ \t]*[:=]")
_LABEL_TAIL = compile_lazily(r"[ \t]*[:=][ \t]*(\\?[\"'])?([^\s\"'`,;{}\[\]()<>\\]{3,})")
"""After a value that is a label: the separator and the value it names."""
_NOT_A_SECRET_NAME = compile_lazily(
    r"(?i)(?:ids?|count|type|names?|ur[il]s?|path|file|endpoint|length|size|limit|usage|"
    r"expir\w*|ttl)$"
)
"""The end of a name that says it holds something about a secret, not the secret."""
_NOT_A_VALUE = compile_lazily(
    r"^(?:[$/.~%@*\\]|-?\d+(?:\.\d+)?$|[\^~<>=]*v?\d+(?:\.[\w-]+)+$|(?:null|none|true|false|nil|undefined|"
    r"string|str|int|bool|boolean|number|float|bytes|any|unknown|object|optional|required|"
    r"await|async|new|this|self|typeof|function|void|"
    r"xxx+|\*+|\.\.\.|(?:your|insert|enter)[_-][\w-]*|[\w-]*[_-]here|replace[_-]?me|"
    r"change[_-]?me|placeholder)$)",
    re.IGNORECASE,
)
_REFERENCE = compile_lazily(r"[A-Za-z_]\w*(?:\.\w+)+")  # os.environ, config.api.key
_PROSE_AFTER = compile_lazily(r" [a-z]{2,}\b")
"""After a value: the next word of a sentence (a secret is followed by the end of its line, a
quote, a separator or an option, not by a lowercase word)."""
_FIELD_NAME = compile_lazily(
    r"(?i)[\w.-]*(?:api[_-]?key|apikey|secret|token|passwd|password|pwd|passphrase|"
    r"credentials?|private[_-]?key|access[_-]?key|secret[_-]?key|auth[_-]?key)"
)
"""A JSON field whose value is a secret by its name alone."""


def _name_kind(name: str) -> str | None:
    """The kind a secret named `name` gets; None when the name says no secret."""
    lowered = name.lower()
    if "pass" in lowered or "pwd" in lowered:
        return "password"
    if "token" in lowered:
        return "token"
    if "key" in lowered:
        return "api-key"
    if "secret" in lowered or "credential" in lowered:
        return "secret"
    return None


def _is_value(value: str, text: str, end: int, quoted: bool) -> bool:
    """Whether `value`, which ends at `text[end]`, is a secret rather than a reference (or a
    marker already)."""
    if _NOT_A_VALUE.search(value) or value.startswith("[REDACTED:"):
        return False
    return quoted or not (text[end : end + 1] in ("(", "[") or _REFERENCE.fullmatch(value))


def _word(value: str) -> bool:
    """Whether `value` reads as a word: letters only, shorter than 16, lowercase or capitalized."""
    return value.isalpha() and len(value) < 16 and (value.islower() or value.istitle())


def _closing(text: str, start: int, quote: str) -> int:
    """Where the quoted value starting at `start` ends (its closing `quote`, on its line, at
    most 256 characters on); -1 when it has none."""
    limit = min(len(text), start + 256)
    line_end = text.find("\n", start, limit)
    stop = line_end if line_end >= 0 else limit
    at = text.find(quote, start, stop)
    return at


def _option(match: re.Match[str], counts: Counts) -> str:
    value = match.group(2)
    bare = value.strip("'\"")
    if not bare or not _is_value(bare, match.string, match.end(), True):
        return match.group(0)
    kind = _name_kind(match.group(1)) or "secret"
    _count(counts, kind)
    quote = value[0] if value[0] in "'\"" and len(value) > 1 and value[-1] == value[0] else ""
    return match.group(1) + quote + _mark(kind) + quote


def _curl_user(match: re.Match[str], counts: Counts) -> str:
    password = match.group(3)
    if password.startswith("$"):
        return match.group(0)
    _count(counts, "password")
    return match.group(1) + _mark("password") + match.group(4)


def _twilio(match: re.Match[str], counts: Counts) -> str:
    _count(counts, "twilio-account-sid")
    if match.group(2) is None:
        return _mark("twilio-account-sid")
    _count(counts, "twilio-auth-token")
    return _mark("twilio-account-sid") + match.group(1) + _mark("twilio-auth-token")


def _aws_secret(match: re.Match[str], counts: Counts) -> str:
    _count(counts, "aws-secret-key")
    return match.group(1) + match.group(2) + _mark("aws-secret-key")


def _assignment(match: re.Match[str]) -> tuple[int, int, str] | None:
    """The span and kind of the secret an assignment match names; None when it names none.

    A quoted value is replaced up to its closing quote (also `\\"` inside JSON text). When the
    value is itself a name followed by `=` or `:` and a value (`Password: db_pass = hunter2`,
    `password: str = "hunter2"`), that last value is the secret. A name that ends in `id`,
    `name`, `url`, `path`, `file`, `type`, `count`, `length`... (`token_id`, `secret_name`)
    names something about a secret, not one. A short word of letters that a lowercase word
    follows is a sentence's (`token: etherscan labels the token`), not a secret. Values that are
    references stay: `$VAR`,
    `${VAR}`, `<placeholder>`, paths, numbers (`max_tokens: 4096`), calls and lookups
    (`os.environ["X"]`), code words (`await`, `null`, `str`...)."""
    text = match.string
    name, quote, value = match.group(1), match.group(3) or "", match.group(4)
    if _NOT_A_SECRET_NAME.search(name):
        return None
    kind = _name_kind(name) or "secret"
    start, end = match.start(4), match.end(4)
    if not quote and _LABEL_SEPARATOR.match(text, end):
        # the value is a label: `Password: db_pass = hunter2`, `password: str = "hunter2"`
        tail = _LABEL_TAIL.match(text, end)
        if tail is None:
            return None
        quote, value = tail.group(1) or "", tail.group(2)
        kind = _name_kind(match.group(4)) or kind
        start, end = tail.start(2), tail.end(2)
    if not _is_value(value, text, end, bool(quote)):
        return None
    if not quote and _PROSE_AFTER.match(text, end) and _word(value):
        return None  # a word of a sentence: `token: etherscan labels it`, `?apikey= query string`
    if quote:
        closing = _closing(text, start, quote)
        if closing > end:
            end = closing
    return start, end, kind


def _assignments(text: str, counts: Counts, *, blind: bool = False) -> str:
    """The assignment rule on `text`: a value given to a name that says secret, environment or
    config style (`API_KEY=…`, `PASSWORD: …`, `"client_secret": "…"`, `export GITHUB_TOKEN=…`,
    `db_password = '…'`, `PGPASSWORD=…`, `DB_PASS=…`) is replaced, the name staying, with the
    kind `password`, `token`, `api-key` or `secret` after the name (`_assignment` says which
    values count).

    Spans are found on the lowercased copy of `text` (the same as a case-blind search finds) and
    matched again case-blind in place; a case-blind search when lowercasing changes the length,
    or with `blind`."""
    lowered = text.lower()
    blind = blind or len(lowered) != len(text)
    parts: list[str] = []
    at = position = 0
    while True:
        if blind:
            match = _ASSIGNMENT.search(text, position)
        else:
            found = _ASSIGNMENT_LOWER.search(lowered, position)
            match = None if found is None else _ASSIGNMENT.match(text, found.start())
            if found is not None and (match is None or match.end() != found.end()):
                match = _ASSIGNMENT.search(text, found.start())  # a case folding lowering missed
        if match is None:
            break
        span = _assignment(match)
        if span is None:
            position = match.end()
            continue
        start, end, kind = span
        parts.append(text[at:start])
        parts.append(_mark(kind))
        _count(counts, kind)
        at = position = end
    if not parts:
        return text
    parts.append(text[at:])
    return "".join(parts)


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
    _Rule("stripe-key", _STRIPE, ("_live_", "_test_", "whsec_")),
    _Rule("twilio-account-sid", _TWILIO, ("AC",), _twilio),
    _Rule("huggingface-access-token", _HUGGINGFACE, ("hf_",)),
    _Rule("telegram-bot-token", _TELEGRAM, (":AA",)),
    _Rule("discord-bot-token", _DISCORD, ()),
    _Rule("jwt", _JWT, (".eyJ",)),
    _Rule("bearer-token", _BEARER, ("earer",), _keep_group(1, "bearer-token"), secret=2),
    _Rule("basic-auth", _BASIC, ("asic",), _keep_group(1, "basic-auth"), secret=2),
    _Rule(
        "authorization",
        _AUTHORIZATION,
        ("uthorization",),
        _keep_group(1, "authorization"),
        secret=2,
    ),
    _Rule("password", _MYSQL, ("mysql", "mariadb"), _keep_group(1, "password"), secret=2),
    _Rule("password", _SSHPASS, ("sshpass",), _keep_group(1, "password"), secret=2),
    _Rule("password", _CURL_USER, ("curl",), _curl_user, secret=3),
    _Rule(
        "password",
        _OPTION,
        ("--pass", "--token", "--api", "--secret", "--client-secret", "--auth-", "--access-"),
        _option,
        secret=2,
    ),
    _Rule(
        "azure-storage-key",
        _AZURE,
        ("AccountKey", "SharedAccessKey", "SharedSecretValue"),
        _keep_group(1, "azure-storage-key"),
        secret=2,
    ),
    _Rule(
        "azure-sas-signature",
        _AZURE_SAS,
        ("sig=",),
        _keep_group(1, "azure-sas-signature"),
        secret=2,
    ),
    _Rule(
        "aws-secret-key",
        _AWS_SECRET,
        ("secret_access", "secret access", "secretaccess", "secret-access"),
        _aws_secret,
        lowered=True,
        secret=3,
    ),
    _Rule("url-password", _URL_PASSWORD, ("://",), _keep_group(1, "url-password", 3), secret=2),
    _Rule(
        "url-key",
        _URL_KEY,
        ("key=", "token=", "auth=", "secret=", "signature="),
        _keep_group(1, "url-key"),
        secret=2,
    ),
)
"""compactcli's own rules, in the order they run (gitleaks' and the assignments follow), kinds in
brackets: a whole PEM private key block, to its END line or, when that is missing, to the end of
the base64, also with `\\n` escapes (`private-key`); provider keys and tokens by their documented
prefixes and shapes: Anthropic `sk-ant-…`, OpenAI `sk-…` / `sk-proj-…`, GitHub `ghp_` … /
`github_pat_`, AWS access key ids `AKIA…` / `ASIA…`, Slack `xox?-` tokens and webhook URLs,
Google `AIza…`, Stripe `sk_live_` / `rk_test_` / `whsec_`…, a Twilio account id `AC…` and the
auth token written after one, Hugging Face `hf_…`, Telegram and Discord bot tokens; JSON Web
Tokens (`jwt`); `Bearer`, `Basic` and other `Authorization:` credentials (`bearer-token`,
`basic-auth`, `authorization`); the password of `mysql -p<password>` (and `mysqldump`,
`mariadb`...), `sshpass -p`, `curl -u user:password` and an option `--password VALUE`
(`--token`, `--secret`...; `password`, `token`, `secret`...); Azure `AccountKey=` /
`SharedAccessKey=` and a SAS `sig=` (`azure-storage-key`, `azure-sas-signature`); an AWS secret
access key after its label, as in `aws configure` or `~/.aws/credentials` (`aws-secret-key`);
the password in a URL, `scheme://user:password@host`, the user staying (`url-password`); a key
or token in a URL's query (`?key=…`, `&access_token=…`, `&signature=…`: a webhook's or an API's
credential, 16 characters or more with a digit), the name staying (`url-key`)."""

_OWN_KINDS = (
    "private-key",
    "anthropic-key",
    "openai-key",
    "github-token",
    "aws-access-key",
    "slack-webhook",
    "slack-token",
    "google-api-key",
    "stripe-key",
    "twilio-account-sid",
    "twilio-auth-token",
    "huggingface-access-token",
    "telegram-bot-token",
    "discord-bot-token",
    "jwt",
    "bearer-token",
    "basic-auth",
    "authorization",
    "azure-storage-key",
    "azure-sas-signature",
    "aws-secret-key",
    "url-password",
    "url-key",
    "password",
    "token",
    "api-key",
    "secret",
)


def secret_kinds() -> tuple[str, ...]:
    """Every `<kind>` a `[REDACTED:<kind>]` marker can name: compactcli's own, then gitleaks'."""
    return (*_OWN_KINDS, *(k for k in gitleaks.rule_ids() if k not in _OWN_KINDS))


SECRET_KINDS: tuple[str, ...] = _OWN_KINDS
"""The kinds of compactcli's own rules (`secret_kinds()` adds gitleaks' rule ids)."""

_HINT_WORDS = ("key", "secret", "token", "pass", "pwd", "credential")
"""Words one of which the assignment rule needs, in lowercased text."""


def _apply(rule: _Rule, text: str, counts: Counts) -> str:
    """`rule` applied to `text`; a secret that overlaps a marker already there is left."""
    replace = rule.replace
    group = rule.secret
    markers = [m.span() for m in MARKER.finditer(text)] if "[REDACTED:" in text else []

    def call(match: re.Match[str]) -> str:
        if markers and _overlaps(markers, *match.span(group)):
            return match.group(0)
        if replace is None:
            _count(counts, rule.kind)
            return _mark(rule.kind)
        return replace(match, counts)

    return rule.pattern.sub(call, text)


def _overlaps(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    """Whether `start:end` overlaps one of `spans` (in order, apart)."""
    at = bisect.bisect_right(spans, start, key=lambda span: span[0])
    return (at > 0 and spans[at - 1][1] > start) or (at < len(spans) and spans[at][0] < end)


def _gitleaks(text: str, counts: Counts) -> str:
    findings = gitleaks.find(text)
    if not findings:
        return text
    markers = [m.span() for m in MARKER.finditer(text)] if "[REDACTED:" in text else []
    parts: list[str] = []
    at = 0
    for finding in findings:
        if markers and _overlaps(markers, finding.start, finding.end):
            continue
        parts.append(text[at : finding.start])
        parts.append(_mark(finding.kind))
        _count(counts, finding.kind)
        at = finding.end
    parts.append(text[at:])
    return "".join(parts)


@functools.lru_cache(maxsize=1 << 14)
def redact(text: str) -> str:
    """`text` with every secret replaced by `[REDACTED:<kind>]` (remembered for the texts seen
    last: a summary fitted to its budget renders the same facts several times)."""
    return redact_kinds(text)[0]


def redact_count(text: str) -> tuple[str, int]:
    """`redact(text)` and how many secrets it replaced."""
    redacted, counts = redact_kinds(text)
    return redacted, sum(counts.values())


def redact_kinds(text: str) -> tuple[str, Counts]:
    """`redact(text)` and how many secrets of each kind it replaced.

    The own rules (`_RULES`), gitleaks' rules and the assignment rule run in turn, each on what
    the one before left; each rule set is skipped at once when none of its literal hints
    (keywords) is in the text."""
    counts: Counts = {}
    lowered: str | None = None
    for rule in _RULES:
        if rule.hints:
            if rule.lowered:
                if lowered is None:
                    lowered = text.lower()
                source = lowered
            else:
                source = text
            for hint in rule.hints:  # (a loop, not any(): this runs for every rule and text)
                if hint in source:
                    break
            else:
                continue
        before = len(counts), sum(counts.values())
        text = _apply(rule, text, counts)
        if (len(counts), sum(counts.values())) != before:
            lowered = None
    text = _gitleaks(text, counts)
    lowered = text.lower()
    for word in _HINT_WORDS:
        if word in lowered:
            text = _assignments(text, counts)
            break
    return text, counts


def redact_named(name: str, value: str) -> tuple[str, Counts]:
    """The value of JSON field `name` redacted: `redact(value)`, and the whole value when the
    name says it is a secret (`password`, `api_key`, `client_secret`...) and the value is one
    word that is not a reference (`$VAR`, a path, a number, `null`...)."""
    redacted, counts = redact_kinds(value)
    if (
        redacted == value
        and len(value) >= 3
        and not any(c.isspace() for c in value)
        and _FIELD_NAME.fullmatch(name)
        and _is_value(value, value, len(value), True)
        and not (value.startswith("<") and value.endswith(">"))
    ):
        kind = _name_kind(name) or "secret"
        return _mark(kind), {kind: 1}
    return redacted, counts
