"""compactcli: measure and compact LLM coding-agent transcripts, offline.

The public library API. Importing it is cheap: each name below is imported from its module when
first used (PEP 562), so `import compactcli` loads nothing else, and the command line loads only
what its command needs.

    import compactcli as cc
    t = cc.read_transcript("session.jsonl")
    report = cc.validate(t)
    cc.write_transcript(t, "copy.jsonl")
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_WHERE = {
    "FORMATS": "compactcli.formats",
    "Finding": "compactcli.formats.base",
    "get_dialect": "compactcli.formats",
    "BackendError": "compactcli.errors",
    "CompactError": "compactcli.errors",
    "ExitCode": "compactcli.errors",
    "InputError": "compactcli.errors",
    "OutputError": "compactcli.errors",
    "UsageError": "compactcli.errors",
    "CompactResult": "compactcli.in_memory",
    "StageResult": "compactcli.in_memory",
    "compact_bytes": "compactcli.in_memory",
    "estimate_bytes": "compactcli.in_memory",
    "prune_bytes": "compactcli.in_memory",
    "summarize_bytes": "compactcli.in_memory",
    "read_transcript": "compactcli.loading",
    "to_bytes": "compactcli.loading",
    "write_transcript": "compactcli.loading",
    "Block": "compactcli.transcript",
    "Compaction": "compactcli.transcript",
    "Message": "compactcli.transcript",
    "Record": "compactcli.transcript",
    "Transcript": "compactcli.transcript",
    "Usage": "compactcli.transcript",
    "ValidationReport": "compactcli.validation",
    "validate": "compactcli.validation",
}
"""The module each public name lives in."""

__all__ = [
    "FORMATS",
    "BackendError",
    "Block",
    "CompactError",
    "CompactResult",
    "Compaction",
    "ExitCode",
    "Finding",
    "InputError",
    "Message",
    "OutputError",
    "Record",
    "StageResult",
    "Transcript",
    "Usage",
    "UsageError",
    "ValidationReport",
    "__version__",
    "compact_bytes",
    "estimate_bytes",
    "get_dialect",
    "prune_bytes",
    "read_transcript",
    "summarize_bytes",
    "to_bytes",
    "validate",
    "write_transcript",
]

if TYPE_CHECKING:
    from compactcli.errors import (
        BackendError,
        CompactError,
        ExitCode,
        InputError,
        OutputError,
        UsageError,
    )
    from compactcli.formats import FORMATS, get_dialect
    from compactcli.formats.base import Finding
    from compactcli.in_memory import (
        CompactResult,
        StageResult,
        compact_bytes,
        estimate_bytes,
        prune_bytes,
        summarize_bytes,
    )
    from compactcli.loading import read_transcript, to_bytes, write_transcript
    from compactcli.transcript import Block, Compaction, Message, Record, Transcript, Usage
    from compactcli.validation import ValidationReport, validate


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use, and keep the name here."""
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'compactcli' has no attribute {name!r}")
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
