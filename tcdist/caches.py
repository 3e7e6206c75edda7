"""Where compiled code is kept, so that a run compiles nothing a run before it (on this host, or
on any host that shares the folder) has compiled: CuPy's kernels and Numba's functions.

TCDIST_CACHE_DIR, when set, holds both (cupy/ and numba/ in it) unless CUPY_CACHE_DIR or
NUMBA_CACHE_DIR says otherwise; else each library keeps its own default. `tcdist warm-up` fills
them.
"""

import os

HOME_CUPY = os.path.join("~", ".cupy", "kernel_cache")  # CuPy's own default


def use_cache_dir() -> None:
    """Point CuPy and Numba into TCDIST_CACHE_DIR (before either is imported: both read it once)."""
    root = os.environ.get("TCDIST_CACHE_DIR")
    if root:
        os.environ.setdefault("CUPY_CACHE_DIR", os.path.join(root, "cupy"))
        os.environ.setdefault("NUMBA_CACHE_DIR", os.path.join(root, "numba"))


def places() -> dict[str, str]:
    """Where each kind of compiled code is kept now."""
    return {"CUDA kernels (CuPy)": os.path.expanduser(os.environ.get("CUPY_CACHE_DIR", HOME_CUPY)),
            "CPU functions (Numba)": os.environ.get("NUMBA_CACHE_DIR") or "beside tcdist's modules (__pycache__), "
                                                                            "else Numba's folder in ~/.cache"}
