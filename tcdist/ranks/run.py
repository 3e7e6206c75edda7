"""One count, on any number of ranks (one process is the one-rank case).

every rank: resolve its device (node-local rank -> GPU), start its warm-up
every rank: where it may, read its share -> build its rows (ranks/replicate.py): GPU ranks the
            graph fits all-gather them; where rank 0's host cannot hold the graph, each rank makes
            the part of its own rows (ranks/row_parts.py) and counts it; else rank 0 takes them
rank 0:     (else) read -> build -> what fits -> partition -> store, if one is asked for
            (ranks/prepare.py), on its node's cores (the node's other ranks wait)
every rank: the graph from rank 0, opened on its GPU or through a node's shared memory
            (ranks/share.py), unless it reads a store; its shares or parts (static or dynamic) ->
            build (its own parts; sent to rank 0, which writes the store asked for: ranks/gather.py),
            put, prepare, count (ranks/pipeline.py)
all:        an MPI reduce of the uint64 counts, every rank's results gathered into one TriangleCount.

Without a store asked for, nothing is written.
"""

from __future__ import annotations

import socket
import time
from collections import Counter

import numpy as np

from tcdist import plan
from tcdist.budget import model
from tcdist.budget.sizes import size_text
from tcdist.clustering import per_vertex_result
from tcdist.config import CountConfig
from tcdist.device import Device, resolve
from tcdist.device.binding import idle_node_threads, numba_threads
from tcdist.edge_triangles import EdgeCredits, per_edge_result, summed
from tcdist.errors import InputError, TcdistError, named
from tcdist.graph.build import no_edges
from tcdist.io.objects import node_count
from tcdist.io.scratch import on_disk
from tcdist.partition import slices
from tcdist.partition.journal import Journal
from tcdist.partition.part import Part
from tcdist.partition.store import Store
from tcdist.ranks import agree, per_gpu, replicate
from tcdist.ranks.comm import is_serial, node_local, on_my_node, sum_to_root, sum_uint64
from tcdist.ranks.gather import open_gather
from tcdist.ranks.guard import collective, independently
from tcdist.ranks.own_parts import OwnParts
from tcdist.ranks.pipeline import count_parts
from tcdist.ranks.prepare import Held, Prepared, prepare, start_journal
from tcdist.ranks.schedule import DynamicQueue, by_work, static_plan
from tcdist.ranks.share import share
from tcdist.results import PartResult, RankResult, Timings, TriangleCount
from tcdist.source import builds as builds_graph
from tcdist.xp import to_numpy


def count(comm, source, config: CountConfig, *, debug: bool = False) -> TriangleCount:
    """Count the triangles of source on every rank of comm; every rank returns the same result
    (with per_vertex or per_edge, rank 0's also holds the per-vertex or per-edge arrays). Of the
    ranks of a node that share a GPU, the first config.ranks_per_gpu count on it and the others
    wait (ranks/per_gpu.py)."""
    start = time.perf_counter()
    if is_serial(comm):
        return _count(comm, source, config, start, 0, 0, debug)
    agree.same_options(comm, source, config)  # (before any step whose path the options choose)
    local_rank, _ = node_local(comm)
    seated = collective(comm, lambda: per_gpu.seat(config.backend, local_rank), debug=debug)
    counting, counted_by = per_gpu.counting(comm, seated, config.ranks_per_gpu)
    if counting is comm:
        return _count(comm, source, config, start, local_rank, comm.rank, debug)
    result = error = None
    if counting is not None:
        try:
            result = _count(counting, source, config, start, local_rank, comm.rank, debug)
        except Exception as e:  # told to the ranks that wait, then raised (a signal ends every rank: ranks/stop.py)
            error = e
        finally:
            counting.Free()
    return per_gpu.finish(comm, result, error, seated, counted_by, config.ranks_per_gpu)


def _count(comm, source, config: CountConfig, start: float, local_rank: int, rank: int,
           debug: bool) -> TriangleCount:
    """count() on the ranks of comm, which all count; local_rank: this rank's among the ranks of
    its node (which binds its GPU), rank: its rank in the job (as results name it; comm may hold
    only the ranks that count)."""
    _, local_size = node_local(comm)  # the ranks that count on this node share its cores
    mine = []  # this rank's device, to close if another rank's resolve failed

    def resolved():
        mine.append(resolve(config.backend, kernel=config.kernel, threads=config.threads, local_rank=local_rank,
                            local_size=local_size, memory_limit=config.gpu_memory_limit))
        return mine[0]

    try:
        device = collective(comm, resolved, debug=debug)
    except BaseException:
        for made in mine:
            made.close()
        raise
    try:
        with numba_threads(device.threads):
            timings = Timings(compile=time.perf_counter() - start)
            ingesting = replicate.ingests(comm, source, config, device.is_gpu)
            builds = (comm.rank == 0 or ingesting) and builds_graph(source)  # the ranks that read the source
            collective(comm, lambda: device.start_warm_up(config.per_vertex, builds, config.per_edge),
                       debug=debug)  # a GPU's goes on
            return _count_on(comm, device, source, config, timings, start, rank, ingesting, debug)
    finally:
        device.close()


