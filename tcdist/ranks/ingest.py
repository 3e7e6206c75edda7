"""Every rank builds its rows of the one graph from its own raw edges: the same oriented CSR that
graph/build.py builds in one process, its rows split into contiguous ranges balanced by work.

The steps are build.py's, each over the ranks: self loops dropped; ids compacted (the ranks'
distinct ids sorted across them, each id's place its vertex); distinct undirected keys (sorted
across the ranks by key, so an edge's copies and its reverse meet); degrees added into the
vertices' ranks; the vertices sorted across the ranks by (degree, id), each one's place its row;
each edge oriented by them; the work of each row (graph/work.py's model: its out-degree and its
out-neighbours' out-degrees), the row ranges that split it evenly; then one all-to-all sends each
edge to the rank owning its row. No rank holds more than its share of the edges or the ids; the
all-gathers carry spread.SAMPLES values and a few per rank. Where ids are dense (no more of them
than a rank's share of the raw edges, as a generator's) and the edges lie in host memory, every
rank holds an array over all the ids instead: their degrees, summed over the ranks, from which
each rank ranks the vertices itself, so the edges cross the ranks twice in all (on two ranks of
one host, RMAT-21's build took 3.6-3.9 s this way against 8.1 s by the sorts across the ranks).
The steps run where the edges lie: in host memory, on every core (build.py's compiled passes);
on a GPU in whole-array CuPy passes (build.py's whole-array steps, CuPy's radix sort), the arrays
moved GPU to GPU over NCCL where the caller made a communicator, else through the host over MPI.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from tcdist.budget import model
from tcdist.errors import TcdistError
from tcdist.graph import passes
from tcdist.graph.build import (
    checked_vertices,
    compact_ids,
    directed_keys,
    distinct_undirected,
    drop_loops,
    positions,
    rank_order,
)
from tcdist.graph.degrees import exact_sum, wedge_counts
from tcdist.graph.edges import EdgeList
from tcdist.graph.graph import MAX_VERTICES, Graph, col_dtype
from tcdist.graph.sort import sort
from tcdist.ranks import exchange, nccl, spread
from tcdist.ranks.exchange import allgatherv, before
from tcdist.xp import array_module, to_numpy


@dataclass
class Rows:
    """One rank's rows first_row..end_row of the oriented CSR one process builds, and its facts.

    ``rowptr`` (int64, rows + 1) starts at 0: row first_row + i's edges are
    ``col[rowptr[i]:rowptr[i + 1]]``, edges first_edge + rowptr[i] on of the whole graph.
    ``col`` holds global rows in ``col_dtype(n)``; ``original_id`` the rows' ids in the source.
    """

    first_row: int
    end_row: int
    first_edge: int
    rowptr: object
    col: object
    original_id: object
    bounds: np.ndarray  # every rank's first row, then n
    n: int
    m: int
    self_loops: int
    duplicates: int
    reciprocal: int
    degrees: dict  # degree_summary of every row, as Graph.degrees
    name: str = ""
    warnings: list = field(default_factory=list)
    seconds: dict = field(default_factory=dict)  # each step's time on this rank


class _Clock:
    """Each step's seconds, in order."""

    def __init__(self):
        self.seconds, self._last = {}, time.perf_counter()

    def step(self, name: str) -> None:
        now = time.perf_counter()
        self.seconds[name], self._last = now - self._last, now


