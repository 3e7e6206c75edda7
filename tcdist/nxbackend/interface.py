"""The object networkx loads as the "tcdist" backend (the ``networkx.backends`` entry point): the
conversions, can_run (what tcdist declines: networkx runs it itself where it chose the backend,
and raises NotImplementedError where backend="tcdist" was asked for; what networkx refuses, refused
with networkx's exception) and should_run (what
networkx does faster when it may choose), and the functions info.py lists."""

import inspect

import networkx as nx

from tcdist.nxbackend import algorithms
from tcdist.nxbackend.graph import TcdistGraph, from_networkx, to_networkx

SMALL_EDGES = 10_000  # fewer: networkx's own loops finish before a count has started (measured on 2 cores)


def convert_from_nx(G, edge_attrs=None, node_attrs=None, preserve_edge_attrs=False, preserve_node_attrs=False,
                    preserve_graph_attrs=False, name=None, graph_name=None) -> TcdistGraph:
    """G's nodes and edges; attributes are not kept (no function here reads one)."""
    return from_networkx(G)


def convert_to_nx(obj, *, name=None):
    """A TcdistGraph back as a networkx graph; results (dicts, numbers, iterators) as they are."""
    return to_networkx(obj) if isinstance(obj, TcdistGraph) else obj


def _arguments(name, args, kwargs) -> dict | str:
    """The call's arguments by name, or why they are not a call of the function."""
    try:
        bound = inspect.signature(getattr(algorithms, name)).bind(*args, **kwargs)
    except TypeError as e:
        return f"not a call of {name}: {e}"
    return bound.arguments


def can_run(name, args, kwargs):
    """True, or why tcdist leaves this call to networkx (whose definitions differ); a call networkx
    refuses (a multigraph's clustering) raises networkx's own exception, as networkx would."""
    arguments = _arguments(name, args, kwargs)
    if isinstance(arguments, str):
        return arguments
    G = arguments["G"]
    if G.is_multigraph() and name != "all_triangles" and not (name == "triangles" and arguments.get("nodes") is None):
        raise nx.NetworkXNotImplemented("not implemented for multigraph type")  # directed or weighted alike
    if G.is_directed():
        return "directed graphs: tcdist counts undirected triangles"
    if arguments.get("weight") is not None:
        return "weighted clustering: tcdist counts unweighted triangles"
    return True


def should_run(name, args, kwargs):
    """True, or why networkx is faster here (a small graph, one node's count)."""
    arguments = _arguments(name, args, kwargs)
    if isinstance(arguments, str):
        return arguments
    G, nodes = arguments["G"], arguments.get("nodes")
    if G.number_of_edges() < SMALL_EDGES:
        return f"fewer than {SMALL_EDGES} edges: networkx's own loops are faster"
    if nodes is not None and nodes in G:
        return "one node: networkx counts its neighbourhood only"
    return True


class BackendInterface:
    """The backend networkx dispatches to: its protocol and the functions info.FUNCTIONS lists."""

    convert_from_nx = staticmethod(convert_from_nx)
    convert_to_nx = staticmethod(convert_to_nx)
    can_run = staticmethod(can_run)
    should_run = staticmethod(should_run)
    triangles = staticmethod(algorithms.triangles)
    clustering = staticmethod(algorithms.clustering)
    average_clustering = staticmethod(algorithms.average_clustering)
    transitivity = staticmethod(algorithms.transitivity)
    all_triangles = staticmethod(algorithms.all_triangles)
