"""Claude Code session files (`~/.claude/projects/.../<session>.jsonl`): the dialect and
what it is made of (records, the resume chain, parsed state, checks, the streamed view), the
writer, the repair, and the format's entry.
"""

from compactcli.formats.entry import Format

FORMAT = Format(
    name="claude-code",
    dialect_class="compactcli.formats.claude_code.dialect:ClaudeCodeDialect",
    writer_factory="compactcli.formats.claude_code.writer:writer",
    repair_module="compactcli.formats.claude_code.repair",
    tokenizer="claude",
    threshold="claude-code",
    wrapper="compactcli.formats.claude_code.writer:SUMMARY_WRAPPER",
    title_reader="compactcli.formats.claude_code.title:session_title",
    tail_check="compactcli.formats.claude_code.tail:tail_check",
    threshold_rule="compactcli.formats.claude_code.threshold:threshold",
    family="compactcli.formats.claude_code.family:FAMILY",
    renderer="compactcli.evaluation.render_claude:write_claude_code",
)
