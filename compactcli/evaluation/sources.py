"""Where the evaluation's fixtures come from: a folder, transcripts one by one, the built-in set.

A fixture is a transcript with its probe file (`compactcli.evaluation.probes`), named after the
transcript's file name without its suffix. `load_fixtures` reads a folder of probe files,
`load_files` the transcripts named, and `default_folder()` is the synthetic set that ships inside
the package. A fixture whose bytes are what the generator makes for the spec its name gives
(`claude-code-20k-s1`) gets its generated session back (`Fixture.session`), which later rounds
continue; every other fixture is a real (or hand-made) session. What cannot be read raises
`FixtureError` naming the path, or `ProbeError` for a malformed probe file.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from compactcli.evaluation.generator import SIZES, Fixture, Spec, generate
from compactcli.evaluation.measure import exact_counter
from compactcli.evaluation.probes import load_probes
from compactcli.evaluation.render import RENDER_FORMATS
from compactcli.evaluation.session_model import Session
from compactcli.loading import read_transcript
from compactcli.transcript import Transcript

PROBES_SUFFIX = ".probes.jsonl"
TRANSCRIPT_SUFFIXES: tuple[str, ...] = (".jsonl",)
"""The file suffixes a transcript is looked up with (what `compactcli` reads: JSON Lines)."""

PACKAGE_FIXTURES = "fixtures"
"""The folder of the built-in fixtures inside `compactcli.evaluation`."""


class FixtureError(ValueError):
    """A fixture that cannot be evaluated (a probe file without its transcript...)."""


def default_folder() -> str:
    """The folder of the built-in synthetic fixtures inside the installed package
    (`compactcli/evaluation/fixtures/`: transcripts, probes, recorded LLM answers, the baseline
    and its report), located with `importlib.resources`, so an installed compactcli evaluates
    them from any working folder.
    """
    found = resources.files("compactcli.evaluation").joinpath(PACKAGE_FIXTURES)
    if not isinstance(found, Path) or not found.is_dir():
        raise FixtureError(
            f"{found}: the built-in fixtures are not a folder on disk (name one with --fixtures)"
        )
    return str(found)


def _stem(path: str) -> str:
    name = os.path.basename(path)
    for suffix in (PROBES_SUFFIX, *TRANSCRIPT_SUFFIXES):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _transcript_in(folder: str, name: str) -> str | None:
    for suffix in TRANSCRIPT_SUFFIXES:
        path = os.path.join(folder, name + suffix)
        if os.path.isfile(path):
            return path
    return None


def load_fixtures(folder: str, transcripts: str | None = None) -> list[Fixture]:
    """Every fixture of `folder`, in name order: every `NAME.probes.jsonl` in `folder`, with the
    transcript beside it (`NAME` plus a suffix of `TRANSCRIPT_SUFFIXES`); when there is none
    there and `transcripts` names a folder, the transcript of that name in `transcripts`, so
    probe files can be kept in a repository while the sessions they describe live elsewhere.
    """
    if not os.path.isdir(folder):
        raise FixtureError(f"{folder}: no such folder")
    if transcripts is not None and not os.path.isdir(transcripts):
        raise FixtureError(f"{transcripts}: no such folder (--transcripts)")
    names = sorted(
        n[: -len(PROBES_SUFFIX)] for n in os.listdir(folder) if n.endswith(PROBES_SUFFIX)
    )
    if not names:
        raise FixtureError(f"{folder}: no probe files (NAME.probes.jsonl next to NAME.jsonl)")
    fixtures: list[Fixture] = []
    for name in names:
        path = _transcript_in(folder, name)
        if path is None and transcripts is not None:
            path = _transcript_in(transcripts, name)
        if path is None:
            where = os.path.join(folder, f"{name}.jsonl")
            also = ""
            if transcripts is not None:
                also = f", and so is {os.path.join(transcripts, name + TRANSCRIPT_SUFFIXES[0])}"
            raise FixtureError(f"{where}: missing{also} (its probe file is {name}{PROBES_SUFFIX})")
        fixtures.append(_fixture(name, path, os.path.join(folder, name + PROBES_SUFFIX)))
    return fixtures


def load_files(paths: Sequence[str], probes: Sequence[str] = ()) -> list[Fixture]:
    """The transcripts `paths` with their probe files, in order: the ones in `probes`, paired in
    order (one probe file for one transcript, or one per transcript), else `NAME.probes.jsonl`
    beside `NAME.jsonl`.
    """
    if probes and len(probes) != len(paths):
        raise FixtureError(
            f"{probes[0]}: {len(probes)} probe file(s) for {len(paths)} transcript(s); give "
            "one --probes per transcript, in the same order, or keep NAME.probes.jsonl "
            "beside each NAME.jsonl"
        )
    fixtures: list[Fixture] = []
    for i, path in enumerate(paths):
        if os.path.isdir(path):
            raise FixtureError(
                f"{path}: a folder; name transcript files, or evaluate a folder of "
                "NAME.jsonl with NAME.probes.jsonl files with --fixtures"
            )
        if not os.path.isfile(path):
            raise FixtureError(f"{path}: no such file")
        name = _stem(path)
        probe_file = (
            probes[i] if probes else os.path.join(os.path.dirname(path), name + PROBES_SUFFIX)
        )
        if not os.path.isfile(probe_file):
            hint = "" if probes else f" (the probe file of {path}; or name one with --probes)"
            raise FixtureError(f"{probe_file}: no such file{hint}")
        fixtures.append(_fixture(name, path, probe_file))
    return fixtures


def check_names(fixtures: Sequence[Fixture]) -> None:
    """`FixtureError` when two fixtures share a name (their figures would be mixed up)."""
    seen: set[str] = set()
    for fixture in fixtures:
        if fixture.name in seen:
            raise FixtureError(
                f"{fixture.transcript.source}: a second fixture named {fixture.name!r}; "
                "evaluate transcripts with different file names"
            )
        seen.add(fixture.name)


def _fixture(name: str, path: str, probe_file: str) -> Fixture:
    transcript = read_transcript(path)
    probes = load_probes(probe_file)
    return Fixture(name, transcript, tuple(probes), _session_of(name, transcript))


def _spec_of(name: str) -> Spec | None:
    parts = name.rsplit("-", 2)
    if len(parts) != 3 or parts[1] not in SIZES or not parts[2].startswith("s"):
        return None
    if parts[0] not in RENDER_FORMATS or not parts[2][1:].isdigit():
        return None
    return Spec(parts[0], parts[1], int(parts[2][1:]))


def _session_of(name: str, transcript: Transcript) -> Session | None:
    """The generated session behind a fixture, when regenerating it gives the same bytes."""
    spec = _spec_of(name)
    if spec is None or spec.format != transcript.format:
        return None
    fixture = generate(spec, exact_counter(spec.format))
    if hashlib.sha256(fixture.data).hexdigest() != transcript.sha256:
        return None
    return fixture.session
