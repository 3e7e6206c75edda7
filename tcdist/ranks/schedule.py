"""Which rank counts which part: static (longest processing time first) or dynamic (the next
part to whichever rank is idle). The static plan is a pure function of (work, ranks)."""

from __future__ import annotations

import heapq
import threading
import time

from tcdist.errors import OptionError


def by_work(work: dict[int, int]) -> list[int]:
    """Parts heaviest first (ties by index), the order both schedules hand them out in."""
    return sorted(work, key=lambda part: (-work[part], part))


def static_plan(work: dict[int, int], ranks: int) -> list[list[int]]:
    """LPT: each part, heaviest first, to the rank with the least work so far (ties: lowest rank).
    work maps part index to its estimated work; parts of one rank are listed heaviest first."""
    plan: list[list[int]] = [[] for _ in range(ranks)]
    load = [(0, r) for r in range(ranks)]
    for part in by_work(work):
        total, rank = heapq.heappop(load)
        plan[rank].append(part)
        heapq.heappush(load, (total + max(work[part], 1), rank))
    return plan


_REQUEST, _REPLY = 71, 72
_POLL_S = 0.001


class DynamicQueue:
    """Parts handed out one at a time, heaviest first, by request and reply.

    Rank 0 answers requests from a thread while its main thread counts its own parts, so no
    rank waits for another to finish a kernel; -1 tells a rank that nothing is left. A rank
    that stops early (it or another rank failed) says so in close(), so rank 0's thread still
    ends. The queue has its own communicator, so its messages never meet another collective.
    Needs MPI_THREAD_MULTIPLE (mpi4py asks for it by default).
    """

    def __init__(self, comm, order: list[int]):
        from mpi4py import MPI

        if MPI.Query_thread() < MPI.THREAD_MULTIPLE:
            raise OptionError("{schedule} dynamic needs an MPI with MPI_THREAD_MULTIPLE; use {schedule} static")
        self._comm = comm.Dup()
        self._order = order
        self._next = 0
        self._finished = False
        self._lock = threading.Lock()
        self._server = None
        if self._comm.rank == 0:
            self._server = threading.Thread(target=self._serve, name="tcdist-scheduler", daemon=True)
            self._server.start()

    def _take(self) -> int:
        with self._lock:
            if self._next >= len(self._order):
                return -1
            self._next += 1
            return self._order[self._next - 1]

    def _serve(self):
        from mpi4py import MPI

        finished = 0
        status = MPI.Status()
        while finished < self._comm.size - 1:
            while not self._comm.iprobe(source=MPI.ANY_SOURCE, tag=_REQUEST, status=status):
                time.sleep(_POLL_S)  # a blocking receive would spin a core beside rank 0's own count
            leaving = self._comm.recv(source=status.Get_source(), tag=_REQUEST)
            part = -1 if leaving else self._take()
            finished += part < 0
            self._comm.send(part, dest=status.Get_source(), tag=_REPLY)

    def __iter__(self):
        while True:
            if self._comm.rank == 0:
                part = self._take()
            else:
                part = self._comm.sendrecv(False, dest=0, sendtag=_REQUEST, source=0, recvtag=_REPLY)
            if part < 0:
                self._finished = True
                return
            yield part

    def close(self):
        """Leave the queue (told rank 0 already if it ran dry); rank 0 waits for every rank to leave."""
        if self._comm.rank != 0 and not self._finished:
            self._comm.sendrecv(True, dest=0, sendtag=_REQUEST, source=0, recvtag=_REPLY)
        if self._server is not None:
            self._server.join()
        self._comm.Free()
