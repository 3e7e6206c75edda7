"""Edges of in-memory objects: scipy sparse matrices, networkx graphs, pandas or cuDF frames,
PyArrow tables and (src, dst) arrays, NumPy or CuPy.

Ids that are not non-negative integers (names, negative numbers, tuples) become labels: the
vertices are numbered by label and the labels kept, so every result maps back to them.
Nothing here needs scipy unless the input is a scipy matrix.
"""

from itertools import chain

import numpy as np

from tcdist.errors import TcdistError
from tcdist.graph.edges import EdgeList
from tcdist.xp import array_module

_NAMED_PAIRS = (("src", "dst"), ("source", "target"))


def edges_of(source) -> EdgeList:
    """The EdgeList of an in-memory graph; a one-line error for anything else."""
    if hasattr(source, "tocoo"):
        coo = source.tocoo()
        if coo.shape[0] != coo.shape[1]:
            raise TcdistError(f"a {coo.shape[0]} x {coo.shape[1]} matrix is not an adjacency matrix (it must be square)")
        return _from_arrays(coo.row, coo.col, "sparse matrix")
    if hasattr(source, "adj") and hasattr(source, "nodes"):
        return _networkx_edges(source)
    if hasattr(source, "column_names") and hasattr(source, "column"):  # a PyArrow table
        src, dst = (source.column(c).to_numpy() for c in _pick_columns(list(source.column_names)))
        return _from_arrays(src, dst, "arrow table")
    if hasattr(source, "columns") and hasattr(source, "iloc"):  # a pandas or cuDF frame
        src, dst = (_column_array(source[c]) for c in _pick_columns(list(source.columns)))
        return _from_arrays(src, dst, "data frame")
    if isinstance(source, (tuple, list)) and len(source) == 2:
        return _from_arrays(source[0], source[1], "edge arrays")
    raise TcdistError(f"cannot read a graph from {type(source).__name__}: give a path, a generator spec, a scipy "
                      "sparse matrix, a networkx graph, a pandas/cuDF frame, a PyArrow table or two arrays of ids")


def _pick_columns(names: list) -> tuple:
    for pair in _NAMED_PAIRS:
        if all(c in names for c in pair):
            return pair
    if len(names) == 2:
        return tuple(names)
    raise TcdistError(f"an edge table with {len(names)} columns ({', '.join(map(str, names[:6]))}): give two "
                      "columns, or name them src and dst (or source and target)")


def _column_array(column):
    """A frame's column as NumPy (pandas) or CuPy (cuDF) array."""
    return column.to_cupy() if hasattr(column, "to_cupy") else column.to_numpy()


def _networkx_edges(graph) -> EdgeList:
    """Each edge once as networkx holds it (a self loop once, both directions of a DiGraph);
    iteration stays in C (np.fromiter over networkx's edge view)."""
    nodes = list(graph)
    pairs = chain.from_iterable(graph.edges())
    count = 2 * graph.number_of_edges()
    numbers = np.array(nodes) if nodes else np.zeros(0, np.int64)
    if numbers.ndim == 1 and numbers.dtype.kind in "iu" and (numbers.size == 0 or numbers.min() >= 0):
        flat, labels = np.fromiter(pairs, np.int64, count), None
    else:
        index = dict(zip(nodes, range(len(nodes))))
        flat, labels = np.fromiter(map(index.__getitem__, pairs), np.int64, count), np.fromiter(nodes, object)
    return EdgeList(flat[0::2].copy(), flat[1::2].copy(), "networkx graph", labels=labels)


def _from_arrays(src, dst, name) -> EdgeList:
    src, dst, labels = edge_arrays(src, dst, name)
    return EdgeList(src, dst, name, labels=labels)


def edge_arrays(src, dst, name):
    """(src, dst, labels): two array-likes of vertex ids as int64 NumPy/CuPy arrays. Ids that are
    not non-negative integers are replaced by their index among the sorted distinct labels."""
    xp = array_module(src, dst)
    src, dst = xp.asarray(src), xp.asarray(dst)
    if src.ndim != 1 or src.shape != dst.shape:
        raise TcdistError(f"{name}: source and target arrays must be 1-D and of equal length")
    integers = np.issubdtype(src.dtype, np.integer) and np.issubdtype(dst.dtype, np.integer)
    if integers and not (src.size and int(min(src.min(), dst.min())) < 0):
        return src.astype(xp.int64), dst.astype(xp.int64), None
    try:
        labels, index = xp.unique(xp.concatenate([src, dst]), return_inverse=True)
    except TypeError:
        raise TcdistError(f"{name}: vertex labels must be comparable (all numbers or all text)") from None
    index = index.reshape(-1).astype(xp.int64)
    return index[: src.size], index[src.size :], labels
