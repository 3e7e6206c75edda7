"""The work estimate of a graph's rows: the probes a kernel makes intersecting a row's edges (the
out-degrees of its out-neighbours), summed before every row. On the host compiled and parallel;
where the graph lies on a GPU, a step of edges at a time."""

import numpy as np

from tcdist import compiled
from tcdist.compiled import jit, prange

PROBES_STEP = 1 << 26  # edges whose probes are summed at once on a GPU (two int64 temporaries of this length)
RANGES_PER_THREAD = 4  # runs of rows of about equal edges per host thread (as a team deals out rows)


@jit(cache=True, nogil=True)
def even_rows(rowptr, pieces):
    """Bounds of `pieces` runs of consecutive rows of about equal edges (all rows: _spread for a
    list of vertices)."""
    n = rowptr.size - 1
    bounds = np.searchsorted(rowptr, np.arange(pieces + 1) * rowptr[n] // pieces)
    bounds[0], bounds[pieces] = 0, n
    return bounds


def probes_before(graph):
    """The probes of the rows before each row (n + 1 of them, where the graph lies: NumPy or
    CuPy), a row's probes being the out-degrees of its out-neighbours: what a part's statistics
    count as its work."""
    if graph.xp is np:
        bounds = even_rows(graph.rowptr, max(compiled.get_threads(), 1) * RANGES_PER_THREAD)
        return _host_probes_before(graph.rowptr, graph.col, bounds)
    return stepwise_probes_before(graph)


@jit(parallel=True, cache=True, nogil=True)
def _host_probes_before(rowptr, col, bounds):
    """Each run of rows (bounds) on a thread: each row's probes, then one prefix sum."""
    before = np.zeros(rowptr.size, np.int64)
    for run in prange(bounds.size - 1):
        for row in range(bounds[run], bounds[run + 1]):
            probes = 0
            for edge in range(rowptr[row], rowptr[row + 1]):
                target = col[edge]
                probes += rowptr[target + 1] - rowptr[target]
            before[row + 1] = probes
    return np.cumsum(before)


def stepwise_probes_before(graph):
    """probes_before in whole-array passes (NumPy or CuPy), a step of edges at a time, so the
    temporaries stay small beside the graph."""
    xp, out, rowptr = graph.xp, graph.out_degree(), graph.rowptr
    before, carried = xp.zeros(graph.n + 1, np.int64), 0
    for start in range(0, int(graph.col.size), PROBES_STEP):
        end = min(start + PROBES_STEP, int(graph.col.size))
        summed = xp.cumsum(out[graph.col[start:end]])
        first, last = (int(i) for i in xp.searchsorted(rowptr, xp.asarray([start, end]), side="right"))
        before[first:last] = carried + summed[rowptr[first:last] - start - 1]  # rows that start in this step
        carried += int(summed[-1])
    return before


def slice_work(rowptr, col, bounds):
    """The work of each slice (source rows a..b, target rows c..d) of a graph in host memory: the
    edges from its sources to its targets, and the probes (the targets' out-degrees) that
    intersecting them takes."""
    return _slice_work(rowptr, col, np.asarray(bounds, np.int64).reshape(-1, 4))


@jit(parallel=True, cache=True, nogil=True)
def _slice_work(rowptr, col, bounds):
    work = np.zeros(bounds.shape[0], np.int64)
    for k in prange(bounds.shape[0]):
        a, b, c, d = bounds[k, 0], bounds[k, 1], bounds[k, 2], bounds[k, 3]
        total = 0
        for row in range(a, b):
            cols = col[rowptr[row]:rowptr[row + 1]]  # sorted: the edges into c..d are one run
            for edge in range(np.searchsorted(cols, c), np.searchsorted(cols, d)):
                target = cols[edge]
                total += 1 + rowptr[target + 1] - rowptr[target]
        work[k] = total
    return work
