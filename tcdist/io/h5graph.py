"""tcdist's binary graph format: the oriented CSR in HDF5, read back far faster than text.

Version 3: sealed (io/seal.py), contiguous datasets and a digest over the attributes and the
arrays' block checksums (io/hdf5.py); on read the digest is checked and the CSR's structure too (sorted
rows, ids in range, every edge from a lower to a higher rank), since a kernel trusts it.
"""

from dataclasses import replace

import numpy as np

from tcdist import __version__
from tcdist.budget import model
from tcdist.errors import InputError
from tcdist.graph.check import csr_problem
from tcdist.graph.graph import Graph, col_dtype
from tcdist.io.hdf5 import (
    check_format,
    damage_is_input_error,
    digest,
    open_h5,
    plain,
    read_arrays,
    read_attrs,
    write_dataset,
)
from tcdist.io.scratch import on_disk
from tcdist.io.seal import sealed_file
from tcdist.io.write import atomic_path
from tcdist.xp import to_gpu

FORMAT = "tcdist-graph"
VERSION = 3
ATTRS = {"n": int, "m": int, "self_loops": int, "duplicates": int, "reciprocal": int, "name": str, "fingerprint": str}
ARRAYS = ("rowptr", "col", "original_id")


def write_graph(graph, path):
    """Write the graph to path (atomically)."""
    graph.refuse_labels("a tcdist graph file")
    graph = graph.on_host()
    attrs = {"n": graph.n, "m": graph.m, "self_loops": int(graph.self_loops), "duplicates": int(graph.duplicates),
             "reciprocal": int(graph.reciprocal),
             "name": str(graph.name), "fingerprint": graph.fingerprint()}
    with atomic_path(path) as tmp, sealed_file(tmp, FORMAT, VERSION, datasets=len(ARRAYS)) as f:
        arrays = {
            "rowptr": write_dataset(f, "rowptr", np.asarray(graph.rowptr, np.int64)),
            "col": write_dataset(f, "col", graph.col if on_disk(graph.col) else
                                 np.asarray(graph.col, col_dtype(graph.n))),
            "original_id": write_dataset(f, "original_id", np.asarray(graph.original_id, np.int64)),
        }
        f.attrs.update(format=FORMAT, version=VERSION, tcdist_version=__version__, **attrs,
                       digest=digest(attrs, arrays))


def read_header(path) -> dict:
    """The graph file's attributes (n, m, name, ...), its arrays not read."""
    with open_h5(path) as f, damage_is_input_error(path):
        check_format(path, f, FORMAT, VERSION)
        return read_attrs(path, f, ATTRS, "graph header")


def read_graph(path, gpu_room: int | None = None):
    """Read a graph written by write_graph, its digest and its structure checked. gpu_room: where
    the graph and what counting it whole takes fit in that many bytes of the current GPU, its
    arrays are moved there and checked there (one pass; no CPU code to load)."""
    with open_h5(path) as f, damage_is_input_error(path):
        check_format(path, f, FORMAT, VERSION)
        attrs = read_attrs(path, f, ATTRS, "graph header")
        arrays, checksums = read_arrays(path, f, ARRAYS)
        stored = plain(f.attrs.get("digest", ""))
    if digest(attrs, checksums) != stored:
        raise InputError(path, "the graph's arrays or attributes do not match its digest (corrupt or altered)")
    graph = Graph(rowptr=arrays["rowptr"], col=arrays["col"], original_id=arrays["original_id"], name=attrs["name"],
                  self_loops=attrs["self_loops"], duplicates=attrs["duplicates"], reciprocal=attrs["reciprocal"])
    if gpu_room is not None and model.need(graph.n, graph.m, graph.n, graph.col.itemsize) + \
            graph.original_id.nbytes <= gpu_room:
        rowptr, col, original_id = to_gpu([graph.rowptr, graph.col, graph.original_id])
        graph = replace(graph, rowptr=rowptr, col=col, original_id=original_id)
    problem = csr_problem(graph.rowptr, graph.col, graph.n, ascending=True)
    if problem is None and (graph.original_id.size != graph.n or (graph.n, graph.m) != (attrs["n"], attrs["m"])):
        problem = "original_id, n or m do not match the CSR"
    if problem:
        raise InputError(path, f"inconsistent CSR arrays: {problem}")
    return graph
