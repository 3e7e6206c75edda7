"""Text edge lists whose vertex ids are names (--labels): the first two fields of each line are
taken as written (3 and 03 are two vertices), the vertices numbered by their names in byte order,
and the names kept as the graph's labels, so every output shows them. Lines, separators and
comments are those of an edge list of integer ids (grammar.py); a header line is an edge here,
unless it is a comment or a .csv's header row as tcdist writes it (config.CSV_EDGE_COLUMNS)."""

from __future__ import annotations

import numpy as np

from tcdist.budget import host as memory
from tcdist.compiled import jit, prange
from tcdist.config import CSV_EDGE_COLUMNS
from tcdist.errors import InputError
from tcdist.graph.edges import EdgeList
from tcdist.io.text import is_csv, open_binary, read_block, refuse_binary, split_lines

LF, CR, NUL = 10, 13, 0
CSV_HEADER = tuple(column.encode() for column in CSV_EDGE_COLUMNS)

@jit(cache=True, nogil=True)
def _separates(b) -> bool:
    return b == 32 or b == 9 or b == 11 or b == 12 or b == 44  # blank, tab, VT, FF, comma


@jit(cache=True, nogil=True)
def _ends_field(b) -> bool:
    return _separates(b) or b == LF or b == CR or b == 35 or b == 37 or b == NUL  # a line end, '#', '%'


@jit(cache=True, nogil=True)
def _fields(buf, starts, lengths):
    """(edges, offset, problem): the first two fields of every line with fields written to starts
    and lengths; problem 1 for a line of one field (offset: its start), 2 for a NUL byte (offset:
    the byte), 3 for an empty one of the first two fields between commas (a blank CSV cell;
    offset: the line's start), 0 for none."""
    i, k, end = 0, 0, buf.size
    while i < end:
        line, found, commas = i, 0, 0  # commas: since the line's start or its last field
        while i < end and buf[i] != LF and buf[i] != CR and buf[i] != 35 and buf[i] != 37:
            if buf[i] == NUL:
                return k, i, 2
            if _separates(buf[i]):
                if buf[i] == 44:
                    if found < 2 and (found == 0 or commas > 0):
                        return k, line, 3
                    commas += 1
                i += 1
                continue
            start = i
            while i < end and not _ends_field(buf[i]):
                i += 1
            if found < 2:
                starts[k, found], lengths[k, found] = start, i - start
            found, commas = found + 1, 0
        if found < 2 and commas > 0:
            return k, line, 3
        while i < end and buf[i] != LF and buf[i] != CR:  # a comment to the line's end
            if buf[i] == NUL:
                return k, i, 2
            i += 1
        if found == 1:
            return k, line, 1
        k += found >= 2
        i += 1 + (i + 1 < end and buf[i] == CR and buf[i + 1] == LF)
    return k, 0, 0


@jit(parallel=True, cache=True, nogil=True)
def _gather(buf, starts, lengths, edges, offsets, out):
    """The names end to end: field f of edge k at out[offsets[2k + f]:offsets[2k + f + 1]]."""
    for k in prange(edges):
        for f in range(2):
            at, start = offsets[2 * k + f], starts[k, f]
            for j in range(lengths[k, f]):
                out[at + j] = buf[start + j]


PROBLEMS = {1: "expected two vertex names, found one", 2: "binary data (a NUL byte), not a text graph",
            3: "expected two vertex names, found an empty one (a blank CSV cell)"}


def read_labelled(path) -> EdgeList:
    """The edges of a text file whose ids are names, numbered by name; the names are the labels."""
    import pyarrow as pa

    with open_binary(path) as (stream, _):
        data = np.frombuffer(_read_all(stream, path), np.uint8)
    refuse_binary(data[:8192], path)
    lines = int(np.count_nonzero(data == LF) + np.count_nonzero(data == CR)) + 1
    memory.require(12 * 2 * lines, f"reading the names of {path}", "give the graph integer ids")
    starts, lengths = np.empty((lines, 2), np.int64), np.empty((lines, 2), np.int32)
    edges, offset, problem = _fields(data, starts, lengths)
    if problem:
        before = data[:offset].tobytes()
        line = len(split_lines(before)) + (not before or before[-1:] in (b"\n", b"\r"))  # a line end ends a line
        raise InputError(path, PROBLEMS[problem], line)
    if edges and is_csv(path) and tuple(data[a:a + n].tobytes() for a, n in zip(starts[0], lengths[0])) == CSV_HEADER:
        starts, lengths, edges = starts[1:], lengths[1:], edges - 1  # tcdist's own .csv, read back
    offsets = np.zeros(2 * edges + 1, np.int64)
    np.cumsum(lengths[:edges].ravel(), out=offsets[1:])
    memory.require(3 * int(offsets[-1]) + 48 * edges, f"numbering the names of {path}", "give the graph integer ids")
    names = np.empty(int(offsets[-1]), np.uint8)
    _gather(data, starts, lengths, edges, offsets, names)
    fields = pa.LargeBinaryArray.from_buffers(pa.large_binary(), 2 * edges,
                                              [None, pa.py_buffer(offsets), pa.py_buffer(names)])
    number, texts = numbered_texts(fields)
    try:
        labels = texts.cast(pa.large_string()).to_numpy(zero_copy_only=False)  # every name UTF-8, as is usual
    except pa.ArrowInvalid:
        labels = np.fromiter(map(_name, texts.to_numpy(zero_copy_only=False)), object, len(texts))
    return EdgeList(number[0::2].copy(), number[1::2].copy(), str(path), labels=labels)


def _name(name: bytes) -> str | bytes:
    """A name as str, or as its bytes where they are not UTF-8: decoded with a stand-in (b'\\xe9' as
    '\\\\xe9'), it would be one vertex with the name written so as text."""
    try:
        return name.decode()
    except UnicodeDecodeError:
        return name


def numbered_texts(texts):
    """(numbers, names): each of an Arrow array of texts (str or bytes) numbered among the distinct
    ones sorted in byte order (for str, UTF-8's: the order of code points, as Python sorts them),
    and those distinct texts in that order. Names are held once each, however long."""
    import pyarrow.compute as pc

    encoded = texts.dictionary_encode()
    order = pc.sort_indices(encoded.dictionary).to_numpy()
    rank = np.empty(order.size, np.int64)
    rank[order] = np.arange(order.size)
    return rank[encoded.indices.to_numpy()], encoded.dictionary.take(order)


def _read_all(stream, path) -> bytes:
    """The whole (gunzipped) stream: the names are sorted together, so the file is read at once."""
    pieces = []
    while piece := read_block(stream, path, 64 << 20):
        pieces.append(piece)
    return b"".join(pieces)
