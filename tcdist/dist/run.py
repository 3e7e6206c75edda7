"""One count, on any number of ranks (one process is the one-rank case).

rank 0: read -> build -> partition -> store (or reuse one) -> the plan, broadcast
every rank: bind a device -> open the store -> its parts (static or dynamic) -> count them
all: an MPI reduce of the uint64 counts, every rank's results gathered into one TriangleCount.

With one rank and no store asked for, nothing is written: the parts (or the whole graph)
are counted from memory, as a single process always did.
"""

from __future__ import annotations

import functools
import itertools
import os
import socket
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from tcdist.budget import smallest_parts
from tcdist.clustering import per_vertex_result
from tcdist.device import Device, check_backend
from tcdist.dist.binding import node_local
from tcdist.dist.comm import is_serial, sum_to_root, sum_uint64
from tcdist.dist.guard import collective, independently
from tcdist.dist.schedule import SCHEDULES, DynamicQueue, by_work, static_plan
from tcdist.errors import InputError, TcdistError
from tcdist.graph.graph import col_dtype
from tcdist.io.write import OutputExists, output_target
from tcdist.partition import PRUNE_MODES, SCHEMES, Part, check_parts, partition_graph
from tcdist.partition.host import transpose
from tcdist.partition.journal import Journal
from tcdist.partition.store import Store, write_store
from tcdist.pipeline import count_parts
from tcdist.results import PartResult, RankResult, Timings, TriangleCount
from tcdist.source import load_graph, open_store_source
from tcdist.xp import to_numpy


MAX_PARTS = 2**31 - 1  # a part id is stored as int32


@dataclass(frozen=True)
class Plan:
    """How to split and schedule a count; checked once, when made."""

    parts: int | str | None = None  # None: the whole graph with one rank, one part per rank with several;
                                    # 'auto': the fewest parts whose largest fits the memory budget
    scheme: str | None = None
    prune: str | None = None
    seed: int = 0
    store: str | None = None      # the store to reuse or write
    schedule: str = "static"
    resume: bool = False

    def __post_init__(self):
        p = self.parts
        if p == "auto":
            p = None
        if p is not None and (not isinstance(p, int) or isinstance(p, bool) or p < 1):
            raise TcdistError(f"parts must be a positive integer, got {p!r}")
        if p is not None and p > MAX_PARTS:
            raise TcdistError(f"parts must be at most {MAX_PARTS:,}, got {p:,}")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or not 0 <= self.seed < 2**64:
            raise TcdistError(f"seed must be an integer from 0 to 2^64-1, got {self.seed!r}")
        if self.scheme is not None and self.scheme not in SCHEMES:
            raise TcdistError(f"unknown partitioning scheme '{self.scheme}' (choose from {', '.join(SCHEMES)})")
        if self.prune is not None and self.prune not in PRUNE_MODES:
            raise TcdistError(f"unknown prune mode '{self.prune}' (choose from {', '.join(PRUNE_MODES)})")
        if self.schedule not in SCHEDULES:
            raise TcdistError(f"unknown schedule '{self.schedule}' (choose from {', '.join(SCHEDULES)})")

    @property
    def whole(self) -> bool:
        """No partitioning asked for at all."""
        return self.parts is None and self.scheme is None and self.prune is None and self.store is None


@dataclass
class Prepared:
    """What rank 0 broadcasts: the graph's description, the parts and where to read them."""

    header: dict
    work: dict                       # part -> estimated work, for scheduling
    store: str | None = None         # the store every rank reads (None: parts held in memory by rank 0)
    temporary: bool = False          # the store is this run's own, removed at the end
    journal: str | None = None       # the partitioning id its finished parts are journalled under
    done: dict = field(default_factory=dict)  # part -> PartResult taken from the journal
    partitioned: bool = True


def _header_of_graph(graph, parts, scheme, prune) -> dict:
    return {"n": graph.n, "m": graph.m, "name": graph.name, "self_loops": graph.self_loops,
            "duplicates": graph.duplicates, "reciprocal": graph.reciprocal, "warnings": list(graph.warnings), "parts": parts, "scheme": scheme,
            "prune": prune}


