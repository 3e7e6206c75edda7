"""The journal of finished parts, so a job that dies resumes without recounting them.

It lives beside the store, in ``STORE.journal/``: the store is written once and never
modified, and several ranks finish parts at the same time, which one HDF5 file cannot take
from several processes. Each finished part is one small JSON file, written under a
temporary name and renamed, so an entry is either whole or absent. An entry names the
partitioning it belongs to and carries a digest of its content; an entry that does not
match is ignored (its part is counted again), never trusted. A count of a store that asks for no
--store or --resume removes the journal when it succeeds: it was kept only for a resume.

One run at a time journals in a store: rank 0 holds a lock on ``STORE.lock`` (flock) from
before it reads the graph until the run ends, so a second run never empties the journal a
running one writes in. It refuses at once rather than waiting: a run may last hours.

A store whose journal cannot be written (a read-only folder, a full disk) is counted without one
(ranks/prepare.py start_journal), and its lock is not taken where it cannot be made.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import socket
from contextlib import suppress

from tcdist import signals
from tcdist.errors import InputError, TcdistError
from tcdist.io.hdf5 import digest
from tcdist.io.write import name_max
from tcdist.results import PartResult


def _digest(entry: dict) -> str:
    return digest({k: v for k, v in entry.items() if k != "digest"}, {})


def check_name_room(store_path) -> None:
    """Refuse, before any work, a store whose journal (the longer of the names beside it) would pass
    the longest name its file system allows."""
    folder = os.path.abspath(f"{os.fspath(store_path)}.journal")
    longest = name_max(os.path.dirname(folder))
    if len(os.fsencode(os.path.basename(folder))) > longest:
        raise TcdistError(f"{store_path}: the name leaves no room for its journal beside it ({longest} bytes at most "
                          "for FILE.journal); choose a shorter name")


class Journal:
    """Finished parts of one partitioning, recorded as they finish."""

    def __init__(self, store_path: str, partitioning: str, num_parts: int):
        self.folder = f"{os.fspath(store_path)}.journal"
        self.id = partitioning
        self.num_parts = num_parts

    def start(self, resume: bool) -> tuple[dict[int, PartResult], list[str]]:
        """Prepare the journal (rank 0, before counting): with resume, the parts it already holds
        and warnings about entries it ignored; without, it is emptied."""
        try:
            if not resume and os.path.isdir(self.folder):
                shutil.rmtree(self.folder)
            os.makedirs(self.folder, exist_ok=True)
            self._try_an_entry()
        except OSError as e:
            if not resume:  # no empty journal left behind
                shutil.rmtree(self.folder, ignore_errors=True)
            raise TcdistError(f"{self.folder}: cannot write the journal of finished parts ({e.strerror})") from None
        return self.finished() if resume else ({}, [])

    def _try_an_entry(self) -> None:
        """Write and remove an entry's worth of bytes: a full disk refuses them now, not at the first part."""
        path = os.path.join(self.folder, f"try.tmp{os.getpid()}")
        try:
            with open(path, "w") as f:
                f.write(" " * 512)
                f.flush()
                os.fsync(f.fileno())
        finally:
            with suppress(FileNotFoundError):  # (not made: the folder refused it)
                os.remove(path)

    def finished(self) -> tuple[dict[int, PartResult], list[str]]:
        done, ignored = {}, []
        for name in sorted(os.listdir(self.folder)):
            if not name.endswith(".json"):
                continue
            path = os.path.join(self.folder, name)
            try:
                with open(path) as f:
                    entry = json.load(f)
                valid = (isinstance(entry, dict) and entry.get("digest") == _digest(entry)
                         and entry.get("partitioning") == self.id and type(entry.get("part")) is int
                         and 0 <= entry["part"] < self.num_parts and type(entry.get("triangles")) is int
                         and entry["triangles"] >= 0 and name == f"part{entry['part']:08d}.json")
            except (OSError, ValueError):
                valid = False
            if not valid:
                ignored.append(name)
                continue
            done[entry["part"]] = PartResult(entry["part"], entry["rank"], entry["triangles"], count=entry["count_s"],
                                             stats=entry["stats"], journalled=True, kernel=str(entry.get("kernel", "")))
        warnings = [f"{self.folder}: ignored {len(ignored)} journal entries that do not belong to this store "
                    f"or are damaged ({', '.join(ignored[:3])}{', ...' if len(ignored) > 3 else ''}); "
                    "their parts are counted again"] if ignored else []
        return done, warnings

    def remove(self) -> None:
        """Remove the journal (rank 0, once the run has succeeded); one left behind is only untidy."""
        shutil.rmtree(self.folder, ignore_errors=True)

    def record(self, result: PartResult) -> None:
        """Write one finished part, atomically (any rank, any time)."""
        entry = {"partitioning": self.id, "part": result.part, "triangles": result.triangles, "rank": result.rank,
                 "host": socket.gethostname(), "pid": os.getpid(), "count_s": result.count, "stats": result.stats,
                 "kernel": result.kernel}
        entry["digest"] = _digest(entry)
        final = os.path.join(self.folder, f"part{result.part:08d}.json")
        tmp = f"{final}.tmp{os.getpid()}"
        try:
            with open(tmp, "w") as f:
                json.dump(entry, f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, final)
        except OSError as e:
            with suppress(OSError):  # a partial entry goes (never made, or its folder gone: nothing to remove)
                os.remove(tmp)
            raise TcdistError(f"{self.folder}: cannot record part {result.part} in the journal of finished parts "
                              f"({e.strerror or e})") from None


class StoreLock:
    """A store's lock, held by one run (its rank 0) until release()."""

    def __init__(self, path: str, fd: int):
        self.path, self.fd = path, fd
        signals.hold(path)  # a run ended at once by a signal removes it too

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            os.remove(self.path)  # while still held: a run that opened it meanwhile sees it gone and tries again
        except OSError:
            pass
        signals.let_go(self.path)
        os.close(self.fd)
        self.fd = None


def lock_store(store_path) -> StoreLock | None:
    """Take the lock of the store at store_path (its journal's too), or refuse: another run holds it.

    None where no lock can be made (a read-only directory, a file system without flock): there
    this run cannot write a journal either.
    """
    path = f"{os.path.realpath(os.fspath(store_path))}.lock"  # one lock, whatever link or name the store is given by
    for _ in range(100):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except PermissionError:  # another user's: a lock is taken on a file open for reading too
            try:
                fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                return None
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise InputError(store_path, f"another tcdist run is using this store (it holds {path}); wait until "
                                         "it ends, or use another store") from None
        except OSError:
            os.close(fd)
            return None
        try:
            if os.path.samestat(os.fstat(fd), os.stat(path)):
                return StoreLock(path, fd)
        except OSError:
            pass
        os.close(fd)  # the holder removed it as it released it: lock the file now there
    return None
