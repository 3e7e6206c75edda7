"""CPU kernels (Numba, on every thread): the reference and the no-GPU path.

Both walk the local vertices u; for every v in N+(u) they count the w in N+(u) ∩ N+(v).
They assume sorted rows only, not that ids grow along edges: a partition renumbers its
local vertices first, which breaks that order.
Vertices are dealt to threads round-robin in strides, because rank order puts the heavy
rows together and a static split of the range would leave threads idle. A kernel is serial
and lets go of the GIL; _side_by_side calls it on every thread, each on its own run of
strides (as a static prange deals them), and adds up the threads' uint64 sums. Numba took
two to three times as long to compile a parallel=True kernel, paid by every run with an
empty Numba cache.
"""

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from tcdist import compiled
from tcdist.compiled import jit

_STRIDES_PER_THREAD = 64
ONE_THREAD_BELOW = 1 << 16  # edges below which a count takes one thread (starting a pool costs more)


@jit(cache=True, nogil=True)
def _marker(rowptr, col, start, n_local, strides, first, last, m):
    """Mark N+(u) in this thread's byte array m, then look up the w of every N+(v) up to max N+(u)."""
    found = np.uint64(0)
    for s in range(first, last):
        for u in range(start + s, n_local, strides):
            begin, end = rowptr[u], rowptr[u + 1]
            if end - begin < 2:
                continue
            highest = col[end - 1]  # rows are sorted: nothing above N+(u)'s last entry can match
            for e in range(begin, end):
                m[col[e]] = 1
            for e in range(begin, end):
                v = col[e]
                for f in range(rowptr[v], rowptr[v + 1]):
                    w = col[f]
                    if w > highest:
                        break
                    found += m[w]
            for e in range(begin, end):
                m[col[e]] = 0
    return found


@jit(cache=True, nogil=True)
def _merge(rowptr, col, start, n_local, strides, first, last, m):
    """Merge the sorted rows N+(u) and N+(v) for every oriented edge u -> v (m is unused)."""
    found = np.uint64(0)
    for s in range(first, last):
        for u in range(start + s, n_local, strides):
            begin, end = rowptr[u], rowptr[u + 1]
            for e in range(begin, end):
                v = col[e]
                i, j, j_end = begin, rowptr[v], rowptr[v + 1]
                while i < end and j < j_end:
                    a, b = col[i], col[j]
                    if a == b:
                        found += np.uint64(1)
                        i += 1
                        j += 1
                    elif a < b:
                        i += 1
                    else:
                        j += 1
    return found


@jit(cache=True, nogil=True)
def _per_vertex_rows(rowptr, col, start, n_local, lowest, into, strides, first, last, m):
    """The marker kernel, crediting corners: each thread marks N+(u) with the position (+1) of
    every entry in u's row, so a triangle u -> v, u -> w, v -> w found from u credits u in
    lowest[u] and v and w in into[] at the positions of u -> v and u -> w: all in u's own row,
    so no two threads ever write the same entry."""
    for s in range(first, last):
        for u in range(start + s, n_local, strides):
            begin, end = rowptr[u], rowptr[u + 1]
            if end - begin < 2:
                continue
            highest = _mark_row(col, begin, end, m)
            for e in range(begin, end):
                v = col[e]
                for f in range(rowptr[v], rowptr[v + 1]):
                    w = col[f]
                    if w > highest:
                        break
                    at = np.int64(m[w])
                    if at:
                        lowest[u] += np.uint64(1)
                        into[e] += np.uint32(1)
                        into[begin + at - 1] += np.uint32(1)
            _unmark_row(col, begin, end, m)


@jit(cache=True, nogil=True)
def _mark_row(col, begin, end, m):
    """m[w] = w's position in the row col[begin:end], plus one; the row's largest column."""
    for e in range(begin, end):
        m[col[e]] = np.uint32(e - begin + 1)
    return col[end - 1]


