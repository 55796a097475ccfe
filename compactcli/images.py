"""An image's size read from its header, and what a provider charges for an image of that size.

`size_of_bytes`, `size_of_base64`, `image_size` and `source_size` read the width and height of a
PNG, JPEG, GIF or WebP image from its first bytes, decoding only the few bytes of base64 the
header needs, so a large image costs a few KB of decoding; they return None for anything they
cannot read (another format, truncated or damaged data, a zero size) and never raise.
`image_tokens(size, rule)` is the one rule for an image's tokens, by provider (`anthropic` or
`openai`), which every token counter uses (`compactcli.tokens.Costs`)."""

from __future__ import annotations

import binascii
import math
import struct
from collections.abc import Callable
from typing import Any, Literal, NamedTuple

__all__ = [
    "ANTHROPIC_MAX_EDGE",
    "ANTHROPIC_MAX_PIXELS",
    "ImageRule",
    "ImageSize",
    "image_size",
    "image_tokens",
    "size_of_base64",
    "size_of_bytes",
    "source_size",
]

ImageRule = Literal["anthropic", "openai"]

ANTHROPIC_MAX_EDGE = 1568
ANTHROPIC_MAX_PIXELS = 1_150_000
ANTHROPIC_PIXELS_PER_TOKEN = 750
OPENAI_BOX = 2048
OPENAI_SHORT_SIDE = 768
OPENAI_TILE = 512
OPENAI_BASE = 85
OPENAI_PER_TILE = 170

_MAX_SEGMENTS = 256
"""JPEG segments looked at before giving up (a real file reaches its SOF in a handful)."""


class ImageSize(NamedTuple):
    """An image's pixel size, and whether it was sent with low detail (OpenAI's `detail`)."""

    width: int
    height: int
    low: bool = False


Reader = Callable[[int, int], bytes]
"""`read(offset, count)`: up to `count` bytes from `offset` (fewer at the end of the data)."""


def _u16be(data: bytes, at: int) -> int:
    value: int = struct.unpack_from(">H", data, at)[0]
    return value


def _u16le(data: bytes, at: int) -> int:
    value: int = struct.unpack_from("<H", data, at)[0]
    return value


def _u24le(data: bytes, at: int) -> int:
    return data[at] | data[at + 1] << 8 | data[at + 2] << 16


def _checked(width: int, height: int) -> tuple[int, int] | None:
    return (width, height) if width > 0 and height > 0 else None


def _png(head: bytes) -> tuple[int, int] | None:
    if len(head) < 24 or head[12:16] != b"IHDR":
        return None
    width, height = struct.unpack_from(">II", head, 16)
    return _checked(width, height)


def _gif(head: bytes) -> tuple[int, int] | None:
    if len(head) < 10:
        return None
    return _checked(_u16le(head, 6), _u16le(head, 8))


