"""The Python API; the CLI calls the same functions. A front: it checks the options once
(config.py), chooses the communicator and hands over to the run (ranks/run.py)."""

from __future__ import annotations

import os
import time

import numpy as np

from tcdist import compiled, plan, warm
from tcdist.budget import estimate, model
from tcdist.budget import host as memory
from tcdist.budget.sizes import parse_size
from tcdist.config import (
    DEFAULT_PRUNE,
    DEFAULT_SCHEME,
    CountConfig,
    OptionTypeError,
    OptionValueError,
    check_partitioning,
)
from tcdist.device import resolve
from tcdist.errors import OptionError, TcdistError, ids_kept_as_integers
from tcdist.graph import check
from tcdist.io import scratch as scratch_files
from tcdist.io.write import check_outputs, output_kind, output_target
from tcdist.partition import Partitioning, check_parts, partition_graph
from tcdist.partition.journal import lock_store
from tcdist.partition.store import Store, write_store
from tcdist.ranks import replicate, run
from tcdist.ranks.comm import as_comm, is_serial, node_local
from tcdist.ranks.guard import collective
from tcdist.results import Timings, TriangleCount
from tcdist.source import (
    EMBEDDED_NAME,
    EMBEDDED_TRIANGLES,
    Source,
    embedded_path,
    is_store,
    load_graph,
    open_store_source,
)
from tcdist.xp import to_numpy

compiled.when_loaded.append(warm.start_in_background)  # a first run's compiling, the rest begun on idle cores

__all__ = ["count_triangles", "plan_count", "load_graph", "partition", "convert", "write_generated",
           "open_store_source", "TriangleCount", "Timings", "embedded_path", "EMBEDDED_NAME", "EMBEDDED_TRIANGLES"]


def partition(source: Source = None, *, parts: int, scheme: str = DEFAULT_SCHEME, prune: str = DEFAULT_PRUNE,
              seed: int = 0,
              output: str | os.PathLike | None = None, force: bool = False, backend: str = "auto",
              timings: Timings | None = None) -> Partitioning:
    """LSTC partitioning of a source into parts (written to the store ``output`` if given).

    An existing output is replaced only when it is a store of the same graph, or with force.
    With an output, the parts are built as they are written (each built while the one before is
    written, two in memory at a time) and the result holds their statistics only
    (``part_stats()``); read them back with Store. backend: where the graph and its parts are
    built: auto (a GPU where one is present and they fit it, when writing a store; else the host),
    cpu, or gpu (then the parts returned without an output lie on the GPU).
    """
    check_partitioning(parts, scheme, prune, seed, backend)  # before any work
    if parts == "auto":
        raise OptionError("{parts} auto sizes parts to a device: give a number of parts to write a store")
    if output is not None:
        check_outputs({"output": output}, inputs=[source])
    timings, started = Timings() if timings is None else timings, time.perf_counter()
    device = resolve("cpu" if backend == "auto" and output is None else backend)
    try:
        with ids_kept_as_integers():
            graph = load_graph(source, seed=seed, timings=timings, device=device)
        check_parts(parts, graph)
        if output is not None:
            graph.refuse_labels("a partition store")
        graph = _room_to_partition(graph, device, timings)
        held = lock_store(output) if output is not None else None  # a count journalling in it is not written over
        try:
            replace = force or _same_graph_store(output, graph)
            began = Timings.clock()
            result = partition_graph(graph, parts, scheme=scheme, prune=prune, seed=seed, lazy=output is not None)
            timings.add("partition", began)
            if output is not None:
                write_store(result, output, replace=replace, timings=timings)
        finally:
            if held is not None:
                held.release()
    finally:
        device.close()
    timings.finish(started)
    return result


def _room_to_partition(graph, device, timings: Timings):
    """The graph where its parts can be built: on the GPU it lies on if building one there fits
    beside it, else on the host."""
    if graph.xp is np or device.room() >= model.gpu_part_build_bytes(graph.n, graph.m):
        return graph
    t0 = time.perf_counter()
    graph = graph.on_host()
    timings.transfer += time.perf_counter() - t0
    return graph


def _same_graph_store(output, graph) -> bool:
    """Whether an existing output may be replaced: only a partition store of this very graph."""
    if output is None or not os.path.exists(output):
        return False
    store = open_store_source(output)
    if store is None:
        raise OptionError(f"{output}: exists and is not a partition store; use {{force}} to replace it")
    with store:
        if store.header["fingerprint"] != graph.fingerprint():
            raise OptionError(f"{output}: is a partition store of another graph ({store.header['graph_name']}); "
                              "use {force} to replace it")
    return True


