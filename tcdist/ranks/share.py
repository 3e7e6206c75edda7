"""The whole graph on every rank, read once; and every rank's device arrays on rank 0's GPU.

Where rank 0 built it on its GPU and every rank is on its node, the ranks open rank 0's device
arrays in place (CUDA IPC) and copy what they count from there, device to device (over NVLink
from another GPU); nothing goes through host memory. Else rank 0's arrays (the CSR, and where
ranks build their own parts, the part of every vertex) are put in memory that the ranks of its
node share (an MPI shared-memory window), and broadcast to one rank of every other node, which
puts them in its own node's window; so a node holds them once, and nothing goes through a file.
Where MPI cannot give a shared window (a small /dev/shm, say), each rank receives its own copy by
broadcast.

The other way, gathered(): the raw edges each GPU rank of one node parsed, copied onto rank 0's GPU
by CUDA IPC (rank 0 opens each rank's arrays and copies them, device to device), for rank 0 to
build the graph from."""

from __future__ import annotations

import numpy as np

from tcdist.graph import passes
from tcdist.ranks.comm import node_local, quiet_barrier
from tcdist.xp import PAGE

CHUNK = 1 << 30  # bytes a broadcast moves at once: under MPI's 2^31 count limit of one message


def share(comm, arrays: dict | None, shape: list, gpu: str | None = None):
    """Rank 0's arrays on every rank (a collective): opened on rank 0's GPU where they lie there
    (gpu: its PCI bus id) and every rank can open them, else through host memory (SharedArrays).
    arrays: rank 0's, None on the others; shape: their layout()."""
    if gpu is not None:
        opened = GpuArrays.opened(comm, arrays, shape, gpu)
        if opened is not None:
            return opened
    return SharedArrays(comm, arrays, shape)


def layout(arrays: dict) -> list:
    """(name, dtype, length) of each array: what every rank is told, to map the shared bytes."""
    return [(name, np.dtype(a.dtype).str, int(a.size)) for name, a in arrays.items()]


class SharedArrays:
    """Rank 0's arrays on this rank, by name (views of a window or of a private copy), the bytes
    this rank received from another, how they came (via), and close(), which gives the memory back (a collective on
    the node)."""

    def __init__(self, comm, arrays: dict | None, shape: list):
        """arrays: rank 0's (in host memory), None on the others; shape: their layout()."""
        from mpi4py import MPI

        spans, nbytes = [], 0
        for name, dtype, length in shape:
            spans.append((name, np.dtype(dtype), nbytes, length))
            nbytes += -(-np.dtype(dtype).itemsize * length // PAGE) * PAGE  # each on pages of its own: a copy
            # from one must not start in pages registered for another (CUDA refuses it: xp.register_pages)
        self._node = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.rank)
        leader = self._node.rank == 0
        self._leaders = comm.Split(0 if leader else MPI.UNDEFINED, comm.rank)
        self._window = None
        try:
            self._window = MPI.Win.Allocate_shared(nbytes + PAGE if leader else 0, 1, comm=self._node)
            buffer, _ = self._window.Shared_query(0)
            memory = np.frombuffer(buffer, np.uint8, nbytes + PAGE)
            shared = True
        except MPI.Exception:  # no shared window here: every rank takes a copy
            memory = np.empty(nbytes + PAGE, np.uint8)
            shared = False
        shared = bool(self._node.allreduce(shared, op=MPI.LAND))
        first = -memory.ctypes.data % PAGE  # the arrays from a page boundary on
        if shared:  # the same bytes on every rank, however each maps the window
            first = self._node.bcast(first, root=0)
        memory = memory[first : first + nbytes]
        if comm.rank == 0:
            for name, dtype, start, length in spans:
                into = memory[start : start + dtype.itemsize * length].view(dtype)
                if isinstance(arrays[name], np.ndarray):
                    passes.copy(into, arrays[name])
                else:  # a device array (GPU ranks on several nodes): downloaded straight into the window
                    arrays[name].get(out=into)
        self.received = 0
        if shared:
            if leader:
                self.received = _broadcast(self._leaders, memory)
            quiet_barrier(self._node)  # the node's leader has filled the window (on every core)
        else:
            self.received = _broadcast(comm, memory)
        self.arrays = {name: memory[start : start + dtype.itemsize * length].view(dtype)
                       for name, dtype, start, length in spans}
        self.via = "shared memory" if shared else "broadcast"

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


class GpuArrays:
    """Rank 0's device arrays opened on every rank of a one-node job by CUDA IPC: views of rank 0's
    memory (on its GPU, which the others reach as a peer), by name; close() lets go of them (a
    collective: rank 0 frees nothing before every rank has)."""

    def __init__(self, comm, arrays: dict, opened: list):
        self._comm, self.arrays, self._opened, self.received, self.via = comm, arrays, opened, 0, "gpu"

    @classmethod
    def opened(cls, comm, arrays: dict | None, shape: list, gpu: str) -> "GpuArrays | None":
        """The arrays on every rank, or None on every rank where any rank could not open them
        (ranks on several nodes, rank 0's GPU not visible to a rank, IPC refused)."""
        from mpi4py import MPI

        if node_local(comm)[1] != comm.size:
            return None
        handles = None
        if comm.rank == 0:
            try:
                handles = _handles(arrays)
            except Exception:  # noqa: BLE001 - no IPC here: the host path serves instead
                handles = None
        handles = comm.bcast(handles, root=0)
        if handles is None:
            return None
        views, opened, failed = (dict(arrays), [], None) if comm.rank == 0 else ({}, [], None)
        if comm.rank != 0:
            try:
                views, opened = _open(handles, shape, gpu)
            except Exception as e:  # noqa: BLE001 - any CUDA refusal: the host path serves instead
                failed = f"{type(e).__name__}: {e}"
        if comm.allreduce(failed is not None, op=MPI.LOR):
            _close(opened)
            return None
        return cls(comm, views, opened)

    def close(self) -> None:
        self.arrays = None
        _close(self._opened)
        self._opened = []
        self._comm.Barrier()  # rank 0's arrays outlive every rank's use of them


