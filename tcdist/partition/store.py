"""The HDF5 partition store: written once by the root rank, read part by part by any rank.

Layout (format 'tcdist-partitions', version 3; sealed, io/seal.py):

    /                attrs: format, version, tcdist_version, graph_n, graph_m, fingerprint,
                     graph_name, self_loops, duplicates, reciprocal, scheme, parts, seed, prune, digest
    /assignment      part of every vertex of the graph (rank order); attr: checksum
    /original_id     every vertex's id in the source (rank order); attr: checksum
    /degree          every vertex's degree (rank order); attr: checksum
    /partNNNNN/      rowptr (int64), col (int32 or int64), global_id (int64);
                     attrs: n_local, v_ind, v_res, e_ind, e_res, bytes, work, digest

Every number a count depends on is covered by a digest (io/hdf5.py): a part's digest covers
its attributes and its arrays; the root's covers the header, every part's digest and the
assignment's checksum, so a flipped attribute, a dropped part or a part taken from another
store is refused. The file is written under a temporary name and renamed when complete.
"""

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import replace

import numpy as np

from tcdist import __version__, compiled, progress
from tcdist.errors import InputError, TcdistError
from tcdist.graph import passes
from tcdist.graph.check import misoriented_rows
from tcdist.graph.graph import col_dtype
from tcdist.io.hdf5 import (
    check_format,
    damage_is_input_error,
    digest,
    open_h5,
    plain,
    read_array,
    read_arrays,
    read_attrs,
    write_dataset,
)
from tcdist.io.seal import sealed_file
from tcdist.io.write import atomic_path
from tcdist.partition.part import STAT_KEYS, Part, partitioning_id
from tcdist.xp import PAGE, REGISTER_FROM, copy_to_host, register_pages, to_numpy, unregister_pages

FORMAT = "tcdist-partitions"
VERSION = 3
_HEADER = {"graph_n": int, "graph_m": int, "fingerprint": str, "graph_name": str, "self_loops": int,
           "duplicates": int, "reciprocal": int, "scheme": str, "seed": int, "prune": str, "parts": int}
_PART = {**{k: int for k in STAT_KEYS}, "digest": str}


def _group_name(i):
    return f"part{i:05d}"


_ROOT_ARRAYS = {"assignment": None, "original_id": np.int64, "degree": np.int64}  # None: int32 while it fits


def _root_digest(header, part_digests, root_checksums):
    return digest({**header, "part_digests": part_digests, **root_checksums}, {})


def write_store(partitioning, path, *, replace=True, timings=None) -> list[dict]:
    """Write a partitioning to path (atomically) and return its parts' statistics; its parts may
    be an iterator, walked once: while a part is built (on its device), the one before is copied
    to the host on a thread and the one before that written on another, so the disk is kept
    busy. timings, if given, receives the seconds spent building lazy parts (partition) and
    waiting for the copies and writes (store_write)."""
    started, parts = time.perf_counter(), _Clocked(partitioning.parts)
    try:
        with StoreWriter(partitioning, path, replace=replace) as writer, \
                ThreadPoolExecutor(1, thread_name_prefix="tcdist-copy") as copying, \
                ThreadPoolExecutor(1, thread_name_prefix="tcdist-store") as writing, \
                ThreadPoolExecutor(1, thread_name_prefix="tcdist-hash") as hashing:  # (they end first)
            # one core's pass over the graph (seconds), beside the builds and the writes, not ahead of them
            fingerprint = hashing.submit(partitioning.graph.fingerprint)

            def copied_then_written(part, written):
                part = _on_host(part)
                if written is not None:
                    written.result()
                return writing.submit(writer.add, part)

            queued = None  # the last part's copy, which gives its write
            for part in progress.iterate(parts, partitioning.num_parts, f"write {os.path.basename(path)}"):
                queued = copying.submit(copied_then_written, part, None if queued is None else queued.result())
            if queued is not None:
                queued.result().result()
            fingerprint.result()
        partitioning.written = writer.written
        return writer.written
    finally:
        if timings is not None:
            timings.partition += parts.seconds - parts.compiling
            timings.compile += parts.compiling
            timings.store_write += time.perf_counter() - started - parts.seconds


