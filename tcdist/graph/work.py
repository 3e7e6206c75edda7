"""The work estimate of a graph's rows: the probes a kernel makes intersecting a row's edges (the
out-degrees of its out-neighbours), summed before every row. On the host compiled and parallel;
where the graph lies on a GPU, a step of edges at a time."""

import numpy as np

from tcdist import compiled
from tcdist.compiled import jit, prange

PROBES_STEP = 1 << 26  # edges whose probes are summed at once on a GPU (two int64 temporaries of this length)
RANGES_PER_THREAD = 4  # runs of rows of about equal edges per host thread (as a team deals out rows)
CELLS_HELD = 1 << 23  # slice_work's counters, one set per run of rows (64 MiB)


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
    intersecting them takes. One pass over the edges, runs of rows of about equal edges on every
    thread, into the cells that every slice's bounds cut the rows and the targets into (a plan is
    a grid of them: budget/slices.py); a slice's work is the sum of its cells."""
    bounds = np.asarray(bounds, np.int64).reshape(-1, 4)
    n = rowptr.size - 1
    if bounds.shape[0] == 0:
        return np.zeros(0, np.int64)
    sources = np.unique(bounds[:, :2])
    targets = np.unique(np.concatenate([bounds[:, 2:].ravel(), [0, n]]))
    cells = (sources.size - 1) * (targets.size - 1)
    pieces = max(1, min(max(compiled.get_threads(), 1) * RANGES_PER_THREAD, CELLS_HELD // cells))
    runs = even_rows(rowptr[: sources[-1] + 1], pieces)
    runs = np.clip(runs, sources[0], sources[-1])
    cells = _cell_work(rowptr, col, sources, targets, runs).reshape(sources.size - 1, targets.size - 1)
    # a slice's cells: a prefix sum over both axes, read at its four corners
    summed = np.zeros((sources.size, targets.size), np.int64)
    summed[1:, 1:] = cells.cumsum(axis=0).cumsum(axis=1)
    a, b = np.searchsorted(sources, bounds[:, 0]), np.searchsorted(sources, bounds[:, 1])
    c, d = np.searchsorted(targets, bounds[:, 2]), np.searchsorted(targets, bounds[:, 3])
    return summed[b, d] - summed[a, d] - summed[b, c] + summed[a, c]


@jit(parallel=True, cache=True, nogil=True)
def _cell_work(rowptr, col, sources, targets, runs):
    """Each cell's edges and probes (source cells by target cells, flat), a run of rows on a thread."""
    width = targets.size - 1
    cells = (sources.size - 1) * width
    found = np.zeros((runs.size - 1, cells), np.int64)
    for run in prange(runs.size - 1):
        if runs[run] == runs[run + 1]:
            continue
        s = np.searchsorted(sources, runs[run], side="right") - 1
        for row in range(runs[run], runs[run + 1]):
            while row >= sources[s + 1]:
                s += 1
            t = 0
            for edge in range(rowptr[row], rowptr[row + 1]):
                target = col[edge]
                while target >= targets[t + 1]:  # a row is sorted: its targets cross the cells in order
                    t += 1
                found[run, s * width + t] += 1 + rowptr[target + 1] - rowptr[target]
    return found.sum(axis=0)
