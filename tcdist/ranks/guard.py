"""Failures under ranks: every rank ends the same way, with the one message rank 0 prints, and
never waits forever in a collective for a rank that has failed.

A step all ranks take together (open a store, rank 0's partitioning) reports its error in an
allgather. Work ranks do on their own (counting their parts) cannot stop at a collective, so a
failing rank sends every other rank a notice; they look for it between parts, stop within one
part and join the same allgather. Every rank then exits with the same status (2 for bad input)
by itself: MPI_Abort would end the job at once, but leaves the launcher's exit status to chance.
"""

from __future__ import annotations

import socket
import traceback
from collections.abc import Callable

from tcdist.errors import TcdistError
from tcdist.ranks.comm import QUIET_POLL, is_serial, quiet_barrier

_FAILED = 73  # tag of a failure notice


class RemoteError(TcdistError):
    """Another rank's error, raised on this rank so every rank ends the same way; rank 0 prints it."""


class PeerFailed(Exception):
    """Another rank failed: this one stops its own work and reports nothing of its own."""


def _message(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, TcdistError) else f"{type(exc).__name__}: {exc}"


def _attempt(step: Callable, debug: bool):
    """(result, None) or (None, the exception)."""
    try:
        return step(), None
    except (Exception, KeyboardInterrupt) as e:  # reported on every rank, then raised
        if debug and not isinstance(e, PeerFailed):
            traceback.print_exc()
        return None, e


def _settle(comm, error: BaseException | None) -> list:
    """Every rank learns every rank's failure; raises on every rank if there was one: the failing
    rank its own exception, the others a RemoteError naming the first failing rank."""
    from mpi4py import MPI

    own = None if error is None or isinstance(error, PeerFailed) else \
        (isinstance(error, TcdistError), _message(error), socket.gethostname(), MPI.COMM_WORLD.Get_rank())
    failures = comm.allgather(own)
    if own is not None:
        raise error
    for failed in failures:
        if failed is not None:  # named by its rank in the job: comm may hold only the ranks that count
            user_error, message, host, rank = failed
            raise RemoteError(message if rank == 0 else f"rank {rank} ({host}): {message}") if user_error else \
                RemoteError(f"rank {rank} ({host}) failed: {message}")
    return failures


def collective(comm, step: Callable, *, root_only: bool = False, shared: Callable | None = None,
               meanwhile: Callable | None = None, debug: bool = False):
    """Run step() on every rank (or on rank 0 alone) and return its result on every rank (with
    root_only, rank 0's result there and shared(result), by default all of it, on the others).
    meanwhile, with root_only: on the others, called before they wait for rank 0; it may start
    work of its own and return a callable that waits for it, called once rank 0 is done. If
    anything fails anywhere, every rank raises (see _settle)."""
    if is_serial(comm):
        return step()
    finish = error = None
    if not root_only or comm.rank == 0:
        result, error = _attempt(step, debug)
    else:
        result = None
        if meanwhile is not None:
            finish, error = _attempt(meanwhile, debug)
    if root_only:
        quiet_barrier(comm)  # the others wait for rank 0 without taking its cores
        if finish is not None:
            error = _attempt(finish, debug)[1]
    _settle(comm, error)
    if not root_only:
        return result
    told = comm.bcast((shared or (lambda made: made))(result) if comm.rank == 0 else None)
    return result if comm.rank == 0 else told


