"""Writing files so that nothing is damaged: a file is written under a temporary name beside
its target (within the longest name the file system allows), synced, and renamed only when
complete; the target is checked before any work starts. A run's several outputs are renamed
together once every one is written (outputs_together), so one that fails replaces none.

What may be replaced: a regular writable file (or nothing). A directory (or a name ending in
/), a read-only file, a device, a FIFO or a socket is refused, and so is one of the run's own
input files or another output of the same run. A symbolic link is followed on purpose: the
file it points to is replaced and the link stays. A write that must not replace anything (a
new partition store) links the finished file into place, which fails if another process got
there first, instead of renaming over it.

Streams are written, never replaced: '-', /dev/stdout, /dev/stderr, /dev/fd/N (also through
links) and a terminal, pipe or socket that is the process's standard output or error, for the
outputs that take one (the JSON record, the per-vertex CSV); other outputs refuse them.
"""

import hashlib
import os
import re
import socket
import stat
import sys
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager

import numpy as np

from tcdist import signals
from tcdist.config import CSV_EDGE_COLUMNS, EDGE_LIST_SUFFIXES, HDF5_SUFFIXES
from tcdist.errors import OptionError, TcdistError
from tcdist.io import lines


class OutputExists(TcdistError):
    """The name was free when the write began and taken when it ended (another process wrote it)."""


def output_target(path, inputs=(), *, replace=True) -> str:
    """The file that writing ``path`` replaces, refused now (before any work) if it must not be.

    replace=False: an existing file is read or refused, never replaced (a --store), so it may be read-only,
    in a folder that cannot be written.
    """
    path = os.fspath(path)
    if not path:
        raise TcdistError("an output file name is empty; give a file name")
    fd = _named_stream(path)
    if fd is not None:
        raise TcdistError(f"{path}: is {_stream_name(fd)}, not a file; this output is written only to a file")
    if path.endswith(("/", "/.", "/..")) or path in (".", ".."):
        raise TcdistError(f"{path}: is a directory" if os.path.isdir(path) else
                          f"{path}: names a directory (it ends in /); give a file name")
    target = os.path.realpath(path)
    directory = os.path.dirname(target)
    if not os.path.isdir(directory):
        raise TcdistError(f"{path}: directory {os.path.dirname(os.path.abspath(path))} does not exist")
    longest = name_max(directory)
    if len(os.fsencode(os.path.basename(target))) > longest:
        raise TcdistError(f"{path}: the name is longer than the file system allows ({longest} bytes); choose a "
                          "shorter one")
    exists = os.path.exists(target)
    if exists:
        mode = os.stat(target).st_mode
        if stat.S_ISDIR(mode):
            raise TcdistError(f"{path}: is a directory")
        if not stat.S_ISREG(mode):
            raise TcdistError(f"{path}: is a device, FIFO or socket, not a regular file; tcdist replaces only files")
        for given in inputs:
            if isinstance(given, (str, os.PathLike)) and os.path.exists(given) and os.path.samefile(given, target):
                raise TcdistError(f"{path}: is the input {os.fspath(given)}; write to another name")
        if replace and not (mode & 0o222 and os.access(target, os.W_OK)):  # mode bits too: root may write anything
            raise TcdistError(f"{path}: is read-only; tcdist does not replace it (make it writable or write to "
                              "another name)")
    if (replace or not exists) and not os.access(directory, os.W_OK):
        raise TcdistError(f"{path}: directory {directory} is not writable")
    return target


def check_outputs(outputs: dict, inputs=(), *, streams=(), kept=()) -> None:
    """Every output of one run checked before any work: each on its own (output_target), and no two
    the same file, by identity (links, hard links, names not yet written) rather than by name.

    outputs: option name -> path or None (not asked for); streams: the options that may name a
    stream (stream_fd); kept: the options whose existing file is reused, never replaced (their owner checks
    them against the inputs: a store counted may be given as its own --store).
    Errors name the options in braces (errors.OPTIONS).
    """
    seen = []
    for option, path in outputs.items():
        if path is None:
            continue
        path = os.fspath(path)
        if not path:
            raise OptionError(f"{{{option}}}: the file name is empty; give a file name")
        fd = stream_fd(path) if option in streams else None
        if fd is None:
            output_target(path, () if option in kept else inputs, replace=option not in kept)
        for other, other_path, other_fd in seen:
            if fd is not None or other_fd is not None:
                same = fd == other_fd
            else:
                same = os.path.realpath(path) == os.path.realpath(other_path) or \
                    os.path.exists(path) and os.path.exists(other_path) and os.path.samefile(path, other_path)
            if same:
                raise OptionError(f"{{{other}}} and {{{option}}} both name {path}; give each output its own file"
                                  if path == other_path else f"{{{other}}} {other_path} and {{{option}}} {path} are "
                                  "the same file; give each output its own file")
        seen.append((option, path, fd))