def _one_store(source: Source, store: str | None) -> None:
    """A partition store counted is its own --store, or none is given: refused where another is."""
    if store is not None and is_store(source) and os.path.realpath(store) != os.path.realpath(source):
        raise OptionError(f"{source}: is a partition store, counted as it is, and {{store}} {store} would be "
                          "another; leave {store} out")


def _path(output) -> str | os.PathLike:
    """An output's path, refused in one line where it is not one."""
    if not isinstance(output, (str, os.PathLike)):
        raise OptionTypeError(f"{{output}} must be a path, got {type(output).__name__} {output!r}")
    return output


def _size(name: str, value: int | str | None) -> int | None:
    """A size option's bytes: given as bytes, or as a size such as '4GiB'."""
    if not isinstance(value, str):
        return value
    try:
        return parse_size(value)
    except TcdistError as e:
        raise OptionValueError(f"{{{name}}}: {e}") from None


def count_triangles(source: Source = None, *, backend: str = "auto", kernel: str | None = None,
                    threads: int | None = None, parts: int | None = None, scheme: str | None = None,
                    prune: str | None = None, seed: int = 0, store: str | os.PathLike | None = None,
                    schedule: str = "static", resume: bool = False, read: str = "auto",
                    per_vertex: bool = False, per_edge: bool = False, gpu_memory_limit: int | str | None = None,
                    host_memory_limit: int | str | None = None, comm=None, ranks_per_gpu: int = 1,
                    labels: bool = False, scratch: str | os.PathLike | None = None,
                    debug: bool = False) -> TriangleCount:
    """Count the triangles of a source exactly (see load_graph for the sources accepted).

    parts, scheme, prune: count LSTC parts (default: the whole graph as one part; one part per
    rank under several ranks). store: an HDF5 partition store to reuse if it holds this
    partitioning, or to write; finished parts are journalled beside it, and resume=True
    recounts only the parts a failed run did not finish. A partition store as source is
    counted as it was written. kernel: a registry kernel and its options, 'lstc-group:tile=256'
    (tcdist.count.registry.kernels() lists them).
    comm: an mpi4py communicator; every rank calls this function, rank 0 reads and partitions,
    each rank counts its parts on its own GPU (schedule 'static' or 'dynamic'), and every rank
    returns the same result. Without comm, one process counts everything. ranks_per_gpu: of
    the ranks of a node bound to one GPU, how many count on it (the others wait: ranks on one GPU
    only take turns on it, unless NVIDIA MPS runs). read: who reads the source under several
    ranks: 'ranks' (each its share, where the source and options allow), 'root' (rank 0 alone)
    or 'auto' (CPU ranks: theirs on several hosts, rank 0 on one; GPU ranks: each parses its share
    of a text or Matrix Market file and rank 0 builds the graph, rank 0 reads any other source).
    per_vertex: also count every vertex's triangles (CPU or GPU; parts and ranks too): the
    result's per_vertex holds .vertex (source ids or labels), .triangles and .clustering
    (on rank 0), a row per vertex sorted by id (labels: sorted, or in a networkx graph's node
    order, or where they cannot be sorted together, in order of first appearance), and
    transitivity and average_clustering are set.
    per_edge: also count the triangles each edge is in (its support, as k-truss reads it; CPU or
    GPU, parts and ranks): the result's per_edge holds .u, .v (source ids or labels, u before v
    in the order above) and .triangles (uint64) on rank 0, a row per edge of the simple graph,
    edges in no triangle too, sorted by (u, v).
    gpu_memory_limit: bytes or a size such as '4GiB': the most the run's GPU arrays hold at once; parts='auto'
    picks the fewest parts whose largest fits it (else nine tenths of the free memory).
    host_memory_limit: bytes or a size: in one process, the most host memory the count takes beyond
    what the process holds when it begins (a graph whose build does not fit is drawn or read again
    for every range of keys; docs/memory.md); under ranks, what the ranks of one host may hold of the
    graph, together: a graph whose copies on rank 0's host would exceed it is counted in parts across
    the ranks, each rank holding its own rows and their out-neighbours' rows (docs/ranks.md).
    labels: the source is a text edge list whose ids are names (load_graph).
    scratch: the folder where a graph that neither the host's memory nor a GPU's holds has its
    columns written while it is counted (removed after; default: TMPDIR, else the system's
    temporary folder; docs/memory.md).
    """
    gpu_memory_limit, host_memory_limit = (_size("gpu_memory_limit", gpu_memory_limit),
                                           _size("host_memory_limit", host_memory_limit))
    config = CountConfig(backend=backend, kernel=kernel, threads=threads, parts=parts, scheme=scheme, prune=prune,
                         seed=seed, store=store, schedule=schedule, resume=resume, read=read, per_vertex=per_vertex,
                         per_edge=per_edge, gpu_memory_limit=gpu_memory_limit,
                         host_memory_limit=host_memory_limit, labels=labels,
                         ranks_per_gpu=ranks_per_gpu, scratch=None if scratch is None else os.fspath(scratch))
    comm = as_comm(comm)
    try:
        with memory.bounded(host_memory_limit if is_serial(comm) else None), scratch_files.using(config.scratch):
            if config.scratch is not None:  # a folder given is checked at once, needed or not, on every rank's host
                collective(comm, lambda: scratch_files.check_room(0))
            collective(comm, lambda: _one_store(source, config.store), root_only=True)
            return run.count(comm, source, config, debug=debug)  # (--host-memory-limit under ranks: a host's)
    finally:
        comm.Free()


