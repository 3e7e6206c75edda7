"""Rank 0's side of a run: read and build the graph (or open a store), decide what fits (with
several ranks the whole graph on every rank, else parts; slices), and partition: the part of
every vertex where the ranks build their own parts (a store asked for, rank 0 writes it from
them as the count goes), or, with one rank, every part, written to a store where one is asked
for. What every rank is told is a Prepared; what rank 0 keeps in memory (the graph, the arrays
every rank receives, the parts of a one-rank run) is a Held."""

from __future__ import annotations

import os
import time
from contextlib import nullcontext
from dataclasses import dataclass, field, replace

import numpy as np

from tcdist import compiled, plan
from tcdist.budget import model
from tcdist.budget.search import NoParts, auto_parts
from tcdist.budget.sizes import size_text
from tcdist.config import CountConfig
from tcdist.device.core import Device
from tcdist.errors import InputError, OptionError, TcdistError, named
from tcdist.graph.degrees import degree_summary
from tcdist.graph.work import RANGES_PER_THREAD, even_work, slice_work
from tcdist.io.scratch import on_disk
from tcdist.io.write import OutputExists, output_target, stale_beside
from tcdist.partition import Part, assign, check_parts, partition_graph
from tcdist.partition.incoming import MASK_PARTS, reached_and_work
from tcdist.partition.journal import Journal, StoreLock, check_name_room, lock_store
from tcdist.partition.store import Store, write_store
from tcdist.ranks.share import layout
from tcdist.results import Timings
from tcdist.source import is_store, load_graph, open_store_source


@dataclass
class Prepared:
    """What rank 0 broadcasts: the graph's description, the parts and where to read them."""

    header: dict
    work: dict                       # part -> estimated work, for scheduling
    store: str | None = None         # the store every rank reads (None: parts held in memory by rank 0)
    journal: str | None = None       # the partitioning id its finished parts are journalled under
    drop_journal: bool = False       # the journal goes when the run succeeds (kept only for a --resume)
    done: dict = field(default_factory=dict)  # part -> PartResult taken from the journal
    partitioned: bool = True
    mode: str = "parts"              # whole (one rank), replicated (every rank the whole graph), parts, or parts
                                     # across ranks (each rank the part of its rows: ranks/row_parts.py)
    reason: str = ""                 # why that mode, in a user's words
    shares: list = field(default_factory=list)  # replicated: each share's source rows (first, last + 1)
    gathers: bool = False            # store is written in this run by rank 0, from the parts the ranks build


@dataclass
class Held:
    """What rank 0 keeps for itself: the graph it loaded, with one rank the parts in memory, and
    the locks of the stores this run journals in (held until release(), at the end of the run). In
    parts across ranks, what every rank keeps: its part, the most of the graph it held at once,
    and on rank 0 with per-vertex counts every vertex's source id and degree."""

    graph: object = None
    parts: object = None
    vertices: tuple | None = None  # (ids, degree) in row order, where no rank holds the graph
    graph_peak_bytes: int | None = None
    host_room: int | None = None  # its part's columns on disk: the host memory the part's count may take
    scratch_bytes: int = 0  # and their bytes there
    shared: dict | None = None  # the arrays every rank receives (ranks/share.py; header["shared"] their layout)
    locks: list[StoreLock] = field(default_factory=list)

    def lock(self, store_path) -> None:
        taken = lock_store(store_path)
        if taken is not None:
            self.locks.append(taken)

    def release(self) -> None:
        """The store locks, and parts still being built (a run that ended early: their builder's
        device memory and registered pages), let go of."""
        try:
            if isinstance(self.parts, _InOrder):
                self.parts.close()
        finally:
            while self.locks:
                self.locks.pop().release()


def _header_of_graph(graph, parts, scheme, prune) -> dict:
    return {"n": graph.n, "m": graph.m, "name": graph.name, "self_loops": graph.self_loops,
            "duplicates": graph.duplicates, "reciprocal": graph.reciprocal, "warnings": list(graph.warnings),
            "parts": parts, "scheme": scheme,
            "prune": prune}


