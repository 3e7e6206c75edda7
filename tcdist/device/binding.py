"""Which GPU and how many CPU threads a rank takes: decided by its rank on its node."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from tcdist import compiled
from tcdist.budget.host import bound_cores


def gpu_index(local_rank: int, visible_gpus: int) -> int:
    """The GPU a rank binds: its node-local rank modulo the GPUs it can see. CUDA_VISIBLE_DEVICES
    (and Slurm's --gpus-per-task, which sets it per task) has already narrowed what it sees."""
    return local_rank % visible_gpus


def cpu_threads(local_size: int) -> int:
    """CPU threads for one rank: the cores the launcher bound it to, else this node's cores shared
    among its ranks."""
    bound = bound_cores()
    if bound < (os.cpu_count() or 1):
        return bound
    return max(1, bound // max(local_size, 1))


def idle_node_threads(node_threads: list[int]) -> int:
    """CPU threads for work that one rank of a node does while the node's other ranks wait for it
    (rank 0 reading and building the graph): theirs added to its own, on the cores it may run on."""
    return max(1, min(sum(node_threads), bound_cores(), compiled.most_threads()))


@contextmanager
def numba_threads(threads: int) -> Iterator[None]:
    """Numba's parallel loops of the calling thread use this many threads inside the block (the
    count is each thread's own; the one before is put back)."""
    before = compiled.get_threads()
    compiled.set_threads(threads)
    try:
        yield
    finally:
        compiled.set_threads(before)


def bus_id(index: int) -> str:
    """The PCI bus id of visible GPU index, as the CUDA driver gives it without a context on the
    GPU (CuPy's would start one: a rank that only asks which GPU it would bind must not)."""
    import ctypes

    cuda = ctypes.CDLL("libcuda.so.1")
    device, text = ctypes.c_int(), ctypes.create_string_buffer(64)
    for call, args in ((cuda.cuInit, (0,)), (cuda.cuDeviceGet, (ctypes.byref(device), index)),
                       (cuda.cuDeviceGetPCIBusId, (text, len(text), device))):
        status = call(*args)
        if status != 0:
            raise RuntimeError(f"{call.__name__} failed ({status})")
    return text.value.decode()
