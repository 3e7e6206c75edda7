"""Arrays between GPUs over NCCL (cupy.cuda.nccl, from the nvidia-nccl-cu12/-cu13 wheel): the
all-to-all-v and all-gather-v of exchange.py for CuPy arrays on each rank's GPU, moved GPU to GPU
with no copy through the host. NCCL's counts are size_t, so no message is cut into pieces; MPI
carries NCCL's unique id and the counts."""

from __future__ import annotations

import numpy as np

from tcdist.ranks.exchange import offsets


def communicator(comm):
    """An NCCL communicator of comm's ranks, each on the GPU current when it is called."""
    from cupy.cuda import nccl

    return nccl.NcclCommunicator(comm.size, comm.bcast(nccl.get_unique_id() if comm.rank == 0 else None), comm.rank)


def alltoallv(comm, gpus, send, counts):
    """(received, received_counts) as exchange.alltoallv gives them, over gpus (communicator(comm))."""
    import cupy
    from cupy.cuda import nccl

    counts = np.asarray(counts, np.int64)
    received_counts = np.array(comm.alltoall(counts.tolist()), np.int64)
    out_at, in_at = offsets(counts) * send.itemsize, offsets(received_counts) * send.itemsize
    send = cupy.ascontiguousarray(send)
    received = cupy.empty(int(received_counts.sum()), send.dtype)
    comm.Barrier()  # every rank has its buffers: a rank out of memory fails before any waits in NCCL, which never ends
    stream = cupy.cuda.get_current_stream().ptr
    nccl.groupStart()
    for peer in range(comm.size):
        if peer != comm.rank and counts[peer]:
            gpus.send(send.data.ptr + int(out_at[peer]), int(out_at[peer + 1] - out_at[peer]), nccl.NCCL_UINT8, peer,
                      stream)
        if peer != comm.rank and received_counts[peer]:
            gpus.recv(received.data.ptr + int(in_at[peer]), int(in_at[peer + 1] - in_at[peer]), nccl.NCCL_UINT8, peer,
                      stream)
    nccl.groupEnd()
    mine = slice(int(in_at[comm.rank]) // send.itemsize, int(in_at[comm.rank + 1]) // send.itemsize)
    received[mine] = send[int(out_at[comm.rank]) // send.itemsize : int(out_at[comm.rank + 1]) // send.itemsize]
    return received, received_counts


def allgatherv(comm, gpus, block):
    """Every rank's block, in rank order, on every rank's GPU: one NCCL broadcast from each rank, grouped."""
    import cupy
    from cupy.cuda import nccl

    at = offsets(np.array(comm.allgather(int(block.size)), np.int64))
    out = cupy.empty(int(at[-1]), block.dtype)
    out[int(at[comm.rank]) : int(at[comm.rank + 1])] = block
    comm.Barrier()  # (as in alltoallv)
    stream = cupy.cuda.get_current_stream().ptr
    nccl.groupStart()
    for root in range(comm.size):
        if at[root + 1] > at[root]:
            place = out.data.ptr + int(at[root]) * out.itemsize
            gpus.broadcast(place, place, int(at[root + 1] - at[root]) * out.itemsize, nccl.NCCL_UINT8, root, stream)
    nccl.groupEnd()
    return out