def _header_of_store(store: Store) -> dict:
    h = store.header
    return {"n": h["graph_n"], "m": h["graph_m"], "name": h["graph_name"], "self_loops": h["self_loops"],
            "duplicates": h["duplicates"], "reciprocal": h["reciprocal"], "warnings": [], "parts": store.num_parts,
            "scheme": h["scheme"],
            "prune": h["prune"]}


def _from_store(store: Store, config: CountConfig) -> Prepared:
    h = store.header
    asked = {"parts": None if config.parts == "auto" else config.parts, "scheme": config.scheme, "prune": config.prune}
    clash = [f"{k} {v}" for k, v in asked.items() if v is not None and v != h[k]]
    if clash:
        raise InputError(store.path, f"this store holds parts {h['parts']}, scheme {h['scheme']}, prune "
                                     f"{h['prune']}; {', '.join(clash)} cannot apply")
    return Prepared(_header_of_store(store), {i: store.stats(i)["work"] for i in range(store.num_parts)},
                    store=os.path.abspath(store.path), journal=store.partitioning_id)


def _stale(config: CountConfig) -> list[str]:
    """Remove the partial writes of the store that runs whose process is gone (on this host) left
    behind; say so."""
    removed = []
    if config.store is not None and os.path.isdir(os.path.dirname(os.path.abspath(config.store))):
        removed = stale_beside(config.store)
    return [f"removed {path}, a temporary file of a run whose process is gone" for path in removed]


def prepare(source, config: CountConfig, device: Device, ranks: int, timings: Timings,
            rank_budget: int | None = None) -> tuple[Prepared, Held]:
    """Rank 0's part of the run: what every rank is told, and what rank 0 keeps for itself.
    rank_budget: the least device memory any rank may take (several ranks)."""
    held, stale = Held(), _stale(config)
    try:
        prepared = _prepare(source, config, device, ranks, timings, held, rank_budget)
    except BaseException:
        held.release()
        raise
    prepared.header["warnings"] = stale + prepared.header["warnings"]
    if isinstance(source, (str, os.PathLike)) and os.path.isfile(source) and prepared.store != os.path.abspath(source):
        prepared.header["read_bytes"] = os.path.getsize(source)  # the input, read whole by rank 0
    return prepared, held


def _prepare(source, config: CountConfig, device: Device, ranks: int, timings: Timings, held: Held,
             rank_budget: int | None) -> Prepared:
    if config.store is not None:
        # before any work: a bad name fails at once (a store counted may be its own --store: it is only read)
        output_target(config.store, inputs=[] if is_store(source) else [source], replace=False)
        check_name_room(config.store)
        held.lock(config.store)  # before any work too: another run using it is said at once
    source_store = open_store_source(source)
    if source_store is not None and config.labels:
        source_store.close()
        raise OptionError(f"{source}: {{labels}} reads text edge lists, and this is a partition store (integer ids)")
    if source_store is not None:
        with source_store:
            if config.store is None or os.path.realpath(config.store) != os.path.realpath(source_store.path):
                held.lock(source_store.path)  # its journal is beside it (given as --store too, it is locked)
            prepared = _from_store(source_store, config)
        prepared.drop_journal = config.store is None and not config.resume
        return prepared
    device.warming.wait()  # a graph may be built on the GPU: not beside the warm-up
    graph = held.graph = load_graph(source, seed=config.seed, timings=timings, device=device, labels=config.labels)
    if on_disk(graph.col) and (not config.whole or config.per_edge or ranks > 1):
        raise TcdistError(named(f"{graph.name}: its columns lie on disk ({size_text(graph.col.nbytes)}, more than "
                                "memory holds), which only one process counting the whole graph reads; count it "
                                "without {parts}, {scheme}, {prune}, {store} and {per_edge}, or on a host with more "
                                "memory"))
    mode, why, from_host, sliced = plan.counted_as(graph, config, device, ranks, rank_budget)
    if mode == "whole":
        return _whole(graph, held)  # (else parts, as many as their slices need)
    if mode == "replicated" and not from_host:
        if device.is_gpu and graph.xp is np:  # read from a file into host memory: uploaded once
            t0 = time.perf_counter()
            whole, _, _ = device.moved(Part(0, graph.rowptr, graph.col, None, graph.n, {}))
            held.graph = replace(graph, rowptr=whole.rowptr, col=whole.col)
            timings.transfer += time.perf_counter() - t0
        return _replicated(held, ranks, why, timings, device.bus_id, wedge_weight=device.wedge_weight)
    if mode == "replicated":
        t0 = time.perf_counter()
        held.graph = graph.on_host()
        timings.transfer += time.perf_counter() - t0
        return _replicated(held, ranks, why, timings, None, sliced)
    prepared = _parts(graph, config, device, ranks, timings, held)
    if prepared.mode == "parts" and why:
        prepared.reason = f"parts: {why}"
    return prepared


