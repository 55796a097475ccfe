"""Anthropic Messages API messages, one per line: the dialect, the summary writer (a
`PlainWriter`), the repair, and the format's entry.
"""

from compactcli.formats.entry import Format

FORMAT = Format(
    name="anthropic",
    dialect_class="compactcli.formats.anthropic.dialect:AnthropicDialect",
    writer_factory="compactcli.formats.anthropic.writer:writer",
    repair_module="compactcli.formats.anthropic.repair",
    tokenizer="claude",
    threshold="80%",
    family="compactcli.formats.plain.family:FAMILY",
    renderer="compactcli.evaluation.render_claude:write_anthropic",
)
