"""The oriented CSR every later stage works on."""

import hashlib
from dataclasses import dataclass, field, replace

import numpy as np

from tcdist.errors import TcdistError
from tcdist.graph.degrees import exact_sum, wedge_counts
from tcdist.xp import array_module, to_numpy

MAX_VERTICES = 3_037_000_499  # n * n must fit in int64: edges are sorted as packed keys u * n + v


def col_dtype(n):
    """Column indices are int32 while ids fit, int64 beyond: one canonical dtype per graph size."""
    return np.int32 if n < 2**31 else np.int64


class CSR:
    """Sizes and array module of anything holding an oriented CSR (``rowptr``, ``col``)."""

    @property
    def n(self):
        return int(self.rowptr.size) - 1

    @property
    def m(self):
        return int(self.col.size)

    @property
    def xp(self):
        return array_module(self.rowptr)


@dataclass(eq=False)
class Graph(CSR):
    """A simple undirected graph, each edge kept once from lower to higher (degree, id) rank.

    Vertices are numbered in rank order, so ``u -> v`` implies ``u < v`` and rows are
    sorted. ``rowptr`` is int64; ``col`` int32 (int64 for 2^31 vertices or more);
    ``original_id[u]`` is the id vertex u had in the source.
    """

    rowptr: object
    col: object
    original_id: object
    name: str = ""
    self_loops: int = 0
    duplicates: int = 0  # repeats of an edge already read in the same direction
    reciprocal: int = 0  # edges read in both directions, merged into one undirected edge
    warnings: list = field(default_factory=list)
    labels: object = None  # with ids that were not integers: original_id indexes these labels
    degrees: dict | None = None  # degree_summary of every row, when the graph was built here
    _fingerprint: str | None = field(default=None, init=False, repr=False)  # once taken (not copied by replace)

    def refuse_labels(self, what: str) -> None:
        """Files keep integer ids only: a graph with labels would come back with their indices."""
        if self.labels is not None:
            raise TcdistError(f"{what} keeps integer vertex ids only, and this graph's vertices have labels; count "
                              "it in memory, or give it integer ids")

    def refuse_on_disk(self, what: str) -> None:
        """Stop where the graph's columns lie on disk (io/scratch.py) and what needs them in memory."""
        if getattr(self.col, "on_disk", False):
            raise TcdistError(f"{self.name}: {what} needs the graph in memory, and its columns lie on disk (more than "
                              "memory holds); do it on a host with more memory")

    def vertex_ids(self):
        """Every vertex's id in the source (its label, when the source had labels), as NumPy."""
        ids = to_numpy(self.original_id)
        return ids if self.labels is None else to_numpy(self.labels)[ids]

    def on_host(self) -> "Graph":
        """The graph with its arrays in host memory (itself when they are there already)."""
        if self.xp is np:
            return self
        return replace(self, rowptr=to_numpy(self.rowptr), col=to_numpy(self.col),
                       original_id=to_numpy(self.original_id))

    def out_degree(self):
        return self.xp.diff(self.rowptr)

    def degree(self):
        """Undirected degree: out-degree plus in-degree."""
        if getattr(self.col, "on_disk", False):  # (io/scratch.py's columns, read a run at a time)
            return self.out_degree() + self.col.bincount(self.n)
        return self.out_degree() + self.xp.bincount(self.col, minlength=self.n)

    def fingerprint(self):
        """Hash of the oriented CSR: names this exact graph in stores and results. Taken once (a
        pass over every byte on one core: each probe of --parts auto took it again)."""
        if self._fingerprint is None:
            h = hashlib.blake2b(digest_size=16)
            h.update(np.array([self.n, self.m], np.int64).tobytes())
            h.update(np.ascontiguousarray(to_numpy(self.rowptr), np.int64).data)
            if getattr(self.col, "on_disk", False):  # (io/scratch.py's columns, read a run at a time)
                for _, run in self.col.runs():
                    h.update(np.ascontiguousarray(run, col_dtype(self.n)).data)
            else:
                h.update(np.ascontiguousarray(to_numpy(self.col), col_dtype(self.n)).data)
            self._fingerprint = h.hexdigest()
        return self._fingerprint

    def stats(self):
        """Degree statistics and wedge counts, exact integers."""
        xp = self.xp
        deg = self.degree().astype(xp.int64)
        out = self.out_degree().astype(xp.int64)
        if self.n == 0:
            zero = {"min": 0, "max": 0, "mean": 0.0, "median": 0.0}
            return {"degree": zero, "wedges": 0, "oriented_wedges": 0, "max_out_degree": 0}
        return {
            "degree": {
                "min": int(deg.min()),
                "max": int(deg.max()),
                "mean": 2 * self.m / self.n,
                "median": float(xp.median(deg)),
            },
            "wedges": exact_sum(wedge_counts(to_numpy(deg))),
            "oriented_wedges": exact_sum(wedge_counts(to_numpy(out))),
            "max_out_degree": int(out.max()),
        }
