"""GPU: LSTC Algorithm 3 as published (cuda/lstc.cu): one block of `tile` threads per local
vertex, N+(u) in shared-memory tiles of `tile`, every N+(v) walked by the block and each element
binary-searched in the tile. Fastest at 256 threads per block on RMAT (results/gpu-h100.md)."""

from tcdist.count.registry import Kernel, Option
from tcdist.cuda.build import COL_TYPES, declare

TILES = (64, 128, 256, 512, 1024)


def instantiations() -> list[str]:
    return declare("lstc_block", [f"{c}, {t}" for c in COL_TYPES.values() for t in TILES],
                   "const i64*, const {col}*, i64, u64*")


def count(rowptr, col, n_local, *, tile):
    import cupy

    from tcdist.cuda import launch

    rowptr, col = launch.device_csr(rowptr, col)
    if n_local <= 0:
        return 0
    grid = min(int(n_local), launch.MAX_GRID)
    kernel = launch.function(KERNEL, "lstc_block", col, tile)
    return launch.counted(lambda total: kernel((grid,), (tile,), (rowptr, col, cupy.int64(n_local), total)))


KERNEL = Kernel("lstc", "gpu", "LSTC Algorithm 3, one block per local vertex", count,
                options=(Option("tile", TILES, 256, "threads per block and tile width"),),
                sources=("lstc.cu",), instantiations=instantiations)
