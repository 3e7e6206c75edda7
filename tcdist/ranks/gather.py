"""A partition store asked for under ranks (--store FILE), written by rank 0 from the parts every
rank builds: a rank sends each part to rank 0 as soon as it has built it (then counts it), and a
thread of rank 0 writes every part, its own and those received, into the one HDF5 file (a file
of the pip h5py takes one writer). Nothing is read back.

Every rank's last message to rank 0 is DONE, sent however its count ended, and rank 0 receives
until it has every DONE: a part begun is always sent whole and always received, so no rank is
left waiting in a send, and MPI is finalised with nothing pending. A rank waits for rank 0's go
(asleep) before it sends a part's arrays, which then move in blocking calls, at memory speed.
After a failure rank 0 stops writing, takes what still comes (at most DONE_WAIT_S) and removes
the unfinished file.
"""

from __future__ import annotations

import queue
import threading
import time

import numpy as np

from tcdist.partition.part import STAT_KEYS, Part, Partitioning
from tcdist.partition.store import StoreWriter
from tcdist.ranks.comm import QUIET_POLL
from tcdist.ranks.guard import collective
from tcdist.ranks.share import CHUNK

_HEADER, _GO, _DATA, _DONE = 81, 82, 83, 84  # tags, on a communicator of the gather's own
_ARRAYS = ("rowptr", "col", "global_id")
DONE_WAIT_S = 30.0  # after a failure, how long rank 0 waits for the other ranks' last words


def open_gather(comm, prepared, held, seed: int, debug: bool = False):
    """This rank's end of the gather, opened on every rank together (a communicator of its own):
    rank 0's StoreGather, with the store's file begun and its thread started, else a PartSender.
    If any rank fails to open, every rank raises, and rank 0's file is removed before its thread
    ever starts (a thread probing the freed communicator made Open MPI abort the job)."""
    lane, opened = comm.Dup(), []

    def open_end():
        opened.append(_open_end(lane, prepared, held, seed))  # kept here too: closed if another rank fails
        return opened[0]

    try:
        gather = collective(comm, open_end, debug=debug)
        collective(comm, gather.start, debug=debug)  # (a thread that cannot start must not leave senders waiting)
    except BaseException:
        if opened:
            opened[0].abandon()
            opened[0].close()
        else:
            lane.Free()
        raise
    return gather


def _open_end(lane, prepared, held, seed: int):
    if lane.rank != 0:
        return PartSender(lane)
    h = prepared.header
    partitioning = Partitioning(parts=None, graph=held.graph, scheme=h["scheme"], prune=h["prune"], seed=seed,
                                assignment=held.shared["assignment"], num_parts=h["parts"])
    writer = StoreWriter(partitioning, prepared.store, replace=False)
    writer.__enter__()
    return StoreGather(lane, writer)


def _wait_quietly(request) -> None:
    """A request completed, waited for in short sleeps (MPI's blocking calls poll a core away).
    Not for moving data: a large message progresses only while MPI is called, so it moved at
    tens of MB/s between sleeps (RMAT-24's 8 parts took 124 s instead of seconds)."""
    while not request.Test():
        time.sleep(QUIET_POLL)


def _chunks(array: np.ndarray):
    flat = array.reshape(-1).view(np.uint8)
    return [flat[start : start + CHUNK] for start in range(0, flat.size, CHUNK)]


class PartSender:
    """A rank other than 0: each part it builds goes to rank 0 (deliver), then DONE (finish)."""

    def __init__(self, lane):
        self.lane, self._started, self._done = lane, False, False

    def deliver(self, part: Part) -> None:
        arrays = [np.ascontiguousarray(getattr(part, name)) for name in _ARRAYS]
        header = {"index": part.index, "n_local": part.n_local, "stats": {k: part.stats[k] for k in STAT_KEYS},
                  "arrays": [(a.dtype.str, a.size) for a in arrays]}
        self.lane.send(header, dest=0, tag=_HEADER)
        _wait_quietly(self.lane.Irecv(np.empty(1, np.uint8), source=0, tag=_GO))  # while rank 0 writes another
        for array in arrays:  # whole, however this rank's count goes on: rank 0 takes every part begun
            for chunk in _chunks(array):
                self.lane.Send(chunk, dest=0, tag=_DATA)

    def start(self) -> None:
        """Every rank has opened: from now on its last word to rank 0 is DONE."""
        self._started = True

    def finish(self) -> None:
        if self._started and not self._done:
            self._done = True
            self.lane.send(None, dest=0, tag=_DONE)

    abandon = finish

    def close(self) -> None:
        self.lane.Free()


