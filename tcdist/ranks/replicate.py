"""The start of a run on several ranks where every rank reads: each reads its share of the input
(io/shares.py) and builds its rows of the one graph (ranks/ingest.py), at once. GPU ranks whose
device the whole graph fits all-gather the rows there (replicated: each counts shares of them, as
ranks/prepare.py's replicated run does). Otherwise, where rank 0's host can hold the graph (twice:
the rows it receives and its node's shared copy) within --host-memory-limit, else within its free
memory, rank 0 receives the rows, and the run goes on from its graph as when rank 0 reads: CPU
ranks then share it in each node's memory, once per node (an all-gather would hold it once per
rank), and a graph over a rank's budget is counted in slices or parts. Where it cannot, no rank
receives the graph: each counts the part of its own rows (ranks/row_parts.py, parts across ranks).

GPU ranks build their rows on their GPUs, and move arrays GPU to GPU over NCCL where every rank
has a GPU of its own and cupy.cuda.nccl loads (one communicator for the run's ingest), else
through the host over MPI. Unless --read ranks asks for that build: GPU ranks reading a text or
Matrix Market file by default (--read auto) each parse their share on their GPU, and rank 0 builds
the graph from all the edges, copied onto its GPU by CUDA IPC where they and the build fit it (else
onto its host), as one process builds it: on one host, faster than the ranks' build together (on
two H200s, RMAT-26's build took 2.1 s across the ranks, 0.46 s on one GPU).

A source only one process can read, or options only rank 0 can serve (a store, names as ids,
per-edge counts, a partitioning asked for) leave the reading to rank 0 (ingests() says which),
which then holds the whole graph whatever --host-memory-limit says.
"""

from __future__ import annotations

import os
import socket
import time
from types import SimpleNamespace

import numpy as np

from tcdist import plan
from tcdist.budget import model
from tcdist.budget.host import available
from tcdist.budget.sizes import size_text
from tcdist.errors import OptionError, named
from tcdist.graph.edges import EdgeList
from tcdist.graph.graph import Graph
from tcdist.io import detect_format, generators
from tcdist.io.generators import is_spec
from tcdist.io.shares import read_share
from tcdist.io.text import is_gzip, is_stream
from tcdist.ranks import agree
from tcdist.ranks import nccl as nccl_link
from tcdist.ranks.comm import is_serial, node_local, sum_to_root
from tcdist.ranks.exchange import alltoallv
from tcdist.ranks.guard import collective, watched
from tcdist.ranks.ingest import Rows, build_rows, degree_summary_across, gather_graph
from tcdist.ranks.prepare import Held, Prepared, _replicated
from tcdist.ranks.redrawn_rows import SpilledShare, build_rows_again
from tcdist.ranks.row_parts import row_part, row_plan
from tcdist.ranks.share import gathered
from tcdist.results import Timings
from tcdist.source import open_store_source
from tcdist.xp import array_module, to_numpy


def ingests(comm, source, config, on_gpu: bool) -> bool:
    """Whether every rank reads its share of source: several ranks (or one MPI rank under a host
    memory limit: its rows are then the graph, held once), config.read (auto: CPU ranks on several
    hosts; on GPU ranks a text or Matrix Market file, which they parse for rank 0 to build; any
    source under a host memory limit), a file or a generator spec, and nothing asked for that one
    reader must serve. Raises, on every rank, where ranks would read copies of a file that differ."""
    limited = config.host_memory_limit is not None
    parse_only = config.read == "auto" and on_gpu and not limited  # (generating and building: rank 0 alone)
    if config.read == "root":
        return False
    if is_serial(comm) or comm.size < 2 and not limited or not isinstance(source, (str, os.PathLike)):
        return False
    if config.read == "auto" and not on_gpu and not limited and node_local(comm)[1] == comm.size:
        return False  # CPU ranks of one host: rank 0 reads and builds on all its cores, faster than the ranks' build
    if config.labels or config.store is not None or config.resume or config.per_edge or config.scheme is not None \
            or config.prune is not None or config.parts not in (None, "auto"):
        return False
    path = os.fspath(source)
    # what each rank sees, told to all (hosts with no shared file system: rank 0 reads)
    readable = os.path.isfile(path) and os.access(path, os.R_OK)
    seen = comm.allgather((os.path.exists(path), agree.copy_of(path) if readable else None))
    if not any(exists for exists, _ in seen):
        return is_spec(path) and not parse_only  # (a name that is neither: rank 0's read says what is wrong)
    if is_stream(path) or not all(copy for _, copy in seen):
        return False
    agree.same_copies([copy for _, copy in seen])  # before any rank reads its copy, or decides by it how to
    if parse_only:
        return _plain_text(path)
    store = open_store_source(path)
    if store is not None:
        store.close()
        return False
    return True