def _header_of_store(store: Store) -> dict:
    h = store.header
    return {"n": h["graph_n"], "m": h["graph_m"], "name": h["graph_name"], "self_loops": h["self_loops"],
            "duplicates": h["duplicates"], "reciprocal": h["reciprocal"], "warnings": [], "parts": store.num_parts, "scheme": h["scheme"],
            "prune": h["prune"]}


def _from_store(store: Store, plan: Plan) -> Prepared:
    h = store.header
    asked = {"parts": None if plan.parts == "auto" else plan.parts, "scheme": plan.scheme, "prune": plan.prune}
    clash = [f"{k} {v}" for k, v in asked.items() if v is not None and v != h[k]]
    if clash:
        raise InputError(store.path, f"this store holds parts {h['parts']}, scheme {h['scheme']}, prune "
                                     f"{h['prune']}; {', '.join(clash)} cannot apply")
    return Prepared(_header_of_store(store), {i: store.stats(i)["work"] for i in range(store.num_parts)},
                    store=os.path.abspath(store.path), journal=store.partitioning_id)


def _temporary_store() -> str:
    return os.path.abspath(f".tcdist-parts-{uuid.uuid4().hex[:12]}.h5")


def _prepare(source, plan: Plan, device: Device, ranks: int, timings: Timings, held: dict) -> Prepared:
    """Rank 0's part of the run; returns the plan for every rank. It keeps in held the graph it
    loaded ("graph") and, with one rank, the parts in memory ("parts")."""
    if plan.store is not None:
        output_target(plan.store, inputs=[source])  # before any work: a bad name fails at once
    source_store = open_store_source(source)
    if source_store is not None:
        with source_store:
            return _from_store(source_store, plan)
    device.wait_warm_up()  # a graph may be built on the GPU: not beside the warm-up
    graph = held["graph"] = load_graph(source, seed=plan.seed, timings=timings, device=device)
    if plan.whole and ranks == 1:
        return _whole(graph, held)
    budgeted = device.memory_limit is not None
    if budgeted:  # under a budget, parts are built on the host, one at a time
        t0 = time.perf_counter()
        graph = held["graph"] = graph.on_host()
        timings.transfer += time.perf_counter() - t0
    scheme, prune = plan.scheme or "random", plan.prune or "lstc"
    writes = plan.store is not None or ranks > 1
    if plan.parts != "auto":
        parts = plan.parts or min(ranks, max(graph.n, 1))
        check_parts(parts, graph)
        return _partitioned(plan, graph, parts, scheme, prune, writes, timings, held, budgeted)
    t0, budget, sliced = time.perf_counter(), device.budget(), []
    try:
        parts = _auto_parts(graph, scheme, prune, plan.seed, budget, 2 if device.is_gpu else 1, device.need)
    except TcdistError as e:  # no P fits: slices do (Device.pieces), of as many parts as there are ranks
        parts = min(ranks, max(graph.n, 1))
        if parts == 1:  # said now, with why no P fits (before: the slices' refusal alone, advising more parts)
            advice = f"nor do any parts: {e}"
            device.refuse_unsliceable(Part(0, graph.rowptr, graph.col, None, graph.n, {}), advice if
                                      advice.endswith("give the device more memory") else
                                      f"{advice}; give the device more memory")
        sliced.append(f"{e}; counting {parts} part{'s' * (parts > 1)} in slices that fit instead")
    timings.partition += time.perf_counter() - t0
    if parts == 1 and not writes:  # the whole graph fits, or is sliced
        prepared = _whole(graph, held, budget)
    else:
        prepared = _partitioned(plan, graph, parts, scheme, prune, writes, timings, held, budgeted)
        prepared.header["budget"] = budget
    prepared.header["warnings"] += sliced
    return prepared


