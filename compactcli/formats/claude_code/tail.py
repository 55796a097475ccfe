"""Whether the last records of a Claude Code session file decide its last usage anchor.

`tail_check(records, streamer, view, first)` is the format's `TailCheck`: `records` are the
last records of a file, fed to `streamer` (a `ClaudeCodeStreamer`) as a file of their own,
`view` what it made of them and `first` the record that starts the response of the last usage
anchor (None: no usage). They decide the whole file's figures when their last compact boundary,
if any, keeps no preserved segment, their leaf is a record that is not a sidechain, and the walk
from that leaf back to the root reaches, before `first`, an assistant record of another
response, or ends at a record whose parent is null (the boundary, or the first record): the
chain from there to the leaf, the responses on it and the records the loader puts back after
them are then the whole file's, for a file written as Claude Code writes it (records appended in
time order, each after its parent, the records of one response together, uuids unique). A
boundary that keeps a preserved segment, a boundary with no usage after it (the context is then
counted whole), a loop or a response not on the walk: the file is read forward. A walk that
leaves the records before reaching such a record, no usage or no leaf outside sidechains (a
subagent's file has none): read further back.
"""

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
    """The `TailCheck` of Claude Code session files (see the module)."""
    if not isinstance(streamer, ClaudeCodeStreamer):
        return TailVerdict.no("not a Claude Code streamer")
    boundary: Mapping[str, Any] | None = None
    for raw in records:
        if raw.get("type") == "system" and raw.get("subtype") == "compact_boundary":
            boundary = raw
    if boundary is not None:
        metadata = boundary.get("compactMetadata")
        if isinstance(metadata, dict) and metadata.get("preservedSegment") is not None:
            return TailVerdict.no("a compaction that keeps a preserved segment")
        if first is None:
            return TailVerdict.no("a compaction with no usage after it")
    if first is None:
        return TailVerdict.need("no usage in the records read")
    nodes = streamer.nodes
    parent = nodes.resolved_parents()
    leaf = nodes._leaf(bytearray(b"\x01") * len(parent), parent)
    if leaf is None:
        return TailVerdict.need("no leaf outside side chains in the records read")
    walk: list[int] = []
    seen: set[int] = set()
    node = leaf
    while node >= 0 and node not in seen:
        seen.add(node)
        walk.append(node)
        node = parent[node]
    if node >= 0:
        return TailVerdict.no("a loop in the chain")
    walk.reverse()
    record, kind = nodes.record, nodes.kind
    start = next((at for at, n in enumerate(walk) if record[n] == first), None)
    if start is None:
        return TailVerdict.no("the last usage's response is not on the walk from the leaf")
    response = _response(records[first])
    for n in walk[:start]:
        if kind[n] == ASSISTANT and _response(records[record[n]]) != response:
            return TailVerdict.yes()
    if node == ROOT:
        return TailVerdict.yes()
    return TailVerdict.need("the chain goes on before the records read")
