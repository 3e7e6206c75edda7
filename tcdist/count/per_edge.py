"""Per-edge triangles on the GPU: each edge of every triangle whose lowest vertex is local is
credited (cuda/per_edge.cu), by a warp per local edge. The CPU's is count/cpu.py's per_edge."""

import cupy

from tcdist.cuda import launch
from tcdist.cuda.build import PER_EDGE


def per_edge(rowptr, col, n_local):
    """The triangles each edge of the CSR is in (uint64 on the device, one per CSR position)."""
    rowptr, col = launch.device_csr(rowptr, col)
    triangles = cupy.zeros(col.size, dtype=cupy.uint64)
    local_edges = int(rowptr[int(n_local)]) if n_local > 0 else 0
    if local_edges:
        warps_per_block = 8
        grid = min(-(-local_edges // warps_per_block), launch.MAX_GRID)
        launch.function(PER_EDGE, "lstc_per_edge", col)((grid,), (32 * warps_per_block,),
                                                        (rowptr, col, cupy.int64(n_local), triangles))
    return triangles
