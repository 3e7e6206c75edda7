"""Clean and orient: EdgeList -> Graph, where the edges are: on the host here, on the GPU in
gpu_build.py (the same steps in tcdist's own CUDA passes).

Every step is a sort of packed int64 keys (``u * n + v``) or a bincount: NumPy's
vectorised sort is far faster than ``unique`` or a stable ``argsort`` here. On the host each
step runs on every thread the run may use (the parallel sort in sort.py, the fused passes in
passes.py) from COMPILED_FROM edges on, and in whole-array NumPy below it, with the same results.
The whole-array steps the ranks' build takes (ranks/ingest.py) run on CuPy arrays too, on their GPU.
"""

from __future__ import annotations

import numpy as np

from tcdist import compiled, progress
from tcdist.budget import host as memory
from tcdist.budget import model
from tcdist.errors import TcdistError
from tcdist.graph import passes
from tcdist.graph.degrees import degree_summary
from tcdist.graph.edges import EdgeList
from tcdist.graph.graph import MAX_VERTICES, Graph, col_dtype
from tcdist.graph.sort import sort
from tcdist.xp import array_module, select

COMPILED_FROM = 1 << 20  # edges from which the host's compiled passes pay for their first compile
ARRAYS_UP_TO = 1 << 22  # while Numba is not loaded, edges NumPy's passes take (RMAT-16's million in 0.4 s on
# 2 cores: loading the compiled passes, or a first run's compiling them, costs more)


def _compiled(items) -> bool:
    """Whether a host step over the array items takes the compiled passes (else whole-array
    NumPy or CuPy, which compiles nothing: small graphs, a first run with an empty Numba cache,
    and arrays on a GPU)."""
    return isinstance(items, np.ndarray) and items.size >= COMPILED_FROM and (
        items.size > ARRAYS_UP_TO or compiled.is_loaded())


def unique_sorted(keys):
    """Sorted distinct values of keys."""
    return distinct_sorted(sort(keys))


def distinct_sorted(keys):
    """The distinct values of sorted keys."""
    if _compiled(keys):
        return passes.distinct(keys.view(np.uint64))[0].view(keys.dtype)  # equal as uint64 where equal as int64
    if keys.size:
        xp = array_module(keys)
        keep = xp.empty(keys.size, dtype=bool)
        keep[0] = True
        xp.not_equal(keys[1:], keys[:-1], out=keep[1:])
        keys = select(keep, keys)[0]
    return keys


def _undirected_keys(u, v, n):
    """(sorted distinct keys lo * n + hi of the undirected edges, repeated edges, edges also given
    in the other direction), with one sort."""
    return distinct_undirected(sort(directed_keys(u, v, n)))


def directed_keys(u, v, n):
    """Each edge's undirected key lo * n + hi times two, plus its direction (u > v) in the lowest
    bit, as uint64 (2 * n^2 < 2^64 for every n up to MAX_VERTICES)."""
    if _compiled(u):
        return passes.directed_keys(u, v, n)
    xp = array_module(u)
    lo, hi = xp.minimum(u, v), xp.maximum(u, v)
    return (lo * n + hi).astype(np.uint64) * np.uint64(2) + (u > v).astype(np.uint64)


def distinct_undirected(directed):
    """(the distinct undirected keys (int64), repeated edges, edges also given in the other
    direction) of sorted directed keys (uint64: an undirected key times two, plus its direction)."""
    if _compiled(directed):
        keys, distinct = passes.distinct(directed, 1)
        return keys.view(np.int64), int(directed.size - distinct), int(distinct - keys.size)  # keys < 2^63
    once = distinct_sorted(directed)
    keys = distinct_sorted(once >> np.uint64(1))
    return keys.astype(np.int64), int(directed.size - once.size), int(once.size - keys.size)


def compact_ids(src, dst):
    """(ids, u, v): the distinct ids in order, and src/dst renumbered 0..len(ids)-1."""
    xp = array_module(src)
    if src.size == 0:
        return xp.empty(0, np.int64), src, dst
    top = int(max(src.max(), dst.max()))
    host = _compiled(src)
    if top < 4 * (src.size + dst.size) + 1024:
        present = xp.zeros(top + 1, dtype=bool)
        for end in (src, dst):
            if host:
                passes.mark(present, end)
            else:
                present[end] = True
        new_id = xp.cumsum(present, dtype=np.int64) - 1
        ids = xp.flatnonzero(present).astype(np.int64)
        return (ids, passes.take(new_id, src), passes.take(new_id, dst)) if host else (ids, new_id[src], new_id[dst])
    ids = unique_sorted(xp.concatenate([src, dst]))
    return ids, positions(ids, src), positions(ids, dst)


def positions(ordered, values):
    """searchsorted(ordered, values), on every thread from COMPILED_FROM values on."""
    if _compiled(values):
        return passes.positions(ordered, values)
    return array_module(values).searchsorted(ordered, values)


def rank_order(deg):
    """Vertices sorted by (degree, id): the global rank of LSTC's orientation."""
    n = deg.size
    return sort(deg.astype(np.int64) * n + np.arange(n, dtype=np.int64)) % n


