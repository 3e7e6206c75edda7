"""Clean and orient: EdgeList -> Graph, in whole-array passes (NumPy or CuPy).

Every step is a sort of packed int64 keys (``u * n + v``) or a bincount: NumPy's
vectorised sort is far faster than ``unique`` or a stable ``argsort`` here, and on CuPy
both are radix sorts. On the host each step runs on every thread the run may use (the
parallel sort in sort.py, the fused passes in passes.py), with the same results.
"""

from __future__ import annotations

import numpy as np

from tcdist import progress
from tcdist.budget import host as memory
from tcdist.budget import model
from tcdist.errors import TcdistError
from tcdist.graph import passes
from tcdist.graph.degrees import degree_summary
from tcdist.graph.edges import EdgeList
from tcdist.graph.graph import MAX_VERTICES, Graph, col_dtype
from tcdist.graph.sort import sort
from tcdist.xp import array_module

COMPILED_FROM = 1 << 20  # edges from which the host's compiled passes pay for their first compile


def _compiled(xp, size: int) -> bool:
    """Whether a host step over size items takes the compiled passes (else whole-array NumPy,
    which compiles nothing: small graphs, and a first run with an empty Numba cache)."""
    return xp is np and size >= COMPILED_FROM


def unique_sorted(xp, keys):
    """Sorted distinct values of keys."""
    return _distinct(xp, _sort(xp, keys))


def _sort(xp, keys):
    return sort(keys) if xp is np else xp.sort(keys)


def _distinct(xp, keys):
    """The distinct values of sorted keys."""
    if _compiled(xp, keys.size):
        return passes.distinct(keys.view(np.uint64))[0].view(keys.dtype)  # equal as uint64 where equal as int64
    if keys.size:
        keep = xp.empty(keys.size, dtype=bool)
        keep[0] = True
        xp.not_equal(keys[1:], keys[:-1], out=keep[1:])
        keys = keys[keep]
    return keys


def _undirected_keys(xp, u, v, n):
    """(sorted distinct keys lo * n + hi of the undirected edges, repeated edges, edges also given
    in the other direction), with one sort: each key carries its direction in its lowest bit
    (2 * n^2 < 2^64 for every n up to MAX_VERTICES, so uint64 holds it)."""
    if _compiled(xp, u.size):
        keys, directed = passes.distinct(sort(passes.directed_keys(u, v, n)), 1)
        return keys.view(np.int64), int(u.size - directed), int(directed - keys.size)  # keys < 2^63: view = astype
    lo, hi = xp.minimum(u, v), xp.maximum(u, v)
    directed = unique_sorted(xp, (lo * n + hi).astype(xp.uint64) * xp.uint64(2) + (u > v).astype(xp.uint64))
    keys = _distinct(xp, directed >> xp.uint64(1))
    return keys.astype(xp.int64), int(u.size - directed.size), int(directed.size - keys.size)


def compact_ids(src, dst):
    """(ids, u, v): the distinct ids in order, and src/dst renumbered 0..len(ids)-1."""
    xp = array_module(src)
    if src.size == 0:
        return xp.empty(0, xp.int64), src, dst
    top = int(max(src.max(), dst.max()))
    host = _compiled(xp, src.size)
    if top < 4 * (src.size + dst.size) + 1024:
        present = xp.zeros(top + 1, dtype=bool)
        for end in (src, dst):
            if host:
                passes.mark(present, end)
            else:
                present[end] = True
        new_id = xp.cumsum(present, dtype=xp.int64) - 1
        ids = xp.flatnonzero(present).astype(xp.int64)
        return (ids, passes.take(new_id, src), passes.take(new_id, dst)) if host else (ids, new_id[src], new_id[dst])
    ids = unique_sorted(xp, xp.concatenate([src, dst]))
    if host:
        return ids, passes.positions(ids, src), passes.positions(ids, dst)
    return ids, xp.searchsorted(ids, src), xp.searchsorted(ids, dst)


def rank_order(deg):
    """Vertices sorted by (degree, id): the global rank of LSTC's orientation."""
    xp = array_module(deg)
    n = deg.size
    return _sort(xp, deg.astype(xp.int64) * n + xp.arange(n, dtype=xp.int64)) % n


def csr_from_sorted_keys(keys, n):
    """rowptr and col of the edges whose packed keys (u * n + v) are sorted."""
    xp = array_module(keys)
    if _compiled(xp, keys.size):
        rowptr, col = passes.row_starts(keys, n), np.empty(keys.size, col_dtype(n))
        passes.columns(keys, rowptr, col)
        return rowptr, col
    rowptr = xp.zeros(n + 1, dtype=xp.int64)
    xp.cumsum(xp.bincount(keys // n, minlength=n), out=rowptr[1:])
    return rowptr, (keys % n).astype(col_dtype(n))



def build_graph(edges: EdgeList) -> Graph:
    """The simple undirected graph of an edge list, oriented and relabelled by (degree, id) rank.

    Self loops, duplicate and reciprocal edges are dropped and counted; ids are compacted,
    so vertices that only had self loops (or no edge at all) do not exist.
    """
    if array_module(edges.src) is np:
        memory.require(model.BUILD_BYTES_PER_EDGE * len(edges),
                       f"building the graph of {edges.name} ({len(edges):,} edges)",
                       "convert it once on a machine with more memory (tcdist convert GRAPH OUT.h5), or count a "
                       "smaller graph")
    with progress.bar(4, f"build {edges.name}", "steps") as bar:
        return _build(edges, bar)


def _build(edges, bar):
    xp = array_module(edges.src)
    src, dst = edges.src, edges.dst
    host = _compiled(xp, src.size)
    if host:
        self_loops = int(passes.loops(src, dst))
        if self_loops:
            src, dst = passes.drop_loops(src, dst, self_loops)
    else:
        loop = src == dst
        self_loops = int(loop.sum())
        if self_loops:
            src, dst = src[~loop], dst[~loop]
    ids, u, v = compact_ids(src, dst)
    bar.update()
    n = int(ids.size)
    if n > MAX_VERTICES:
        raise TcdistError(f"{edges.name}: {n} vertices; tcdist handles at most {MAX_VERTICES}")
    keys, duplicates, reciprocal = _undirected_keys(xp, u, v, n)
    bar.update()
    del u, v
    if host:
        rowptr = passes.row_starts(keys, n)
        order = rank_order(passes.degrees(keys, rowptr))
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n, dtype=np.int64)
        oriented = passes.oriented_keys(keys, rowptr, rank)
        del keys, rowptr
    else:
        lo, hi = keys // n, keys % n
        del keys
        order = rank_order(xp.bincount(lo, minlength=n) + xp.bincount(hi, minlength=n))
        rank = xp.empty(n, dtype=xp.int64)
        rank[order] = xp.arange(n, dtype=xp.int64)
        a, b = rank[lo], rank[hi]
        del lo, hi
        oriented = xp.minimum(a, b) * n + xp.maximum(a, b)
        del a, b
    bar.update()
    rowptr, col = csr_from_sorted_keys(_sort(xp, oriented), n)
    bar.update()
    return Graph(
        rowptr=rowptr,
        col=col,
        original_id=ids[order],
        name=edges.name,
        self_loops=self_loops,
        duplicates=duplicates,
        reciprocal=reciprocal,
        warnings=list(edges.warnings),
        labels=edges.labels,
        degrees=degree_summary(rowptr, n),
    )