def plan_count(source: Source = None, *, backend: str = "auto", parts: int | str | None = None,
               gpu_memory_limit: int | str | None = None, host_memory_limit: int | str | None = None,
               scratch: str | os.PathLike | None = None, read: str = "auto", comm=None) -> dict:
    """The plan of count_triangles(source, ...) without counting: where the graph is built and
    where it lies (host, GPU, disk, with the bytes of each), how it is counted (whole, slices,
    parts, replicated) and the budgets it was decided from (tcdist/plan.py); with comm (several
    ranks, every rank calls it), who reads the graph and what each rank may take. source: a path
    or a generator spec (None: the embedded graph)."""
    if source is not None and not isinstance(source, (str, os.PathLike)):
        raise TcdistError(f"a plan is made for a path or a generator spec, not a {type(source).__name__}: a graph "
                          "in memory is counted where it lies (count_triangles)")
    source = embedded_path() if source is None else os.fspath(source)
    config = CountConfig(backend=backend, parts=parts, gpu_memory_limit=_size("gpu_memory_limit", gpu_memory_limit),
                         read=read, host_memory_limit=_size("host_memory_limit", host_memory_limit),
                         scratch=None if scratch is None else os.fspath(scratch))
    comm = as_comm(comm)
    try:
        if is_store(source):
            with Store(source) as store:
                return {"source": source, "build": {"way": "store"}, "count": {"mode": "parts", "why": (
                    why := f"the store's {store.num_parts} parts, read one at a time as written")},
                    "lines": ["build   none: a partition store", f"count   parts: {why}"]}
        local_rank, local_size = (0, 1) if is_serial(comm) else node_local(comm)
        device = collective(comm, lambda: resolve(config.backend, local_rank=local_rank, local_size=local_size,
                                                  memory_limit=config.gpu_memory_limit))
        try:
            ranks = None if is_serial(comm) else plan.Ranks(
                comm.size, sum(comm.allgather(local_rank == 0)), replicate.ingests(comm, source, config, device.is_gpu),
                run.least_rank_budget(comm, device), config.host_memory_limit, max(comm.allgather(local_size)))
            with memory.bounded(config.host_memory_limit if ranks is None else None), \
                    scratch_files.using(config.scratch):
                return collective(comm, lambda: plan.for_count(source, device, config.parts, ranks), root_only=True)
        finally:
            device.close()
    finally:
        comm.Free()


def warm_up(backend: str = "auto") -> dict:
    """Compile every kernel tcdist may run on this host into the caches (caches.py), so that later
    runs, and every process sharing those caches (the ranks of a host, the nodes of a cluster on a
    shared folder), compile nothing: the CPU's Numba functions (every command, on a small graph and
    on one past the compiled passes' thresholds, in processes side by side: tcdist/warm.py), and
    where a GPU is usable (backend 'auto' or 'gpu'), every CUDA kernel instance and the passes of a
    build. Returns the seconds taken, the kernel instances and where the caches it filled are."""
    from tcdist import caches
    from tcdist.device import gpu

    config = CountConfig(backend=backend)
    t0 = time.perf_counter()
    warm.warm_up_cpu()
    check.prebuild()  # both column types, the second of which only graphs of 2^31 vertices give
    estimate.prebuild()
    problem = gpu.problem() if config.backend != "cpu" else "not asked for"
    if problem and config.backend == "gpu":
        raise TcdistError(f"cannot warm up the GPU: {problem}")
    instances = 0
    if not problem:
        from tcdist.device.warmup import prebuild_gpu

        instances = prebuild_gpu()
    return {"seconds": time.perf_counter() - t0, "gpu_kernel_instances": instances, "gpu": problem is None,
            "caches": caches.places(gpu=problem is None)}


