"""Invalid in, never invalid out: refusing a transcript that fails its checks, or repairing it.

Every command that writes a transcript admits its input first (`admit`): a transcript with an
error under `compactcli.validation.validate` is refused with `InvalidTranscript` (exit 1), which
carries the findings `compactcli validate` prints for it, and nothing is written; with
`repair=True` it is repaired instead, the way the agent that wrote it repairs a session it loads
(each format's repair, built on `compactcli.formats.repairing`). `output_problem` is the same
guard on what a stage is about to write.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from compactcli.errors import InputError, InvalidTranscript
from compactcli.formats import FORMATS, get_dialect, get_format
from compactcli.formats.base import Finding
from compactcli.formats.detect import SNIFF_RECORDS, detect_format
from compactcli.formats.repairing import Repair, RepairDict
from compactcli.stats import StageStats
from compactcli.transcript import Transcript
from compactcli.validation import ValidationReport, validate

if TYPE_CHECKING:
    from compactcli.tokens import TokenCounter

__all__ = [
    "Admitted",
    "Repair",
    "admit",
    "check",
    "describe",
    "output_problem",
    "read_back_problem",
    "repair",
]

REPAIRED_WARNINGS = frozenset({"call-unanswered"})
"""Warnings a repair fixes too: what the agent fixes on load although the file is valid."""

MAX_PASSES = 10
"""How many passes `repair` makes at most (each fixes what the one before left or caused)."""

Fix = Callable[[Transcript, Sequence[Finding]], tuple[Transcript, list[Repair]]]


@dataclass(frozen=True, slots=True)
class Admitted:
    """A transcript a command may go on with, and the repairs that made it so (none when it
    was valid as it was)."""

    transcript: Transcript
    repairs: tuple[Repair, ...] = ()
    records_before: int = 0
    seconds: float = 0.0

    def lines(self) -> list[str]:
        """One line per repair: `PATH:LINE: repaired CODE: WHAT WAS DONE` (`describe`)."""
        return [describe(self.transcript.source, r.to_dict()) for r in self.repairs]

    def staged(self, counter: TokenCounter) -> Transcript:
        """The transcript with a `repair` stage in its stats when it was repaired (the repairs under
        `details["repairs"]`, token figures of the repaired transcript's context), for the stats
        report.
        """
        if not self.repairs:
            return self.transcript
        transcript = self.transcript
        from compactcli.estimate import context_tokens  # only when there were repairs

        tokens = context_tokens(transcript, counter)
        context = get_dialect(transcript.format).context(transcript)
        stats = StageStats(
            stage="repair",
            method=counter.method,
            tokens_before=tokens,
            tokens_after=tokens,
            records_before=self.records_before,
            records_after=len(transcript.records),
            messages_before=len(context),
            messages_after=len(context),
            seconds=self.seconds,
            changed=True,
            details={"repairs": [r.to_dict() for r in self.repairs]},
        )
        return transcript.evolve(stats=(*transcript.stats, stats))


def describe(path: str, repair: RepairDict) -> str:
    """The line that reports one repair (`Repair.to_dict()`) made to file `path`."""
    return f"{path}:{repair['line']}: repaired {repair['code']}: {repair['action']}"


def admit(transcript: Transcript, *, repair: bool = False) -> Admitted:
    """`transcript` if it validates (`check`), else its repair when `repair` is set (`repair`);
    `InvalidTranscript` otherwise. A valid transcript whose calls are all answered is admitted as
    it is, the same object.
    """
    if repair:
        return _repair(transcript)
    check(transcript)
    return Admitted(transcript, records_before=len(transcript.records))


def check(transcript: Transcript) -> None:
    """Raise `InvalidTranscript` when `transcript` has a validate error."""
    report = validate(transcript)
    if report.ok:
        return
    count = _plural(len(report.errors), "error")
    raise InvalidTranscript(
        transcript.source,
        f"invalid {transcript.format} transcript ({count}): nothing written; --repair repairs "
        "it as the agent does when it loads a session",
        _found(report),
    )


def repair(transcript: Transcript) -> Admitted:
    """`transcript` repaired; `InvalidTranscript` (naming the first error left) when it cannot be
    made valid.

    The format's repair runs pass after pass on its own result until the transcript validates,
    with no warning left that the agent's loader repairs (`REPAIRED_WARNINGS`: a call left
    without a result, which the agent answers on load), or a pass changes nothing. Its fixes are
    a placeholder result for every call left without one, results that answer no call dropped,
    and duplicate ids and broken chains resolved as the agent's loader resolves them. A repaired
    file must still read back as its format.
    """
    started = time.perf_counter()
    report = first = validate(transcript)
    fix = _fixer(transcript.format)
    current = transcript
    done: list[Repair] = []
    for _ in range(MAX_PASSES):
        findings = (*report.errors, *report.warnings)
        if report.ok and not any(f.code in REPAIRED_WARNINGS for f in findings):
            break
        fixed, made = fix(current, findings)
        if not made or fixed.records is current.records:
            break
        done += made
        current = fixed
        report = validate(current)
    if report.ok and current.records is not transcript.records:
        lost = read_back_problem(transcript, current, what="the repaired file")
        if lost is not None:
            raise InvalidTranscript(
                transcript.source, f"cannot be repaired: {lost}; nothing written", _found(first)
            )
    if not report.ok:
        left = report.errors[0]
        count = _plural(len(report.errors), "error")
        raise InvalidTranscript(
            transcript.source,
            f"cannot be repaired: line {left.line}: {left.code}: {left.message} ({count} left "
            f"after {_plural(len(done), 'repair')}); nothing written",
            _found(first),
        )
    return Admitted(
        current,
        tuple(done),
        records_before=len(transcript.records),
        seconds=time.perf_counter() - started,
    )


_repair = repair


def output_problem(before: Transcript, after: Transcript) -> str | None:
    """Why `after`, a stage's result from the admitted `before`, must not be written: an error
    `validate` finds in it, or records that would not read back as its format where `before`'s
    do (None when it may be written)."""
    if after.records is before.records:
        return None
    errors = validate(after).errors
    if errors:
        first = errors[0]
        return f"the result would not validate (line {first.line}: {first.code}: {first.message})"
    return read_back_problem(before, after)


def read_back_problem(
    before: Transcript, after: Transcript, *, what: str = "the result"
) -> str | None:
    """Why the records of `after` (`what` it is) would not read back as its format (detected
    from its first records, as `read_transcript` does) when those of `before` do; None when
    they would."""
    found = _detected(after)
    if found == after.format or _detected(before) != before.format:
        return None
    if found in FORMATS:
        return f"{what} would not validate: it would read back as {found}, not {after.format}"
    return f"{what} would not validate: it would not read back as {after.format} ({found})"


def _detected(transcript: Transcript) -> str:
    """The format `read_transcript` would detect in `transcript`'s records, or why none."""
    objects = list(
        itertools.islice(
            (r.raw for r in transcript.records if isinstance(r.raw, dict)), SNIFF_RECORDS
        )
    )
    try:
        return detect_format(objects, transcript.source)
    except InputError as error:
        return error.message


def _fixer(format: str) -> Fix:
    return get_format(format).repair()


def _found(report: ValidationReport) -> tuple[tuple[int, str, str, str], ...]:
    findings = sorted((*report.errors, *report.warnings), key=lambda f: (f.line, f.code))
    return tuple((f.line, f.severity, f.code, f.message) for f in findings)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"
