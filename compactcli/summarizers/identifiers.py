"""Names a summary keeps verbatim, found in user and assistant text.

`identifiers(text)` returns, in order and each once, the identifiers a text names (commits, pull
request and issue numbers, tracker tickets, branches, URLs, local ports, versions, blockchain
addresses), each as a string such as "commit 2e45f5f", "#12", "AB-1" or "branch feat/x", and
leans towards missing one rather than taking a colour, a count or a sentence's word for one.
`named` gives what an identifier names (`2e45f5f`), `said_once` leaves out one that another
already says, and `newest` keeps those only the conversation holds first."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from compactcli.lazy_pattern import compile_lazily

_CHAIN_ID = compile_lazily(r"(?<![\w/])0x[0-9a-fA-F]{40}(?:[0-9a-fA-F]{24})?(?![\w…])")
"""A blockchain address (`0x` and 40 hex digits) or transaction hash (64), written whole."""
_COMMIT = compile_lazily(
    r"\b(?:commit|sha|revision)s?(?: id| hash)?[\s:`'\"(]+([0-9a-f]{7,40})\b", re.IGNORECASE
)
GIT_COMMIT_LINE = compile_lazily(
    r"^\[([^\s\]]+)(?: \(root-commit\))? ([0-9a-f]{7,40})\]", re.MULTILINE
)
_NUMBER = compile_lazily(r"(?<![\w&#/])#(\d{1,6})\b(?![\w-]|/\d)")
_COUNTED_CONTEXT = compile_lazily(
    r"\b(?:tasks?|steps?|items?|phases?|options?|calls?|rounds?|parts?|points?|ranks?|"
    r"critical|importants?|minors?|majors?|nits?|findings?|suggestions?|questions?|q|"
    r"sections?|rules?|requirements?|criteri(?:on|a)|comments?|concerns?|notes?)\s*"
    r"(?:#\d{1,6}\s*(?:,|&|/|and|or)?\s*)*$",
    re.IGNORECASE,
)
"""Words before a number that counts (`Task #3`, `step #2`, a review's `Critical #1` and
`Minors #6, #8`): not an issue."""
_REFERENCE_CONTEXT = compile_lazily(
    r"\b(?:issues?|bugs?|PRs?|pull|duplicates?|tickets?|fix(?:es|ed)?|close[sd]?|"
    r"resolve[sd]?|github|merged?|see)\b",
    re.IGNORECASE,
)
"""Words near a one-digit `#N` that make it an issue ("fixes #3", "#7 is the same bug");
without them, `#1` is a list's item or a rank ("start with #1", "the #1 priority")."""
_COLOUR_CONTEXT = compile_lazily(r"(?:colou?r|background|fill|stroke|border|:)\s*$", re.IGNORECASE)
_URL = compile_lazily(r"\bhttps?://[^\s<>()\[\]{}`'\"|\\]+")
_FRAME = compile_lazily(r"((?<![:/])/[^/:]*\.[A-Za-z][A-Za-z0-9]{0,4})(?::\d+){1,2}$")
"""The line and column a stack frame gives after a script's URL (`app.min.js:972:101`): each
frame of a pasted trace names the same script."""
_PORT = compile_lazily(
    r"\b(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1?\]):(\d{2,5})\b|\bports?\s+(\d{2,5})\b",
    re.IGNORECASE,
)
_VERSION = compile_lazily(
    r"(?<![\w./@-])((?:@?[\w.-]+/)?[A-Za-z][\w.-]*@\^?~?\d+(?:\.\d+)+[\w.-]*|"
    r"[\w.-]+:(?:[\w.-]+:)?\d+\.\d+\.\d+[\w.-]*|"
    r"[A-Z][\w.+-]*(?: [A-Z][\w.+-]*)? v?\d+\.\d+(?:\.\d+)+)\b"
)
# fmt: off
_NOT_NAMES = frozenset((  # words that start a sentence before a bare version ("Use 0.8.28")
    "use", "using", "upgrade", "upgraded", "update", "updated", "install", "installed", "set",
    "pin", "pinned", "bump", "bumped", "require", "requires", "required", "need", "needs",
    "downgrade", "target", "version", "release", "to", "from", "at", "in", "on", "with", "since",
    "before", "after", "is", "was", "now", "then", "and", "or", "of", "for", "the", "see", "run",
    "via", "by", "add", "added", "keep", "switch", "move", "moved", "latest", "current",
))
# fmt: on
_DOTTED = compile_lazily(r"\d\.\d")
"""What every `_VERSION` holds: a plain search for it first is much faster than the expression."""
_NAMED_NUMBER = compile_lazily(
    r"\b(?:PR|MR|[Pp]ull [Rr]equest|[Mm]erge [Rr]equest|[Ii]ssue)[\s:]+#?(\d{1,7})\b"
)
_TICKET = compile_lazily(r"\b([A-Z]{2,10}-\d{2,7}(?:-\d{1,7})*)\b(?!-\d)")
_NOT_TICKETS = frozenset(  # standards and algorithms named like tickets (UTF-16, SHA-256)
    ("UTF", "ISO", "SHA", "RFC", "ECMA", "IEEE", "CVE", "TLS", "SSL", "HTTP", "AES", "RSA", "MD")
)
_BRANCH = compile_lazily(
    r"\bbranch(?:es)?(?: named| called)?[\s:`'\"]+([A-Za-z0-9][\w./-]*[A-Za-z0-9])", re.IGNORECASE
)
_MAIN_BRANCHES = frozenset(("main", "master", "develop", "trunk"))
_BRANCH_SIGNS = compile_lazily(r"[/_.\d-]")


