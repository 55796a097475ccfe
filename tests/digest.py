"""The digest of every output compactcli writes over the fixtures and the real sessions.

`digests(corpus)` runs each command of `COMBINATIONS` (the command line, in process) on every
transcript in fixtures/transcripts, fixtures/secrets and the evaluation fixtures, and on every
session in `corpus` when it is given, and returns one sha256 per (file, combination) of the
bytes written (the transcript, its exit code and its `--json` row without timings). A refactor
that must not change what is written keeps these equal: tests/test_output_digest.py compares
them with tests/output_digest.json. After a change that is meant to change outputs,
`python -m tests.digest --write [CORPUS]` writes the file again (the commit says why).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import orjson

from compactcli import read_transcript
from compactcli.estimate import EstimateOptions, estimate
from compactcli.formats import get_dialect
from compactcli.tokens import get_counter
from tests.cli_runner import run

ROOT = Path(__file__).resolve().parent.parent
DIGEST_FILE = ROOT / "tests" / "output_digest.json"
CORPUS = ROOT.parent / "shared" / "corpus"
SOURCES = (
    ROOT / "fixtures" / "transcripts",
    ROOT / "fixtures" / "secrets",
    ROOT / "compactcli" / "evaluation" / "fixtures",
)
_TIMINGS = ("seconds", "elapsed")


def _tenth(path: Path) -> str:
    transcript = read_transcript(str(path))
    counter = get_counter(
        "heuristic",
        model=get_dialect(transcript.format).model(transcript),
        format=transcript.format,
    )
    tokens = estimate(transcript, EstimateOptions(), counter=counter).tokens
    return str(max(1, tokens // 10))


COMBINATIONS: dict[str, Callable[[Path], list[str]]] = {
    "compact": lambda p: ["compact"],
    "compact-force": lambda p: ["compact", "--force"],
    "compact-10pct": lambda p: ["compact", "--max-tokens", _tenth(p)],
    "compact-force-redact": lambda p: ["compact", "--force", "--redact", "--cut-turn"],
    "prune": lambda p: ["prune"],
    "summarize": lambda p: ["summarize", "--force"],
}


def _files(corpus: Path | None) -> Iterator[tuple[str, Path]]:
    for folder in SOURCES:
        for path in sorted(folder.glob("*.jsonl")):
            if not path.name.endswith(".probes.jsonl"):
                yield f"{folder.relative_to(ROOT)}/{path.name}", path
    if corpus is not None and corpus.is_dir():
        for path in sorted(corpus.glob("*.jsonl")):
            yield f"corpus/{path.name}", path


def _without_timings(value: object) -> object:
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items() if k not in _TIMINGS}
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


def digest_one(path: Path, args: Sequence[str], folder: Path) -> str:
    out = folder / "out.jsonl"
    out.unlink(missing_ok=True)
    done = run(*args, str(path), "-o", str(out), "--json")
    digest = hashlib.sha256()
    digest.update(f"exit {done.exit_code}\n".encode())
    stdout = done.stdout.replace(str(path), "<input>").replace(str(out), "<output>")
    for line in stdout.splitlines():
        row = orjson.loads(line)
        row.pop("output", None)
        row.pop("path", None)
        digest.update(orjson.dumps(_without_timings(row), option=orjson.OPT_SORT_KEYS))
    written = out.read_bytes() if out.exists() else b"<no output>"
    digest.update(written.replace(str(path).encode(), b"<input>"))
    return digest.hexdigest()


def digests(corpus: Path | None) -> dict[str, str]:
    found: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as folder:
        for name, path in _files(corpus):
            for combination, args in COMBINATIONS.items():
                found[f"{name} {combination}"] = digest_one(path, args(path), Path(folder))
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0] if __doc__ else None)
    parser.add_argument("--write", action="store_true", help="write tests/output_digest.json")
    parser.add_argument("corpus", nargs="?", default=str(CORPUS))
    options = parser.parse_args(argv)
    found = digests(Path(options.corpus))
    if options.write:
        DIGEST_FILE.write_bytes(
            orjson.dumps(found, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
        )
    print(f"{len(found)} outputs", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
