"""Ending on a signal: SIGINT, SIGTERM and SIGHUP (Ctrl-C, a Slurm time limit or scancel, a
closed terminal) end tcdist with 128 + the signal's number and one line, every temporary file
removed.

The handler only remembers the signal; it never raises. An exception raised from a handler
lands in whatever the main thread runs at that moment, library code included: Numba, boxing a
compiled function's result, calls Python to unpickle the array's type and used the NULL an
exception made of it (SIGSEGV); h5py swallowed it inside its callbacks; threading's locks turned
it into a RuntimeError. tcdist's own code asks ``check()`` at safe points instead: before a file
is put in place (``placing``), when a command ends.

Python runs a handler only between bytecodes of the main thread, never while that thread waits
inside C (an MPI collective, a compiled loop). So the signal is also written to a pipe
(signal.set_wakeup_fd) that a thread of its own reads at once: it removes the files named by
``temporary`` (a launcher may follow SIGTERM with SIGKILL soon after), then runs the
``on_signal`` callbacks: ranks/stop.py tells the other ranks; for one process,
``end_when_stuck`` ends it UNWIND_S later wherever its main thread is (in a compiled loop,
waiting for its threads), unless that thread has ended the run by then. An end from another
thread first takes ``final()``: an output being put in place is in place and named by the line
that says the run stopped, and none is put in place after it.
"""

import atexit
import os
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager

HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_received = None
_temporaries: Counter = Counter()  # path -> how many blocks hold it a temporary (they may nest)
_written: list = []  # the outputs this run has put in place
_callbacks: list[Callable[[int], None]] = []
_wakeup = None  # the pipe's end the C handler writes each signal's number to
_said = threading.Lock()  # held by the one say_stopped that prints
_placing = threading.Lock()  # held while an output is put in place; taken for good by an end from another thread
UNWIND_S = 0.5  # a process still running this long after a signal is ended (end_when_stuck)


class Stopped(BaseException):
    """A signal ended the run, raised by check() (a BaseException, so that no `except Exception` keeps it)."""

    def __init__(self, signum):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _handler(signum, frame):
    global _received
    _received = _received or signum  # (raising here would raise inside whatever runs: see the module's doc)


def install():
    """Handle the signals in this (main) thread; the CLI does this, the library leaves them alone."""
    global _said, _wakeup
    _written.clear()  # a new run (the CLI's main, also called again in one process) says its own stop
    _said = threading.Lock()
    for signum in HANDLED:
        signal.signal(signum, _handler)
    if _wakeup is None:  # one pipe and one watching thread for the process, however often installed
        atexit.register(_ignore)
        read, _wakeup = os.pipe()
        os.set_blocking(_wakeup, False)
        threading.Thread(target=_watch, args=(read,), name="tcdist-signals", daemon=True).start()
    signal.set_wakeup_fd(_wakeup, warn_on_full_buffer=False)


def reclaim() -> None:
    """The handlers put back where a library started since has put its own in their place: UCX,
    started by MPI_Init, takes SIGHUP for its debug mode (a rank sent SIGHUP ran on to exit 0)."""
    for signum in HANDLED:
        signal.signal(signum, _handler)


def _ignore() -> None:
    """At exit, the run's outcome settled: a signal is ignored. (Python's exit then gives a handled
    signal its default action back, which killed a process that had printed its result, and a rank
    in MPI_Finalize before MPICH removed its shared memory.)"""
    for signum in HANDLED:
        signal.signal(signum, signal.SIG_IGN)


def _watch(read: int) -> None:
    """As each handled signal arrives: remove the run's temporary files (the main thread may be
    inside compiled code for a while, and a launcher may send SIGKILL soon after SIGTERM), then
    tell every on_signal callback."""
    global _received
    while True:
        for signum in os.read(read, 64):
            if signum in HANDLED:
                _received = _received or signum  # a file put in place from now on would be a removed one
                remove_temporaries()
                for callback in list(_callbacks):
                    callback(signum)


@contextmanager
def on_signal(callback: Callable[[int], None]) -> Iterator[None]:
    """Inside the block, callback(signum) runs on the watching thread when a handled signal arrives;
    a signal that came before it raises Stopped at its start."""
    _callbacks.append(callback)
    try:
        check()  # after the append: a signal either finds the callback or is found here
        yield
    finally:
        _callbacks.remove(callback)


def name(signum: int) -> str:
    return signal.Signals(signum).name


def say_stopped(signum: int) -> None:
    """The one line a stopped run ends with, in one write (a launcher merges its ranks' output), once."""
    if not _said.acquire(blocking=False):
        return
    sys.stderr.write(f"tcdist: stopped by {name(signum)} (temporary files removed{already_written()})\n")
    sys.stderr.flush()


def written(path) -> None:
    """path was put in place (inside placing()): a stop or an error from now on does not undo it, and says so."""
    _written.append(path)


def already_written() -> str:
    """'; already written: FILE, ...' of the outputs this run has put in place, or '': what the
    line that ends a run after them adds."""
    return f"; already written: {', '.join(map(str, _written))}" if _written else ""


@contextmanager
def placing() -> Iterator[None]:
    """Put an output in place (and call written()) inside the block: never after a signal, and an
    end from another thread (final()) waits for it."""
    with _placing:
        check()
        yield


def final() -> None:
    """Before ending the process from a thread other than the main one: an output being put in
    place is in place (and written() names it), and none is from now on. Never released."""
    _placing.acquire()


def end_when_stuck(signum: int) -> None:
    """An on_signal callback for one process: if it has not ended UNWIND_S from now, say so and end
    it with 128 + signum (its temporaries are gone already; its outputs are committed or not)."""
    threading.Thread(target=_end_after_unwind, args=(signum,), name="tcdist-signals-end", daemon=True).start()


def _end_after_unwind(signum: int) -> None:
    time.sleep(UNWIND_S)
    final()
    try:
        remove_temporaries()  # (one the main thread made since the signal)
        say_stopped(signum)  # (not stdout's flush: a reader that has stopped reading would hold it)
    finally:
        os._exit(128 + signum)


def check():
    """Raise Stopped if a signal arrived, even one whose exception was swallowed on the way."""
    if _received is not None:
        raise Stopped(_received)


def received():
    """The signal that asked tcdist to stop, or None. An exception of another kind while one is
    pending is the signal's doing (a temporary file the watching thread removed while it was
    written, say), so the run ends as stopped by it."""
    return _received


@contextmanager
def temporary(path: str) -> Iterator[str]:
    """path is a temporary file of this run inside the block: removed if the run must end at once."""
    hold(path)
    try:
        yield path
    finally:
        let_go(path)


def hold(path: str) -> None:
    """path is a temporary file of this run (a lock, say) until let_go(path): removed if the run must end at once."""
    _temporaries[path] += 1


def let_go(path: str) -> None:
    _temporaries[path] -= 1
    if not _temporaries[path]:
        del _temporaries[path]


def remove_temporaries() -> None:
    """Remove every temporary file of this run (a process ending without unwinding)."""
    for path in list(_temporaries):
        try:
            os.remove(path)
        except OSError:
            pass