def build_rows(comm, edges: EdgeList, gpus=None, gpu_room: int | None = None) -> Rows:
    """This rank's rows of the graph of every rank's edges (this rank's: edges), as graph/build.py's
    build_graph of all of them would lay them out; on the GPU where edges lie (exchanged over
    NCCL with gpus, nccl.communicator(comm), else through the host), unless gpu_room (bytes this
    rank may take there) is short of the build's on some rank: then every rank builds on the
    host, and the rows go back to the GPU."""
    if any(comm.allgather(edges.labels is not None)):
        raise TcdistError(f"{edges.name}: ids that are names are numbered by one process; build it on one rank, "
                          "or give integer ids")
    xp = array_module(edges.src)
    need = _gpu_bytes(comm, len(edges))
    on_gpu, fits = zip(*comm.allgather((xp is not np, gpu_room is None or gpu_room >= need)))
    if any(on_gpu) and not (all(on_gpu) and all(fits)):  # every rank on the host, the rows back where its edges were
        rows = build_rows(comm, EdgeList(to_numpy(edges.src), to_numpy(edges.dst), edges.name,
                                         warnings=list(edges.warnings)))
        rows.rowptr, rows.col, rows.original_id = (xp.asarray(a) for a in (rows.rowptr, rows.col, rows.original_id))
        if not all(fits):
            rows.warnings.append(f"{edges.name}: the ranks built the graph on the host: the GPU build needs more "
                                 "memory than a GPU has")
        return rows
    if xp is np:
        gpus = None
    clock = _Clock()
    src, dst, self_loops = drop_loops(edges.src.astype(np.int64, copy=False), edges.dst.astype(np.int64, copy=False))
    self_loops = before(comm, self_loops)[1]
    clock.step("loops")
    span = _dense_span(comm, src, dst)
    if span is not None:
        built = _dense_rows(comm, src, dst, span, edges.name, clock)
    else:
        built = _sparse_rows(comm, src, dst, edges.name, gpus, clock)
    del src, dst
    first_row, end_row, rowptr, col, original_id, bounds, n, m, duplicates, reciprocal = built
    first_edge = before(comm, col.size)[0]
    return Rows(first_row=first_row, end_row=end_row, first_edge=first_edge, rowptr=rowptr, col=col,
                original_id=original_id, bounds=bounds, n=n, m=m, self_loops=self_loops, duplicates=duplicates,
                reciprocal=reciprocal, degrees=degree_summary_across(comm, to_numpy(rowptr), n, m), name=edges.name,
                warnings=[w for ws in comm.allgather(list(edges.warnings)) for w in ws if w], seconds=clock.seconds)


def _dense_span(comm, src, dst) -> int | None:
    """The ids' span (the largest id + 1) where the edges lie in host memory and their ids are dense
    enough that every rank may hold an array over all of them (no more ids than a rank's share of
    the raw edges, as a generator's): they then need no sort across the ranks. None otherwise."""
    top = int(max(src.max(), dst.max())) + 1 if src.size else 0
    span, total = max(comm.allgather(top)), before(comm, src.size)[1]
    on_host = array_module(src) is np
    return span if on_host and 0 < span <= MAX_VERTICES and span * comm.size <= total else None


def _dense_rows(comm, src, dst, span: int, name: str, clock):
    """The rows of build_rows where ids lie in 0..span: every rank holds each id's degree, added
    over the ranks, and so orders the vertices itself (a vertex is an id with an edge, in id order,
    so the one process's ranks by (degree, id) are the ids' with the absent ones, of degree 0,
    first); two all-to-alls of the edges (by key, then to their rows' ranks) and a few sums over
    the ids or rows, on every core (build.py's compiled passes). Keys pack (row or id) * span +
    (row or id)."""
    directed = spread.sort_across(comm, directed_keys(src, dst, span), shift=1)
    keys, duplicates, reciprocal = distinct_undirected(directed)
    del directed
    duplicates, reciprocal, m = (before(comm, x)[1] for x in (duplicates, reciprocal, keys.size))
    clock.step("distinct")

    starts = passes.row_starts(keys, span)
    degree = exchange.summed(comm, passes.degrees(keys, starts))
    order = rank_order(degree)
    n = checked_vertices(name, int(np.count_nonzero(degree)))
    del degree
    absent = span - n  # ids of no edge: ranked first
    rank = np.empty(span, np.int64)
    rank[order] = np.arange(-absent, n, dtype=np.int64)
    clock.step("order")

    oriented = sort(passes.oriented_keys(keys, starts, rank))
    del keys, starts, rank
    starts = positions(oriented, np.arange(n + 1, dtype=np.int64) * span)
    out_degree = exchange.summed(comm, np.diff(starts))
    walked = np.zeros(oriented.size + 1, np.int64)
    np.cumsum(passes.take(out_degree, oriented % span) + 1, out=walked[1:])  # each edge and its target's out-degree
    work = exchange.summed(comm, walked[starts[1:]] - walked[starts[:-1]])
    del starts, walked, out_degree
    bounds = _even_bounds(np.cumsum(work), comm.size)
    clock.step("work")

    first_row, end_row, rowptr, col = _own_rows(comm, oriented, span, bounds, n, None)
    original_id = order[absent + first_row : absent + end_row].copy()
    clock.step("rows")
    return first_row, end_row, rowptr, col, original_id, bounds, n, m, duplicates, reciprocal


