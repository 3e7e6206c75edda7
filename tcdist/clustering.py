"""Per-vertex triangles to clustering coefficients.

local clustering c(v) = 2 t(v) / (d(v) (d(v) - 1)) on the simple undirected graph (0 for d < 2);
transitivity = 3 T / wedges; the average local clustering is taken over the graph's vertices
(those with at least one edge; networkx also averages in isolated nodes, at 0).
Counts stay integers until the final ratios.
"""

from __future__ import annotations

import numpy as np

from tcdist.errors import TcdistError
from tcdist.graph.degrees import exact_sum, wedge_counts
from tcdist.results import PerVertex


def per_vertex_result(ids, degree, triangles, total: int) -> tuple[PerVertex, float, float]:
    """(per-vertex arrays, transitivity, average local clustering) of a whole graph."""
    pairs = wedge_counts(degree)
    credited = exact_sum(triangles)
    if credited != 3 * total:
        raise TcdistError(f"internal error: per-vertex triangles add up to {credited}, not 3 x {total}")
    clustering = np.divide(triangles.astype(np.float64), pairs.astype(np.float64),
                           out=np.zeros(triangles.size), where=pairs > 0)
    wedges = exact_sum(pairs)
    transitivity = 3 * total / wedges if wedges else 0.0
    return PerVertex(ids, triangles, clustering), transitivity, float(clustering.mean()) if clustering.size else 0.0