_STREAMS = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}
_FD_NAME = re.compile(r"/dev/fd/(\d+)|/proc/(?:self|thread-self|(\d+))/fd/(\d+)")


def _named_stream(path) -> int | None:
    """The descriptor a name means by itself: '-', /dev/stdout, /dev/fd/N, /proc/self/fd/N, also through links."""
    if path == "-":
        return 1
    name = os.path.abspath(path)
    for _ in range(40):  # each link of a chain: log.json -> /dev/stderr -> /proc/self/fd/2 -> run.log
        if name in _STREAMS:
            return _STREAMS[name]
        found = _FD_NAME.fullmatch(name)
        if found and (found.group(2) is None or int(found.group(2)) == os.getpid()):
            return int(found.group(1) or found.group(3))
        try:
            name = os.path.normpath(os.path.join(os.path.dirname(name), os.readlink(name)))
        except OSError:  # not a link (or none there): a file name
            return None
    return None


def stream_fd(path) -> int | None:
    """The file descriptor an output name writes to as a stream, never replaced: a name of one
    (_named_stream), or a terminal, pipe or socket that is this process's standard output or
    error; None for a file."""
    path = os.fspath(path)
    fd = _named_stream(path)
    if fd is not None:
        return fd
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not (stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode)):
        return None
    for fd in (1, 2):
        try:
            own = os.fstat(fd)
        except OSError:
            continue
        if (own.st_dev, own.st_ino) == (st.st_dev, st.st_ino):
            return fd
    return None


def _stream_name(fd: int) -> str:
    return ("standard input", "standard output", "standard error")[fd] if fd < 3 else f"file descriptor {fd}"


@contextmanager
def stream_writer(fd: int, path):
    """A binary file writing to the process's own descriptor fd, after what Python wrote there (not closed)."""
    try:
        os.fstat(fd)
    except OSError:
        raise TcdistError(f"{path}: {_stream_name(fd)} is not open") from None
    text = {1: sys.stdout, 2: sys.stderr}.get(fd)
    try:
        if text is not None and hasattr(text, "buffer"):
            text.flush()
            yield text.buffer
            text.buffer.flush()
        else:
            with os.fdopen(fd, "wb", closefd=False) as out:
                yield out
    except BrokenPipeError:  # a reader that left (| head): the CLI's own exit status for it
        raise
    except OSError as e:
        raise TcdistError(f"{path}: cannot write to {_stream_name(fd)} ({_os_problem(e)})") from None


@contextmanager
def atomic_path(path, *, replace=True):
    """Yield a temporary name beside the target of path; put it in place only if the block succeeds
    (inside outputs_together: when that block ends, with the run's other outputs).

    replace=False: fail with OutputExists rather than replace a file that appeared meanwhile.
    Errors of the file system (full disk, no permission) become one-line TcdistErrors.
    """
    target = output_target(path)
    tmp = temporary_name(target)
    stale_beside(target)  # what writes of this file by processes now gone left behind
    held = False
    try:
        with _said(path), signals.temporary(tmp):
            yield tmp
            _sync(tmp)
            if _together is not None:  # put in place with the run's other outputs (outputs_together)
                pending, registered = _together
                registered.enter_context(signals.temporary(tmp))
                pending.append((tmp, target, path, replace))
                held = True
        if not held:
            _put_in_place(tmp, target, path, replace)
    finally:
        if not held and os.path.exists(tmp):
            os.remove(tmp)


_together = None  # (the files written, their temporaries' registrations) while outputs_together's block runs


@contextmanager
def outputs_together():
    """The files atomic_path writes inside the block are put in place together at its end, once
    every one is written: one that fails (a full disk) leaves every target as it was."""
    global _together
    if _together is not None:
        raise RuntimeError("internal error: outputs_together inside outputs_together")
    pending = []
    with ExitStack() as registered:  # each temporary stays one of the run's until it is in place or removed
        _together = pending, registered
        try:
            yield
            _together = None
            for tmp, target, path, replace in pending:
                _put_in_place(tmp, target, path, replace)
        finally:
            _together = None
            for tmp, *_ in pending:
                if os.path.exists(tmp):
                    os.remove(tmp)


@contextmanager
def _said(path):
    """A failure of the file system (of HDF5's writes too) as one line naming the output."""
    try:
        yield
    except (OSError, RuntimeError) as e:
        if isinstance(e, RuntimeError) and not _HDF5_ERRNO.search(str(e)):
            raise
        raise TcdistError(f"{path}: cannot write ({_os_problem(e)})") from None


def _put_in_place(tmp, target, path, replace) -> None:
    with _said(path), signals.placing():  # never after a signal; a stop from another thread waits and names it
        if replace:
            os.replace(tmp, target)
        else:
            _link_new(tmp, target, path)
        signals.written(path)