@jit(cache=True, nogil=True)
def _unmark_row(col, begin, end, m):
    for e in range(begin, end):
        m[col[e]] = 0


@jit(cache=True, nogil=True)
def _credit_heads(col, begin, end, into, triangles):
    """triangles[col[e]] += into[e] over the counted rows' edges (one pass; a serial scatter)."""
    for e in range(begin, end):
        triangles[col[e]] += np.uint64(into[e])


def per_vertex(rowptr, col, n_local, start=0):
    """The triangles each vertex of a part (or graph) is in, counted from its local rows (from row
    start on): uint64 per vertex. Its sum is three times the part's count. into[] is uint32: an
    edge lies in at most n - 2 < 2^32 triangles (n <= MAX_VERTICES)."""
    rowptr, col = np.asarray(rowptr), np.asarray(col)
    n = rowptr.size - 1
    triangles = np.zeros(n, np.uint64)
    into = np.zeros(int(rowptr[n_local]) if n else 0, np.uint32)
    _side_by_side(_per_vertex_rows, (rowptr, col, int(start), int(n_local), triangles, into), _position_marks(n))
    _credit_heads(col, int(rowptr[start]) if n else 0, into.size, into, triangles)
    return triangles


@jit(cache=True, nogil=True)
def _local_in_edges(rowptr, col, n_local, n):
    """(in_ptr, in_row): for every vertex v, the local rows u with an edge u -> v, by a counting
    sort of the local rows' edges (u ascending within each v)."""
    in_ptr = np.zeros(n + 1, np.int64)
    for e in range(rowptr[n_local]):
        in_ptr[col[e] + 1] += 1
    for v in range(n):
        in_ptr[v + 1] += in_ptr[v]
    filled = in_ptr[:n].copy()
    in_row = np.empty(rowptr[n_local], np.int64)
    for u in range(n_local):
        for e in range(rowptr[u], rowptr[u + 1]):
            in_row[filled[col[e]]] = u
            filled[col[e]] += 1
    return in_ptr, in_row


@jit(cache=True, nogil=True)
def _third_edges(rowptr, col, in_ptr, in_row, rows, into, strides, first, last, m):
    """The third edge v -> w of each triangle u -> v, u -> w, v -> w with u local, credited from
    v's side: mark N+(v) with positions (+1), then for each local in-neighbour u of v look up
    N+(u) up to max N+(v). Every write lands in v's own row, so no two threads share an entry."""
    for s in range(first, last):
        for v in range(s, rows, strides):
            begin, end = rowptr[v], rowptr[v + 1]
            if begin == end or in_ptr[v] == in_ptr[v + 1]:
                continue
            highest = _mark_row(col, begin, end, m)
            for i in range(in_ptr[v], in_ptr[v + 1]):
                u = in_row[i]
                for f in range(rowptr[u], rowptr[u + 1]):
                    w = col[f]
                    if w > highest:
                        break
                    at = np.int64(m[w])
                    if at:
                        into[begin + at - 1] += np.uint32(1)
            _unmark_row(col, begin, end, m)


def per_edge(rowptr, col, n_local):
    """The triangles each edge of a part (or graph) is in, counted from its local rows: uint64
    per CSR position, proxies' rows included. Its sum is three times the part's count. Two
    passes, each writing only rows its thread owns: u's row gets (u, v) and (u, w) of each
    triangle found from a local u (the per-vertex marker kernel), v's row gets (v, w) (from v's
    side, through the in-edges of the local rows). One uint32 per edge holds both passes: an
    edge lies in at most n - 2 < 2^32 triangles."""
    rowptr, col = np.asarray(rowptr), np.asarray(col)
    n = rowptr.size - 1
    into = np.zeros(col.size, np.uint32)
    marks = _position_marks(n)
    _side_by_side(_per_vertex_rows, (rowptr, col, 0, int(n_local), np.zeros(n, np.uint64), into), marks)
    in_ptr, in_row = _local_in_edges(rowptr, col, int(n_local), n)
    _side_by_side(_third_edges, (rowptr, col, in_ptr, in_row, n, into), marks)
    return into.astype(np.uint64)