def convert(source: Source, output: str, *, seed: int = 0) -> dict:
    """Write a graph (a file, a generator spec, a Python object) to output: a tcdist graph file
    (.h5: the oriented CSR, read back without a rebuild) or a text edge list in the input's
    ids, by the name's suffix; refused before any work if output cannot be written. Returns
    {"n", "m", "bytes", "warnings"}."""
    from tcdist.io.h5graph import write_graph
    from tcdist.io.write import write_edge_list

    kind = output_kind(_path(output))
    output_target(output, inputs=[source])
    with ids_kept_as_integers(), scratch_files.using(None):  # (columns on disk removed once written)
        g = load_graph(source, seed=seed)
        if kind == "h5":
            write_graph(g, output)
        else:
            g.refuse_on_disk("a text edge list")
            ids = g.vertex_ids()  # (the source's ids: a Python object's numbered as labels)
            if ids.dtype.kind not in "iu" or ids.size and (ids.min() < 0 or ids.max() > np.iinfo(np.int64).max):
                g.refuse_labels("a text edge list")  # (ids a text edge list does not hold: names, below 0, over 2^63)
            rowptr, col = to_numpy(g.rowptr), to_numpy(g.col)
            write_edge_list(ids[np.repeat(np.arange(g.n), np.diff(rowptr))], ids[col], output)
    return {"n": g.n, "m": g.m, "bytes": os.path.getsize(output), "warnings": list(g.warnings)}


def list_triangles(source: Source = None, output: str | os.PathLike | None = None, *, seed: int = 0,
                   labels: bool = False):
    """Every triangle of a source once, as (u, v, w) with u < v < w in the source's ids (labels:
    in the order the graph numbered them), listed block by block on the CPU.

    output: a .parquet or .csv file with columns u, v, w (or a stream such as '-': CSV), refused
    before any work if it cannot be written, filled block by block so a listing larger than
    memory is written whole; returns {"triangles", "bytes", "warnings"}, its count checked
    against a count by another kernel. Without output: an iterator of (k, 3) arrays of ids.
    """
    from tcdist.io.table import names_as_bytes
    from tcdist.io.triangles import triangle_kind, write_triangles
    from tcdist.io.write import stream_fd

    if output is not None and stream_fd(_path(output)) is None:
        triangle_kind(output)
        output_target(output, inputs=[source])
    with scratch_files.using(None):  # (columns on disk removed as the listing is refused)
        graph = load_graph(source, seed=seed, labels=labels).on_host()
        graph.refuse_on_disk("listing the triangles")
    blocks = _triangles_in_source_ids(graph)
    if output is None:
        return blocks
    listed = write_triangles(blocks, output, graph.labels is not None and names_as_bytes(graph.labels))
    counted = count_triangles(graph, backend="cpu", kernel="merge").triangles
    if listed != counted:
        raise TcdistError(f"listed {listed:,} triangles but counted {counted:,}: this build is broken")
    written = os.path.getsize(output) if stream_fd(output) is None else None
    return {"triangles": listed, "bytes": written, "warnings": list(graph.warnings)}


def _triangles_in_source_ids(graph):
    """The triangle blocks of a graph in its source's ids, each row ordered by them."""
    import numpy as np

    from tcdist.count.listing import triangle_blocks

    key, ids = graph.original_id, graph.vertex_ids()  # original_id orders ids, and labels by their number
    for block in triangle_blocks(graph.rowptr, graph.col):
        ordered = np.take_along_axis(block, np.argsort(key[block], axis=1), axis=1)
        yield ids[ordered]


def write_generated(spec: str, output: str, *, seed: int = 0) -> dict:
    """Write a generator's edges to output: as drawn (.txt, .txt.gz: duplicates and loops kept),
    or built into a tcdist graph file (.h5). Returns {"edges", "bytes"}."""
    from tcdist.graph import build_graph
    from tcdist.io import generate
    from tcdist.io.h5graph import write_graph
    from tcdist.io.write import write_edge_list

    kind = output_kind(_path(output))
    output_target(output)
    edges = generate(spec, seed=seed)
    if kind == "h5":
        write_graph(build_graph(edges), output)
    else:
        write_edge_list(edges.src, edges.dst, output)
    return {"edges": len(edges), "bytes": os.path.getsize(output)}
