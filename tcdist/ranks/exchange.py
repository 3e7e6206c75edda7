"""Arrays between ranks over MPI: an all-to-all-v, an all-gather-v and a sum of NumPy or CuPy
arrays of any size, each message a piece under MPI's int count limit (2^31 elements) and under PIECE_BYTES,
so that an MPI without large-count calls moves them too. CuPy arrays are staged through the host
(NCCL between GPUs is nccl.py's)."""

from __future__ import annotations

import numpy as np

from tcdist.ranks.comm import is_serial
from tcdist.xp import array_module, to_numpy

PIECE_BYTES = 1 << 30  # the most bytes one MPI message carries
_INT_COUNT = 2**31 - 1  # MPI's count argument is a C int
_TAG = 54


def _piece(dtype, piece_bytes: int | None) -> int:
    """Elements of dtype in one message."""
    limit = PIECE_BYTES if piece_bytes is None else piece_bytes
    return max(1, min(limit // np.dtype(dtype).itemsize, _INT_COUNT))


def offsets(counts: np.ndarray) -> np.ndarray:
    """Where each count's run starts when they are laid end to end, then the end."""
    starts = np.zeros(counts.size + 1, np.int64)
    np.cumsum(counts, out=starts[1:])
    return starts


def alltoallv(comm, send, counts, piece_bytes: int | None = None):
    """(received, received_counts): send holds counts[r] elements for rank r, rank after rank;
    received holds what every rank sent this one, source after source. The pairs' messages are
    all posted at once (a peer's in pieces, in order: MPI does not overtake between two ranks)."""
    counts = np.asarray(counts, np.int64)
    if is_serial(comm):
        return send[: int(counts[0])], counts
    from mpi4py import MPI

    xp = array_module(send)
    received_counts = np.array(comm.alltoall(counts.tolist()), np.int64)
    out_at, in_at = offsets(counts), offsets(received_counts)
    staged = np.ascontiguousarray(to_numpy(send))
    received = np.empty(int(in_at[-1]), staged.dtype)
    step, rank, size = _piece(staged.dtype, piece_bytes), comm.rank, comm.size
    requests = []
    for shift in range(1, size):  # each rank first to the next one up: the pairs spread over the ranks
        source, target = (rank - shift) % size, (rank + shift) % size
        for lo in range(int(in_at[source]), int(in_at[source + 1]), step):
            requests.append(comm.Irecv(received[lo : min(lo + step, int(in_at[source + 1]))], source, _TAG))
        for lo in range(int(out_at[target]), int(out_at[target + 1]), step):
            requests.append(comm.Isend(staged[lo : min(lo + step, int(out_at[target + 1]))], target, _TAG))
    received[in_at[rank] : in_at[rank + 1]] = staged[out_at[rank] : out_at[rank + 1]]
    getattr(comm, "waitall", MPI.Request.Waitall)(requests)  # a guard.Watched comm waits looking for failures
    return (received if xp is np else xp.asarray(received)), received_counts


def allgatherv(comm, block, piece_bytes: int | None = None):
    """Every rank's block, in rank order, on every rank (a broadcast of each rank's block, in pieces)."""
    if is_serial(comm):
        return block
    xp = array_module(block)
    staged = np.ascontiguousarray(to_numpy(block))
    sizes = np.array(comm.allgather(int(staged.size)), np.int64)
    at = offsets(sizes)
    out = np.empty(int(at[-1]), staged.dtype)
    out[at[comm.rank] : at[comm.rank + 1]] = staged
    step = _piece(staged.dtype, piece_bytes)
    for root in range(comm.size):
        for lo in range(int(at[root]), int(at[root + 1]), step):
            comm.Bcast(out[lo : min(lo + step, int(at[root + 1]))], root)
    return out if xp is np else xp.asarray(out)


def summed(comm, array, piece_bytes: int | None = None):
    """array (int64 or uint64: exact) added element-wise over the ranks, the sum on every rank (a
    NumPy array summed in place; CuPy arrays through the host), in pieces under MPI's count limit."""
    if is_serial(comm):
        return array
    from mpi4py import MPI

    xp = array_module(array)
    staged = np.ascontiguousarray(to_numpy(array))
    step = _piece(staged.dtype, piece_bytes)
    requests = [comm.Iallreduce(MPI.IN_PLACE, staged[lo : lo + step], MPI.SUM) for lo in range(0, staged.size, step)]
    getattr(comm, "waitall", MPI.Request.Waitall)(requests)
    return staged if xp is np else xp.asarray(staged)


def before(comm, value: int) -> tuple[int, int]:
    """(the sum of value over the ranks before this one, the sum over all ranks), exact."""
    values = comm.allgather(int(value))
    return sum(values[: comm.rank]), sum(values)
