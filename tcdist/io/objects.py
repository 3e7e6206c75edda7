"""Edges of in-memory objects: scipy sparse matrices, networkx graphs, pandas or cuDF frames,
PyArrow tables, (src, dst) arrays, NumPy or CuPy, (m, 2) arrays and lists of (source, target)
pairs. Two items are the (src, dst) form unless both are 2-tuples: [(0, 1), (1, 2)] is two edges.

Ids that are not non-negative integers (names, negative numbers, tuples) become labels: the
vertices are numbered by label and the labels kept, so every result maps back to them.
Nothing here needs scipy unless the input is a scipy matrix.
"""

import operator
import sys
from itertools import chain, count, repeat

import numpy as np

from tcdist.errors import TcdistError
from tcdist.graph.edges import EdgeList
from tcdist.io.labels import numbered_texts
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
    if _is_networkx(source):
        return _networkx_edges(source)
    if hasattr(source, "column_names") and hasattr(source, "column"):  # a PyArrow table
        return _arrow_edges([source.column(c) for c in _pick_columns(list(source.column_names))])
    if hasattr(source, "columns") and hasattr(source, "iloc"):  # a pandas or cuDF frame
        columns = [source[c] for c in _pick_columns(list(source.columns))]
        for end, column in zip(("source", "target"), columns):
            missing = column.isna()
            if missing.any():
                row = int(missing.to_numpy().argmax())
                _refuse_missing("data frame", end, row, column.iloc[row])  # its own NA (nan, None, <NA>)
        return _from_arrays(*map(_column_array, columns), "data frame")
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


def node_count(source) -> int | None:
    """A networkx graph's number of nodes, those without an edge too (its average clustering counts
    them, at 0); None for any other source, whose vertices are the ends of its edges."""
    return source.number_of_nodes() if _is_networkx(source) else None


def _is_networkx(source) -> bool:
    return hasattr(source, "adj") and hasattr(source, "nodes")


def _columns_of_pairs(pairs) -> tuple[list, list]:
    """A list of (source, target) pairs as its two columns; a one-line error for an item of another length."""
    for i, pair in enumerate(pairs):
        if not hasattr(pair, "__len__") or isinstance(pair, (str, bytes)) or len(pair) != 2:
            raise TcdistError(f"edge pairs: item {i} is {pair!r}, not a (source, target) pair")
    return [pair[0] for pair in pairs], [pair[1] for pair in pairs]


def _pick_columns(names: list) -> tuple:
    picked = next((pair for pair in _NAMED_PAIRS if all(c in names for c in pair)), None)
    if picked is None and len(names) == 2:
        picked = tuple(names)
    twice = [c for c in dict.fromkeys(picked or ()) if names.count(c) > 1]
    if twice:
        raise TcdistError(f"an edge table whose column name {twice[0]!r} is given to {names.count(twice[0])} columns: "
                          "name its two columns apart")
    if picked is not None:
        return picked
    raise TcdistError(f"an edge table with {len(names)} columns ({', '.join(map(str, names[:6]))}): give two "
                      "columns, or name them src and dst (or source and target)")


def _column_array(column):
    """A frame's column as NumPy (pandas) or CuPy (cuDF) array."""
    return column.to_cupy() if hasattr(column, "to_cupy") else column.to_numpy()


def _arrow_edges(columns) -> EdgeList:
    """A PyArrow table's two columns of ids: text ones numbered in Arrow, others as NumPy arrays."""
    import pyarrow as pa

    for end, column in zip(("source", "target"), columns):
        if column.null_count:
            _refuse_missing("arrow table", end, int(column.is_null().to_numpy().argmax()), "null")
    if all(pa.types.is_string(c.type) or pa.types.is_large_string(c.type) for c in columns):
        src, dst, labels = _numbered_pair(*(c.cast(pa.large_string()).combine_chunks() for c in columns))
        return EdgeList(src, dst, "arrow table", labels=labels)
    return _from_arrays(*(c.to_numpy() for c in columns), "arrow table")


def _networkx_edges(graph) -> EdgeList:
    """Each edge once as networkx holds it (a self loop once, both directions of a DiGraph);
    iteration stays in C (np.fromiter over networkx's edge view)."""
    nodes = list(graph)
    pairs = chain.from_iterable(graph.edges())
    ends = 2 * graph.number_of_edges()
    numbers = _id_array(np, nodes)  # integers, or objects (never an array as wide as the longest name)
    if numbers.dtype.kind in "iu" and (not nodes or _fits_int64(numbers.min(), numbers.max())):
        flat, labels = np.fromiter(pairs, np.int64, ends), None
    else:
        index = dict(zip(nodes, range(len(nodes))))
        flat = np.fromiter(map(index.__getitem__, pairs), np.int64, ends)
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
    """An array of ids. A list keeps its ids' types: integers as integers (as Python ints where NumPy
    would make float64 of them: 2**64 - 1 beside -1), floats as floats, anything else as Python objects
    (NumPy would make 1 and '1' one string, and every name as wide as the longest)."""
    if xp is not np or not isinstance(ids, (list, tuple)):
        return xp.asarray(ids)
    types = set(map(type, ids))
    if all(issubclass(t, (int, np.integer)) for t in types):
        array = np.asarray(ids, np.int64 if not ids else None)
        return array if array.dtype.kind != "f" else np.fromiter(ids, object, len(ids))
    if all(issubclass(t, (float, np.floating)) for t in types):
        return np.asarray(ids, np.float64)
    return np.fromiter(ids, object, len(ids))