def independently(comm, work: Callable[[Callable[[], None]], object], *, then: Callable[[], None] | None = None,
                  debug: bool = False):
    """Run work(check) on every rank, each on its own, and return its result there. check() is
    called between units of work: it raises PeerFailed once another rank has failed. then(), if
    given, runs after work on every rank, once a failure's notices are out (it may wait for the
    other ranks: rank 0's scheduler does). Every rank raises if any failed, as in collective."""
    if is_serial(comm):
        try:
            return work(lambda: None)
        finally:
            if then is not None:
                then()
    from mpi4py import MPI

    notices = comm.Dup()
    sent = []

    def check():
        if notices.iprobe(source=MPI.ANY_SOURCE, tag=_FAILED):
            raise PeerFailed

    def step():
        try:
            return work(check)
        except PeerFailed:
            raise
        except BaseException:
            sent.extend(notices.isend(None, dest=r, tag=_FAILED) for r in range(comm.size) if r != comm.rank)
            raise
        finally:
            if then is not None:
                then()

    result, error = _attempt(step, debug)
    try:
        quiet_barrier(comm)  # a rank done first waits without taking a core from those still counting
        failures = comm.allgather(error is not None and not isinstance(error, PeerFailed))
        for rank, failed in enumerate(failures):  # take every notice sent, so none is left behind
            if failed and rank != comm.rank:
                notices.recv(source=rank, tag=_FAILED)
        MPI.Request.waitall(sent)
    finally:
        notices.Free()
    _settle(comm, error)
    return result


_SPIN = 1e-3  # seconds a watched wait looks without sleeping: an exchange's peers mostly arrive within it


class Watched:
    """A communicator for a step whose ranks exchange arrays between stretches of work any of them
    may fail in (the GPU build: out of memory on one rank): each collective starts once every rank
    has reached it (a nonblocking barrier), and that wait and a wait for messages look for a
    failure notice meanwhile; a rank that fails sends one (failed()), and the others raise
    PeerFailed instead of waiting for it forever. Its communicators are duplicates of comm's."""

    def __init__(self, comm):
        self.comm, self.notices = comm.Dup(), comm.Dup()
        self.rank, self.size = comm.rank, comm.size

    def waitall(self, requests) -> None:
        """MPI.Request.Waitall(requests), raising PeerFailed once another rank has failed."""
        import time

        from mpi4py import MPI

        began = time.perf_counter()
        while not MPI.Request.Testall(requests):
            if self.notices.iprobe(source=MPI.ANY_SOURCE, tag=_FAILED):
                raise PeerFailed
            time.sleep(0 if time.perf_counter() - began < _SPIN else QUIET_POLL)

    def Barrier(self) -> None:  # noqa: N802 (mpi4py's name)
        self.waitall([self.comm.Ibarrier()])

    def allgather(self, value):
        self.Barrier()
        return self.comm.allgather(value)

    def alltoall(self, values):
        self.Barrier()
        return self.comm.alltoall(values)

    def bcast(self, value, root: int = 0):
        self.Barrier()
        return self.comm.bcast(value, root)

    def Iallreduce(self, send, receive, op):  # noqa: N802
        self.Barrier()
        return self.comm.Iallreduce(send, receive, op)

    def Isend(self, buffer, dest: int, tag: int):  # noqa: N802
        return self.comm.Isend(buffer, dest, tag)

    def Irecv(self, buffer, source: int, tag: int):  # noqa: N802
        return self.comm.Irecv(buffer, source, tag)

    def failed(self) -> None:
        """Tell every other rank this one has failed (the notices kept, not waited for: it is ending)."""
        others = [rank for rank in range(self.size) if rank != self.rank]
        self._sent = [self.notices.isend(None, dest=rank, tag=_FAILED) for rank in others]

    def free(self) -> None:
        """Let go of the duplicates, on every rank together, once the step has succeeded on all."""
        self.notices.Free()
        self.comm.Free()


def watched(comm, step: Callable, debug: bool = False):
    """step(watching), a Watched of comm, on every rank, and its result there; where a rank fails,
    every rank raises as in collective, none waiting forever for the failed one."""
    if is_serial(comm):
        return step(comm)
    watching = Watched(comm)

    def attempt():
        try:
            return step(watching)
        except PeerFailed:
            raise
        except BaseException:
            watching.failed()
            raise

    result, error = _attempt(attempt, debug)
    _settle(comm, error)
    watching.free()  # (every rank is through: a failure leaves them, and the notices in them, to the ending process)
    return result
