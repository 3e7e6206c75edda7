"""Ranks that share a GPU: the first ranks_per_gpu ranks of a node bound to each GPU count on it,
and the others wait, asleep, for the count. Processes on one GPU do not run side by side: the GPU
takes them in turns, each with a CUDA context of its own to start and to end. Four ranks sharing
one H100 took 1.36-1.82x one process's time on RMAT-24..26 (docs/ranks.md); one of them, counting
alone, does the same work as one process. Under NVIDIA MPS, ranks on one GPU do run side by side,
and more of them may pay off.

The GPU a rank would bind is named by its PCI bus id, asked of the CUDA driver without starting a
context on it: a rank that waits never takes the GPU's memory or time."""

from __future__ import annotations

import socket
from dataclasses import replace

from tcdist.errors import TcdistError, named
from tcdist.ranks.comm import on_my_node, quiet_barrier
from tcdist.ranks.guard import RemoteError
from tcdist.results import RankResult, Timings, TriangleCount


def seat(backend: str, local_rank: int) -> tuple[int, str] | None:
    """(index, PCI bus id) of the GPU this rank would bind (device/binding.py), or None where it
    counts on the CPU (an unusable GPU under --backend gpu is refused later, by resolve)."""
    if backend == "cpu":
        return None
    from tcdist.device import gpu
    from tcdist.device.binding import bus_id, gpu_index

    if gpu.problem() is not None:
        return None
    import cupy

    index = gpu_index(local_rank, cupy.cuda.runtime.getDeviceCount())
    return index, bus_id(index)


def counting(comm, seated: tuple[int, str] | None, ranks_per_gpu: int):
    """(the communicator of the ranks that count, the rank that counts on this rank's GPU where
    this one waits) (a collective): comm itself where every rank counts, else a new one on the
    ranks that count, and None on a rank that waits."""
    from mpi4py import MPI

    node = on_my_node(comm, (comm.rank, None if seated is None else seated[1]))
    on_mine = [rank for rank, bus in node if rank < comm.rank and seated is not None and bus == seated[1]]
    counts = len(on_mine) < ranks_per_gpu
    if comm.allreduce(counts, op=MPI.LAND):
        return comm, None
    mine = comm.Split(0 if counts else MPI.UNDEFINED, key=comm.rank)
    return (mine, None) if counts else (None, on_mine[0])


def finish(comm, result: TriangleCount | None, error: Exception | None, seated, counted_by: int | None,
           ranks_per_gpu: int):
    """The end of a run in which some ranks waited (a collective, after the count): every rank's
    result is rank 0's, with a row for each rank that waited (counted_by: the rank that counted on
    its GPU); a rank that waited raises a RemoteError where the count failed (the ranks that
    counted raise their own)."""
    quiet_barrier(comm)  # the waiting ranks sleep until the count is done
    row = None if counted_by is None else \
        RankResult(comm.rank, socket.gethostname(), "gpu", *seated, 0, [], Timings(), counted_by=counted_by).to_dict()
    rows = comm.gather(row, root=0)
    told = None
    if comm.rank == 0:
        if error is not None:
            told = (isinstance(error, TcdistError), str(error))
        else:
            idle = [r for r in rows if r is not None]
            result.rank_stats = sorted(result.rank_stats + idle, key=lambda s: s["rank"])
            result.ranks = comm.size
            result.warnings.append(named(
                f"rank{'s' * (len(idle) > 1)} {', '.join(str(r['rank']) for r in idle)} waited: {ranks_per_gpu} "
                f"rank{'s' * (ranks_per_gpu > 1)} per GPU count{'s' * (ranks_per_gpu == 1)} on it (more would only "
                "take turns on it); start one rank per GPU, or raise {ranks_per_gpu} where NVIDIA MPS runs"))
            told = replace(result, per_vertex=None, per_edge=None)  # those arrays stay on rank 0
    told = comm.bcast(told, root=0)
    if isinstance(told, tuple):
        if counted_by is not None:
            user_error, message = told
            raise RemoteError(message if user_error else f"rank 0 failed: {message}")
        raise error
    return result if comm.rank == 0 else told
