"""A text edge list or Matrix Market file read by several ranks, each its own byte range.

Every rank reads the file's head (a few KiB while the header is short) and applies the reader's
own header rule to it, so all find where the data starts, with the same errors. The data is cut
into R equal stretches of bytes, each moved on to the next line start: rank k owns the whole
lines that start in [cut k, cut k+1), reads them in blocks (text.read_ahead) and parses them
with the one-process reader's engines. A bad line is named by its number in the file: the lines
before a range are counted (one pass over the bytes before it) only when one is found.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass, field

import numpy as np

from tcdist.errors import InputError
from tcdist.io import edgelist, gzipped, mtx, text

HEAD_STEPS = (1 << 10, 8 << 10, 32 << 10, 128 << 10, 512 << 10)  # heads tried before the first block
BINARY_CHECK_BYTES = 8 << 10  # the head refuse_binary looks at
SCAN_BYTES = 256  # read at a cut while looking for the next line start (more, by fours, for long lines)
COUNT_BYTES = 16 << 20  # read at a time while counting the lines before a range
LF, CR = 10, 13


@dataclass
class Rules:
    """What a reader of integer pairs does besides parsing: its header rule, the window of the file's
    head it looks at, its check of a block's ids, and what its header declared or warned."""

    header: object
    head_bytes: int
    validate: object = None
    declared: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)


def rules_of(path, fmt: str) -> Rules:
    """The rules of the 'edgelist' or 'mtx' reader of path."""
    if fmt == "mtx":
        declared = {}
        return Rules(mtx.header_rule(path, declared), mtx.HEAD_BYTES, mtx.range_check(path, declared), declared)
    warnings = []
    return Rules(edgelist.header_rule(path, warnings), edgelist.HEAD_BYTES, warnings=warnings)


@dataclass
class Range:
    """A rank's whole lines of a file: bytes lo..hi, and what it read to find them."""

    lo: int
    hi: int
    first_line: int | None  # the number of the line at lo where known without counting (rank 0's)
    read_bytes: int  # the head and the bytes looked at near the cuts


def _bom_bytes(path) -> int:
    """The length of the byte-order mark the (inflated) data starts with."""
    with open(path, "rb") as f:
        stream = gzipped.one_stream(f) if f.read(len(text.GZIP_MAGIC)) == text.GZIP_MAGIC else f
        f.seek(0)
        return len(text.UTF8_BOM) if text.read_block(stream, path, len(text.UTF8_BOM)) == text.UTF8_BOM else 0


def data_start(path, rules: Rules, check_binary: bool = True) -> tuple[int, int, int]:
    """(offset in the file where the data starts, number of its first line, bytes read): the
    header rule on the file's head, read in growing prefixes of whole lines while they do not
    settle it, then as the first block the one-process reader gives it (a header past a few
    hundred KiB). Raises what the one-process reader raises for the head (check_binary: for a
    file that is not text too, from a head of at least 8 KiB)."""
    bom, read = _bom_bytes(path), 0
    for size in HEAD_STEPS:
        if 2 * size > rules.head_bytes:  # (a prefix within half the window: its last line is not the window's)
            break
        if check_binary and size < BINARY_CHECK_BYTES:
            continue
        with text.open_binary(path, parallel=False) as (stream, _):
            prefix = text.read_block(stream, path, size)
        read += len(prefix)
        if prefix and check_binary:
            text.refuse_binary(prefix, path)  # (its first 8 KiB, as the first block's)
        if len(prefix) < size:  # the whole file: the first block
            skip, lines = rules.header(prefix)
            return bom + skip, 1 + lines, read
        whole = prefix[: text.last_line_end(prefix, len(prefix))]
        found = rules.header(whole, partial=True) if whole else None
        if found is not None:
            return bom + found[0], 1 + found[1], read
    with text.open_binary(path, parallel=False) as (stream, _):
        block = text.first_block(stream, path)
    read += block.size
    skip, lines = rules.header(block)
    return bom + skip, 1 + lines, read


