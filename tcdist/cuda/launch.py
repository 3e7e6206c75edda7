"""Compiled CUDA kernels and their launches (CuPy): each template instance built by NVRTC when
first launched, once per device (CuPy keeps it on disk for the next run), and the one way a
counting launch returns its total.

Imported only when the GPU backend is chosen; importing it imports CuPy.
"""

import functools
from collections.abc import Callable

import cupy

from tcdist.caches import one_compiler
from tcdist.cuda.build import COL_TYPES, name_expression, source

MAX_GRID = 1 << 30


@cupy.memoize(for_each_device=True)
def _module(files: tuple[str, ...], declarations: tuple[str, ...]):
    module = cupy.RawModule(code=source(files), options=("-std=c++17",),
                            name_expressions=[name_expression(d) for d in declarations] or None)
    with one_compiler():
        module.compile()
    return module


@functools.cache
def _declarations(module) -> dict[str, str]:
    """A module's template instances by name expression, written out once (not on every launch)."""
    return {name_expression(d): d for d in module.instantiations()}


def named(module, name: str):
    """The compiled instance of a module by its full name ('parse_ranges<true>'): each instance is
    compiled on its own, when first used, so a run compiles only what it launches."""
    return _module(module.sources, (_declarations(module)[name],)).get_function(name)


def kernel(module, name: str):
    """A kernel of a module whose kernels are all extern "C", compiled together as one program
    (the passes before a count: one compile where each launches)."""
    return _module(module.sources, ()).get_function(name)


def grid_stride(module, name: str, count: int, *args, threads: int = 256) -> None:
    """A launch of an extern "C" kernel of module that strides its grid over count items."""
    kernel(module, name)((max(1, min(-(-count // threads), 1 << 16)),), (threads,), args)


def function(module, template: str, col, *params):
    """The compiled instance template<column type of col, params...> of a module (a registry
    kernel or a build.CudaModule)."""
    return named(module, f"{template}<{', '.join([COL_TYPES[col.dtype], *map(str, params)])}>")


def allow_shared(kernel, nbytes: int) -> None:
    """Let kernel take nbytes of dynamic shared memory (past 48 KiB, CUDA asks it of each kernel)."""
    if nbytes > kernel.max_dynamic_shared_size_bytes:
        kernel.max_dynamic_shared_size_bytes = nbytes


def compile_every_instance(module) -> None:
    """Compile (or load from CuPy's cache) every instance of a module for the current device."""
    for name in _declarations(module):
        named(module, name)


def device_csr(rowptr, col):
    """rowptr (int64) and col on the current device (no copy when already there)."""
    return cupy.asarray(rowptr, dtype=cupy.int64), cupy.asarray(col)


def counted(launches: Callable[[cupy.ndarray], None]) -> int:
    """The total that launches(total) adds into a zeroed uint64 counter on the device."""
    total = cupy.zeros(1, dtype=cupy.uint64)
    launches(total)
    return int(total.get()[0])
