#!/usr/bin/env python3
"""Regenerate compactcli/gitleaks_rules.json from gitleaks' default rule set (MIT licensed).

    python scripts/vendor_gitleaks.py --version v8.30.1        # fetch that release's config
    python scripts/vendor_gitleaks.py --config gitleaks.toml --version v8.30.1 --commit SHA

gitleaks (https://github.com/gitleaks/gitleaks) keeps its rules in `config/gitleaks.toml`: per
rule a Go (RE2) regular expression whose capture group is the secret, lowercase keywords that
must occur in the text before the expression is tried, an optional Shannon-entropy floor and
allowlists. This script reads that file, translates each expression to Python's `re` syntax and
writes the rules compactcli applies (`compactcli.gitleaks`), with the upstream version, commit,
the file's sha256 and gitleaks' licence.

Translation: mid-pattern flags `(?i)` become scoped groups `(?i:...)` up to the end of their
group (split at each `|`, as RE2 applies them to the later branches too); `\\z` becomes `\\Z`;
POSIX classes (`[[:alnum:]]`) are spelled out; `(?<name>` becomes `(?P<name>`; a literal `[`
inside a class is escaped; `\\Q...\\E` is quoted. The leading `[\\w.-]{0,50}?` of the
"keyword, separator, value" rules is dropped: it only widens the match to the left, never the
secret, and would make Python try fifty starts at every position. The group that ends most
tokens, `(?:[\\x60'"\\s;]|\\\\[nr]|$)`, also accepts `,.)]}>|&<`, which end a token in prose,
JSON and code ("my token is glpat-..., and"). Each rule records its longest match (`width`, none
when unbounded), which tells the engine how far from a keyword to look. A rule that still does not
compile (Unicode classes `\\p{...}`, ungreedy mode `(?U)`) is skipped and counted. Rules are
compiled with `re.ASCII`, since RE2's `\\w`, `\\d`, `\\s` and `\\b` are ASCII.

Rules not used, each counted in the output with its reason:
- rules that only apply to some file names (`path`): a transcript has none;
- rules named in `EXCLUDED` below (why, beside each);
- rules that flag one of `NOT_SECRETS`, the hashes, UUIDs, git ids, base64 images, paths and
  ids every transcript is full of (checked here, and again by tests/test_secrets_shapes.py).

Nothing is fetched unless `--config` is absent; the output is deterministic for one input.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import sys
import tomllib
import urllib.request
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "compactcli" / "gitleaks_rules.json"
URL = "https://raw.githubusercontent.com/gitleaks/gitleaks/{version}/config/gitleaks.toml"
LICENSE_URL = "https://raw.githubusercontent.com/gitleaks/gitleaks/{version}/LICENSE"

LICENSE = """MIT License

Copyright (c) 2019 Zachary Rice

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
"""
"""gitleaks' LICENSE, shipped with the rules derived from its configuration."""

EXCLUDED = {
    "generic-api-key": "any `key|token|secret|password... = value` of 10+ characters: it flags "
    "hashes and ids after such a word (`key: <sha256>`, `cache_key=<uuid>`); compactcli's own "
    "assignment rule covers these assignments, with its tests of what is a value",
    "curl-auth-header": "its lazy `.*?` over up to five lines costs about a second per megabyte "
    "of transcript whose records are one long line each; compactcli's bearer and basic-auth "
    "rules find the same credentials, in curl or not",
    "curl-auth-user": "as curl-auth-header; compactcli's `curl -u user:password` rule finds the "
    "same password",
}
"""Rules left out on purpose, with the reason."""