def csr_from_sorted_keys(keys, n):
    """rowptr and col of the edges whose packed keys (u * n + v) are sorted."""
    if _compiled(keys):
        rowptr, col = passes.row_starts(keys, n), np.empty(keys.size, col_dtype(n))
        passes.columns(keys, rowptr, col)
        return rowptr, col
    rowptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys // n, minlength=n), out=rowptr[1:])
    return rowptr, (keys % n).astype(col_dtype(n))


def build_graph(edges: EdgeList) -> Graph:
    """The simple undirected graph of an edge list, oriented and relabelled by (degree, id) rank.

    Self loops, duplicate and reciprocal edges are dropped and counted; ids are compacted,
    so vertices that only had self loops (or no edge at all) do not exist. Built where the
    edges are: on the host, or on the GPU (gpu_build.py).
    """
    on_host = array_module(edges.src) is np
    if on_host:
        memory.require(model.BUILD_BYTES_PER_EDGE * len(edges),
                       f"building the graph of {edges.name} ({len(edges):,} edges)",
                       "convert it once on a machine with more memory (tcdist convert GRAPH OUT.h5), or count a "
                       "smaller graph")
    with progress.bar(4, f"build {edges.name}", "steps") as bar:
        rowptr, col, original_id, counts = (_build if on_host else _build_on_gpu)(edges, bar)
    warnings = list(edges.warnings)
    if not col.size:  # an empty file, comments or self loops alone: most likely not the input meant
        warnings.append(no_edges(edges.name, counts["self_loops"]))
    return Graph(rowptr=rowptr, col=col, original_id=original_id, name=edges.name, **counts,
                 warnings=warnings, labels=edges.labels, degrees=degree_summary(rowptr, rowptr.size - 1))


def no_edges(name: str, self_loops: int) -> str:
    """The warning that a graph has no edges."""
    return f"{name}: no edges" + f" (only {self_loops:,} self loops, which are dropped)" * bool(self_loops)


def drop_loops(src, dst):
    """(src, dst without their self loops, the self loops dropped)."""
    if _compiled(src):
        self_loops = int(passes.loops(src, dst))
        return (*passes.drop_loops(src, dst, self_loops), self_loops) if self_loops else (src, dst, 0)
    loop = src == dst
    self_loops = int(loop.sum())
    return (*select(~loop, src, dst), self_loops) if self_loops else (src, dst, 0)


def checked_vertices(name: str, n: int) -> int:
    """n, where tcdist handles that many vertices."""
    if n > MAX_VERTICES:
        raise TcdistError(f"{name}: {n} vertices; tcdist handles at most {MAX_VERTICES}")
    return n


def _build(edges, bar):
    """(rowptr, col, original_id, the dropped edges counted) on the host."""
    src, dst, self_loops = drop_loops(edges.src, edges.dst)
    ids, u, v = compact_ids(src, dst)
    bar.update()
    n = checked_vertices(edges.name, int(ids.size))
    keys, duplicates, reciprocal = _undirected_keys(u, v, n)
    bar.update()
    del u, v
    order, oriented = orient(keys, n)
    del keys
    bar.update()
    rowptr, col = csr_from_sorted_keys(sort(oriented), n)
    bar.update()
    return rowptr, col, ids[order], {"self_loops": self_loops, "duplicates": duplicates, "reciprocal": reciprocal}


def orient(keys, n: int):
    """(order, oriented): the vertices by (degree, id) rank, and the edges' keys by rank
    (min * n + max), not sorted yet; of the sorted distinct undirected keys lo * n + hi (int64)."""
    if _compiled(keys):
        rowptr = passes.row_starts(keys, n)
        order = rank_order(passes.degrees(keys, rowptr))
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n, dtype=np.int64)
        oriented = passes.oriented_keys(keys, rowptr, rank)
        del rowptr
    else:
        lo, hi = keys // n, keys % n
        order = rank_order(np.bincount(lo, minlength=n) + np.bincount(hi, minlength=n))
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n, dtype=np.int64)
        a, b = rank[lo], rank[hi]
        del lo, hi
        oriented = np.minimum(a, b) * n + np.maximum(a, b)
        del a, b
    return order, oriented


def _build_on_gpu(edges, bar):
    """(rowptr, col, original_id, the dropped edges counted) on the GPU: the same steps."""
    from tcdist.graph import gpu_build

    src, dst = edges.src, edges.dst
    self_loops, top = gpu_build.end_stats(src, dst)
    ids, new_id = gpu_build.compact_ids(src, dst, self_loops, top)
    bar.update()
    n = checked_vertices(edges.name, int(ids.size))
    keys, duplicates, reciprocal = gpu_build.undirected_keys(src, dst, self_loops, ids, new_id)
    del new_id
    bar.update()
    order, oriented = gpu_build.orient(keys, n)
    bar.update()
    rowptr, col = gpu_build.csr(oriented, n)
    bar.update()
    return rowptr, col, gpu_build.take(ids, order), {"self_loops": self_loops, "duplicates": duplicates,
                                                     "reciprocal": reciprocal}
