"""GPU: the forward algorithm, one thread per local vertex (cuda/forward.cu): each v of N+(u)
merged with the rest of u's row. No prepare step; for small out-degrees (grids, sparse ER)."""

from tcdist.count.registry import Kernel
from tcdist.cuda.build import COL_TYPES, declare


def instantiations() -> list[str]:
    return declare("forward", list(COL_TYPES.values()), "const i64*, const {col}*, i64, u64*")


def count(rowptr, col, n_local):
    import cupy

    from tcdist.cuda import launch

    rowptr, col = launch.device_csr(rowptr, col)
    if n_local <= 0 or not col.size:
        return 0
    grid = min(-(-int(n_local) // 256), launch.MAX_GRID)
    kernel = launch.function(KERNEL, "forward", col)
    return launch.counted(lambda total: kernel((grid,), (256,), (rowptr, col, cupy.int64(n_local), total)))


KERNEL = Kernel("forward", "gpu", "the forward algorithm, a thread per vertex merging rows", count,
                sources=("forward.cu",), instantiations=instantiations, part_order=True)
