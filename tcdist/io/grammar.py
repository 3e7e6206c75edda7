"""The edge-line grammar, compiled for the CPU (tcdist/cuda/parse.cu is the same grammar on a GPU),
and for a small block in whole-array NumPy (parse_small), where starting Numba costs more than the parse.

A line ends at LF, CRLF or a lone CR. '#' or '%' starts a comment to the line's end; blanks,
tabs, vertical tabs, form feeds and commas separate fields, but two commas (blanks aside), or one
before a line's first field, have an empty field between them. A line with no field is nothing
(but a line of commas alone is a row of missing ids, a bad line);
a data line's first two fields are decimal ids in 0..2^63-1 ('-0' is 0), neither empty, and any
further fields are ignored; anything else is a bad line (its message is written by text.py, which
only needs to know where it is).

A block of whole lines is cut into ranges, each parsed by a thread of its own: a range owns
the lines that start inside it, writes their edges to its own stretch of scratch (a data line
takes at least four bytes) and counts its lines, so the caller can number the lines of a bad one.
"""

import numpy as np

from tcdist.compiled import jit

LF, CR, HASH, PERCENT, COMMA, MINUS, ZERO = 10, 13, 35, 37, 44, 45, 48
LAST_TENTH = (2**63 - 1) // 10  # an id may grow past this by one more digit only up to 2^63-1
LAST_DIGIT = (2**63 - 1) % 10
BLANK, EDGE, BAD = 0, 1, 2
SMALL_BLOCK_BYTES = 4 << 20  # parse_small's blocks: 0.1 s on a 2-core VM, where Numba's start takes 0.4-0.7 s
_POW10 = 10 ** np.arange(19, dtype=np.uint64)  # an id of up to 19 digits fits a uint64 as it is summed


@jit(cache=True, nogil=True)
def _separates(c):
    return c == 32 or c == 9 or c == 11 or c == 12 or c == 44


@jit(cache=True, nogil=True)
def _ends_token(c):
    return _separates(c) or c == LF or c == CR or c == HASH or c == PERCENT


@jit(cache=True, nogil=True)
def first_line_start(buf, p, hi):
    """The first line start in [p, hi), else hi: after an LF, or after a CR not followed by LF
    (not looked for past hi: a thread inside a long line stops at its own range's end)."""
    if p == 0:
        return 0
    while p < hi:
        c = buf[p - 1]
        if c == LF or (c == CR and buf[p] != LF):
            return p
        p += 1
    return hi


@jit(cache=True, nogil=True)
def parse_line(buf, p, end):
    """(BLANK, EDGE or BAD, first id, second id, start of the next line) of the line at p."""
    fields, a, b, bad, comment, commas = 0, 0, 0, False, False, 0
    while p < end:
        c = buf[p]
        if c == LF or c == CR:
            p += 2 if c == CR and p + 1 < end and buf[p + 1] == LF else 1
            break
        if comment:
            p += 1
            continue
        if _separates(c):
            if c == COMMA:
                commas += 1
            p += 1
            continue
        if c == HASH or c == PERCENT:
            comment = True
            p += 1
            continue
        if fields >= 2:  # a field past the ids: skipped whatever it holds
            while p < end and not _ends_token(buf[p]):
                p += 1
            continue
        if commas > (1 if fields else 0):  # an empty field before this one: a missing id ('1,,2', ',1,2')
            bad = True
        commas = 0
        negative = c == MINUS
        if negative:
            p += 1
        value, digits, ok = 0, 0, True
        while p < end and not _ends_token(buf[p]):
            d = buf[p] - ZERO
            if d < 0 or d > 9:
                ok = False
            elif value > LAST_TENTH or (value == LAST_TENTH and d > LAST_DIGIT):
                ok = False  # past 2^63-1
            elif ok:
                value = value * 10 + d
            digits += 1
            p += 1
        if not ok or digits == 0 or (negative and value != 0):
            bad = True
        if fields == 0:
            a = value
        else:
            b = value
        fields += 1
    if fields == 0:
        return (BAD if commas else BLANK), a, b, p  # (commas alone: two missing ids, a row of blank cells)
    return (BAD if bad or fields == 1 else EDGE), a, b, p


@jit(cache=True, nogil=True)
def parse_range(buf, lo, hi, src, dst, at):
    """Parse the lines that start in [lo, hi) of a block, writing edges to src/dst from at:
    (edges, lines, offset of the first bad line or -1, its index among the range's lines)."""
    end = buf.size
    p = first_line_start(buf, lo, hi)
    edges = lines = 0
    while p < hi:
        start = p
        kind, a, b, p = parse_line(buf, p, end)
        if kind == EDGE:
            src[at + edges] = a
            dst[at + edges] = b
            edges += 1
        elif kind == BAD:
            return edges, lines, start, lines
        lines += 1
    return edges, lines, -1, -1


