"""Anthropic Messages API messages, one per line: the dialect, the repair, and the format's entry
(its writer is the plain one, `compactcli.formats.plain.writer`).
"""

from compactcli.formats.entry import Format

FORMAT = Format(
    name="anthropic",
    dialect_class="compactcli.formats.anthropic.dialect:AnthropicDialect",
    writer_factory="compactcli.formats.plain.writer:writer",
    repair_module="compactcli.formats.anthropic.repair",
    tokenizer="claude",
    threshold="80%",
)
