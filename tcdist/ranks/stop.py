"""A signal stops the whole job, within seconds, whichever process it reaches.

A rank whose process receives SIGINT, SIGTERM or SIGHUP (from the launcher, from Slurm's scancel
or time limit, or sent to that one process) tells every other rank at once, on a communicator of
the stop's own that a thread of each rank listens on; each rank raises the signal in its own
process, so its main thread unwinds as one process would (its temporary files removed). A main
thread that cannot unwind (waiting inside an MPI collective or a compiled loop) is not waited
for past GRACE_S: its temporaries are removed from another thread. Then every rank waits until
all have cleaned up (DONE), at most LAST_WAIT_S past that, and ends with 128 + the signal's
number without MPI_Finalize: a launcher ends the job's other processes as soon as one leaves.
"""

from __future__ import annotations

import os
import sys
import threading
import time

from tcdist import signals

GRACE_S = 4.0  # the main thread's time to unwind before its temporaries are removed for it
LAST_WAIT_S = 3.0  # then the time to wait for every other rank to have removed its own
_STOP, _DONE, _CLOSE = 75, 76, 77
_POLL_S = 0.05


class JobStop:
    """The stop of one MPI job of several ranks (the communicator is duplicated for it)."""

    def __init__(self, comm):
        from mpi4py import MPI

        self._any = MPI.ANY_SOURCE
        self.comm = comm.Dup()
        self.rank, self.size = self.comm.rank, self.comm.size
        self.signum = None
        self.closing = False
        self.started = 0.0
        self.direct = False  # the signal reached this process itself (not another rank's)
        self.done = set()
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
            if tag == _DONE:
                self.done.add(status.Get_source())
            elif tag == _STOP:
                self.stop(signum, direct=False)

    def stop(self, signum: int, direct: bool = True) -> None:
        """Stop this rank and (where the signal came to it) every other."""
        with self.lock:
            if self.signum is not None or self.closing:  # a job that has ended is not stopped
                return
            self.signum, self.direct, self.started = signum, direct, time.monotonic()
        if direct:
            self.sent += [self.comm.isend(signum, dest=r, tag=_STOP) for r in range(self.size) if r != self.rank]
        else:
            os.kill(os.getpid(), signum)  # this main thread raises Stopped at its next step, as a signal of its own
        threading.Thread(target=self._after_grace, name="tcdist-stop-grace", daemon=True).start()

    def _after_grace(self) -> None:
        time.sleep(GRACE_S)
        self.finish(from_main=False)

    @property
    def says(self) -> bool:
        """Whether this rank prints the stop: rank 0, and a rank the signal itself reached."""
        return self.rank == 0 or self.direct

    def finish(self, from_main: bool = True) -> None:
        """Remove this rank's temporaries, wait (a while) for the others to have removed theirs,
        and end the process with 128 + the signal's number."""
        with self.lock:
            first = not self.cleaned.is_set()
            self.cleaned.set()
        if not first and not from_main:
            return  # the main thread is finishing
        signals.remove_temporaries()
        if not from_main and self.says:
            signals.say_stopped(self.signum)
        self.sent += [self.comm.isend(None, dest=r, tag=_DONE) for r in range(self.size) if r != self.rank]
        deadline = self.started + GRACE_S + LAST_WAIT_S  # a stuck rank cleans up at GRACE_S
        while len(self.done) < self.size - 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(128 + self.signum)

    def close(self) -> None:
        """The job ended without a signal: stop listening."""
        with self.lock:
            self.closing = True
        self.comm.send(None, dest=self.rank, tag=_CLOSE)
        self.listener.join()
        self.comm.Free()
