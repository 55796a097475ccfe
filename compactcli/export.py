"""A transcript as a page to read: Markdown, or one self-contained HTML file.

`export(transcript, html=..., summary_only=..., redacted=...)` renders every message of the
transcript in file order (its format's `Dialect.messages`): each turn under its role, every tool
call folded (`<details>`) with its result under it, thinking folded, images named, the summaries
of compactions marked as summaries, each compaction boundary marked where it sits, and cleared
tool outputs (prune's placeholders, the agents' own) marked as cleared. `summary_only` renders the
newest summary alone. Secrets are redacted (`compactcli.redact`) unless `redacted=False`. The
HTML page holds its style inline and no script, so it opens anywhere, offline. Nothing here
reads or writes a file.
"""

from __future__ import annotations

import html as markup
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import orjson

from compactcli.formats import get_dialect
from compactcli.placeholders import CLEARED_PREFIXES
from compactcli.tools import main_argument
from compactcli.transcript import Block, Compaction, Message, Transcript

STYLE = """
body { font: 15px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem;
  color: #1d1d1f; background: #fff; }
h1 { font-size: 1.4rem; } .meta { color: #666; }
section { border-left: 4px solid #ccc; margin: 1rem 0; padding: .25rem .75rem; }
section.user { border-color: #2b6cb0; } section.assistant { border-color: #2f855a; }
section.system, section.developer { border-color: #975a16; } section.tool { border-color: #999; }
section.summary { border-color: #805ad5; background: #faf5ff; }
h2 { font-size: .8rem; text-transform: uppercase; letter-spacing: .05em; color: #555;
  margin: .25rem 0; }
pre { white-space: pre-wrap; word-break: break-word; background: #f6f8fa; padding: .5rem;
  border-radius: 4px; margin: .25rem 0; }
pre.text { background: none; padding: 0; font: inherit; }
details { margin: .25rem 0; } summary { cursor: pointer; color: #333; }
.failed summary { color: #c53030; } .cleared { color: #888; font-style: italic; }
.boundary { text-align: center; color: #805ad5; border-top: 2px dashed #805ad5; margin: 1.5rem 0;
  padding-top: .25rem; }
"""


Clean = Callable[[str], str]
"""What each shown text goes through: `redact`, or nothing."""


def _same(text: str) -> str:
    return text


TITLE_ARGUMENT = 100
"""The most characters of a call's main argument its folded title shows."""


@dataclass(frozen=True, slots=True)
class _Call:
    block: Block
    result: Block | None


def export(
    transcript: Transcript,
    *,
    html: bool = False,
    summary_only: bool = False,
    redacted: bool = True,
    title: str | None = None,
) -> str:
    """The page of `transcript` (see the module); `title` heads it (default: its source)."""
    from compactcli.redact import redact

    clean: Clean = redact if redacted else _same
    dialect = get_dialect(transcript.format)
    messages = dialect.messages(transcript)
    compactions = dialect.compactions(transcript)
    heading = title or transcript.source
    if summary_only:
        summaries = [m for m in messages if m.summary]
        body = _text(summaries[-1], clean) if summaries else ""
        if html:
            return _page(heading, "summary", [f'<pre class="text">{markup.escape(body)}</pre>'])
        return f"# {heading}: summary\n\n{body}\n" if body else f"# {heading}: no summary\n"
    results = {
        b.call_id: b
        for m in messages
        for b in m.blocks
        if b.kind == "tool_result" and b.call_id is not None
    }
    called = {b.call_id for m in messages for b in m.blocks if b.kind == "tool_call"}
    source = f"{transcript.source} · " if heading != transcript.source else ""
    meta = (
        f"{source}{transcript.format} · {len(messages):,} messages · "
        f"{len(compactions):,} compaction{'' if len(compactions) == 1 else 's'}"
    )
    parts = list(_parts(messages, compactions, results, called, clean, html))
    if html:
        return _page(heading, meta, parts)
    return f"# {heading}\n\n{meta}\n\n" + "\n\n".join(parts) + "\n"


def _parts(
    messages: Sequence[Message],
    compactions: Sequence[Compaction],
    results: dict[str, Block],
    called: set[str | None],
    clean: Clean,
    html: bool,
) -> Iterator[str]:
    boundaries = sorted(compactions, key=lambda c: c.index)
    at = 0
    for message in messages:
        while at < len(boundaries) and boundaries[at].index <= message.index:
            yield _boundary(boundaries[at], html)
            at += 1
        blocks = [
            b
            for b in message.blocks
            if not (b.kind == "tool_result" and b.call_id in called)
            and not (b.kind in ("text", "thinking") and not b.text.strip())
        ]
        if not blocks:
            continue  # results shown under their calls
        shown = _message(message, blocks, results, clean, html)
        if shown:
            yield shown
    for boundary in boundaries[at:]:
        yield _boundary(boundary, html)


