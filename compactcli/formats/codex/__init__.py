"""Codex CLI rollouts (`~/.codex/sessions/.../rollout-*.jsonl`): the dialect and what it is made
of (response items, how Codex replays its history, checks), the writer, the repair (shared with
`codex_legacy` and `openai_responses`), and the format's entry.
"""

from compactcli.formats.entry import Format

FORMAT = Format(
    name="codex",
    dialect_class="compactcli.formats.codex.dialect:CodexDialect",
    writer_factory="compactcli.formats.codex.writer:writer",
    repair_module="compactcli.formats.codex.repair",
    tokenizer="openai",
    threshold="codex",
    wrapper="compactcli.formats.codex.writer:SUMMARY_WRAPPER",
    tail_check="compactcli.formats.codex.tail:tail_check",
    threshold_rule="compactcli.formats.codex.threshold:threshold",
    sent_result="compactcli.formats.codex.sent:sent",
    family="compactcli.formats.codex.family:FAMILY",
    hook_json=True,
    renderer="compactcli.evaluation.render_openai:write_codex",
)
