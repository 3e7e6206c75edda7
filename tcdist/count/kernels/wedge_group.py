"""GPU: wedge groups (cuda/wedge_group.cu): G lanes per local vertex u walk its wedges
u -> v -> w flattened, reading N+(v) together, each w looked up in N+(u) in shared memory. No
prepare step; for even out-degrees too large for forward's thread per vertex (ER). Each lane
loads `depth` wedges before it looks any up, so that their reads overlap
(results/kernels-h200-wedge.md)."""

from tcdist.count.registry import Kernel, Option
from tcdist.cuda.build import COL_TYPES, declare

GROUPS = (8, 16, 32)
DEPTHS = (1, 2, 4, 8)


def instantiations() -> list[str]:
    return declare("wedge_group", [f"{col}, {g}, {d}" for col in COL_TYPES.values() for g in GROUPS for d in DEPTHS],
                   "const i64*, const {col}*, i64, u64*")


def count(rowptr, col, n_local, *, group, depth):
    import cupy

    from tcdist.cuda import launch

    rowptr, col = launch.device_csr(rowptr, col)
    if n_local <= 0 or not col.size:
        return 0
    grid = min(-(-int(n_local) // (256 // group)), launch.MAX_GRID)
    kernel = launch.function(KERNEL, "wedge_group", col, group, depth)
    return launch.counted(lambda total: kernel((grid,), (256,), (rowptr, col, cupy.int64(n_local), total)))


KERNEL = Kernel("wedge-group", "gpu", "a group of lanes per vertex walking its wedges, N+(u) in shared memory",
                count, options=(Option("group", GROUPS, 8, "lanes per vertex"),
                                Option("depth", DEPTHS, 4, "wedges a lane loads before it looks any up")),
                sources=("wedge_group.cu",), instantiations=instantiations)