def edge_arrays(src, dst, name):
    """(src, dst, labels): two array-likes of vertex ids as int64 NumPy/CuPy arrays. Ids that are
    not non-negative int64 integers are replaced by their index among the distinct labels, told
    apart as networkx tells nodes apart (1 and '1' are two, 1 and 1.0 one); a missing id is refused."""
    xp = array_module(src, dst)
    for end, ids in (("source", src), ("target", dst)):
        masked = np.ma.getmaskarray(ids) if np.ma.isMaskedArray(ids) else None  # asarray reads a masked cell's data
        if masked is not None and masked.any():
            _refuse_missing(name, end, int(masked.argmax()), "masked")
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
    for end, ids in (("source", src), ("target", dst)):
        missing = xp.isnan(ids) if ids.dtype.kind in "fc" else xp.isnat(ids) if ids.dtype.kind in "mM" else None
        if missing is not None and bool(missing.any()):
            row = int(xp.argmax(missing))
            _refuse_missing(name, end, row, ids[row])  # nan, or a date's or a duration's NaT
    if src.dtype.kind not in "OUS" and dst.dtype.kind not in "OUS":
        labels, index = xp.unique(xp.concatenate([src, dst]), return_inverse=True)
        index = index.reshape(-1).astype(xp.int64)
        return index[: src.size], index[src.size :], labels
    texts = _texts(src), _texts(dst)
    if texts[0] is not None and texts[1] is not None and texts[0].type == texts[1].type:
        return _numbered_pair(*texts)
    return _numbered_objects(src.astype(object), dst.astype(object), name)


def _numbered_pair(src, dst):
    """(src, dst, labels) of two Arrow arrays of text of one type, numbered in byte order."""
    import pyarrow as pa

    number, labels = numbered_texts(pa.concat_arrays([src, dst]))
    return number[: len(src)], number[len(src) :], labels.to_numpy(zero_copy_only=False)


def _texts(ids):
    """ids as an Arrow array of text, or None where they are not all str, or all bytes (b'a' and 'a'
    are two networkx nodes, and Arrow would make them one)."""
    import pyarrow as pa

    kinds = {str: pa.large_string(), bytes: pa.large_binary()}
    if ids.dtype.kind in "US":
        kind = pa.large_string() if ids.dtype.kind == "U" else pa.large_binary()
    else:
        types = set(map(type, ids))
        if len(types) != 1 or not types <= kinds.keys():
            return None
        kind = kinds[types.pop()]
    try:
        return pa.array(ids, kind)
    except (UnicodeError, pa.ArrowInvalid):  # text Arrow cannot hold (a lone surrogate, from os.fsdecode)
        return None


def _numbered_objects(src, dst, name):
    """(src, dst, labels) of ids of any hashable kind: numbered by label where the labels can be
    sorted, else (numbers beside text) in the order they first appear."""
    ids = np.concatenate([src, dst])
    try:
        number = dict(zip(dict.fromkeys(ids), count()))  # equal and hash-equal ids are one vertex, as in networkx
    except TypeError as e:
        masked = np.fromiter(map(operator.is_, ids, repeat(np.ma.masked)), bool, ids.size)  # a masked array's rows
        if masked.any():
            at = int(masked.argmax())
            _refuse_missing(name, "source" if at < src.size else "target", at % src.size, "masked")
        raise TcdistError(f"{name}: vertex ids must be hashable, as networkx nodes are ({e})") from None
    index = np.fromiter(map(number.__getitem__, ids), np.int64, ids.size)
    labels = np.fromiter(number, object, len(number))
    missing = _missing(labels)
    if missing.any():
        at = int(np.argmax(index == np.argmax(missing)))
        _refuse_missing(name, "source" if at < src.size else "target", at % src.size, labels[index[at]])
    try:
        order = np.argsort(labels, kind="stable")
    except TypeError:
        order = None
    if order is not None:
        rank = np.empty(order.size, np.int64)
        rank[order] = np.arange(order.size)
        index, labels = rank[index], labels[order]
    return index[: src.size], index[src.size :], labels


def _missing(values: np.ndarray) -> np.ndarray:
    """Which of these objects are missing values: None and NaN, and pandas' NA and NaT (which exist
    only where pandas is loaded)."""
    pandas = sys.modules.get("pandas")
    if pandas is not None:
        return np.asarray(pandas.isna(values), bool)
    return np.equal(values, None) | np.not_equal(values, values)


def _refuse_missing(name, end, row, value):
    raise TcdistError(f"{name}: row {row}'s {end} is missing ({value}): drop the rows with missing ids, or fill "
                      "them in")
