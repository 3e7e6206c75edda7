"""GPU: each triangle from its middle vertex v (cuda/middle_bitmap.cu). The prepare step lists the
local rows' edges by their head on the device (two passes over the edges and a prefix sum; 8
bytes an edge, 16 from 2^32 edges on), as the CPU kernel `middle` lists them; then a block sets
the bits of N+(v) in its bitmap and tests the rest of each in-neighbour's row against it. Each
wedge of the local rows is tested once, where `bitmap` tests every w of N+(v) for every edge
u -> v: 3.6 times the tests on RMAT-20. A v's in-edges are cut into tasks of `chunk`, spread over
the blocks; with `shared`, the bits of the highest ids, where nearly every tested w lies, are in
each block's shared memory."""

import numpy as np

from tcdist.count.registry import Kernel, Option
from tcdist.cuda.build import COL_TYPES
from tcdist.xp import multiprocessors

SPAN_TYPES = {np.dtype(np.uint32): "unsigned", np.dtype(np.int64): "long long"}  # a listed edge's span in col


def instantiations() -> list[str]:
    lists = [(c, "unsigned", "false") for c in COL_TYPES.values()] + \
        [(c, s, "true") for c in COL_TYPES.values() for s in SPAN_TYPES.values()]  # counted, then listed
    return [*(f"template __global__ void middle_in_edges<{c}, {s}, {listing}>(const i64*, const {c}*, i64, "
              f"unsigned long long*, {s}*, {s}*);" for c, s, listing in lists),
            *(f"template __global__ void middle_bitmap_count<{c}, {s}, {shared}>(const i64*, const {c}*, const i64*, "
              f"const {s}*, const {s}*, const i64*, const i64*, i64, i64, unsigned*, i64, i64, i64, u64*);"
              for c in COL_TYPES.values() for s in SPAN_TYPES.values() for shared in ("false", "true"))]


def prepare(rowptr, col, n_local, *, threads, blocks_per_sm, chunk, shared):
    """(in_ptr, first, stop, task_ptr, task_v, bitmaps, lo2, top_words): the listed edges by head
    (in_ptr: n + 1 offsets; each edge's span col[first:stop]), the first task of every v (its
    in-edges cut into tasks of chunk) and each task's v, a zeroed bitmap per block (every id, or
    with shared the ids below lo2; the top_words words from lo2 on are in shared memory)."""
    import cupy

    from tcdist.cuda import launch

    rowptr, col = launch.device_csr(rowptr, col)
    n, n_local = int(rowptr.size) - 1, int(n_local)
    in_ptr = cupy.zeros(n + 1, cupy.uint64)
    grid = (max(1, min(-(-n_local // 8), launch.MAX_GRID)),)  # a warp per local row
    if n_local > 0:
        unlisted = cupy.empty(0, cupy.uint32)  # (counted only: no spans written)
        launch.function(KERNEL, "middle_in_edges", col, "unsigned", "false")(
            grid, (256,), (rowptr, col, cupy.int64(n_local), in_ptr, unlisted, unlisted))
    cupy.cumsum(in_ptr, out=in_ptr)
    listed = int(in_ptr[-1])
    span = np.dtype(np.uint32 if col.size < 1 << 32 else np.int64)
    first, stop = cupy.empty(listed, span), cupy.empty(listed, span)
    if listed:
        launch.function(KERNEL, "middle_in_edges", col, SPAN_TYPES[span], "true")(
            grid, (256,), (rowptr, col, cupy.int64(n_local), in_ptr[:-1].copy(), first, stop))
    in_ptr = in_ptr.view(cupy.int64)
    task_ptr = cupy.zeros(n + 1, cupy.int64)
    cupy.cumsum((cupy.diff(in_ptr) + chunk - 1) // chunk, out=task_ptr[1:])
    tasks = int(task_ptr[-1])
    task_v = cupy.searchsorted(task_ptr, cupy.arange(tasks, dtype=cupy.int64), side="right") - 1
    lo2 = -(-max(0, n - (1 << shared)) // 32) * 32 if shared else n
    blocks = max(1, min(tasks, multiprocessors() * blocks_per_sm))
    bitmaps = cupy.zeros((blocks, max(1, -(-lo2 // 32))), dtype=cupy.uint32)
    return in_ptr, first, stop, task_ptr, task_v, bitmaps, lo2, -(-(n - lo2) // 32)


def extra_bytes(v_res, e_res, n_local, col_bytes, *, threads, blocks_per_sm, chunk, shared):
    """The listing (in_ptr, its copy while it is made, task_ptr, two spans per local edge, a v per
    task) and the bitmaps (a bit per id below the top 2^shared, or every id, per block)."""
    span = np.where(np.asarray(e_res) < 1 << 32, 4, 8)
    below = np.maximum(0, np.asarray(v_res) - (1 << shared)) + 32 if shared else v_res
    blocks = np.maximum(1, np.minimum(e_res, multiprocessors() * blocks_per_sm))
    tasks = np.asarray(e_res) // chunk + v_res + 1
    return 24 * (np.asarray(v_res) + 1) + 2 * span * e_res + 8 * tasks + blocks * 4 * np.maximum(1, (below + 31) // 32)


def count(rowptr, col, n_local, *, prepared, threads, blocks_per_sm, chunk, shared):
    import cupy

    from tcdist.cuda import launch

    rowptr, col = launch.device_csr(rowptr, col)
    in_ptr, first, stop, task_ptr, task_v, bitmaps, lo2, top_words = prepared
    if n_local <= 0 or task_v.size == 0:
        return 0
    blocks, words = bitmaps.shape
    kernel = launch.function(KERNEL, "middle_bitmap_count", col, SPAN_TYPES[first.dtype], "true" if shared else "false")
    shared_bytes = 4 * top_words if shared else 0
    launch.allow_shared(kernel, shared_bytes)
    args = (rowptr, col, in_ptr, first, stop, task_ptr, task_v, *map(cupy.int64, (task_v.size, chunk)), bitmaps,
            *map(cupy.int64, (words, lo2, top_words)))
    return launch.counted(lambda total: kernel((blocks,), (threads,), (*args, total), shared_mem=shared_bytes))


KERNEL = Kernel("middle-bitmap", "gpu", "each triangle from its middle vertex: in-edges listed, a bitmap of N+(v) "
                "per block", count,
                options=(Option("threads", (128, 256), 256, "threads per block"),
                         Option("blocks_per_sm", (2, 4, 8, 16), 8, "blocks (and bitmaps) per multiprocessor"),
                         Option("chunk", (32, 128, 256, 1024, 4096), 256,
                                "a v's in-edges per task (a hub's are spread over blocks)"),
                         Option("shared", (0, 13, 15, 17, 19, 20), 0,
                                "log2 of the highest ids whose bits lie in each block's shared memory (0: none)")),
                prepare=prepare, extra_bytes=extra_bytes, sources=("middle_bitmap.cu",),
                instantiations=instantiations, part_order=True)
