"""The data of a partitioning: parts with their LSTC statistics (Tables 3-4 of the paper)."""

import hashlib
import json
from dataclasses import dataclass, replace

import numpy as np

from tcdist.graph.degrees import degree_summary
from tcdist.graph.graph import CSR
from tcdist.xp import array_module, to_numpy

STAT_KEYS = ("n_local", "v_ind", "v_res", "e_ind", "e_res", "bytes", "work")


def part_stats(rowptr, col, n_local, v_ind, e_ind, work=None):
    """|V_ind|, |V_res|, |E_ind|, |E_res|, bytes on the GPU (rowptr + col) and the estimated work:
    the probes Σ_{u local} Σ_{v in N+(u)} |N+(v)| a kernel makes (given: where a builder counted
    them on every core; one NumPy gather of the local edges took seconds of a part of RMAT-27)."""
    xp = array_module(rowptr)
    local_edges = int(rowptr[n_local])  # local rows come first
    if work is None:
        work = int(xp.diff(rowptr)[col[:local_edges]].sum()) if local_edges else 0
    return {
        "n_local": n_local,
        "v_ind": v_ind,
        "v_res": int(rowptr.size) - 1,
        "e_ind": e_ind,
        "e_res": int(col.size),
        "bytes": int(rowptr.nbytes + col.nbytes),
        "work": int(work),
        "degrees": degree_summary(rowptr, n_local),  # what --kernel auto reads (not written to stores)
    }


def recorded(stats: dict) -> dict:
    """A part's statistics as stores, summaries and --json keep them: the partitioning's, not the
    degrees the kernel rule reads (a part built in this run has them, one read from a store not)."""
    return {k: stats[k] for k in STAT_KEYS if k in stats}


def partitioning_id(fingerprint: str, parts: int, scheme: str, prune: str, seed: int) -> str:
    """Names one partitioning: the graph's fingerprint and every option that shapes its parts."""
    key = json.dumps([str(fingerprint), int(parts), str(scheme), str(prune), int(seed)])
    return hashlib.blake2b(key.encode(), digest_size=16).hexdigest()


@dataclass(eq=False)
class Part(CSR):
    """One part: an oriented CSR whose first ``n_local`` vertices are local, rows sorted; a
    kernel counts the local rows from ``start`` on.

    ``global_id[k]`` is the vertex of the whole graph (its rank) that local id k stands for.
    """

    index: int
    rowptr: object
    col: object
    global_id: object
    n_local: int
    stats: dict
    source: str | None = None  # the store it was read from, for messages
    slice: tuple | None = None  # a slice of part index: which one (slices.SliceOf)
    start: int = 0  # local rows before this one are not counted (a share of a graph counted in place, on the CPU)
    checked: bool = False  # its CSR was checked where it was made (the graph load_graph built or read, a share
                           # or slice of it): put() does not check it again

    @classmethod
    def make(cls, *, index, rowptr, col, global_id, n_local, v_ind, e_ind, work=None):
        return cls(index, rowptr, col, global_id, n_local, part_stats(rowptr, col, n_local, v_ind, e_ind, work))

    def degrees(self) -> dict:
        """What --kernel auto reads of the local rows (degree_summary), taken once: when the part
        was built, or for a part read from a store when first asked."""
        if "degrees" not in self.stats:
            self.stats["degrees"] = degree_summary(self.rowptr, self.n_local)
        return self.stats["degrees"]

    def sizes(self) -> tuple[int, int, int, int]:
        """(rows, columns, local rows, bytes per column): what its bytes on a device depend on."""
        return int(self.rowptr.size) - 1, int(self.col.size), self.n_local, self.col.itemsize

    def on_host(self):
        """This part with its arrays in host memory (itself where they are)."""
        if isinstance(self.col, np.ndarray):
            return self
        return replace(self, rowptr=to_numpy(self.rowptr), col=to_numpy(self.col), global_id=to_numpy(self.global_id))

    def copies(self, xp):
        """([(each array, an empty one of its shape on xp's device to copy it into)], and make(),
        which gives the part with those arrays once they are filled): how a device receives a part
        or a slice (slices.Slice.copies) alike."""
        rowptr, col = xp.empty(self.rowptr.shape, self.rowptr.dtype), xp.empty(self.col.shape, self.col.dtype)
        return [(self.rowptr, rowptr), (self.col, col)], lambda: replace(self, rowptr=rowptr, col=col)


@dataclass(eq=False)
class Partitioning:
    """The parts of one graph under one scheme, P, seed and prune mode. parts is a list, or (built
    lazily for a store) an iterator to be walked once, in part order. What only a store needs of
    the whole graph (its fingerprint: a hash of every byte; its degrees) is taken when asked."""

    parts: object
    graph: object  # the oriented Graph partitioned
    scheme: str
    prune: str
    seed: int
    assignment: object = None
    num_parts: int = 0
    written: list | None = None  # the parts' statistics, once a store was written from a lazy partitioning

    graph_n = property(lambda self: self.graph.n)
    graph_m = property(lambda self: self.graph.m)
    graph_name = property(lambda self: self.graph.name)
    self_loops = property(lambda self: self.graph.self_loops)
    duplicates = property(lambda self: self.graph.duplicates)
    reciprocal = property(lambda self: self.graph.reciprocal)
    original_id = property(lambda self: self.graph.original_id)  # every vertex's id in the source
    fingerprint = property(lambda self: self.graph.fingerprint())
    degree = property(lambda self: self.graph.degree())  # every vertex's degree (for clustering coefficients)

    @property
    def id(self):
        return partitioning_id(self.fingerprint, self.num_parts, self.scheme, self.prune, self.seed)

    def part_stats(self) -> list[dict]:
        """Every part's statistics (of a lazy partitioning: as written to its store)."""
        return self.written if self.written is not None else [recorded(p.stats) for p in self.parts]

    def totals(self):
        """Sums of the per-part statistics, with the replication of vertices and edges."""
        total = {k: sum(s[k] for s in self.part_stats()) for k in STAT_KEYS}
        total["vertex_replication"] = total["v_res"] / self.graph_n if self.graph_n else 0.0
        total["edge_replication"] = total["e_res"] / self.graph_m if self.graph_m else 0.0
        return total
