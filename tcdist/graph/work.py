"""The work estimate of a graph's rows: the probes a kernel makes intersecting a row's edges (the
out-degrees of its out-neighbours), summed before every row. On the host compiled and parallel;
where the graph lies on a GPU, passes of cuda/passes.cu (graph/gpu_build.py)."""

import numpy as np

from tcdist import compiled
from tcdist.compiled import jit, prange

RANGES_PER_THREAD = 4  # runs of rows of about equal edges per host thread (as a team deals out rows)


@jit(cache=True, nogil=True)
def even_rows(rowptr, pieces):
    """Bounds of `pieces` runs of consecutive rows of about equal edges (all rows: _spread for a
    list of vertices)."""
    n = rowptr.size - 1
    bounds = np.searchsorted(rowptr, np.arange(pieces + 1) * rowptr[n] // pieces)
    bounds[0], bounds[pieces] = 0, n
    return bounds


def probes_before(graph, wedge_weight: int = 0):
    """The probes of the rows before each row (n + 1 of them) of a graph in host memory, a row's
    probes being the out-degrees of its out-neighbours: what a part's statistics count as its work;
    with a wedge_weight w, a row of out-degree d also weighs w d(d-1)/2, for its wedges."""
    bounds = even_rows(graph.rowptr, max(compiled.get_threads(), 1) * RANGES_PER_THREAD)
    return _host_probes_before(graph.rowptr, graph.col, bounds, wedge_weight)


@jit(parallel=True, cache=True, nogil=True)
def _host_probes_before(rowptr, col, bounds, wedge_weight):
    """Each run of rows (bounds) on a thread: each row's probes (and weighed wedges), then one prefix sum."""
    before = np.zeros(rowptr.size, np.int64)
    for run in prange(bounds.size - 1):
        for row in range(bounds[run], bounds[run + 1]):
            degree = rowptr[row + 1] - rowptr[row]
            probes = wedge_weight * (degree * (degree - 1) // 2)
            for edge in range(rowptr[row], rowptr[row + 1]):
                target = col[edge]
                probes += rowptr[target + 1] - rowptr[target]
            before[row + 1] = probes
    return np.cumsum(before)


def even_work(graph, pieces: int, wedge_weight: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(bounds of up to `pieces` runs of consecutive rows of about equal work, the edges walked and
    the probes that intersecting them takes; each run's work), on the host, of a graph wherever it
    lies: on a GPU, passes of tcdist's own program, so a ranked run loads nothing one process does not.
    wedge_weight (a graph in host memory, for a CPU's kernel): each row's wedges weigh that many probes."""
    on_host = graph.xp is np
    if on_host:
        before = probes_before(graph, wedge_weight) + graph.rowptr
    else:
        from tcdist.graph import gpu_build

        if wedge_weight:
            raise ValueError("wedges are weighed for a graph in host memory only")
        before = gpu_build.work_before(graph.rowptr, graph.col)
    goals = [int(before[-1]) * k // pieces for k in range(pieces + 1)]
    bounds = np.searchsorted(before, goals, side="left") if on_host else gpu_build.lower_bounds(before, goals)
    bounds[0], bounds[-1] = 0, graph.n
    bounds = np.unique(bounds)
    at = before[bounds] if on_host else gpu_build.take(before, graph.xp.asarray(bounds)).get()
    return bounds, np.diff(at)


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
