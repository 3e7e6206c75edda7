"""Ending on a signal: SIGINT, SIGTERM and SIGHUP (Ctrl-C, a Slurm time limit or scancel, a
closed terminal) unwind tcdist like an error, so every temporary file is removed, and the
process exits with 128 + the signal's number.

The handler both raises and remembers: a library can swallow an exception raised inside its
own callbacks (h5py did, and a run then ended with status 0 after a partial write), so
``check()`` is asked again before a file is put in place and when the command ends.

Python runs a handler only between bytecodes of the main thread, never while that thread waits
inside C (an MPI collective, a compiled loop). So the signal is also written to a pipe
(signal.set_wakeup_fd) that a thread of its own reads at once: ``on_signal`` callbacks run
there (ranks/stop.py tells the other ranks and, if the main thread stays stuck, ends the
process), after the files named by ``temporary`` are removed: at once, since a launcher may follow
SIGTERM with SIGKILL soon after. The main thread then finds them gone, as the end it was going to
make anyway. One process whose main thread has not ended UNWIND_S after the signal (inside a
compiled loop, or waiting for its threads to leave theirs) is ended from there (``end_when_stuck``).
"""

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
UNWIND_S = 0.5  # a process still running this long after a signal is ended (end_when_stuck)


class Stopped(BaseException):
    """A signal ended the run (a BaseException, so that no `except Exception` keeps it)."""

    def __init__(self, signum):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _handler(signum, frame):
    global _received
    _received = signum
    raise Stopped(signum)


def install():
    """Handle the signals in this (main) thread; the CLI does this, the library leaves them alone.

    A Stopped raised inside a callback Python cannot propagate from (a weakref's, a __del__)
    would be printed as "Exception ignored ... Traceback"; it is dropped silently instead, and
    ``check()`` stops the run at the next step.
    """
    global _said, _wakeup
    _written.clear()  # a new run (the CLI's main, also called again in one process) says its own stop
    _said = threading.Lock()
    for signum in HANDLED:
        signal.signal(signum, _handler)
    default = sys.unraisablehook

    def unraisable(info):
        if not isinstance(info.exc_value, Stopped):
            default(info)

    sys.unraisablehook = unraisable
    if _wakeup is None:  # one pipe and one watching thread for the process, however often installed
        read, _wakeup = os.pipe()
        os.set_blocking(_wakeup, False)
        threading.Thread(target=_watch, args=(read,), name="tcdist-signals", daemon=True).start()
    signal.set_wakeup_fd(_wakeup, warn_on_full_buffer=False)


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
    """Inside the block, callback(signum) runs on the watching thread when a handled signal arrives."""
    _callbacks.append(callback)
    try:
        yield
    finally:
        _callbacks.remove(callback)


def name(signum: int) -> str:
    return signal.Signals(signum).name


def say_stopped(signum: int) -> None:
    """The one line a stopped run ends with, in one write (a launcher merges its ranks' output), once."""
    if not _said.acquire(blocking=False):
        return
    done = f"; already written: {', '.join(map(str, _written))}" if _written else ""
    sys.stderr.write(f"tcdist: stopped by {name(signum)} (temporary files removed{done})\n")
    sys.stderr.flush()


def written(path) -> None:
    """path was put in place: a stop from now on does not undo it, and says so."""
    _written.append(path)


def end_when_stuck(signum: int) -> None:
    """An on_signal callback for one process: if it has not ended UNWIND_S from now, say so and end
    it with 128 + signum (its temporaries are gone already; its outputs are committed or not)."""
    threading.Thread(target=_end_after_unwind, args=(signum,), name="tcdist-signals-end", daemon=True).start()


def _end_after_unwind(signum: int) -> None:
    time.sleep(UNWIND_S)
    try:
        say_stopped(signum)  # (not stdout's flush: a reader that has stopped reading would hold it)
    finally:
        os._exit(128 + signum)


def check():
    """Raise Stopped if a signal arrived, even one whose exception was swallowed on the way."""
    if _received is not None:
        raise Stopped(_received)


def received():
    """The signal that asked tcdist to stop, or None. An exception of another kind while one is
    pending is the signal's doing (raised inside threading's locks, say, it surfaces as a
    RuntimeError), so the run ends as stopped by it."""
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
