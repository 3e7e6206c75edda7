"""Where compiled code is kept, so that a run compiles nothing a run before it (on this host, or
on any host that shares the folder) has compiled: CuPy's kernels and Numba's functions.

tcdist's folder is TCDIST_CACHE_DIR, else $XDG_CACHE_HOME/tcdist, else ~/.cache/tcdist: Numba
keeps tcdist's functions in its numba/ (NUMBA_CACHE_DIR, when set, instead), never beside the
installed package, where `pip uninstall` would leave them. CuPy keeps kernels in CUPY_CACHE_DIR,
else TCDIST_CACHE_DIR's cupy/ when that is set, else its own default. `tcdist warm-up` fills them.
"""

import fcntl
import os
from contextlib import contextmanager

HOME_CUPY = os.path.join("~", ".cupy", "kernel_cache")  # CuPy's own default


def use_cache_dir() -> None:
    """Point CuPy into TCDIST_CACHE_DIR (before it is imported: it reads CUPY_CACHE_DIR once)."""
    root = os.environ.get("TCDIST_CACHE_DIR")
    if root:
        os.environ.setdefault("CUPY_CACHE_DIR", os.path.join(root, "cupy"))


def folder() -> str:
    """tcdist's own cache folder: TCDIST_CACHE_DIR, else $XDG_CACHE_HOME/tcdist, else ~/.cache/tcdist."""
    root = os.environ.get("TCDIST_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join("~", ".cache"), "tcdist")
    return os.path.abspath(os.path.expanduser(root))


def numba_folder() -> str:
    """Where Numba keeps tcdist's compiled CPU functions (compiled.py points it there)."""
    return os.path.abspath(os.path.expanduser(os.environ.get("NUMBA_CACHE_DIR") or os.path.join(folder(), "numba")))


def writable_numba_folder() -> str:
    """numba_folder(), made where missing; refused in one line where this user may not write in it."""
    import tempfile

    from tcdist.errors import TcdistError

    where = numba_folder()
    try:
        os.makedirs(where, exist_ok=True)
        with tempfile.TemporaryFile(dir=where):
            pass
    except OSError as e:
        variable = "NUMBA_CACHE_DIR" if os.environ.get("NUMBA_CACHE_DIR") else "TCDIST_CACHE_DIR"
        raise TcdistError(f"the cache folder {where}: {e.strerror or e}; give {variable} a folder this user may "
                          "write in") from None
    return where


def cuda_folder() -> str:
    return os.path.expanduser(os.environ.get("CUPY_CACHE_DIR", HOME_CUPY))


def places(gpu: bool) -> dict[str, str]:
    """Where each kind of compiled code is kept now: the CPU's, and with gpu the CUDA kernels'."""
    kept = {"CPU functions (Numba)": numba_folder()}
    if gpu:
        kept["CUDA kernels (CuPy)"] = cuda_folder()
    return kept


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
