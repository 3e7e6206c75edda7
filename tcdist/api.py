"""The Python API; the CLI calls the same functions."""

import os
import time
from dataclasses import asdict, dataclass, field
from importlib import resources

from tcdist import io
from tcdist.backend import resolve_backend, set_threads
from tcdist.count import CPU_KERNELS
from tcdist.errors import TcdistError
from tcdist.graph import Graph, build_graph
from tcdist.graph.build import edge_arrays
from tcdist.io.edges import EdgeList

EMBEDDED_NAME = "ego-Facebook (embedded)"
EMBEDDED_TRIANGLES = 1_612_010


def embedded_path():
    """The ego-Facebook edge list shipped inside the package."""
    return str(resources.files("tcdist") / "data" / "facebook_combined.txt.gz")


@dataclass
class TriangleCount:
    """The outcome of one count: the exact total and how it was obtained."""

    triangles: int
    n: int
    m: int
    self_loops: int
    duplicates: int
    backend: str
    kernel: str
    threads: int
    parts: int
    ranks: int
    name: str
    timings: dict
    warnings: list = field(default_factory=list)

    def __int__(self):
        return self.triangles

    def to_dict(self):
        return asdict(self)


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


def load_graph(source=None, *, seed=0, timings=None):
    """The cleaned, oriented Graph of a source.

    source: None (the embedded ego-Facebook graph), a file path (edge list, Matrix Market,
    tcdist HDF5; optionally gzipped), a generator spec such as ``"rmat:18"``, a scipy sparse
    matrix, a networkx graph, two arrays of vertex ids, or a Graph (returned as it is).
    timings: a dict that receives the 'read' and 'build' seconds.
    """
    timings = {} if timings is None else timings
    t0 = time.perf_counter()
    if isinstance(source, Graph):
        loaded = source
    elif source is None:
        loaded = io.read(embedded_path())
        loaded.name = EMBEDDED_NAME
    elif isinstance(source, (str, os.PathLike)):
        if io.is_spec(source) and not os.path.exists(source):
            loaded = io.generate(str(source), seed=seed)
        else:
            loaded = io.read(os.fspath(source))
    else:
        loaded = _edges_of(source)
    t1 = time.perf_counter()
    graph = loaded if isinstance(loaded, Graph) else build_graph(loaded)
    timings["read"] = t1 - t0
    timings["build"] = time.perf_counter() - t1
    return graph


def kernel_function(backend, kernel):
    """(name, function) of the kernel to use on a backend."""
    kernels = CPU_KERNELS
    name = kernel or next(iter(kernels))
    if name not in kernels:
        raise TcdistError(f"unknown {backend} kernel '{name}' (choose from {', '.join(kernels)})")
    return name, kernels[name]


def count_triangles(source=None, *, backend="auto", kernel=None, threads=None, parts=1, seed=0):
    """Count the triangles of a source exactly (see load_graph for the sources accepted)."""
    start = time.perf_counter()
    if not isinstance(parts, int) or parts < 1:
        raise TcdistError(f"parts must be a positive integer, got {parts!r}")
    if parts > 1:
        raise TcdistError("partitioned counting (parts > 1) is not part of this tcdist version yet")
    device = resolve_backend(backend)
    name, fn = kernel_function(device, kernel)
    threads = set_threads(threads)
    timings = {}
    graph = load_graph(source, seed=seed, timings=timings)
    timings["partition"] = 0.0
    fn(graph.rowptr[:1], graph.col[:0], 0)  # compile (or load from cache) outside the timed count
    t0 = time.perf_counter()
    triangles = fn(graph.rowptr, graph.col, graph.n)
    timings["count"] = time.perf_counter() - t0
    timings["total"] = time.perf_counter() - start
    return TriangleCount(
        triangles=triangles,
        n=graph.n,
        m=graph.m,
        self_loops=graph.self_loops,
        duplicates=graph.duplicates,
        backend=device,
        kernel=name,
        threads=threads,
        parts=parts,
        ranks=1,
        name=graph.name,
        timings=timings,
        warnings=list(graph.warnings),
    )
