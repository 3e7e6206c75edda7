"""HDF5 plumbing shared by tcdist's graph files and partition stores: one-line errors for
foreign, truncated, future or corrupt files, and the digests that cover every number.

HDF5 checksums only datasets, not attributes, and its fletcher32 filter reads at a third of
the speed of unchecked data. tcdist stores contiguous datasets and its own digests instead:
a crc32 of every 64 MiB block of an array (computed on several threads; zlib releases the
GIL), and a blake2b of a group's attributes together with its arrays' block checksums. A
flipped bit in an array or an attribute, or a store stitched from two, fails its digest.

h5py is imported where a file is opened (or an open one's objects are read): a run that reads
and writes no HDF5 file never loads it.
"""

import hashlib
import json
import os
import sys
import zlib
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import numpy as np

from tcdist.budget.host import bound_cores, code_loading
from tcdist.errors import InputError
from tcdist.io.scratch import FileColumns
from tcdist.io.seal import MAGIC as SEAL_MAGIC
from tcdist.io.seal import check_seal

HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"
CHECKSUM_BLOCK = 64 << 20  # the digest takes a crc32 of every block of this many bytes of an array


# What h5py raises on a damaged file, besides the checks of its own callers: missing objects
# (KeyError), unreadable metadata (OSError, RuntimeError), odd types and shapes (ValueError, TypeError).
_DAMAGE = (OSError, KeyError, RuntimeError, ValueError, TypeError, IndexError, OverflowError)


@contextmanager
def damage_is_input_error(path):
    """Any failure of h5py while reading becomes one line naming the file."""
    try:
        yield
    except _DAMAGE as e:
        problem = " ".join(str(e).split())[:160]
        raise InputError(path, f"damaged HDF5 file ({type(e).__name__}: {problem})") from None


def array_checksum(a) -> list:
    """dtype, shape and the crc32 of every 64 MiB block of a host array."""
    data = memoryview(np.ascontiguousarray(a)).cast("B")
    blocks = [data[i : i + CHECKSUM_BLOCK] for i in range(0, len(data), CHECKSUM_BLOCK)]
    return _checksum(a, _on_threads(zlib.crc32, blocks))


def _checksum(a, crcs: list) -> list:
    return [str(np.asarray(a).dtype), list(np.shape(a)), crcs]


def _on_threads(work, items) -> list:
    """[work(item) for item in items], on as many threads as items and the cores allow (zlib and
    file reads let go of the GIL)."""
    with ThreadPoolExecutor(max(min(len(items), bound_cores()), 1)) as pool:
        return list(pool.map(work, items))


def digest(attrs: dict, checksums: dict) -> str:
    """The digest of a group: its attributes (plain values) and its arrays' checksums."""
    body = json.dumps({"attrs": attrs, "arrays": checksums}, sort_keys=True)
    return hashlib.blake2b(body.encode(), digest_size=16).hexdigest()


