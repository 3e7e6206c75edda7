"""Degree statistics as exact integers: the sums the kernel rule, graph statistics and
clustering coefficients read (uint64 halves summed apart, never floats)."""

import numpy as np

from tcdist.xp import array_module


def exact_sum(values) -> int:
    """The exact sum of non-negative integers below 2^63 (uint64 halves summed apart: NumPy's
    sum wraps silently past 2^64)."""
    values = np.asarray(values).astype(np.uint64)
    return (int((values >> np.uint64(32)).sum()) << 32) + int((values & np.uint64(0xFFFFFFFF)).sum())


def wedge_counts(degree):
    """d (d - 1) / 2 per vertex, as uint64 (0 for d < 2)."""
    d = np.asarray(degree).astype(np.uint64)
    return np.where(d >= 2, d * (d - np.uint64(1)) // np.uint64(2), np.uint64(0))


def degree_summary(rowptr, n_local: int) -> dict:
    """What --kernel auto's rule reads of the first n_local rows: their wedges (the sum of
    C(d+(u), 2)), the largest out-degree, the edges and the rows (n_local). Taken where rows
    are built (a graph, a part), so that a count of what this run built need not pass over them
    again (a part read from a store gets them when it is counted); on the GPU in one launch."""
    n_local = int(n_local)
    if array_module(rowptr) is np:
        out = np.diff(rowptr[: n_local + 1])
        wedges, longest, edges = int((out * (out - 1) // 2).sum()), int(out.max(initial=0)), int(rowptr[n_local])
    else:
        wedges, longest, edges = _on_gpu(rowptr, n_local)
    return {"wedges": wedges, "max_out": longest, "edges": edges, "rows": n_local}


def _on_gpu(rowptr, n_local: int) -> tuple[int, int, int]:
    """(sum of C(d+(u), 2), the largest d+(u), the edges) of the local rows, in one launch."""
    import cupy

    from tcdist.cuda import launch
    from tcdist.cuda.build import DEGREE_STATS
    from tcdist.xp import multiprocessors

    stats = cupy.zeros(3, dtype=cupy.uint64)
    if n_local > 0:
        grid = min(-(-int(n_local) // 256), 8 * multiprocessors())
        launch.function(DEGREE_STATS, "degree_stats", rowptr)((grid,), (256,), (rowptr, cupy.int64(n_local), stats))
    return tuple(int(x) for x in stats.get())
