"""OpenAI chat messages, one per line: the dialect, the summary writer (a `PlainWriter`), the
repair, and the format's entry.
"""

from compactcli.formats.entry import Format

FORMAT = Format(
    name="openai",
    dialect_class="compactcli.formats.openai.dialect:OpenAIDialect",
    writer_factory="compactcli.formats.openai.writer:writer",
    repair_module="compactcli.formats.openai.repair",
    tokenizer="openai",
    threshold="80%",
    family="compactcli.formats.plain.family:FAMILY",
    renderer="compactcli.evaluation.render_openai:write_openai",
)
