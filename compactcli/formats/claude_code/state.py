"""The parsed records of one Claude Code transcript, remembered and carried across edits.

`_state_of` gives a transcript's `_State`, made once (a view of the transcript): every record's
message by record index (those before the last compact boundary held unmade, as a `_Lite`, until
asked for), the records with an impossible shape and their problem, the skeletons, the uuid map
and the context chain. A state made from that of the transcript an edit started from (records
read back in the same places, or records reused in other places) equals the one made from
scratch. `_chain_of` gives the context chain, made once per state; `chain_parents` gives each
chain uuid's parent as the loader sees it.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from compactcli.errors import InputError
from compactcli.formats.claude_code.chain import (
    Skeleton,
    _build_chain,
    _Chain,
    _Graph,
    _graph,
    _skeleton,
    _skeletons,
)
from compactcli.formats.claude_code.records import (
    _Item,
    _Lite,
    _record_lite,
    _record_message,
    _ShapeError,
)
from compactcli.transcript import Block, Message, Record, Transcript

_STATE = "claude-code.state"


@dataclass(slots=True)
class _State:
    """One transcript's parsed records: messages by record index, records with an impossible
    shape (index -> problem, in file order), the skeletons of the chain, and the chain once
    it is asked for. `where` finds a record by the identity of its JSON (`records` keeps
    those objects alive).

    A message may be held unmade (a `_Lite`) until `message` is asked for it: those of the
    records before the last compact boundary, which the context rarely reaches and the checks
    read no text of. Making one puts it in its place: the map is shared only by states whose
    record at that index is the same JSON object, so it is the same message for each."""

    records: tuple[Record, ...]
    where: dict[int, int]  # id(raw) -> record index
    messages: dict[int, Message | _Lite]  # in record order
    errors: dict[int, str]
    skeletons: tuple[Skeleton | None, ...]
    names: dict[str, str]  # tool name by call id, after every record
    chain: _Chain | None = None
    graph: _Graph | None = None  # the uuid map of `skeletons`, once made
    base: _Graph | None = None  # the uuid map of the skeletons these start with, if known

    def uuid_graph(self) -> _Graph:
        """The uuid map of `skeletons`, made once (the chain and the checks share it), by
        extending `base` when there is one."""
        if self.graph is None:
            self.graph = _graph(self.skeletons, self.base)
            self.base = None
        return self.graph

    def known_graph(self) -> _Graph | None:
        """The uuid map of these skeletons or of the ones they start with, if made."""
        return self.graph if self.graph is not None else self.base

    def message(self, index: int) -> Message | None:
        """The message of record `index` (None when it has none), made now if it was not."""
        entry = self.messages.get(index)
        if type(entry) is not _Lite:
            assert entry is None or isinstance(entry, Message)
            return entry
        message = entry.make(index, self.records[index].raw)
        self.messages[index] = message
        return message

    def all_messages(self) -> list[Message]:
        """Every record's message, in record order (the unmade ones made now)."""
        message = self.message
        return [made for i in self.messages if (made := message(i)) is not None]


def _replay_lite(lite: _Lite, names: dict[str, str]) -> _Lite:
    """`_replay` for an unmade message: its calls noted, its results' tool names looked up,
    in block order."""
    items: list[_Item] | None = None
    for position, (call, call_id, name) in enumerate(lite.items):
        if call:
            assert name is not None
            names[call_id] = name
        elif names.get(call_id) != name:
            if items is None:
                items = list(lite.items)
            items[position] = (False, call_id, names.get(call_id))
    return lite if items is None else lite._replace(items=tuple(items))


def _replay(message: Message, index: int, names: dict[str, str]) -> Message:
    """`message` (parsed from the same JSON elsewhere) as `_record_message` makes it at
    `index` after the calls in `names`: its calls noted, its results' tool names looked up."""
    renamed: list[Block] | None = None
    blocks = message.blocks
    for position, block in enumerate(blocks):
        if block.kind == "tool_call":
            assert block.call_id is not None and block.name is not None
            names[block.call_id] = block.name
        elif block.kind == "tool_result":
            name = names.get(block.call_id or "")
            if name != block.name:
                if renamed is None:
                    renamed = list(blocks)
                renamed[position] = replace(block, name=name)
    if renamed is None and message.index == index:
        return message
    return replace(message, index=index, blocks=tuple(renamed) if renamed else blocks)


_RAW = operator.attrgetter("raw")


def _last_boundary(records: Sequence[Record], start: int) -> int:
    """The index of the last compact boundary among `records[start:]` (`start` when there is
    none). The context chain starts there, but for a preserved segment or a later record
    whose parent is older: the messages before it are mostly read only by the checks."""
    for i in range(len(records) - 1, start - 1, -1):
        raw = records[i].raw
        if (
            isinstance(raw, dict)
            and raw.get("subtype") == "compact_boundary"
            and raw.get("type") == "system"
        ):
            return i
    return start


