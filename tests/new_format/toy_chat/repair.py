"""What the toy chat fixes on load: nothing."""

from __future__ import annotations

from collections.abc import Sequence

from compactcli.formats.base import Finding
from compactcli.formats.repairing import Repair
from compactcli.transcript import Transcript


def repair(transcript: Transcript, findings: Sequence[Finding]) -> tuple[Transcript, list[Repair]]:
    """`transcript` as it is: the toy chat has nothing to repair."""
    return transcript, []
