"""GPU kernels (CuPy): the CUDA sources under cuda/, compiled by NVRTC on first use.

Imported only when the GPU backend is chosen; importing it imports CuPy.
"""

import cupy

from tcdist.count.cuda_sources import COL_TYPES, GROUPS, TILES, kernel_names, source

# Defaults from the sweeps in results/ (RMAT-21..23 on H100 and H200): Algorithm 3 is fastest
# with 256 threads per block; lstc-group with 512, one v per warp, warp rows and hashing.
DEFAULT_TILE = 256
GROUP_TILE = 512
DEFAULT_GROUP = 32
DEFAULT_WARP_ROWS = True
DEFAULT_HASHED = True
_MAX_GRID = 1 << 30


@cupy.memoize(for_each_device=True)
def _module():
    return cupy.RawModule(code=source(), options=("-std=c++17",), name_expressions=kernel_names())


def _kernel(template, col, *params):
    args = ", ".join([COL_TYPES[col.dtype], *map(str, params)])
    return _module().get_function(f"{template}<{args}>")


def _check_tile(tile):
    if tile not in TILES:
        raise ValueError(f"tile must be one of {TILES}, got {tile}")


def device_csr(rowptr, col):
    """rowptr (int64) and col on the current device (no copy when already there)."""
    return cupy.asarray(rowptr, dtype=cupy.int64), cupy.asarray(col)


def count_lstc(rowptr, col, n_local, *, tile=DEFAULT_TILE):
    """LSTC Algorithm 3: one block of ``tile`` threads per local vertex, N+(u) in tiles of ``tile``."""
    _check_tile(tile)
    rowptr, col = device_csr(rowptr, col)
    total = cupy.zeros(1, dtype=cupy.uint64)
    if n_local > 0:
        grid = min(int(n_local), _MAX_GRID)
        _kernel("lstc_block", col, tile)((grid,), (tile,), (rowptr, col, cupy.int64(n_local), total))
    return int(total.get()[0])


def _mean_walk(rowptr, col, n_local):
    """For each local u, the mean length of the rows N+(v) it walks (probe work / out-degree)."""
    out_degree = cupy.diff(rowptr)
    ends = rowptr[1 : n_local + 1]
    running = cupy.concatenate([cupy.zeros(1, cupy.int64), cupy.cumsum(out_degree[col[: int(ends[-1])]])])
    work = running[ends] - running[rowptr[:n_local]]
    return work / cupy.maximum(out_degree[:n_local], 1)


def count_lstc_group(rowptr, col, n_local, *, tile=GROUP_TILE, group=DEFAULT_GROUP, warp_rows=DEFAULT_WARP_ROWS,
                     hashed=DEFAULT_HASHED, narrow_group=None, narrow_below=0):
    """tcdist's refinement: groups of ``group`` threads take different v of N+(u) at once.

    warp_rows: rows of 2..32 out-neighbours go one warp per vertex, longer rows one block each.
    hashed: look elements up in a shared-memory hash set of the tile instead of binary search.
    narrow_group, narrow_below: vertices whose rows N+(v) average fewer than narrow_below
    entries are walked by groups of narrow_group threads instead.
    """
    _check_tile(tile)
    for g in (group, narrow_group or group):
        if g not in GROUPS:
            raise ValueError(f"group must be one of {GROUPS}, got {g}")
    rowptr, col = device_csr(rowptr, col)
    total = cupy.zeros(1, dtype=cupy.uint64)
    if n_local <= 0:
        return 0
    flag = "true" if hashed else "false"
    if not warp_rows:
        grid = min(int(n_local), _MAX_GRID)
        block = _kernel("lstc_group", col, tile, group, flag)
        block((grid,), (tile,), (rowptr, col, cupy.uint64(0), cupy.int64(n_local), total))
        return int(total.get()[0])
    out_degree = cupy.diff(rowptr[: int(n_local) + 1])
    light, heavy = (out_degree >= 2) & (out_degree <= 32), out_degree > 32
    narrow = _mean_walk(rowptr, col, int(n_local)) < narrow_below if narrow_group and narrow_below else None
    for rows, g in ((~narrow, group), (narrow, narrow_group)) if narrow is not None else ((True, group),):
        for vertices, warp in ((cupy.flatnonzero(light & rows), True), (cupy.flatnonzero(heavy & rows), False)):
            if not vertices.size:
                continue
            if warp:
                grid = min((vertices.size + 7) // 8, _MAX_GRID)
                _kernel("lstc_group_warp", col, g, flag)((grid,), (256,), (rowptr, col, vertices,
                                                                         cupy.int64(vertices.size), total))
            else:
                grid = min(vertices.size, _MAX_GRID)
                _kernel("lstc_group", col, tile, g, flag)((grid,), (tile,), (rowptr, col, vertices,
                                                                             cupy.int64(vertices.size), total))
    return int(total.get()[0])


def warm_up():
    """Compile every kernel for the current device (or load them from CuPy's cache)."""
    _module()


GPU_KERNELS = {"lstc": count_lstc, "lstc-group": count_lstc_group}
DEFAULT_KERNEL = "lstc-group"