def plain(value):
    """An attribute as a Python int, float or str (HDF5 hands back NumPy scalars and bytes)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    return value.item() if hasattr(value, "item") else value


def read_attrs(path, group, spec: dict, where: str) -> dict:
    """Attributes by name and type (int or str), each checked to be there and of that type."""
    out = {}
    for name, kind in spec.items():
        if name not in group.attrs:
            raise InputError(path, f"{where}: attribute '{name}' is missing")
        value = plain(group.attrs[name])
        if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
            raise InputError(path, f"{where}: attribute '{name}' is not an integer")
        if kind is str and not isinstance(value, str):
            raise InputError(path, f"{where}: attribute '{name}' is not text")
        out[name] = value
    return out


def write_dataset(group, name, data):
    """A contiguous dataset; returns its checksum for the group's digest. Its space is allocated
    at once and never filled; its bytes are written straight to the file in 64 MiB blocks on
    several threads, each block's crc32 taken while it is in cache (h5py writes on one thread
    holding the GIL, which would stop a part being built meanwhile; os.pwritev lets go of it)."""
    if getattr(data, "on_disk", False):  # (io/scratch.py's columns: read a few MiB at a time)
        return _write_from_disk(group, name, data)
    data = np.ascontiguousarray(data)
    dataset = _allocated(group, name, data.dtype, data.shape)
    if not data.size:
        return array_checksum(data)
    fd, offset = group.file.id.get_vfd_handle(), dataset.get_offset()
    raw = memoryview(data).cast("B")

    def block(start):  # moves no shared file offset
        view = raw[start : start + CHECKSUM_BLOCK]
        done = 0
        while done < len(view):
            done += os.pwritev(fd, [view[done:]], offset + start + done)
        start_writeback(fd, offset + start, len(view))
        return zlib.crc32(view)

    return _checksum(data, _on_threads(block, range(0, len(raw), CHECKSUM_BLOCK)))


def _allocated(group, name: str, dtype, shape):
    """A contiguous dataset whose space is allocated at once and never filled (written by offset)."""
    import h5py

    creation = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    creation.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
    creation.set_fill_time(h5py.h5d.FILL_TIME_NEVER)
    space = h5py.h5s.create_simple(shape)
    return h5py.h5d.create(group.id, name.encode(), h5py.h5t.py_create(dtype), space, dcpl=creation)


def _write_from_disk(group, name, data) -> list:
    """write_dataset of columns on disk (io/scratch.py), copied a run at a time on one thread (a
    run's memory, not a block's on every core), each 64 MiB block's crc32 chained over its runs."""
    dataset = _allocated(group, name, data.dtype, data.shape)
    fd, offset, checksum = group.file.id.get_vfd_handle(), dataset.get_offset() if data.size else 0, \
        RunsChecksum(data.dtype, data.size)
    for first, run in data.runs():
        view = memoryview(run).cast("B")
        at, done = first * data.itemsize, 0
        while done < len(view):
            done += os.pwritev(fd, [view[done:]], offset + at + done)
        checksum.add(run)
    return checksum.value()


def start_writeback(fd: int, offset: int, length: int) -> None:
    """Start the disk writing these bytes now, not waiting for the next sync (Linux's
    sync_file_range; elsewhere nothing): the kernel holds many gigabytes of written pages before
    it starts on its own, so the disk would sit idle while a part is copied into the page cache,
    then take the whole part at its sync. A file system that refuses is left to that sync."""
    if _sync_file_range is not None:
        _sync_file_range(fd, offset, length, _SYNC_FILE_RANGE_WRITE)


def _libc_sync_file_range():
    import ctypes

    try:
        call = ctypes.CDLL(None).sync_file_range  # (the C library this process runs on)
    except (OSError, AttributeError):
        return None
    call.argtypes, call.restype = (ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint), ctypes.c_int
    return call


_SYNC_FILE_RANGE_WRITE = 2  # <linux/fs.h>: start writing the range's dirty pages, wait for none
_sync_file_range = _libc_sync_file_range() if sys.platform.startswith("linux") else None


def looks_hdf5(head: bytes) -> bool:
    """The first bytes of an HDF5 file: tcdist's seal, or HDF5's own signature."""
    return head.startswith((SEAL_MAGIC, HDF5_MAGIC))


def open_h5(path):
    """Open a tcdist HDF5 file for reading once its seal holds (io/seal.py): libhdf5 never parses
    damaged metadata. Refuses truncated or non-HDF5 files in one line."""
    with code_loading():  # (h5py and libhdf5: the process's code, not a count's data under a host limit)
        import h5py

    check_seal(path)
    try:
        return h5py.File(path, "r")
    except OSError as e:
        problem = "truncated HDF5 file" if "truncated" in str(e) else "not a readable HDF5 file"
        raise InputError(path, problem) from None


def integer_dataset(path, group, name):
    """A group's one-dimensional integer dataset, a missing or odd one named."""
    import h5py

    full = f"{group.name.strip('/')}/{name}".lstrip("/")
    if name not in group or not isinstance(group[name], h5py.Dataset):
        raise InputError(path, f"dataset '{full}' is missing")
    dataset = group[name]
    if dataset.ndim != 1 or dataset.dtype.kind != "i":
        raise InputError(path, f"dataset '{full}' is not a one-dimensional integer array")
    return dataset


