"""What a user gives tcdist, turned into a Graph: a path, a generator spec, an in-memory graph,
or a partition store (which is counted as it was written)."""

from __future__ import annotations

import os
import time
from importlib import resources

from tcdist import device as devices
from tcdist import io
from tcdist.device import Device
from tcdist.errors import TcdistError
from tcdist.graph import Graph, build_graph
from tcdist.graph.build import edge_arrays
from tcdist.io.edges import EdgeList
from tcdist.io.seal import read_seal
from tcdist.partition.store import FORMAT as STORE_FORMAT
from tcdist.partition.store import Store
from tcdist.results import Timings

Source = object  # None, a path, a generator spec, a Graph, a scipy sparse matrix, a networkx graph or (src, dst)
EMBEDDED_NAME = "ego-Facebook (embedded)"
EMBEDDED_TRIANGLES = 1_612_010
_BUILD_BYTES_PER_EDGE = 64  # peak device memory of build_graph per raw edge (a few int64 arrays)


def embedded_path() -> str:
    """The ego-Facebook edge list shipped inside the package."""
    return str(resources.files("tcdist") / "data" / "facebook_combined.txt.gz")


def _edges_of(source):
    """EdgeList from an in-memory source: scipy sparse matrix, networkx graph or (src, dst) arrays."""
    if hasattr(source, "tocoo"):
        coo = source.tocoo()
        if coo.shape[0] != coo.shape[1]:
            raise TcdistError(f"a {coo.shape[0]} x {coo.shape[1]} matrix is not an adjacency matrix (it must be square)")
        return EdgeList(*edge_arrays(coo.row, coo.col, "sparse matrix"), "sparse matrix")
    if hasattr(source, "adj") and hasattr(source, "nodes"):
        import networkx

        edges = _edges_of(networkx.to_scipy_sparse_array(source, weight=None, format="coo"))
        edges.name = "networkx graph"
        return edges
    if isinstance(source, (tuple, list)) and len(source) == 2:
        return EdgeList(*edge_arrays(source[0], source[1], "edge arrays"), "edge arrays")
    raise TcdistError(f"cannot read a graph from {type(source).__name__}: give a path, a generator spec, "
                      "a scipy sparse matrix, a networkx graph or two arrays of vertex ids")


def _upload_edges(edges, timings):
    """Move an edge list to the GPU to build there when it fits; else it is built on the host."""
    import cupy

    if not isinstance(edges.src, cupy.ndarray) and len(edges) * _BUILD_BYTES_PER_EDGE < devices.free_gpu_bytes():
        t0 = time.perf_counter()
        edges.src, edges.dst = cupy.asarray(edges.src), cupy.asarray(edges.dst)
        cupy.cuda.Device().synchronize()
        timings.transfer += time.perf_counter() - t0
    return edges


def load_graph(source: Source = None, *, seed: int = 0, timings: Timings | None = None,
               device: Device | str = "cpu") -> Graph:
    """The cleaned, oriented Graph of a source.

    source: None (the embedded ego-Facebook graph), a file path (edge list, Matrix Market,
    tcdist HDF5; optionally gzipped), a generator spec such as ``"rmat:18"``, a scipy sparse
    matrix, a networkx graph, two arrays of vertex ids, or a Graph (returned as it is).
    device: a GPU Device (or 'gpu') builds the graph with CuPy on the current device when it
    fits there (generators then draw on the GPU); the graph's arrays stay where they were built.
    timings: receives the read, build and (on a GPU) transfer seconds.
    """
    on_gpu = device.is_gpu if isinstance(device, Device) else device == "gpu"
    timings = Timings() if timings is None else timings
    t0 = time.perf_counter()
    if isinstance(source, Graph):
        loaded = source
    elif source is None:
        loaded = io.read(embedded_path())
        loaded.name = EMBEDDED_NAME
    elif isinstance(source, (str, os.PathLike)):
        if io.is_spec(source) and not os.path.exists(source):
            if on_gpu:
                import cupy

                loaded = io.generate(str(source), seed=seed, xp=cupy)
            else:
                loaded = io.generate(str(source), seed=seed)
        else:
            loaded = io.read(os.fspath(source))
    else:
        loaded = _edges_of(source)
    timings.read += time.perf_counter() - t0
    if isinstance(loaded, Graph):
        return loaded
    if on_gpu:
        loaded = _upload_edges(loaded, timings)
    t1 = time.perf_counter()
    graph = build_graph(loaded)
    timings.build += time.perf_counter() - t1
    return graph


def open_store_source(source: Source) -> Store | None:
    """A Store if source is the path of a partition store, else None."""
    if not isinstance(source, (str, os.PathLike)) or not os.path.isfile(source):
        return None
    found = read_seal(source)
    return Store(source) if found is not None and found[0]["format"] == STORE_FORMAT else None