def ingest(comm, source, config, device, timings, rank_budget: int, debug: bool = False):
    """Every rank reads and builds its rows. Returns (ready, graph, bytes this rank read): on GPU
    ranks the graph fits, ready is (prepared, held, shared) of a replicated run, the whole graph on
    every rank's device; where rank 0's host cannot hold the graph, of a run of parts across ranks,
    each rank's own part in held.parts; else ready is None and graph the whole graph on rank 0
    (None on the others), from which rank 0 prepares the run, or where rank 0 builds it
    (_gathered), every rank's raw edges there, an EdgeList."""
    again = None if device.is_gpu or config.host_memory_limit is None else \
        collective(comm, lambda: _shares_again(comm, os.fspath(source), config), debug=debug)
    if again is not None:  # no rank's share fits its share of its host's limit: none held, drawn or read again
        began = Timings.clock()
        rows, read_bytes, reading = _built_again(comm, os.fspath(source), config, debug, *again)
        timings.add("build", began)
        timings.build -= reading
        timings.read += reading
    else:
        began = Timings.clock()
        xp = _array_module(device)
        share = collective(comm, lambda: _read(comm, source, config, device, xp), debug=debug)
        facts = comm.allgather(share.facts)
        collective(comm, lambda: share.check_together(facts), debug=debug)
        timings.add("read", began)
        if _gathered(comm, config, device, share):  # rank 0 builds the graph from every rank's edges
            t0 = time.perf_counter()
            edges = collective(comm, lambda: _edges_at_zero(comm, share.edges, device), debug=debug)
            timings.share += time.perf_counter() - t0
            return None, edges, share.read_bytes
        gpus = collective(comm, lambda: _gpus(comm, device, share), debug=debug)
        began = Timings.clock()
        if device.is_gpu:  # a rank failing on its GPU (out of memory) between exchanges: the others stop, not wait
            rows = watched(comm, lambda watching: _rows(watching, share, device, gpus), debug=debug)
        else:
            rows = collective(comm, lambda: _rows(comm, share, device, gpus), debug=debug)
        timings.add("build", began)
        read_bytes, share = share.read_bytes, None  # its edges (or a graph file's rows) let go: the rows hold it
    col_bytes = np.dtype(rows.col.dtype).itemsize
    need = device.need(rows.n, rows.m, rows.n, col_bytes)
    if device.is_gpu:  # the whole graph there, and each share copied from it
        need += model.csr_bytes(rows.n, rows.m, rows.n, col_bytes)
    whole = model.csr_bytes(rows.n, rows.m, rows.n, col_bytes)
    placed, why = collective(comm, lambda: plan.rows_placed(device.is_gpu, need, rank_budget, whole,
                                                            config.host_memory_limit, lambda: _root_room(comm)),
                             debug=debug)
    if placed == plan.ACROSS:  # no rank takes the graph: each counts the part of its rows
        return _parts_across(comm, rows, config, timings, why, debug), None, read_bytes
    if placed == "rank 0":  # rank 0 takes the graph, and shares it or plans slices or parts
        t0 = time.perf_counter()
        graph = collective(comm, lambda: _to_rank_zero(comm, rows), debug=debug)
        timings.share += time.perf_counter() - t0
        return None, graph, read_bytes
    t0 = time.perf_counter()
    graph = collective(comm, lambda: _all_gathered(comm, rows, device, gpus), debug=debug)
    received = graph.rowptr.nbytes + graph.col.nbytes - rows.rowptr.nbytes - rows.col.nbytes
    timings.share += time.perf_counter() - t0
    held = Held(graph=graph)
    prepared = _replicated(held, comm.size, why, timings, None, wedge_weight=device.wedge_weight)
    prepared.header["warnings"] = list(rows.warnings)
    shared = SimpleNamespace(arrays={"rowptr": graph.rowptr, "col": graph.col}, received=received,
                             via="all-gather", close=lambda: None)
    return (prepared, held, shared), graph, read_bytes