def _parts(graph, config: CountConfig, device: Device, ranks: int, timings: Timings, held: Held) -> Prepared:
    """The graph counted in parts (or whole, with one rank, where it fits or is sliced)."""
    budgeted = device.memory_limit is not None
    if budgeted:  # under a budget the graph stays on the host: its parts are built one at a time, from it
        t0 = time.perf_counter()
        graph = held.graph = graph.on_host()
        timings.transfer += time.perf_counter() - t0
    scheme, prune = config.scheme_or_default, config.prune_or_default
    writes = config.store is not None or ranks > 1
    if config.parts != "auto":
        parts = config.parts or min(ranks, max(graph.n, 1))
        check_parts(parts, graph)
        warnings = []
        if budgeted and not config.parts:  # no number given: as many as their slices need
            began = Timings.clock()
            parts = plan.sliceable_parts(graph, config, device, scheme, prune, parts, "give the device more memory",
                                         warnings)
            timings.add("partition", began)
        prepared = _partitioned(config, graph, parts, scheme, prune, writes, timings, held, budgeted, ranks, device)
        prepared.header["warnings"] += warnings
        return prepared
    began, budget, sliced = Timings.clock(), device.budget(), []
    try:
        at_once = model.TWO_AT_ONCE if device.is_gpu else 1
        choice = auto_parts(graph, scheme, prune, config.seed, budget, at_once, device.need)
        parts, chose = choice.parts, choice.to_dict()
    except NoParts as e:  # no P fits: slices do (Device.pieces), of as many parts as there are ranks or more
        advice = f"nor do any parts: {e}"
        parts = plan.sliceable_parts(graph, config, device, scheme, prune, min(ranks, max(graph.n, 1)), advice if
                                     advice.endswith("give the device more memory") else f"{advice}; give the device "
                                     "more memory", [])
        sliced.append(f"{e}; counting {parts} part{'s' * (parts > 1)} in slices that fit instead")
        chose = {"parts": parts, "why": sliced[-1], "seconds": round(e.seconds, 4), "built": e.built}
    timings.add("partition", began)
    if parts == 1 and not writes:  # the whole graph fits, or is sliced
        prepared = _whole(graph, held, budget)
    else:
        prepared = _partitioned(config, graph, parts, scheme, prune, writes, timings, held, budgeted, ranks, device)
        prepared.header["budget"] = budget
    prepared.header["warnings"] += sliced
    prepared.header["parts_auto"] = chose
    return prepared


def _whole(graph, held: Held, budget: int | None = None) -> Prepared:
    """The whole graph as the one part, held in memory (checked: load_graph built or checked it,
    so neither it nor its slices are checked again)."""
    held.parts = [Part(0, graph.rowptr, graph.col, None, graph.n, {} if graph.degrees is None else
                          {"degrees": graph.degrees}, checked=True)]
    header = _header_of_graph(graph, 1, None, None)
    if budget is not None:
        header["budget"] = budget
    return Prepared(header, {0: 0}, partitioned=False, mode="whole")


# Shares a rank counts, of equal estimated work: a dynamic queue hands them out as ranks free up;
# the static plan deals them round the ranks, so each rank's lie all along the rank order and the
# estimate's errors even out (with one share a rank, the slowest of four GPUs took 1.4 times the
# mean kernel time on RMAT-27; with four, a dynamic queue's, 1.08 times).
SHARES_PER_RANK = 4