def _boundary(compaction: Compaction, html: bool) -> str:
    who = "compactcli" if compaction.ours else "the agent"
    if html:
        return f'<p class="boundary">Compacted here (by {who})</p>'
    return f"---\n\n**Compacted here** (by {who})"


def _text(message: Message, clean: Clean) -> str:
    return "\n\n".join(clean(b.text) for b in message.blocks if b.kind == "text" and b.text)


def _message(
    message: Message, blocks: list[Block], results: dict[str, Block], clean: Clean, html: bool
) -> str:
    role = "summary" if message.summary else message.role
    label = "Summary of the earlier conversation" if message.summary else message.role.title()
    out: list[str] = []
    for block in blocks:
        if block.kind == "text":
            out.append(_prose(clean(block.text), html))
        elif block.kind == "thinking":
            out.append(_fold("Thinking", [_pre(clean(block.text), html)], html))
        elif block.kind == "tool_call":
            result = results.get(block.call_id) if block.call_id else None
            out.append(_call(_Call(block, result), clean, html))
        elif block.kind == "tool_result":
            out.append(_result(block, clean, html))
        elif block.kind in ("image", "document"):
            out.append(_prose(f"[{block.kind}]", html))
    if not out:
        return ""  # nothing a reader sees (a record of other content only)
    if html:
        inner = "\n".join(out)
        return f'<section class="{role}"><h2>{markup.escape(label)}</h2>\n{inner}\n</section>'
    return f"## {label}\n\n" + "\n\n".join(out)


def _cleared(text: str) -> bool:
    return text.startswith(CLEARED_PREFIXES)


def _prose(text: str, html: bool) -> str:
    if html:
        css = "text cleared" if _cleared(text) else "text"
        return f'<pre class="{css}">{markup.escape(text)}</pre>'
    return f"*{text}*" if _cleared(text) else text


def _pre(text: str, html: bool) -> str:
    if html:
        css = ' class="cleared"' if _cleared(text) else ""
        return f"<pre{css}>{markup.escape(text)}</pre>"
    fence = "````" if "```" in text else "```"
    return f"{fence}\n{text}\n{fence}"


def _fold(title: str, inner: list[str], html: bool, *, failed: bool = False) -> str:
    css = ' class="failed"' if failed else ""
    if html:
        return (
            f"<details{css}><summary>{markup.escape(title)}</summary>\n"
            + "\n".join(inner)
            + "\n</details>"
        )
    return (
        f"<details><summary>{markup.escape(title)}</summary>\n\n"
        + "\n\n".join(inner)
        + "\n\n</details>"
    )


def _call(call: _Call, clean: Clean, html: bool) -> str:
    block = call.block
    arguments = block.arguments
    if isinstance(arguments, (dict, list)):
        shown = orjson.dumps(arguments, option=orjson.OPT_INDENT_2).decode()
    else:
        shown = str(arguments if arguments is not None else block.text)
    inner = [_pre(clean(shown), html)]
    result = call.result
    if result is None:
        inner.append(_prose("(no result)", html))
    else:
        inner.append(_pre(clean(result.text), html))
    failed = result is not None and result.is_error
    argument = main_argument(block.name or "", block.arguments) if block.name else ""
    argument = " ".join(clean(argument).split())
    if len(argument) > TITLE_ARGUMENT:
        argument = argument[: TITLE_ARGUMENT - 1] + "…"
    title = (block.name or "tool") + (f": {argument}" if argument else "")
    title += " (failed)" if failed else ""
    if result is not None and _cleared(result.text):
        title += " (output cleared)"
    return _fold(title, inner, html, failed=failed)


def _result(block: Block, clean: Clean, html: bool) -> str:
    title = f"Result of {block.name or 'a call'}" + (" (failed)" if block.is_error else "")
    return _fold(title, [_pre(clean(block.text), html)], html, failed=block.is_error)


def _page(title: str, meta: str, parts: list[str]) -> str:
    body = "\n".join(parts)
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{markup.escape(title)}</title><style>{STYLE}</style></head>\n<body>\n"
        f'<h1>{markup.escape(title)}</h1>\n<p class="meta">{markup.escape(meta)}</p>\n'
        f"{body}\n</body></html>\n"
    )