def _count_on(comm, device: Device, source, config: CountConfig, timings: Timings, start: float, rank: int,
              ingesting: bool, debug: bool) -> TriangleCount:
    rank_budget = least_rank_budget(comm, device)
    threads = idle_node_threads(on_my_node(comm, device.threads))
    ingested, shared, read_share = None, None, 0
    if ingesting:  # every rank reads its share and builds its rows; rank 0 goes on from the graph where not replicated
        ingested, source, read_share = replicate.ingest(comm, source, config, device, timings, rank_budget, debug)

    kept = []  # rank 0's Held (its store locks), let go if anything fails before the run holds them

    def root():
        with numba_threads(threads):  # the node's other ranks wait meanwhile: their cores too
            made, held = prepare(source, config, device, comm.size, timings, rank_budget)
            kept.append(held)
        made.header["warnings"] += _over_host_limit(held.graph, config.host_memory_limit, comm.size)
        start_journal(made, config)
        return made, held

    try:
        if ingested is not None:
            prepared, held, shared = ingested
        else:
            prepared, held = collective(comm, root, root_only=True, shared=lambda made: (made[0], Held()),
                                        meanwhile=device.ready_while_waiting, debug=debug)
    except BaseException:
        for taken in kept:
            taken.release()
        raise
    counted = gather = in_memory = None
    try:
        # a GPU whose warm-up failed says so now, not when its rank first counts
        collective(comm, device.warming.raise_failed, debug=debug)
        credits = collective(comm, lambda: np.zeros(prepared.header["n"], np.uint64), debug=debug) \
            if config.per_vertex else None
        edges = EdgeCredits(prepared.header["n"]) if config.per_edge else None
        in_memory, read = held.parts, [0]
        if "shared" in prepared.header:  # the graph reaches every rank: replicated, or parts each rank builds
            if shared is None:  # (every rank gathered it as it read)
                t0 = time.perf_counter()
                h = prepared.header
                shared = collective(comm, lambda: share(comm, held.shared, h["shared"], h.get("gpu")), debug=debug)
                timings.share += time.perf_counter() - t0
            if prepared.gathers:  # a store asked for: rank 0 writes the parts every rank builds
                t0 = time.perf_counter()
                gather = open_gather(comm, prepared, held, config.seed, debug)
                timings.store_write += time.perf_counter() - t0  # the file begun: header, whole-graph arrays
            in_memory = _Shares(shared, prepared) if prepared.mode == "replicated" else \
                OwnParts(shared, prepared, device, None if gather is None else gather.deliver)
        results = _count_mine(comm, config, prepared, device, in_memory, credits, edges, read, debug, held.host_room)
        if gather is not None:
            t0 = time.perf_counter()
            collective(comm, gather.finish, debug=debug)  # rank 0: the last parts written, the store sealed
            timings.store_write += time.perf_counter() - t0  # (writing and sending ran beside the count)
        credits = None if credits is None else sum_to_root(comm, credits)
        edges = None if edges is None else comm.gather(edges.summed(), root=0)
        timings = timings + sum((r.timings for r in results), Timings())
        timings.compile += device.warming.waited
        timings.compile_overlapped = max(device.warming.seconds - device.warming.waited, 0.0)
        timings.finish(start)
        mine = RankResult(rank, socket.gethostname(), device.kind, device.gpu, device.bus_id, device.threads,
                          results, timings, device.gpu_peak_bytes,
                          read_bytes=read[0] + read_share + (prepared.header.get("read_bytes", 0) if comm.rank == 0
                                                             else 0),
                          received_bytes=0 if shared is None else shared.received,
                          graph_via="" if shared is None else shared.via, graph_peak_bytes=held.graph_peak_bytes,
                          scratch_bytes=held.scratch_bytes)
        everyone = comm.allgather(mine)
        counted = sum_uint64(comm, mine.triangles)
        if comm.rank == 0 and prepared.drop_journal and prepared.journal is not None:  # every rank has journalled
            Journal(prepared.store, prepared.journal, prepared.header["parts"]).remove()
    finally:
        if gather is not None:
            gather.abandon()  # after a failure: the other ranks' last parts taken, the unfinished store removed
            gather.close()
        try:
            if shared is not None:
                try:
                    try:  # the window's pages a builder or a copy registered: let go of before MPI unmaps them
                        if isinstance(in_memory, OwnParts):
                            in_memory.close()
                    finally:
                        device.release_host_memory()
                except Exception:
                    if counted is not None:  # else the count's own error is on its way, and says more
                        raise
                finally:
                    shared.close()  # on every rank of a node together
        finally:
            held.release()  # rank 0's store locks: held while any rank may journal
    result = _result(prepared, device, config, counted, everyone, comm.size)
    if not (config.per_vertex or config.per_edge):
        return result
    result.kernel, result.kernel_options = ", ".join(sorted(result.kernels)), {}  # each part's, as counted
    if comm.rank != 0:
        return result
    ids, degree, order = _vertices(held, prepared)
    if credits is not None:
        result.per_vertex, result.transitivity, result.average_clustering = per_vertex_result(
            ids[order], degree[order], credits[order], result.triangles, node_count(source))
    if edges is not None:
        result.per_edge = per_edge_result(*summed(edges), result.n, result.m, result.triangles, ids, order)
    return result


