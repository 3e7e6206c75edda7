"""GPU: TRICORE-style edge-parallel intersection (cuda/tricore.cu): one warp per local oriented
edge, the shorter list's elements searched in the longer, the top of each search cached in
shared memory (TRICORE section IV)."""

from tcdist.count.registry import Kernel
from tcdist.cuda.build import COL_TYPES, declare


def instantiations() -> list[str]:
    return declare("tricore", list(COL_TYPES.values()), "const i64*, const {col}*, i64, u64*")


def count(rowptr, col, n_local):
    import cupy

    from tcdist.cuda import launch

    rowptr, col = launch.device_csr(rowptr, col)
    edges = int(rowptr[int(n_local)]) if n_local > 0 else 0
    if not edges:
        return 0
    grid = min(-(-edges // 8), launch.MAX_GRID)  # 8 warps per block, one edge each
    kernel = launch.function(KERNEL, "tricore", col)
    return launch.counted(lambda total: kernel((grid,), (256,), (rowptr, col, cupy.int64(n_local), total)))


KERNEL = Kernel("tricore", "gpu", "TRICORE-style, one warp per edge, cached binary search", count,
                sources=("tricore.cu",), instantiations=instantiations)
