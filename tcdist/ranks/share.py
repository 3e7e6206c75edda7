"""The whole graph on every rank, read once: rank 0's CSR is put in memory that the ranks of its
node share (an MPI shared-memory window), and broadcast to one rank of every other node, which
puts it in its own node's window; so a node holds the graph once, and nothing goes through a
file. Where MPI cannot give a shared window (a small /dev/shm, say), each rank receives its own
copy by broadcast."""

from __future__ import annotations

import numpy as np

CHUNK = 1 << 30  # bytes a broadcast moves at once: under MPI's 2^31 count limit of one message


class SharedGraph:
    """rowptr and col of the whole graph on this rank (views of a window or of a private copy),
    the bytes this rank received from another, and close(), which gives the memory back (a
    collective on the node)."""

    def __init__(self, comm, graph, header: dict):
        """graph: the Graph on rank 0 (in host memory), None on the others; header: its n, m and
        col_dtype, as every rank was told."""
        from mpi4py import MPI

        n, m, col_dtype = header["n"], header["m"], np.dtype(header["col_dtype"])
        nbytes = 8 * (n + 1) + col_dtype.itemsize * m
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
            _fill(memory, graph.rowptr, graph.col)
        self.received = 0
        if shared:
            if leader:
                self.received = _broadcast(self._leaders, memory)
            self._node.Barrier()  # the node's leader has filled the window
        else:
            self.received = _broadcast(comm, memory)
        self.rowptr = memory[: 8 * (n + 1)].view(np.int64)
        self.col = memory[8 * (n + 1) :].view(col_dtype)

    def close(self) -> None:
        self.rowptr = self.col = None
        if self._window is not None:
            self._window.Free()
            self._window = None
        for comm in (self._node, self._leaders):
            if comm is not None and comm != _null():
                comm.Free()
        self._node = self._leaders = None


def _null():
    from mpi4py import MPI

    return MPI.COMM_NULL


def _fill(memory, rowptr, col) -> None:
    """rowptr then col, into the window's bytes."""
    split = rowptr.nbytes
    memory[:split] = np.asarray(rowptr, np.int64).view(np.uint8)
    memory[split:] = np.ascontiguousarray(col).view(np.uint8).ravel()


def _broadcast(comm, memory) -> int:
    """memory from comm's rank 0 to every rank of comm, a chunk at a time: the bytes received."""
    if comm.size == 1:
        return 0
    for start in range(0, memory.size, CHUNK):
        comm.Bcast(memory[start : start + CHUNK], root=0)
    return 0 if comm.rank == 0 else int(memory.size)