def _position_marks(n):
    """One mark per vertex and thread: a position in a row, plus one. uint32 holds it: the
    (degree, id) orientation keeps a row at most sqrt(2m) < 2^32 long."""
    return np.zeros((compiled.get_threads(), max(n, 1)), np.uint32)


def lowest_triangles(rowptr, col):
    """Per vertex of an oriented graph, the triangles in which it is the lowest vertex (uint64)."""
    n = rowptr.size - 1
    lowest = np.zeros(n, np.uint64)
    into = np.zeros(col.size, np.uint32)
    _side_by_side(_per_vertex_rows, (rowptr, col, 0, n, lowest, into), _position_marks(n))
    return lowest


def _side_by_side(kernel, args, mark, per_thread: int = _STRIDES_PER_THREAD) -> list:
    """kernel(*args, strides, first, last, mark[t]) for every thread t of this one's Numba
    threads (mark has a row per thread), each on its run of per_thread strides: their results, in
    order."""
    threads = mark.shape[0]
    strides = threads * per_thread

    return _on_threads(threads, lambda t: kernel(*args, strides, t * per_thread, (t + 1) * per_thread, mark[t]))


def _launch(kernel, rowptr, col, n_local, start, marks):
    n = max(rowptr.size - 1, 1) if marks else 1
    threads = compiled.get_threads() if col.size >= ONE_THREAD_BELOW else 1
    mark = np.zeros((threads, n), np.uint8)  # one row per thread
    return int(sum(_side_by_side(kernel, (np.asarray(rowptr), np.asarray(col), int(start), int(n_local)), mark)))


def count_marker(rowptr, col, n_local, start=0):
    """Triangles whose lowest vertex is a local row from row start on."""
    return _launch(_marker, rowptr, col, n_local, start, marks=True)


def count_merge(rowptr, col, n_local, start=0):
    return _launch(_merge, rowptr, col, n_local, start, marks=False)


@jit(cache=True, nogil=True)
def _in_degrees_between(col, begin, end, low, high, degree):
    """degree[v - low] = the edges of col[begin:end] into v, for low <= v < high (this thread's heads)."""
    for e in range(begin, end):
        v = col[e]
        if low <= v < high:
            degree[v - low] += 1


@jit(cache=True, nogil=True)
def _in_edges_between(rowptr, col, start, n_local, back, in_ptr, low, high, first, stop):
    """The local rows' edges u -> v with low <= v < high, listed by v (u ascending within each),
    as the span of u's row to look up from v: after v, where v's edges all lead to higher ids; the
    whole row where v is a proxy whose edges lead back to locals (back[v - n_local])."""
    filled = in_ptr[low:high].copy()
    for u in range(start, n_local):
        begin, end = rowptr[u], rowptr[u + 1]
        for e in range(begin, end):
            v = col[e]
            if low <= v < high:
                at = filled[v - low]
                filled[v - low] = at + 1
                first[at] = begin if v >= n_local and back[v - n_local] else e + 1
                stop[at] = end


@jit(cache=True, nogil=True)
def _middle(rowptr, col, in_ptr, first, stop, rows, strides, s_first, s_last, m):
    """Each triangle u -> v, u -> w, v -> w from its middle vertex v: N+(v) marked in this
    thread's byte array m, then the w of the span of each in-neighbour u's row looked up, up to
    max N+(v). (The lookup loop is _marker's: as a shared Numba function, inlined or not, both
    kernels ran 1.1-1.6 times slower on 2 cores.)"""
    found = np.uint64(0)
    for s in range(s_first, s_last):
        for v in range(s, rows, strides):
            begin, end = rowptr[v], rowptr[v + 1]
            if begin == end or in_ptr[v] == in_ptr[v + 1]:
                continue
            highest = col[end - 1]
            for e in range(begin, end):
                m[col[e]] = 1
            for i in range(in_ptr[v], in_ptr[v + 1]):
                for f in range(np.int64(first[i]), np.int64(stop[i])):
                    w = col[f]
                    if w > highest:
                        break
                    found += m[w]
            for e in range(begin, end):
                m[col[e]] = 0
    return found


def in_edges(rowptr, col, n_local, start=0):
    """(in_ptr, first, stop): the edges of the local rows from row start on, by their head v,
    each as the span col[first:stop] of its tail's row that _middle looks up (after v, or all of
    it where v is a proxy whose edges lead back to the local rows). Built on every
    thread, each reading every edge and keeping those into its own heads: an equal run of
    vertices while counting them, the heads of an equal share of the edges while listing them.
    Spans are uint32 where the positions fit."""
    rowptr, col = np.asarray(rowptr), np.asarray(col)
    n = rowptr.size - 1
    lo, hi = int(rowptr[start]) if n else 0, int(rowptr[n_local]) if n else 0
    threads = compiled.get_threads() if hi - lo >= ONE_THREAD_BELOW else 1
    in_ptr = np.zeros(n + 1, np.int64)
    runs = np.linspace(0, n, threads + 1).astype(np.int64).tolist()
    _on_threads(threads, lambda t: _in_degrees_between(col, lo, hi, runs[t], runs[t + 1],
                                                         in_ptr[runs[t] + 1:runs[t + 1] + 1]))
    np.cumsum(in_ptr, out=in_ptr)
    span = np.uint32 if col.size < 1 << 32 else np.int64
    first, stop = np.empty(hi - lo, span), np.empty(hi - lo, span)
    bounds = np.searchsorted(in_ptr, np.linspace(0, hi - lo, threads + 1)[1:-1]).tolist()
    heads = list(zip([0, *bounds], [*bounds, n], strict=True))
    back = _leads_back(rowptr, col, n_local)
    _on_threads(threads, lambda t: _in_edges_between(rowptr, col, int(start), int(n_local), back, in_ptr, heads[t][0],
                                                       heads[t][1], first, stop))
    return in_ptr, first, stop


def _leads_back(rowptr, col, n_local):
    """For each row from n_local on (a part's proxies, or the rows after a share's), whether it
    has an edge to a row below n_local: its first column, rows being sorted. None does in a whole
    graph, whose edges all lead up."""
    starts, ends = rowptr[n_local:-1], rowptr[n_local + 1:]
    if not col.size:
        return np.zeros(starts.size, bool)
    return (starts < ends) & (col[np.minimum(starts, col.size - 1)] < n_local)  # (an empty row's start clipped)


def _on_threads(threads: int, work) -> list:
    """[work(t) for t in range(threads)], each on a thread of its own (one: on this thread)."""
    if threads == 1:
        return [work(0)]
    with ThreadPoolExecutor(threads, thread_name_prefix="tcdist-cpu") as pool:
        return compiled.threads_map(pool, work, range(threads))


def count_middle(rowptr, col, n_local, start=0, prepared=None):
    """Triangles whose lowest vertex is a local row from row start on, each found from its middle
    vertex (prepared: in_edges() of the same rows, else made here)."""
    rowptr, col = np.asarray(rowptr), np.asarray(col)
    in_ptr, first, stop = prepared if prepared is not None else in_edges(rowptr, col, n_local, start)
    n = rowptr.size - 1
    threads = compiled.get_threads() if first.size >= ONE_THREAD_BELOW else 1
    mark = np.zeros((threads, max(n, 1)), np.uint8)
    return int(sum(_side_by_side(_middle, (rowptr, col, in_ptr, first, stop, n), mark, per_thread=1)))
