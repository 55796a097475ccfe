"""The `openai-responses` dialect: OpenAI Responses API items, one per JSONL line.

A conversation kept for the Responses API (an `input` list written out line by line, as the
OpenAI Agents SDK's `to_input_list()` gives it) is a list of bare items (`ITEM_TYPES`): the items
of a Codex rollout without Codex's envelope or meta line. So `OpenAIResponsesDialect` reads,
checks and pairs them as `compactcli.formats.codex_legacy.dialect` does, with no meta line, and a
compaction rewrites the list around one plain user summary message
(`compactcli.formats.codex_legacy.writer`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from compactcli.formats.codex_legacy.dialect import CodexLegacyDialect

ITEM_TYPES = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
        "file_search_call",
        "image_generation_call",
        "code_interpreter_call",
        "computer_call",
        "computer_call_output",
        "mcp_call",
        "mcp_list_tools",
        "item_reference",
        "compaction",
    }
)
"""The Responses API item types a file of this format is made of."""


class OpenAIResponsesDialect(CodexLegacyDialect):
    """The `openai-responses` dialect.

    Items: `message` items with a `role` (`user`, `assistant`, `system`, `developer`) and
    `input_text` / `output_text` content (or, the API's short form, a plain string), `reasoning`,
    `function_call` and `function_call_output`, `custom_tool_call` and its output,
    `web_search_call`, and so on. The context is every item in file order; our summary is the
    user message that starts with our summary preamble (no Codex prefix, and no `compactcli` key,
    which the API would refuse); there is no usage, model or window. Outputs are cleared in
    place. Validation codes: `bad-shape` (a line that is not an item with a string `type`, or an
    item of a known type with a wrong shape), `duplicate-id`, `orphan-result`, `call-unanswered`
    (a warning).
    """

    name = "openai-responses"
    summary = "OpenAI Responses API items, one per line (message, function_call, ...)"
    has_meta = False
    text_content = True

    @classmethod
    def sniff(cls, objects: Sequence[Mapping[str, Any]]) -> int:
        """98 when every record is a Responses item (a known `type`; a `message` has a string
        `role`) and one of them is a message; else 0. Chat Completions messages have no
        `type`, so this wins over `openai` (95 at most) only where every record has one."""
        if not objects or not any(o.get("type") == "message" for o in objects):
            return 0
        for o in objects:
            kind = o.get("type")
            if (
                not isinstance(kind, str)
                or kind not in ITEM_TYPES
                or (kind == "message" and not isinstance(o.get("role"), str))
            ):
                return 0
        return 98
