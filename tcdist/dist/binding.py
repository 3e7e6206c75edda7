"""Which GPU and how many CPU threads a rank takes: decided by its rank on its node."""

from __future__ import annotations

import os

from tcdist.dist.comm import is_serial


def node_local(comm) -> tuple[int, int]:
    """(rank among the ranks of this node, number of ranks on this node), never the global rank."""
    if is_serial(comm):
        return 0, 1
    from mpi4py import MPI

    node = comm.Split_type(MPI.COMM_TYPE_SHARED)
    try:
        return node.rank, node.size
    finally:
        node.Free()


def gpu_index(local_rank: int, visible_gpus: int) -> int:
    """The GPU a rank binds: its node-local rank modulo the GPUs it can see. CUDA_VISIBLE_DEVICES
    (and Slurm's --gpus-per-task, which sets it per task) has already narrowed what it sees."""
    return local_rank % visible_gpus


def cpu_threads(local_size: int) -> int:
    """CPU threads for one rank: the cores the launcher bound it to, else this node's cores shared
    among its ranks."""
    bound = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if bound < (os.cpu_count() or 1):
        return bound
    return max(1, bound // max(local_size, 1))
