"""What a count produces, as types that combine across parts and ranks.

A rank's parts add up (counts and seconds are summed); ranks run side by side, so their
timings combine by maximum (the wall time of the slowest rank) while counts still add.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, fields, replace

from tcdist import compiled

_NOT_STAGES = ("other", "total", "compile_overlapped", "read_overlapped", "partition_overlapped",
               "transfer_overlapped")


@dataclass
class Timings:
    """Seconds of each stage of one rank's run (or, combined, the slowest rank's); once finished,
    the stages add up to the total."""

    compile: float = 0.0      # choosing the device and compiling or loading its kernels (on a GPU, what
                              # the run waited for: the warm-up runs while the first part is read)
    generate: float = 0.0     # generating a graph from a spec (root)
    read: float = 0.0         # reading the graph (root)
    build: float = 0.0        # cleaning and orienting it (root)
    partition: float = 0.0    # LSTC Algorithms 1-2: the assignment (root), and waiting for this rank's parts
                              # built when due (on its GPU, or under a budget on the host); replicated: the
                              # shares planned by their work
    store_write: float = 0.0  # writing the HDF5 partition store (root)
    share: float = 0.0        # the whole graph reaching this rank from rank 0 (replicated: a node's shared
                              # memory, a broadcast between nodes)
    store_read: float = 0.0   # waiting for this rank's parts read from the store
    transfer: float = 0.0     # host-to-GPU copies, the part the counting did not hide
    prepare: float = 0.0      # a kernel's prepare step (edge lists, wedge offsets, bitmaps)
    count: float = 0.0        # the counting kernels
    other: float = 0.0        # the rest: waiting for other ranks, checks, Python between the stages
    total: float = 0.0        # wall time of the whole run on this rank
    compile_overlapped: float = 0.0  # not a stage: a warm-up while the first part was read or rank 0 read (hidden)
    read_overlapped: float = 0.0  # not a stage: reading parts while others were counted (hidden)
    partition_overlapped: float = 0.0  # not a stage: building parts while others were counted (hidden)
    transfer_overlapped: float = 0.0  # not a stage: copying parts while others were counted (hidden)

    @staticmethod
    def clock() -> tuple[float, float]:
        """A step's start, for add: now, and this thread's compiling so far."""
        return time.perf_counter(), compiled.spent()

    def add(self, stage: str, since: tuple[float, float]) -> float:
        """Add to stage the seconds since clock() gave since, less this thread's loading of Numba and
        compiling meanwhile, which go to compile: a first run's compiling is never a step's work.
        Returns the stage's seconds."""
        began, spent = since
        compiling = compiled.spent() - spent
        seconds = max(time.perf_counter() - began - compiling, 0.0)
        setattr(self, stage, getattr(self, stage) + seconds)
        self.compile += compiling
        return seconds

    def finish(self, started: float) -> Timings:
        """Close the run begun at perf_counter() == started: total is the wall time since, and
        other what no stage accounts for."""
        self.total = time.perf_counter() - started
        staged = sum(getattr(self, f.name) for f in fields(self) if f.name not in _NOT_STAGES)
        self.other = max(self.total - staged, 0.0)
        return self

    def __add__(self, other: Timings) -> Timings:
        return Timings(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    @staticmethod
    def slowest(many: list[Timings]) -> Timings:
        """The timings of the rank that took longest (what the job waited for), whose stages add up."""
        return max(many, key=lambda t: t.total, default=Timings())

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class PerVertex:
    """Per vertex of the graph: its id in the source, the triangles it is in and its local
    clustering coefficient (NumPy arrays of one length)."""

    vertex: object
    triangles: object
    clustering: object


@dataclass
class PerEdge:
    """Per edge of the graph: its ends u and v in the source (ids or labels, u first in their
    order) and the triangles it is in (NumPy arrays of one length, sorted by (u, v))."""

    u: object
    v: object
    triangles: object


@dataclass
class PartResult:
    """One counted part: its exact count, who counted it and how long each step took."""

    part: int
    rank: int
    triangles: int
    store_read: float = 0.0   # waiting for it: read from a store, or built (then `built`)
    transfer: float = 0.0
    count: float = 0.0
    stats: dict = field(default_factory=dict)
    read_overlapped: float = 0.0  # reading (or building) this part while the one before was counted
    transfer_overlapped: float = 0.0  # copying it to the GPU meanwhile
    prepare: float = 0.0      # the kernel's prepare step
    kernel: str = ""          # the kernel that counted it (a spec; with --kernel auto, the rule's choice)
    journalled: bool = False  # taken from the journal of an earlier run (--resume), not counted now
    slices: int = 1           # pieces it was counted in (a part too large for the device: partition/slices.py)
    launched_at: float = 0.0  # when its first kernel was launched (seconds since the epoch: comparable across ranks)
    built: bool = False       # made when due (by LSTC's partitioner), not read from a store
    compile: float = 0.0      # of the waits and the count, the compiling (a first run's) they waited for

    @property
    def timings(self) -> Timings:
        """Its seconds as a rank's stages."""
        if self.built:
            waited = {"partition": self.store_read, "partition_overlapped": self.read_overlapped}
        else:
            waited = {"store_read": self.store_read, "read_overlapped": self.read_overlapped}
        return Timings(**waited, transfer=self.transfer, prepare=self.prepare, count=self.count,
                       transfer_overlapped=self.transfer_overlapped, compile=self.compile)

    def joined(self, other: PartResult) -> PartResult:
        """This result with another slice of the same part added: counts and seconds add up."""
        kernels = self.kernel.split(", ")
        return replace(self, triangles=self.triangles + other.triangles, store_read=self.store_read + other.store_read,
                       transfer=self.transfer + other.transfer, count=self.count + other.count,
                       read_overlapped=self.read_overlapped + other.read_overlapped,
                       transfer_overlapped=self.transfer_overlapped + other.transfer_overlapped,
                       prepare=self.prepare + other.prepare, slices=self.slices + other.slices,
                       compile=self.compile + other.compile,
                       kernel=", ".join(kernels + [other.kernel] * (other.kernel not in kernels)))

    def to_dict(self) -> dict:
        return {"part": self.part, **self.stats, "triangles": self.triangles, "rank": self.rank,
                "kernel": self.kernel, "count_s": self.count, "prepare_s": self.prepare, "transfer_s": self.transfer,
                ("build_s" if self.built else "read_s"): self.store_read,
                ("build_overlapped_s" if self.built else "read_overlapped_s"): self.read_overlapped,
                "transfer_overlapped_s": self.transfer_overlapped,
                "journalled": self.journalled, "slices": self.slices}


@dataclass
class RankResult:
    """What one rank did: where it counted, which parts, and its timings."""

    rank: int
    host: str
    device: str
    gpu: int | None
    gpu_bus_id: str | None
    threads: int
    parts: list[PartResult]
    timings: Timings
    gpu_peak_bytes: int | None = None  # the most the GPU memory pool held in use at once
    read_bytes: int = 0        # bytes it read from files (the input, or its parts of a store)
    received_bytes: int = 0    # bytes it received from other ranks (the graph, replicated)
    graph_via: str = ""        # how rank 0's graph reached it: gpu (opened on rank 0's GPU), shared memory, broadcast
    counted_by: int | None = None  # the rank that counted on its GPU while it waited (ranks/per_gpu.py)
    graph_peak_bytes: int | None = None  # parts across ranks: the most of the graph's arrays it held at once
    scratch_bytes: int = 0  # and the bytes of its part's columns it wrote to scratch (over its share of the limit)

    @property
    def first_kernel_at(self) -> float | None:
        """When it launched its first kernel (seconds since the epoch), None if it counted nothing."""
        return min((p.launched_at for p in self.parts if not p.journalled), default=None)

    @property
    def triangles(self) -> int:
        return sum(p.triangles for p in self.parts)

    def to_dict(self) -> dict:
        return {"rank": self.rank, "host": self.host, "device": self.device, "gpu": self.gpu,
                "gpu_bus_id": self.gpu_bus_id, "threads": self.threads,
                "parts": [p.part for p in self.parts if not p.journalled], "triangles": self.triangles,
                "timings": self.timings.to_dict(), "gpu_peak_bytes": self.gpu_peak_bytes, "read_bytes": self.read_bytes,
                "received_bytes": self.received_bytes, "graph_via": self.graph_via,
                "first_kernel_at": self.first_kernel_at, "counted_by": self.counted_by,
                "graph_peak_bytes": self.graph_peak_bytes, "scratch_bytes": self.scratch_bytes}


@dataclass
class TriangleCount:
    """The outcome of one count: the exact total and how it was obtained."""

    triangles: int
    n: int
    m: int
    self_loops: int
    duplicates: int
    reciprocal: int
    backend: str
    kernel: str
    threads: int
    parts: int
    ranks: int
    name: str
    timings: dict
    scheme: str | None = None
    prune: str | None = None
    schedule: str | None = None
    store: str | None = None
    part_stats: list = field(default_factory=list)
    rank_stats: list = field(default_factory=list)
    resumed_parts: int = 0
    warnings: list = field(default_factory=list)
    memory_budget: int | None = None          # bytes a part could take when --parts auto chose P
    parts_auto: dict | None = None            # what --parts auto chose and why: parts, why, seconds, built
    gpu_peak_bytes: int | None = None         # the most any rank's GPU memory pool held at once
    mode: str = "whole"                       # whole (one rank), replicated (every rank the whole graph), parts,
                                              # or parts across ranks (each rank the part of its own rows)
    mode_reason: str = ""                     # why that mode
    transitivity: float | None = None         # 3 T / wedges (with per_vertex)
    average_clustering: float | None = None   # the mean local clustering over the vertices (clustering.py)
    per_vertex: PerVertex | None = None       # on rank 0 only (the arrays are reduced there)
    per_edge: PerEdge | None = None           # likewise
    kernel_options: dict = field(default_factory=dict)  # the kernel's options, as it ran
    kernels: dict = field(default_factory=dict)  # kernel spec -> parts it counted (--kernel auto chooses per part)
    slices: int = 0  # pieces counted: one per part, more where a part too large for the device was sliced

    def __int__(self):
        return self.triangles

    def to_dict(self) -> dict:
        """Everything but the per-vertex and per-edge arrays (written to their own files)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("per_vertex", "per_edge")}
