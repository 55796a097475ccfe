"""Secret redaction: what is replaced, by which marker, and what is never touched."""

from __future__ import annotations

import base64
import hashlib
import re
import time
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compactcli.redact import (
    _RULES,
    SECRET_KINDS,
    _assignments,
    redact,
    redact_count,
)
from tests.conftest import CORPUS

GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAx3fLq0T9pZ2yVwR8s1kQm4nB6cD7eF8gH9iJ0kL1mN2oP3qR\n"
    "4sT5uV6wX7yZ8aB9cD0eF1gH2iJ3kL4mN5oP6qR7sT8uV9wX0yZ1aB2cD3eF4gH5==\n"
    "-----END RSA PRIVATE KEY-----"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"export GITHUB_TOKEN={GITHUB}", "export GITHUB_TOKEN=[REDACTED:github-token]"),
        (
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV done",
            "[REDACTED:github-token] done",
        ),
        (
            "key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-AbCd end",
            "key [REDACTED:anthropic-key] end",
        ),
        (
            "OPENAI_API_KEY=sk-proj-abc123def456ghi789jkl012mno345",
            "OPENAI_API_KEY=[REDACTED:openai-key]",
        ),
        ("id AKIAIOSFODNN7EXAMPLE in config", "id [REDACTED:aws-access-key] in config"),
        ("slack xoxb-123456789012-abcdefghijkl", "slack [REDACTED:slack-token]"),
        (
            "post to https://hooks.slack.com/services/T0001/B0002/XXXXabcd1234",
            "post to [REDACTED:slack-webhook]",
        ),
        ("maps AIzaSyA1234567890abcdefghijklmnopqrstuv", "maps [REDACTED:google-api-key]"),
        ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "stripe [REDACTED:stripe-key]"),
        (
            "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U ok",
            "token [REDACTED:jwt] ok",
        ),
        (
            "curl -H 'Authorization: Bearer abcdef0123456789abcdef0123' https://api.example.com",
            "curl -H 'Authorization: Bearer [REDACTED:bearer-token]' https://api.example.com",
        ),
        (
            "Authorization: Basic dXNlcjpwYXNzd29yZDEyMw==",
            "Authorization: Basic [REDACTED:basic-auth]",
        ),
        (
            "DATABASE_URL=postgres://bob:s3cr3t@db.internal:5432/app",
            "DATABASE_URL=postgres://bob:[REDACTED:url-password]@db.internal:5432/app",
        ),
        (f"key:\n{PEM}\nafter", "key:\n[REDACTED:private-key]\nafter"),
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE\\n",
            "[REDACTED:private-key]\\n",
        ),
        ("PASSWORD=hunter2", "PASSWORD=[REDACTED:password]"),
        ("db_password = 'correct-horse'", "db_password = '[REDACTED:password]'"),
        ('{"client_secret": "abcd1234xyz"}', '{"client_secret": "[REDACTED:secret]"}'),
        ("API_KEY: zq8Rw2LmN4", "API_KEY: [REDACTED:api-key]"),
        ("SLACK_BOT_TOKEN=opaque-value-77", "SLACK_BOT_TOKEN=[REDACTED:token]"),
        ("password: hunter", "password: [REDACTED:password]"),
        ("the token: hUnTeRxYz then", "the token: [REDACTED:token] then"),
        ("token: abcdefghijklmnopq is set", "token: [REDACTED:token] is set"),
    ],
)
def test_secrets_are_replaced_by_their_kind(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "sha256:" + hashlib.sha256(b"x").hexdigest(),
        "commit 3f750f03d77e42327c5f9fcb9992110088330a32",
        f"session {uuid.UUID(int=123456789)}",
        "data:image/png;base64," + base64.b64encode(bytes(range(256)) * 4).decode(),
        "/home/dana/.ssh/id_rsa and src/auth/token.ts:12 and secrets/README.md",
        "max_tokens: 4096, tokens_used=100, Original token count: 5801",
        "token = getToken(); password: ${DB_PASSWORD}; api_key=os.environ['X']",
        "API_KEY=$OPENAI_API_KEY and SECRET=<your secret here> and PASSWORD=null",
        "task-management-system-overview-2024 and risk-assessment-v2-final-draft",
        "git clone git@github.com:owner/repo.git; https://example.com/a:b/c",
        "-----BEGIN PUBLIC KEY-----",
        "Use ZERION_API_KEY or documented optional x402, do not invent secrets",
        "2. name the token: etherscan labels the input token as DOMI",
        "the keyed URL is path-based (not a ?apikey= query string). three spots",
        "POLYGON_RPC_URL=https://polygon-rpc.com/?apikey=YOUR_KEY and API_KEY=your-api-key-here",
        "TOKEN=replace_me PASSWORD=changeme SECRET=placeholder",
    ],
)
def test_no_false_positives(text: str) -> None:
    assert redact(text) == text


