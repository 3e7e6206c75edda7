"""GPU: TRICORE-style edge-parallel intersection (cuda/tricore.cu): one warp per local oriented
edge, the shorter list's elements searched in the longer, the top of each search cached in
shared memory (TRICORE section IV)."""

from tcdist.count.cuda_sources import COL_TYPES, declare
from tcdist.count.registry import Kernel


def instantiations() -> list[str]:
    return declare("tricore", list(COL_TYPES.values()), "const i64*, const {col}*, i64, u64*")


def count(rowptr, col, n_local):
    import cupy

    from tcdist.count import gpu

    rowptr, col = gpu.device_csr(rowptr, col)
    total = cupy.zeros(1, dtype=cupy.uint64)
    edges = int(rowptr[int(n_local)]) if n_local > 0 else 0
    if edges:
        grid = min(-(-edges // 8), gpu.MAX_GRID)  # 8 warps per block, one edge each
        gpu.function(KERNEL, "tricore", col)((grid,), (256,), (rowptr, col, cupy.int64(n_local), total))
    return int(total.get()[0])


KERNEL = Kernel("tricore", "gpu", "TRICORE-style, one warp per edge, cached binary search", count,
                sources=("tricore.cu",), instantiations=instantiations)
