"""Where a run counts, decided once per rank by resolve(): the backend, then (on a GPU) the
device by node-local rank, the kernel and its options, the CPU threads. core.py holds what a
CpuDevice (cpu.py) and a GpuDevice (gpu.py) share; staging.py, allocator.py, warmup.py and
binding.py are the GPU's copy stream, its memory limit, the warm-up, and the choice of GPU and
threads."""

from __future__ import annotations

from tcdist import compiled
from tcdist.count.auto import Auto
from tcdist.count.registry import choose
from tcdist.device import cpu, gpu
from tcdist.device.binding import cpu_threads
from tcdist.device.core import Device
from tcdist.errors import OptionError


def set_threads(threads: int | None) -> int:
    """The CPU threads a count may use, checked (None: all Numba may use)."""
    limit = compiled.most_threads()
    if threads is None:
        return limit
    if not 1 <= threads <= limit:
        raise OptionError(f"{{threads}} must be between 1 and {limit}, got {threads}")
    return threads


def resolve(backend: str = "auto", *, kernel: str | None = None, threads: int | None = None, local_rank: int = 0,
            local_size: int = 1, memory_limit: int | None = None) -> Device:
    """The device of this rank: the backend, then (on a GPU) the device by node-local rank,
    selected before anything compiles; the kernel (a registry spec such as 'lstc-group:tile=256',
    or auto) and its options checked here once. On a GPU, memory_limit caps what the run's arrays
    hold at once (an allocation past it fails) and records the peak."""
    kind = "cpu" if backend == "cpu" else "gpu"
    if kind == "gpu":
        reason = gpu.problem()
        if reason is not None and backend == "gpu":
            raise OptionError(f"{{backend}} gpu: {reason}")
        kind = "cpu" if reason is not None else "gpu"
    if kind == "gpu":
        gpu.check_limit(memory_limit)
    auto = Auto(kind) if kernel in (None, "auto") else None
    chosen, options = (None, {}) if auto else choose(kind, kernel)
    if threads is None and local_size > 1:
        threads = cpu_threads(local_size)
    threads = set_threads(threads)  # may refuse: before anything is installed on the GPU
    made = gpu.GpuDevice if kind == "gpu" else cpu.CpuDevice
    return made(kernel="auto" if auto else chosen.name, threads=threads, chosen=chosen, options=options,
                memory_limit=memory_limit, auto=auto, local_rank=local_rank)
