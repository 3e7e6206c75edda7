"""The Python API; the CLI calls the same functions."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from importlib import resources

import numpy as np

from tcdist import backend as backends
from tcdist import io, progress
from tcdist.backend import check_fits, resolve_backend, set_threads
from tcdist.count import CPU_KERNELS
from tcdist.errors import InputError, TcdistError
from tcdist.graph import Graph, build_graph
from tcdist.graph.build import edge_arrays
from tcdist.io.edges import EdgeList
from tcdist.io.hdf5 import format_of_file
from tcdist.partition import PRUNE_MODES, SCHEMES, Part, Partitioning, partition_graph
from tcdist.partition.store import FORMAT as STORE_FORMAT
from tcdist.partition.store import Store, write_store

Source = object  # None, a path, a generator spec, a Graph, a scipy sparse matrix, a networkx graph or (src, dst)
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
    scheme: str = None
    prune: str = None
    part_stats: list = field(default_factory=list)
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


_BUILD_BYTES_PER_EDGE = 64  # peak device memory of build_graph per raw edge (a few int64 arrays)


def _upload_edges(edges, timings):
    """Move an edge list to the GPU to build there, if it fits; else leave it on the host."""
    import cupy

    if not isinstance(edges.src, cupy.ndarray) and len(edges) * _BUILD_BYTES_PER_EDGE < backends.free_gpu_bytes():
        t0 = time.perf_counter()
        edges.src, edges.dst = cupy.asarray(edges.src), cupy.asarray(edges.dst)
        cupy.cuda.Device().synchronize()
        timings["transfer"] = timings.get("transfer", 0.0) + time.perf_counter() - t0
    return edges


def load_graph(source: Source = None, *, seed: int = 0, timings: dict | None = None, device: str = "cpu") -> Graph:
    """The cleaned, oriented Graph of a source.

    source: None (the embedded ego-Facebook graph), a file path (edge list, Matrix Market,
    tcdist HDF5; optionally gzipped), a generator spec such as ``"rmat:18"``, a scipy sparse
    matrix, a networkx graph, two arrays of vertex ids, or a Graph (returned as it is).
    device: 'gpu' builds the graph with CuPy on the current device when it fits there
    (generators then draw on the GPU); the graph's arrays stay where they were built.
    timings: a dict that receives the 'read' and 'build' seconds (and 'transfer' on a GPU).
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
            if device == "gpu":
                import cupy

                loaded = io.generate(str(source), seed=seed, xp=cupy)
            else:
                loaded = io.generate(str(source), seed=seed)
        else:
            loaded = io.read(os.fspath(source))
    else:
        loaded = _edges_of(source)
    timings["read"] = time.perf_counter() - t0
    if isinstance(loaded, Graph):
        timings["build"] = 0.0
        return loaded
    if device == "gpu":
        loaded = _upload_edges(loaded, timings)
    t1 = time.perf_counter()
    graph = build_graph(loaded)
    timings["build"] = time.perf_counter() - t1
    return graph


def kernel_function(backend: str, kernel: str | None, tile: int | None = None) -> tuple[str, Callable]:
    """(name, function(rowptr, col, n_local)) of the kernel to use on a backend."""
    if backend == "gpu":
        from tcdist.count import gpu

        kernels, default = gpu.GPU_KERNELS, gpu.DEFAULT_KERNEL
    else:
        kernels, default = CPU_KERNELS, "marker"
    name = kernel or default
    if name not in kernels:
        raise TcdistError(f"unknown {backend} kernel '{name}' (choose from {', '.join(kernels)})")
    if tile is None:
        return name, kernels[name]
    if backend != "gpu":
        raise TcdistError("--tile applies to the GPU kernels only")
    if tile not in gpu.TILES:
        raise TcdistError(f"--tile must be one of {', '.join(map(str, gpu.TILES))}, got {tile}")
    return name, lambda rowptr, col, n_local: kernels[name](rowptr, col, n_local, tile=tile)


def _check_partition_options(parts, scheme, prune):
    if parts is not None and (not isinstance(parts, int) or isinstance(parts, bool) or parts < 1):
        raise TcdistError(f"parts must be a positive integer, got {parts!r}")
    if scheme is not None and scheme not in SCHEMES:
        raise TcdistError(f"unknown partitioning scheme '{scheme}' (choose from {', '.join(SCHEMES)})")
    if prune is not None and prune not in PRUNE_MODES:
        raise TcdistError(f"unknown prune mode '{prune}' (choose from {', '.join(PRUNE_MODES)})")


def open_store_source(source: Source) -> Store | None:
    """A Store if source is the path of a partition store, else None."""
    if not isinstance(source, (str, os.PathLike)) or not os.path.isfile(source):
        return None
    if io.detect_format(source) != "h5" or format_of_file(source) != STORE_FORMAT:
        return None
    return Store(source)


def partition(source: Source = None, *, parts: int, scheme: str = "random", prune: str = "lstc", seed: int = 0,
              output: str | os.PathLike | None = None, timings: dict | None = None) -> Partitioning:
    """LSTC partitioning of a source into parts (written to the store ``output`` if given)."""
    _check_partition_options(parts, scheme, prune)
    timings = {} if timings is None else timings
    graph = load_graph(source, seed=seed, timings=timings)
    t0 = time.perf_counter()
    result = partition_graph(graph, parts, scheme=scheme, prune=prune, seed=seed)
    if output is not None:
        write_store(result, output)
    timings["partition"] = time.perf_counter() - t0
    return result


