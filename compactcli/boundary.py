"""Our boundary details: what every compaction that compactcli writes records about itself.

Each stage that changes a transcript records one boundary: in the format's native boundary
record where the format has one (the dialect builds it), and always in the stats report. The
details (`details` makes the keys every stage's boundary opens with, `BoundaryDetails`; the stage
adds its own) live under a `compactcli` key so that our records are recognisable (`is_ours`) and
a second run can tell what an earlier one did.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

MARK = "compactcli"


class BoundaryDetails(TypedDict):
    """What every boundary of ours records; each stage's boundary adds its own keys after these
    (`compactcli.stages.prune.PruneBoundary`, `compactcli.stages.summarize.SummaryBoundary`)."""

    version: str
    stage: str
    trigger: str
    tokens_before: int
    tokens_after: int
    method: str
    source_sha256: str


def details(
    *,
    stage: str,
    trigger: str,
    source_sha256: str,
    method: str,
    tokens_before: int,
    tokens_after: int,
) -> BoundaryDetails:
    """The keys every `compactcli` payload of a boundary record opens with."""
    from compactcli import __version__

    return {
        "version": __version__,
        "stage": stage,
        "trigger": trigger,
        "tokens_before": tokens_before,
        "tokens_after": tokens_after,
        "method": method,
        "source_sha256": source_sha256,
    }


def is_ours(raw: Any) -> bool:
    """True for a record compactcli wrote (its details sit at the top level or in `payload`)."""
    if not isinstance(raw, Mapping):
        return False
    if MARK in raw:
        return True
    payload = raw.get("payload")
    return isinstance(payload, Mapping) and MARK in payload
