"""GPU: a bitmap of N+(u) per block (cuda/bitmap.cu, the L^T L / bitmap approach): each block
takes local vertices in turn, and every w of every N+(v) is tested against its bitmap. The
prepare step allocates the blocks' bitmaps: one bit per vertex of the part each, or with
`window`, 2^window bits that the kernel moves along a long row (a bound on their memory, for
parts and slices counted under a budget; cuda/bitmap.cu says what a window costs). Small blocks
idle less on the short rows of skewed graphs, at the price of more bitmaps. The default, a grid
of 32 blocks of 128 threads per multiprocessor (16 resident at a time, the others taking SMs as
they free), was the fastest on RMAT-20..23 on nvidia-h200 (results/kernels-h200-sweep.md: 5 %
ahead of 16 blocks on RMAT-20, even on RMAT-22/23)."""

from tcdist.count.cuda_sources import COL_TYPES, declare
from tcdist.count.registry import Kernel, Option


def instantiations() -> list[str]:
    return declare("bitmap_count", [f"{col}, {windowed}" for col in COL_TYPES.values() for windowed in ("false", "true")],
                   "const i64*, const {col}*, i64, unsigned*, i64, u64*")


def prepare(rowptr, col, n_local, *, blocks_per_sm, threads, window):
    """A zeroed bitmap per block: min(n_local, SMs x blocks_per_sm) rows of _words each."""
    import cupy

    blocks = max(1, min(int(n_local), _multiprocessors() * blocks_per_sm))
    return cupy.zeros((blocks, _words(int(rowptr.size) - 1, window)), dtype=cupy.uint32)


def _words(v_res, window):
    """A bitmap's 32-bit words: a bit per vertex of the part, or 2^window bits if fewer."""
    import numpy as np

    whole = (v_res + 31) // 32
    return whole if window == 0 else np.minimum(whole, (1 << window) // 32)


def _multiprocessors() -> int:
    import cupy

    return cupy.cuda.Device().attributes["MultiProcessorCount"]


def extra_bytes(v_res, e_res, n_local, col_bytes, *, blocks_per_sm, threads, window):
    """The bitmaps: a row of _words per block (no more blocks than local rows)."""
    import numpy as np

    blocks = np.maximum(1, np.minimum(n_local, _multiprocessors() * blocks_per_sm))
    return blocks * 4 * _words(v_res, window)


def count(rowptr, col, n_local, *, prepared, blocks_per_sm, threads, window):
    import cupy

    from tcdist.count import gpu

    rowptr, col = gpu.device_csr(rowptr, col)
    total = cupy.zeros(1, dtype=cupy.uint64)
    if n_local > 0:
        blocks, words = prepared.shape
        windowed = "true" if words < _words(int(rowptr.size) - 1, 0) else "false"  # less than a bit per row
        gpu.function(KERNEL, "bitmap_count", col, windowed)((blocks,), (threads,), (rowptr, col, cupy.int64(n_local),
                                                                                prepared, cupy.int64(words), total))
    return int(total.get()[0])


KERNEL = Kernel("bitmap", "gpu", "a bitmap of N+(u) per block, N+(v) tested against it", count,
                options=(Option("blocks_per_sm", (1, 2, 4, 8, 16, 32), 32, "blocks (and bitmaps) per multiprocessor"),
                         Option("threads", (32, 64, 128, 256), 128, "threads per block"),
                         Option("window", (0, 8, 12, 16, 18, 20, 22, 24), 0,
                                "log2 of a bitmap's bits (0: a bit per vertex of the part)")),
                prepare=prepare, extra_bytes=extra_bytes, sources=("bitmap.cu",), instantiations=instantiations)
