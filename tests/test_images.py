"""An image's size is read from its header, and it costs what its provider charges for that size.

The header readers on tiny images made here (PNG, JPEG, GIF, WebP), cut or damaged data and
random bytes; the providers' rules against the examples their documentation gives; and the
cost of a real fixture's images after their data is replaced by a larger image, the same
through the transcript (`estimate`) and through the streaming read (`estimate_file`).
"""

from __future__ import annotations

import base64
import struct
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from compactcli import read_transcript
from compactcli.estimate import EstimateOptions, estimate, estimate_file
from compactcli.images import (
    ImageSize,
    image_size,
    image_tokens,
    size_of_base64,
    size_of_bytes,
)
from compactcli.tokens import CLAUDE, OPENAI, HeuristicCounter
from compactcli.transcript import Block
from tests.image_files import png

TRANSCRIPTS = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"


def jpeg(width: int, height: int, *, marker: int = 0xC0, exif: int = 0) -> bytes:
    """The header of a JPEG: SOI, a JFIF APP0, an APP1 of `exif` bytes when asked, then a
    frame header (`marker`: SOF0 baseline, SOF2 progressive...) and the start of a scan."""
    app0 = b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    out = b"\xff\xd8" + b"\xff\xe0" + struct.pack(">H", len(app0) + 2) + app0
    while exif > 0:
        size = min(exif, 65533)
        out += b"\xff\xe1" + struct.pack(">H", size + 2) + b"\x07" * size
        exif -= size
    frame = struct.pack(">BHHB", 8, height, width, 1) + b"\x01\x11\x00"
    out += b"\xff" + bytes([marker]) + struct.pack(">H", len(frame) + 2) + frame
    return out + b"\xff\xda\x00\x08\x01\x01\x00\x00\x3f\x00" + b"\x00" * 16 + b"\xff\xd9"