def _replicated(held: Held, ranks: int, reason: str, timings: Timings, gpu: str | None, plan=None,
                wedge_weight: int = 0) -> Prepared:
    """Every rank holds the whole graph (ranks/share.py: opened where it lies on rank 0's GPU, gpu
    its bus id) and counts shares of its rows, of about equal estimated work (the edges of their
    rows, the probes that intersecting them takes, and their wedges by the device's wedge_weight);
    or given the plan of slices of a graph that does not fit a rank's device (held in host memory),
    those slices, each a share. The estimate is timed as partition: it is what stands for LSTC's
    parts in this mode."""
    began = Timings.clock()
    try:
        return _shares_of(held, ranks, reason, gpu, plan, wedge_weight)
    finally:
        timings.add("partition", began)


def _shares_of(held: Held, ranks: int, reason: str, gpu: str | None, plan, wedge_weight: int) -> Prepared:
    graph = held.graph
    if plan is not None:
        return _replicated_in(held, plan, [int(w) for w in slice_work(graph.rowptr, graph.col, plan)], reason)
    bounds, work = even_work(graph, max(1, min(ranks * SHARES_PER_RANK, graph.n)), wedge_weight)
    shares = [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])] or [(0, graph.n)]
    prepared = _replicated_in(held, shares, [int(w) for w in work] or [0], reason)
    if graph.xp is not np:
        prepared.header["gpu"] = gpu
    return prepared


def _replicated_in(held: Held, shares: list[tuple], work: list[int], reason: str) -> Prepared:
    """A replicated run of held.graph in these shares ((first, last) rows, or a slice's four
    bounds), with their work."""
    graph = held.graph
    header = _header_of_graph(graph, len(shares), None, None)
    held.shared = {"rowptr": graph.rowptr, "col": graph.col}
    header["degrees"] = graph.degrees if graph.degrees is not None else degree_summary(graph.rowptr, graph.n)
    header["shared"] = layout(held.shared)
    return Prepared(header, dict(enumerate(work)), partitioned=False, mode="replicated", reason=f"replicated: {reason}",
                    shares=[tuple(int(b) for b in share) for share in shares])


def _partitioned(config: CountConfig, graph, parts: int, scheme: str, prune: str, writes: bool, timings: Timings,
                 held: Held, budgeted: bool, ranks: int, device: Device) -> Prepared:
    """The P-way partitioning of the graph: built by the ranks themselves (several; a store asked
    for is written by rank 0 from their parts), held in memory, or written to a store as it is
    built; budgeted (under a memory limit, the graph on the host), or the graph on a GPU: one rank
    takes the parts as they are built (on the GPU, a part there while the one before it counts;
    a graph a GPU does not hold, there from its rows streamed, each when due), never holding them
    all."""
    if config.store is not None:
        graph.refuse_labels("a partition store")
    if config.store is not None and os.path.exists(config.store):
        return _reuse(config, graph, parts, scheme, prune)
    if writes and ranks > 1:  # each rank builds its own parts; a store asked for, rank 0 writes them as they come
        return _built_by_ranks(config, graph, parts, scheme, prune, timings, held)
    began = Timings.clock()
    # built as they are written or counted: on the GPU where the graph lies, and where it is on the host (a
    # GPU's budget or memory left it there) on that GPU from its rows streamed, else on the host's cores
    streamed = plan.streaming_fits(device, graph) if graph.xp is np and not writes and parts > 1 else None
    one_by_one = writes or (budgeted or graph.xp is not np or streamed is not None) and parts > 1
    partitioning = partition_graph(graph, parts, scheme=scheme, prune=prune, seed=config.seed, lazy=one_by_one,
                                   streamed=streamed)
    timings.add("partition", began)
    header = _header_of_graph(graph, parts, scheme, prune)
    if not writes and one_by_one:  # one rank counts them in part order as they are built
        held.parts = _InOrder(partitioning.parts, device if streamed else None)
        return Prepared(header, dict.fromkeys(range(parts), 0))
    if not writes:
        held.parts = partitioning.parts
        return Prepared(header, {p.index: p.stats["work"] for p in partitioning.parts})
    store = os.path.abspath(config.store)
    try:  # parts are built as the store is written
        stats = write_store(partitioning, store, replace=False, timings=timings)
    except OutputExists:  # another run wrote the store meanwhile: use it if it is this partitioning
        return _reuse(config, graph, parts, scheme, prune)
    return Prepared(header, {i: s["work"] for i, s in enumerate(stats)}, store=store, journal=partitioning.id)


