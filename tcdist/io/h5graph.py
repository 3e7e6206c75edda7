"""tcdist's binary graph format: the oriented CSR in HDF5, read back far faster than text.

Version 3: sealed (io/seal.py), contiguous datasets and a digest over the attributes and the
arrays' block checksums (io/hdf5.py); on read the digest is checked and the CSR's structure too (sorted
rows, ids in range, every edge from a lower to a higher rank), since a kernel trusts it.
"""

from dataclasses import replace

import numpy as np

from tcdist import __version__
from tcdist.budget import host as memory
from tcdist.budget import model
from tcdist.errors import InputError
from tcdist.graph.check import FALLS, PROBLEMS, csr_problem, falls, rows_problems
from tcdist.graph.graph import Graph, col_dtype
from tcdist.io.hdf5 import (
    RunsChecksum,
    check_format,
    damage_is_input_error,
    digest,
    in_place,
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
    arrays are moved there and checked there (one pass; no CPU code to load). Under a host memory
    limit its CSR takes over half of, its columns are left in the file, read a pass at a time
    (checked in one such pass; counted a slice at a time, as a graph whose columns lie on scratch)."""
    with open_h5(path) as f, damage_is_input_error(path):
        check_format(path, f, FORMAT, VERSION)
        attrs = read_attrs(path, f, ATTRS, "graph header")
        col = _columns_left_on_disk(path, f, attrs, gpu_room)
        arrays, checksums = read_arrays(path, f, ARRAYS if col is None else ("rowptr", "original_id"))
        stored = plain(f.attrs.get("digest", ""))
    problem = None
    if col is not None:
        arrays["col"], (checksums["col"], problem) = col, _checked_in_runs(col, arrays["rowptr"])
    if digest(attrs, checksums) != stored:
        raise InputError(path, "the graph's arrays or attributes do not match its digest (corrupt or altered)")
    graph = Graph(rowptr=arrays["rowptr"], col=arrays["col"], original_id=arrays["original_id"], name=attrs["name"],
                  self_loops=attrs["self_loops"], duplicates=attrs["duplicates"], reciprocal=attrs["reciprocal"])
    if col is not None:
        if problem is None and (graph.original_id.size != graph.n or (graph.n, graph.m) != (attrs["n"], attrs["m"])):
            problem = "original_id, n or m do not match the CSR"
        if problem:
            raise InputError(path, f"inconsistent CSR arrays: {problem}")
        return graph
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


def _columns_left_on_disk(path, f, attrs: dict, gpu_room: int | None):
    """The graph's columns where they lie in its file, where this process is under a host memory
    limit that its CSR takes over half of (and no GPU of gpu_room holds it); else None."""
    if not memory.is_bounded() or not isinstance(attrs["n"], int) or not isinstance(attrs["m"], int):
        return None
    itemsize = np.dtype(col_dtype(attrs["n"])).itemsize
    csr = model.csr_bytes(attrs["n"], attrs["m"], attrs["n"], itemsize)
    if csr <= memory.available()[0] // 2 or (gpu_room is not None and model.need(
            attrs["n"], attrs["m"], attrs["n"], itemsize) + 8 * attrs["n"] <= gpu_room):
        return None
    return in_place(path, f, "col")


def _checked_in_runs(col, rowptr) -> tuple[list, str | None]:
    """(the columns' checksum, what is wrong with the CSR or None) in one pass over the columns on
    disk, rows whose columns take about a run at a time, as csr_problem checks them whole."""
    n, found, checksum = rowptr.size - 1, 0, RunsChecksum(col.dtype, col.size)
    if rowptr.dtype != np.int64 or rowptr.ndim != 1 or n < 0:
        return checksum.value(), "rowptr is not a one-dimensional int64 array"
    if falls(rowptr, col.size):
        return checksum.value(), PROBLEMS[FALLS]
    first = 0
    while first < n:
        end = min(n, max(first + 1, int(np.searchsorted(rowptr, rowptr[first] + col.RUN_VALUES, "right")) - 1))
        run = col[int(rowptr[first]) : int(rowptr[end])]
        checksum.add(run)
        found |= rows_problems(rowptr[first : end + 1] - rowptr[first], run, n, first)
        first = end
    problem = next((text.format(last=n - 1) for bit, text in PROBLEMS.items() if found & bit), None)
    return checksum.value(), problem