def test_redact_count_counts_each_secret() -> None:
    text = f"A={GITHUB} B=postgres://u:p4ss@h/db PASSWORD=hunter2"
    assert redact_count(text) == (
        "A=[REDACTED:github-token] B=postgres://u:[REDACTED:url-password]@h/db "
        "PASSWORD=[REDACTED:password]",
        3,
    )
    assert redact_count("nothing here") == ("nothing here", 0)


def test_every_marker_kind_is_listed() -> None:
    assert len(set(SECRET_KINDS)) == len(SECRET_KINDS)
    assert {rule.kind for rule in _RULES} <= set(SECRET_KINDS)
    assert {"password", "token", "api-key", "secret"} <= set(SECRET_KINDS)  # the assignments
    marked = redact(f"GITHUB_TOKEN={GITHUB} {PEM} postgres://u:pw@h/db PASSWORD=x1y2z3")
    assert set(re.findall(r"\[REDACTED:([a-z0-9-]+)\]", marked)) <= set(SECRET_KINDS)


def test_redaction_is_idempotent() -> None:
    once = redact(f"GITHUB_TOKEN={GITHUB} {PEM} postgres://u:pw@h/db PASSWORD=x1y2z3")
    assert redact(once) == once


@pytest.mark.skipif(not CORPUS.is_dir(), reason="corpus not available")
def test_the_corpus_holds_no_secret_and_is_scanned_quickly() -> None:
    """The corpus was scanned for secrets when it was gathered and none was found."""
    text = (CORPUS / "claude-code-pv-case-review.jsonl").read_text(encoding="utf-8")
    started = time.perf_counter()
    result, count = redact_count(text)
    elapsed = time.perf_counter() - started
    assert (count, result == text) == (0, True)
    assert elapsed < 2.0  # about 0.5 s for these 3 MB


_PIECES = st.sampled_from(
    [
        "API_KEY",
        "Api-Key",
        "apikey",
        "SECRET",
        "client_Secret",
        "Token",
        "PASSWORD",
        "pwd",
        "Credentials",
        "Private_Key",
        "auth-KEY",
        "=",
        "==",
        ": ",
        ":",
        '"',
        "'",
        "`",
        " ",
        "\n",
        "(",
        "[",
        "abc123XYZ",
        "S3cr3tValue",
        "$VAR",
        "${HOME}",
        "<placeholder>",
        "os.environ",
        "null",
        "4096",
        "/etc/path",
        "é",
    ]
)


@settings(max_examples=400, deadline=None)
@given(text=st.lists(_PIECES, max_size=14).map("".join))
def test_the_secret_rule_replaces_what_the_case_blind_pattern_replaces(text: str) -> None:
    """The assignment rule looks for names on a lowercased copy (faster): the same output and
    counts as a case-blind search."""
    blind: dict[str, int] = {}
    expected = _assignments(text, blind, blind=True)
    counts: dict[str, int] = {}
    assert _assignments(text, counts) == expected
    assert counts == blind
    if not any(hint in text for rule in _RULES for hint in rule.hints):
        assert redact_count(text) == (expected, sum(blind.values()))
