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


def count_lstc_group(rowptr, col, n_local, *, tile=GROUP_TILE, group=DEFAULT_GROUP, warp_rows=DEFAULT_WARP_ROWS,
                     hashed=DEFAULT_HASHED):
    """tcdist's refinement: groups of ``group`` threads take different v of N+(u) at once.

    warp_rows: rows of 2..32 out-neighbours go one warp per vertex, longer rows one block each.
    hashed: look elements up in a shared-memory hash set of the tile instead of binary search.
    """
    _check_tile(tile)
    if group not in GROUPS:
        raise ValueError(f"group must be one of {GROUPS}, got {group}")
    rowptr, col = device_csr(rowptr, col)
    total = cupy.zeros(1, dtype=cupy.uint64)
    if n_local <= 0:
        return 0
    flag = "true" if hashed else "false"
    block = _kernel("lstc_group", col, tile, group, flag)
    if not warp_rows:
        grid = min(int(n_local), _MAX_GRID)
        block((grid,), (tile,), (rowptr, col, cupy.uint64(0), cupy.int64(n_local), total))
        return int(total.get()[0])
    out_degree = cupy.diff(rowptr[: int(n_local) + 1])
    light = cupy.flatnonzero((out_degree >= 2) & (out_degree <= 32))
    heavy = cupy.flatnonzero(out_degree > 32)
    if light.size:
        grid = min((light.size + 7) // 8, _MAX_GRID)
        _kernel("lstc_group_warp", col, group, flag)((grid,), (256,), (rowptr, col, light, cupy.int64(light.size), total))
    if heavy.size:
        grid = min(heavy.size, _MAX_GRID)
        block((grid,), (tile,), (rowptr, col, heavy, cupy.int64(heavy.size), total))
    return int(total.get()[0])


def per_vertex(rowptr, col, n_local):
    """The triangles each row of the CSR is in, counting the triangles whose lowest vertex is
    local (uint64 on the device, one per row): every corner is credited (cuda/per_vertex.cu)."""
    rowptr, col = device_csr(rowptr, col)
    triangles = cupy.zeros(rowptr.size - 1, dtype=cupy.uint64)
    if n_local > 0 and col.size:
        warps_per_block = 8
        grid = int(min(-(-int(rowptr[int(n_local)]) // warps_per_block), _MAX_GRID)) or 1
        _kernel("lstc_per_vertex", col)((grid,), (32 * warps_per_block,), (rowptr, col, cupy.int64(n_local), triangles))
    return triangles


def warm_up():
    """Compile every kernel for the current device (or load them from CuPy's cache)."""
    _module()


GPU_KERNELS = {"lstc": count_lstc, "lstc-group": count_lstc_group}
DEFAULT_KERNEL = "lstc-group"