def _build_state(transcript: Transcript) -> _State:
    """Parse every record, reusing what the transcript this one was made from parsed for the
    same JSON objects (their messages and skeletons depend on nothing else but their place and
    the tool names before them, which `_replay` settles). When this transcript holds that one's
    JSON objects in the same places, its state is that one's; when it only adds records after
    all of them, its state is carried over whole and only the new records are parsed; else
    every record is read in order, those it shares with that one replayed, the others
    parsed; when the skeletons come out equal to that one's (an edit of what no chain rule
    reads, such as a cleared result), so do its uuid map and chain, which are carried over."""
    parent: _State | None = transcript.inherited(_STATE)
    records = transcript.records
    if parent is not None:
        before = parent.records
        if len(records) == len(before) and all(
            map(operator.is_, map(_RAW, records), map(_RAW, before))
        ):  # the same JSON objects in the same places (records read back, renumbered)
            return _State(
                records,
                parent.where,  # shared: a state's maps are never changed once made (but for
                parent.messages,  # an unmade message made in its place: the same for both)
                parent.errors,
                parent.skeletons,
                parent.names,
                parent.chain,
                parent.graph,
                parent.base,
            )
    earlier = parent or _State((), {}, {}, {}, (), {})
    before, before_where, before_errors = earlier.records, earlier.where, earlier.errors
    before_messages, before_skeletons = earlier.messages, earlier.skeletons
    start = 0
    if (
        parent is not None
        and not before_errors
        and len(records) >= len(before)
        and all(map(operator.is_, map(_RAW, records), map(_RAW, before)))
    ):
        start = len(before)
        where = dict(before_where)
        messages = dict(before_messages)
        skeletons = list(before_skeletons)
        names = dict(earlier.names)
    else:
        where, messages, skeletons, names = {}, {}, [], {}
    errors: dict[int, str] = {}
    unmade = _last_boundary(records, start)  # the records before it: messages left unmade
    message: Message | _Lite | None
    for i in range(start, len(records)):
        raw = records[i].raw
        if not isinstance(raw, dict):
            skeletons.append(None)
            continue
        where[id(raw)] = i
        j = before_where.get(id(raw))
        if j is not None and before[j].raw is raw and j not in before_errors:
            skeleton = before_skeletons[j]
            message = before_messages.get(j)
            if type(message) is _Lite:
                message = _replay_lite(message, names)
            elif message is not None:
                assert isinstance(message, Message)
                message = _replay(message, i, names)
        else:
            try:
                message = _record_lite(raw, names) if i < unmade else _record_message(i, raw, names)
            except _ShapeError as error:
                errors[i] = str(error)  # parsed again each time: it may have noted some calls
                skeletons.append(_skeleton(raw))
                continue
            skeleton = _skeleton(raw)
        if message is not None:
            messages[i] = message
        skeletons.append(skeleton)
    state = _State(records, where, messages, errors, tuple(skeletons), names)
    if parent is not None:
        if start:  # these skeletons start with the parent's
            state.base = parent.known_graph()
        elif state.skeletons == parent.skeletons:  # records edited where no chain rule reads
            state.graph, state.base, state.chain = parent.graph, parent.base, parent.chain
    return state


def _state_of(transcript: Transcript) -> _State:
    """The transcript's parsed records, made once (`_build_state`)."""
    return transcript.view(_STATE, lambda: _build_state(transcript))


def _chain_of(transcript: Transcript, state: _State) -> _Chain:
    """The context chain of the state's skeletons, made once."""
    if state.chain is None:
        state.chain = _build_chain(state.skeletons, state.uuid_graph())
    return state.chain


def chain_leaf(transcript: Transcript) -> int | None:
    """The index of the record the context chain ends on (the loader's leaf), None for none."""
    records = _chain_of(transcript, _state_of(transcript)).records
    return records[-1] if records else None


def chain_parents(transcript: Transcript) -> Mapping[str, str | None]:
    """Each chain uuid's parent as Claude Code's loader sees it: progress records bridged over,
    a later record with the same uuid replacing an earlier one (the uuid map the chain is built
    from). Made once per transcript; the caller must not change it."""
    try:
        state = _state_of(transcript)
    except Exception:  # a record that breaks the parser: the map does not need it
        return _graph(_skeletons(transcript)).parent
    return state.uuid_graph().parent


def _scan_messages(transcript: Transcript) -> None:
    """Parse every record as `_build_state` does, raising what it raises (the first record
    with an impossible shape as an `InputError`)."""
    names: dict[str, str] = {}
    for i, record in transcript.objects():
        try:
            _record_message(i, record.raw, names)
        except _ShapeError as error:
            raise InputError(transcript.source, record.lineno, str(error)) from None
