"""The title Claude Code gives a session: the newest `custom-title` record (the user's
`/rename`), else the newest `ai-title` record, read from the ends of the file only.

`session_title(path)` reads the last and then the first `WINDOW` bytes of the file and returns
the title of the newest title record found there (Claude Code writes them again as the session
goes on), or None when there is none there or the file cannot be read. It is for display only.
"""

from __future__ import annotations

import os

import orjson

WINDOW = 256 << 10
_KINDS = ((b'"type":"custom-title"', "customTitle"), (b'"type":"ai-title"', "aiTitle"))


def _found(data: bytes) -> str | None:
    for marker, key in _KINDS:
        end = len(data)
        while (at := data.rfind(marker, 0, end)) >= 0:
            start = data.rfind(b"\n", 0, at) + 1
            stop = data.find(b"\n", at)
            try:
                record = orjson.loads(data[start : stop if stop >= 0 else len(data)])
            except orjson.JSONDecodeError:  # a line cut by the window
                end = at
                continue
            title = record.get(key) if isinstance(record, dict) else None
            if isinstance(title, str) and title.strip():
                return " ".join(title.split())
            end = at
    return None


def session_title(path: str) -> str | None:
    """The session's title (see the module's docstring), or None."""
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            handle.seek(max(0, size - WINDOW))
            title = _found(handle.read(WINDOW))
            if title is None and size > WINDOW:
                handle.seek(0)
                title = _found(handle.read(WINDOW))
    except OSError:
        return None
    return title
