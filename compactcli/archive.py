"""The archive of cleared content: every cleared tool output kept by its sha256.

`content_bytes(value)` is the exact bytes a placeholder's hash is taken over (a string as UTF-8,
anything else as compact JSON). `Archive(folder).put(data)` writes them to `FOLDER/<sha256>`
atomically (`compactcli.atomic`), once, readable by their owner only (`FILE_MODE`, 0600);
`get(sha256)` reads them back. `put_file(name, data)` stores other files the archive keeps
(`compactcli.undo`'s journal). Nothing is lost: a placeholder names the hash,
the archive holds the content.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import orjson

from compactcli import atomic
from compactcli.errors import OutputError

FILE_MODE = 0o600
"""The permission bits of an archived content: it is a transcript's tool output, whatever the
transcript's own bits, so only its owner reads it."""


def content_bytes(value: Any) -> bytes:
    """The bytes of a tool result's content, as hashed and archived."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    return orjson.dumps(value)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Archive:
    """A folder of cleared contents named by their sha256."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)

    def path(self, digest: str) -> Path:
        return self.folder / digest

    def put(self, data: bytes) -> str:
        """Store `data` (once) and return its sha256."""
        digest = sha256(data)
        if not self.path(digest).exists():
            self.put_file(digest, data)
        return digest

    def put_file(self, name: str, data: bytes) -> None:
        """Store `data` as `FOLDER/<name>` (`name` may hold a subfolder), replacing it."""
        target = self.folder / name
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic.write(str(target), [data], mode=FILE_MODE)
        except OSError as error:
            raise OutputError(
                f"{self.folder}: cannot write to the archive: {error.strerror or error}"
            ) from None

    def get(self, digest: str) -> bytes:
        return self.path(digest).read_bytes()
