"""GPU kernels (CuPy): the CUDA sources under cuda/, compiled by NVRTC on first use.

Imported only when the GPU backend is chosen; importing it imports CuPy.
"""

import cupy

from tcdist.count.cuda_sources import COL_TYPES, TILES, kernel_names, source

DEFAULT_TILE = 256
WARP_MAX_DEGREE = 32  # lstc-hybrid: rows up to this long go one per warp
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


def count_lstc_hybrid(rowptr, col, n_local, *, tile=DEFAULT_TILE):
    """tcdist's LSTC refinement: rows of 2..32 out-neighbours one per warp, longer ones one per block,
    each N+(v) trimmed to the tile's range and walked as one flat sequence."""
    _check_tile(tile)
    rowptr, col = device_csr(rowptr, col)
    total = cupy.zeros(1, dtype=cupy.uint64)
    out_degree = cupy.diff(rowptr[: int(n_local) + 1])
    light = cupy.flatnonzero((out_degree >= 2) & (out_degree <= WARP_MAX_DEGREE))
    heavy = cupy.flatnonzero(out_degree > WARP_MAX_DEGREE)[::-1].copy()  # heaviest rows start first
    if light.size:
        grid = min((light.size + 7) // 8, _MAX_GRID)
        _kernel("lstc_warp", col)((grid,), (256,), (rowptr, col, light, cupy.int64(light.size), total))
    if heavy.size:
        grid = min(heavy.size, _MAX_GRID)
        _kernel("lstc_flat", col, tile)((grid,), (tile,), (rowptr, col, heavy, cupy.int64(heavy.size), total))
    return int(total.get()[0])


def warm_up():
    """Compile every kernel for the current device (or load them from CuPy's cache)."""
    _module()


GPU_KERNELS = {"lstc": count_lstc, "lstc-hybrid": count_lstc_hybrid}
DEFAULT_KERNEL = "lstc-hybrid"
