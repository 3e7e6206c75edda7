"""networkx's triangle functions on a TcdistGraph, with networkx's own semantics and return
types: dicts keyed by node in networkx's order, Python ints and floats (never NumPy scalars),
0 (an int) where networkx gives 0. Counts come from tcdist; what is left is per node, vectorised."""

import numpy as np

from tcdist.graph.degrees import exact_sum, wedge_counts
from tcdist.nxbackend.graph import TcdistGraph


def _selected(G: TcdistGraph, nodes):
    """Positions of every node (nodes None), of one node (an int), or of nodes' nodes (an array)."""
    if nodes is None:
        return np.arange(len(G.nodes))
    if G.has_node(nodes):
        return G.index[nodes]
    return G.positions(nodes)


def _by_node(G: TcdistGraph, at, values: np.ndarray):
    """values[at] as networkx gives them: one value for one node, else a dict keyed by node."""
    if np.ndim(at) == 0:
        return values[[at]].tolist()[0]  # tolist: a Python number, never a NumPy scalar
    return dict(zip(G.labels(at).tolist(), values[at].tolist()))


def triangles(G: TcdistGraph, nodes=None):
    """The triangles of every node, of one node (an int) or of a container's nodes (a dict)."""
    return _by_node(G, _selected(G, nodes), G.triangles)


def _coefficients(G: TcdistGraph) -> np.ndarray:
    """2 T / (d (d - 1)) per node as Python objects: 0 where T is 0, else a float (float64 of
    exact integers, rounded once as Python's int / int is)."""
    t, d = 2 * G.triangles, G.degree
    coefficients = np.zeros(t.size, object)
    some = t > 0
    coefficients[some] = t[some] / (d[some] * (d[some] - 1))
    return coefficients


def clustering(G: TcdistGraph, nodes=None, weight=None):
    """Unweighted local clustering of every node, of one node (a number) or of a container's (a dict)."""
    return _by_node(G, _selected(G, nodes), _coefficients(G))


def average_clustering(G: TcdistGraph, nodes=None, weight=None, count_zeros=True):
    """networkx's own average of clustering (its order of addition, its errors on no node)."""
    c = clustering(G, nodes, weight=weight).values()
    if not count_zeros:
        c = [v for v in c if abs(v) > 0]
    return sum(c) / len(c)


def transitivity(G: TcdistGraph):
    """3 triangles / triads: exact integer sums, one division (0, an int, without triangles)."""
    corners = 2 * exact_sum(G.triangles)
    return 0 if corners == 0 else corners / (2 * exact_sum(wedge_counts(G.degree)))


def all_triangles(G: TcdistGraph, nbunch=None):
    """Each triangle once as a tuple of nodes; with nbunch, those with a node of nbunch."""
    member = None
    if nbunch is not None:
        member = np.zeros(len(G.nodes), bool)
        member[G.positions(nbunch)] = True
    labels = G.labels()
    for block in G.triangle_blocks():
        if member is not None:
            block = block[member[block].any(axis=1)]
        yield from zip(*(labels[block[:, corner]].tolist() for corner in range(3)))
