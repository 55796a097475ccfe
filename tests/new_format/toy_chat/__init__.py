"""A toy chat format, one `{"speaker": "user" | "agent", "said": TEXT}` line per message: the
dialect, the writer, the repair, and the format's entry."""

from compactcli.formats.entry import Format

FORMAT = Format(
    name="toy-chat",
    dialect_class="compactcli.formats.toy_chat.dialect:ToyChatDialect",
    writer_factory="compactcli.formats.toy_chat.writer:writer",
    repair_module="compactcli.formats.toy_chat.repair",
    tokenizer="openai",
    threshold="80%",
)