class _Shares:
    """The shares of a replicated run by index: each a slice of the whole graph (partition/slices.py)
    whose sources are the share's rows and whose targets are every row from its first on (a
    source's out-neighbours rank above it), or where the graph does not fit a rank's device, the
    target rows of a slice of the graph's plan."""

    def __init__(self, shared, prepared: Prepared):
        self.shared, self.shares, self.degrees = shared, prepared.shares, prepared.header["degrees"]
        self.whole = None  # the graph as one Part, made with the first share: a GPU keeps its pages registered

    def __getitem__(self, index: int) -> slices.Slice:
        if self.whole is None:
            rowptr, col = self.shared.arrays["rowptr"], self.shared.arrays["col"]
            self.whole = Part(0, rowptr, col, None, rowptr.size - 1, {"degrees": self.degrees}, checked=True)
        first, last, *targets = self.shares[index]
        return slices.share(self.whole, index, first, last, tuple(targets) or None)


def _vertices(held: Held, prepared: Prepared):
    """Rank 0: every vertex's source id and degree, from the graph it loaded, the ranks' rows or the
    store, and the order that sorts them by id (labels by their index: sorted, or a networkx graph's
    node order)."""
    graph = held.graph
    if held.vertices is not None:
        ids, degree = held.vertices
        return ids, degree, np.argsort(ids, kind="stable")
    if graph is not None:
        return graph.vertex_ids(), to_numpy(graph.degree()), np.argsort(to_numpy(graph.original_id), kind="stable")
    with Store(prepared.store) as store:
        ids, degree = store.vertices()
    return ids, degree, np.argsort(ids, kind="stable")


def _over_host_limit(graph, limit: int | None, ranks: int) -> list[str]:
    """Rank 0 read the graph alone: a warning where it holds more of it in host memory than the host
    limit (with several ranks twice, the graph and its node's shared copy; none where it lies on
    rank 0's GPU)."""
    if limit is None or graph is None or graph.xp is not np:
        return []
    columns = 0 if on_disk(graph.col) else graph.m  # (columns on disk are read a slice at a time)
    held = (1 if ranks == 1 else plan.COPIES_AT_ROOT) * model.csr_bytes(graph.n, columns, graph.n, graph.col.itemsize)
    if held <= limit:
        return []
    return [named(f"rank 0 read the graph alone and holds {size_text(held)} of it, over the {size_text(limit)} of "
                  "{host_memory_limit}: ranks count parts across them only where every rank reads its share (no "
                  "{per_edge}, {labels}, {store}, partitioning asked for, or standard input)")]