NOT_SECRETS = (
    # hashes and git ids
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "commit 3f750f03d77e42327c5f9fcb9992110088330a32",
    "git show 3f750f0 && git log a94a8fe5ccb19ba61c4c0873d391e987982fbbd3..HEAD",
    '"sha1": "a94a8fe5ccb19ba61c4c0873d391e987982fbbd3"',
    "md5 d41d8cd98f00b204e9800998ecf8427e  file.txt",
    "Successfully built 6f1ed002ab5595859014ebf0951522d9",
    '"hash": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"',
    '"source_sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"',
    "integrity sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGl"
    "ODJ6+SfaPg==",
    # UUIDs and ids of the agents' records
    '"uuid": "7d0a3a7e-4c55-4d3c-9a64-0a1e0b2b6f9c", '
    '"parentUuid": "0b1c3e8e-8f7a-4c1e-9b0e-5a3d2c1b0a99"',
    '"sessionId": "1f0e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b"',
    "session 00000000-0000-0000-0000-0000075bcd15",
    '"id": "toolu_01A09q90qw90lq917835lq9", "tool_use_id": "toolu_01XGh3kY2VbWqLmN8pR4sT6u"',
    '"id": "msg_01AbCdEfGhIjKlMnOpQrStUv", "requestId": "req_011CQe5v4f9PqK2rXyZ8aB3c"',
    '"call_id": "call_Zx81kQ0aB3cD4eF5gH6iJ7kL", "id": "fc_68a1b2c3d4e5f60718293a4b5c6d7e8f"',
    '"id": "chatcmpl-9pQrStUvWxYz0123456789AbCd"',
    # opaque values the agents keep (thinking signatures, encrypted reasoning)
    '"signature": "EqQBCkgIBxABGAIqQKtJ1y0b5y9Qf2bHq3vKZ8mVxN0aP4cR7sT1uW3yZ6bD9eF2gH5jK8lM0nQ4r'
    'S7tV1wX3zA6cB9dE2fG5hJ8kL0mN3pQ6rSyTFoLVu2+qL9rJ8oN1tP4vX7zA0bD3eG6hK9mP2sU5wY8="',
    '"encrypted_content": "gAAAAABo1x2Y3z4A5b6C7d8E9f0G1h2I3j4K5l6M7n8O9p0Q1r2S3t4U5v6W7x8Y9z0'
    'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v2W3x4Y5z6A7b8C9d0E1f2G3h4I5j6K7l8M9n0O1p2Q3r4S5t6="',
    # images
    '"data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAA'
    'BJRU5ErkJggg==", "media_type": "image/png"',
    "data:image/jpeg;base64,/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAAYEBQYFBAYGBQYGBwcGBwgKEQsKCQkKFQ8Q"
    "DBEYFRoZGBgVFxYaHSUfGhsjHBYXICwgIyYnKSopGR8tMC0oMCUoKSj/2wBDAQcHBwoIChMLCxMoGhYaKCgoKCgo",
    # file paths and code
    "/home/dana/.ssh/id_rsa and src/auth/token.ts:12 and secrets/README.md",
    "/Users/dana/work/app/node_modules/.pnpm/@esbuild+darwin-arm64@0.21.5/node_modules/esbuild",
    "C:\\Users\\dana\\AppData\\Local\\Temp\\pytest-of-dana\\pytest-12\\test_key0\\out.json",
    "max_tokens: 4096, tokens_used=100, input_tokens: 5801",
    "const apiKey = await getApiKeyForModel(model); token = getToken()",
    "api_key=os.environ['OPENAI_API_KEY'] password: ${DB_PASSWORD} secret = $SECRET",
)
"""Non-secrets a rule must leave alone to be used (see the module docstring)."""

# ---------------------------------------------------------------------------------------------
# RE2 to Python

_POSIX = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "ascii": "\\x00-\\x7f",
    "blank": "\\t ",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": "\\t\\n\\v\\f\\r ",
    "upper": "A-Z",
    "word": "0-9A-Za-z_",
    "xdigit": "0-9A-Fa-f",
}


class Untranslatable(ValueError):
    """An RE2 construct Python's `re` has no equivalent for."""


