"""A CSR's columns on disk, in a scratch file: where neither the host nor a GPU can hold a graph,
its build writes them there a range of rows at a time, and its count reads the runs each slice
takes (partition/slices.py), so that memory holds the row pointers and a slice at a time. (Also a
text file's parsed pairs, which a build read again on the CPU reads back on every pass.)

The file is the process's own, and has no name: it is removed from its folder as soon as it is
opened, and lives on as the process's open file only, so that the system frees its room when the
columns are closed or the process ends, however it ends (killed, or one rank of a job killing
the others). Its name (host and process id) serves only the moment between the two, which a
later run clears where a process was killed in it.
"""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import tempfile
from contextlib import contextmanager

import numpy as np

from tcdist import signals
from tcdist.budget.sizes import size_text
from tcdist.errors import OptionError, TcdistError
from tcdist.io.write import remove_stale, this_process

_PATTERN = r"tcdist-scratch-(.+-\d+)-\d+\.col"  # (a group HOST-PID, as io.write.remove_stale reads it)
_numbers = itertools.count()
_open = set()  # the columns not yet closed, closed when the process ends
_folder = None  # inside using(folder): that folder


@contextmanager
def using(folder: str | None):
    """Inside the block, scratch files go to folder (None: where they went, at first TMPDIR, else
    the system's temporary folder), and those made inside are removed when it ends, however it ends."""
    global _folder
    before, opened = _folder, set(_open)
    _folder = before if folder is None else folder
    try:
        yield
    finally:
        _folder = before
        for columns in _open - opened:
            columns.close()


def folder() -> str:
    """Where scratch files go now."""
    return _folder or tempfile.gettempdir()


def check_room(nbytes: int, what: str = "the graph's columns") -> str:
    """The scratch folder, refused in one line where it is not a folder this process may write in
    or has less than nbytes free for what (what this process's killed runs left there removed first)."""
    where = folder()
    try:
        if not os.path.isdir(where) or not os.access(where, os.W_OK | os.X_OK):
            raise OSError("not a folder this process may write in")
        remove_stale(where, _PATTERN)
        free = shutil.disk_usage(where).free
    except OSError as e:
        raise OptionError(f"{{scratch}} {where}: {e.strerror or e}") from None
    if nbytes > free:
        raise OptionError(f"{what} need about {size_text(nbytes)} of scratch space but {where} has "
                          f"{size_text(free)} free; give {{scratch}} a folder with more room")
    return where


def on_disk(array) -> bool:
    return getattr(array, "on_disk", False) is True


class ColumnsOnDisk:
    """size values of dtype lying in a file from byte offset on, read a run at a time as a NumPy
    array (columns[a:b]) by preadv on the file descriptor fd; where: the file, as an error names it."""

    ndim = 1
    on_disk = True  # (what graph.Graph asks of its columns, not importing this module)
    RUN_VALUES = 1 << 20  # values read at a time by a pass over them all (a few MiB, within tight limits)

    def __init__(self, fd: int, offset: int, size: int, dtype, what: str, where: str):
        self._fd, self._offset, self.size, self.dtype = fd, int(offset), int(size), np.dtype(dtype)
        self.what, self._where = what, where

    @property
    def shape(self) -> tuple[int]:
        return (self.size,)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: slice) -> np.ndarray:
        start, stop, step = index.indices(self.size)
        if step != 1:
            raise IndexError("columns on disk are read in runs")
        out = np.empty(max(0, stop - start), self.dtype)
        view, done = memoryview(out).cast("B"), 0
        try:
            while done < out.nbytes:
                read = os.preadv(self._fd, [view[done:]], self._offset + start * self.itemsize + done)
                if read == 0:
                    raise TcdistError(f"{self.what} in {self._where} end early")
                done += read
        except OSError as e:
            raise TcdistError(f"reading {self.what} from {self._where}: {e.strerror or e}") from None
        return out

    def __array__(self, *args, **kwargs):
        raise TypeError("columns on disk are read in runs, not as one array")

    def runs(self, values: int = RUN_VALUES):
        """(where it begins, the run) of every run of values values, in order: a pass over them all."""
        for first in range(0, self.size, values):
            yield first, self[first : first + values]

    def bincount(self, minlength: int) -> np.ndarray:
        """np.bincount of the columns, read a run at a time."""
        counts = np.zeros(minlength, np.int64)
        for _, run in self.runs():
            counts += np.bincount(run, minlength=minlength)
        return counts

    def close(self) -> None:
        if self not in _open:
            return
        _open.discard(self)
        os.close(self._fd)


class FileColumns(ColumnsOnDisk):
    """A graph file's columns, read where they lie in it (a contiguous dataset from byte offset on)."""

    def __init__(self, path: str, offset: int, size: int, dtype, what: str = "the graph's columns"):
        super().__init__(os.open(path, os.O_RDONLY), offset, size, dtype, what, path)
        _open.add(self)


class DiskColumns(ColumnsOnDisk):
    """size values of dtype in a scratch file (in folder(), its room checked first): read a run at
    a time (ColumnsOnDisk), written a run at a time (write); removed by close(). what: what they
    are, as an error names them."""

    def __init__(self, size: int, dtype, what: str = "the graph's columns"):
        size, dtype = int(size), np.dtype(dtype)
        where = check_room(size * dtype.itemsize, what)
        self.path = os.path.join(where, f"tcdist-scratch-{this_process()}-{next(_numbers)}.col")
        signals.hold(self.path)  # (removed by a signal between its opening and its removal)
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                os.remove(self.path)
            except OSError:
                os.close(fd)
                raise
        except OSError as e:
            raise OptionError(f"{{scratch}} {where}: {e.strerror or e}") from None
        finally:
            signals.let_go(self.path)
        super().__init__(fd, 0, size, dtype, what, f"a scratch file of {where}")
        _open.add(self)

    def write(self, first: int, values: np.ndarray) -> None:
        """values (on the host) as the values from first on (the file grows past size where they end
        after it)."""
        view, done = memoryview(np.ascontiguousarray(values, self.dtype)).cast("B"), 0
        try:
            while done < view.nbytes:
                done += os.pwritev(self._fd, [view[done:]], first * self.itemsize + done)
        except OSError as e:
            self.close()
            raise OptionError(f"writing {self.what} to a scratch file of {os.path.dirname(self.path)}: "
                              f"{e.strerror or e}; give {{scratch}} a folder "
                              "with more room") from None
        self.size = max(self.size, first + len(values))

    def cut(self, size: int) -> None:
        """Only the first size values kept (the file's room past them given back)."""
        self.size = min(self.size, int(size))
        os.ftruncate(self._fd, self.nbytes)


@atexit.register
def _close_all() -> None:
    for columns in list(_open):
        columns.close()
