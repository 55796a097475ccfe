"""Whether the last records of a Claude Code session file decide its last usage anchor.

`tail_check` is the format's `TailCheck`: it applies the resume-chain rules of
`ChainNodes.build` to a file's last records, read as a file of their own, and says they decide
the whole file's figures only when the chain from the leaf back through them, the responses on
it and the records the loader puts back after them are certainly the whole file's, for a file
written as Claude Code writes it (records appended in time order, each after its parent, the
records of one response together, uuids unique). Otherwise it asks to read further back, or has
the file read forward."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from compactcli.formats.base import StreamedView, Streamer, TailVerdict
from compactcli.formats.claude_code.chain_nodes import ASSISTANT, ROOT
from compactcli.formats.claude_code.stream import ClaudeCodeStreamer


def _response(raw: Mapping[str, Any]) -> Any:
    """The response an assistant record belongs to, as the ledger keys it."""
    message = raw.get("message")
    found = message.get("id") if isinstance(message, dict) else None
    return found or raw.get("requestId") or raw.get("uuid")


def tail_check(
    records: Sequence[Mapping[str, Any]],
    streamer: Streamer,
    view: StreamedView,
    first: int | None,
) -> TailVerdict:
    """The `TailCheck` of Claude Code session files.

    `records` are the last records of a file, fed to `streamer` (a `ClaudeCodeStreamer`) as a
    file of their own, `view` what it made of them and `first` the record that starts the
    response of the last usage anchor (None: no usage). The rules of `ChainNodes.build` are
    applied to them: the preserved segment of their last compact boundary spliced in (when it
    keeps one, its walk from tail to head must lie in them), the leaf (a record that is not a
    sidechain), and the walk from it back to the root. They decide the whole file's figures
    when that walk reaches, before `first`, an assistant record of another response, or ends at
    a record whose parent is null (a boundary, or the first record) or at a record the boundary
    drops. With no usage, a walk that ends so decides too: the context is all there, to be
    counted by the heuristic. A loop, or a response not on the walk: the file is read forward.
    A walk that leaves the records first, a preserved segment that starts before them, or no
    leaf outside sidechains (a subagent's file has none): read further back.
    """
    if not isinstance(streamer, ClaudeCodeStreamer):
        return TailVerdict.no("not a Claude Code streamer")
    segment = False  # the last boundary read keeps a preserved segment
    for raw in records:
        if raw.get("type") == "system" and raw.get("subtype") == "compact_boundary":
            metadata = raw.get("compactMetadata")
            segment = isinstance(metadata, dict) and isinstance(
                metadata.get("preservedSegment"), dict
            )
    nodes = streamer.nodes  # the rules of `ChainNodes.build`, step by step
    alive = bytearray(b"\x01") * len(nodes.record)
    parent = nodes.resolved_parents()
    if segment and not nodes._relink(alive, parent):
        return TailVerdict.need("the preserved segment starts before the records read")
    leaf = nodes._leaf(alive, parent)
    if leaf is None:
        return TailVerdict.need("no leaf outside side chains in the records read")
    walk: list[int] = []
    seen: set[int] = set()
    node = leaf
    while node >= 0 and alive[node] and node not in seen:
        seen.add(node)
        walk.append(node)
        node = parent[node]
    if node >= 0 and alive[node]:
        return TailVerdict.no("a loop in the chain")
    whole = node == ROOT or node >= 0  # the walk ends at a root or at a record dropped
    if first is None:
        if whole:
            return TailVerdict.yes()  # the whole context, and no usage on it
        return TailVerdict.need("no usage in the records read")
    walk.reverse()
    record, kind = nodes.record, nodes.kind
    start = next((at for at, n in enumerate(walk) if record[n] == first), None)
    if start is None:
        return TailVerdict.no("the last usage's response is not on the walk from the leaf")
    response = _response(records[first])
    for n in walk[:start]:
        if kind[n] == ASSISTANT and _response(records[record[n]]) != response:
            return TailVerdict.yes()
    if whole:
        return TailVerdict.yes()
    return TailVerdict.need("the chain goes on before the records read")