def _built_by_ranks(config: CountConfig, graph, parts: int, scheme: str, prune: str, timings: Timings,
                    held: Held) -> Prepared:
    """LSTC's partitioning made by the ranks themselves: rank 0 gives every vertex its part, the
    graph and that assignment (with, up to 64 parts, each vertex's parts reached) reach every rank
    as a replicated graph does (ranks/share.py), and each rank builds the parts it counts
    (partition.host.PartBuilder). A part's work is estimated from the whole graph: the probes of
    its local rows, as a part's own statistics count them."""
    began = Timings.clock()
    graph = held.graph = graph.on_host()
    assignment = assign(graph, scheme, parts, config.seed).astype(np.uint8 if parts <= MASK_PARTS else np.int32)
    reached, work = reached_and_work(graph.rowptr, graph.col, assignment, parts,
                                     max(compiled.get_threads(), 1) * RANGES_PER_THREAD)
    timings.add("partition", began)
    header = _header_of_graph(graph, parts, scheme, prune)
    held.shared = {"rowptr": graph.rowptr, "col": graph.col, "assignment": assignment}
    if reached is not None:  # what every rank's builder would make first, made once on every core of the node
        held.shared["reached"] = reached
    header["shared"] = layout(held.shared)
    prepared = Prepared(header, {p: int(w) for p, w in enumerate(work)}, mode="parts")
    if config.store is not None:  # written by rank 0 as the ranks send it their parts (ranks/gather.py)
        prepared.store, prepared.gathers = os.path.abspath(config.store), True
    return prepared


class _InOrder:
    """Parts built lazily, taken by index in the order they are built; on a GPU's device (parts
    built there from a graph streamed to it), each when due, not while the one before it counts."""

    builds = True  # (what the pipeline waits for is building, not reading)

    def __init__(self, parts, device: Device | None = None):
        self.parts, self.device, self.ahead = iter(parts), device, device is None

    def close(self) -> None:
        """The builder stopped where it is (its finally blocks run now, not when collected)."""
        with self.device.using() if self.device is not None else nullcontext():
            getattr(self.parts, "close", lambda: None)()

    def __getitem__(self, index: int) -> Part:
        with self.device.using() if self.device is not None else nullcontext():
            part = next(self.parts)
        if part.index != index:
            raise TcdistError(f"internal error: part {index} asked for, part {part.index} built")
        return part


def _reuse(config: CountConfig, graph, parts, scheme, prune) -> Prepared:
    """The existing --store, if it holds this partitioning of this graph; refused (never replaced) if not."""
    with Store.reused(config.store) as existing:
        why = existing.matches(graph.fingerprint(), parts, scheme, prune, config.seed, config.parts == "auto")
        if why:
            raise InputError(config.store, f"{why}; remove it or choose another store")
        prepared = _from_store(existing, config)
    prepared.header["warnings"] = list(graph.warnings)
    return prepared


def start_journal(prepared: Prepared, config: CountConfig) -> None:
    """Rank 0: empty the journal, or with --resume take the parts it already holds."""
    if prepared.gathers:  # the store is written in this run: one that fails leaves no store to resume
        if config.resume:
            prepared.header["warnings"].append(f"{prepared.store} did not exist: nothing to resume; every part is "
                                               "counted, and written to it")
        return
    if prepared.journal is None:
        if config.resume:
            raise OptionError("{resume} needs a partition store to journal in: give {store} FILE or count a store")
        return
    journal = Journal(prepared.store, prepared.journal, prepared.header["parts"])
    try:
        prepared.done, warnings = journal.start(config.resume)
    except TcdistError as e:
        if config.resume:
            raise
        prepared.journal, warnings = None, [f"{e}; no journal is kept, so this run cannot be resumed if it fails"]
    prepared.header["warnings"] += warnings