def next_line_start(f, p: int, size: int) -> tuple[int, int]:
    """(the first line start at or after p > 0, or size where none is; bytes read): a line starts
    after an LF, or after a CR not followed by an LF."""
    at, step, read = p - 1, SCAN_BYTES, 0
    while at < size - 1:
        f.seek(at)
        buf = np.frombuffer(f.read(step + 1), np.uint8)
        read += buf.size
        before, here = buf[:-1], buf[1:]
        starts = np.flatnonzero((before == LF) | ((before == CR) & (here != LF)))
        if starts.size:
            return at + 1 + int(starts[0]), read
        at, step = at + buf.size - 1, 4 * step
    return size, read


def cut(size: int, start: int, k: int, ranks: int) -> int:
    """Where the k-th of ranks equal stretches of the data (start..size) begins."""
    return start + (size - start) * k // ranks


def range_of(path, rank: int, ranks: int, rules: Rules) -> Range:
    """Rank's whole lines of the file's data; the head read on every rank (checked to be text
    by rank 0: the first failing rank's error is the one a run reports)."""
    start, first_line, read = data_start(path, rules, check_binary=rank == 0)
    size = os.path.getsize(path)
    bounds = []
    with open(path, "rb") as f:
        for k in (rank, rank + 1):
            if k == 0 or k == ranks:
                bounds.append(start if k == 0 else size)
                continue
            at, looked = next_line_start(f, max(cut(size, start, k, ranks), 1), size)
            bounds.append(at)
            read += looked
    return Range(bounds[0], bounds[1], first_line if rank == 0 else None, read)


class Window(io.RawIOBase):
    """Bytes lo..hi of an open file as a stream of its own (it seeks before each read, so several
    may share the file); tell() is what of them was read."""

    def __init__(self, raw, lo: int, hi: int):
        self._raw, self._at, self._left, self._done = raw, lo, hi - lo, 0

    def readable(self) -> bool:
        return True

    def readinto(self, view) -> int:
        if self._left <= 0:
            return 0
        self._raw.seek(self._at)
        got = self._raw.readinto(memoryview(view)[: self._left])
        self._at, self._left, self._done = self._at + got, self._left - got, self._done + got
        return got

    def tell(self) -> int:
        return self._done


def count_line_ends(pieces) -> int:
    """Lines that end in the bytes of pieces (uint8 arrays), which stop at a line start: LFs, and
    CRs not followed by an LF (a CR as the last byte too)."""
    count, last = 0, None
    for piece in pieces:
        if not piece.size:
            continue
        seen = piece if last is None else np.concatenate((np.array([last], np.uint8), piece))
        count += int(np.count_nonzero(piece == LF)) + int(np.count_nonzero((seen[:-1] == CR) & (seen[1:] != LF)))
        last = piece[-1]
    return count + (last == CR)


def first_bytes(pieces, n: int):
    """The pieces (uint8 arrays) cut to their first n bytes."""
    for piece in pieces:
        if n <= 0:
            return
        yield piece[:n]
        n -= piece.size


def file_pieces(path, lo: int = 0, hi: int | None = None):
    """Bytes lo..hi of a file as uint8 arrays, COUNT_BYTES at a time."""
    with open(path, "rb") as f:
        f.seek(lo)
        while (hi is None or lo < hi) and (piece := f.read(COUNT_BYTES if hi is None else min(COUNT_BYTES, hi - lo))):
            lo += len(piece)
            yield np.frombuffer(piece, np.uint8)


def read_range(path, lines: Range, rules: Rules, gpu_room: int | None):
    """(src, dst, bytes read) of the whole lines in a rank's range: int64 pairs, CuPy where parsed on
    the GPU; a bad line named by its number in the file."""
    engine = text.engine_for(lines.hi - lines.lo, gpu_room)
    with open(path, "rb") as raw:
        window = Window(raw, lines.lo, lines.hi)
        blocks = text.read_ahead(window, window, path, engine.allocate, start=lines.lo)
        try:
            engine = text.parse_blocks(path, blocks, engine, rules.validate, line=lines.first_line or 1)
        except InputError as bad:
            if bad.line is None or lines.first_line is not None:
                raise
            raise InputError(path, bad.problem, bad.line + count_line_ends(file_pieces(path, 0, lines.lo))) from None
        read = window.tell()
    src, dst = engine.pairs()
    return src, dst, read
