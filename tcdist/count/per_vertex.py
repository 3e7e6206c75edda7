"""Per-vertex triangles on the GPU: every corner of each triangle whose lowest vertex is local
is credited (cuda/per_vertex.cu), by a warp per local edge, or a thread per local vertex where
out-degrees are all small. The CPU's is count/cpu.py's per_vertex."""

import cupy

from tcdist.cuda import launch
from tcdist.cuda.build import PER_VERTEX


def per_vertex(rowptr, col, n_local, thread_per_vertex: bool = False):
    """The triangles each row of the CSR is in (uint64 on the device, one per row)."""
    rowptr, col = launch.device_csr(rowptr, col)
    triangles = cupy.zeros(rowptr.size - 1, dtype=cupy.uint64)
    if n_local > 0 and col.size and thread_per_vertex:
        grid = min(-(-int(n_local) // 256), launch.MAX_GRID)
        launch.function(PER_VERTEX, "forward_per_vertex", col)((grid,), (256,),
                                                               (rowptr, col, cupy.int64(n_local), triangles))
    elif n_local > 0 and col.size:
        warps_per_block = 8
        grid = int(min(-(-int(rowptr[int(n_local)]) // warps_per_block), launch.MAX_GRID)) or 1
        launch.function(PER_VERTEX, "lstc_per_vertex", col)((grid,), (32 * warps_per_block,),
                                                            (rowptr, col, cupy.int64(n_local), triangles))
    return triangles