def read_array(path, group, name) -> tuple[np.ndarray, list]:
    """A whole one-dimensional integer dataset and its checksum (array_checksum's), with missing,
    unreadable and odd datasets named. A contiguous, unfiltered one is read straight from the file
    in 64 MiB blocks on several threads, each block's crc32 taken while it is in cache (h5py reads
    on one thread, and the checksum would be a second pass over the array)."""
    dataset = integer_dataset(path, group, name)
    full = dataset.name.lstrip("/")
    offset = _raw_offset(dataset)
    if offset is None:
        try:
            data = dataset[()]
        except (OSError, ValueError, TypeError):
            raise InputError(path, f"dataset '{full}' is corrupt (unreadable or truncated data)") from None
        return data, array_checksum(data)
    fd = dataset.file.id.get_vfd_handle()  # the file h5py has open, whatever lies at path now
    data = np.empty(dataset.shape, dataset.dtype)
    raw = memoryview(data).cast("B")

    def block(start):  # os.preadv lets go of the GIL, and moves no shared file offset
        view = raw[start : start + CHECKSUM_BLOCK]
        done = 0
        while done < len(view):
            got = os.preadv(fd, [view[done:]], offset + start + done)
            if got <= 0:
                raise InputError(path, f"dataset '{full}' is corrupt (unreadable or truncated data)")
            done += got
        return zlib.crc32(view)

    return data, _checksum(data, _on_threads(block, range(0, len(raw), CHECKSUM_BLOCK)))


def in_place(path, group, name):
    """A one-dimensional integer dataset read where it lies in its file (io/scratch.FileColumns), for
    a pass at a time; None where its bytes cannot be read as they are (_raw_offset)."""
    dataset = integer_dataset(path, group, name)
    offset = _raw_offset(dataset)
    return None if offset is None else FileColumns(os.fspath(path), offset, dataset.shape[0], dataset.dtype)


class RunsChecksum:
    """array_checksum's value of an array of dtype and size taken a run at a time, in order (add)."""

    def __init__(self, dtype, size: int):
        self.dtype, self.size, self.crcs, self._at = np.dtype(dtype), int(size), [], 0

    def add(self, run: np.ndarray) -> None:
        view, done = memoryview(np.ascontiguousarray(run)).cast("B"), 0
        while done < len(view):
            inside = self._at % CHECKSUM_BLOCK
            if inside == 0:
                self.crcs.append(0)
            length = min(CHECKSUM_BLOCK - inside, len(view) - done)
            self.crcs[-1] = zlib.crc32(view[done : done + length], self.crcs[-1])
            done, self._at = done + length, self._at + length

    def value(self) -> list:
        return [str(self.dtype), [self.size], self.crcs]


def read_arrays(path, group, names) -> tuple[dict, dict]:
    """({name: array}, {name: its checksum}) of a group's datasets, as read_array reads them."""
    read = {name: read_array(path, group, name) for name in names}
    return {k: a for k, (a, _) in read.items()}, {k: checksum for k, (_, checksum) in read.items()}


def _raw_offset(dataset):
    """Where a dataset's bytes lie in its file, if they can be read as they are: contiguous,
    unfiltered, all of them written, integers of their full width (HDF5 would convert others),
    and a file h5py opened with the default driver; else None."""
    import h5py

    if dataset.chunks is not None or dataset.compression or dataset.file.driver != "sec2":
        return None
    kind = dataset.id.get_type()
    if not isinstance(kind, h5py.h5t.TypeIntegerID) or kind.get_offset() != 0 or \
            kind.get_precision() != 8 * kind.get_size():
        return None
    if dataset.id.get_storage_size() != dataset.size * dataset.dtype.itemsize:
        return None
    return dataset.id.get_offset()


def file_format(f):
    """The 'format' attribute of an open tcdist file, or None."""
    found = plain(f.attrs.get("format"))
    return found if isinstance(found, str) else None


def check_format(path, f, expected, version):
    """Refuse files of another format or of a version this tcdist cannot read."""
    found = file_format(f)
    if found != expected:
        what = f"a '{found}' file" if found else "not a tcdist file (no 'format' attribute)"
        raise InputError(path, f"{what}; expected {expected}")
    found_version = plain(f.attrs.get("version", -1))
    if found_version != version:
        hint = "; write it again with this tcdist" if isinstance(found_version, int) and found_version < version else ""
        raise InputError(path, f"{expected} version {found_version} is not supported (this tcdist reads version "
                               f"{version}){hint}")

