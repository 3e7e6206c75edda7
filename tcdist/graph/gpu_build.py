"""The build of graph/build.py on the GPU: tcdist's own passes (cuda/passes.cu, one program) and
CuPy's radix sort, which is compiled into CuPy itself. Each step gives what the host's step of
the same name gives; a self loop is kept in place as a key that sorts last, where the host drops it.

Imported only for the GPU backend; importing it imports CuPy.
"""

from __future__ import annotations

import cupy
import numpy as np

from tcdist.cuda import launch
from tcdist.cuda.build import PASSES
from tcdist.graph.graph import col_dtype
from tcdist.xp import reserve_sort

THREADS = 256  # passes.cu's THREADS
TILE = 256 * 16  # passes.cu's TILE: a block's items in a tiled pass
NULL = np.uint64(0)  # a pointer argument not given
PRESENT, DISTINCT = np.int32(0), np.int32(1)  # passes.cu's kinds of compaction


def _launch(name: str, count: int, *args) -> None:
    """A grid-stride pass over count items."""
    launch.grid_stride(PASSES, name, count, *args, threads=THREADS)


def _tiles(count: int) -> int:
    return max(1, -(-count // TILE))


def _starts(per_tile) -> tuple[cupy.ndarray, int]:
    """(the exclusive sum of per_tile on the device, their total): one small copy each way."""
    sums = per_tile.get()
    starts = np.zeros(sums.size, np.int64)
    np.cumsum(sums[:-1], out=starts[1:])
    return cupy.asarray(starts), int(sums.sum())


def _compacted(mode, count: int, flags=NULL, keys=NULL, shift: int = 0, position=NULL):
    """(the kept items, how many distinct keys): see kept_per_tile and compact in passes.cu."""
    per_tile, distinct = cupy.empty(_tiles(count), cupy.int64), cupy.zeros(1, cupy.uint64)
    grid = (per_tile.size,), (THREADS,)
    launch.kernel(PASSES, "kept_per_tile")(*grid, (mode, flags, keys, np.int32(shift), np.int64(count), per_tile,
                                                   distinct))
    starts, total = _starts(per_tile)
    out = cupy.empty(total, cupy.uint64)
    launch.kernel(PASSES, "compact")(*grid, (mode, flags, keys, np.int32(shift), np.int64(count), starts, out,
                                             position))
    return out, int(distinct.get()[0])


def sort(keys) -> None:
    """keys.sort(), in place, its workspace reserved first (xp.reserve_sort)."""
    reserve_sort(keys)
    keys.sort()


def end_stats(src, dst) -> tuple[int, int]:
    """((src == dst).sum(), the largest id)."""
    stats = cupy.zeros(2, cupy.uint64)
    _launch("end_stats", src.size, src, dst, np.int64(src.size), stats)
    loops, top = stats.get()
    return int(loops), int(top)


def first_outside(src, dst, lo: int, hi: int) -> int | None:
    """The first edge with an end outside lo..hi, or None: one pass, one value copied back."""
    first = cupy.empty(1, cupy.uint64)
    first.data.memset_async(0xFF, first.nbytes)  # all ones: none found (a fill would compile a CuPy kernel)
    top = np.iinfo(np.int64).max  # (ids are int64: a bound above theirs takes them all)
    _launch("first_outside", src.size, src, dst, np.int64(src.size), np.int64(min(lo, top)), np.int64(min(hi, top)),
            first)
    found = int(first.get()[0])
    return None if found == np.iinfo(np.uint64).max else found


def shift_ids(src, dst, by: int) -> None:
    """src += by; dst += by, in place."""
    _launch("shift_ids", src.size, src, dst, np.int64(src.size), np.int64(by))


def compact_ids(src, dst, loops: int, top: int):
    """(ids, new_id): the distinct ids of the edges that are not self loops, in order, and where
    ids are dense, each id's place among them (else None: ids are searched)."""
    m = src.size
    if top < 8 * (m - loops) + 1024:
        present = cupy.zeros(top + 1, cupy.uint8)
        _launch("mark_ends", m, src, dst, np.int64(m), present)
        new_id = cupy.empty(top + 1, cupy.int64)
        ids, _ = _compacted(PRESENT, top + 1, flags=present, position=new_id)
        return ids.view(cupy.int64), new_id
    ends = cupy.empty(2 * m, cupy.int64)
    _launch("spread_ends", m, src, dst, np.int64(m), ends)
    sort(ends)
    ids, _ = _compacted(DISTINCT, 2 * (m - loops), keys=ends)
    return ids.view(cupy.int64), None


def undirected_keys(src, dst, loops: int, ids, new_id) -> tuple[cupy.ndarray, int, int]:
    """(sorted distinct keys lo * n + hi of the undirected edges, repeated edges, edges also given
    in the other direction), as the host's."""
    m, n = src.size, ids.size
    directed = cupy.empty(m, cupy.uint64)
    _launch("directed_keys", m, src, dst, np.int64(m), NULL if new_id is None else new_id, ids, np.int64(n),
            directed)
    sort(directed)
    return distinct_undirected(directed, m - loops)


def distinct_undirected(directed, count: int) -> tuple[cupy.ndarray, int, int]:
    """(the distinct undirected keys, repeated edges, edges also given in the other direction) of
    the first count sorted directed keys (an undirected key times two, plus its direction)."""
    keys, distinct = _compacted(DISTINCT, count, keys=directed, shift=1)
    return keys, count - distinct, distinct - keys.size


def add_degrees(keys, n: int, degree) -> None:
    """degree (uint64) += how many times each vertex ends the keys lo * n + hi (CuPy's bincount
    takes a workspace of some 700 bytes a bin)."""
    _launch("degrees", keys.size, keys, np.int64(keys.size), np.int64(n), degree)


def orient(keys, n: int):
    """(order, oriented): the vertices by (degree, id) rank, and the edges' keys by rank
    (min * n + max), sorted; keys are overwritten."""
    count = keys.size
    degree = cupy.zeros(n, cupy.uint64)
    add_degrees(keys, n, degree)
    by_rank = cupy.empty(n, cupy.uint64)
    _launch("rank_keys", n, degree, np.int64(n), by_rank)
    del degree
    sort(by_rank)
    order, rank = cupy.empty(n, cupy.int64), cupy.empty(n, cupy.int64)
    _launch("ranks", n, by_rank, np.int64(n), order, rank)
    del by_rank
    _launch("oriented_keys", count, keys, np.int64(count), np.int64(n), rank, keys)
    sort(keys)
    return order, keys


def csr(keys, n: int):
    """rowptr and col of sorted keys u * n + v."""
    count = keys.size
    rowptr = cupy.empty(n + 1, cupy.int64)
    _launch("row_starts", n + 1, keys, np.int64(count), np.int64(n), rowptr)
    col = cupy.empty(count, col_dtype(n))
    _launch("columns_int" if col.dtype == np.int32 else "columns_long", count, keys, np.int64(count), np.int64(n),
            col)
    return rowptr, col


def take(table, index):
    """table[index]."""
    out = cupy.empty(index.size, cupy.int64)
    _launch("gather", index.size, table, index, np.int64(index.size), out)
    return out


def csr_problems(rowptr, col, ascending: bool) -> int:
    """The problems (check.py's bits) of a CSR on the GPU, a warp per row: a column outside its
    range, a row not strictly increasing, with ascending a row's first column not above it, and
    rowptr falling anywhere."""
    if col.dtype not in (np.int32, np.int64):
        raise TypeError(f"columns of {col.dtype} on the GPU")
    n = rowptr.size - 1
    problems = cupy.zeros(1, cupy.uint32)
    _launch("csr_problems_int" if col.dtype == np.int32 else "csr_problems_long", 32 * n, rowptr, col, np.int64(n),
            np.int64(col.size), np.int32(ascending), problems)
    return int(problems.get()[0])


def work_before(rowptr, col):
    """The work of the rows before each row, n + 1 of them (graph/work.py's estimate: the edges
    walked and the probes that intersecting them takes), in three passes and one small copy."""
    n = rowptr.size - 1
    before = cupy.zeros(n + 1, cupy.int64)  # a memset: no row's work after the last
    if n:
        _launch("row_work_int" if col.dtype == np.int32 else "row_work_long", 32 * n, rowptr, col, np.int64(n), before)
    per_tile = cupy.empty(_tiles(n + 1), cupy.int64)
    grid = (per_tile.size,), (THREADS,)
    launch.kernel(PASSES, "tile_sums")(*grid, (before, np.int64(n + 1), per_tile))
    starts, _ = _starts(per_tile)
    launch.kernel(PASSES, "exclusive_sum")(*grid, (before, np.int64(n + 1), starts, before))  # in place
    return before


def lower_bounds(ordered, goals) -> np.ndarray:
    """searchsorted(ordered, goals) of an ascending array on the GPU, goals and answer on the host."""
    goals = cupy.asarray(np.asarray(goals, np.int64))
    at = cupy.empty(goals.size, cupy.int64)
    _launch("lower_bounds", goals.size, ordered, np.int64(ordered.size), goals, np.int64(goals.size), at)
    return at.get()


def block_totals(edges, lines, bad):
    """Of a parsed block's ranges: (the exclusive sum of edges, the edges, the lines, the first
    range with a bad line or None)."""
    ranges = edges.size
    per_tile, totals = cupy.empty(_tiles(ranges), cupy.int64), cupy.asarray(np.array([0, 2**64 - 1], np.uint64))
    grid = (per_tile.size,), (THREADS,)
    launch.kernel(PASSES, "range_totals")(*grid, (edges, lines, bad, np.int64(ranges), per_tile, totals))
    lines_total, first_bad = (int(x) for x in totals.get())
    if first_bad < ranges:
        return None, 0, lines_total, first_bad
    starts, total = _starts(per_tile)
    offsets = cupy.empty(ranges, cupy.int64)
    launch.kernel(PASSES, "exclusive_sum")(*grid, (edges, np.int64(ranges), starts, offsets))
    return offsets, total, lines_total, None
