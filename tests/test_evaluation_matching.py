"""Probe files and matching: the schema, normalization, and each level of a match."""

from __future__ import annotations

import pytest

from compactcli.evaluation.matching import Haystack, find, normalize, normalize_needle, occurrences
from compactcli.evaluation.probes import (
    ProbeError,
    dump_probes,
    load_probes,
    make_probe,
    parse_probes,
)
from tests.conftest import EVAL_FIXTURES


def test_probe_files_round_trip_byte_for_byte() -> None:
    path = EVAL_FIXTURES / "claude-code-20k-s1.probes.jsonl"
    data = path.read_bytes()
    assert dump_probes(load_probes(str(path))) == data


def test_a_probe_has_the_schema_of_eval_md() -> None:
    probe = make_probe(
        "p017", "error_string", "ECONNREFUSED 127.0.0.1:6379", key_terms=("ECONNREFUSED", "6379")
    )
    assert probe.to_dict() == {
        "id": "p017",
        "category": "error_string",
        "fact": "ECONNREFUSED 127.0.0.1:6379",
        "match": {
            "mode": "normalized",
            "any_of": ["ECONNREFUSED 127.0.0.1:6379"],
            "key_terms": ["ECONNREFUSED", "6379"],
            "window": 200,
            "case_sensitive": True,
        },
        "origin": {"message_index": None, "line": None, "carrier": "none", "depth": None},
        "weight": 1.5,
        "must_survive": False,
        "superseded_by": None,
    }
    assert make_probe("c1", "user_constraint", "use pnpm").must_survive is True
    assert make_probe("c1", "user_constraint", "use pnpm").match.case_sensitive is False


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b"{", "probes.jsonl:1: invalid JSON: unexpected end of data: line 1 column 2 (char 1)"),
        (b"[]", "probes.jsonl:1: a probe must be a JSON object"),
        (
            b'{"id": "a", "category": "x", "fact": "f", "match": {}}',
            "probes.jsonl:1: unknown "
            "category 'x'; known: user_constraint, pending_ask, file_modified, file_read, "
            "error_string, decision, identifier, superseded, decoy",
        ),
        (b'{"id": "a", "category": "decision"}', "probes.jsonl:1: missing 'fact'"),
        (
            b'{"id": "a", "category": "decision", "fact": "f", "match": {"mode": "key_terms"}}',
            "probes.jsonl:1: mode 'key_terms' needs match.key_terms",
        ),
        (
            b'{"id": "a", "category": "decision", "fact": "f", "match": {"mode": "fuzzy"}}',
            "probes.jsonl:1: unknown match mode 'fuzzy'; known: exact, normalized, key_terms, path",
        ),
        (
            b'{"id": "a", "category": "decoy", "fact": "f", "match": {"window": 0}}',
            "probes.jsonl:1: match.window must be a positive integer",
        ),
    ],
)
def test_a_malformed_probe_names_its_file_and_line(line: bytes, message: str) -> None:
    with pytest.raises(ProbeError) as caught:
        parse_probes(line + b"\n", "probes.jsonl")
    assert str(caught.value) == message


def test_only_id_category_and_fact_are_required() -> None:
    [ask, decision, path] = parse_probes(
        b'{"id": "a", "category": "pending_ask", "fact": "add tests"}\n'
        b'{"id": "d", "category": "decision", "fact": "use Redis", "match": {"key_terms": ["redis"]}}\n'
        b'{"id": "f", "category": "file_read", "fact": "src/a.py"}\n'
    )
    assert (ask.match.mode, ask.match.any_of, ask.must_survive, ask.weight) == (
        "normalized",
        ("add tests",),
        True,
        2.0,
    )
    assert (decision.match.mode, decision.match.key_terms) == ("key_terms", ("redis",))
    assert (path.match.mode, path.must_survive, path.weight) == ("path", False, 0.5)


def test_ids_are_unique_and_references_resolve() -> None:
    one = b'{"id": "a", "category": "decoy", "fact": "f", "match": {}}\n'
    with pytest.raises(ProbeError, match=r"^p: duplicate probe id 'a'$"):
        parse_probes(one + one, "p")
    dangling = (
        b'{"id": "b", "category": "superseded", "fact": "x", "match": {}, "superseded_by": "z"}\n'
    )
    with pytest.raises(
        ProbeError, match=r"^p: probe 'b' is superseded by 'z', which is not in the file$"
    ):
        parse_probes(dangling, "p")


