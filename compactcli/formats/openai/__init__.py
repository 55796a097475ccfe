"""OpenAI chat messages, one per line: the dialect, the repair, and the format's entry (its
writer is the plain one, `compactcli.formats.plain.writer`).
"""

from compactcli.formats.entry import Format

FORMAT = Format(
    name="openai",
    dialect_class="compactcli.formats.openai.dialect:OpenAIDialect",
    writer_factory="compactcli.formats.plain.writer:writer",
    repair_module="compactcli.formats.openai.repair",
    tokenizer="openai",
    threshold="80%",
)