class StoreGather:
    """Rank 0: a thread that writes rank 0's own parts (deliver) and receives and writes the other
    ranks', until every other rank has said DONE; finish() then seals the store."""

    def __init__(self, lane, writer: StoreWriter):
        self.lane, self.writer = lane, writer
        self._own, self._done = queue.SimpleQueue(), set()
        self._closing, self._discard, self.error = threading.Event(), False, None
        self._thread = threading.Thread(target=self._run, name="tcdist-store", daemon=True)

    def start(self) -> None:
        """Every rank has opened: receive and write until each has said DONE."""
        self._thread.start()

    def deliver(self, part: Part) -> None:
        self._own.put(part)

    def _run(self) -> None:
        from mpi4py import MPI

        status = MPI.Status()
        while True:
            try:
                busy = self._step(status)
            except BaseException as e:  # noqa: BLE001 - raised by finish(); the thread goes on taking what comes
                self.error, busy = self.error or e, True
            if busy is None:
                return
            if not busy:
                time.sleep(QUIET_POLL)

    def _step(self, status) -> bool | None:
        """Write a part of rank 0's or take one message: whether there was work, None when all is done."""
        from mpi4py import MPI

        if not self._own.empty():
            self._write(self._own.get())
            return True
        if not self.lane.iprobe(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=status):
            done = self._closing.is_set() and len(self._done) == self.lane.size - 1 and self._own.empty()
            return None if done else False
        source, tag = status.Get_source(), status.Get_tag()
        if tag == _DATA:  # the rest of a part whose receiving failed: taken, so that its sender goes on
            self.lane.Recv(np.empty(status.Get_count(MPI.BYTE), np.uint8), source=source, tag=_DATA)
        elif tag == _DONE:
            self.lane.recv(source=source, tag=_DONE)
            self._done.add(source)
        else:
            self._write(self._received(source, self.lane.recv(source=source, tag=_HEADER)))
        return True

    def _received(self, source: int, header: dict) -> Part:
        self.lane.Send(np.ones(1, np.uint8), dest=source, tag=_GO)  # first: its sender never waits for a go
        rowptr, col, global_id = arrays = [np.empty(size, dtype) for dtype, size in header["arrays"]]
        for array in arrays:
            for chunk in _chunks(array):
                self.lane.Recv(chunk, source=source, tag=_DATA)
        return Part(header["index"], rowptr, col, global_id, header["n_local"], header["stats"])

    def _write(self, part: Part) -> None:
        if not self._discard and self.error is None:  # (else taken, so that its sender goes on, and dropped)
            self.writer.add(part)

    def finish(self) -> None:
        """Every rank has counted: wait for the last parts to be written, then seal the store."""
        self._closing.set()
        self._thread.join()
        writer, self.writer = self.writer, None
        if self.error is not None:  # the file removed; a failed write (a full disk) said in one line
            writer.__exit__(type(self.error), self.error, self.error.__traceback__)
            raise self.error
        writer.__exit__(None, None, None)

    def abandon(self) -> None:
        """The run failed: write no more, take what the other ranks still send, remove the file."""
        if self.writer is None:
            return
        self._discard = True
        self._closing.set()
        if self._thread.ident is not None:  # (not started: no other rank sends)
            self._thread.join(DONE_WAIT_S)
        writer, self.writer = self.writer, None
        writer.__exit__(RuntimeError, RuntimeError("run failed"), None)

    def close(self) -> None:
        if not self._thread.is_alive():  # (a thread still waiting for a lost rank keeps its communicator)
            self.lane.Free()
