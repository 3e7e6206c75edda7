"""tcdist's binary graph format: the oriented CSR in HDF5, read back far faster than text."""

import h5py
import numpy as np

from tcdist import __version__
from tcdist.errors import InputError
from tcdist.graph.graph import Graph, col_dtype
from tcdist.io.write import atomic_path

FORMAT = "tcdist-graph"
VERSION = 1
HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"


def _dataset(f, name, data):
    # fletcher32 needs a chunked layout, and HDF5 cannot chunk an empty dataset
    f.create_dataset(name, data=data, fletcher32=data.size > 0)


def write_graph(graph, path):
    """Write the graph to path (atomically)."""
    with atomic_path(path) as tmp, h5py.File(tmp, "w") as f:
        f.attrs.update(
            format=FORMAT,
            version=VERSION,
            tcdist_version=__version__,
            n=graph.n,
            m=graph.m,
            self_loops=graph.self_loops,
            duplicates=graph.duplicates,
            name=graph.name,
            fingerprint=graph.fingerprint(),
        )
        _dataset(f, "rowptr", np.asarray(graph.rowptr, np.int64))
        _dataset(f, "col", np.asarray(graph.col, col_dtype(graph.n)))
        _dataset(f, "original_id", np.asarray(graph.original_id, np.int64))


def open_h5(path):
    """Open an HDF5 file for reading, refusing truncated or non-HDF5 files in one line."""
    try:
        return h5py.File(path, "r")
    except OSError as e:
        problem = "truncated HDF5 file" if "truncated" in str(e) else "not a readable HDF5 file"
        raise InputError(path, problem) from None


def read_array(path, f, name):
    """A whole dataset, with checksum failures and missing datasets named."""
    if name not in f:
        raise InputError(path, f"dataset '{name}' is missing")
    try:
        return f[name][()]
    except OSError:
        raise InputError(path, f"dataset '{name}' is corrupt (checksum mismatch or truncated data)") from None


def check_format(path, f, expected, version):
    """Refuse files of another format or of a version this tcdist cannot read."""
    found = f.attrs.get("format")
    if isinstance(found, bytes):
        found = found.decode()
    if found != expected:
        what = f"a '{found}' file" if found else "not a tcdist file (no 'format' attribute)"
        raise InputError(path, f"{what}; expected {expected}")
    if int(f.attrs.get("version", -1)) != version:
        raise InputError(path, f"{expected} version {f.attrs.get('version')} is not supported (this tcdist reads version {version})")


def read_graph(path):
    """Read a graph written by write_graph, verifying its fingerprint."""
    with open_h5(path) as f:
        check_format(path, f, FORMAT, VERSION)
        graph = Graph(
            rowptr=read_array(path, f, "rowptr"),
            col=read_array(path, f, "col"),
            original_id=read_array(path, f, "original_id"),
            name=str(f.attrs.get("name", path)),
            self_loops=int(f.attrs.get("self_loops", 0)),
            duplicates=int(f.attrs.get("duplicates", 0)),
        )
        expected = f.attrs.get("fingerprint")
    if graph.rowptr.dtype != np.int64 or graph.rowptr.size < 1 or graph.original_id.size != graph.n:
        raise InputError(path, "inconsistent CSR arrays")
    if graph.fingerprint() != expected:
        raise InputError(path, "fingerprint mismatch: the CSR arrays do not match the graph that was written")
    return graph
