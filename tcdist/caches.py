"""Where compiled code is kept, so that a run compiles nothing a run before it (on this host, or
on any host that shares the folder) has compiled: CuPy's kernels and Numba's functions.

TCDIST_CACHE_DIR, when set, holds both (cupy/ and numba/ in it) unless CUPY_CACHE_DIR or
NUMBA_CACHE_DIR says otherwise; else each library keeps its own default. `tcdist warm-up` fills
them.
"""

import fcntl
import os
from contextlib import contextmanager

HOME_CUPY = os.path.join("~", ".cupy", "kernel_cache")  # CuPy's own default


def use_cache_dir() -> None:
    """Point CuPy and Numba into TCDIST_CACHE_DIR (before either is imported: both read it once)."""
    root = os.environ.get("TCDIST_CACHE_DIR")
    if root:
        os.environ.setdefault("CUPY_CACHE_DIR", os.path.join(root, "cupy"))
        os.environ.setdefault("NUMBA_CACHE_DIR", os.path.join(root, "numba"))


def places() -> dict[str, str]:
    """Where each kind of compiled code is kept now."""
    return {"CUDA kernels (CuPy)": cuda_folder(),
            "CPU functions (Numba)": os.environ.get("NUMBA_CACHE_DIR") or "beside tcdist's modules (__pycache__), "
                                                                            "else Numba's folder in ~/.cache"}


def cuda_folder() -> str:
    return os.path.expanduser(os.environ.get("CUPY_CACHE_DIR", HOME_CUPY))


@contextmanager
def one_compiler():
    """Held while a CUDA module is compiled or loaded: the ranks of a host take turns, so the
    first compiles into the cache and the others load what it wrote, instead of all compiling
    the same code at once. Where the lock cannot be taken (a read-only cache), nothing waits."""
    try:
        os.makedirs(cuda_folder(), exist_ok=True)
        held = open(os.path.join(cuda_folder(), ".tcdist-compile.lock"), "a")
    except OSError:
        yield
        return
    with held:
        try:
            fcntl.flock(held, fcntl.LOCK_EX)
        except OSError:
            pass
        yield
