"""A signal stops the whole job, within seconds, whichever process it reaches.

A rank whose process receives SIGINT, SIGTERM or SIGHUP (from the launcher, from Slurm's scancel
or time limit, or sent to that one process) tells every other rank at once, on a communicator of
the stop's own that a thread of each rank listens on; each rank raises the signal in its own
process, so it is stopped as one process would be (its temporary files removed at once). A main
thread that has not ended the run GRACE_S later (waiting inside an MPI collective or a compiled
loop) is not waited for: the rank ends from the stop's thread. Then every rank waits until all
have cleaned up (a barrier of the stop's own), at most LAST_WAIT_S past that, and ends with 128 +
the signal's number without MPI_Finalize, which would wait for ranks stuck in a collective. They
leave together: Hydra kills the other ranks once one has left, and a rank it killed makes the
job's status 9, not the signal's. MPI_Finalize is also what removes MPICH's shared memory files
(/dev/shm/mpich_*), so a rank removes those it maps itself first (end_job).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from contextlib import suppress

from tcdist import signals

GRACE_S = signals.UNWIND_S  # the main thread's time to end the run before the stop's thread ends it
LAST_WAIT_S = 1.5  # then the time to wait for every other rank to have removed its temporaries
_SHARED_MEMORY = "/dev/shm/mpich_"  # MPICH's shared memory files, removed by MPI_Finalize
_STOP, _CLOSE = 75, 77
_POLL_S = 0.05


class JobStop:
    """The stop of one MPI job of several ranks (the communicator is duplicated for it)."""

    def __init__(self, comm):
        from mpi4py import MPI

        self._any = MPI.ANY_SOURCE
        self.comm = comm.Dup()
        self.ending = comm.Dup()  # end_together's barrier: never matched with finish's
        self.rank, self.size = self.comm.rank, self.comm.size
        self.signum = None
        self.closing = False
        self.started = 0.0
        self.lock = threading.Lock()
        self.cleaned = threading.Event()
        self.sent = []
        self.listener = threading.Thread(target=self._listen, name="tcdist-stop", daemon=True)
        self.listener.start()

    def _listen(self) -> None:
        from mpi4py import MPI

        status = MPI.Status()
        while True:
            while not self.comm.iprobe(source=self._any, tag=MPI.ANY_TAG, status=status):
                time.sleep(_POLL_S)  # a blocking receive would spin a core for the whole run
            signum = self.comm.recv(source=status.Get_source(), tag=status.Get_tag())
            tag = status.Get_tag()
            if tag == _CLOSE:
                return
            if tag == _STOP:
                self.stop(signum, direct=False)

    def stop(self, signum: int, direct: bool = True) -> None:
        """Stop this rank and (where the signal came to it) every other."""
        with self.lock:
            if self.signum is not None or self.closing:  # a job that has ended is not stopped
                return
            self.signum, self.started = signum, time.monotonic()
        if direct:
            self.sent += [self.comm.isend(signum, dest=r, tag=_STOP) for r in range(self.size) if r != self.rank]
        else:
            os.kill(os.getpid(), signum)  # stopped as by a signal of its own: recorded, temporaries removed
        threading.Thread(target=self._after_grace, name="tcdist-stop-grace", daemon=True).start()

    def _after_grace(self) -> None:
        time.sleep(GRACE_S)
        self.finish(from_main=False)

    @property
    def says(self) -> bool:
        """Whether this rank prints the stop: rank 0 alone, which every stop reaches (a launcher
        passes a signal to every rank: each saying it would repeat the line)."""
        return self.rank == 0

    def finish(self, from_main: bool = True) -> None:
        """Remove this rank's temporaries, wait (a while) for the others to have removed theirs,
        and end the process with 128 + the signal's number."""
        with self.lock:
            if self.closing:  # the job ended first (end_together): the signal changes nothing
                return
            first = not self.cleaned.is_set()
            self.cleaned.set()
        if not first:
            if not from_main:
                return
            threading.Event().wait()  # the stop's thread is ending the process (a second barrier would match none)
        signals.final()
        signals.remove_temporaries()
        if not from_main and self.says:
            signals.say_stopped(self.signum)
        _let_go()  # before the barrier: past it, the ranks only leave, within a millisecond of each other
        sys.setswitchinterval(1e-4)  # (the main thread lets this one have the GIL at once)
        cleaned = self.comm.Ibarrier()
        deadline = self.started + GRACE_S + LAST_WAIT_S  # a stuck rank cleans up at GRACE_S
        while not cleaned.Test():
            if time.monotonic() > deadline:  # the others ended without this stop (or are stuck): say it here
                signals.say_stopped(self.signum)
                break
            time.sleep(2e-4)
        os._exit(128 + self.signum)

    def end_together(self, within: float | None = None) -> None:
        """Wait, asleep, until every rank's work is over, then close: the job ends on every rank at
        once, and a signal from then on changes nothing (as one in Python's exit). One before is
        the stop's: its thread ends the process. within: seconds to wait at most (a rank that
        failed: the others may have ended, or wait elsewhere for the launcher to end them)."""
        together = self.ending.Ibarrier()
        deadline = None if within is None else time.monotonic() + within
        while not together.Test():
            if deadline is not None and time.monotonic() > deadline:
                break
            time.sleep(_POLL_S / 5)
        self.close()

    def close(self) -> None:
        """This rank's work is over (a signal from now on stops no rank): stop listening, once."""
        with self.lock:
            if self.closing:
                return
            stopping = self.signum is not None
            self.closing = not stopping
        if stopping:
            threading.Event().wait()  # a stop began first: its thread ends the process
        self.comm.send(None, dest=self.rank, tag=_CLOSE)
        self.listener.join()
        self.comm.Free()
        self.ending.Free()


def end_job(code: int) -> None:
    """End this rank's process now, without MPI_Finalize, with the exit status code."""
    _let_go()
    os._exit(code)


def _let_go() -> None:
    """What a rank does before it leaves without MPI_Finalize: flush its output, and remove the MPI
    library's shared memory files it maps (what MPI_Finalize would)."""
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        with open("/proc/self/maps") as maps:
            files = {line.split(None, 5)[5].strip() for line in maps if _SHARED_MEMORY in line}
    except OSError:  # no /proc: nothing to find them by
        files = set()
    for path in files:
        with suppress(OSError):  # removed already (by another rank of this host: "PATH (deleted)")
            os.remove(path)