@jit(cache=True, nogil=True)
def parse_ranges(buf, bounds, at, src, dst, found, first, last):
    """parse_range for the ranges first..last-1 of a block (bounds: where each starts and the last
    ends; at: where each writes), their (edges, lines, bad offset, bad index) into found's rows."""
    for r in range(first, last):
        found[r, 0], found[r, 1], found[r, 2], found[r, 3] = parse_range(buf, bounds[r], bounds[r + 1], src, dst, at[r])


@jit(cache=True, nogil=True)
def pack(src, dst, at, edges, starts, into_src, into_dst, first, last):
    """Copy the edges of the ranges first..last-1 from scratch (from at) to their place (from starts)."""
    for r in range(first, last):
        for k in range(edges[r]):
            into_src[starts[r] + k] = src[at[r] + k]
            into_dst[starts[r] + k] = dst[at[r] + k]


def scratch_edges(nbytes: int, ranges: int) -> int:
    """Room for the edges of a block of nbytes cut into ranges (a data line takes 4 bytes or more,
    and a range's last line may run past its end)."""
    return nbytes // 4 + 2 * ranges


def range_bounds(nbytes: int, ranges: int) -> np.ndarray:
    """Where each range starts (and the last ends): equal cuts of the block."""
    return np.linspace(0, nbytes, ranges + 1).astype(np.int64)


def parse_small(buf):
    """(first ids, second ids, lines) of a block of whole lines in whole-array NumPy, or None where a
    line is bad, may hold an empty field or an id longer than 19 characters (the compiled parse then
    reads it, and names a bad line)."""
    n = buf.size
    empty = np.empty(0, np.int64)
    if n == 0:
        return empty, empty, 0
    ends = buf == LF  # a line's last byte: LF, or a CR not followed by LF
    ends[:-1] |= (buf[:-1] == CR) & ~ends[1:]
    ends[-1] |= buf[-1] == CR
    line_ends = np.flatnonzero(ends)
    lines = line_ends.size + (not ends[-1])
    at = np.int32 if n < 2**31 else np.int64  # a position in the block
    line_start = np.zeros(n, at)
    starts = line_ends[line_ends + 1 < n] + 1
    line_start[starts] = starts
    np.maximum.accumulate(line_start, out=line_start)
    solid = buf[(buf != 32) & (buf != 9) & (buf != 11) & (buf != 12)]
    comma = solid == COMMA
    if comma[:1].any() or (comma[1:] & (comma[:-1] | (solid[:-1] == LF) | (solid[:-1] == CR))).any():
        return None  # perhaps an empty field: the compiled parse tells
    token = np.ones(n + 2, bool)  # with a blank either side
    token[[0, -1]] = False
    inside = token[1:-1]
    for c in (32, 9, 11, 12, 44, LF, CR):
        inside &= buf != c
    comment = (buf == HASH) | (buf == PERCENT)
    if comment.any():
        last_comment = np.where(comment, np.arange(n, dtype=at), -1)
        np.maximum.accumulate(last_comment, out=last_comment)
        inside &= last_comment < line_start
    bounds = np.flatnonzero(token[1:] != token[:-1])
    first, last = bounds[0::2], bounds[1::2] - 1  # of each token
    if first.size == 0:
        return empty, empty, lines
    opens = np.flatnonzero(np.concatenate(([True], line_start[first[1:]] > first[:-1])))  # lines' first tokens
    if (np.diff(np.append(opens, first.size)) == 1).any():
        return None  # a line of one field
    ids_at = np.stack((opens, opens + 1), axis=1).ravel()  # each line's two ids, in order
    first, last = first[ids_at], last[ids_at]
    digits_from = first + (buf[first] == MINUS)
    digits = last + 1 - digits_from
    if (digits < 1).any() or (digits > _POW10.size).any():
        return None
    ids = np.zeros(first.size, np.uint64)
    for place in range(int(digits.max())):  # a pass per decimal place
        held = digits > place
        digit = buf[last - place] - np.uint8(ZERO)
        if (held & (digit > 9)).any():
            return None
        ids += np.where(held, digit, 0).astype(np.uint64) * _POW10[place]
    if (ids > 2**63 - 1).any() or ((digits_from > first) & (ids != 0)).any():
        return None
    ids = ids.astype(np.int64)
    return ids[0::2], ids[1::2], lines  # (views: the caller copies them into its arrays)
