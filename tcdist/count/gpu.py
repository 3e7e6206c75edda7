"""What the GPU kernels share (CuPy): each kernel's module compiled by NVRTC on first use, on
its own, and the CSR and launch helpers. The kernels themselves are in count/kernels/.

Imported only when the GPU backend is chosen; importing it imports CuPy.
"""

import functools

import cupy

from tcdist.count.cuda_sources import (COL_TYPES, DEGREE_STATS_SOURCES, PER_VERTEX_SOURCES, degree_stats_declarations,
                                       name_expression, per_vertex_declarations, source)

MAX_GRID = 1 << 30


@cupy.memoize(for_each_device=True)
def _module(files: tuple[str, ...], declarations: tuple[str, ...]):
    return cupy.RawModule(code=source(files), options=("-std=c++17",),
                          name_expressions=[name_expression(d) for d in declarations])


@functools.cache
def _declarations(kernel) -> tuple[str, ...]:
    """A kernel's template instances, written out once (not on every launch)."""
    return tuple(kernel.instantiations())


def function(kernel, template: str, col, *params):
    """The compiled instance template<column type of col, params...> of a registry kernel."""
    args = ", ".join([COL_TYPES[col.dtype], *map(str, params)])
    return _module(kernel.sources, _declarations(kernel)).get_function(f"{template}<{args}>")


def compile_kernel(kernel) -> None:
    """Compile a registry kernel for the current device (or load it from CuPy's cache)."""
    _module(kernel.sources, _declarations(kernel))


def device_csr(rowptr, col):
    """rowptr (int64) and col on the current device (no copy when already there)."""
    return cupy.asarray(rowptr, dtype=cupy.int64), cupy.asarray(col)


class _PerVertex:  # the per-vertex kernel, compiled like a registry kernel
    sources = PER_VERTEX_SOURCES
    instantiations = staticmethod(per_vertex_declarations)


def per_vertex(rowptr, col, n_local, thread_per_vertex: bool = False):
    """The triangles each row of the CSR is in, counting the triangles whose lowest vertex is
    local (uint64 on the device, one per row): every corner is credited (cuda/per_vertex.cu), by
    a warp per local edge, or a thread per local vertex (for small out-degrees)."""
    rowptr, col = device_csr(rowptr, col)
    triangles = cupy.zeros(rowptr.size - 1, dtype=cupy.uint64)
    if n_local > 0 and col.size and thread_per_vertex:
        grid = min(-(-int(n_local) // 256), MAX_GRID)
        function(_PerVertex, "forward_per_vertex", col)((grid,), (256,), (rowptr, col, cupy.int64(n_local), triangles))
    elif n_local > 0 and col.size:
        warps_per_block = 8
        grid = int(min(-(-int(rowptr[int(n_local)]) // warps_per_block), MAX_GRID)) or 1
        function(_PerVertex, "lstc_per_vertex", col)((grid,), (32 * warps_per_block,),
                                                      (rowptr, col, cupy.int64(n_local), triangles))
    return triangles


class _DegreeStats:  # the auto rule's statistics, compiled like a registry kernel
    sources = DEGREE_STATS_SOURCES
    instantiations = staticmethod(degree_stats_declarations)


def degree_stats(rowptr, n_local: int) -> tuple[int, int, int]:
    """(sum of C(d+(u), 2), the largest d+(u), the edges) of the local rows, in one launch."""
    stats = cupy.zeros(3, dtype=cupy.uint64)
    if n_local > 0:
        grid = min(-(-int(n_local) // 256), 8 * cupy.cuda.Device().attributes["MultiProcessorCount"])
        function(_DegreeStats, "degree_stats", rowptr)((grid,), (256,), (rowptr, cupy.int64(n_local), stats))
    return tuple(int(x) for x in stats.get())
