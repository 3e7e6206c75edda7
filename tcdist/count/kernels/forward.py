"""GPU: the forward algorithm, one thread per local vertex (cuda/forward.cu): each v of N+(u)
merged with the rest of u's row. No prepare step; for small out-degrees (grids, sparse ER)."""

from tcdist.count.cuda_sources import COL_TYPES, declare
from tcdist.count.registry import Kernel


def instantiations() -> list[str]:
    return declare("forward", list(COL_TYPES.values()), "const i64*, const {col}*, i64, u64*")


def count(rowptr, col, n_local):
    import cupy

    from tcdist.count import gpu

    rowptr, col = gpu.device_csr(rowptr, col)
    total = cupy.zeros(1, dtype=cupy.uint64)
    if n_local > 0 and col.size:
        grid = min(-(-int(n_local) // 256), gpu.MAX_GRID)
        gpu.function(KERNEL, "forward", col)((grid,), (256,), (rowptr, col, cupy.int64(n_local), total))
    return int(total.get()[0])


KERNEL = Kernel("forward", "gpu", "the forward algorithm, a thread per vertex merging rows", count,
                sources=("forward.cu",), instantiations=instantiations, part_order=True)