def _sync(path) -> None:
    """Wait until the file's bytes are on disk: a write that a file system refuses late (NFS, a quota) fails here."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def new_h5(path, userblock_size: int = 0):
    """A new HDF5 file at path, open for writing. Without a sieve buffer: each dataset reaches the
    file as it is written, so a full disk fails there (libhdf5 crashed closing a file whose cached
    writes had failed)."""
    import h5py

    access = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
    access.set_sieve_buf_size(0)
    access.set_libver_bounds(h5py.h5f.LIBVER_EARLIEST, h5py.h5f.LIBVER_LATEST)  # h5py.File's defaults, and
    creation = h5py.h5p.create(h5py.h5p.FILE_CREATE)
    creation.set_obj_track_times(False)  # no times: the same data writes the same bytes
    if userblock_size:
        creation.set_userblock(userblock_size)
    return h5py.File(h5py.h5f.create(os.fsencode(path), h5py.h5f.ACC_TRUNC, fapl=access, fcpl=creation))


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
    return remove_stale(os.path.dirname(target), re.escape(_temporary_start(target)) + r"(.+-\d+)")


def temporary_name(target) -> str:
    """.NAME.tmp-HOST-PID beside target (a real path), within the longest name its file system allows."""
    return os.path.join(os.path.dirname(target), f"{_temporary_start(target)}{this_process()}")


def _temporary_start(target) -> str:
    """'.NAME.tmp-', NAME cut and followed by a digest of it where a temporary would pass the longest
    name (the room kept for HOST-PID: this host's name and the longest process id)."""
    name, directory = os.path.basename(target), os.path.dirname(target)
    host = this_process().rsplit("-", 1)[0]
    room = name_max(directory) - len(f"..tmp-{host}-") - len(str(2**32))  # a process id has at most 10 digits
    if len(os.fsencode(name)) > room:
        mark = "~" + hashlib.blake2b(os.fsencode(name), digest_size=8).hexdigest()
        cut = name
        while len(os.fsencode(cut)) > room - len(mark):
            cut = cut[:-1]
        name = cut + mark
    return f".{name}.tmp-"


def name_max(directory) -> int:
    """The longest file name (in bytes) the file system of directory allows."""
    try:
        return os.pathconf(directory or ".", "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's
        return True
    return True


_HDF5_ERRNO = re.compile(r"errno = (\d+)")  # how libhdf5 reports a failed system call (h5py may raise RuntimeError)


def _os_problem(error: OSError) -> str:
    """The reason of a failed write in a few words (HDF5 puts errno and a multi-line report in its text)."""
    found = _HDF5_ERRNO.search(str(error))
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


def suffix_kind(path, kinds: dict) -> str | None:
    """The kind a file's name gives by its suffix (kinds: suffix -> kind), or None."""
    name = str(path).lower()
    return next((kind for suffix, kind in kinds.items() if name.endswith(suffix)), None)


def output_kind(path) -> str:
    """'h5' or 'text' from an output name; any other name is refused, never written as something else."""
    name = os.fspath(path).lower()
    if name.endswith(HDF5_SUFFIXES):
        return "h5"
    if name.removesuffix(".gz").endswith(EDGE_LIST_SUFFIXES):
        return "text"
    raise TcdistError(f"{path}: tcdist writes tcdist HDF5 ({', '.join(HDF5_SUFFIXES)}) or text edge lists "
                      f"({', '.join(EDGE_LIST_SUFFIXES)}, each optionally .gz); choose one of those names")


def write_edge_list(src, dst, path):
    """Tab-separated 'u v' lines, or for a .csv a header row and comma-separated lines
    (gzip-compressed when path ends in .gz); a block's text is written while the next one's is formatted."""
    import pyarrow as pa  # here: every command checks its outputs with this module, few write edge lists

    src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
    csv = os.fspath(path).lower().removesuffix(".gz").endswith(".csv")
    with atomic_path(path) as tmp:
        compression = "gzip" if str(path).endswith(".gz") else None
        with pa.output_stream(tmp, compression=compression) as out, \
                ThreadPoolExecutor(1, thread_name_prefix="tcdist-write") as writer:
            if csv:
                out.write(f"{','.join(CSV_EDGE_COLUMNS)}\n".encode())
            written = None
            for lo in range(0, src.size, lines.BLOCK):
                block = lines.text(src[lo:lo + lines.BLOCK], dst[lo:lo + lines.BLOCK], ord("," if csv else "\t"))
                if written is not None:
                    written.result()
                written = writer.submit(out.write, block)
            if written is not None:
                written.result()


def write_text(path, text):
    """A small text file (a JSON record), written atomically; to a stream (stream_fd) as it is."""
    fd = stream_fd(path)
    if fd is not None:
        with stream_writer(fd, path) as out:
            out.write(text.encode())
        return
    with atomic_path(path) as tmp, open(tmp, "w") as f:
        f.write(text)
