"""Tiny real image files made in memory for tests: `png(width, height)`, a valid PNG whose
header says its size (a grey image, so its bytes stay small however large it is)."""

from __future__ import annotations

import struct
import zlib


def png(width: int, height: int) -> bytes:
    """A valid grey PNG of `width` x `height` pixels."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )
