"""LSTC Algorithms 1 and 2 on the host: compiled (Numba), parts built side by side on threads.

The whole-array builder (build.py) sorts packed keys of every (part, vertex) pair, several
passes over all members; on the host that is single-threaded NumPy. Here each part is built
by one call that releases the GIL, on a thread of its own, in a few linear passes:

1. members: its local vertices L, their out-neighbours N+(L) (rows of the CSR) and their
   in-neighbours N-(L) (rows of the transpose, built once in parallel by target range), as
   flags in a byte per vertex; a scan of the flags lists them in rank order;
2. induced edges: each member's row, kept where the target is a member;
3. Algorithm 2 (prune lstc): the oriented graph is acyclic in rank order, so one pass in that
   order marks what is reachable from L (see build.py); 'minimal' and 'none' as there;
4. the part's CSR: kept members renumbered locals first, each row's targets locals first,
   both in rank order: the same parts, bit for bit, as the whole-array builder.

Parts come out in order as they are built, at most one per thread in flight, so a store is
written while only a few parts are in memory.
"""

import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from numba import njit, prange

from tcdist import progress
from tcdist.graph.graph import col_dtype
from tcdist.partition.part import Part

LOCAL, OUT, IN = 1, 2, 4
_PRUNE_CODES = {"lstc": 0, "none": 1, "minimal": 2}


@njit(parallel=True, cache=True, nogil=True)
def _transpose(rowptr, col, chunks):
    """The CSR of the reversed edges (rows sorted): chunk c owns the targets of its range and
    scans the rows that can reach them, so no two threads write one entry."""
    n = rowptr.size - 1
    in_ptr = np.zeros(n + 1, np.int64)
    for c in prange(chunks):
        lo, hi = c * n // chunks, (c + 1) * n // chunks
        for u in range(n):
            start = rowptr[u] + np.searchsorted(col[rowptr[u]:rowptr[u + 1]], lo)
            for e in range(start, rowptr[u + 1]):
                if col[e] >= hi:
                    break
                in_ptr[col[e] + 1] += 1
    for v in range(n):
        in_ptr[v + 1] += in_ptr[v]
    in_col = np.empty(rowptr[n], col.dtype)
    fill = in_ptr[:-1].copy()
    for c in prange(chunks):
        lo, hi = c * n // chunks, (c + 1) * n // chunks
        for u in range(n):
            start = rowptr[u] + np.searchsorted(col[rowptr[u]:rowptr[u + 1]], lo)
            for e in range(start, rowptr[u + 1]):
                v = col[e]
                if v >= hi:
                    break
                in_col[fill[v]] = u
                fill[v] += 1
    return in_ptr, in_col


