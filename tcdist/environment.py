"""What ``tcdist info`` reports about the machine: versions, threads, GPUs, MPI, kernels."""

import importlib.metadata
import platform
import sys

from tcdist import __version__, compiled
from tcdist.count.registry import kernels
from tcdist.device.gpu import problem as gpu_device_problem
from tcdist.ranks.comm import INSTALL_MPI4PY


def _version(package):
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _gpus():
    problem = gpu_device_problem()
    if problem:
        return problem
    import cupy

    names = []
    for i in range(cupy.cuda.runtime.getDeviceCount()):
        props = cupy.cuda.runtime.getDeviceProperties(i)
        names.append(f"{i}: {props['name'].decode()} ({props['totalGlobalMem'] / 2**30:.0f} GiB)")
    return "; ".join(names)


def _mpi():
    try:
        from mpi4py import MPI
    except ImportError:
        return f"mpi4py not installed ({INSTALL_MPI4PY})"
    return MPI.Get_library_version().replace("\x00", "").splitlines()[0].strip()


def describe():
    """A flat dict of the environment, for people and for --json."""
    return {
        "tcdist": __version__,
        "python": f"{platform.python_version()} ({sys.executable})",
        "platform": platform.platform(),
        "numpy": _version("numpy"),
        "numba": f"{_version('numba')} ({compiled.get_threads()} threads)",
        "pyarrow": _version("pyarrow"),
        "h5py": _version("h5py"),
        "cupy": _version("cupy-cuda13x") if _version("cupy-cuda13x") != "not installed" else _version("cupy-cuda12x"),
        "gpus": _gpus(),
        "mpi4py": _version("mpi4py"),
        "mpi": _mpi(),
        "pymetis": _version("pymetis"),
        "kernels": "auto (the default), " + ", ".join(f"{k.name} ({k.backend})" for k in kernels().values()),
    }
