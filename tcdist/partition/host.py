"""LSTC Algorithms 1 and 2 on the host: compiled (Numba), parts built side by side on threads.

The whole-array builder (build.py) sorts packed keys of every (part, vertex) pair, several
passes over all members; on the host that is single-threaded NumPy. Here each part is built
by one call that releases the GIL, on a thread of its own, in a few linear passes:

1. members: its local vertices L, their out-neighbours N+(L) (rows of the CSR) and their
   in-neighbours N-(L), as flags in a byte per vertex. For up to 64 parts, N-(L) is read from
   each vertex's set of the parts its out-neighbours are in (one pass over the edges for all
   parts) while a scan lists the members in rank order; for more, from the transpose (built
   once in parallel), and a small part gathers its members and sorts them;
2. Algorithm 2 (prune lstc): the oriented graph is acyclic in rank order, so rounds in
   parallel and one pass in that order flag what is reachable from L (see build.py);
   'minimal' and 'none' as there;
3. one pass counts each kept row's edges to kept members (a byte read per edge), and one writes
   them: the members kept renumbered locals first, each row's targets locals first, both in
   rank order: the same parts, bit for bit, as the whole-array builder.

Parts come out in order as they are built, so a store is written while only a few parts are
in memory. Parts are built side by side, one per thread; those of a large graph by teams of
threads (8 parts on 16 threads: 8 teams of 2), each pass above a parallel loop over runs of rows
of about equal edges (_spread), and racing writes made only where a byte changes (measured in
results/host-partition.md).
"""

import threading
import types
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from tcdist import compiled, progress
from tcdist.compiled import jit, prange
from tcdist.graph.graph import col_dtype
from tcdist.graph.sort import SMALL
from tcdist.partition.incoming import MASK_PARTS, RANGES_PER_THREAD, parts_reached, transpose
from tcdist.partition.part import Part

LOCAL, OUT, IN, ALIVE = 1, 2, 4, 8
_LARGE_PART = 1 << 22  # edges of the graph per part from which a part is built by a team of threads
_DENSE_SHIFT = 5       # a part that may touch 1/32 of the vertices finds its members by a scan of the flags
PRUNE_CODES = {"lstc": 0, "none": 1, "minimal": 2}