def test_normalization_drops_read_prefixes_emphasis_quotes_and_spacing() -> None:
    text = '     1→**Never** push   to `main`.\n    12\tError: "boom"'
    assert normalize(text) == "Never push to main. Error: boom"
    assert normalize(text, case_sensitive=False) == "never push to main. error: boom"
    assert normalize_needle("Never push to main.") == "Never push to main"
    assert normalize("REDIS_URL and snake_case_name") == "REDIS_URL and snake_case_name"


def _hay(*segments: str) -> Haystack:
    return Haystack(list(segments))


def test_levels_exact_then_normalized_then_key_terms() -> None:
    probe = make_probe(
        "d",
        "decision",
        "Use a Redis connection pool instead of per-request connections.",
        key_terms=("redis", "connection pool"),
        window=60,
    )
    exact = find(
        probe, _hay("x", "Use a Redis connection pool instead of per-request connections.")
    )
    assert (exact and exact.level, exact and exact.segment) == ("exact", 1)
    normalized = find(
        probe, _hay("use a **redis** connection pool instead of per-request connections")
    )
    assert normalized is not None and normalized.level == "normalized"
    paraphrase = find(probe, _hay("We now keep a connection pool in Redis."))
    assert paraphrase is not None and paraphrase.level == "key_terms"
    assert find(probe, _hay("a connection pool " + "x" * 80 + " redis")) is None  # too far apart
    assert find(probe, _hay("connection pool", "redis")) is None  # never across two segments


def test_a_fact_is_not_found_inside_a_longer_word_or_number() -> None:
    probe = make_probe("i", "identifier", "PORT=6543", mode="exact")
    assert find(probe, _hay("PORT=65432")) is None
    assert find(probe, _hay("PORT=6543,")) is not None
    assert find(probe, _hay("XPORT=6543")) is None


def test_a_word_is_found_in_text_written_without_spaces() -> None:
    probe = make_probe("g", "pending_ask", "upload to GitHub", key_terms=("GitHub", "上传"))
    assert find(probe, _hay("做完之后上传到GitHub仓库")) is not None
    name = make_probe("n", "identifier", "cutesticky", mode="exact")
    assert find(name, _hay("项目改名为cutesticky了")) is not None
    assert find(name, _hay("cutestickyapp")) is None  # still not inside a longer word
    assert find(make_probe("t", "decision", "上传", mode="normalized"), _hay("上传到")) is not None


def test_paths_without_cwd_dot_slash_or_doubled_separators() -> None:
    probe = make_probe("f", "file_modified", "src/app/auth.py", cwd="/home/dev/proj")
    for text in (
        '{"file_path": "/home/dev/proj/src/app/auth.py"}',
        "edited ./src//app/auth.py today",
        "*** Update File: src/app/auth.py\n",
    ):
        hit = find(probe, _hay(text))
        assert hit is not None and hit.level in ("exact", "path"), text
    for text in ("src/app/auth.pyc", "lib/src/app/auth.py", "auth.py"):
        assert find(probe, _hay(text)) is None, text
    basename = make_probe("f", "file_read", "src/app/auth.py", basename_ok=True)
    assert find(basename, _hay("see auth.py")) is not None


def test_a_windows_path_matches_with_either_separator_and_its_folder_in_any_case() -> None:
    probe = make_probe("w", "file_modified", "D:\\Projects\\Work\\backend\\gather.py")
    cwd = "D:\\Projects\\Work"
    for text in (
        "- backend\\gather.py — written",
        "edited backend/gather.py",
        "d:/projects/work/backend/gather.py",
    ):
        assert find(probe, _hay(text), cwd=cwd) is not None, text
    assert find(probe, _hay("backend\\gather.pyc"), cwd=cwd) is None


def test_occurrences_give_every_place_in_order() -> None:
    probe = make_probe("s", "superseded", "X=1", superseded_by="t")
    assert occurrences(probe.match, _hay("X=1 then", "X=1 again, X=12")) == [(0, 0), (1, 9)]
