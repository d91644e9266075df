#!/usr/bin/env python3
"""Makes the seed corpus of fuzz_segment_records from real segments: each block's zstd payload is stored
decompressed (its compressed_size field then holds the raw size), the form fuzz_segment_records takes.
usage: tests/fuzz/make_records_corpus.py OUT_DIR SEGMENT... (needs the zstd command)"""
import os
import struct
import subprocess
import sys

HEADER, BLOCK = 32, 24


def unpack(data):
    out, offset = bytearray(data[:HEADER]), HEADER
    while len(data) - offset >= BLOCK:
        magic, table, _, rows, raw_size, size, crc = struct.unpack_from("<IHHIIII", data, offset)
        payload = data[offset + BLOCK:offset + BLOCK + size]
        if len(payload) < size:
            break
        raw = subprocess.run(["zstd", "-d", "-c"], input=payload, capture_output=True, check=True).stdout
        out += struct.pack("<IHHIIII", magic, table, 0, rows, len(raw), len(raw), 0) + raw
        offset += BLOCK + size
    return bytes(out + data[offset:])


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    os.makedirs(sys.argv[1], exist_ok=True)
    for path in sys.argv[2:]:
        with open(path, "rb") as f:
            data = unpack(f.read())
        with open(os.path.join(sys.argv[1], os.path.basename(path)), "wb") as f:
            f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