def _build_part_source(rowptr, col, in_ptr, in_col, in_parts, bit, local, prune, flags, new_id, team):
    """(rowptr, col, global ids, n_local, v_ind, e_ind) of the part whose local vertices are
    local (in rank order). Its in-neighbours are those whose in_parts has `bit` (up to 64
    parts), else the rows of local in the transpose (in_ptr, in_col). flags (0) and new_id
    (-1), one entry per vertex, are the calling thread's scratch, left as they were. Compiled
    twice (below): serial (team 1), and parallel (prange) for a part built by a team of
    threads, which calls the parallel variants of _mark, _members and _reach; each loop over
    rows is dealt out in runs of about equal edges (_spread). Everything after the members
    works on global ids with the flags (a byte a vertex, which the cache holds 4x more of than
    an id): Algorithm 2 as a flag, one pass that counts each row's kept edges, one that writes
    them. A part that may touch a 2^-_DENSE_SHIFT share of the vertices finds its members by a
    scan of the flags; a small one gathers them and sorts them, so that it costs its own size,
    not n."""
    pieces = team * RANGES_PER_THREAD if team > 1 else 1
    for i in prange(local.size):
        flags[local[i]] |= LOCAL
    size = local.size + _mark(rowptr, col, local, pieces, flags, OUT)
    if in_parts.size == 0:
        size += _mark(in_ptr, in_col, local, pieces, flags, IN)  # at most this many members
    if in_parts.size or size >= flags.size >> _DENSE_SHIFT:
        members = _members(flags, in_parts, bit)
    else:
        touched = np.empty(size, np.int64)
        k = 0
        for u in local:
            touched[k] = u
            k += 1
            new_id[u] = 0  # marks the vertices gathered so far
        for u in local:
            for e in range(rowptr[u], rowptr[u + 1]):
                if new_id[col[e]] < 0:
                    new_id[col[e]] = 0
                    touched[k] = col[e]
                    k += 1
            for e in range(in_ptr[u], in_ptr[u + 1]):
                if new_id[in_col[e]] < 0:
                    new_id[in_col[e]] = 0
                    touched[k] = in_col[e]
                    k += 1
        members = np.sort(touched[:k])  # rank order
        for u in members:
            new_id[u] = -1
    v_ind = members.size
    spread = _spread(rowptr, members, pieces)
    if prune == 0:  # Algorithm 2: ALIVE on the members reachable from a local one
        _reach(rowptr, col, members, spread, flags)
    # the induced edges (those to members), and of each kept row its kept edges and those to locals
    kept_in_row = np.zeros(v_ind, np.int64)
    near_in_row = np.zeros(v_ind, np.int64)
    induced = np.zeros(pieces, np.int64)  # by run: a scalar reduction here fails Numba 0.68's parfor pass
    for c in prange(pieces):
        run_induced = 0  # counted here, stored once: neighbouring runs' entries share a cache line
        for i in range(spread[c], spread[c + 1]):
            u = members[i]
            source = flags[u]
            alive = stays(prune, source)
            kept = 0
            near = 0
            for e in range(rowptr[u], rowptr[u + 1]):
                target = flags[col[e]]
                if target:
                    run_induced += 1
                    if alive and edge_stays(prune, source, target):
                        kept += 1
                        if target & LOCAL:
                            near += 1
            kept_in_row[i] = kept
            near_in_row[i] = near
        induced[c] = run_induced
    e_ind = induced.sum()
    # new ids: kept locals, then kept proxies, each in rank order
    n_local = 0
    for u in members:
        if flags[u] & LOCAL:
            new_id[u] = n_local
            n_local += 1
    size = n_local
    for u in members:
        if not flags[u] & LOCAL and stays(prune, flags[u]):
            new_id[u] = size
            size += 1
    global_id = np.empty(size, np.int64)
    part_rowptr = np.zeros(size + 1, np.int64)
    for i in prange(v_ind):
        if new_id[members[i]] >= 0:
            global_id[new_id[members[i]]] = members[i]
            part_rowptr[new_id[members[i]] + 1] = kept_in_row[i]
    for r in range(size):
        part_rowptr[r + 1] += part_rowptr[r]
    # each kept row written from two cursors: its locals, then its proxies (both numbered in rank order)
    part_col = np.empty(part_rowptr[size], col.dtype)
    for c in prange(pieces):
        for i in range(spread[c], spread[c + 1]):
            u = members[i]
            if new_id[u] < 0:
                continue
            source = flags[u]
            near = part_rowptr[new_id[u]]
            far = near + near_in_row[i]
            for e in range(rowptr[u], rowptr[u + 1]):
                t = new_id[col[e]]  # kept members only (-1 else); 'minimal' keeps fewer of their edges
                if t >= 0 and (prune != 2 or edge_stays(prune, source, flags[col[e]])):
                    if t < n_local:
                        part_col[near] = t
                        near += 1
                    else:
                        part_col[far] = t
                        far += 1
    for i in prange(v_ind):
        flags[members[i]] = 0
        new_id[members[i]] = -1
    return part_rowptr, part_col, global_id, n_local, v_ind, e_ind


def _compiled(source, parallel: bool, **helpers):
    """source compiled serial or parallel, the module's names in it but for helpers (name: the
    variant to call instead). Numba's cache on disk keys a function by its name, line and
    bytecode, not by `parallel`: two variants of one function would load each other's code (the
    parallel builder running on one thread), so each gets its own name. Numba compiles every
    function a compiled one may call: a builder that chose its helpers by team at run time made
    a run that builds a part a thread compile the parallel helpers too (seconds each)."""
    name = f"{source.__name__}_{'parallel' if parallel else 'serial'}"
    names = {**source.__globals__, **helpers} if helpers else source.__globals__
    variant = types.FunctionType(source.__code__, names, name, source.__defaults__, source.__closure__)
    variant.__qualname__ = name
    return jit(parallel=parallel, cache=True, nogil=True)(variant)


