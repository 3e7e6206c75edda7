"""Which device counts: resolved once per run, with a clear reason when the GPU cannot."""

from tcdist.errors import TcdistError

BACKENDS = ("auto", "cpu", "gpu")


def gpu_device_problem():
    """Why CuPy cannot use a CUDA device here, or None when it can."""
    try:
        import cupy
    except ImportError:
        return "CuPy is not installed (pip install 'tcdist[cuda12]' or 'tcdist[cuda13]')"
    try:
        devices = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # CUDA driver or runtime missing: CuPy raises several types
        return f"no usable CUDA device ({type(e).__name__}: {e})"
    if devices == 0:
        return "no CUDA device found"
    return None


def gpu_unavailable_reason():
    """Why the GPU backend cannot count here, or None when it can."""
    return gpu_device_problem()


def resolve_backend(name):
    """'cpu' or 'gpu' for a requested backend name."""
    if name not in BACKENDS:
        raise TcdistError(f"unknown backend '{name}' (choose from {', '.join(BACKENDS)})")
    if name == "cpu":
        return "cpu"
    reason = gpu_unavailable_reason()
    if reason is None:
        return "gpu"
    if name == "gpu":
        raise TcdistError(f"--backend gpu: {reason}")
    return "cpu"


def free_gpu_bytes():
    """Bytes the current device can still give: free device memory plus CuPy's cached blocks."""
    import cupy

    free, _ = cupy.cuda.runtime.memGetInfo()
    pool = cupy.get_default_memory_pool()
    return int(free + pool.total_bytes() - pool.used_bytes())


def check_fits(need, what, parts):
    """Stop with the number of parts that would fit when ``need`` bytes exceed the free GPU memory."""
    free = free_gpu_bytes()
    if need > free:
        suggest = max(2, parts * 2, -(-need * parts // max(free, 1)) * 2)
        raise TcdistError(f"{what} needs {need / 2**30:.2f} GiB on the GPU but {free / 2**30:.2f} GiB are free; "
                          f"count it in more parts (try --parts {suggest})")


def set_threads(threads):
    """Use this many CPU threads for the Numba kernels (None: all cores)."""
    import numba

    if threads is None:
        return numba.get_num_threads()
    limit = numba.config.NUMBA_NUM_THREADS
    if not 1 <= threads <= limit:
        raise TcdistError(f"--threads must be between 1 and {limit}, got {threads}")
    numba.set_num_threads(threads)
    return threads
