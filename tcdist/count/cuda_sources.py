"""The CUDA sources shipped with tcdist: each kernel's files joined after common.cuh, and its
template instances written as C++ declarations (the one list NVRTC's name expressions and an
offline nvcc build are both taken from).

Free of CuPy, so CI (no GPU) can compile the same text with nvcc.
"""

import re
from importlib import resources

import numpy as np

COL_TYPES = {np.dtype(np.int32): "int", np.dtype(np.int64): "long long"}
_NAME = re.compile(r"void\s+(\w+\s*<[^>]*>)\s*\(")


def source(files: tuple[str, ...]) -> str:
    """common.cuh and the files, joined (so CuPy's compile cache sees a change in any of them)."""
    folder = resources.files("tcdist.count") / "cuda"
    return "\n".join((folder / name).read_text() for name in ("common.cuh", *files))


def declare(template: str, instances: list[str], params: str) -> list[str]:
    """'template __global__ void NAME<ARGS>(PARAMS);' for every ARGS in instances; {col} in
    params stands for the instance's column type (its first template argument)."""
    return [f"template __global__ void {template}<{args}>({params.format(col=args.split(',')[0].strip())});"
            for args in instances]


def name_expression(declaration: str) -> str:
    """The NVRTC name expression ('lstc_block<int, 256>') of a declaration made by declare()."""
    return _NAME.search(declaration).group(1)


PER_VERTEX_SOURCES = ("per_vertex.cu",)  # per-vertex credits: no counting kernel, so not in the registry
DEGREE_STATS_SOURCES = ("degree_stats.cu",)  # the auto rule's statistics: likewise


def per_vertex_declarations() -> list[str]:
    return [declaration for template in ("lstc_per_vertex", "forward_per_vertex")
            for declaration in declare(template, list(COL_TYPES.values()), "const i64*, const {col}*, i64, u64*")]


def degree_stats_declarations() -> list[str]:
    return declare("degree_stats", ["long long"], "const {col}*, i64, u64*")
