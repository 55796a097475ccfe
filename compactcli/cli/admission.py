"""Admitting the input of a command that writes a transcript, with or without `--repair`
(`compactcli.cli.options.Repair`).

`admit_input(transcript, repair)` refuses an input that fails `validate` (nothing is written),
or with `--repair` repairs it and says what it did; `refuse_invalid_result` refuses a result that
would not validate in the same way; `admission_lines(result)` are the findings or repairs of one
file of a batch (`compact`, `redact`), one line each.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from compactcli.batch import FileResult
    from compactcli.repair import Admitted
    from compactcli.transcript import Transcript


def admit_input(transcript: Transcript, repair: bool) -> Admitted:
    """The input a command goes on with (`compactcli.repair.admit`).

    An input that fails `validate` raises `InvalidTranscript` (the error boundary,
    `compactcli.cli.runner`, prints its findings and exits 1; nothing is written), or with
    `repair` is repaired, each repair one line on standard error (`PATH:LINE: repaired CODE:
    WHAT WAS DONE`).
    """
    from compactcli import console
    from compactcli.repair import admit

    admitted = admit(transcript, repair=repair)
    for line in admitted.lines():
        console.say(line)
    return admitted


def refuse_invalid_result(before: Transcript, after: Transcript) -> None:
    """`InvalidTranscript` (exit 1, nothing written) when a stage's result from the admitted
    input would not validate (`compactcli.repair.output_problem`)."""
    from compactcli.errors import InvalidTranscript
    from compactcli.repair import output_problem

    problem = output_problem(before, after)
    if problem is not None:
        raise InvalidTranscript(before.source, f"{problem}; nothing written")


def admission_lines(result: FileResult) -> list[str]:
    """What `validate` found in a refused file (as `compactcli validate` prints it), or what
    `--repair` did to it, one line each."""
    from compactcli.repair import describe

    path = result.path
    found = result.details.get("findings", ())
    lines = [f"{path}:{f['line']}: {f['severity']} {f['code']}: {f['message']}" for f in found]
    return lines + [describe(path, r) for r in result.details.get("repairs", ())]
