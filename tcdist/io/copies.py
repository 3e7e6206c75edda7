"""Whether two ranks' copies of an input file are the same file, told cheaply: each rank's copy
by its size and the crc32 of SAMPLES blocks of SAMPLE_BYTES at offsets its size fixes (the first
at the start, the last at the end, the others evenly between), the whole file where it is no
larger than that (1 MiB: some milliseconds to read, beside seconds to parse a file that size).

Why that is enough: the copies this tells apart are other files, not edits of the same one. A
file of another size (cut short, grown, empty, gzipped, another store) differs in its size; one
of the same size but other bytes (the same lines shuffled, another graph of that size) differs
in about every block. What it cannot tell is a copy of the same size edited in place between the
sampled blocks: a check of every byte would read each copy whole, which the ranks' reading by
ranges is there to avoid. Files with digests of their own are checked whole besides: a graph
file's digest is joined from every rank's pieces of its own copy (h5rows.py), and a partition
store's root digest covers every part a rank reads from it (partition/store.py).
"""

from __future__ import annotations

import os

from isal import isal_zlib

SAMPLES = 64
SAMPLE_BYTES = 16 << 10


def sampled(path) -> tuple[int, int]:
    """(size of the file at path, crc32 of its sampled blocks); OSError where it cannot be read."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        size = os.fstat(fd).st_size
        if size <= SAMPLES * SAMPLE_BYTES:
            offsets, length = [0], size
        else:
            offsets, length = [(size - SAMPLE_BYTES) * k // (SAMPLES - 1) for k in range(SAMPLES)], SAMPLE_BYTES
        crc = 0
        for at in offsets:
            crc = isal_zlib.crc32(os.pread(fd, length, at), crc)
        return size, crc
    finally:
        os.close(fd)