def _escape(text: str, at: int) -> tuple[str, int]:
    r"""The Python spelling of the escape at `text[at]` (a backslash) and where it ends."""
    if at + 1 >= len(text):
        raise Untranslatable("a trailing backslash")
    char = text[at + 1]
    if char == "z":
        return "\\Z", at + 2
    if char in "pP":
        raise Untranslatable(f"Unicode class \\{char}")
    if char == "C":
        raise Untranslatable("\\C (any byte)")
    if char == "x" and at + 2 < len(text) and text[at + 2] == "{":
        end = text.index("}", at)
        value = int(text[at + 3 : end], 16)
        return (f"\\x{value:02x}" if value < 256 else f"\\U{value:08x}"), end + 1
    if char == "Q":
        end = text.find("\\E", at + 2)
        stop = len(text) if end < 0 else end
        return re.escape(text[at + 2 : stop]), (len(text) if end < 0 else end + 2)
    return text[at : at + 2], at + 2


def _char_class(text: str, at: int) -> tuple[str, int]:
    """The Python spelling of the character class starting at `text[at]` (`[`)."""
    out = ["["]
    i = at + 1
    if i < len(text) and text[i] == "^":
        out.append("^")
        i += 1
    if i < len(text) and text[i] == "]":  # a leading `]` is literal in RE2
        out.append("\\]")
        i += 1
    while i < len(text):
        char = text[i]
        if char == "]":
            return "".join(out) + "]", i + 1
        if char == "\\":
            piece, i = _escape(text, i)
            out.append(piece)
            continue
        if text.startswith("[:", i):
            end = text.find(":]", i + 2)
            name = text[i + 2 : end] if end > 0 else ""
            negated = name.startswith("^")
            if end < 0 or name.lstrip("^") not in _POSIX or negated:
                raise Untranslatable(f"character class {text[i : end + 2]}")
            out.append(_POSIX[name])
            i = end + 2
            continue
        if char == "[":
            out.append("\\[")
        elif char in "&~|" and out[-1] == char:  # Python warns of set operations to come
            out.append("\\" + char)
        elif char == "-" and out[-1] == "-":
            out.append("\\-")
        else:
            out.append(char)
        i += 1
    raise Untranslatable("an unclosed character class")


_FLAGS = re.compile(r"\(\?([a-zA-Z]*(?:-[a-zA-Z]+)?)\)")


def translate(source: str) -> str:
    """`source`, an RE2 expression, in Python's syntax; `Untranslatable` when it cannot be."""
    out: list[str] = []
    # per open group: the scoped flag groups opened in it, to close at its end and at each `|`
    scopes: list[list[str]] = [[]]
    i = 0
    while i < len(source):
        char = source[i]
        if char == "\\":
            piece, i = _escape(source, i)
            out.append(piece)
        elif char == "[":
            piece, i = _char_class(source, i)
            out.append(piece)
        elif char == "(":
            flags = _FLAGS.match(source, i)
            if flags is not None:
                letters = flags.group(1)
                if "U" in letters:
                    raise Untranslatable("ungreedy mode (?U)")
                if i == 0 and "-" not in letters:
                    out.append(flags.group(0))  # global flags at the start: the same in Python
                else:
                    opener = f"(?{letters}:"
                    out.append(opener)
                    scopes[-1].append(opener)
                i = flags.end()
                continue
            if source.startswith("(?<", i) and source[i + 3 : i + 4] not in ("=", "!"):
                out.append("(?P<")
                i += 3
            elif source.startswith("(?", i) and not source.startswith(
                ("(?:", "(?P<", "(?=", "(?!", "(?<=", "(?<!"), i
            ):
                scoped = re.match(r"\(\?([a-zA-Z]*(?:-[a-zA-Z]+)?):", source[i:])
                if scoped is None:
                    raise Untranslatable(f"group {source[i : i + 6]}")
                if "U" in scoped.group(1):
                    raise Untranslatable("ungreedy mode (?U:)")
                out.append(scoped.group(0))
                i += scoped.end()
            else:
                out.append("(")
                i += 1
            scopes.append([])
        elif char == ")":
            if len(scopes) == 1:
                raise Untranslatable("an unbalanced )")
            out.append(")" * len(scopes.pop()))
            out.append(")")
            i += 1
        elif char == "|":
            opened = scopes[-1]
            out.append(")" * len(opened) + "|" + "".join(opened))
            i += 1
        else:
            out.append(char)
            i += 1
    if len(scopes) != 1:
        raise Untranslatable("an unclosed group")
    out.append(")" * len(scopes[0]))
    return "".join(out)


