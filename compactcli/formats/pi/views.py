"""Message views of pi session entries, as pi builds what it sends to the model.

`entry_view` gives the message an entry holds, or None, and raises `InputError` for a malformed
entry; `context_views` gives the active branch's context from its last compaction on;
`bash_execution_text` is a user's shell command as pi sends it. Nothing here edits records.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from compactcli.errors import InputError
from compactcli.formats.pi.tree import _Tree, position_of, read_tree
from compactcli.formats.values import json_text, kind_of, looks_json
from compactcli.images import ImageSize, image_size
from compactcli.transcript import Block, Images, JsonPath, Message, Transcript

# The text pi wraps summaries in when it sends them to the model (core/messages.ts).
COMPACTION_PREFIX = (
    "The conversation history before this point was compacted into the following summary:"
    "\n\n<summary>\n"
)
COMPACTION_SUFFIX = "\n</summary>"
BRANCH_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUFFIX = "</summary>"

_SKIPPED_STOPS = frozenset({"aborted", "error"})


def skipped_stop(message: Mapping[str, Any]) -> bool:
    """Whether pi leaves an assistant message out of the context: its `stopReason` is one of
    `_SKIPPED_STOPS` (pi compares it with strings, so a value of another type is not)."""
    stop = message.get("stopReason")
    return isinstance(stop, str) and stop in _SKIPPED_STOPS


_Fail = Callable[[str], InputError]


def bash_execution_text(message: Mapping[str, Any]) -> str:
    """A `bashExecution` message as pi sends it to the model (a user text message)."""
    text = f"Ran `{message.get('command', '')}`\n"
    output = message.get("output")
    text += f"```\n{output}\n```" if output else "(no output)"
    exit_code = message.get("exitCode")
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif isinstance(exit_code, int) and exit_code != 0:
        text += f"\n\nCommand exited with code {exit_code}"
    if message.get("truncated") and message.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {message['fullOutputPath']}]"
    return text


def context_views(transcript: Transcript) -> tuple[list[Message], int]:
    """The context messages, and how many leading ones predate the last compaction: after the last
    compaction on the active branch, its summary, the entries from its first kept entry up to it,
    then everything after it.
    """
    records = transcript.records
    tree = read_tree(transcript)
    path = tree.path
    last: int | None = None
    for position, index in enumerate(path):
        if records[index].raw.get("type") == "compaction":
            last = position
    if last is None:
        return _views(transcript, path), 0
    compaction = path[last]
    raw = records[compaction].raw
    start = first_kept(transcript, tree, last)
    summary = entry_view(transcript, compaction, raw, in_context=True)
    head = [summary] if summary is not None else []
    head += _views(transcript, path[start:last])
    return head + _views(transcript, path[last + 1 :]), len(head)


def first_kept(transcript: Transcript, tree: _Tree, last: int) -> int:
    """Where on the active branch the entries the compaction at branch position `last` kept
    start: its first kept entry's position (`firstKeptEntryId`, or in version 1 the object
    index `firstKeptEntryIndex`), or `last` itself when that entry is not before it."""
    records = transcript.records
    path = tree.path
    raw = records[path[last]].raw
    if tree.version >= 2:
        wanted = raw.get("firstKeptEntryId")
        for position in range(last):
            if records[path[position]].raw.get("id") == wanted:
                return position
        return last
    target = raw.get("firstKeptEntryIndex")
    if isinstance(target, int) and 0 <= target < len(tree.objects):
        found = position_of(path, tree.objects[target])
        if 0 <= found < last:
            return found
    return last


def _views(transcript: Transcript, indices: Iterable[int]) -> list[Message]:
    found: list[Message] = []
    for index in indices:
        raw = transcript.records[index].raw
        if raw.get("type") == "compaction":
            continue  # an older compaction inside the kept part: pi does not send it
        message = entry_view(transcript, index, raw, in_context=True)
        if message is not None:
            found.append(message)
    return found


def entry_view(
    transcript: Transcript, index: int, raw: Mapping[str, Any], *, in_context: bool
) -> Message | None:
    """The message an entry holds, or None. Raises InputError for a malformed entry.

    `message` entries by role: `user`, `custom` and `hookMessage` are user messages (content a
    string or text and image blocks); `assistant` blocks are `text`, `thinking`, `toolCall`
    (arguments as JSON text) and `image`; a `toolResult` is a `tool` message with one
    `tool_result` block (call id `toolCallId`, name `toolName`, `isError`, its texts joined and
    its images counted); `bashExecution` is a user message with one text block rendered as pi
    sends it (`bash_execution_text`); `branchSummary` and `compactionSummary` are user messages
    in pi's summary wrappers. A `compaction` entry gives a synthetic user summary message holding
    its wrapped summary; `custom_message` and non-empty `branch_summary` entries are user
    messages; other entry types and unknown roles give none. With `in_context`, a `bashExecution`
    with `excludeFromContext` and an assistant message whose `stopReason` is in `_SKIPPED_STOPS`
    give none, as pi leaves them out.
    """
    kind = raw.get("type")
    entry_id = raw.get("id") if isinstance(raw.get("id"), str) else None
    line = transcript.records[index].lineno

    def fail(reason: str) -> InputError:
        return InputError(transcript.source, line, reason)

    if kind == "message":
        message = raw.get("message")
        if not isinstance(message, Mapping):
            raise fail(f"message entry's message is {kind_of(message)}, not an object")
        return _message_view(index, entry_id, message, fail, in_context)
    if kind == "compaction":
        summary = raw.get("summary")
        if not isinstance(summary, str):
            raise fail("compaction entry has no string summary")
        return Message(
            index=index,
            role="user",
            blocks=(
                Block(
                    "text",
                    COMPACTION_PREFIX + summary + COMPACTION_SUFFIX,
                    type="compaction",
                    path=("summary",),
                ),
            ),
            id=entry_id,
            summary=True,
            synthetic=True,
        )
    if kind == "branch_summary":
        summary = raw.get("summary")
        if summary is not None and not isinstance(summary, str):
            raise fail("branch_summary entry summary is not a string")
        if not summary:
            return None  # pi sends an empty branch summary nowhere
        text = BRANCH_PREFIX + summary + BRANCH_SUFFIX
        block = Block("text", text, type="branch_summary", path=("summary",))
        return Message(index=index, role="user", blocks=(block,), id=entry_id)
    if kind == "custom_message":
        blocks = _content_blocks(raw.get("content"), ("content",), fail, "custom_message")
        custom = raw.get("customType")
        blocks = _injected(blocks, custom if isinstance(custom, str) and custom else kind)
        return Message(index=index, role="user", blocks=blocks, id=entry_id)
    return None


def _message_view(
    index: int,
    entry_id: str | None,
    message: Mapping[str, Any],
    fail: _Fail,
    in_context: bool,
) -> Message | None:
    role = message.get("role")
    if not isinstance(role, str):
        raise fail("message has no string role")
    base: JsonPath = ("message",)
    if role in ("user", "custom", "hookMessage"):
        blocks = _content_blocks(message.get("content"), (*base, "content"), fail, role)
        if role != "user":  # an extension's message, sent as the user's
            custom = message.get("customType")
            blocks = _injected(blocks, custom if isinstance(custom, str) and custom else role)
        return Message(index=index, role="user", blocks=blocks, id=entry_id, path=base)
    if role == "assistant":
        if in_context and skipped_stop(message):
            return None
        model = message.get("model")
        return Message(
            index=index,
            role="assistant",
            blocks=_assistant_blocks(message.get("content"), (*base, "content"), fail),
            id=entry_id,
            model=model if isinstance(model, str) else None,
            path=base,
        )
    if role == "toolResult":
        text, images = _flatten(message.get("content"), fail)
        call_id = message.get("toolCallId")
        name = message.get("toolName")
        block = Block(
            "tool_result",
            text,
            json=looks_json(text),
            call_id=call_id if isinstance(call_id, str) else None,
            name=name if isinstance(name, str) else None,
            is_error=message.get("isError") is True,
            type="toolResult",
            path=base,
            images=images,
        )
        return Message(index=index, role="tool", blocks=(block,), id=entry_id, path=base)
    if role == "bashExecution":
        if not isinstance(message.get("command"), str):
            raise fail("bashExecution message has no string command")
        if in_context and message.get("excludeFromContext") is True:
            return None
        block = Block("text", bash_execution_text(message), type="bashExecution", path=base)
        return Message(index=index, role="user", blocks=(block,), id=entry_id, path=base)
    if role in ("branchSummary", "compactionSummary"):
        summary = message.get("summary")
        if not isinstance(summary, str):
            raise fail(f"{role} message has no string summary")
        if role == "branchSummary":
            text = BRANCH_PREFIX + summary + BRANCH_SUFFIX
        else:
            text = COMPACTION_PREFIX + summary + COMPACTION_SUFFIX
        block = Block("text", text, type=role, path=(*base, "summary"))
        return Message(
            index=index,
            role="user",
            blocks=(block,),
            id=entry_id,
            summary=role == "compactionSummary",
            path=base,
        )
    return None  # a role this version does not know: passed through


def _injected(blocks: tuple[Block, ...], name: str) -> tuple[Block, ...]:
    """`blocks` of a message an extension added (`custom_message`, a `custom` or `hookMessage`
    role), each text named by the message's type: pi sends it as a user message, but nobody
    typed it (`compactcli.user_text.typed_block`)."""
    return tuple(replace(b, name=name) if b.kind == "text" else b for b in blocks)


def _content_blocks(content: Any, path: JsonPath, fail: _Fail, role: str) -> tuple[Block, ...]:
    """User-side content: a string, or a list of text and image blocks."""
    if isinstance(content, str):
        return (Block("text", content, type="text", path=path),)
    if not isinstance(content, list):
        raise fail(f"{role} content is {kind_of(content)}, not a string or a list")
    blocks: list[Block] = []
    for position, block in enumerate(content):
        if not isinstance(block, Mapping):
            raise fail(f"{role} content block {position} is {kind_of(block)}, not an object")
        kind = block.get("type")
        where = (*path, position)
        if kind == "text":
            blocks.append(Block("text", _text(block.get("text")), type="text", path=where))
        elif kind == "image":
            image = image_size(block.get("data"))
            blocks.append(Block("image", type="image", path=where, images=(image,)))
        else:
            blocks.append(Block("other", type=str(kind or ""), path=where))
    return tuple(blocks)


def _assistant_blocks(content: Any, path: JsonPath, fail: _Fail) -> tuple[Block, ...]:
    if isinstance(content, str):
        return (Block("text", content, type="text", path=path),)
    if not isinstance(content, list):
        raise fail(f"assistant content is {kind_of(content)}, not a list")
    blocks: list[Block] = []
    for position, block in enumerate(content):
        if not isinstance(block, Mapping):
            raise fail(f"assistant content block {position} is {kind_of(block)}, not an object")
        kind = block.get("type")
        where = (*path, position)
        if kind == "text":
            blocks.append(Block("text", _text(block.get("text")), type="text", path=where))
        elif kind == "thinking":
            text = _text(block.get("thinking"))
            blocks.append(Block("thinking", text, type="thinking", path=where))
        elif kind == "toolCall":
            call_id, name = block.get("id"), block.get("name")
            if not isinstance(call_id, str) or not isinstance(name, str):
                raise fail(f"toolCall block {position} has no string id and name")
            arguments = block.get("arguments")
            blocks.append(
                Block(
                    "tool_call",
                    json_text(arguments if arguments is not None else {}),
                    json=True,
                    call_id=call_id,
                    name=name,
                    arguments=arguments,
                    type="toolCall",
                    path=where,
                )
            )
        elif kind == "image":
            image = image_size(block.get("data"))
            blocks.append(Block("image", type="image", path=where, images=(image,)))
        else:
            blocks.append(Block("other", type=str(kind or ""), path=where))
    return tuple(blocks)


def _flatten(content: Any, fail: _Fail) -> tuple[str, Images]:
    """A toolResult's content as text, and the images in it."""
    if content is None:
        return "", ()
    if isinstance(content, str):
        return content, ()
    if not isinstance(content, list):
        raise fail(f"toolResult content is {kind_of(content)}, not a list")
    texts: list[str] = []
    images: list[ImageSize | None] = []
    for position, block in enumerate(content):
        if not isinstance(block, Mapping):
            raise fail(f"toolResult content block {position} is {kind_of(block)}, not an object")
        if block.get("type") == "text":
            texts.append(_text(block.get("text")))
        elif block.get("type") == "image":
            images.append(image_size(block.get("data")))
    return "\n".join(texts), tuple(images)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
