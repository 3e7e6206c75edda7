"""Compiled CUDA modules and their launches (CuPy): each module built by NVRTC on first use,
once per device, and the one way a counting launch returns its total.

Imported only when the GPU backend is chosen; importing it imports CuPy.
"""

import functools
from collections.abc import Callable

import cupy

from tcdist.cuda.build import COL_TYPES, name_expression, source

MAX_GRID = 1 << 30


@cupy.memoize(for_each_device=True)
def _module(files: tuple[str, ...], declarations: tuple[str, ...]):
    return cupy.RawModule(code=source(files), options=("-std=c++17",),
                          name_expressions=[name_expression(d) for d in declarations])


@functools.cache
def _declarations(module) -> tuple[str, ...]:
    """A module's template instances, written out once (not on every launch)."""
    return tuple(module.instantiations())


def function(module, template: str, col, *params):
    """The compiled instance template<column type of col, params...> of a module (a registry
    kernel or a build.CudaModule)."""
    args = ", ".join([COL_TYPES[col.dtype], *map(str, params)])
    return _module(module.sources, _declarations(module)).get_function(f"{template}<{args}>")


def named(module, name: str):
    """The compiled function of a module by its full name ('parse_ranges<true>')."""
    return _module(module.sources, _declarations(module)).get_function(name)


def compile_module(module) -> None:
    """Compile a module for the current device (or load it from CuPy's cache)."""
    _module(module.sources, _declarations(module))


def device_csr(rowptr, col):
    """rowptr (int64) and col on the current device (no copy when already there)."""
    return cupy.asarray(rowptr, dtype=cupy.int64), cupy.asarray(col)


def counted(launches: Callable[[cupy.ndarray], None]) -> int:
    """The total that launches(total) adds into a zeroed uint64 counter on the device."""
    total = cupy.zeros(1, dtype=cupy.uint64)
    launches(total)
    return int(total.get()[0])
