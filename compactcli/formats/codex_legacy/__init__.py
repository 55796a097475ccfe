"""Codex CLI rollouts of May to August 2025: the dialect, the writer (shared with
`openai_responses`), and the format's entry.
"""

from compactcli.formats.entry import Format

FORMAT = Format(
    name="codex-legacy",
    dialect_class="compactcli.formats.codex_legacy.dialect:CodexLegacyDialect",
    writer_factory="compactcli.formats.codex_legacy.writer:writer",
    repair_module="compactcli.formats.codex.repair",
    tokenizer="openai",
    threshold="codex",
)
