"""Edges of in-memory objects: scipy sparse matrices, networkx graphs, pandas or cuDF frames,
PyArrow tables, (src, dst) arrays, NumPy or CuPy, (m, 2) arrays and lists of (source, target)
pairs. Two items are the (src, dst) form unless both are 2-tuples: [(0, 1), (1, 2)] is two edges.

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
            raise TcdistError(f"a {coo.shape[0]} x {coo.shape[1]} matrix is not an adjacency matrix "
                              "(it must be square)")
        return _from_arrays(coo.row, coo.col, "sparse matrix")
    if hasattr(source, "adj") and hasattr(source, "nodes"):
        return _networkx_edges(source)
    if hasattr(source, "column_names") and hasattr(source, "column"):  # a PyArrow table
        src, dst = (source.column(c).to_numpy() for c in _pick_columns(list(source.column_names)))
        return _from_arrays(src, dst, "arrow table")
    if hasattr(source, "columns") and hasattr(source, "iloc"):  # a pandas or cuDF frame
        src, dst = (_column_array(source[c]) for c in _pick_columns(list(source.columns)))
        return _from_arrays(src, dst, "data frame")
    if hasattr(source, "shape") and hasattr(source, "dtype"):  # a NumPy or CuPy array
        if len(source.shape) != 2 or source.shape[1] != 2:
            raise TcdistError(f"an array of edges has shape (m, 2), a (source, target) row per edge; this one has "
                              f"shape {tuple(source.shape)}")
        return _from_arrays(source[:, 0], source[:, 1], "edge array")
    if isinstance(source, (tuple, list)):
        if len(source) == 2 and not all(isinstance(e, tuple) and len(e) == 2 for e in source):
            return _from_arrays(source[0], source[1], "edge arrays")
        return _from_arrays(*_columns_of_pairs(source), "edge pairs")
    raise TcdistError(f"cannot read a graph from {type(source).__name__}: give a path, a generator spec, a scipy "
                      "sparse matrix, a networkx graph, a pandas/cuDF frame, a PyArrow table, two arrays of ids, "
                      "an (m, 2) array or a list of (source, target) pairs")


def _columns_of_pairs(pairs) -> tuple[list, list]:
    """A list of (source, target) pairs as its two columns; a one-line error for an item of another length."""
    for i, pair in enumerate(pairs):
        if not hasattr(pair, "__len__") or isinstance(pair, (str, bytes)) or len(pair) != 2:
            raise TcdistError(f"edge pairs: item {i} is {pair!r}, not a (source, target) pair")
    return [pair[0] for pair in pairs], [pair[1] for pair in pairs]


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
    try:
        numbers = np.array(nodes) if nodes else np.zeros(0, np.int64)
    except (ValueError, TypeError, OverflowError):  # nodes numpy cannot stack (tuples of several lengths): labels
        numbers = np.zeros(0, object)
    if numbers.ndim == 1 and numbers.dtype.kind in "iu" and (not nodes or _fits_int64(numbers.min(), numbers.max())):
        flat, labels = np.fromiter(pairs, np.int64, count), None
    else:
        index = dict(zip(nodes, range(len(nodes))))
        flat = np.fromiter(map(index.__getitem__, pairs), np.int64, count)
        labels = np.fromiter(nodes, object, len(nodes))  # not np.array: tuples of one length would become rows
    return EdgeList(flat[0::2].copy(), flat[1::2].copy(), "networkx graph", labels=labels)


def _from_arrays(src, dst, name) -> EdgeList:
    src, dst, labels = edge_arrays(src, dst, name)
    return EdgeList(src, dst, name, labels=labels)


_INT64_MAX = np.iinfo(np.int64).max


def _fits_int64(low, high) -> bool:
    """Whether ids from low to high are non-negative int64 values (uint64 ones past 2**63 - 1 are not)."""
    return int(low) >= 0 and int(high) <= _INT64_MAX


def _id_array(xp, ids):
    """An array of ids; a list of ints numpy would make float64 (2**64 - 1 beside 1 or -1) keeps them exact."""
    array = xp.asarray(ids)
    if xp is np and array.dtype.kind == "f" and isinstance(ids, (list, tuple)) and not all(
            isinstance(i, float) for i in ids):
        return np.fromiter(ids, object, len(ids))
    return array


def edge_arrays(src, dst, name):
    """(src, dst, labels): two array-likes of vertex ids as int64 NumPy/CuPy arrays. Ids that are
    not non-negative int64 integers are replaced by their index among the sorted distinct labels."""
    xp = array_module(src, dst)
    src, dst = _id_array(xp, src), _id_array(xp, dst)
    if src.ndim != 1 or src.shape != dst.shape:
        raise TcdistError(f"{name}: source and target arrays must be 1-D and of equal length")
    kinds = {src.dtype.kind, dst.dtype.kind}
    if kinds <= set("iu"):
        if not src.size:
            return src.astype(xp.int64), dst.astype(xp.int64), None
        low, high = min(int(src.min()), int(dst.min())), max(int(src.max()), int(dst.max()))
        if _fits_int64(low, high):
            return src.astype(xp.int64), dst.astype(xp.int64), None
        common = xp.int64 if high <= _INT64_MAX else xp.uint64 if low >= 0 else None
        if common is None and xp is not np:
            raise TcdistError(f"{name}: vertex ids from {low} to {high} fit no 64-bit integer type; give them as "
                              "NumPy arrays (they become labels) or renumber them")
        common = common or object  # negative ids beside ids past 2**63 - 1: Python ints compare them exactly
        src, dst = src.astype(common), dst.astype(common)
    elif xp is np and kinds & set("iu") and "f" in kinds:
        src, dst = src.astype(object), dst.astype(object)  # integer ids beside floats: float64 would round past 2**53
    try:
        labels, index = xp.unique(xp.concatenate([src, dst]), return_inverse=True)
    except TypeError:
        raise TcdistError(f"{name}: vertex labels must be comparable (all numbers or all text)") from None
    index = index.reshape(-1).astype(xp.int64)
    return index[: src.size], index[src.size :], labels