def gif(width: int, height: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\x00\x00\x00" + b"\x3b"


def webp(width: int, height: int, kind: str) -> bytes:
    if kind == "VP8 ":
        payload = b"\x00\x00\x00\x9d\x01\x2a" + struct.pack("<HH", width, height) + b"\x00" * 8
    elif kind == "VP8L":
        bits = (width - 1) | (height - 1) << 14
        payload = b"\x2f" + struct.pack("<I", bits) + b"\x00" * 8
    else:
        w, h = width - 1, height - 1
        payload = b"\x00" * 4 + w.to_bytes(3, "little") + h.to_bytes(3, "little")
    body = b"WEBP" + kind.encode() + struct.pack("<I", len(payload)) + payload
    return b"RIFF" + struct.pack("<I", len(body)) + body


IMAGES = [
    (png(3, 2), (3, 2)),
    (png(1, 1), (1, 1)),
    (jpeg(640, 480), (640, 480)),
    (jpeg(1920, 1080, marker=0xC2), (1920, 1080)),  # progressive
    (jpeg(800, 600, marker=0xC1, exif=70_000), (800, 600)),  # a large EXIF segment first
    (gif(17, 9), (17, 9)),
    (webp(300, 200, "VP8 "), (300, 200)),
    (webp(4000, 3000, "VP8L"), (4000, 3000)),
    (webp(16383, 70000, "VP8X"), (16383, 70000)),
]


@pytest.mark.parametrize(("data", "size"), IMAGES)
def test_the_size_is_read_from_the_header(data: bytes, size: tuple[int, int]) -> None:
    assert size_of_bytes(data) == size
    text = base64.b64encode(data).decode()
    assert size_of_base64(text) == size
    assert size_of_base64("data:image/x;base64," + text) == size
    assert image_size(text) == ImageSize(*size)
    assert image_size(text, low=True) == ImageSize(*size, low=True)


@pytest.mark.parametrize(("data", "size"), IMAGES)
def test_cut_data_gives_no_size(data: bytes, size: tuple[int, int]) -> None:
    # a JPEG ends with its scan (28 bytes) after a 13-byte frame header whose first 9 are read
    header_end = {b"\x89P": 24, b"GI": 10, b"RI": 30}.get(data[:2], len(data) - 28 - 13 + 9)
    cut = data[: header_end - 1]
    assert size_of_bytes(cut) is None
    assert size_of_base64(base64.b64encode(cut).decode()) is None


def test_what_is_not_an_image_header_gives_no_size() -> None:
    assert size_of_bytes(b"") is None
    assert size_of_bytes(b"hello, world, this is text and not an image") is None
    assert size_of_bytes(png(0, 5)) is None  # a zero size
    assert size_of_bytes(b"\xff\xd8\xff\xd9") is None  # a JPEG that ends before a frame
    assert size_of_base64("") is None
    assert size_of_base64("not base64 at all!") is None
    assert size_of_base64("https://example.com/chart.png") is None
    assert size_of_base64("data:image/png,rawdata") is None  # not base64
    assert image_size(None) is None
    assert image_size({"url": "x"}) is None


def test_only_the_header_is_decoded() -> None:
    """The base64 past the header is never decoded: a JPEG whose EXIF segment is replaced by
    characters that are not base64 still gives its size, and so does a PNG cut after it."""
    data = base64.b64encode(jpeg(800, 600, exif=60_000)).decode()
    start, end = 48, 48 + 60_000 * 4 // 3 - 80  # inside the EXIF segment
    damaged = data[:start] + "!" * (end - start) + data[end:]
    assert size_of_base64(damaged) == (800, 600)
    assert size_of_base64(base64.b64encode(png(5, 7)).decode()[:32]) == (5, 7)


@given(st.binary(max_size=200))
def test_the_readers_never_raise_on_random_bytes(data: bytes) -> None:
    for head in (b"", b"\x89PNG\r\n\x1a\n", b"\xff\xd8", b"GIF89a", b"RIFF\0\0\0\0WEBP"):
        found = size_of_bytes(head + data)
        assert found is None or (found[0] > 0 and found[1] > 0)
        size_of_base64(base64.b64encode(head + data).decode())


@given(st.text(max_size=200))
def test_the_base64_reader_never_raises_on_random_text(text: str) -> None:
    size_of_base64(text)
    size_of_base64("data:image/png;base64," + text)


def test_the_providers_rules() -> None:
    # OpenAI's documented examples: 1024 x 1024 high detail is 765 tokens, 2048 x 4096 is
    # 1105, low detail is 85 whatever the size
    assert image_tokens(ImageSize(1024, 1024), "openai") == 765
    assert image_tokens(ImageSize(2048, 4096), "openai") == 1105
    assert image_tokens(ImageSize(4096, 8192, low=True), "openai") == 85
    assert image_tokens(ImageSize(100, 100), "openai") == 85 + 170  # not scaled up: one tile
    # Anthropic: width * height / 750, after scaling to a 1568-px long edge and ~1.15 MP
    assert image_tokens(ImageSize(1000, 1000), "anthropic") == 1333
    assert image_tokens(ImageSize(200, 150), "anthropic") == 40
    assert image_tokens(ImageSize(1, 1), "anthropic") == 1
    big = image_tokens(ImageSize(4000, 3000), "anthropic")
    assert big == image_tokens(ImageSize(8000, 6000), "anthropic")  # both scaled the same
    assert 1500 <= big <= 1534
    tall = image_tokens(ImageSize(1000, 4000), "anthropic")  # long edge to 1568
    assert tall == round(392 * 1568 / 750)


def test_a_block_costs_its_images_by_the_profiles_rule() -> None:
    size = ImageSize(1024, 1024)
    for density, expected in ((CLAUDE, 1398), (OPENAI, 765)):
        counter = HeuristicCounter(density)
        assert counter.block_tokens(Block("image", images=(size,))) == expected
        assert counter.block_tokens(Block("image")) == 1600  # no size: the fixed cost
        assert counter.block_tokens(Block("image", images=(None,))) == 1600
        result = Block("tool_result", name="Read", images=(size, None))
        assert counter.block_parts(result) == (density.costs.tool + expected + 1600, 0)


FIXTURES = [
    # file, the number of images in its context, the rule
    ("claude-code-image.jsonl", 2, "anthropic"),
    ("anthropic-image.jsonl", 2, "anthropic"),
    ("pi-image.jsonl", 3, "anthropic"),
    ("codex-image.jsonl", 3, "openai"),
]
ONE_PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8"


def _with_image(source: Path, target: Path, data: bytes) -> Path:
    """`source` with the data of each of its 1 x 1 PNG images replaced by `data`."""
    encoded = base64.b64encode(data).decode()
    lines = []
    for line in source.read_bytes().splitlines():

        def swap(value: object) -> object:
            if isinstance(value, dict):
                return {k: swap(v) for k, v in value.items()}
            if isinstance(value, list):
                return [swap(v) for v in value]
            if isinstance(value, str) and ONE_PIXEL in value:
                prefix = value[: value.index(ONE_PIXEL)]
                return prefix + encoded
            return value

        lines.append(orjson.dumps(swap(orjson.loads(line))))
    target.write_bytes(b"\n".join(lines) + b"\n")
    return target


@pytest.mark.parametrize(("name", "images", "rule"), FIXTURES)
def test_an_images_cost_follows_its_size_in_both_paths(
    name: str, images: int, rule: str, tmp_path: Path
) -> None:
    options = EstimateOptions(method="heuristic", from_end=False)
    counts = {}
    for width, height in ((1, 1), (1200, 800), (3000, 2000)):
        path = _with_image(TRANSCRIPTS / name, tmp_path / f"{width}.jsonl", png(width, height))
        streamed = estimate_file(str(path), options)
        whole = estimate(read_transcript(str(path)), options)
        assert (streamed.tokens, streamed.file_tokens) == (whole.tokens, whole.file_tokens)
        counts[(width, height)] = whole.tokens
    for size in ((1200, 800), (3000, 2000)):
        cost = image_tokens(ImageSize(*size), "anthropic" if rule == "anthropic" else "openai")
        one = image_tokens(ImageSize(1, 1), "anthropic" if rule == "anthropic" else "openai")
        assert counts[size] - counts[(1, 1)] == images * (cost - one)


def test_an_image_asked_at_low_detail_costs_the_same_whatever_its_size(tmp_path: Path) -> None:
    options = EstimateOptions(method="heuristic", from_end=False)
    counts = set()
    for width, height in ((1, 1), (3000, 2000)):
        path = _with_image(
            TRANSCRIPTS / "openai-image.jsonl", tmp_path / f"{width}.jsonl", png(width, height)
        )
        streamed = estimate_file(str(path), options)
        whole = estimate(read_transcript(str(path)), options)
        assert streamed.tokens == whole.tokens
        counts.add(whole.tokens)
    assert len(counts) == 1