def _even_bounds(done, ranks: int) -> np.ndarray:
    """The bounds of ranks runs of consecutive rows of about equal work, done: the work of the rows
    up to each (graph/work.py's even_work, the runs not merged where empty)."""
    n = done.size
    goals = np.array([int(done[-1]) * k // ranks if n else 0 for k in range(ranks + 1)], np.int64)
    found = np.searchsorted(done, goals, side="left")
    bounds = np.where(found < n, found + 1, n)  # the first row whose work before it meets the goal
    bounds[0], bounds[-1] = 0, n
    return bounds


def _own_rows(comm, oriented, base: int, bounds, n: int, gpus):
    """(first row, end row, rowptr, col) of this rank's rows, every rank's sorted oriented keys
    row * base + column sent to the ranks owning their rows."""
    xp = array_module(oriented)
    mine = spread.merged(*spread.alltoallv(comm, oriented, spread.cut(oriented, bounds[1:-1] * base), gpus))
    first_row, end_row = int(bounds[comm.rank]), int(bounds[comm.rank + 1])
    rowptr = xp.searchsorted(mine, xp.arange(first_row, end_row + 1, dtype=np.int64) * base).astype(np.int64)
    return first_row, end_row, rowptr, (mine % base).astype(col_dtype(n))


def _sparse_rows(comm, src, dst, name: str, gpus, clock):
    """The rows of build_rows where ids are sparse: they are compacted by a sort across the ranks,
    and each table over the vertices or rows is spread over the ranks."""
    xp = array_module(src)
    ids, u, v = compact_ids(src, dst)
    vertex_of_id, held_ids, first_vertex = spread.places(comm, ids, gpus)
    n = checked_vertices(name, before(comm, held_ids.size)[1])
    vertices = _bounds(comm, first_vertex, n)
    u, v = vertex_of_id[u], vertex_of_id[v]
    del ids, vertex_of_id
    clock.step("ids")

    directed = spread.sort_across(comm, directed_keys(u, v, n), shift=1, gpus=gpus)
    del u, v
    keys, duplicates, reciprocal = distinct_undirected(directed)
    del directed
    duplicates, reciprocal, m = (before(comm, x)[1] for x in (duplicates, reciprocal, keys.size))
    clock.step("distinct")

    lo, hi = keys // n, keys % n
    del keys
    degree = spread.count(comm, xp.concatenate([lo, hi]), vertices, gpus)
    clock.step("degrees")

    by_rank = sort(degree * n + xp.arange(first_vertex, first_vertex + degree.size, dtype=np.int64))
    places, held, first_row_held = spread.places(comm, by_rank, gpus)
    row_of = xp.empty(degree.size, np.int64)
    row_of[by_rank % n - first_vertex] = places
    held_rows = _bounds(comm, first_row_held, n)
    del degree, by_rank, places
    clock.step("order")

    ranked = spread.read(comm, xp.concatenate([lo, hi]), vertices, row_of, gpus)
    a, b = ranked[: lo.size], ranked[lo.size :]
    del lo, hi, ranked, row_of
    oriented = sort(xp.minimum(a, b) * n + xp.maximum(a, b))
    del a, b
    clock.step("orient")

    bounds = _even_rows(comm, oriented, n, held_rows, first_row_held, gpus)
    clock.step("work")

    first_row, end_row, rowptr, col = _own_rows(comm, oriented, n, bounds, n, gpus)
    del oriented
    clock.step("rows")

    original_id = spread.move(comm, spread.read(comm, held % n, vertices, held_ids, gpus), held_rows, bounds, gpus)
    clock.step("original ids")
    return first_row, end_row, rowptr, col, original_id, bounds, n, m, duplicates, reciprocal


def _gpu_bytes(comm, edges: int) -> int:
    """The most GPU memory build_rows takes on a rank holding edges raw edges: its share or the
    ranks' even share (where the sample sort brings them), whichever is more, at the one-process
    GPU build's rate, doubled for an all-to-all's send and receive buffers held together."""
    most = max(edges, -(-sum(comm.allgather(edges)) // comm.size) * 9 // 8)
    return 2 * model.GPU_BUILD_BYTES_PER_EDGE * most


def _bounds(comm, first: int, end: int) -> np.ndarray:
    """Every rank's first index, then end: the bounds of an array spread over the ranks."""
    return np.array([*comm.allgather(int(first)), end], np.int64)


def _even_rows(comm, oriented, n: int, held_rows, first_held: int, gpus=None) -> np.ndarray:
    """The bounds of comm.size runs of consecutive rows of about equal work, as graph/work.py's
    even_work finds them in one process (the runs not merged where empty): a row's work is its
    out-degree plus its out-neighbours' out-degrees. oriented: sorted keys row * n + column."""
    xp = array_module(oriented)
    rows, columns = oriented // n, oriented % n
    out_degree = spread.count(comm, rows, held_rows, gpus)
    probes = spread.read(comm, columns, held_rows, out_degree, gpus)
    done = xp.cumsum(spread.add(comm, rows, probes + 1, held_rows, gpus))  # the work of rows up to each, on this rank
    ahead, total = before(comm, int(done[-1]) if done.size else 0)
    goals = np.array([total * k // comm.size for k in range(comm.size + 1)], np.int64)
    found = to_numpy(xp.searchsorted(done + ahead, xp.asarray(goals), side="left"))
    first = np.where(found < done.size, first_held + 1 + found, n)  # the first row whose work before it meets the goal
    bounds = np.min(comm.allgather(first), axis=0)
    bounds[0], bounds[-1] = 0, n
    return bounds


def degree_summary_across(comm, rowptr, n: int, m: int) -> dict:
    """graph/degrees.py's degree_summary of every rank's rows together."""
    out = np.diff(rowptr)
    wedges, longest = zip(*comm.allgather((exact_sum(wedge_counts(out)), int(out.max(initial=0)))))
    return {"wedges": sum(wedges), "max_out": max(longest), "edges": m, "rows": n}


def gather_graph(comm, rows: Rows, gpus=None) -> Graph:
    """The whole graph on every rank, from every rank's rows (on the GPU where the rows lie: moved
    GPU to GPU over NCCL with gpus, nccl.communicator(comm), else through the host over MPI)."""
    xp = array_module(rows.rowptr)
    gather = partial(allgatherv, comm) if gpus is None else partial(nccl.allgatherv, comm, gpus)
    rowptr = xp.concatenate([xp.zeros(1, xp.int64), gather(rows.rowptr[1:] + rows.first_edge)])
    return Graph(rowptr=rowptr, col=gather(rows.col), original_id=gather(rows.original_id),
                 name=rows.name, self_loops=rows.self_loops, duplicates=rows.duplicates, reciprocal=rows.reciprocal,
                 warnings=list(rows.warnings), degrees=dict(rows.degrees))