_LAZY_PREFIX = re.compile(r"^((?:\(\?[a-zA-Z-]*[:)])*)\[\\w\.-\]\{0,50\}\?")


def drop_lazy_prefix(pattern: str) -> str:
    r"""`pattern` without its leading `[\w.-]{0,50}?` (also at the start of a leading group)."""
    while True:
        shorter = _LAZY_PREFIX.sub(r"\1", pattern, count=1)
        if shorter == pattern:
            return pattern
        pattern = shorter


_TOKEN_END = "(?:[\\x60'\"\\s;]|\\\\[nr]|$"
_TOKEN_END_WIDER = "(?:[\\x60'\"\\s;,.)\\]}>|&<]|\\\\[nr]|$"


def widen_token_end(pattern: str) -> str:
    """`pattern` with its end-of-token group accepting `,.)]}>|&<` too (see the module)."""
    return pattern.replace(_TOKEN_END, _TOKEN_END_WIDER)


def width(pattern: str) -> int | None:
    """The longest match of `pattern`, or None when it has no bound."""
    import re._parser as parser  # the parser `re` itself uses

    high = parser.parse(pattern, re.ASCII).getwidth()[1]
    return None if high >= 1 << 20 else int(high)


def compile_rule(pattern: str) -> re.Pattern[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a FutureWarning (nested set) is a failure too
        return re.compile(pattern, re.ASCII)


# ---------------------------------------------------------------------------------------------
# what a rule finds, as gitleaks decides it (the same logic as compactcli.gitleaks, kept here so
# that the script runs without the package)


def entropy(text: str) -> float:
    if not text:
        return 0.0
    counts: dict[str, int] = {}
    for char in text:
        counts[char] = counts.get(char, 0) + 1
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def _findings(rule: dict[str, Any], globals_: dict[str, Any], text: str) -> list[str]:
    pattern = compile_rule(rule["regex"])
    found = []
    for match in pattern.finditer(text):
        group = rule.get("secret_group") or next(
            (g for g in range(1, (pattern.groups or 0) + 1) if match.group(g)), 0
        )
        secret = match.group(group) or ""
        if not secret or (rule.get("entropy") and entropy(secret) <= rule["entropy"]):
            continue
        allowed = False
        for allow in [globals_, *rule.get("allowlists", [])]:
            target = {
                "secret": secret,
                "match": match.group(0),
                "line": text,
            }[allow.get("target", "secret")]
            if any(re.search(r, target, re.ASCII) for r in allow.get("regexes", [])) or any(
                w in secret.lower() for w in allow.get("stopwords", [])
            ):
                allowed = True
        if not allowed:
            found.append(secret)
    return found


# ---------------------------------------------------------------------------------------------


def _allowlist(raw: dict[str, Any]) -> dict[str, Any] | None:
    """A rule's allowlist in our form; None when it only names paths or commits (it then never
    applies to a transcript) or when it needs them as well (`condition = "AND"`)."""
    if raw.get("condition", "OR").upper() == "AND" and (raw.get("paths") or raw.get("commits")):
        return None
    regexes = [translate(r) for r in raw.get("regexes", [])]
    stopwords = [w.lower() for w in raw.get("stopwords", [])]
    if not regexes and not stopwords:
        return None
    allow: dict[str, Any] = {}
    target = raw.get("regexTarget", "secret")
    if target != "secret":
        allow["target"] = target
    if regexes:
        allow["regexes"] = regexes
    if stopwords:
        allow["stopwords"] = stopwords
    return allow


def build(config: dict[str, Any]) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """(the rules and global allowlist to write, the rule ids left out by reason)."""
    skipped: dict[str, list[str]] = {}
    global_raw = config.get("allowlist") or {}
    globals_ = {
        "regexes": [translate(r) for r in global_raw.get("regexes", [])],
        "stopwords": [w.lower() for w in global_raw.get("stopwords", [])],
    }
    rules = []
    for raw in config["rules"]:
        rule_id = raw["id"]
        if rule_id in EXCLUDED:
            skipped.setdefault("excluded: " + EXCLUDED[rule_id], []).append(rule_id)
            continue
        if "regex" not in raw:
            skipped.setdefault("no expression (file names only)", []).append(rule_id)
            continue
        if raw.get("path"):
            skipped.setdefault("only for some file names", []).append(rule_id)
            continue
        try:
            pattern = widen_token_end(drop_lazy_prefix(translate(raw["regex"])))
            compile_rule(pattern)
            allowlists = [_allowlist(a) for a in raw.get("allowlists", [])]
            for allow in allowlists:
                for regex in (allow or {}).get("regexes", []):
                    compile_rule(regex)
        except (Untranslatable, re.error, FutureWarning) as error:
            skipped.setdefault(f"cannot be translated ({error})", []).append(rule_id)
            continue
        rule: dict[str, Any] = {"id": rule_id, "regex": pattern}
        if raw.get("secretGroup"):
            rule["secret_group"] = int(raw["secretGroup"])
        rule["keywords"] = sorted({k.lower() for k in raw.get("keywords", [])})
        rule["width"] = width(pattern)
        if raw.get("entropy"):
            rule["entropy"] = float(raw["entropy"])
        kept = [a for a in allowlists if a is not None]
        if kept:
            rule["allowlists"] = kept
        flagged = [s for text in NOT_SECRETS for s in _findings(rule, globals_, text)]
        if flagged:
            skipped.setdefault("flags what is not a secret", []).append(
                f"{rule_id} ({flagged[0][:40]})"
            )
            continue
        rules.append(rule)
    return {"allowlist": globals_, "rules": rules}, skipped


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", required=True, help="the gitleaks release, e.g. v8.30.1")
    parser.add_argument("--config", type=Path, help="a local copy of config/gitleaks.toml")
    parser.add_argument("--commit", default=None, help="the commit the config was taken from")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    if args.config is not None:
        data = args.config.read_bytes()
        source = str(args.config)
    else:
        source = URL.format(version=args.version)
        with urllib.request.urlopen(source, timeout=60) as response:
            data = response.read()
    config = tomllib.loads(data.decode("utf-8"))
    rules, skipped = build(config)
    document = {
        "source": {
            "project": "gitleaks",
            "url": "https://github.com/gitleaks/gitleaks",
            "version": args.version,
            "commit": args.commit,
            "file": "config/gitleaks.toml",
            "sha256": hashlib.sha256(data).hexdigest(),
            "rules_upstream": len(config["rules"]),
            "rules_used": len(rules["rules"]),
            "rules_untranslatable": sum(
                len(ids) for reason, ids in skipped.items() if reason.startswith("cannot be")
            ),
            "skipped": {reason: sorted(ids) for reason, ids in sorted(skipped.items())},
        },
        "license": LICENSE,
        **rules,
    }
    args.output.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n")
    print(f"read {source}: {len(config['rules'])} rules")
    print(f"wrote {args.output}: {len(rules['rules'])} rules used")
    print(f"untranslatable: {document['source']['rules_untranslatable']}")
    for reason, ids in sorted(skipped.items()):
        print(f"skipped {len(ids)}, {reason}: {', '.join(sorted(ids))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
