"""GPU: tcdist's refinement of Algorithm 3 (cuda/lstc_group.cu): groups of `group` threads take
different v of N+(u) at once and stop at the first element above the tile (rows are sorted).
warp_rows: rows of 2..32 out-neighbours go one warp per vertex, longer rows one block each;
hashed: elements are looked up in a shared-memory hash set of the tile instead of a binary
search. Defaults from the sweeps on RMAT-21..23 (results/tuning-*.json)."""

from tcdist.count.registry import Kernel, Option
from tcdist.cuda.build import COL_TYPES, declare

TILES = (64, 128, 256, 512, 1024)
GROUPS = (4, 8, 16, 32)
_PARAMS = "const i64*, const {col}*, const i64*, i64, u64*"


def instantiations() -> list[str]:
    blocks, warps = [], []
    for c in COL_TYPES.values():
        for hashed in ("false", "true"):
            blocks += [f"{c}, {t}, {g}, {hashed}" for t in TILES for g in GROUPS]
            warps += [f"{c}, {g}, {hashed}" for g in GROUPS]
    return declare("lstc_group", blocks, _PARAMS) + declare("lstc_group_warp", warps, _PARAMS)


def count(rowptr, col, n_local, *, tile, group, warp_rows, hashed):
    import cupy

    from tcdist.cuda import launch

    rowptr, col = launch.device_csr(rowptr, col)
    if n_local <= 0:
        return 0
    flag = "true" if hashed else "false"
    block = launch.function(KERNEL, "lstc_group", col, tile, group, flag)
    if not warp_rows:
        grid = min(int(n_local), launch.MAX_GRID)
        return launch.counted(lambda total: block((grid,), (tile,), (rowptr, col, cupy.uint64(0), cupy.int64(n_local),
                                                                     total)))
    out_degree = cupy.diff(rowptr[: int(n_local) + 1])
    light = cupy.flatnonzero((out_degree >= 2) & (out_degree <= 32))
    heavy = cupy.flatnonzero(out_degree > 32)
    warp = launch.function(KERNEL, "lstc_group_warp", col, group, flag)

    def launches(total):
        if light.size:
            warp((min((light.size + 7) // 8, launch.MAX_GRID),), (256,),
                 (rowptr, col, light, cupy.int64(light.size), total))
        if heavy.size:
            block((min(heavy.size, launch.MAX_GRID),), (tile,), (rowptr, col, heavy, cupy.int64(heavy.size), total))

    return launch.counted(launches)


KERNEL = Kernel("lstc-group", "gpu", "groups of threads take several v of N+(u) at once", count,
                options=(Option("tile", TILES, 512, "threads per block and tile width"),
                         Option("group", GROUPS, 32, "threads per v"),
                         Option("warp_rows", (True, False), True, "rows of 2..32 one warp each"),
                         Option("hashed", (True, False), True, "shared-memory hash set instead of binary search")),
                sources=("lstc_group.cu",), instantiations=instantiations)
