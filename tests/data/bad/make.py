#!/usr/bin/env python3
"""Writes the committed fixtures of tests/cli/bad_inputs.sh (the rest are made at test time):
complete, valid PNGs of extreme sizes, white, small on disk (1-bit or 8-bit gray, deflated)."""
import struct
import zlib


def chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def png(path, width, height, bit_depth):
    row = b"\x00" + b"\xff" * ((width * bit_depth + 7) // 8)  # filter 0, white
    z = zlib.compressobj(9)
    idat = b"".join(z.compress(row) for _ in range(height)) + z.flush()
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, bit_depth, 0, 0, 0, 0)))
        f.write(chunk(b"IDAT", idat))
        f.write(chunk(b"IEND", b""))


png("1x1.png", 1, 1, 8)
png("1x5000.png", 1, 5000, 8)
png("5000x1.png", 5000, 1, 8)
png("20000x20000.png", 20000, 20000, 1)  # over the 100-megapixel limit: refused from the header
png("10000x10000.png", 10000, 10000, 1)  # exactly the limit: decoded