def least_rank_budget(comm, device: Device) -> int | None:
    """The least device memory any rank may take: its memory limit (each process's own), else its
    device's budget shared among the ranks of its node on that device (the host's, for CPU ranks)."""
    if is_serial(comm):
        return None
    sharing = on_my_node(comm, device.gpu).count(device.gpu)
    return min(comm.allgather(device.memory_limit or device.budget() // sharing))


def _my_parts(comm, config: CountConfig, prepared: Prepared):
    """This rank's parts: a list (static) or a queue shared with the other ranks (dynamic); in
    parts across ranks, its own part (it lies nowhere else)."""
    if prepared.mode == plan.ACROSS:
        return [comm.rank], 1
    remaining = {i: w for i, w in prepared.work.items() if i not in prepared.done}
    if config.schedule == "dynamic" and not is_serial(comm):
        return DynamicQueue(comm, by_work(remaining)), None
    mine = static_plan(remaining, comm.size)[comm.rank]
    return mine, len(mine)


def _open_store(path) -> Store:
    """The store rank 0 opened, opened by this rank: one it cannot read (on a file system of rank 0's host alone) is
    an error of the run, named, on every rank."""
    try:
        return Store(path)
    except OSError as e:
        raise InputError(path, f"this rank cannot read it ({e.strerror or e}); every rank reads the store: put it on "
                               "a file system that every host of the job shares") from None


def _count_mine(comm, config: CountConfig, prepared: Prepared, device: Device, in_memory, credits, edges, read: list,
                debug: bool, host_room: int | None) -> list[PartResult]:
    """Count this rank's parts, from memory (rank 0's parts with one rank; shares of the whole graph,
    replicated) or from the store every rank opens; read[0] receives the bytes read from it;
    host_room: what the slices of a part on disk may take of the host (pipeline.count_parts)."""
    store = None if in_memory is not None else collective(comm, lambda: _open_store(prepared.store), debug=debug)

    def from_store(index: int) -> Part:
        part = store.part(index)
        read[0] += part.rowptr.nbytes + part.col.nbytes
        return part

    journal = Journal(prepared.store, prepared.journal, prepared.header["parts"]) if prepared.journal else None
    try:
        if store is not None and not is_serial(comm):  # each rank opened the store at rank 0's path on its own host
            agree.same_stores(comm, prepared.store, store.digest)
        mine, expected = _my_parts(comm, config, prepared)
        dynamic = isinstance(mine, DynamicQueue)
        if isinstance(in_memory, OwnParts) and not dynamic:
            in_memory.plan(mine)

        def work(check):
            return count_parts(device, mine, in_memory.__getitem__ if store is None else from_store,
                               num_parts=prepared.header["parts"], rank=comm.rank,
                               record=journal.record if journal else None, expected=expected, check=check,
                               per_vertex=credits, per_edge=edges,
                               # a queue's next part is not taken early, nor one built on the GPU under its budget
                               read_ahead=not dynamic and getattr(in_memory, "ahead", True),
                               builds=getattr(in_memory, "builds", False), host_room=host_room)

        return independently(comm, work, then=mine.close if dynamic else None, debug=debug)
    finally:
        if store is not None:
            store.close()


def _result(prepared: Prepared, device: Device, config: CountConfig, counted: int, everyone: list[RankResult],
            ranks: int) -> TriangleCount:
    h = prepared.header
    parts = sorted([p for r in everyone for p in r.parts] + list(prepared.done.values()), key=lambda p: p.part)
    triangles = counted + sum(p.triangles for p in prepared.done.values())
    if triangles != sum(p.triangles for p in parts) or len(parts) != h["parts"]:
        raise TcdistError(f"internal error: {len(parts)} part results for {h['parts']} parts")
    return TriangleCount(
        triangles=triangles, n=h["n"], m=h["m"], self_loops=h["self_loops"], duplicates=h["duplicates"],
        reciprocal=h["reciprocal"], backend=device.kind, kernel=device.kernel, kernel_options=dict(device.options),
        kernels=dict(Counter(p.kernel for p in parts if p.kernel)), threads=device.threads,
        parts=h["parts"], ranks=ranks,
        name=h["name"], timings=Timings.slowest([r.timings for r in everyone]).to_dict(), scheme=h["scheme"],
        prune=h["prune"], schedule=None if not prepared.partitioned else "static" if prepared.mode == plan.ACROSS else
        config.schedule,
        store=prepared.store,
        part_stats=[p.to_dict() for p in parts] if prepared.partitioned else [],
        rank_stats=[r.to_dict() for r in everyone], resumed_parts=len(prepared.done), warnings=_with_no_edges(h),
        memory_budget=h.get("budget"), parts_auto=h.get("parts_auto"), slices=sum(p.slices for p in parts),
        gpu_peak_bytes=max((r.gpu_peak_bytes for r in everyone if r.gpu_peak_bytes is not None), default=None),
        mode=prepared.mode, mode_reason=prepared.reason,
    )


def _with_no_edges(header: dict) -> list[str]:
    """The run's warnings, with 'no edges' where the graph has none, whichever way it came (built by
    one process, by the ranks, or read from a graph file or store)."""
    said = no_edges(header["name"], header["self_loops"])
    return header["warnings"] + [said] * (not header["m"] and said not in header["warnings"])
