"""What compactcli writes does not change by accident: every output over the fixtures and the
real sessions (when ../shared/corpus is there) has the digest tests/output_digest.json records
(`tests.digest`). A change meant to change outputs writes the file again with
`python -m tests.digest --write` and says why in its commit."""

from __future__ import annotations

from pathlib import Path

import orjson

from tests.digest import CORPUS, DIGEST_FILE, digests


def test_every_output_has_its_recorded_digest() -> None:
    recorded: dict[str, str] = orjson.loads(DIGEST_FILE.read_bytes())
    corpus = CORPUS if CORPUS.is_dir() else None
    found = digests(corpus)
    expected = {
        k: v for k, v in recorded.items() if corpus is not None or not k.startswith("corpus/")
    }
    changed = sorted(k for k in expected if found.get(k) != expected[k])
    assert not changed, f"{len(changed)} outputs changed, the first: {changed[:5]}"
    assert sorted(found) == sorted(expected)


def test_the_digest_covers_the_real_sessions_when_they_are_there() -> None:
    recorded: dict[str, str] = orjson.loads(DIGEST_FILE.read_bytes())
    names = {k.split(" ", 1)[0] for k in recorded if k.startswith("corpus/")}
    if CORPUS.is_dir():
        assert names == {f"corpus/{p.name}" for p in Path(CORPUS).glob("*.jsonl")}
    assert len(recorded) >= 6 * 60
