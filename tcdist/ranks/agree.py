"""The ranks of a run count one graph with one set of options: each rank takes its options and
the path of its input from its own command line (an MPMD launch gives each rank its own) and
opens its own copy of a file (a node-local copy, on a cluster), so before any rank relies on
them they are checked against rank 0's, and where one differs every rank raises the same error,
naming the first rank that differs, its host, and what differs (no rank goes on into steps the
others do not take, so none waits for them). Checked: the options and the generator spec at the
start of the run (same_options); each rank's copy of a file the ranks read, by its size and
sampled blocks (io/copies.py), where the ranks read their shares (same_copies); the partition
store each rank reads its parts from, by its root digest (same_stores).
"""

from __future__ import annotations

import dataclasses
import os
import socket

from tcdist.budget.sizes import size_text
from tcdist.errors import OptionError, TcdistError
from tcdist.io.copies import sampled
from tcdist.io.generators import is_spec


def _who() -> tuple[int, str]:
    """(this process's rank in the job, its host): comm may hold only the ranks that count."""
    from mpi4py import MPI

    return MPI.COMM_WORLD.Get_rank(), socket.gethostname()


def _generated(source) -> str | None:
    """The spec of a generator source, None for any other (the path of a file may differ between ranks)."""
    if isinstance(source, (str, os.PathLike)) and is_spec(source) and not os.path.exists(source):
        return os.fspath(source)
    return None


def _shown(name: str, value) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if value is None:
        return "none"
    return size_text(value) if name.endswith("_memory_limit") else str(value)


def same_options(comm, source, config) -> None:
    """Raise, on every rank alike, where a rank's count options (config, a CountConfig) or the
    generator it draws from are not rank 0's."""
    every = comm.allgather((*_who(), _generated(source), dataclasses.astuple(config)))
    _, _, spec, values = every[0]
    for rank, host, its_spec, its_values in every[1:]:
        if its_spec != spec:
            raise OptionError(f"rank {rank} ({host}): its graph is {its_spec or 'a file'}, rank 0's "
                              f"{spec or 'a file'}; give every rank the same options")
        for field, its, value in zip(dataclasses.fields(config), its_values, values):
            if its != value:
                raise OptionError(f"rank {rank} ({host}): {{{field.name}}} {_shown(field.name, its)}, where rank 0 "
                                  f"has {_shown(field.name, value)}; give every rank the same options")


def copy_of(path) -> tuple | None:
    """What tells this rank's copy of the file at path from another ((rank, host, path, (size,
    crc32 of sampled blocks))), to be all-gathered for same_copies; None where it cannot be read."""
    try:
        return (*_who(), os.fspath(path), sampled(path))
    except OSError:
        return None


def same_copies(copies: list) -> None:
    """Raise, on every rank alike, where a rank's copy of the file the ranks read is not rank 0's;
    copies: every rank's copy_of, in rank order."""
    _, _, first, (size, crc) = copies[0]
    for rank, host, path, (its_size, its_crc) in copies[1:]:
        if (its_size, its_crc) != (size, crc):
            what = f"{its_size:,} bytes, not {size:,}" if its_size != size else "the same size, other bytes"
            raise TcdistError(f"rank {rank} ({host}): {path}: not the file rank 0 reads as {first} ({what}); give "
                              "every rank the same input")


def same_stores(comm, path, digest: str) -> None:
    """Raise, on every rank alike, where the partition store a rank opened at path (rank 0's path)
    is not rank 0's: its root digest (which covers every part) is another."""
    every = comm.allgather((*_who(), digest))
    for rank, host, its in every[1:]:
        if its != every[0][2]:
            raise TcdistError(f"rank {rank} ({host}): {path}: not the store rank 0 reads there (its digest is "
                              "another); give every rank the same store, on a file system every host shares")
