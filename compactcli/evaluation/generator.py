"""The seeded fixture generator: a transcript in a given format and size, and its probe file.

`generate(spec, counter)` builds the session a `Spec` (format, size, seed) names, renders it
(`render.render`), reads it back as a `Transcript`, and turns every planted fact into a probe
(`probes_for`). The same arguments give the same bytes, transcript and probes alike, on every
machine. Fixtures are named `FORMAT-SIZE-sSEED` (`claude-code-20k-s1`); `write_fixture` writes
`NAME.jsonl` and `NAME.probes.jsonl` into a folder, `SPECS` is the committed set under
`fixtures/eval/`, and `parse_spec("claude-code:500k:3")` reads the `--generate` form.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from compactcli.errors import UsageError
from compactcli.evaluation.measure import Counter, count
from compactcli.evaluation.probes import Origin, Probe, dump_probes, make_probe
from compactcli.evaluation.render import RENDER_FORMATS, Rendered, dumps, render
from compactcli.evaluation.scenario import build_session
from compactcli.evaluation.session_model import Fact, Session
from compactcli.formats import get_dialect
from compactcli.tokens import TokenCounter
from compactcli.transcript import Record, Transcript

SIZES: dict[str, int] = {"20k": 20_000, "100k": 100_000, "500k": 500_000}
SIZE_TOLERANCE = 0.1
PLAN_ATTEMPTS = 4


@dataclass(frozen=True, slots=True)
class Spec:
    """What to generate: a format, a nominal size, a seed."""

    format: str
    size: str
    seed: int

    @property
    def name(self) -> str:
        return f"{self.format}-{self.size}-s{self.seed}"

    @property
    def tokens(self) -> int:
        return SIZES[self.size]


SPECS: tuple[Spec, ...] = (
    Spec("claude-code", "20k", 1),
    Spec("codex", "20k", 2),
    Spec("openai", "20k", 3),
    Spec("anthropic", "20k", 4),
    Spec("claude-code", "100k", 5),
    Spec("codex", "100k", 6),
)
"""The committed fixtures (fixtures/eval/): every format at 20K, Claude Code and Codex at 100K.
The 500K size is generated at run time (`compactcli eval --generate claude-code:500k:7`)."""


def parse_spec(text: str) -> Spec:
    """`FORMAT:SIZE:SEED` (`claude-code:500k:7`) as a Spec; `UsageError` when malformed."""
    parts = text.split(":")
    if len(parts) != 3:
        raise UsageError(
            f"--generate takes FORMAT:SIZE:SEED (e.g. claude-code:500k:7), not {text!r}"
        )
    fmt, size, seed = parts
    if fmt not in RENDER_FORMATS:
        raise UsageError(
            f"--generate: unknown format {fmt!r}; generated formats: {', '.join(RENDER_FORMATS)}"
        )
    if size not in SIZES:
        raise UsageError(f"--generate: unknown size {size!r}; sizes: {', '.join(SIZES)}")
    if not seed.isdigit():
        raise UsageError(f"--generate: the seed must be a whole number, not {seed!r}")
    return Spec(fmt, size, int(seed))


@dataclass(frozen=True, slots=True)
class Fixture:
    """A transcript and its probes."""

    name: str
    transcript: Transcript
    probes: tuple[Probe, ...]
    session: Session | None = None  # set for generated fixtures (drift rounds need it)

    @property
    def data(self) -> bytes:
        return b"".join((r.line or dumps(r.raw)) for r in self.transcript.records)


def transcript_from_records(raws: Sequence[Mapping[str, Any]], fmt: str, source: str) -> Transcript:
    """A Transcript over JSON records, as writing them and reading the bytes back would give."""
    records: list[Record] = []
    for number, raw in enumerate(raws, 1):
        line = dumps(raw)
        records.append(Record(raw=orjson.loads(line), line=line, lineno=number))
    data = b"".join(r.line or b"" for r in records)
    return Transcript(
        records=tuple(records),
        format=fmt,
        source=source,
        sha256=hashlib.sha256(data).hexdigest(),
    )


def generate(spec: Spec, counter: Counter) -> Fixture:
    """The fixture `spec` describes; `counter` (the exact o200k counter) measures its size and the
    depths.

    The size is the context's exact o200k count as `compactcli estimate --method exact` reports
    it, close to the target: within 10% where the episodes allow it (a 20K session is only a few
    episodes, so within about 20% there). A session whose measured size is more than
    `SIZE_TOLERANCE` off the target is planned again for a target scaled by the miss (at most
    `PLAN_ATTEMPTS` plans; the closest one is kept).
    """
    target = spec.tokens
    best: tuple[int, Session, Rendered, Transcript] | None = None
    for _ in range(PLAN_ATTEMPTS):
        session = build_session(spec.seed, target)
        rendered = render(session, spec.format)
        transcript = transcript_from_records(rendered.records, spec.format, f"{spec.name}.jsonl")
        measured = count(transcript, counter)
        miss = abs(measured - spec.tokens)
        if best is None or miss < best[0]:
            best = (miss, session, rendered, transcript)
        if miss <= SIZE_TOLERANCE * spec.tokens:
            break
        target = max(1, target * spec.tokens // max(1, measured))
    assert best is not None
    _, session, rendered, transcript = best
    probes = probes_for(session.facts, rendered.anchors, transcript, counter, session.project.cwd)
    return Fixture(spec.name, transcript, tuple(probes), session)


def probes_for(
    facts: Sequence[Fact],
    anchors: dict[str, int],
    transcript: Transcript,
    counter: TokenCounter,
    cwd: str,
) -> list[Probe]:
    """Probes for `facts`, with origins located in `transcript`: the context message, the input
    line, the carrier and the depth (the share of the context's exact o200k tokens that come
    before the message).
    """
    context = get_dialect(transcript.format).context(transcript)
    sizes = [counter.message_tokens(m) for m in context]
    total = max(1, sum(sizes))
    first_message: dict[int, int] = {}
    before: list[int] = []
    running = 0
    for position, message in enumerate(context):
        first_message.setdefault(message.index, position)
        before.append(running)
        running += sizes[position]
    probes: list[Probe] = []
    for fact in facts:
        origin = Origin(carrier=fact.carrier)
        record = anchors.get(fact.id)
        if record is not None:
            found = first_message.get(record)
            origin = Origin(
                message_index=found,
                line=transcript.records[record].lineno,
                carrier=fact.carrier,
                depth=round(before[found] / total, 4) if found is not None else None,
            )
        probes.append(_probe(fact, origin, cwd))
    return probes


def _probe(fact: Fact, origin: Origin, cwd: str) -> Probe:
    if fact.category in ("file_modified", "file_read"):
        return make_probe(fact.id, fact.category, fact.fact, cwd=cwd, origin=origin)
    if fact.category == "superseded":
        return make_probe(
            fact.id,
            "superseded",
            fact.fact,
            origin=origin,
            superseded_by=fact.superseded_by,
        )
    return make_probe(
        fact.id,
        fact.category,
        fact.fact,
        key_terms=fact.key_terms,
        mode="exact" if fact.mode == "exact" else None,
        origin=origin,
    )


def write_fixture(folder: str, fixture: Fixture) -> tuple[str, str]:
    """Write `NAME.jsonl` and `NAME.probes.jsonl` into `folder`; returns both paths."""
    os.makedirs(folder, exist_ok=True)
    transcript_path = os.path.join(folder, f"{fixture.name}.jsonl")
    probes_path = os.path.join(folder, f"{fixture.name}.probes.jsonl")
    with open(transcript_path, "wb") as handle:
        handle.write(fixture.data)
    with open(probes_path, "wb") as handle:
        handle.write(dump_probes(fixture.probes))
    return transcript_path, probes_path
