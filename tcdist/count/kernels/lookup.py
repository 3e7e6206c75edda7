"""CPU, NumPy alone: every wedge of a local row looked up among the part's edges. Nothing to
compile or load, so --kernel auto takes it for a small part while Numba is not yet loaded: its
start (1-2 s) would cost more than the count."""

import numpy as np

from tcdist.count.registry import Kernel

WEDGES_AT_ONCE = 1 << 21  # wedges made and looked up together: about 100 MB of arrays


def count(rowptr, col, n_local, start=0):
    """For each local row u (from row start), each pair v < w of N+(u) is a triangle where the
    part holds the edge v -> w, or w -> v (a proxy's edge to a local vertex runs that way; looked
    for only in a part that has one): the edges' keys u * n + v are sorted, as rows and their
    columns are, so each pair is a binary search."""
    n = rowptr.size - 1
    degree = np.diff(rowptr)
    rows = np.repeat(np.arange(n, dtype=np.int64), degree)
    keys = rows * n + col
    turned = bool((col < rows).any())  # a proxy's edge to a local vertex: else w -> v is never there
    del rows
    later = np.repeat(rowptr[1:], degree) - np.arange(col.size) - 1  # the columns after each one in its row
    lo, hi = int(rowptr[start]), int(rowptr[n_local])
    reach = np.concatenate([[0], np.cumsum(later[lo:hi])])  # wedges begun before each position
    total, a = 0, lo
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
                total += int(np.count_nonzero(keys[at] == key))
        a = b
    return total


KERNEL = Kernel("lookup", "cpu", "NumPy, each wedge of N+(u) looked up among the edges; nothing compiled", count)