def _on_host(part):
    """A part's arrays copied to the host, on a stream of this thread's own where they lie on a
    GPU (the default stream would wait for the next part's passes), into pages registered for the
    copy: a pageable copy of gigabytes runs at a fraction of the link's speed and holds up every
    other pageable copy of the process, the small reads of the next part's build among them."""
    if isinstance(part.col, np.ndarray):
        return part
    import cupy

    arrays = (part.rowptr, part.col, part.global_id)
    hosts = [np.empty(a.shape, a.dtype) for a in arrays]
    for host in hosts:  # the pages faulted in on every thread, not by CUDA's registration on one
        if host.nbytes >= REGISTER_FROM:
            passes.touch(host, max(1, PAGE // host.itemsize))
    with part.col.device, cupy.cuda.Stream(non_blocking=True) as stream:
        pages = register_pages(hosts)
        try:
            for array, host in zip(arrays, hosts):
                copy_to_host(host, array, stream)
            stream.synchronize()
        finally:
            unregister_pages(pages)
    rowptr, col, global_id = hosts
    return replace(part, rowptr=rowptr, col=col, global_id=global_id)


class _Clocked:
    """Parts as they come, with the seconds spent waiting for them (building them, when lazy), and
    of those the seconds compiling (a first run's)."""

    def __init__(self, parts):
        self.parts, self.seconds, self.compiling = iter(parts), 0.0, 0.0

    def __iter__(self):
        while True:
            t0, spent = time.perf_counter(), compiled.spent()
            part = next(self.parts, None)
            self.seconds += time.perf_counter() - t0
            self.compiling += compiled.spent() - spent
            if part is None:
                return
            yield part


class StoreWriter:
    """A store being written (a context: put in place when the block ends without an error, else
    removed): the header and the whole-graph arrays of the partitioning p (whose parts it does not
    walk) first, then each part as add() is given it, in any order. add() may be called from any
    one thread at a time; written: every part's statistics, in part order, once complete."""

    def __init__(self, p, path, *, replace=True):
        self.p, self.path, self.replace = p, path, replace
        self.digests, self.stats, self.written = {}, {}, None

    def __enter__(self):
        self._stack = ExitStack()
        try:
            tmp = self._stack.enter_context(atomic_path(self.path, replace=self.replace))
            self.file = self._stack.enter_context(
                sealed_file(tmp, FORMAT, VERSION, datasets=3 * self.p.num_parts + len(_ROOT_ARRAYS)))
            self.root_checksums = {}
            for name, dtype in _ROOT_ARRAYS.items():
                values = getattr(self.p, name)
                self.root_checksums[name] = "" if values is None else json.dumps(write_dataset(
                    self.file, name,
                    to_numpy(values).astype(dtype or (np.int32 if self.p.num_parts < 2**31 else np.int64))))
                if values is not None:
                    self.file[name].attrs["checksum"] = self.root_checksums[name]
        except BaseException as e:
            self._stack.__exit__(type(e), e, e.__traceback__)  # the temporary removed, never put in place
            raise
        return self

    def add(self, part: Part) -> None:
        if part.index in self.digests or not 0 <= part.index < self.p.num_parts:
            raise TcdistError(f"internal error: part {part.index} written twice or out of range")
        g = self.file.create_group(_group_name(part.index))
        arrays = {
            "rowptr": write_dataset(g, "rowptr", to_numpy(part.rowptr).astype(np.int64, copy=False)),
            "col": write_dataset(g, "col", to_numpy(part.col).astype(col_dtype(part.n), copy=False)),
            "global_id": write_dataset(g, "global_id", to_numpy(part.global_id).astype(np.int64, copy=False)),
        }
        stats = {k: int(part.stats[k]) for k in STAT_KEYS}
        self.digests[part.index] = digest(stats, arrays)
        g.attrs.update(stats, digest=self.digests[part.index])
        self.stats[part.index] = stats
        os.fdatasync(self.file.id.get_vfd_handle())  # to the disk now, while the next part is built, not all at the end

    def __exit__(self, kind, error, trace):
        if kind is not None:  # the file is removed
            return self._stack.__exit__(kind, error, trace)
        with self._stack:  # sealed and put in place, or removed if that fails
            if len(self.digests) != self.p.num_parts:
                raise TcdistError(f"internal error: {len(self.digests)} parts written of {self.p.num_parts}")
            part_digests = [self.digests[i] for i in range(self.p.num_parts)]
            header = {k: plain(getattr(self.p, k)) for k in _HEADER if k != "parts"} | {"parts": self.p.num_parts}
            self.file.attrs.update(format=FORMAT, version=VERSION, tcdist_version=__version__, **header,
                                   digest=_root_digest(header, part_digests, self.root_checksums))
        self.written = [self.stats[i] for i in range(self.p.num_parts)]
        return False


class Store:
    """An open partition store; parts are read one at a time, each checked against its digest."""

    def __init__(self, path):
        self.path = str(path)
        self._file = open_h5(self.path)
        try:
            with damage_is_input_error(self.path):
                self._check_header()
        except Exception:
            self._file.close()
            raise

    def _check_header(self):
        f = self._file
        check_format(self.path, f, FORMAT, VERSION)
        self.header = read_attrs(self.path, f, _HEADER, "store header")
        self.num_parts = self.header["parts"]
        if self.num_parts < 1:
            raise InputError(self.path, f"store header: {self.num_parts} parts")
        groups = len(f.keys())  # a corrupt part count cannot send the checks below past the file's groups
        absent = next((i for i in range(min(self.num_parts, groups + 1)) if _group_name(i) not in f), None)
        if absent is not None:
            raise InputError(self.path, f"part {absent} of {self.num_parts} is missing")
        part_digests = [read_attrs(self.path, f[_group_name(i)], {"digest": str}, f"part {i}")["digest"]
                        for i in range(self.num_parts)]
        root_checksums = {name: plain(f[name].attrs.get("checksum", "")) if name in f else "" for name in _ROOT_ARRAYS}
        stored = plain(f.attrs.get("digest", ""))
        if stored != _root_digest(self.header, part_digests, root_checksums):
            raise InputError(self.path, "the store header does not match its digest (corrupt or altered attributes)")
        self.digest = stored  # (covers every part: the same digest, the same store)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self._file.close()

    @property
    def partitioning_id(self):
        h = self.header
        return partitioning_id(h["fingerprint"], self.num_parts, h["scheme"], h["prune"], h["seed"])

    def stats(self, i):
        """The statistics of part i, without reading its arrays (covered by the digest checked on read)."""
        with damage_is_input_error(self.path):
            attrs = read_attrs(self.path, self._file[_group_name(i)], _PART, f"part {i}")
        return {k: attrs[k] for k in STAT_KEYS}

    def part(self, i):
        """Part i, its arrays and attributes checked against its digest. The structure of its CSR
        (sorted rows, ids in range) is checked where it is counted (Device.put)."""
        with damage_is_input_error(self.path):
            g = self._file[_group_name(i)]
            attrs = read_attrs(self.path, g, _PART, f"part {i}")
            arrays, checksums = read_arrays(self.path, g, ("rowptr", "col", "global_id"))
        stats = {k: attrs[k] for k in STAT_KEYS}
        if digest(stats, checksums) != attrs["digest"]:
            raise InputError(self.path, f"part {i} is corrupt (its arrays or attributes do not match its digest)")
        rowptr, col, global_id = arrays["rowptr"], arrays["col"], arrays["global_id"]
        if global_id.size != rowptr.size - 1 or (stats["v_res"], stats["e_res"]) != (rowptr.size - 1, col.size):
            raise InputError(self.path, f"part {i}: inconsistent arrays")
        if misoriented_rows(rowptr, col, stats["n_local"]):
            raise InputError(self.path, f"part {i}: an edge breaks the order of its ids (locals, then proxies, "
                                        "each in rank order)")
        return Part(i, rowptr, col, global_id, stats["n_local"], stats, source=self.path)

    @classmethod
    def reused(cls, path) -> "Store":
        """The store at path that a run would add to (its --store), one that is none refused as such."""
        try:
            return cls(path)
        except InputError as e:
            raise InputError(path, f"exists and cannot be reused ({e.problem.split('; ')[0]}); give {{store}} "
                                   "another name") from None

    def matches(self, fingerprint, num_parts, scheme, prune, seed, auto: bool = False):
        """None if this store holds exactly that partitioning (auto: num_parts chosen by parts='auto'),
        else what differs."""
        h = self.header
        if h["fingerprint"] != fingerprint:
            return f"it was made from another graph ({h['graph_name']}, fingerprint {h['fingerprint']})"
        wanted = {"parts": num_parts, "scheme": scheme, "prune": prune, "seed": seed}
        differ = [f"{k} {h[k]} ({'{parts} auto chose' if auto and k == 'parts' else 'asked for'} {v})"
                  for k, v in wanted.items() if h[k] != v]
        return f"it holds {', '.join(differ)}" if differ else None

    def _root_array(self, name):
        """A whole-graph array (or None when the store has none), checked against its checksum."""
        f = self._file
        with damage_is_input_error(self.path):
            if name not in f:
                return None
            values, found = read_array(self.path, f, name)
            checksum = plain(f[name].attrs.get("checksum", ""))
        if json.dumps(found) != checksum:
            raise InputError(self.path, f"dataset '{name}' is corrupt (checksum mismatch)")
        if values.size != self.header["graph_n"]:
            raise InputError(self.path, f"dataset '{name}' has {values.size:,} entries for {self.header['graph_n']:,} "
                                        "vertices")
        return values

    def assignment(self):
        """The part of every vertex."""
        return self._root_array("assignment")

    def vertices(self):
        """(every vertex's source id, its degree), for per-vertex results."""
        ids, degree = self._root_array("original_id"), self._root_array("degree")
        if ids is None or degree is None:
            raise InputError(self.path, "this store holds no vertex table (original ids and degrees); write it again")
        return ids, degree
