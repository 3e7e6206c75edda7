"""CPU, NumPy alone: every wedge of a local row looked up among the part's edges. Nothing to
compile or load, so --kernel auto takes it for a small part while Numba is not yet loaded: its
start (1-2 s) would cost more than the count; the same triangles give a small part's per-vertex
and per-edge credits then."""

import numpy as np

from tcdist.count.registry import Kernel

WEDGES_AT_ONCE = 1 << 21  # wedges made and looked up together: about 100 MB of arrays


def triangles(rowptr, col, n_local, start=0):
    """For each local row u (from row start), each pair v < w of N+(u) is a triangle where the
    part holds the edge v -> w, or w -> v (a proxy's edge to a local vertex runs that way; looked
    for only in a part that has one): the edges' keys u * n + v are sorted, as rows and their
    columns are, so each pair is a binary search. Yields, a block of wedges at a time, the CSR
    positions (first, second, closing) of u -> v, u -> w and the edge joining v and w of each
    triangle found."""
    n = rowptr.size - 1
    degree = np.diff(rowptr)
    rows = np.repeat(np.arange(n, dtype=np.int64), degree)
    keys = rows * n + col
    turned = bool((col < rows).any())  # a proxy's edge to a local vertex: else w -> v is never there
    del rows
    later = np.repeat(rowptr[1:], degree) - np.arange(col.size) - 1  # the columns after each one in its row
    lo, hi = int(rowptr[start]), int(rowptr[n_local])
    reach = np.concatenate([[0], np.cumsum(later[lo:hi])])  # wedges begun before each position
    a = lo
    while a < hi:
        b = min(max(lo + int(np.searchsorted(reach, reach[a - lo] + WEDGES_AT_ONCE, side="right")) - 1, a + 1), hi)
        pairs = later[a:b]
        wedges = int(reach[b - lo] - reach[a - lo])
        if wedges:
            first = np.repeat(np.arange(a, b), pairs)
            second = first + 1 + np.arange(wedges) - np.repeat(np.cumsum(pairs) - pairs, pairs)
            v, w = col[first].astype(np.int64), col[second].astype(np.int64)
            for key in (v * n + w, w * n + v) if turned else (v * n + w,):
                at = np.searchsorted(keys, key)
                at[at == keys.size] = 0
                hit = keys[at] == key
                yield first[hit], second[hit], at[hit]
        a = b


def count(rowptr, col, n_local, start=0):
    return sum(int(first.size) for first, _, _ in triangles(rowptr, col, n_local, start))


def per_vertex(rowptr, col, n_local, start=0):
    """count/cpu.py's per_vertex in NumPy: the triangles each vertex of the part is in, from its
    local rows (from row start on)."""
    n = rowptr.size - 1
    credits = np.zeros(n, np.uint64)
    row_of = np.repeat(np.arange(n, dtype=np.int64), np.diff(rowptr))
    for first, second, _ in triangles(rowptr, col, n_local, start):
        for vertices in (row_of[first], col[first], col[second]):
            credits += np.bincount(vertices, minlength=n).astype(np.uint64)
    return credits


def per_edge(rowptr, col, n_local):
    """count/cpu.py's per_edge in NumPy: the triangles each edge of the part is in (per CSR position)."""
    credits = np.zeros(col.size, np.uint64)
    for positions in triangles(rowptr, col, n_local):
        for at in positions:
            credits += np.bincount(at, minlength=col.size).astype(np.uint64)
    return credits


KERNEL = Kernel("lookup", "cpu", "NumPy, each wedge of N+(u) looked up among the edges; nothing compiled", count)