def _shares_again(comm, source: str, config) -> tuple | None:
    """(how, keys a range may hold, raw edges a piece, a share's raw edges) where every rank builds its
    rows with nothing of its share held (plan.shares_again, within its share of its host's limit:
    the least of every rank's), else None."""
    room = config.host_memory_limit // node_local(comm)[1]
    again = comm.allgather(plan.shares_again(source, comm.size, room, config.seed))
    if any(a is None for a in again):
        return None
    return again[0][0], min(a[1] for a in again), min(a[2] for a in again), again[0][4]


def _built_again(comm, source: str, config, debug: bool, how: str, keys: int, piece: int,
                 edges: int) -> tuple[Rows, int, float]:
    """(this rank's rows, the bytes it read, the seconds its first reading took) built with nothing of its
    share held (ranks/redrawn_rows.py), a rank failing between the build's exchanges ending every rank."""
    if how == "drawn again":
        span, m, _ = generators.pieces(source, seed=config.seed)
        lo, hi = m * comm.rank // comm.size, m * (comm.rank + 1) // comm.size
        drawn = generators.drawn_again(source, seed=config.seed, within=(lo, hi), size=piece)
        return watched(comm, lambda watching: build_rows_again(watching, drawn, span, source, keys), debug=debug), \
            0, 0.0
    t0 = time.perf_counter()
    pieces = max(plan.RANKS_AGAIN_PIECES, -(-edges // piece))
    share = collective(comm, lambda: SpilledShare(source, comm.rank, comm.size, pieces, edges, piece), debug=debug)
    reading = time.perf_counter() - t0
    try:
        keys = collective(comm, lambda: _keys_read_again(comm, share, source, config), debug=debug)
        rows = watched(comm, lambda watching: build_rows_again(watching, share.pieces, share.span, source, keys,
                                                               share.warnings), debug=debug)
        return rows, share.read_bytes, reading
    finally:
        share.close()


def _keys_read_again(comm, share: SpilledShare, source: str, config) -> int:
    """The keys a range may hold once every rank's share is read (its ids' bound known now, not
    estimated from the file's first bytes): the least over the ranks; refused where one has none."""
    share.together(comm)
    room = config.host_memory_limit // node_local(comm)[1]
    keys = min(comm.allgather((plan.again_sized(share.at[-1] // 2, share.span, room) or (0, 0))[0]))
    if not keys:
        raise OptionError(named(
            f"{source}: building each rank's rows with its share read again needs about "
            f"{size_text(model.RANKS_AGAIN_BYTES_PER_ID * share.span)} of host memory for the counts over its "
            f"{share.span:,} ids, over the {size_text(room)} that {{host_memory_limit}} leaves each rank of its "
            "host; give a larger {host_memory_limit}"))
    return keys


def _plain_text(path: str) -> bool:
    """Whether path is a text edge list or Matrix Market file, not gzipped: cut into byte ranges."""
    return detect_format(path) != "h5" and not is_gzip(path)


def _gathered(comm, config, device, share) -> bool:
    """Whether rank 0 builds the graph from every rank's raw edges (--read auto, GPU ranks, no host
    memory limit: the ranks' build serves a graph that no host holds)."""
    return device.is_gpu and config.read == "auto" and config.host_memory_limit is None and \
        all(comm.allgather(share.edges is not None))


def _edges_at_zero(comm, edges: EdgeList, device) -> EdgeList | None:
    """Every rank's raw edges, in rank order (the file's), on rank 0 (None on the others): on its
    GPU where they and their build fit it, copied there by CUDA IPC; else on its host, for rank 0
    to build as one process builds an edge list its GPU cannot hold."""
    warnings = [w for ws in comm.allgather(list(edges.warnings)) for w in ws if w]
    total = sum(comm.allgather(len(edges)))
    with device.using():
        room = comm.bcast(device.room() if comm.rank == 0 else None, root=0)
        if model.edges_build_on_gpu(total, room):  # (as one process decides)
            served, together = gathered(comm, {"src": edges.src, "dst": edges.dst})
            if served:
                return None if comm.rank != 0 else \
                    EdgeList(together["src"], together["dst"], edges.name, warnings=warnings)
    src, dst = _at_zero(comm, edges.src), _at_zero(comm, edges.dst)
    return None if comm.rank != 0 else EdgeList(src, dst, edges.name, warnings=warnings)


def _root_room(comm) -> int:
    """What rank 0's host has free, on every rank."""
    return comm.bcast(available()[0] if comm.rank == 0 else None, root=0)


def _parts_across(comm, rows, config, timings, why: str, debug: bool):
    """(prepared, held, shared) of a run of parts across ranks: each rank's part of its rows in
    held.parts, by its rank; with per-vertex counts, every vertex's source id and degree on rank 0."""
    began = Timings.clock()
    vertices = collective(comm, lambda: _vertices_at_zero(comm, rows), debug=debug) if config.per_vertex else None
    fetch = collective(comm, lambda: row_plan(comm, rows, config.host_memory_limit, node_local(comm)[1]), debug=debug)
    made = watched(comm, lambda watching: row_part(watching, fetch), debug=debug)  # (one failing: none waits)
    work, spilled = zip(*comm.allgather((made.part.stats["work"], made.room is not None)))
    timings.add("partition", began)
    header = {"n": rows.n, "m": rows.m, "name": rows.name, "self_loops": rows.self_loops,
              "duplicates": rows.duplicates, "reciprocal": rows.reciprocal, "warnings": list(rows.warnings),
              "parts": comm.size, "scheme": "rows", "prune": "minimal"}
    spilling = [r for r, spills in enumerate(spilled) if spills]
    spills = f" (rank{'s' * (len(spilling) > 1)} {', '.join(map(str, spilling))}{', each' * (len(spilling) > 1)} " \
             "with its part's columns on scratch, over its share of the limit)" if spilling else ""
    prepared = Prepared(header, dict(enumerate(work)), mode=plan.ACROSS,
                        reason=f"{plan.ACROSS}: {why}; every rank holds its rows and their out-neighbours' "
                               f"rows{spills}")
    held = Held(parts={comm.rank: made.part}, vertices=vertices, graph_peak_bytes=made.graph_peak_bytes,
                host_room=made.room, scratch_bytes=made.part.col.nbytes if made.room is not None else 0)
    shared = SimpleNamespace(arrays=None, received=made.received_bytes, via="proxy rows", close=lambda: None)
    return prepared, held, shared


def _vertices_at_zero(comm, rows):
    """On rank 0, (every vertex's id in the source, its degree), in row order; None elsewhere."""
    rowptr, col = to_numpy(rows.rowptr), to_numpy(rows.col)
    into = sum_to_root(comm, np.bincount(col, minlength=rows.n).astype(np.int64))
    ids, out = _at_zero(comm, rows.original_id), _at_zero(comm, np.diff(rowptr))
    return None if comm.rank != 0 else (ids, out + into)


def _at_zero(comm, array):
    """Every rank's array (in host memory or on its GPU) end to end on rank 0's host (None elsewhere)."""
    array = np.ascontiguousarray(to_numpy(array))
    counts = np.zeros(comm.size, np.int64)
    counts[0] = array.size
    received = alltoallv(comm, array, counts)[0]
    return received if comm.rank == 0 else None


def _array_module(device):
    if not device.is_gpu:
        return np
    import cupy

    return cupy


def _read(comm, source, config, device, xp):
    if not device.is_gpu:
        return read_share(source, comm.rank, comm.size, seed=config.seed, comm=comm)
    device.warming.wait()  # the text is parsed on the GPU: not beside the warm-up
    with device.using():
        return read_share(source, comm.rank, comm.size, seed=config.seed, gpu_room=device.room(), xp=xp, comm=comm)


def _gpus(comm, device, share):
    """An NCCL communicator of the ranks' GPUs, where every rank's edges lie on a GPU of its own
    (NCCL takes one rank per GPU) and every rank loads NCCL; else None: arrays go through the
    host over MPI."""
    on_gpu = share.edges is not None and array_module(share.edges.src) is not np
    if not all(comm.allgather(device.is_gpu and on_gpu)):
        return None
    try:
        from cupy.cuda import nccl

        available = bool(nccl.available)
    except ImportError:
        available = False
    gpus = comm.allgather((socket.gethostname(), device.gpu))
    if not all(comm.allgather(available)) or len(set(gpus)) < len(gpus):
        return None
    with device.using():
        return nccl_link.communicator(comm)


def _rows(comm, share, device, gpus) -> Rows:
    """This rank's rows: built from every rank's edges, or read from a graph file as they are."""
    if share.rows is None:
        if not device.is_gpu:
            return build_rows(comm, share.edges)
        with device.using():
            ranks_here = comm.allgather((socket.gethostname(), device.gpu)).count((socket.gethostname(), device.gpu))
            return build_rows(comm, share.edges, gpus, device.room() // ranks_here)
    read, h = share.rows, share.rows.header
    first_edge = int(read.rowptr[0]) if read.rowptr.size else 0
    rowptr = np.asarray(read.rowptr, np.int64) - first_edge
    bounds = np.array([*comm.allgather(read.first_row), h["n"]], np.int64)
    return Rows(first_row=read.first_row, end_row=read.end_row, first_edge=first_edge, rowptr=rowptr,
                col=read.col, original_id=read.original_id, bounds=bounds, n=h["n"], m=h["m"],
                self_loops=h["self_loops"], duplicates=h["duplicates"], reciprocal=h["reciprocal"],
                degrees=degree_summary_across(comm, rowptr, h["n"], h["m"]), name=h["name"])


def _all_gathered(comm, rows, device, gpus) -> Graph:
    if array_module(rows.rowptr) is np:
        return gather_graph(comm, rows)
    with device.using():
        return gather_graph(comm, rows, gpus)


def _to_rank_zero(comm, rows) -> Graph | None:
    """The whole graph on rank 0's host (None on the other ranks): every rank's rows sent there."""
    rowptr = _at_zero(comm, rows.rowptr[1:] + rows.first_edge)
    col, original_id = _at_zero(comm, rows.col), _at_zero(comm, rows.original_id)
    if comm.rank != 0:
        return None
    return Graph(rowptr=np.concatenate([np.zeros(1, np.int64), rowptr]), col=col, original_id=original_id,
                 name=rows.name, self_loops=rows.self_loops, duplicates=rows.duplicates, reciprocal=rows.reciprocal,
                 warnings=list(rows.warnings), degrees=dict(rows.degrees))