def gathered(comm, arrays: dict) -> tuple[bool, dict | None]:
    """Every rank's device arrays (the same names and dtypes on every rank), end to end in rank
    order on rank 0's GPU, copied from the ranks' GPUs by CUDA IPC: (True, the arrays) on rank 0,
    (True, None) on the others; (False, None) on every rank where IPC cannot serve (ranks on
    several nodes, a GPU that cannot reach rank 0's as a peer, IPC refused)."""
    import cupy

    if node_local(comm)[1] != comm.size:
        return False, None
    try:
        handles = _handles(arrays)
    except Exception:  # noqa: BLE001 - no IPC here: the host path serves instead
        handles = None
    told = comm.gather((handles, layout(arrays), cupy.cuda.Device().pci_bus_id), root=0)
    together = failed = None
    if comm.rank == 0:
        try:
            together = _copied_together(arrays, told)
        except Exception as e:  # noqa: BLE001 - any CUDA refusal: the host path serves instead
            failed = f"{type(e).__name__}: {e}"
    failed = comm.bcast(failed, root=0)  # (the ranks keep their arrays until rank 0 has copied them)
    return failed is None, together


def _copied_together(arrays: dict, told: list) -> dict:
    """Rank 0: each array of every rank (told: each rank's handles, layout and GPU) end to end."""
    import cupy

    if any(handles is None for handles, _, _ in told):
        raise RuntimeError("a rank could not give IPC handles")
    lengths = [[length for _, _, length in shape] for _, shape, _ in told]
    together = {name: cupy.empty(sum(of[i] for of in lengths), a.dtype) for i, (name, a) in enumerate(arrays.items())}
    at = dict.fromkeys(arrays, 0)
    for rank, (handles, shape, gpu) in enumerate(told):
        views, opened = (arrays, []) if rank == 0 else _open(handles, shape, gpu)
        try:
            for name, view in views.items():
                together[name][at[name] : at[name] + view.size] = view
                at[name] += view.size
        finally:
            _close(opened)
    return together


def _address_range(pointer: int) -> tuple[int, int]:
    """(start, bytes) of the device allocation holding pointer (an IPC handle names a whole
    allocation, and CuPy's pool hands out pieces of them)."""
    import ctypes

    cuda = ctypes.CDLL("libcuda.so.1")
    start, size = ctypes.c_uint64(), ctypes.c_size_t()
    status = cuda.cuMemGetAddressRange_v2(ctypes.byref(start), ctypes.byref(size), ctypes.c_uint64(pointer))
    if status != 0:
        raise RuntimeError(f"cuMemGetAddressRange failed ({status})")
    return start.value, size.value


def _handles(arrays: dict) -> dict:
    """Rank 0: name -> (IPC handle of the allocation holding the array, the array's offset in it),
    once its GPU has finished writing them (IPC orders nothing between processes)."""
    import cupy

    cupy.cuda.Device().synchronize()
    found = {}
    for name, a in arrays.items():
        start, _ = _address_range(a.data.ptr) if a.size else (a.data.ptr, 0)
        found[name] = (bytes(cupy.cuda.runtime.ipcGetMemHandle(start)), a.data.ptr - start) if a.size else None
    return found


def _open(handles: dict, shape: list, gpu: str) -> tuple[dict, list]:
    """Another rank: views of rank 0's arrays mapped into its own GPU's context (read from rank 0's
    GPU as a peer: no context of its own there), and the allocations opened. Refused where this
    rank's GPU cannot reach rank 0's directly (the host path serves then)."""
    import cupy

    own, source = cupy.cuda.runtime.getDevice(), cupy.cuda.runtime.deviceGetByPCIBusId(gpu)
    if source != own and not cupy.cuda.runtime.deviceCanAccessPeer(own, source):
        raise RuntimeError(f"GPU {own} cannot reach GPU {source} as a peer")
    starts, views = {}, {}
    try:
        for name, dtype, length in shape:
            dtype = np.dtype(dtype)
            if handles[name] is None:
                views[name] = cupy.empty(0, dtype)
                continue
            handle, offset = handles[name]
            if handle not in starts:  # an allocation is opened once, however many arrays lie in it
                starts[handle] = cupy.cuda.runtime.ipcOpenMemHandle(handle)  # peer access enabled as needed
            memory = cupy.cuda.UnownedMemory(starts[handle], offset + dtype.itemsize * length, handles, own)
            views[name] = cupy.ndarray(length, dtype, cupy.cuda.MemoryPointer(memory, offset))
    except BaseException:
        _close(list(starts.values()))
        raise
    return views, list(starts.values())


def _close(opened: list) -> None:
    """Let go of the allocations opened (in this rank's GPU's context), once its work on them is done."""
    import cupy

    if opened:
        cupy.cuda.Device().synchronize()  # this rank's copies from them are done
    for start in opened:
        cupy.cuda.runtime.ipcCloseMemHandle(start)
