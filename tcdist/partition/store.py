"""The HDF5 partition store: written once by the root rank, read part by part by any rank.

Layout (format 'tcdist-partitions', version 1):

    /                attrs: format, version, tcdist_version, graph_n, graph_m, fingerprint,
                     graph_name, self_loops, duplicates, scheme, parts, seed, prune
    /assignment      part of every vertex of the graph (rank order)
    /partNNNNN/      rowptr (int64), col (int32 or int64), global_id (int64);
                     attrs: n_local, v_ind, v_res, e_ind, e_res, bytes, work

Every dataset carries a fletcher32 checksum. The file is written under a temporary name
and renamed when complete, so a crash never leaves a file that looks valid.
"""

import h5py
import numpy as np

from tcdist import __version__
from tcdist.errors import InputError
from tcdist.graph.graph import col_dtype
from tcdist.io.hdf5 import check_format, open_h5, read_array, write_dataset
from tcdist.io.write import atomic_path
from tcdist.partition.part import STAT_KEYS, Part, Partitioning, partitioning_id
from tcdist.xp import to_numpy

FORMAT = "tcdist-partitions"
VERSION = 1
_HEADER = ("graph_n", "graph_m", "fingerprint", "graph_name", "self_loops", "duplicates", "scheme", "seed", "prune")


def _group_name(i):
    return f"part{i:05d}"


def write_store(partitioning, path):
    """Write a partitioning to path (atomically)."""
    p = partitioning
    with atomic_path(path) as tmp, h5py.File(tmp, "w") as f:
        f.attrs.update(format=FORMAT, version=VERSION, tcdist_version=__version__, parts=p.num_parts,
                       **{k: getattr(p, k) for k in _HEADER})
        if p.assignment is not None:
            write_dataset(f, "assignment", to_numpy(p.assignment).astype(np.int32 if p.num_parts < 2**31 else np.int64))
        for part in p.parts:
            g = f.create_group(_group_name(part.index))
            write_dataset(g, "rowptr", to_numpy(part.rowptr).astype(np.int64))
            write_dataset(g, "col", to_numpy(part.col).astype(col_dtype(part.n)))
            write_dataset(g, "global_id", to_numpy(part.global_id).astype(np.int64))
            g.attrs.update(part.stats)


class Store:
    """An open partition store; parts are read one at a time, with checksums verified."""

    def __init__(self, path):
        self.path = str(path)
        self._file = open_h5(self.path)
        try:
            check_format(self.path, self._file, FORMAT, VERSION)
            attrs = self._file.attrs
            missing = [k for k in (*_HEADER, "parts") if k not in attrs]
            if missing:
                raise InputError(self.path, f"incomplete partition store header (missing {', '.join(missing)})")
            self.header = {k: attrs[k].item() if hasattr(attrs[k], "item") else attrs[k] for k in (*_HEADER, "parts")}
            self.num_parts = int(self.header["parts"])
            absent = [i for i in range(self.num_parts) if _group_name(i) not in self._file]
            if absent:
                raise InputError(self.path, f"part {absent[0]} of {self.num_parts} is missing")
        except Exception:
            self._file.close()
            raise

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
        """The statistics of part i, without reading its arrays."""
        attrs = self._file[_group_name(i)].attrs
        return {k: int(attrs[k]) for k in STAT_KEYS}

    def part(self, i):
        """Part i, its arrays checked against their checksums and each other."""
        g = self._file[_group_name(i)]
        rowptr, col, global_id = (read_array(self.path, g, k) for k in ("rowptr", "col", "global_id"))
        stats = self.stats(i)
        n = rowptr.size - 1
        consistent = (
            rowptr.dtype == np.int64 and n >= 0 and rowptr[0] == 0 and rowptr[-1] == col.size
            and global_id.size == n and 0 <= stats["n_local"] <= n
            and (stats["v_res"], stats["e_res"]) == (n, col.size)
            and (col.size == 0 or (0 <= col.min() and col.max() < n))
        )
        if not consistent:
            raise InputError(self.path, f"part {i}: inconsistent arrays")
        return Part(i, rowptr, col, global_id, stats["n_local"], stats)

    def matches(self, fingerprint, num_parts, scheme, prune, seed):
        """None if this store holds exactly that partitioning, else what differs."""
        h = self.header
        if h["fingerprint"] != fingerprint:
            return f"it was made from another graph ({h['graph_name']}, fingerprint {h['fingerprint']})"
        wanted = {"parts": num_parts, "scheme": scheme, "prune": prune, "seed": seed}
        differ = [f"{k} {h[k]} (asked for {v})" for k, v in wanted.items() if h[k] != v]
        return f"it holds {', '.join(differ)}" if differ else None

    def partitioning(self):
        """The whole partitioning in memory."""
        h = self.header
        assignment = read_array(self.path, self._file, "assignment") if "assignment" in self._file else None
        return Partitioning(
            parts=[self.part(i) for i in range(self.num_parts)],
            scheme=h["scheme"], prune=h["prune"], seed=int(h["seed"]),
            graph_n=int(h["graph_n"]), graph_m=int(h["graph_m"]), fingerprint=h["fingerprint"],
            graph_name=h["graph_name"], self_loops=int(h["self_loops"]), duplicates=int(h["duplicates"]),
            assignment=assignment,
        )
