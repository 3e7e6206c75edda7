"""The CUDA sources shipped with tcdist: a module's files joined after common.cuh, and its
template instances written as C++ declarations (the one list NVRTC's name expressions and an
offline nvcc build are both taken from).

Free of CuPy, so CI (no GPU) can compile the same text with nvcc.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources

import numpy as np

COL_TYPES = {np.dtype(np.int32): "int", np.dtype(np.int64): "long long"}
_NAME = re.compile(r"void\s+(\w+\s*<[^>]*>)\s*\(")


@dataclass(frozen=True)
class CudaModule:
    """Files compiled together and the template instances they export (a registry kernel has the
    same two fields)."""

    sources: tuple[str, ...]
    instantiations: Callable[[], list[str]]


def source(files: tuple[str, ...]) -> str:
    """common.cuh and the files, joined (so CuPy's compile cache sees a change in any of them)."""
    folder = resources.files("tcdist.cuda")
    return "\n".join((folder / name).read_text() for name in ("common.cuh", *files))


def declare(template: str, instances: list[str], params: str) -> list[str]:
    """'template __global__ void NAME<ARGS>(PARAMS);' for every ARGS in instances; {col} in
    params stands for the instance's column type (its first template argument)."""
    return [f"template __global__ void {template}<{args}>({params.format(col=args.split(',')[0].strip())});"
            for args in instances]


def name_expression(declaration: str) -> str:
    """The NVRTC name expression ('lstc_block<int, 256>') of a declaration made by declare()."""
    return _NAME.search(declaration).group(1)


PER_VERTEX = CudaModule(("per_vertex.cu",), lambda: [
    declaration for template in ("lstc_per_vertex", "forward_per_vertex")
    for declaration in declare(template, list(COL_TYPES.values()), "const i64*, const {col}*, i64, u64*")])
PER_EDGE = CudaModule(("per_edge.cu",), lambda: declare("lstc_per_edge", list(COL_TYPES.values()),
                                                        "const i64*, const {col}*, i64, u64*"))
DEGREE_STATS = CudaModule(("degree_stats.cu",), lambda: declare("degree_stats", ["long long"],
                                                                "const {col}*, i64, u64*"))
PASSES = CudaModule(("passes.cu",), list)  # extern "C" kernels only: one program (launch.kernel)
PARSE = CudaModule(("parse.cu",), lambda: declare("parse_ranges", ["true", "false"],
                                                  "const unsigned char*, i64, i64, i64, i64*, i64*, i64*, i64*, "
                                                  "i64*, i64*"))
_CHUNK = "const i64*, const {c}*, i64, i64, i64"  # a chunk of rows: rowptr, col, base, first, rows
_PART_TYPES = ("unsigned char", "int")  # a vertex's part: a byte while parts are few
_RENUMBERED = (("int", "int"), ("long long", "int"), ("long long", "long long"))  # columns, the part's ids


def _parts_instances() -> list[str]:
    kernels = []
    for c in COL_TYPES.values():
        kernels += [f"template __global__ void part_marks<{c}, {a}>({_CHUNK.format(c=c)}, const {a}*, i64, unsigned*, "
                    "unsigned*);" for a in _PART_TYPES]
        kernels.append(f"template __global__ void part_push<{c}>({_CHUNK.format(c=c)}, const unsigned*, "
                       "const unsigned*, unsigned*, unsigned*, u64*);")
    for a in _PART_TYPES:
        kernels.append(f"template __global__ void part_members<{a}>(const {a}*, i64, i64, const unsigned*, unsigned*, "
                       "unsigned*);")
        kernels.append(f"template __global__ void part_flags<{a}>(const {a}*, i64, int, i64, const unsigned*, "
                       "const unsigned*, const unsigned*, unsigned char*);")
    for c, i in _RENUMBERED:
        rows = f"{_CHUNK.format(c=c)}, const unsigned char*, int, const {i}*"
        kernels.append(f"template __global__ void part_rows<{c}, {i}>({rows}, i64*, i64*, u64*);")
        kernels.append(f"template __global__ void part_place<{c}, {i}>({rows}, const i64*, const i64*, {i}*);")
    for i in COL_TYPES.values():
        kernels.append(f"template __global__ void part_probes<{i}>(const i64*, const {i}*, i64, u64*);")
    return kernels


PARTS = CudaModule(("parts.cu",), _parts_instances)
