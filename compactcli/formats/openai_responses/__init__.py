"""OpenAI Responses API items, one per line: the dialect and the format's entry (its writer is
Codex's legacy one, its repair Codex's).
"""

from compactcli.formats.entry import Format

FORMAT = Format(
    name="openai-responses",
    dialect_class="compactcli.formats.openai_responses.dialect:OpenAIResponsesDialect",
    writer_factory="compactcli.formats.codex_legacy.writer:writer",
    repair_module="compactcli.formats.codex.repair",
    tokenizer="openai",
    threshold="80%",
)
