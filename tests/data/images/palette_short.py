#!/usr/bin/env python3
"""Writes palette_short.png: a 4x2 palette PNG with a two-entry palette (red, green) whose pixels
use indices 0, 1, 5 and 200, the last two past the palette. Standard library only."""
import struct
import zlib


def chunk(kind, data):
    return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data) & 0xffffffff)


w, h = 4, 2
rows = b''.join(b'\x00' + bytes([0, 1, 5, 200]) for _ in range(h))
png = (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 3, 0, 0, 0)) +
       chunk(b'PLTE', bytes([255, 0, 0, 0, 255, 0])) + chunk(b'IDAT', zlib.compress(rows)) + chunk(b'IEND', b''))
with open(__file__.replace('.py', '.png'), 'wb') as f:
    f.write(png)
