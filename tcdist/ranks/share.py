"""The whole graph on every rank, read once: rank 0's arrays (the CSR, and where ranks build their
own parts, the part of every vertex) are put in memory that the ranks of its node share (an MPI
shared-memory window), and broadcast to one rank of every other node, which puts them in its own
node's window; so a node holds them once, and nothing goes through a file. Where MPI cannot give
a shared window (a small /dev/shm, say), each rank receives its own copy by broadcast."""

from __future__ import annotations

import numpy as np

CHUNK = 1 << 30  # bytes a broadcast moves at once: under MPI's 2^31 count limit of one message


def layout(arrays: dict) -> list:
    """(name, dtype, length) of each array: what every rank is told, to map the shared bytes."""
    return [(name, np.dtype(a.dtype).str, int(a.size)) for name, a in arrays.items()]


class SharedArrays:
    """Rank 0's arrays on this rank, by name (views of a window or of a private copy), the bytes
    this rank received from another, and close(), which gives the memory back (a collective on
    the node)."""

    def __init__(self, comm, arrays: dict | None, shape: list):
        """arrays: rank 0's (in host memory), None on the others; shape: their layout()."""
        from mpi4py import MPI

        spans, nbytes = [], 0
        for name, dtype, length in shape:
            spans.append((name, np.dtype(dtype), nbytes, length))
            nbytes += -(-np.dtype(dtype).itemsize * length // 8) * 8  # each array 8-byte aligned
        self._node = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.rank)
        leader = self._node.rank == 0
        self._leaders = comm.Split(0 if leader else MPI.UNDEFINED, comm.rank)
        self._window = None
        try:
            self._window = MPI.Win.Allocate_shared(nbytes if leader else 0, 1, comm=self._node)
            buffer, _ = self._window.Shared_query(0)
            memory = np.frombuffer(buffer, np.uint8, nbytes)
            shared = True
        except MPI.Exception:  # no shared window here: every rank takes a copy
            memory = np.empty(nbytes, np.uint8)
            shared = False
        shared = bool(self._node.allreduce(shared, op=MPI.LAND))
        if comm.rank == 0:
            for name, dtype, start, length in spans:
                data = np.ascontiguousarray(arrays[name], dtype).view(np.uint8)
                memory[start : start + data.size] = data
        self.received = 0
        if shared:
            if leader:
                self.received = _broadcast(self._leaders, memory)
            self._node.Barrier()  # the node's leader has filled the window
        else:
            self.received = _broadcast(comm, memory)
        self.arrays = {name: memory[start : start + dtype.itemsize * length].view(dtype)
                       for name, dtype, start, length in spans}

    def close(self) -> None:
        from mpi4py import MPI

        self.arrays = None
        if self._window is not None:
            self._window.Free()
            self._window = None
        for comm in (self._node, self._leaders):
            if comm is not None and comm != MPI.COMM_NULL:
                comm.Free()
        self._node = self._leaders = None


def _broadcast(comm, memory) -> int:
    """memory from comm's rank 0 to every rank of comm, a chunk at a time: the bytes received."""
    if comm.size == 1:
        return 0
    for start in range(0, memory.size, CHUNK):
        comm.Bcast(memory[start : start + CHUNK], root=0)
    return 0 if comm.rank == 0 else int(memory.size)