def _whole(graph, held: dict, budget: int | None = None) -> Prepared:
    """The whole graph as the one part, held in memory."""
    held["parts"] = [Part(0, graph.rowptr, graph.col, None, graph.n, {} if graph.degrees is None else
                          {"degrees": graph.degrees})]
    header = _header_of_graph(graph, 1, None, None)
    if budget is not None:
        header["budget"] = budget
    return Prepared(header, {0: 0}, partitioned=False)


def _partitioned(plan: Plan, graph, parts: int, scheme: str, prune: str, writes: bool, timings: Timings,
                 held: dict, budgeted: bool) -> Prepared:
    """The P-way partitioning of the graph: held in memory, or written to a store as it is built;
    budgeted (under a memory limit, the graph on the host): one rank takes the parts as they are
    built, never holding them all."""
    if plan.store is not None:
        graph.refuse_labels("a partition store (--store)")  # a temporary store is read for counts only
    if plan.store is not None and os.path.exists(plan.store):
        return _reuse(plan, graph, parts, scheme, prune)
    t0 = time.perf_counter()
    one_by_one = writes or budgeted and parts > 1  # built on the host as they are written or counted
    partitioning = partition_graph(graph, parts, scheme=scheme, prune=prune, seed=plan.seed, lazy=one_by_one)
    timings.partition += time.perf_counter() - t0
    header = _header_of_graph(graph, parts, scheme, prune)
    if not writes and one_by_one:  # one rank counts them in part order as they are built
        held["parts"] = _InOrder(partitioning.parts)
        return Prepared(header, dict.fromkeys(range(parts), 0))
    if not writes:
        held["parts"] = partitioning.parts
        return Prepared(header, {p.index: p.stats["work"] for p in partitioning.parts})
    store = os.path.abspath(plan.store) if plan.store is not None else _temporary_store()
    try:  # parts are built as the store is written
        stats = write_store(partitioning, store, replace=False, timings=timings)
    except OutputExists:  # another run wrote the store meanwhile: use it if it is this partitioning
        return _reuse(plan, graph, parts, scheme, prune)
    return Prepared(header, {i: s["work"] for i, s in enumerate(stats)}, store=store, temporary=plan.store is None,
                    journal=None if plan.store is None else partitioning.id)


class _InOrder:
    """Parts built lazily, taken by index in the order they are built."""

    def __init__(self, parts):
        self.parts = iter(parts)

    def __getitem__(self, index: int) -> Part:
        part = next(self.parts)
        if part.index != index:
            raise TcdistError(f"internal error: part {index} asked for, part {part.index} built")
        return part


