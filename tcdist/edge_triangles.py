"""Per-edge triangles: each part's credits keyed by the edge's ends in the whole graph, summed by
key over parts and ranks, then given the source's ids.

A key is lo * n + hi for the edge's ends lo < hi in global ids (rank order, in which every edge
of the graph and of its parts runs from lower to higher id); n * n fits 63 bits (MAX_VERTICES).
Sums stay uint64 throughout.
"""

from __future__ import annotations

import numpy as np

from tcdist.errors import TcdistError
from tcdist.graph.degrees import exact_sum
from tcdist.results import PerEdge
from tcdist.xp import segment_ids, to_numpy


def sum_by_key(keys, credits) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct keys, sorted; each one's credits summed), exactly."""
    order = np.argsort(keys)
    keys, credits = keys[order], credits[order]
    first = np.ones(keys.size, bool)
    first[1:] = keys[1:] != keys[:-1]
    starts = np.flatnonzero(first)
    return keys[starts], np.add.reduceat(credits, starts)


def summed(pairs) -> tuple[np.ndarray, np.ndarray]:
    """Several (keys, credits) pairs (parts, ranks) summed by key into one."""
    pairs = list(pairs)
    return sum_by_key(np.concatenate([k for k, _ in pairs] or [np.zeros(0, np.uint64)]),
                      np.concatenate([c for _, c in pairs] or [np.zeros(0, np.uint64)]))


class EdgeCredits:
    """One rank's per-edge credits, part by part (Device.count_per_edge: uint64 per CSR position)."""

    def __init__(self, n: int):
        self.n = n
        self._pairs = []

    def add(self, part, credits) -> None:
        rowptr, col = to_numpy(part.rowptr), to_numpy(part.col)
        # every edge comes once from the local rows of the part where its lower end is local;
        # proxies' rows matter only where credited
        keep = credits > 0
        keep[:int(rowptr[part.n_local])] = True
        rows = segment_ids(np.diff(rowptr))[keep]
        heads = col[keep]
        if part.global_id is not None:
            global_id = to_numpy(part.global_id)
            rows, heads = global_id[rows], global_id[heads]
        keys = rows.astype(np.uint64) * np.uint64(self.n) + heads.astype(np.uint64)
        self._pairs.append((keys, credits[keep]))

    def summed(self) -> tuple[np.ndarray, np.ndarray]:
        """(keys, credits) of every edge this rank counted, each key once; the parts are let go."""
        pairs, self._pairs = self._pairs, []
        return summed(pairs)


def per_edge_result(keys, credits, n: int, m: int, total: int, ids, order) -> PerEdge:
    """The whole graph's summed credits as a PerEdge: ends in source ids (ids per global vertex),
    the first before the second in the order that sorts the vertices (order: as per-vertex rows
    are sorted), rows sorted by (u, v)."""
    if keys.size != m:
        raise TcdistError(f"internal error: per-edge triangles for {keys.size} edges, not the graph's {m}")
    credited = exact_sum(credits)
    if credited != 3 * total:
        raise TcdistError(f"internal error: per-edge triangles add up to {credited}, not 3 x {total}")
    a, b = (keys // np.uint64(n)).astype(np.int64), (keys % np.uint64(n)).astype(np.int64)
    place = np.empty(n, np.int64)
    place[order] = np.arange(n)
    first = place[a] < place[b]
    u, v = np.where(first, a, b), np.where(first, b, a)
    rows = np.argsort(place[u] * n + place[v])
    return PerEdge(ids[u[rows]], ids[v[rows]], credits[rows])
