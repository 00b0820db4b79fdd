#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""An independent PNG reader for the tests (Python's zlib, not libpng): checks the
signature, every chunk's CRC-32, the chunk order and the zlib stream, undoes the row
filters and prints the pixels as `imgtool dump` does: one line per row, pixels separated
by spaces, channels by commas. Only what climg writes: 8-bit, colour types 0, 2, 4, 6,
not interlaced. Exits 1 with a message on anything else."""
import struct
import sys
import zlib

CHANNELS = {0: 1, 4: 2, 2: 3, 6: 4}


def fail(msg):
    sys.exit("png-read: " + msg)


def main(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("bad signature")
    pos, chunks = 8, []
    while pos < len(data):
        if pos + 12 > len(data):
            fail("truncated chunk at %d" % pos)
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n : pos + 12 + n])
        if zlib.crc32(kind + body) != crc:
            fail("bad CRC in %r" % kind)
        chunks.append((kind, body))
        pos += 12 + n
    kinds = [k for k, _ in chunks]
    if kinds[0] != b"IHDR" or kinds[-1] != b"IEND" or b"IDAT" not in kinds:
        fail("chunk order %r" % kinds)
    first = kinds.index(b"IDAT")
    if any(k != b"IDAT" for k in kinds[first : len(kinds) - 1]):
        fail("IDAT chunks are not consecutive: %r" % kinds)
    w, h, depth, ctype, comp, filt, inter = struct.unpack(">IIBBBBB", chunks[0][1])
    if depth != 8 or ctype not in CHANNELS or comp or filt or inter:
        fail("unsupported IHDR %r" % (chunks[0][1],))
    ch = CHANNELS[ctype]
    z = zlib.decompressobj()
    raw = z.decompress(b"".join(b for k, b in chunks if k == b"IDAT"))
    if not z.eof or z.unused_data:
        fail("the zlib stream does not end where the IDAT data ends")
    stride = w * ch
    if len(raw) != h * (stride + 1):
        fail("%d bytes of image data, want %d" % (len(raw), h * (stride + 1)))
    prev = bytearray(stride)
    out = []
    for y in range(h):
        t = raw[y * (stride + 1)]
        row = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = row[i - ch] if i >= ch else 0
            b = prev[i]
            c = prev[i - ch] if i >= ch else 0
            if t == 0:
                p = 0
            elif t == 1:
                p = a
            elif t == 2:
                p = b
            elif t == 3:
                p = (a + b) >> 1
            elif t == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                p = a if pa <= pb and pa <= pc else b if pb <= pc else c
            else:
                fail("row %d: filter type %d" % (y, t))
            row[i] = (row[i] + p) & 255
        out.append(" ".join(",".join(str(v) for v in row[x * ch : (x + 1) * ch]) for x in range(w)))
        prev = row
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: png-read.py FILE.png")
    main(sys.argv[1])
