"""The CUDA sources shipped with tcdist and the kernel instantiations tcdist launches.

Free of CuPy, so CI (no GPU) can compile the same text with nvcc.
"""

from importlib import resources

import numpy as np

TILES = (64, 128, 256, 512, 1024)
COL_TYPES = {np.dtype(np.int32): "int", np.dtype(np.int64): "long long"}
FILES = ("common.cuh", "lstc.cu", "lstc_hybrid.cu")


def source():
    """The sources joined into one string (so CuPy's compile cache sees a change in any file)."""
    folder = resources.files("tcdist.count") / "cuda"
    return "\n".join((folder / name).read_text() for name in FILES)


def kernel_names():
    """Every template instantiation, as NVRTC name expressions."""
    names = []
    for ctype in COL_TYPES.values():
        names += [f"lstc_block<{ctype}, {t}>" for t in TILES]
        names += [f"lstc_flat<{ctype}, {t}>" for t in TILES]
        names.append(f"lstc_warp<{ctype}>")
    return names


def explicit_instantiations():
    """C++ that instantiates every kernel, for an offline nvcc build of source()."""
    lines = []
    for name in kernel_names():
        template = name.split("<", 1)[0]
        ctype = name.split("<", 1)[1].split(",")[0].rstrip(">").strip()
        params = {
            "lstc_block": f"(const i64*, const {ctype}*, i64, u64*)",
            "lstc_flat": f"(const i64*, const {ctype}*, const i64*, i64, u64*)",
            "lstc_warp": f"(const i64*, const {ctype}*, const i64*, i64, u64*)",
        }[template]
        lines.append(f"template __global__ void {name}{params};")
    return "\n".join(lines)
