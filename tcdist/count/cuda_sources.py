"""The CUDA sources shipped with tcdist and the kernel instantiations tcdist launches.

Free of CuPy, so CI (no GPU) can compile the same text with nvcc.
"""

from importlib import resources

import numpy as np

TILES = (64, 128, 256, 512, 1024)
COL_TYPES = {np.dtype(np.int32): "int", np.dtype(np.int64): "long long"}
FILES = ("common.cuh", "lstc.cu", "lstc_group.cu", "per_vertex.cu")
GROUPS = (4, 8, 16, 32)


def source():
    """The sources joined into one string (so CuPy's compile cache sees a change in any file)."""
    folder = resources.files("tcdist.count") / "cuda"
    return "\n".join((folder / name).read_text() for name in FILES)


def kernel_names():
    """Every template instantiation, as NVRTC name expressions."""
    names = []
    for ctype in COL_TYPES.values():
        names += [f"lstc_block<{ctype}, {t}>" for t in TILES]
        for hashed in ("false", "true"):
            names += [f"lstc_group<{ctype}, {t}, {g}, {hashed}>" for t in TILES for g in GROUPS]
            names += [f"lstc_group_warp<{ctype}, {g}, {hashed}>" for g in GROUPS]
        names.append(f"lstc_per_vertex<{ctype}>")
    return names


def explicit_instantiations():
    """C++ that instantiates every kernel, for an offline nvcc build of source()."""
    lines = []
    for name in kernel_names():
        ctype = name.split("<", 1)[1].split(",")[0].rstrip(">").strip()
        listed = "const i64*, " if name.startswith("lstc_group") else ""  # the group kernels take a row list
        lines.append(f"template __global__ void {name}(const i64*, const {ctype}*, {listed}i64, u64*);")
    return "\n".join(lines)
