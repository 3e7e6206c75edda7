"""Per-vertex triangles to clustering coefficients.

local clustering c(v) = 2 t(v) / (d(v) (d(v) - 1)) on the simple undirected graph (0 for d < 2);
transitivity = 3 T / wedges; the average local clustering is taken over the graph's vertices
(those with at least one edge), and over a networkx graph's nodes (its isolated ones at 0, as
networkx averages them).
Counts stay integers until the final ratios.
"""

from __future__ import annotations

import numpy as np

from tcdist.errors import TcdistError
from tcdist.graph.degrees import exact_sum, wedge_counts
from tcdist.results import PerVertex


def per_vertex_result(ids, degree, triangles, total: int, nodes: int | None = None) -> tuple[PerVertex, float, float]:
    """(per-vertex arrays, transitivity, average local clustering) of a whole graph; nodes: how
    many the source has where some have no edge (a networkx graph's), to average over."""
    pairs = wedge_counts(degree)
    credited = exact_sum(triangles)
    if credited != 3 * total:
        raise TcdistError(f"internal error: per-vertex triangles add up to {credited}, not 3 x {total}")
    clustering = np.divide(triangles.astype(np.float64), pairs.astype(np.float64),
                           out=np.zeros(triangles.size), where=pairs > 0)
    wedges = exact_sum(pairs)
    transitivity = 3 * total / wedges if wedges else 0.0
    nodes = clustering.size if nodes is None else nodes
    return PerVertex(ids, triangles, clustering), transitivity, float(clustering.sum()) / nodes if nodes else 0.0
