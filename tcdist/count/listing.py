"""Listing the triangles of an oriented CSR rather than counting them (networkx's all_triangles
yields each one). Rows are listed in blocks whose sizes the per-row counts fix beforehand, so a
graph with billions of triangles never holds them all at once."""

import numpy as np

from tcdist.compiled import jit
from tcdist.count.cpu import lowest_triangles

BLOCK = 1 << 20  # triangles per block at most (unless one row alone lists more)


@jit(cache=True, nogil=True)
def _fill(rowptr, col, first, last, out):
    """out[k] = (u, v, w) for every triangle u -> v -> w, u -> w of rows first..last-1, merging
    the rest of N+(u) after v with N+(v) (rows are sorted)."""
    k = 0
    for u in range(first, last):
        end = rowptr[u + 1]
        for e in range(rowptr[u], end):
            v = col[e]
            i, j, j_end = e + 1, rowptr[v], rowptr[v + 1]
            while i < end and j < j_end:
                a, b = col[i], col[j]
                if a == b:
                    out[k, 0], out[k, 1], out[k, 2] = u, v, a
                    k += 1
                    i += 1
                    j += 1
                elif a < b:
                    i += 1
                else:
                    j += 1


def triangle_blocks(rowptr, col, block: int = BLOCK):
    """Every triangle of an oriented CSR once, as (k, 3) arrays of its vertices u < v < w, in
    blocks of whole rows of at most block triangles each (a row may exceed it alone)."""
    rowptr, col = np.asarray(rowptr), np.asarray(col)
    ends = np.cumsum(lowest_triangles(rowptr, col), dtype=np.int64)  # triangles listed up to each row
    first, n = 0, rowptr.size - 1
    while first < n:
        before = int(ends[first - 1]) if first else 0
        last = max(int(np.searchsorted(ends, before + block, side="right")), first + 1)
        out = np.empty((int(ends[last - 1]) - before, 3), col.dtype)
        _fill(rowptr, col, first, last, out)
        yield out
        first = last
