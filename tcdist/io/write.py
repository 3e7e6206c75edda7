"""Writing files so that nothing is damaged: a file is written under a temporary name beside
its target and renamed only when complete; the target is checked before any work starts.

What may be replaced: a regular file (or nothing). A directory, a device, a FIFO or a socket
is refused, and so is one of the run's own input files. A symbolic link is followed on
purpose: the file it points to is replaced and the link stays. A write that must not replace
anything (a new partition store) links the finished file into place, which fails if another
process got there first, instead of renaming over it.
"""

import os
import re
import socket
import stat
from contextlib import contextmanager

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv

from tcdist import signals
from tcdist.errors import TcdistError

TEXT_SUFFIXES = (".txt", ".tsv", ".el", ".edges", ".csv")


class OutputExists(TcdistError):
    """The name was free when the write began and taken when it ended (another process wrote it)."""


def output_target(path, inputs=()) -> str:
    """The file that writing ``path`` replaces, refused now (before any work) if it must not be."""
    path = os.fspath(path)
    target = os.path.realpath(path)
    directory = os.path.dirname(target)
    if not os.path.isdir(directory):
        raise TcdistError(f"{path}: directory {os.path.dirname(os.path.abspath(path))} does not exist")
    if os.path.exists(target):
        mode = os.stat(target).st_mode
        if stat.S_ISDIR(mode):
            raise TcdistError(f"{path}: is a directory")
        if not stat.S_ISREG(mode):
            raise TcdistError(f"{path}: is a device, FIFO or socket, not a regular file; tcdist replaces only files")
        for given in inputs:
            if isinstance(given, (str, os.PathLike)) and os.path.exists(given) and os.path.samefile(given, target):
                raise TcdistError(f"{path}: is the input {os.fspath(given)}; write to another name")
    if not os.access(directory, os.W_OK):
        raise TcdistError(f"{path}: directory {directory} is not writable")
    return target


@contextmanager
def atomic_path(path, *, replace=True):
    """Yield a temporary name beside the target of path; put it in place only if the block succeeds.

    replace=False: fail with OutputExists rather than replace a file that appeared meanwhile.
    Errors of the file system (full disk, no permission) become one-line TcdistErrors.
    """
    target = output_target(path)
    tmp = os.path.join(os.path.dirname(target), f".{os.path.basename(target)}.tmp-{this_process()}")
    try:
        with signals.temporary(tmp):
            yield tmp
        signals.check()  # never put in place what a signal interrupted, even if the signal was swallowed
        if replace:
            os.replace(tmp, target)
        else:
            _link_new(tmp, target, path)
    except OSError as e:
        raise TcdistError(f"{path}: cannot write ({_os_problem(e)})") from None
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def this_process() -> str:
    """HOST-PID: what a temporary file's name says of the process that writes it."""
    return f"{re.sub(r'[^A-Za-z0-9.-]', '_', socket.gethostname())}-{os.getpid()}"


def remove_stale(directory: str, pattern: str) -> list[str]:
    """Remove the temporary files in directory whose names match pattern (a regular expression
    with a group HOST-PID) and whose process, on this host, is gone; their paths."""
    host = this_process().rsplit("-", 1)[0]
    removed = []
    for name in os.listdir(directory or "."):
        found = re.fullmatch(pattern, name)
        writer = found and found.group(1).rsplit("-", 1)
        if not writer or writer[0] != host or not writer[1].isdigit() or _alive(int(writer[1])):
            continue
        try:
            os.remove(os.path.join(directory, name))
        except OSError:
            continue
        removed.append(os.path.join(directory, name))
    return removed


def stale_beside(path) -> list[str]:
    """Remove what writes of path by processes now gone (on this host) left beside it."""
    target = os.path.realpath(path)
    base = re.escape(f".{os.path.basename(target)}.tmp-")
    return remove_stale(os.path.dirname(target), base + r"(.+-\d+)")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's
        return True
    return True


def _os_problem(error: OSError) -> str:
    """The reason of a failed write in a few words (HDF5 puts errno and a multi-line report in its text)."""
    found = re.search(r"errno = (\d+)", str(error))
    if found:
        return os.strerror(int(found.group(1)))
    if error.errno:
        return os.strerror(error.errno)
    return " ".join(str(error).split())[:200]


def _link_new(tmp, target, path):
    """Put tmp in place as target only if target does not exist (atomic where hard links exist)."""
    try:
        os.link(tmp, target)
    except FileExistsError:
        raise OutputExists(f"{path}: another process wrote this file while tcdist was writing it") from None
    except OSError:  # a file system without hard links: check, then rename
        if os.path.exists(target):
            raise OutputExists(f"{path}: another process wrote this file while tcdist was writing it") from None
        os.replace(tmp, target)


def output_kind(path) -> str:
    """'h5' or 'text' from an output name; any other name is refused, never written as something else."""
    name = os.fspath(path).lower()
    if name.endswith((".h5", ".hdf5")):
        return "h5"
    if name.endswith(TEXT_SUFFIXES) or name.endswith(tuple(s + ".gz" for s in TEXT_SUFFIXES)):
        return "text"
    raise TcdistError(f"{path}: tcdist writes tcdist HDF5 (.h5, .hdf5) or text edge lists "
                      f"({', '.join(TEXT_SUFFIXES)}, each optionally .gz); choose one of those names")


def write_edge_list(src, dst, path):
    """Tab-separated 'u v' lines (gzip-compressed when path ends in .gz)."""
    table = pa.table({"u": np.asarray(src, np.int64), "v": np.asarray(dst, np.int64)})
    options = pcsv.WriteOptions(include_header=False, delimiter="\t")
    with atomic_path(path) as tmp:
        compression = "gzip" if str(path).endswith(".gz") else None
        with pa.output_stream(tmp, compression=compression) as out:
            pcsv.write_csv(table, out, options)


def write_text(path, text):
    """A small text file (a JSON record), written atomically."""
    with atomic_path(path) as tmp, open(tmp, "w") as f:
        f.write(text)
