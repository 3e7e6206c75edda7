"""The communicator: mpi4py's under an MPI launcher, a serial stand-in otherwise.

Nothing here imports mpi4py unless a launcher started this process, so one process
without mpirun never initialises MPI. The stand-in has the few methods tcdist uses, with
mpi4py's names, so every step is written once for both.
"""

from __future__ import annotations

import os
import time

from tcdist.errors import TcdistError

# Variables that MPI launchers set in every process they start (Open MPI, MPICH/Hydra and
# Intel MPI, PMIx, MVAPICH); Slurm's srun sets PMI_* or PMIX_* with --mpi=pmi2/pmix.
_RANK_VARIABLES = ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK")
_SIZE_VARIABLES = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE")


class CommTypeError(TcdistError, TypeError):
    """The comm given is no communicator."""


class SerialComm:
    """One process, no MPI: a communicator of size 1."""

    rank = 0
    size = 1

    def Get_rank(self):
        return 0

    def Get_size(self):
        return 1

    def bcast(self, obj, root=0):
        return obj

    def allgather(self, obj):
        return [obj]

    def gather(self, obj, root=0):
        return [obj]

    def allreduce(self, obj, op=None):
        return obj

    def Barrier(self):
        pass

    def Dup(self):
        return self

    def Free(self):
        pass


def _srun_tasks():
    """Tasks of this Slurm job step (srun -n), or 0 outside one."""
    try:
        return int(os.environ.get("SLURM_STEP_NUM_TASKS", "0"))
    except ValueError:
        return 0


# how to install mpi4py, on a cluster (the site's MPI: the mpi extra's MPICH wheel knows neither its network nor its
# launcher) and elsewhere (docs/install.md)
INSTALL_MPI4PY = ("on a cluster, load the site's MPI module and build mpi4py against it: MPICC=mpicc pip install "
                  "--no-binary=mpi4py mpi4py; on a workstation, pip install 'tcdist[mpi]'")


def launched_by_mpi() -> bool:
    """True when an MPI launcher (mpirun, mpiexec, srun with several tasks) started this process."""
    return any(v in os.environ for v in _RANK_VARIABLES + _SIZE_VARIABLES) or _srun_tasks() > 1


def _launcher_says(names) -> int | None:
    """The first of the launcher's variables names that is set, as an integer (0 if it is not
    one), or None where none is."""
    for name in names:
        if name in os.environ:
            try:
                return int(os.environ[name])
            except ValueError:
                return 0
    return None


def launch_rank() -> int:
    """This process's rank as the launcher set it, read before MPI starts (0 without a launcher)."""
    rank = _launcher_says(_RANK_VARIABLES)
    if rank is not None:
        return rank
    return int(os.environ.get("SLURM_PROCID", "0")) if _srun_tasks() > 1 else 0


def _launched_size() -> int:
    """The number of processes the launcher started, as it told them (0 where it did not)."""
    size = _launcher_says(_SIZE_VARIABLES)
    return _srun_tasks() if size is None else size


def world():
    """COMM_WORLD duplicated once for tcdist under a launcher of several processes, else the serial
    stand-in: one process under a launcher runs as one process does, with no MPI to start."""
    if not launched_by_mpi() or _launched_size() == 1:
        return SerialComm()
    try:
        from mpi4py import MPI
    except ImportError:
        raise TcdistError(f"started by an MPI launcher but mpi4py is not installed: {INSTALL_MPI4PY}") from None
    comm = MPI.COMM_WORLD.Dup()
    if comm.size == 1 and _srun_tasks() > 1:
        raise TcdistError(f"srun started {_srun_tasks()} tasks but MPI sees each as a world of 1: this MPI was not "
                          "started through srun's PMI (use srun --mpi=pmi2 or --mpi=pmix, or mpirun)")
    return comm


def as_comm(comm):
    """The communicator a run uses: the caller's (duplicated, so tcdist's messages stay apart) or serial."""
    if comm is None:
        return SerialComm()
    if not hasattr(comm, "Get_rank") or not hasattr(comm, "allgather"):
        raise CommTypeError(f"comm must be an mpi4py communicator, got {type(comm).__name__}")
    return comm.Dup()


def is_serial(comm) -> bool:
    return isinstance(comm, SerialComm)


QUIET_POLL = 0.002  # seconds a rank sleeps between looks at a barrier it waits in


def quiet_barrier(comm) -> None:
    """comm's barrier, waited in short sleeps: MPI's blocking calls poll, so a rank waiting in one
    for another (rank 0 reading and building, a slower rank counting) took a whole core from the
    ranks of its host still working, for as long as it waited."""
    if is_serial(comm):
        return
    request = comm.Ibarrier()
    while not request.Test():
        time.sleep(QUIET_POLL)


def sum_to_root(comm, counts):
    """The element-wise exact sum over ranks of a uint64 array, on rank 0 (None elsewhere)."""
    if is_serial(comm):
        return counts
    import numpy as np
    from mpi4py import MPI

    total = np.zeros_like(counts) if comm.rank == 0 else None
    comm.Reduce(counts, total, op=MPI.SUM, root=0)
    return total


def sum_uint64(comm, value: int) -> int:
    """The exact sum over ranks of a non-negative count, as an MPI reduce of uint64."""
    if is_serial(comm):
        return value
    import numpy as np
    from mpi4py import MPI

    send, total = np.array([value], np.uint64), np.zeros(1, np.uint64)
    comm.Allreduce(send, total, op=MPI.SUM)
    return int(total[0])


def on_my_node(comm, value) -> list:
    """value of every rank of this node (this rank's included), in rank order."""
    if is_serial(comm):
        return [value]
    from mpi4py import MPI

    node = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.rank)
    try:
        return node.allgather(value)
    finally:
        node.Free()


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