def _reuse_or_partition(graph, parts, scheme, prune, seed, store):
    """The partitioning asked for: from an existing store of the same graph and options, else computed
    (and written to store if one is named). A store of anything else is refused, never overwritten."""
    if store is not None and os.path.exists(store):
        with Store(store) as existing:
            why = existing.matches(graph.fingerprint(), parts, scheme, prune, seed)
            if why:
                raise InputError(store, f"{why}; remove it or choose another store")
            return existing.partitioning()
    result = partition_graph(graph, parts, scheme=scheme, prune=prune, seed=seed)
    if store is not None:
        write_store(result, store)
    return result


def _on_device(part, device, num_parts, timings):
    """The part with its CSR on the counting device: uploaded once, after a free-memory check."""
    if device != "gpu":
        return part
    import cupy

    if isinstance(part.rowptr, cupy.ndarray) and isinstance(part.col, cupy.ndarray):
        return part
    check_fits(part.rowptr.nbytes + part.col.nbytes + 16 * part.n_local, f"part {part.index}", num_parts)
    t0 = time.perf_counter()
    rowptr, col = cupy.asarray(part.rowptr), cupy.asarray(part.col)
    cupy.cuda.Device().synchronize()
    timings["transfer"] += time.perf_counter() - t0
    return Part(part.index, rowptr, col, part.global_id, part.n_local, part.stats)


def _count_parts(fn, parts, timings, device, num_parts):
    """Count part after part; per-part statistics with triangles and kernel seconds."""
    total, per_part = 0, []
    for part in progress.iterate(parts, num_parts, "count parts" if num_parts > 1 else "count"):
        part = _on_device(part, device, num_parts, timings)
        t0 = time.perf_counter()
        found = fn(part.rowptr, part.col, part.n_local)
        seconds = time.perf_counter() - t0
        timings["count"] += seconds
        total += found
        per_part.append({"part": part.index, **part.stats, "triangles": found, "count_s": seconds})
    return total, per_part


def _warm_up(device, fn):
    """Compile the kernels (or load them from cache) before anything is timed."""
    if device == "gpu":
        from tcdist.count import gpu

        gpu.warm_up()
    else:
        for dtype in (np.int32, np.int64):
            fn(np.zeros(1, np.int64), np.zeros(0, dtype), 0)


def _store_parts(store, timings):
    """Parts of an open store, read one at a time (their reading counted as 'read')."""
    for i in range(store.num_parts):
        t0 = time.perf_counter()
        part = store.part(i)
        timings["read"] += time.perf_counter() - t0
        yield part


def count_triangles(source: Source = None, *, backend: str = "auto", kernel: str | None = None,
                    threads: int | None = None, parts: int | None = None, scheme: str | None = None,
                    prune: str | None = None, seed: int = 0, store: str | os.PathLike | None = None,
                    tile: int | None = None) -> TriangleCount:
    """Count the triangles of a source exactly (see load_graph for the sources accepted).

    parts, scheme, prune: count LSTC parts one after another (default: the whole graph as one part).
    store: an HDF5 partition store to reuse if it holds this partitioning, or to write.
    A partition store as source is counted part by part as it was written.
    tile: tile width of the GPU kernels (64, 128, 256, 512 or 1024).
    """
    start = time.perf_counter()
    _check_partition_options(parts, scheme, prune)
    device = resolve_backend(backend)
    name, fn = kernel_function(device, kernel, tile)
    threads = set_threads(threads)
    _warm_up(device, fn)
    timings = {"read": 0.0, "build": 0.0, "partition": 0.0, "transfer": 0.0, "count": 0.0}
    source_store = open_store_source(source)
    if source_store is not None:
        with source_store:
            h = source_store.header
            asked = {"parts": parts, "scheme": scheme, "prune": prune}
            clash = [f"{k} {v}" for k, v in asked.items() if v is not None and v != h[k]]
            if clash:
                raise InputError(source, f"this store holds parts {h['parts']}, scheme {h['scheme']}, prune "
                                         f"{h['prune']}; {', '.join(clash)} cannot apply")
            parts, scheme, prune = source_store.num_parts, h["scheme"], h["prune"]
            triangles, per_part = _count_parts(fn, _store_parts(source_store, timings), timings, device, parts)
            n, m, label = int(h["graph_n"]), int(h["graph_m"]), h["graph_name"]
            loops, dups, warnings = int(h["self_loops"]), int(h["duplicates"]), []
    else:
        graph = load_graph(source, seed=seed, timings=timings, device=device)
        n, m, label, loops, dups, warnings = graph.n, graph.m, graph.name, graph.self_loops, graph.duplicates, graph.warnings
        if parts is None and scheme is None and prune is None and store is None:
            parts = 1
            whole = Part(0, graph.rowptr, graph.col, None, graph.n, {})
            triangles, _ = _count_parts(fn, [whole], timings, device, 1)
            per_part = []
        else:
            parts, scheme, prune = parts or 1, scheme or "random", prune or "lstc"
            t0 = time.perf_counter()
            partitioning = _reuse_or_partition(graph, parts, scheme, prune, seed, store)
            timings["partition"] = time.perf_counter() - t0
            triangles, per_part = _count_parts(fn, partitioning.parts, timings, device, parts)
    timings["total"] = time.perf_counter() - start
    return TriangleCount(
        triangles=triangles, n=n, m=m, self_loops=loops, duplicates=dups, backend=device, kernel=name,
        threads=threads, parts=parts, ranks=1, name=label, timings=timings, scheme=scheme, prune=prune,
        part_stats=per_part, warnings=list(warnings),
    )
