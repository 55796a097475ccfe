"""pi coding agent sessions (versions 1 to 3): the dialect and what it is made of (the entry tree,
the views, checks), the writer, the repair, and the format's entry.
"""

from compactcli.formats.entry import Format

FORMAT = Format(
    name="pi",
    dialect_class="compactcli.formats.pi.dialect:PiDialect",
    writer_factory="compactcli.formats.pi.writer:writer",
    repair_module="compactcli.formats.pi.repair",
    tokenizer="claude",
    threshold="pi",
    wrapper="compactcli.formats.pi.writer:SUMMARY_WRAPPER",
    threshold_rule="compactcli.formats.pi.threshold:threshold",
    family="compactcli.formats.pi.family:FAMILY",
    compaction_event="session_before_compact",
)