def _webp(head: bytes) -> tuple[int, int] | None:
    if len(head) < 30:
        return None
    chunk = head[12:16]
    if chunk == b"VP8 ":
        if head[23:26] != b"\x9d\x01\x2a":
            return None
        return _checked(_u16le(head, 26) & 0x3FFF, _u16le(head, 28) & 0x3FFF)
    if chunk == b"VP8L":
        if head[20] != 0x2F:
            return None
        bits: int = struct.unpack_from("<I", head, 21)[0]
        return _checked((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
    if chunk == b"VP8X":
        return _checked(_u24le(head, 24) + 1, _u24le(head, 27) + 1)
    return None


_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
"""Start-of-frame markers (baseline, extended, progressive, lossless...); not DHT, JPG, DAC."""


def _jpeg(read: Reader) -> tuple[int, int] | None:
    at = 2
    for _ in range(_MAX_SEGMENTS):
        head = read(at, 9)
        if len(head) < 4 or head[0] != 0xFF:
            return None
        marker = head[1]
        if marker == 0xFF:  # fill byte before a marker
            at += 1
            continue
        if marker == 0x01 or 0xD0 <= marker <= 0xD8:  # markers without a length
            at += 2
            continue
        if marker in (0xD9, 0xDA):  # end of image, start of scan: no frame header before
            return None
        if marker in _SOF:
            if len(head) < 9:
                return None
            return _checked(_u16be(head, 7), _u16be(head, 5))
        length = _u16be(head, 2)
        if length < 2:
            return None
        at += 2 + length
    return None


def _size(read: Reader) -> tuple[int, int] | None:
    head = read(0, 32)
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return _png(head)
    if head.startswith((b"GIF87a", b"GIF89a")):
        return _gif(head)
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return _webp(head)
    if head.startswith(b"\xff\xd8"):
        return _jpeg(read)
    return None


def size_of_bytes(data: bytes) -> tuple[int, int] | None:
    """(width, height) of the image whose bytes start with `data`: a PNG (IHDR), JPEG (the first
    SOF marker), GIF or WebP (VP8, VP8L, VP8X); None when not readable."""

    def read(offset: int, count: int) -> bytes:
        return data[offset : offset + count]

    try:
        return _size(read)
    except (struct.error, IndexError):
        return None


def _base64_reader(text: str) -> Reader:
    """`read(offset, count)` over the bytes that base64 `text` encodes, decoding only the
    4-character groups that hold them."""

    def read(offset: int, count: int) -> bytes:
        first = offset // 3
        last = (offset + count + 2) // 3
        chunk = text[first * 4 : last * 4]
        if not chunk:
            return b""
        if len(chunk) % 4:
            chunk += "=" * (-len(chunk) % 4)
        try:
            data = binascii.a2b_base64(chunk, strict_mode=True)
        except (binascii.Error, ValueError):
            return b""
        skip = offset - first * 3
        return data[skip : skip + count]

    return read


def size_of_base64(text: str) -> tuple[int, int] | None:
    """(width, height) of the image that base64 `text` (or a `data:` URL) encodes, as
    `size_of_bytes` reads it, decoding only the few windows of bytes the header needs (a JPEG's
    segments are skipped by their lengths, never decoded); None when not readable."""
    if text.startswith("data:"):
        comma = text.find(",", 0, 256)
        if comma < 0 or ";base64" not in text[:comma]:
            return None
        text = text[comma + 1 :]
    try:
        return _size(_base64_reader(text))
    except (struct.error, IndexError):
        return None


def image_size(data: Any, *, low: bool = False) -> ImageSize | None:
    """The size of the image whose base64 data (or `data:` URL) is `data`, what the formats call
    on each image; None when `data` is not a string (a URL or a file reference) or its header
    cannot be read."""
    if not isinstance(data, str):
        return None
    found = size_of_base64(data)
    return ImageSize(found[0], found[1], low) if found is not None else None


def _anthropic(width: int, height: int) -> int:
    scale = min(
        1.0,
        ANTHROPIC_MAX_EDGE / max(width, height),
        math.sqrt(ANTHROPIC_MAX_PIXELS / (width * height)),
    )
    if scale < 1.0:
        width = max(1, int(width * scale))
        height = max(1, int(height * scale))
    return max(1, round(width * height / ANTHROPIC_PIXELS_PER_TOKEN))


def _openai(width: int, height: int, low: bool) -> int:
    if low:
        return OPENAI_BASE
    w, h = float(width), float(height)
    fit = min(1.0, OPENAI_BOX / max(w, h))
    w, h = w * fit, h * fit
    short = min(1.0, OPENAI_SHORT_SIDE / min(w, h))
    w, h = w * short, h * short
    tiles = math.ceil(w / OPENAI_TILE) * math.ceil(h / OPENAI_TILE)
    return OPENAI_BASE + OPENAI_PER_TILE * tiles


def image_tokens(size: ImageSize, rule: ImageRule) -> int:
    """The tokens an image of `size` costs under the provider's `rule`.

    - `anthropic`: the image is scaled down, keeping its aspect ratio, until its long edge is at
      most 1568 px and it has at most about 1.15 megapixels; it then costs width * height / 750
      tokens.
    - `openai` (GPT-4o-style tiles): scaled to fit 2048 x 2048, then its shortest side scaled
      down to 768 px; 85 tokens plus 170 per 512-px tile. An image sent with `detail: low` costs
      85.
    """
    if rule == "openai":
        return _openai(size.width, size.height, size.low)
    return _anthropic(size.width, size.height)


def source_size(block: Any) -> ImageSize | None:
    """The size of an Anthropic-shape image block, `{"type": "image", "source": {"type":
    "base64", "data": ...}}` (Claude Code, the Anthropic message format); None for a document,
    a URL or file source, or data whose header cannot be read."""
    if not isinstance(block, dict) or block.get("type") != "image":
        return None
    source = block.get("source")
    if not isinstance(source, dict) or source.get("type") != "base64":
        return None
    return image_size(source.get("data"))
