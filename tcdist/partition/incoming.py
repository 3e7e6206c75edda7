"""Who points into a part: the in-edges of the host builder (host.py), as the graph's transpose
(built once, in parallel) or, for up to 64 parts, each vertex's set of the parts its
out-neighbours are in (one pass over the edges for all parts). Compiled (Numba)."""

import numpy as np

from tcdist import compiled
from tcdist.compiled import jit, prange
from tcdist.graph.sort import SMALL
from tcdist.graph.work import RANGES_PER_THREAD, even_rows

MASK_PARTS = 64  # up to this many parts, each vertex's in-parts fit 64 bits: no transpose
_TARGET_BLOCK_SHIFT = 12  # the transpose counts targets by blocks of 2^12 ids, and sorts them in ranges of equal edges


@jit(parallel=True, cache=True, nogil=True)
def _transpose(rowptr, col, chunks, shift, groups):
    """The CSR of the reversed edges (rows sorted), in three parallel passes over the edges: each
    chunk of rows (about m / chunks edges) counts its edges by block of targets (2^shift ids);
    consecutive blocks are grouped into about `groups` ranges of about equal edges; each chunk
    moves its edges into its own run of each range's bucket; then each range sorts its bucket by
    target, stably. A bucket holds its chunks' edges in row order, so each reversed row comes out
    sorted, and no two threads write one entry. Ranges of equal edges, not of equal ids: on
    RMAT the highest ranks hold most in-edges, and ranges of equal ids would leave their sorting
    to a few threads."""
    n = rowptr.size - 1
    m = rowptr[n]
    blocks = (n >> shift) + 1
    rows = even_rows(rowptr, chunks)
    per_block = np.zeros((chunks, blocks), np.int64)
    for c in prange(chunks):
        for e in range(rowptr[rows[c]], rowptr[rows[c + 1]]):
            per_block[c, col[e] >> shift] += 1
    range_of = np.empty(blocks, np.int64)  # the range each block falls in
    first = np.zeros(blocks + 1, np.int64)  # the first target of each range (range r: first[r]..first[r + 1])
    ranges, held = 0, 0
    for b in range(blocks):
        if held >= max(m // groups, 1) or (b << shift) - first[ranges] >= 1 << 31:  # within: uint32
            ranges += 1
            first[ranges] = b << shift
            held = 0
        range_of[b] = ranges
        for c in range(chunks):
            held += per_block[c, b]
    ranges += 1
    first[ranges] = n
    start = np.zeros((chunks, ranges), np.int64)
    for c in range(chunks):
        for b in range(blocks):
            start[c, range_of[b]] += per_block[c, b]
    range_start = np.empty(ranges + 1, np.int64)
    total = 0
    for r in range(ranges):  # bucket r holds chunk 0's edges, then chunk 1's, ...
        range_start[r] = total
        for c in range(chunks):
            count = start[c, r]
            start[c, r] = total
            total += count
    range_start[ranges] = total
    source = np.empty(m, col.dtype)
    within = np.empty(m, np.uint32)  # the target's place in its range
    for c in prange(chunks):
        at = start[c].copy()
        for u in range(rows[c], rows[c + 1]):
            for e in range(rowptr[u], rowptr[u + 1]):
                r = range_of[col[e] >> shift]
                source[at[r]] = u
                within[at[r]] = col[e] - first[r]
                at[r] += 1
    in_ptr = np.zeros(n + 1, np.int64)
    in_col = np.empty(m, col.dtype)
    for r in prange(ranges):
        lo, begin, end = first[r], range_start[r], range_start[r + 1]
        width = first[r + 1] - lo
        place = np.zeros(width + 1, np.int64)
        for k in range(begin, end):
            place[within[k] + 1] += 1
        for i in range(width):
            place[i + 1] += place[i]
            in_ptr[lo + i + 1] = begin + place[i + 1]
        for k in range(begin, end):
            in_col[begin + place[within[k]]] = source[k]
            place[within[k]] += 1
    return in_ptr, in_col


def transpose(graph):
    """(in_ptr, in_col): the graph's reversed edges as a CSR, on every core."""
    threads = max(compiled.get_threads(), 1)
    return _transpose(np.asarray(graph.rowptr), np.asarray(graph.col), threads, _TARGET_BLOCK_SHIFT,
                      RANGES_PER_THREAD * threads)


def parts_reached(rowptr, col, part, pieces):
    """Each vertex's set of the parts its out-neighbours are in, bit p for part p (< 64): part p's
    in-neighbours are the vertices with bit p. One pass over the edges, in `pieces` runs of rows
    of about equal edges, each row's set made by one thread (a transpose takes three passes and a
    sort). Up to SMALL edges in NumPy: as fast there, and nothing to compile (_reach took over a
    second of a small graph's first run)."""
    if col.size <= SMALL:
        reached = np.zeros(rowptr.size - 1, np.uint64)
        rows = np.flatnonzero(np.diff(rowptr))  # reduceat's runs begin at each non-empty row
        bits = np.left_shift(np.uint64(1), part[col].astype(np.uint64))
        if rows.size:
            reached[rows] = np.bitwise_or.reduceat(bits, rowptr[rows])
        return reached
    return _reach(rowptr, col, part, even_rows(rowptr, pieces), 0, True)[0]


def reached_and_work(rowptr, col, part, num_parts, pieces):
    """(parts_reached, or None over 64 parts; each part's work: the probes of its rows, as its
    statistics count them): both in one pass over the edges, made once for ranks that build their
    own parts (else rank 0 estimated in passes of its own, and every rank made the in-parts again)."""
    reach = num_parts <= MASK_PARTS
    reached, work = _reach(rowptr, col, part, even_rows(rowptr, pieces), num_parts, reach)
    return (reached if reach else None), work


@jit(parallel=True, cache=True, nogil=True)
def _reach(rowptr, col, part, bounds, num_parts, reach):
    """Each run of rows (bounds) on a thread: if reach, each row's set of its out-neighbours'
    parts; if num_parts, the probes of each part's rows (out-degrees of their out-neighbours),
    summed in the run's own counters, then added up."""
    runs = bounds.size - 1
    out = np.zeros(rowptr.size - 1 if reach else 0, np.uint64)
    work = np.zeros((runs, num_parts), np.int64)
    for c in prange(runs):
        mine = np.zeros(num_parts, np.int64)  # not work[c]: neighbouring runs' counters share its cache lines
        for u in range(bounds[c], bounds[c + 1]):
            bits, probes = np.uint64(0), 0
            for e in range(rowptr[u], rowptr[u + 1]):
                v = col[e]
                if reach:
                    bits |= np.uint64(1) << np.uint64(part[v])
                if num_parts:
                    probes += rowptr[v + 1] - rowptr[v]
            if reach:
                out[u] = bits
            if num_parts:
                mine[part[u]] += probes
        for p in range(num_parts):  # element by element, as the sum below: whole-array ops took seconds to compile
            work[c, p] = mine[p]
    total = np.zeros(num_parts, np.int64)
    for c in range(runs):
        for p in range(num_parts):
            total[p] += work[c, p]
    return out, total
