"""Checking a transcript against its format's invariants (FORMATS.md §6).

`validate(transcript)` runs the transcript's dialect checks and returns a `ValidationReport`:
errors (the agent would reject or repair the file) and warnings (irregularities real agents write
and repair on load, such as a call left unanswered by an interrupted turn), each with the input
line, a stable code and a message, in line order; `ValidationReport.to_dict()` (a
`ValidationDict`) is its `--json` object.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from compactcli.formats import get_dialect
from compactcli.formats.base import Finding, FindingDict
from compactcli.transcript import Transcript


class ValidationDict(TypedDict):
    """`ValidationReport.to_dict()`: the `compactcli validate --json` object of one file."""

    path: str
    format: str
    errors: list[FindingDict]
    warnings: list[FindingDict]


@dataclass(frozen=True, slots=True)
class ValidationReport:
    """What `validate` found in one transcript."""

    path: str
    format: str
    errors: tuple[Finding, ...]
    warnings: tuple[Finding, ...]

    @property
    def ok(self) -> bool:
        return not self.errors

    def to_dict(self) -> ValidationDict:
        return {
            "path": self.path,
            "format": self.format,
            "errors": [f.to_dict() for f in self.errors],
            "warnings": [f.to_dict() for f in self.warnings],
        }


def validate(transcript: Transcript) -> ValidationReport:
    """Check `transcript` against its format's invariants."""
    findings = sorted(
        get_dialect(transcript.format).validate(transcript), key=lambda f: (f.line, f.code)
    )
    return ValidationReport(
        path=transcript.source,
        format=transcript.format,
        errors=tuple(f for f in findings if f.severity == "error"),
        warnings=tuple(f for f in findings if f.severity == "warning"),
    )
