"""The usage a Claude Code assistant record reports, and the usage view of a context chain.

`usage_entry` reads one record: for an assistant record whose `message.usage` is an object, not
from the `<synthetic>` model and not all zero, its key (`message.id`, else `requestId`, else the
uuid; None when none is a string) and its values (total, input, output, cache read); None for any
other record. `chain_usage` makes the `Usage` list of the entries of a chain's records, in chain
order: one per key, from the last record of the key (in the key's first place), a missing key
read as `#<record index>`. The dialect's `usage` view and the streamer both use these two.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from compactcli.formats.claude_code.records import SYNTHETIC_MODEL
from compactcli.transcript import Usage

UsageValues = tuple[int, int, int, int]
"""(total, input, output, cache read) tokens of one request."""


def usage_values(usage: Mapping[str, Any]) -> UsageValues:
    """The values of a `message.usage` object: the total is the context the request held, its
    input, cache writes, cache reads and output (a value that is not an integer counts 0)."""
    fresh = usage.get("input_tokens")
    made = usage.get("cache_creation_input_tokens")
    read = usage.get("cache_read_input_tokens")
    out = usage.get("output_tokens")
    fresh = fresh if type(fresh) is int else 0
    read = read if type(read) is int else 0
    out = out if type(out) is int else 0
    return fresh + read + out + (made if type(made) is int else 0), fresh, out, read


def usage_entry(raw: Mapping[str, Any]) -> tuple[str | None, UsageValues] | None:
    """The usage key and values of a record that counts for the usage view, else None."""
    if raw.get("type") != "assistant":
        return None
    message = raw.get("message")
    if type(message) is not dict or message.get("model") == SYNTHETIC_MODEL:
        return None
    usage = message.get("usage")
    if type(usage) is not dict:
        return None
    values = usage_values(usage)
    if values[0] == 0:
        return None
    message_id = message.get("id")
    key = (
        message_id
        if type(message_id) is str and message_id
        else raw.get("requestId") or raw.get("uuid")
    )
    return key if type(key) is str else None, values


def chain_usage(entries: Iterable[tuple[int, str | None, UsageValues]]) -> list[Usage]:
    """The usage view of `entries` (record index, key, values), in chain order."""
    last: dict[str, tuple[int, UsageValues]] = {}
    for index, key, values in entries:
        last[key if key is not None else f"#{index}"] = (index, values)
    return [
        Usage(
            index=index,
            context=values[0],
            input=values[1],
            output=values[2],
            cached=values[3],
            key=key,
        )
        for key, (index, values) in last.items()
    ]
