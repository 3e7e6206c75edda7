"""Failures under ranks: a step every rank takes together reports its error once; a failure in
a rank's own work ends the whole job at once, never a hang in a collective."""

from __future__ import annotations

import socket
import sys
import traceback
from collections.abc import Callable
from contextlib import contextmanager

from tcdist.dist.comm import is_serial
from tcdist.errors import TcdistError

EXIT_INPUT, EXIT_FAILURE = 2, 1


class RemoteError(TcdistError):
    """Another rank's error, raised on this rank so every rank ends the same way; rank 0 prints it."""


def _message(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, TcdistError) else f"{type(exc).__name__}: {exc}"


def collective(comm, step: Callable, *, root_only: bool = False, debug: bool = False):
    """Run step() on every rank (or on rank 0 alone) and return its result on every rank (rank 0's
    when root_only). If it fails anywhere, every rank raises: the failing rank its own exception,
    the others a RemoteError that names the rank, so rank 0 can print it once."""
    if is_serial(comm):
        return step()
    result, failure, error = None, None, None
    if not root_only or comm.rank == 0:
        try:
            result = step()
        except (Exception, KeyboardInterrupt) as e:  # reported on every rank, then raised
            error = e
            failure = (isinstance(e, TcdistError), _message(e))
            if debug:
                traceback.print_exc()
    failures = comm.allgather(failure)
    if error is not None:
        raise error
    for rank, failed in enumerate(failures):
        if failed is not None:
            user_error, message = failed
            raise RemoteError(message if rank == 0 else f"rank {rank}: {message}") if user_error else \
                RemoteError(f"rank {rank} failed: {message}")
    return comm.bcast(result) if root_only else result


@contextmanager
def abort_on_error(comm, *, debug: bool = False):
    """Around work that ranks do on their own: a failing rank prints its one line and aborts every
    rank (exit status 2 for bad input, 1 otherwise), so no rank waits for it in a collective."""
    if is_serial(comm):
        yield
        return
    try:
        yield
    except (Exception, KeyboardInterrupt) as e:
        if debug:
            traceback.print_exc()
        print(f"tcdist: error: rank {comm.rank} ({socket.gethostname()}): {_message(e)}", file=sys.stderr, flush=True)
        sys.stdout.flush()
        comm.Abort(EXIT_INPUT if isinstance(e, TcdistError) else EXIT_FAILURE)
