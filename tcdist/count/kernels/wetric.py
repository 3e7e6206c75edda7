"""GPU: WETRIC-style wedge-parallel counting (cuda/wetric.cu): a static wedge -> thread map from
the 64-bit prefix sum of C(d+(u), 2) over the local vertices (the prepare step), each thread
closing `spread` consecutive wedges (WETRIC sections 3-4; its shared-memory cooperation and
bitmaps are not here yet)."""

from tcdist.count.registry import Kernel, Option
from tcdist.cuda.build import COL_TYPES, declare

SPREADS = (1, 2, 4, 8, 16, 32)


def instantiations() -> list[str]:
    return declare("wetric", list(COL_TYPES.values()), "const i64*, const {col}*, const i64*, i64, i64, u64*")


def prepare(rowptr, col, n_local, *, spread):
    """wedge_start[u]: the wedges of the local vertices before u (n_local + 1 entries, int64)."""
    import cupy

    from tcdist.cuda import launch

    rowptr, _ = launch.device_csr(rowptr, col)
    out = cupy.diff(rowptr[: int(n_local) + 1])
    wedge_start = cupy.zeros(int(n_local) + 1, dtype=cupy.int64)
    cupy.cumsum(out * (out - 1) // 2, out=wedge_start[1:])
    return wedge_start


def count(rowptr, col, n_local, *, prepared, spread):
    import cupy

    from tcdist.cuda import launch

    rowptr, col = launch.device_csr(rowptr, col)
    wedges = int(prepared[-1]) if n_local > 0 else 0
    if not wedges:
        return 0
    grid = min(-(-wedges // (spread * 256)), launch.MAX_GRID)
    kernel = launch.function(KERNEL, "wetric", col)
    return launch.counted(lambda total: kernel((grid,), (256,), (rowptr, col, prepared, cupy.int64(n_local),
                                                                 cupy.int64(spread), total)))


KERNEL = Kernel("wetric", "gpu", "WETRIC-style, wedge-parallel from a static wedge map", count,
                options=(Option("spread", SPREADS, 4, "consecutive wedges per thread"),),
                prepare=prepare, sources=("wetric.cu",), instantiations=instantiations, part_order=True)
