"""GPU: a bitmap of N+(u) per block (cuda/bitmap.cu, the L^T L / bitmap approach): each block
takes local vertices in turn, and every w of every N+(v) is tested against its bitmap. The
prepare step allocates the blocks' bitmaps, one bit per vertex of the part each, or with `bits`,
2^bits of them for the highest ids (the hubs, where nearly every tested w lies; an id below them
is searched in N+(u)): a bound on their memory for parts and slices counted under a budget. Small
blocks idle less on the short rows of skewed graphs, at the price of more bitmaps. The default, a
grid of 32 blocks of 128 threads per multiprocessor (16 resident at a time, the others taking SMs
as they free), was the fastest measured on RMAT (results/kernels-h200-sweep.md)."""

import numpy as np

from tcdist.count.registry import Kernel, Option
from tcdist.cuda.build import COL_TYPES, declare
from tcdist.xp import multiprocessors


def instantiations() -> list[str]:
    return declare("bitmap_count", [f"{col}, {hubs}" for col in COL_TYPES.values()
                                    for hubs in ("false, false", "true, false", "true, true")],
                   "const i64*, const {col}*, i64, unsigned*, i64, i64, i64, i64, i64, i64, i64, u64*")


def prepare(rowptr, col, n_local, *, blocks_per_sm, threads, bits, shared):
    """A zeroed bitmap per block (min(n_local, SMs x blocks_per_sm) rows of _words each, or with
    shared, of the ids below the top 2^shared), and the kernel's ranges (_ranges or
    _shared_ranges)."""
    import cupy

    n = int(rowptr.size) - 1
    blocks = max(1, min(int(n_local), multiprocessors() * blocks_per_sm))
    if shared:
        lo2 = _multiple_of_32(max(0, n - (1 << shared)))
        words = int(_words(lo2, bits))
        return cupy.zeros((blocks, max(1, words)), dtype=cupy.uint32), _shared_ranges(rowptr, col, lo2, 32 * words)
    bitmaps = cupy.zeros((blocks, _words(n, bits)), dtype=cupy.uint32)
    return bitmaps, _ranges(rowptr, col, int(n_local), int(bitmaps.shape[1]) * 32)


def _shared_ranges(rowptr, col, lo2: int, width: int) -> tuple[str, list[int]]:
    """("shared", [lo1, hi1, lo2, top_words, v_lo, v_hi]): the ids [lo2, n) in shared memory, the
    width below them in the global bitmaps."""
    n = int(rowptr.size) - 1
    lo1 = max(0, lo2 - width) // 32 * 32
    rows = _rows_with_columns(rowptr, int(col.min())) if col.size else [0, n]
    return "shared", [lo1, lo2, lo2, _words(n - lo2, 0), *rows]


def _ranges(rowptr, col, n_local: int, width: int) -> tuple[str, list[int]]:
    """("plain" or "hubs", [lo1, hi1, lo2, top_words, v_lo, v_hi]) for bitmaps of width bits:
    hubs where they are fewer than the rows; the ids [lo2, n) get the first top_words words, and
    [lo1, hi1) the top of the local rows, half the bits, where the columns hold local ids below the
    proxies (a part; not a slice, whose columns are its targets, nor the whole graph); lo1 and lo2
    are multiples of 32. v_lo..v_hi: the rows from the least column that may hold any."""
    n = int(rowptr.size) - 1
    if width >= n or col.size == 0:
        return "plain", [0, 0, 0, 0, 0, n]
    least = int(col.min())
    lo1 = hi1 = 0
    if least < n_local < n:
        lo1, hi1 = _multiple_of_32(max(0, n_local - width // 2)), n_local
    lo2 = _multiple_of_32(max(0, n - (width - 32 * _words(hi1 - lo1, 0))))
    return "hubs", [lo1, hi1, lo2, _words(n - lo2, 0), *_rows_with_columns(rowptr, least)]


def _rows_with_columns(rowptr, least: int) -> list[int]:
    """[v_lo, v_hi]: the rows from the least column's on, to the first of the empty rows at the end."""
    import cupy

    past = cupy.searchsorted(rowptr, rowptr[least : least + 1], side="right")  # the row after the first nonempty one
    empty = cupy.searchsorted(rowptr, rowptr[-1:], side="left")  # the first of the empty rows at the end
    return [int(past.get()[0]) - 1, int(empty.get()[0])]


def _multiple_of_32(x: int) -> int:
    """x, or the next multiple of 32 above it."""
    return -(-x // 32) * 32


def _words(v_res, bits):
    """A bitmap's 32-bit words: a bit per vertex of the part, or 2^bits bits if fewer."""
    whole = (v_res + 31) // 32
    return whole if bits == 0 else np.minimum(whole, (1 << bits) // 32)


def extra_bytes(v_res, e_res, n_local, col_bytes, *, blocks_per_sm, threads, bits, shared):
    """The bitmaps: a row of _words per block (no more blocks than local rows; with shared, of the
    ids below the top 2^shared)."""
    blocks = np.maximum(1, np.minimum(n_local, multiprocessors() * blocks_per_sm))
    below = np.maximum(0, np.asarray(v_res) - (1 << shared)) + 32 if shared else v_res
    return blocks * 4 * np.maximum(1, _words(below, bits))


def count(rowptr, col, n_local, *, prepared, blocks_per_sm, threads, bits, shared):
    import cupy

    from tcdist.cuda import launch

    rowptr, col = launch.device_csr(rowptr, col)
    bitmaps, (mode, ranges) = prepared
    if n_local <= 0:
        return 0
    blocks, words = bitmaps.shape
    kernel = launch.function(KERNEL, "bitmap_count", col, *_FLAGS[mode])
    shared_bytes = 4 * ranges[3] if mode == "shared" else 0
    launch.allow_shared(kernel, shared_bytes)
    return launch.counted(lambda total: kernel((blocks,), (threads,), (rowptr, col, cupy.int64(n_local), bitmaps,
                                                                       cupy.int64(words), *map(cupy.int64, ranges),
                                                                       total), shared_mem=shared_bytes))


_FLAGS = {"plain": ("false", "false"), "hubs": ("true", "false"), "shared": ("true", "true")}  # HUBS, SHARED


KERNEL = Kernel("bitmap", "gpu", "a bitmap of N+(u) per block, N+(v) tested against it", count,
                options=(Option("blocks_per_sm", (1, 2, 4, 8, 16, 32), 32, "blocks (and bitmaps) per multiprocessor"),
                         Option("threads", (32, 64, 128, 256), 128, "threads per block"),
                         Option("bits", (0, 8, 12, 16, 18, 20, 22, 24), 0,
                                "log2 of a bitmap's bits, for the highest ids; the others are searched in N+(u) "
                                "(0: a bit per vertex of the part)"),
                         Option("shared", (0, 10, 13, 15, 17, 19, 20), 0,
                                "log2 of the highest ids whose bits lie in each block's shared memory (the bitmap "
                                "in global memory, of `bits`, then holds the ids below them; 0: none)")),
                prepare=prepare, extra_bytes=extra_bytes, sources=("bitmap.cu",), instantiations=instantiations)
