"""gitleaks' rules as compactcli applies them: the translation from RE2 (scripts/vendor_gitleaks.py),
and the engine's shortcuts (one pass for every keyword, windows around each keyword) finding
what searching the whole text with every rule finds."""

from __future__ import annotations

import re
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compactcli import gitleaks
from tests.conftest import script_module
from tests.test_secrets_shapes import SHAPES


def _script() -> ModuleType:
    return script_module("vendor_gitleaks")


VENDOR = _script()


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (r"\b(SG\.(?i)[a-z0-9]{66})", r"\b(SG\.(?i:[a-z0-9]{66}))"),
        (r"(?i)\b(abc)", r"(?i)\b(abc)"),
        (r"a(?i)b|c", r"a(?i:b)|(?i:c)"),
        (r"(?:x(?-i)Y|z)", r"(?:x(?-i:Y)|(?-i:z))"),
        (r"\bfoo\z", r"\bfoo\Z"),
        (r"[[:alnum:]_]{4}", r"[0-9A-Za-z_]{4}"),
        (r"[[a-z]", r"[\[a-z]"),
        (r"(?<name>ab)", r"(?P<name>ab)"),
        (r"\Qa.b\E+", r"a\.b+"),
        (r"\x{41}", r"\x41"),
        (r"[\w.-]{0,50}?(?:heroku)x", r"[\w.-]{0,50}?(?:heroku)x"),
    ],
)
def test_re2_expressions_are_translated(source: str, expected: str) -> None:
    assert VENDOR.translate(source) == expected
    re.compile(expected)


@pytest.mark.parametrize("source", [r"\pL+", r"\p{Greek}", r"(?U)a+", r"[[:^alpha:]]"])
def test_what_python_cannot_do_is_untranslatable(source: str) -> None:
    with pytest.raises(VENDOR.Untranslatable):
        VENDOR.translate(source)


def test_the_lazy_prefix_and_the_token_end_are_adapted() -> None:
    source = r"(?i)[\w.-]{0,50}?(?:okta)[ \t]{0,3}=([a-z]{4})(?:[\x60'" + '"' + r"\s;]|\\[nr]|$)"
    adapted = VENDOR.widen_token_end(VENDOR.drop_lazy_prefix(source))
    assert adapted.startswith("(?i)(?:okta)")
    assert re.search(adapted, "OKTA=abcd, then") is not None  # a comma ends the token now
    assert VENDOR.width(r"ab[0-9]{3}") == 5
    assert VENDOR.width(r"ab[0-9]+") is None


def test_every_vendored_rule_compiles_and_has_keywords() -> None:
    data = gitleaks._data()
    for rule in data["rules"]:
        re.compile(rule["regex"], re.ASCII)
        assert rule["keywords"] and all(k == k.lower() for k in rule["keywords"])
        assert rule["width"] is None or rule["width"] > 0


def _everything(text: str) -> list[gitleaks.Finding]:
    """What the rules find when each one searches the whole text (no windows, no trie)."""
    ruleset = gitleaks._ruleset()
    lowered = text.lower()
    found = []
    for rule in ruleset.rules:
        if not any(k in lowered for k in rule.keywords):
            continue
        for match in rule.pattern.finditer(text):
            finding = gitleaks._finding(rule, ruleset.allowlist, match, text)
            if finding is not None:
                found.append(finding)
    return gitleaks._merged(found)


NOISE = st.sampled_from(
    [
        "\n",
        " ",
        "ok",
        "Task: deploy the key rotation",
        '{"id": "toolu_01XGh3kY2VbWqLmN8pR4sT6u"}',
        "x" * 300,
        "commit 3f750f03d77e42327c5f9fcb9992110088330a32",
        "the token is",
        "sk",
        "ey",
        "s.",
        "curl",
    ]
)
PIECES = st.one_of(NOISE, st.sampled_from([s.text() for s in SHAPES]))


@settings(max_examples=150, deadline=None)
@given(pieces=st.lists(PIECES, min_size=1, max_size=12))
def test_the_shortcuts_find_what_a_whole_search_finds(pieces: list[str]) -> None:
    text = " ".join(pieces)
    assert gitleaks.find(text) == _everything(text)


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet="abcdefghijklmnopqrstuvwxyz_.-~3 ", max_size=80))
def test_every_place_of_every_keyword_is_found(text: str) -> None:
    ruleset = gitleaks._ruleset()
    places = gitleaks._keyword_places(text, ruleset)
    words = {k for rule in ruleset.rules for k in rule.keywords}
    expected = {
        word: sorted(i for i in range(len(text)) if text.startswith(word, i)) for word in words
    }
    assert {w: sorted(p) for w, p in places.items()} == {w: p for w, p in expected.items() if p}