_WORD = compile_lazily(r"[A-Za-z_$][\w$]*")


def is_defined_name(identifier: str) -> bool:
    """Whether `identifier` is a name an edit defines (one word: `OddsBar`, `closeMarket`), which
    the file that defines it holds; `identifiers` never gives one word (a URL, a commit, a
    ticket, a version or a port is only in the conversation)."""
    return _WORD.fullmatch(identifier) is not None


def newest(names: Sequence[str], limit: int) -> tuple[str, ...]:
    """The newest `limit` of `names` (oldest first, in their order), those only the conversation
    holds kept first: a name an edit defines is dropped before a URL or a commit, since the file
    that defines it can be read again."""
    if len(names) <= limit:
        return tuple(names)
    told = [name for name in names if not is_defined_name(name)][-limit:]
    room = limit - len(told)
    defined = [name for name in names if is_defined_name(name)][-room:] if room else []
    kept = {*told, *defined}
    return tuple(name for name in names if name in kept)


_NUMBERED_URL = compile_lazily(r"/(?:issues|pull|pulls|merge_requests)/(\d{1,6})(?:[/#?]|$)")


_COMMIT_BRANCH = compile_lazily(r"^commit \S+ \(branch (.+)\)$")


def said_once(names: Sequence[str]) -> list[str]:
    """`names` but for one that another of them says already: an issue or pull request number
    (`#5`) a URL among them names (`https://github.com/o/r/issues/5`), and a branch (`branch
    main`) a commit among them names (`commit c566cc2 (branch main)`)."""
    said = {f"#{m.group(1)}" for name in names if (m := _NUMBERED_URL.search(name))}
    said.update(f"branch {m.group(1)}" for name in names if (m := _COMMIT_BRANCH.match(name)))
    return [name for name in names if name not in said] if said else list(names)


def named(identifier: str) -> str:
    """What an identifier names: `abc1234` of "commit abc1234 (branch main)", `#12` of "#12"."""
    parts = identifier.split(" ")
    return parts[1] if len(parts) > 1 else parts[0]


_ANNOUNCES = compile_lazily(
    r"^\s*(?:▲ |VITE v\d|(?:➜|-)?\s*Local:\s+https?://|On branch |"
    r"Switched to (?:a new )?branch |.*\b(?:running|listening|serving|available) (?:on|at) "
    r"https?://|.*\bready - started server on |https://github\.com/[^/\s]+/[^/\s]+/pull/\d+)",
    re.IGNORECASE,
)
"""A line of a command's output that names what the session runs on: a dev server's banner and
its address (`▲ Next.js 15.5.3`, `VITE v5.4.10`, `➜  Local: http://localhost:5173/`, `Uvicorn
running on http://127.0.0.1:8000`), the branch git is on or switched to, a pull request made."""
ANNOUNCED_LINES = 40
"""How many first lines of an output are looked at for `_ANNOUNCES` (a banner comes first)."""


def announced(output: str) -> str:
    """The lines among the first `ANNOUNCED_LINES` of a command's output that name what the
    session runs on (`_ANNOUNCES`), for `identifiers` to read; "" when none does."""
    if "http" not in output and "branch" not in output and "▲" not in output:
        return ""
    lines = output.splitlines()[:ANNOUNCED_LINES]
    return "\n".join(line for line in lines if _ANNOUNCES.match(line))


