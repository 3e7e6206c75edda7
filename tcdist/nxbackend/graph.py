"""The graph networkx hands the tcdist backend: its nodes (any hashable, in G's order) and each
edge once as a pair of node positions, read from G's adjacency in C-level passes (no Python loop
over edges). Triangles are counted by tcdist's API on first use and kept with the graph (networkx
caches the converted graph on G until G changes)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain

import networkx as nx
import numpy as np

from tcdist import api
from tcdist.count.listing import triangle_blocks

GPU_FROM_EDGES = 4_000_000  # below this a CPU counts before a GPU has started (context, kernels); above, auto decides


class _Nodes:
    """networkx's own node tests on a dict of positions, so nbunch reads (and fails) as in networkx."""

    __contains__ = nx.Graph.__contains__
    nbunch_iter = nx.Graph.nbunch_iter

    def __init__(self, index: dict):
        """Both of networkx's node dicts are the positions (nbunch_iter reads _adj, ``in`` reads _node)."""
        self._node = self._adj = index


@dataclass(eq=False)
class TcdistGraph:
    """An undirected networkx graph as tcdist counts it: src[i] < dst[i] are node positions."""

    nodes: list
    index: dict  # node -> position
    src: np.ndarray
    dst: np.ndarray
    loops: np.ndarray  # positions of the nodes with a self loop (kept for convert_to_nx only)
    multigraph: bool = False
    graph: dict = field(default_factory=dict)

    __networkx_backend__ = "tcdist"

    def is_directed(self) -> bool:
        """False: can_run reads it of a TcdistGraph passed to networkx as of a networkx graph."""
        return False

    def is_multigraph(self) -> bool:
        """Whether G was a multigraph (networkx refuses some functions on those)."""
        return self.multigraph

    def has_node(self, node) -> bool:
        """Whether node is one node of G (False for anything unhashable), as ``node in G``."""
        return node in _Nodes(self.index)

    def positions(self, nbunch) -> np.ndarray:
        """The positions of nbunch's nodes as networkx reads nbunch (a node, or an iterable whose
        nodes outside G are skipped; each node once, first place kept)."""
        found = dict.fromkeys(map(self.index.__getitem__, _Nodes(self.index).nbunch_iter(nbunch)))
        return np.fromiter(found, np.int64, len(found))

    def labels(self, at=None) -> np.ndarray:
        """The nodes (at those positions) as an object array, so that .tolist() gives them back as they were."""
        labels = np.fromiter(self.nodes, object, len(self.nodes))  # not np.array: tuples would become rows
        return labels if at is None else labels[at]

    @cached_property
    def degree(self) -> np.ndarray:
        """Each node's neighbours other than itself (networkx's degree in clustering)."""
        n = len(self.nodes)
        return np.bincount(self.src, minlength=n) + np.bincount(self.dst, minlength=n)

    @cached_property
    def triangles(self) -> np.ndarray:
        """The triangles each node is in (int64), counted by tcdist; nodes without edges have 0."""
        counted = api.count_triangles((self.src, self.dst), backend=_device(self.src.size), per_vertex=True)
        counts = np.zeros(len(self.nodes), np.int64)
        counts[counted.per_vertex.vertex] = counted.per_vertex.triangles
        return counts

    def triangle_blocks(self):
        """Every triangle once, as (k, 3) arrays of node positions, a block at a time."""
        graph = api.load_graph((self.src, self.dst))
        for block in triangle_blocks(graph.rowptr, graph.col):
            yield graph.original_id[block]


def _device(edges: int) -> str:
    """tcdist's backend for a graph of this many edges (see GPU_FROM_EDGES)."""
    return "cpu" if edges < GPU_FROM_EDGES else "auto"


def from_networkx(G) -> TcdistGraph:
    """Each edge of an undirected G once (parallel edges merged, self loops set apart), as positions
    (can_run keeps directed graphs away)."""
    nodes, adj = list(G), G._adj  # G's order (its results' order), which adj's need not share
    index = dict(zip(nodes, range(len(nodes))))
    rows = np.fromiter(map(index.__getitem__, adj), np.int64, len(nodes))
    degree = np.fromiter(map(len, adj.values()), np.int64, len(nodes))
    src = np.repeat(rows, degree)
    dst = np.fromiter(map(index.__getitem__, chain.from_iterable(adj.values())), np.int64, int(degree.sum()))
    keep = src < dst
    return TcdistGraph(nodes, index, src[keep], dst[keep], src[src == dst], G.is_multigraph(), dict(G.graph))


def to_networkx(graph: TcdistGraph):
    """The networkx graph of a TcdistGraph (its nodes, edges and self loops; no attributes)."""
    G = (nx.MultiGraph if graph.multigraph else nx.Graph)(graph.graph)
    labels = graph.labels()
    G.add_nodes_from(graph.nodes)
    G.add_edges_from(zip(labels[graph.src].tolist(), labels[graph.dst].tolist()))
    G.add_edges_from(zip(labels[graph.loops].tolist(), labels[graph.loops].tolist()))
    return G
