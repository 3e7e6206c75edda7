"""GPU: LSTC Algorithm 3 as published (cuda/lstc.cu): one block of `tile` threads per local
vertex, N+(u) in shared-memory tiles of `tile`, every N+(v) walked by the block and each element
binary-searched in the tile. Fastest at 256 threads per block on RMAT (results/gpu-h100.md)."""

from tcdist.count.cuda_sources import COL_TYPES, declare
from tcdist.count.registry import Kernel, Option

TILES = (64, 128, 256, 512, 1024)


def instantiations() -> list[str]:
    return declare("lstc_block", [f"{c}, {t}" for c in COL_TYPES.values() for t in TILES],
                   "const i64*, const {col}*, i64, u64*")


def count(rowptr, col, n_local, *, tile):
    import cupy

    from tcdist.count import gpu

    rowptr, col = gpu.device_csr(rowptr, col)
    total = cupy.zeros(1, dtype=cupy.uint64)
    if n_local > 0:
        grid = min(int(n_local), gpu.MAX_GRID)
        gpu.function(KERNEL, "lstc_block", col, tile)((grid,), (tile,), (rowptr, col, cupy.int64(n_local), total))
    return int(total.get()[0])


KERNEL = Kernel("lstc", "gpu", "LSTC Algorithm 3, one block per local vertex", count,
                options=(Option("tile", TILES, 256, "threads per block and tile width"),),
                sources=("lstc.cu",), instantiations=instantiations)
