"""Ending on a signal: SIGINT, SIGTERM and SIGHUP (Ctrl-C, a Slurm time limit, a closed
terminal) unwind tcdist like an error, so every temporary file is removed, and the process
exits with 128 + the signal's number.

The handler both raises and remembers: a library can swallow an exception raised inside its
own callbacks (h5py did, and a run then ended with status 0 after a partial write), so
``check()`` is asked again before a file is put in place and when the command ends.
"""

import signal
import sys

HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_received = None


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
    for signum in HANDLED:
        signal.signal(signum, _handler)
    default = sys.unraisablehook

    def unraisable(info):
        if not isinstance(info.exc_value, Stopped):
            default(info)

    sys.unraisablehook = unraisable


def check():
    """Raise Stopped if a signal arrived, even one whose exception was swallowed on the way."""
    if _received is not None:
        raise Stopped(_received)


def received():
    """The signal that asked tcdist to stop, or None. An exception of another kind while one is
    pending is the signal's doing (raised inside threading's locks, say, it surfaces as a
    RuntimeError), so the run ends as stopped by it."""
    return _received
