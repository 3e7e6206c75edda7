"""GPU: hash-table intersection, Skiff-style (cuda/hash.cu): the prepare step builds a hash table
of N+(u) for every local vertex in global memory (at most half full, filled lock-free); the count
looks every w of every N+(v) up in u's table, one warp per local edge."""

from tcdist.count.registry import Kernel
from tcdist.cuda.build import COL_TYPES, declare

_PARAMS = "const i64*, const {col}*, i64, const i64*, "


def instantiations() -> list[str]:
    types = list(COL_TYPES.values())
    return (declare("hash_build", types, _PARAMS + "{col}*")
            + declare("hash_count", types, _PARAMS + "const {col}*, u64*"))


def prepare(rowptr, col, n_local):
    """(table_start, tables): each local vertex's table is the smallest power of two of at least
    twice its out-degree (none for out-degree 0), -1 marking empty slots."""
    import cupy

    from tcdist.cuda import launch

    rowptr, col = launch.device_csr(rowptr, col)
    out = cupy.diff(rowptr[: int(n_local) + 1])
    size = cupy.where(out > 0, cupy.left_shift(1, cupy.ceil(cupy.log2(cupy.maximum(2 * out, 1))).astype(cupy.int64)), 0)
    table_start = cupy.zeros(int(n_local) + 1, dtype=cupy.int64)
    cupy.cumsum(size, out=table_start[1:])
    tables = cupy.full(int(table_start[-1]), -1, dtype=col.dtype)
    edges = int(rowptr[int(n_local)]) if n_local > 0 else 0
    if edges:
        grid = min(-(-edges // 256), launch.MAX_GRID)
        build = launch.function(KERNEL, "hash_build", col)
        build((grid,), (256,), (rowptr, col, cupy.int64(n_local), table_start, tables))
    return table_start, tables


def extra_bytes(v_res, e_res, n_local, col_bytes):
    """The tables (at most four slots per local edge; e_res bounds the local edges), their starts
    and the row lengths and sizes they are made from."""
    return 4 * col_bytes * e_res + 40 * (n_local + 1)


def count(rowptr, col, n_local, *, prepared):
    import cupy

    from tcdist.cuda import launch

    rowptr, col = launch.device_csr(rowptr, col)
    table_start, tables = prepared
    edges = int(rowptr[int(n_local)]) if n_local > 0 else 0
    if not edges:
        return 0
    grid = min(-(-edges // 8), launch.MAX_GRID)
    kernel = launch.function(KERNEL, "hash_count", col)
    return launch.counted(lambda total: kernel((grid,), (256,), (rowptr, col, cupy.int64(n_local), table_start,
                                                                 tables, total)))


KERNEL = Kernel("hash", "gpu", "Skiff-style, a hash table of N+(u) per local vertex", count, prepare=prepare,
                extra_bytes=extra_bytes, sources=("hash.cu",), instantiations=instantiations)