def _auto_parts(graph, scheme: str, prune: str, seed: int, budget: int, at_once: int, need) -> int:
    """The fewest parts whose largest fits the budget (each probe's parts are built one at a
    time and dropped once measured). A graph that does not fit whole is planned for at_once
    parts on the device together (on a GPU two: the next part's copy overlaps the count), or,
    if no P allows that, for one. need(v_res, e_res, n_local, col_bytes): a part's bytes on the
    device with its kernel (Device.need)."""
    col_bytes = np.dtype(col_dtype(graph.n)).itemsize
    out = to_numpy(graph.out_degree())

    @functools.cache
    def reversed_edges():
        """The graph's transpose (on the host), made by the first probe of over 64 parts for every
        such probe."""
        return transpose(graph)

    def largest_need(parts: int, budget: int, measured: int | None = None) -> int:
        """The largest of the first `measured` parts' bytes (all by default), or the first part's
        over the budget: then the probe stops."""
        largest = 0
        built = partition_graph(graph, parts, scheme=scheme, prune=prune, seed=seed, lazy=True,
                                reversed_edges=reversed_edges).parts
        for p in itertools.islice(built, measured):
            largest = max(largest, need(p.stats["v_res"], p.stats["e_res"], p.stats["n_local"], col_bytes))
            if largest > budget:
                break
        return largest

    def heaviest():
        """A vertex's own part: it, its out-neighbours, its out-edges and the edges among them
        (one per triangle in which it is the lowest vertex)."""
        from tcdist.count.cpu import lowest_triangles

        lowest = lowest_triangles(to_numpy(graph.rowptr), to_numpy(graph.col))
        needs = need(1 + out, out + lowest.astype(np.int64), 1, col_bytes)
        u = int(needs.argmax())
        return graph.vertex_ids()[u], int(needs[u])

    floor = need(1 + int(out.max()), int(out.max()), 1, col_bytes) if out.size else 0
    alike = scheme == "random"  # each part a random draw of vertices: the first stands for them all
    whole = need(graph.n, graph.m, graph.n, col_bytes)
    if at_once > 1 and whole > budget:
        try:
            return smallest_parts(graph.n, whole, budget // at_once, largest_need, floor, heaviest, alike)
        except TcdistError:
            pass
    return smallest_parts(graph.n, whole, budget, largest_need, floor, heaviest, alike)


def _reuse(plan: Plan, graph, parts, scheme, prune) -> Prepared:
    """The existing --store, if it holds this partitioning of this graph; refused (never replaced) if not."""
    with Store(plan.store) as existing:
        why = existing.matches(graph.fingerprint(), parts, scheme, prune, plan.seed)
        if why:
            raise InputError(plan.store, f"{why}; remove it or choose another store")
        prepared = _from_store(existing, plan)
    prepared.header["warnings"] = list(graph.warnings)
    return prepared


def _start_journal(prepared: Prepared, plan: Plan) -> None:
    """Rank 0: empty the journal, or with --resume take the parts it already holds."""
    if prepared.journal is None:
        if plan.resume:
            raise TcdistError("--resume needs a partition store to journal in: give --store FILE or count a store")
        return
    journal = Journal(prepared.store, prepared.journal, prepared.header["parts"])
    try:
        prepared.done, warnings = journal.start(plan.resume)
    except TcdistError as e:
        if plan.resume:
            raise
        prepared.journal, warnings = None, [f"{e}; this run cannot be resumed if it fails"]
    prepared.header["warnings"] += warnings


def _my_parts(comm, plan: Plan, prepared: Prepared):
    """This rank's parts: a list (static) or a queue shared with the other ranks (dynamic)."""
    remaining = {i: w for i, w in prepared.work.items() if i not in prepared.done}
    if plan.schedule == "dynamic" and not is_serial(comm):
        return DynamicQueue(comm, by_work(remaining)), None
    mine = static_plan(remaining, comm.size)[comm.rank]
    return mine, len(mine)


def count(comm, source, plan: Plan, *, backend: str = "auto", kernel: str | None = None,
          threads: int | None = None, per_vertex: bool = False, memory_limit: int | None = None,
          debug: bool = False) -> TriangleCount:
    """Count the triangles of source on every rank of comm; every rank returns the same result
    (with per_vertex, rank 0's also holds the per-vertex arrays)."""
    check_backend(backend)
    if per_vertex and plan.resume:
        raise TcdistError("--per-vertex cannot resume a count (the journal holds totals only); leave out --resume")
    local_rank, local_size = node_local(comm)

    start = time.perf_counter()
    mine = []  # this rank's device, to close if another rank's resolve failed (its allocator stayed installed)

    def resolve():
        mine.append(Device.resolve(backend, kernel=kernel, threads=threads, local_rank=local_rank,
                                   local_size=local_size, memory_limit=memory_limit))
        return mine[0]

    try:
        device = collective(comm, resolve, debug=debug)
    except BaseException:
        for resolved in mine:
            resolved.close()
        raise
    try:
        resolved = time.perf_counter() - start
        collective(comm, lambda: device.start_warm_up(per_vertex), debug=debug)  # on a GPU, it goes on meanwhile
        return _count_on(comm, device, source, plan, Timings(compile=resolved), start, per_vertex, debug)
    finally:
        device.close()


def _count_on(comm, device: Device, source, plan: Plan, timings: Timings, start: float, per_vertex: bool,
              debug: bool) -> TriangleCount:
    held = {}

    def root():
        prepared = _prepare(source, plan, device, comm.size, timings, held)
        _start_journal(prepared, plan)
        return prepared

    prepared = collective(comm, root, root_only=True, debug=debug)
    try:
        # a GPU whose warm-up failed says so now, not when its rank first counts, after the root's partitioning
        collective(comm, device.raise_failed_warm_up, debug=debug)
        credits = collective(comm, lambda: np.zeros(prepared.header["n"], np.uint64), debug=debug) \
            if per_vertex else None
        results = _count_mine(comm, plan, prepared, device, held.get("parts"), credits, debug)
        credits = None if credits is None else sum_to_root(comm, credits)
        timings.compile += device.warm_up_waited
        timings.compile_overlapped = max(device.warm_up_seconds - device.warm_up_waited, 0.0)
        for r in results:
            timings.store_read += r.store_read
            timings.read_overlapped += r.read_overlapped
            timings.transfer_overlapped += r.transfer_overlapped
            timings.transfer += r.transfer
            timings.prepare += r.prepare
            timings.count += r.count
        timings.finish(start)
        mine = RankResult(comm.rank, socket.gethostname(), device.kind, device.gpu, device.bus_id, device.threads,
                          results, timings, device.gpu_peak_bytes)
        everyone = comm.allgather(mine)
        counted = sum_uint64(comm, mine.triangles)
    finally:
        if prepared.temporary and comm.rank == 0 and os.path.exists(prepared.store):
            os.remove(prepared.store)
    result = _result(prepared, device, plan, counted, everyone, comm.size)
    if credits is not None:
        ids, degree = _vertices(held.get("graph"), prepared)
        result.per_vertex, result.transitivity, result.average_clustering = per_vertex_result(
            ids, degree, credits, result.triangles)
        result.kernel, result.kernel_options = ", ".join(sorted(result.kernels)), {}  # each part's, as counted
    return result


def _vertices(graph, prepared: Prepared):
    """Rank 0: every vertex's source id and degree, from the graph it loaded or from the store."""
    if graph is not None:
        return graph.vertex_ids(), to_numpy(graph.degree())
    with Store(prepared.store) as store:
        return store.vertices()


def _count_mine(comm, plan: Plan, prepared: Prepared, device: Device, in_memory: list | None, credits,
                debug: bool) -> list[PartResult]:
    """Count this rank's parts, from rank 0's memory (one rank) or from the store every rank opens."""
    store = None if in_memory is not None else collective(comm, lambda: Store(prepared.store), debug=debug)
    journal = Journal(prepared.store, prepared.journal, prepared.header["parts"]) if prepared.journal else None
    try:
        mine, expected = _my_parts(comm, plan, prepared)

        dynamic = isinstance(mine, DynamicQueue)

        def work(check):
            return count_parts(device, mine, in_memory.__getitem__ if store is None else store.part,
                               num_parts=prepared.header["parts"], rank=comm.rank,
                               record=journal.record if journal else None, expected=expected, check=check,
                               per_vertex=credits, read_ahead=not dynamic)  # a queue's next part is not taken early

        return independently(comm, work, then=mine.close if dynamic else None, debug=debug)
    finally:
        if store is not None:
            store.close()


def _result(prepared: Prepared, device: Device, plan: Plan, counted: int, everyone: list[RankResult],
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
        prune=h["prune"], schedule=plan.schedule if prepared.partitioned else None,
        store=None if prepared.temporary else prepared.store,
        part_stats=[p.to_dict() for p in parts] if prepared.partitioned else [],
        rank_stats=[r.to_dict() for r in everyone], resumed_parts=len(prepared.done), warnings=h["warnings"],
        memory_budget=h.get("budget"), slices=sum(p.slices for p in parts),
        gpu_peak_bytes=max((r.gpu_peak_bytes for r in everyone if r.gpu_peak_bytes is not None), default=None),
    )
