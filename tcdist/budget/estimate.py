"""What a part of a random P-way partitioning needs, from degrees alone: the two bounds that
let parts='auto' choose P without building a part (budget/search.py).

Under the random scheme each vertex is local to a part with probability q = 1/P, independently.
LSTC's part keeps at least L ∪ N+(L) with L's out-edges and the edges inside N+(L) (prune
'minimal'), and at most the induced subgraph of L ∪ N+(L) ∪ N-(L) (prune 'none'). A vertex v
is in the first set with probability 1 - (1-q)^(1 + d-(v)) (itself or an in-neighbour local),
in the second with 1 - (1-q)^(1 + d(v)); an edge u -> v is in the first with q + (1-q) (1 -
(1-q)^d-(u)) (1 - (1-q)^(d-(v) - 1)), where the two events share no vertex's draw but u's, so by
Harris' inequality (both are increasing in the draws) the product is at most their joint
probability: the sum is a lower bound of the expected minimal part. The induced edge's
probability, 1 - (1-q)^2 + (1-q)^2 (1 - (1-q)^(d(u)-1)) (1 - (1-q)^(d(v)-1)), takes its two
ends' other neighbours as independent: an estimate of the induced part, not a bound.

The sums run over a uniform sample of vertices and of edges (all of them in a small graph),
whose in-degrees one pass over the columns counts (on every core, or a bincount on a GPU).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcdist import compiled
from tcdist.compiled import jit, prange
from tcdist.xp import array_module, to_numpy

SAMPLE = 1 << 17  # vertices and edges sampled: a sum's relative error about 1 / sqrt(SAMPLE s) of a share s it counts
COUNTED_FROM = 1 << 20  # edges from which the sample's in-degrees are counted on every core (else one bincount)


@dataclass
class PartModel:
    """The degrees of a sample of vertices and edges of an oriented graph (n vertices, m edges),
    and what a random part of it holds on average. Degrees are kept as indices into their
    distinct values (few: thousands on RMAT-25), whose powers each P computes once."""

    n: int
    m: int
    values: np.ndarray  # the distinct in-degrees and degrees of the sample, and those less one
    vertex_in: np.ndarray  # each sampled vertex's in-degree, as an index into values
    vertex_degree: np.ndarray  # its degree (in + out)
    source_in: np.ndarray  # each sampled edge's source's in-degree
    source_others: np.ndarray  # its degree less one (its neighbours but the target)
    target_in_others: np.ndarray  # its target's in-degree less one (its in-neighbours but the source)
    target_others: np.ndarray  # its degree less one

    def minimal(self, parts: int) -> tuple[float, float, float]:
        """(rows, columns, local rows) of a part at least, on average: its local vertices, their
        out-neighbours and the edges LSTC needs among them."""
        q, none = self._none_local(parts)
        rows = self.n * float(np.mean(1 - (1 - q) * none[self.vertex_in])) if self.n else 0.0
        reached = (1 - none[self.source_in]) * (1 - none[self.target_in_others])
        columns = self.m * float(np.mean(q + (1 - q) * reached)) if self.m else 0.0
        return rows, columns, self.n * q

    def induced(self, parts: int) -> tuple[float, float, float]:
        """(rows, columns, local rows) of the induced part, all its members and their edges, on average."""
        q, none = self._none_local(parts)
        rows = self.n * float(np.mean(1 - (1 - q) * none[self.vertex_degree])) if self.n else 0.0
        neither = (1 - q) ** 2
        others = (1 - none[self.source_others]) * (1 - none[self.target_others])
        columns = self.m * float(np.mean(1 - neither + neither * others)) if self.m else 0.0
        return rows, columns, self.n * q

    def _none_local(self, parts: int) -> tuple[float, np.ndarray]:
        """(q, the chance that none of k vertices is local, (1-q)^k, for each k of values)."""
        q = 1.0 / parts
        return q, np.exp(self.values * np.log1p(-q)) if parts > 1 else (self.values == 0).astype(np.float64)


def part_model(graph, seed: int = 0, sample: int = SAMPLE) -> PartModel:
    """The model of the graph's random parts from a sample of `sample` vertices and as many edges,
    drawn with the seed (every vertex and edge where there are no more)."""
    rowptr, col = graph.rowptr, graph.col
    xp = array_module(col)
    n, m = graph.n, graph.m
    rng = np.random.default_rng(seed)
    vertices = np.arange(n, dtype=np.int64) if n <= sample else rng.integers(0, n, sample)
    edges = np.arange(m, dtype=np.int64) if m <= sample else np.sort(rng.integers(0, m, sample))
    on_device = xp.asarray(edges)
    sources = to_numpy(xp.searchsorted(rowptr, on_device, side="right") - 1)
    targets = to_numpy(col[on_device]).astype(np.int64)
    asked = np.concatenate([vertices, sources, targets])
    wanted, where = np.unique(asked, return_inverse=True)
    in_degree = in_degrees(col, n, wanted)[where]
    out = to_numpy(rowptr[xp.asarray(wanted + 1)] - rowptr[xp.asarray(wanted)])[where]
    degree = in_degree + out
    k, s = vertices.size, sources.size
    counts = [in_degree[:k], degree[:k], in_degree[k:k + s], degree[k:k + s] - 1, in_degree[k + s:] - 1,
              degree[k + s:] - 1]
    values, indices = np.unique(np.concatenate(counts), return_inverse=True)
    vertex_in, vertex_degree, source_in, source_others, target_in_others, target_others = \
        np.split(indices, np.cumsum([c.size for c in counts])[:-1])
    return PartModel(n=n, m=m, values=values.astype(np.float64), vertex_in=vertex_in, vertex_degree=vertex_degree,
                     source_in=source_in, source_others=source_others, target_in_others=target_in_others,
                     target_others=target_others)


def in_degrees(col, n: int, vertices: np.ndarray) -> np.ndarray:
    """How many columns name each of the (distinct) vertices: their in-degrees, in one pass over
    the columns (a bincount of them on a GPU or for a few edges; else on every core, each thread
    counting the sampled vertices alone, so no thread holds n counters)."""
    xp = array_module(col)
    if xp is not np or col.size < COUNTED_FROM:
        return to_numpy(xp.bincount(col, minlength=n)[xp.asarray(vertices)]).astype(np.int64)
    slot = np.full(n, -1, np.int32)
    slot[vertices] = np.arange(vertices.size, dtype=np.int32)
    return _count_slots(col, slot, vertices.size, max(compiled.get_threads(), 1))


def prebuild() -> None:
    """Compile (or load) the in-degree pass for both column types (`tcdist warm-up`)."""
    for dtype in (np.int32, np.int64):
        _count_slots(np.zeros(1, dtype), np.zeros(1, np.int32), 1, 1)


@jit(parallel=True, cache=True, nogil=True)
def _count_slots(col, slot, slots, pieces):
    """counts[s]: the columns whose vertex has slot s (slot -1: not counted), each of `pieces`
    runs of columns counted on a thread in its own counters, then summed."""
    size = col.size
    counts = np.zeros((pieces, slots), np.int64)
    for p in prange(pieces):
        mine = np.zeros(slots, np.int64)  # not counts[p]: neighbouring pieces' counters share cache lines
        for e in range(p * size // pieces, (p + 1) * size // pieces):
            s = slot[col[e]]
            if s >= 0:
                mine[s] += 1
        counts[p] = mine
    return counts.sum(axis=0)