def identifiers(text: str) -> list[str]:
    """The identifiers `text` names, in order and each once, as "commit 2e45f5f", "#123",
    "AB-12" or "branch feat/x". Each pattern runs only where a plain substring test says it can
    match: most texts name none.

    - a commit: a 7-40 digit hex id after "commit", "sha" or "revision", and `git commit`'s own
      `[branch abc1234]` line (`GIT_COMMIT_LINE`);
    - a pull request or issue number (`#123`, "PR 123"; never a colour such as `#333` or
      `#112233`, a count such as `Task #3` or `call #1/8`, nor a one-digit `#1` with no word of
      issues near it);
    - a tracker ticket or case id (`ABC-123`, `PV-2026-0451` whole; not a standard such as
      `UTF-8`);
    - a branch (after "branch", with a `/`, `-`, `_`, `.` or a digit in its name, or main,
      master, develop, trunk);
    - a URL, and a local port (`localhost:3000`, "port 8080");
    - a version (`pkg@1.2.3`, `group:artifact:2.6.0`, "Spring Boot 3.3.4"; never a sentence's
      verb or preposition as the name, "Use 0.8.28");
    - a blockchain address or transaction hash written whole (`0x` and 40 or 64 hex digits).
    """
    return list(_identifiers(text))


@functools.lru_cache(maxsize=256)  # a text met again (a message quoted, repeated) is read once
def _identifiers(text: str) -> tuple[str, ...]:
    """`identifiers`, remembered per text."""
    found: list[tuple[int, str]] = []
    low = text.lower()
    if "commit" in low or "sha" in low or "revision" in low:
        for match in _COMMIT.finditer(text):
            value = match.group(1)
            if any(c.isdigit() for c in value):
                found.append((match.start(1), f"commit {value}"))
    if text.startswith("[") or "\n[" in text:
        for match in GIT_COMMIT_LINE.finditer(text):
            found.append((match.start(2), f"commit {match.group(2)} (branch {match.group(1)})"))
    if "#" in text:
        for match in _NUMBER.finditer(text):
            if len(match.group(1)) in (3, 6) and _COLOUR_CONTEXT.search(text, 0, match.start()):
                continue  # a colour (`color: #333`), not an issue
            if len(match.group(1)) == 6:
                continue
            start, end = match.span()
            if _COUNTED_CONTEXT.search(text, max(0, start - 48), start) or (
                len(match.group(1)) == 1
                and not _REFERENCE_CONTEXT.search(text, max(0, start - 40), end + 40)
            ):
                continue  # `Task #3`, `call #1/8`, "#1 priority": a count, not an issue
            found.append((match.start(), f"#{match.group(1)}"))
    urls: list[tuple[int, int]] = []  # where the URLs are: a port inside one is not another name
    if "://" in text:
        for match in _URL.finditer(text):
            url = _FRAME.sub(r"\1", match.group(0).rstrip(".,;:!?*_"))
            if len(url) > 12:
                found.append((match.start(), url))
                urls.append(match.span())
    if ":" in text or "port" in low:
        for match in _PORT.finditer(text):
            if any(start <= match.start() < end for start, end in urls):
                continue  # `localhost:3000` of `http://localhost:3000/api`
            port = match.group(1) or match.group(2)
            value = match.group(0) if match.group(1) else f"port {port}"
            found.append((match.start(), value))
    if "." in text and _DOTTED.search(text):
        for match in _VERSION.finditer(text):
            value = match.group(1)
            words = value.split(" ")
            while len(words) > 1 and words[0].lower() in _NOT_NAMES:
                words.pop(0)  # "Use Python 3.12.1": the name is Python; "Use 0.8.28" names none
            if len(words) > 1 or " " not in value:
                found.append((match.start(), " ".join(words)))
    if "PR" in text or "MR" in text or "request" in low or "issue" in low:
        found.extend(
            (match.start(), f"#{match.group(1)}") for match in _NAMED_NUMBER.finditer(text)
        )
    if "0x" in text:
        found.extend((match.start(), match.group(0)) for match in _CHAIN_ID.finditer(text))
    if "-" in text:
        for match in _TICKET.finditer(text):
            value = match.group(1)
            if value.split("-", 1)[0] not in _NOT_TICKETS:
                found.append((match.start(1), value))
    if "branch" in low:
        for match in _BRANCH.finditer(text):
            name = match.group(1).rstrip(".")
            if name.lower() in _MAIN_BRANCHES or (
                _BRANCH_SIGNS.search(name) and not name.isdigit()
            ):
                found.append((match.start(1), f"branch {name}"))
    return tuple(dict.fromkeys(value for _, value in sorted(found)))
