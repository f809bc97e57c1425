"""A minimal PNG reader for the render test: 8-bit RGB/RGBA, non-interlaced (no tests here)."""

from __future__ import annotations

import struct
import zlib


def read_png(data: bytes) -> tuple[int, int, list[bytes], int]:
    """``(width, height, rows, bytes per pixel)`` of a PNG's pixels."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos = 8
    chunks: dict[bytes, list[bytes]] = {}
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        chunks.setdefault(kind, []).append(data[pos + 8 : pos + 8 + length])
        pos += 12 + length
    width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", chunks[b"IHDR"][0])
    assert (depth, interlace) == (8, 0), (depth, interlace)
    assert color in (2, 6), color
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(b"".join(chunks[b"IDAT"]))
    stride = width * bpp
    rows: list[bytes] = []
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind = raw[start]
        line = bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up = previous[i]
            corner = previous[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + pred) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, height, rows, bpp


def pixel(image: tuple[int, int, list[bytes], int], x: float, y: float) -> tuple[int, int, int]:
    """The RGB colour at (x, y)."""
    _, _, rows, bpp = image
    row = rows[round(y)]
    at = round(x) * bpp
    return row[at], row[at + 1], row[at + 2]