def _mark_source(ptr, adj, local, pieces, flags, bit):
    """Set bit on every vertex a row of local (ptr, adj) reaches, in `pieces` runs of rows of about
    equal edges; returns the edges. One bit a pass, so that threads racing on a byte all write
    the same value (setting OUT and IN in one pass lost bits: one thread's OUT written over by
    another's IN), and only where it is missing (a hub's byte, read by every thread, is then
    written once)."""
    spread = _spread(ptr, local, pieces)
    edges = 0
    for c in prange(pieces):
        for i in range(spread[c], spread[c + 1]):
            u = local[i]
            edges += ptr[u + 1] - ptr[u]
            for e in range(ptr[u], ptr[u + 1]):
                if not flags[adj[e]] & bit:
                    flags[adj[e]] |= bit
    return edges


def _members_source(flags, in_parts, bit):
    """The vertices flagged, or with `bit` in in_parts (then flagged IN), in order: counted by
    chunk, then written by chunk."""
    chunks = max(1, min(flags.size >> 16, 256))
    counts = np.zeros(chunks + 1, np.int64)
    for c in prange(chunks):
        lo, hi = c * flags.size // chunks, (c + 1) * flags.size // chunks
        if in_parts.size:
            for v in range(lo, hi):
                if in_parts[v] & bit:
                    flags[v] |= IN
        flagged = 0  # counted here, stored once: neighbouring chunks' counts share a cache line
        for v in range(lo, hi):
            if flags[v]:
                flagged += 1
        counts[c + 1] = flagged
    for c in range(chunks):
        counts[c + 1] += counts[c]
    out = np.empty(counts[chunks], np.int64)
    for c in prange(chunks):
        lo, hi, k = c * flags.size // chunks, (c + 1) * flags.size // chunks, counts[c]
        for v in range(lo, hi):
            if flags[v]:
                out[k] = v
                k += 1
    return out


def _reach_source(rowptr, col, members, spread, flags):
    """Flag ALIVE every member reachable from a local one through members (Algorithm 2's
    fixpoint). A few rounds push from the live members in parallel, in the runs of spread (most
    of what is reachable is one or two hops away); one pass in rank order, a topological order,
    then finishes exactly. Threads racing on a byte all write it with ALIVE added: no other bit
    changes meanwhile."""
    pushed = np.zeros(members.size, np.bool_)
    pieces = spread.size - 1
    for _ in range(3):
        changed = 0
        for c in prange(pieces):
            for i in range(spread[c], spread[c + 1]):
                u = members[i]
                if pushed[i] or not flags[u] & (LOCAL | ALIVE):
                    continue
                pushed[i] = True
                changed += 1
                for e in range(rowptr[u], rowptr[u + 1]):
                    f = flags[col[e]]
                    if f and not f & ALIVE:
                        flags[col[e]] = f | ALIVE
        if changed == 0:
            return
    for i in range(members.size):
        u = members[i]
        if not pushed[i] and flags[u] & (LOCAL | ALIVE):
            for e in range(rowptr[u], rowptr[u + 1]):
                if flags[col[e]]:
                    flags[col[e]] |= ALIVE


_mark = _compiled(_mark_source, parallel=False)
_mark_parallel = _compiled(_mark_source, parallel=True)
_members = _compiled(_members_source, parallel=False)
_members_parallel = _compiled(_members_source, parallel=True)
_reach = _compiled(_reach_source, parallel=False)
_reach_parallel = _compiled(_reach_source, parallel=True)


def vertices_by_part(assignment, num_parts, chunks):
    """_by_part's answer; up to SMALL vertices, NumPy's (as fast there, and nothing to compile:
    _by_part took a second of a small graph's first run)."""
    if assignment.size <= SMALL:
        counts = np.bincount(assignment, minlength=num_parts)
        return np.argsort(assignment, kind="stable"), np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return _by_part(assignment, num_parts, chunks)


