"""Checks of an oriented CSR before a kernel trusts it: its structure (csr_problem: one compiled
pass on every thread, whole-array NumPy for small arrays, or one launch on the GPU) and, for a
part read from a store, the order of its ids (misoriented_rows, compiled)."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from tcdist import compiled
from tcdist.compiled import jit, prange
from tcdist.xp import array_module

FALLS, OUTSIDE, UNSORTED, BACKWARD = 1, 2, 4, 8  # problems, as the GPU's pass (cuda/passes.cu) names them
PROBLEMS = {FALLS: "rowptr does not rise from 0 to the number of edges",
            OUTSIDE: "a column index lies outside 0..{last}",
            UNSORTED: "a row is not sorted (or repeats a column)",
            BACKWARD: "an edge u -> v has u >= v (not oriented by rank)"}


def csr_problem(rowptr, col, n_local: int, *, ascending: bool = False) -> str | None:
    """What is wrong with an oriented CSR that a kernel would trust, or None: rowptr int64 from 0
    to len(col) and never falling, ids in range, every row strictly increasing, 0 <= n_local <= n
    (and with ascending, every edge u -> v with u < v). Problems are named in that order."""
    n = int(rowptr.size) - 1
    if rowptr.dtype != np.int64 or rowptr.ndim != 1 or n < 0:
        return "rowptr is not a one-dimensional int64 array"
    if col.dtype.kind != "i" or col.ndim != 1:
        return "col is not a one-dimensional integer array"
    on_host = array_module(rowptr) is np
    if on_host:
        found = FALLS * falls(rowptr, col.size)
    else:
        from tcdist.graph import gpu_build

        found = gpu_build.csr_problems(rowptr, col, ascending) if n else 0
        found |= FALLS * (int(rowptr[0]) != 0 or int(rowptr[-1]) != col.size)
    if found & FALLS:
        return PROBLEMS[FALLS]
    if not 0 <= n_local <= n:
        return f"{n_local} local vertices in a part of {n}"
    if col.size and on_host:
        found = _host_problems(rowptr, col, n, ascending)
    return next((text.format(last=n - 1) for bit, text in PROBLEMS.items() if found & bit), None)


def falls(rowptr, m: int) -> bool:
    """Whether rowptr does not rise from 0 to m (on the host)."""
    n = rowptr.size - 1
    return int(rowptr[0]) != 0 or int(rowptr[-1]) != m or bool(n and (rowptr[1:] < rowptr[:-1]).any())


COMPILED_FROM = 1 << 20  # columns from which the compiled pass pays for its first compile


def rows_problems(rowptr, col, n: int, first_row: int) -> int:
    """OUTSIDE, UNSORTED or BACKWARD (a bit each, at least the first found; 0 for none) of rows
    first_row.. of an oriented CSR of n vertices held on the host: rowptr theirs rebased to 0 and
    sound, col their columns."""
    return _host_problems(rowptr, col, n, True, first_row) if col.size else 0


def _host_problems(rowptr, col, n: int, ascending: bool, first_row: int = 0) -> int:
    """The first of OUTSIDE, UNSORTED, BACKWARD a CSR with a sound rowptr has (0 for none): every
    one found, in one compiled pass, or the first in whole-array passes. first_row: the number of
    its first row, where it holds rows of a larger CSR."""
    if col.size >= COMPILED_FROM:
        threads = compiled.get_threads()
        cuts = np.linspace(0, col.size, 4 * threads + 1).astype(np.int64)
        with ThreadPoolExecutor(threads, thread_name_prefix="tcdist-check") as pool:
            found = compiled.threads_map(pool, lambda a, b: _problems(rowptr, col, n, ascending, a, b, first_row),
                                         cuts[:-1], cuts[1:])
            return int(np.bitwise_or.reduce(np.array(found, np.int64)))
    if int(col.min()) < 0 or int(col.max()) >= n:
        return OUTSIDE
    row_start = np.zeros(col.size + 1, dtype=bool)
    row_start[rowptr[:-1]] = True
    step = max(1 << 16, -(-col.size // 16))  # in slices: the comparisons hold a sixteenth of a flag per column
    for a in range(1, col.size, step):
        b = min(a + step, col.size)
        if bool((~row_start[a:b] & (col[a:b] <= col[a - 1 : b - 1])).any()):
            return UNSORTED
    if ascending:  # rows are sorted (above): a row ascends from u if its first column does
        rows = np.flatnonzero(rowptr[1:] > rowptr[:-1])
        if bool((col[rowptr[rows]] <= rows + first_row).any()):
            return BACKWARD
    return 0


@jit(cache=True, nogil=True)
def _problems(rowptr, col, n, ascending, lo, hi, first_row):
    """OUTSIDE | UNSORTED | BACKWARD, as found in columns lo..hi-1 (serial, without the GIL: the
    caller's threads take a stretch each, and no parallel region meets another thread's)."""
    flags = 0
    if lo >= hi:
        return flags
    x = np.searchsorted(rowptr, lo, side="right") - 1  # the row of column lo
    for k in range(lo, hi):
        while rowptr[x + 1] <= k:
            x += 1
        v = col[k]
        if v < 0 or v >= n:
            flags |= OUTSIDE
        elif k > rowptr[x] and v <= col[k - 1]:
            flags |= UNSORTED
        elif ascending and v <= x + first_row:
            flags |= BACKWARD
    return flags


def prebuild() -> None:
    """Compile (or load) the compiled pass for both column types, before a run's threads may need
    it beside the partitioner's parallel loops."""
    rowptr = np.array([0, 1, 1], np.int64)
    for dtype in (np.int32, np.int64):
        _problems(rowptr, np.array([1], dtype), 2, True, 0, 1, 0)


@jit(parallel=True, cache=True, nogil=True)
def misoriented_rows(rowptr, col, n_local):
    """How many rows break the order a part's ids follow: locals numbered first, then proxies,
    each set in rank order, so every edge u -> v has u < v except a proxy's edge to a local
    vertex. Kernels that find a wedge's closing edge from one side (forward, wetric) trust it.
    Rows are taken as sorted (Device.put checks that), so a row's first column it governs says
    it all: a local row's first, a proxy row's first proxy."""
    bad, m = 0, col.size
    for u in prange(rowptr.size - 1):
        lo = min(max(rowptr[u], 0), m)  # clipped to col: the CSR's structure is checked later
        hi = min(max(rowptr[u + 1], lo), m)
        if u >= n_local:  # skip the row's locals, which may lie below u
            lo += np.searchsorted(col[lo:hi], n_local)
        if lo < hi and col[lo] <= u:
            bad += 1
    return bad