@njit(cache=True, nogil=True)
def _build_part(rowptr, col, in_ptr, in_col, local, prune, flags, slot):
    """(rowptr, col, global ids, n_local, v_ind, e_ind) of the part whose local vertices are
    local (in rank order). flags (0) and slot (-1), one entry per vertex, are the calling
    thread's scratch: only the part's members are touched, and left as they were, so a part
    costs its own size, not n."""
    size = local.size
    for u in local:
        size += rowptr[u + 1] - rowptr[u] + in_ptr[u + 1] - in_ptr[u]
    touched = np.empty(size, np.int64)
    k = 0
    for u in local:
        touched[k] = u
        k += 1
        flags[u] |= LOCAL
    for u in local:
        for e in range(rowptr[u], rowptr[u + 1]):
            if flags[col[e]] == 0:
                touched[k] = col[e]
                k += 1
            flags[col[e]] |= OUT
        for e in range(in_ptr[u], in_ptr[u + 1]):
            if flags[in_col[e]] == 0:
                touched[k] = in_col[e]
                k += 1
            flags[in_col[e]] |= IN
    members = np.sort(touched[:k])  # rank order
    v_ind = members.size
    for i in range(v_ind):
        slot[members[i]] = i
    # induced edges, grouped by source member, targets in rank order
    row_len = np.zeros(v_ind + 1, np.int64)
    for i in range(v_ind):
        u = members[i]
        for e in range(rowptr[u], rowptr[u + 1]):
            if slot[col[e]] >= 0:
                row_len[i + 1] += 1
    for i in range(v_ind):
        row_len[i + 1] += row_len[i]
    e_ind = row_len[v_ind]
    target = np.empty(e_ind, np.int64)
    for i in range(v_ind):
        u, k = members[i], row_len[i]
        for e in range(rowptr[u], rowptr[u + 1]):
            t = slot[col[e]]
            if t >= 0:
                target[k] = t
                k += 1
    # Algorithm 2 and the other prune modes: which members and edges stay
    is_local = np.empty(v_ind, np.bool_)
    alive = np.empty(v_ind, np.bool_)
    for i in range(v_ind):
        f = flags[members[i]]
        is_local[i] = (f & LOCAL) != 0
        alive[i] = is_local[i] or prune == 1 or (prune == 2 and (f & OUT) != 0)
    if prune == 0:
        for i in range(v_ind):  # rank order is a topological order of the oriented graph
            if alive[i]:
                for k in range(row_len[i], row_len[i + 1]):
                    alive[target[k]] = True
    # new ids: kept locals, then kept proxies, each in rank order
    new_id = np.full(v_ind, -1, np.int64)
    n_local = 0
    for i in range(v_ind):
        if is_local[i]:
            new_id[i] = n_local
            n_local += 1
    size = n_local
    for i in range(v_ind):
        if alive[i] and not is_local[i]:
            new_id[i] = size
            size += 1
    global_id = np.empty(size, np.int64)
    for i in range(v_ind):
        if new_id[i] >= 0:
            global_id[new_id[i]] = members[i]
    part_rowptr = np.zeros(size + 1, np.int64)
    for i in range(v_ind):
        if alive[i]:
            part_rowptr[new_id[i] + 1] = _kept(prune, flags, members, i, target, row_len, alive, is_local)
    for r in range(size):
        part_rowptr[r + 1] += part_rowptr[r]
    part_col = np.empty(part_rowptr[size], np.int64)
    for i in range(v_ind):
        if not alive[i]:
            continue
        k = part_rowptr[new_id[i]]
        for want_local in (True, False):  # each row's targets: locals first, both in rank order
            for e in range(row_len[i], row_len[i + 1]):
                t = target[e]
                if is_local[t] == want_local and _edge_kept(prune, flags, members, i, t, alive):
                    part_col[k] = new_id[t]
                    k += 1
    for v in members:
        flags[v] = 0
        slot[v] = -1
    return part_rowptr, part_col, global_id, n_local, v_ind, e_ind


@njit(cache=True, nogil=True, inline="always")
def _edge_kept(prune, flags, members, i, t, alive):
    if prune == 0:
        return alive[i]
    if prune == 1:
        return True
    fi, ft = flags[members[i]], flags[members[t]]
    return (fi & LOCAL) != 0 or ((fi & OUT) != 0 and (ft & OUT) != 0)


@njit(cache=True, nogil=True)
def _kept(prune, flags, members, i, target, row_len, alive, is_local):
    kept = 0
    for e in range(row_len[i], row_len[i + 1]):
        if _edge_kept(prune, flags, members, i, target[e], alive):
            kept += 1
    return kept


def iter_parts_host(graph, assignment, num_parts, prune="lstc"):
    """The parts of LSTC's partitioning of a graph held in host memory (see build_parts), in part
    order, as they are built: at most one per thread is built or waiting at any time."""
    rowptr, col = np.asarray(graph.rowptr), np.asarray(graph.col)
    assignment = np.asarray(assignment, dtype=np.int64)
    window = max(1, min(num_parts, numba.get_num_threads()))
    with progress.bar(num_parts + 1, f"partition into {num_parts} parts", "steps") as bar:
        in_ptr, in_col = _transpose(rowptr, col, max(numba.get_num_threads(), 1))
        bar.update()
        order = np.argsort(assignment, kind="stable")  # each part's vertices, in rank order
        offsets = np.searchsorted(assignment[order], np.arange(num_parts + 1))

        scratch = threading.local()

        def build(p):
            if not hasattr(scratch, "flags"):  # one pair per thread, reused by its parts
                scratch.flags, scratch.slot = np.zeros(graph.n, np.uint8), np.full(graph.n, -1, np.int64)
            built = _build_part(rowptr, col, in_ptr, in_col, order[offsets[p]:offsets[p + 1]], _PRUNE_CODES[prune],
                                scratch.flags, scratch.slot)
            part_rowptr, part_col, global_id, n_local, v_ind, e_ind = built
            return Part.make(index=p, rowptr=part_rowptr, col=part_col.astype(col_dtype(global_id.size)),
                             global_id=global_id, n_local=int(n_local), v_ind=int(v_ind), e_ind=int(e_ind))

        with ThreadPoolExecutor(window) as pool:
            pending, submitted = deque(), 0
            while pending or submitted < num_parts:
                while submitted < num_parts and len(pending) < window:
                    pending.append(pool.submit(build, submitted))
                    submitted += 1
                part = pending.popleft().result()
                bar.update()
                yield part