@jit(parallel=True, cache=True, nogil=True)
def _by_part(assignment, num_parts, chunks):
    """(each part's vertices in rank order, one after another; where each part's begin, P + 1 of
    them): np.argsort(assignment, kind="stable") as a counting sort on every thread, each chunk
    of vertices counted by part, then written from its own cursors (NumPy's stable sort of n
    took about 2 s on RMAT-25, on one thread)."""
    n = assignment.size
    counts = np.zeros((chunks, num_parts), np.int64)
    for c in prange(chunks):
        for v in range(c * n // chunks, (c + 1) * n // chunks):
            counts[c, assignment[v]] += 1
    offsets = np.empty(num_parts + 1, np.int64)
    starts = np.empty((chunks, num_parts), np.int64)
    total = 0
    for p in range(num_parts):  # part p's vertices: chunk 0's, then chunk 1's, ...
        offsets[p] = total
        for c in range(chunks):
            starts[c, p] = total
            total += counts[c, p]
    offsets[num_parts] = total
    order = np.empty(n, np.int64)
    for c in prange(chunks):
        at = starts[c].copy()
        for v in range(c * n // chunks, (c + 1) * n // chunks):
            order[at[assignment[v]]] = v
            at[assignment[v]] += 1
    return order, offsets


@jit(cache=True, nogil=True)
def _spread(ptr, vertices, pieces):
    """Bounds of `pieces` runs of consecutive vertices whose rows (ptr) hold about equal edges, a
    vertex counted as one more. Rows in rank order are uneven (on RMAT-21, 96 % of the edges leave
    the upper half of the ranks), so equal counts of rows left a loop to one thread, and prange's
    chunk size setting did not help."""
    work = np.empty(vertices.size + 1, np.int64)
    work[0] = 0
    for i in range(vertices.size):
        work[i + 1] = work[i] + 1 + ptr[vertices[i] + 1] - ptr[vertices[i]]
    bounds = np.searchsorted(work, np.arange(pieces + 1) * work[-1] // pieces)
    bounds[0], bounds[pieces] = 0, vertices.size
    return bounds


@jit(cache=True, nogil=True, inline="always")
def stays(prune, flag):
    """Whether a member (its flag) stays in the part: lstc, what Algorithm 2 reached; none, all;
    minimal, the local vertices and their out-neighbours."""
    if prune == 0:
        return (flag & (LOCAL | ALIVE)) != 0
    if prune == 1:
        return True
    return (flag & (LOCAL | OUT)) != 0


@jit(cache=True, nogil=True, inline="always")
def edge_stays(prune, source, target):
    """Whether an edge between two members, from one that stays (their flags), stays: under
    'minimal', the edges of local vertices and those among their out-neighbours."""
    return prune != 2 or (source & LOCAL) != 0 or ((source & OUT) != 0 and (target & OUT) != 0)


_build_part = _compiled(_build_part_source, parallel=False)
_build_part_parallel = _compiled(_build_part_source, parallel=True, _mark=_mark_parallel, _members=_members_parallel,
                                 _reach=_reach_parallel)  # (here: after every name it calls)


class PartBuilder:
    """What building any part of LSTC's partitioning of a graph in host memory needs, made once:
    each vertex's set of the parts its out-neighbours are in (in_parts) for up to MASK_PARTS
    parts, else the transpose (reversed_edges() if given: a caller partitioning the graph several
    times keeps it), and each part's vertices in rank order. build(p) makes part p with a team of
    `team` threads; a rank that builds only its own parts calls it for those, given the in_parts
    made once for every rank (reached: incoming.reached_and_work's)."""

    def __init__(self, graph, assignment, num_parts, prune="lstc", reversed_edges=None, reached=None):
        self.rowptr, self.col, self.n = np.asarray(graph.rowptr), np.asarray(graph.col), graph.n
        self.prune = PRUNE_CODES[prune]
        pieces = max(compiled.get_threads(), 1) * RANGES_PER_THREAD
        if num_parts <= MASK_PARTS:
            self.in_parts = reached if reached is not None else \
                parts_reached(self.rowptr, self.col, np.asarray(assignment).astype(np.uint8, copy=False), pieces)
            self.in_ptr, self.in_col = np.zeros(1, np.int64), np.zeros(0, self.col.dtype)
        else:
            self.in_parts = np.zeros(0, np.uint64)
            self.in_ptr, self.in_col = reversed_edges() if reversed_edges is not None else transpose(graph)
        self.order, self.offsets = vertices_by_part(np.asarray(assignment), num_parts, pieces)
        self._scratch = threading.local()

    def build(self, p: int, team: int = 1) -> Part:
        scratch = self._scratch
        if not hasattr(scratch, "flags"):  # once per thread: its scratch, reused by its parts, and its team
            scratch.flags, scratch.new_id = np.zeros(self.n, np.uint8), np.full(self.n, -1, self.col.dtype)
            compiled.set_threads(team)  # this thread's own setting
        bit = np.uint64(1 << p if self.in_parts.size else 0)
        builder = _build_part_parallel if team > 1 else _build_part
        built = builder(self.rowptr, self.col, self.in_ptr, self.in_col, self.in_parts, bit,
                        self.order[self.offsets[p]:self.offsets[p + 1]], self.prune, scratch.flags, scratch.new_id,
                        team)
        part_rowptr, part_col, global_id, n_local, v_ind, e_ind = built
        return Part.make(index=p, rowptr=part_rowptr, col=part_col.astype(col_dtype(global_id.size), copy=False),
                         global_id=global_id, n_local=int(n_local), v_ind=int(v_ind), e_ind=int(e_ind))


def iter_parts_host(graph, assignment, num_parts, prune="lstc", team=None, reversed_edges=None, indices=None,
                    threads=None, reached=None):
    """The parts of LSTC's partitioning of a graph held in host memory (see build_parts), in part
    order (or those of indices, in that order), as they are built (PartBuilder): side by side, at
    most one per thread built or waiting at any time, each by a team of `team` threads (None: the
    threads shared out among the parts side by side where the graph has at least _LARGE_PART
    edges a part, e.g. 8 parts on 16 threads in teams of 2; else 1, a part a thread). threads:
    how many to use (None: the calling thread's Numba setting); reached: as PartBuilder's."""
    threads = max(threads or compiled.get_threads(), 1)
    indices = list(range(num_parts)) if indices is None else list(indices)
    with progress.bar(len(indices) + 1, f"partition into {num_parts} parts", "steps") as bar:
        builder = PartBuilder(graph, assignment, num_parts, prune, reversed_edges, reached)
        bar.update()
        side_by_side = max(1, min(len(indices), threads))
        if team is None:
            team = threads // side_by_side if builder.col.size >= _LARGE_PART * max(num_parts, 1) else 1
        team = max(1, min(team, threads))
        side_by_side = max(1, min(len(indices), threads // team))
        if team > 1 and side_by_side > 1 and _threading_layer() == "workqueue":
            team, side_by_side = 1, max(1, min(len(indices), threads))  # it runs one parallel region at a time
        with ThreadPoolExecutor(side_by_side) as pool:
            pending, submitted = deque(), 0
            while pending or submitted < len(indices):
                while submitted < len(indices) and len(pending) < side_by_side:
                    pending.append(pool.submit(compiled.charged, builder.build, indices[submitted], team))
                    submitted += 1
                part, compiling = pending.popleft().result()
                compiled.charge(compiling)
                bar.update()
                yield part


def _threading_layer() -> str:
    """Numba's threading layer, which it chooses at its first parallel region: one is run here where
    none has been yet (a small graph's build and parts run none)."""
    numba = compiled.loaded()
    try:
        return numba.threading_layer()
    except ValueError:  # not yet chosen
        _first_parallel_region(np.zeros(1))
        return numba.threading_layer()


@jit(parallel=True, cache=True, nogil=True)
def _first_parallel_region(a):
    for i in prange(a.size):
        a[i] = i
