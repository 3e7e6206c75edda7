"""What a count produces, as types that combine across parts and ranks.

A rank's parts add up (counts and seconds are summed); ranks run side by side, so their
timings combine by maximum (the wall time of the slowest rank) while counts still add.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields


@dataclass
class Timings:
    """Seconds of each stage of one rank's run (or, combined, the slowest rank's)."""

    read: float = 0.0         # reading or generating the graph (root)
    build: float = 0.0        # cleaning and orienting it (root)
    partition: float = 0.0    # LSTC Algorithms 1-2 (root)
    store_write: float = 0.0  # writing the HDF5 partition store (root)
    store_read: float = 0.0   # reading this rank's parts from the store
    transfer: float = 0.0     # host-to-GPU copies
    count: float = 0.0        # the counting kernels
    total: float = 0.0        # wall time of the whole run on this rank

    def __add__(self, other: Timings) -> Timings:
        return Timings(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    @staticmethod
    def slowest(many: list[Timings]) -> Timings:
        """Per stage, the maximum over ranks: what the job waited for."""
        return Timings(*(max((getattr(t, f.name) for t in many), default=0.0) for f in fields(Timings)))

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class PartResult:
    """One counted part: its exact count, who counted it and how long each step took."""

    part: int
    rank: int
    triangles: int
    store_read: float = 0.0
    transfer: float = 0.0
    count: float = 0.0
    stats: dict = field(default_factory=dict)
    journalled: bool = False  # taken from the journal of an earlier run (--resume), not counted now

    def to_dict(self) -> dict:
        return {"part": self.part, **self.stats, "triangles": self.triangles, "rank": self.rank,
                "count_s": self.count, "transfer_s": self.transfer, "read_s": self.store_read,
                "journalled": self.journalled}


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

    @property
    def triangles(self) -> int:
        return sum(p.triangles for p in self.parts)

    def to_dict(self) -> dict:
        return {"rank": self.rank, "host": self.host, "device": self.device, "gpu": self.gpu,
                "gpu_bus_id": self.gpu_bus_id, "threads": self.threads,
                "parts": [p.part for p in self.parts if not p.journalled], "triangles": self.triangles,
                "timings": self.timings.to_dict()}


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
    scheme: str | None = None
    prune: str | None = None
    schedule: str | None = None
    store: str | None = None
    part_stats: list = field(default_factory=list)
    rank_stats: list = field(default_factory=list)
    resumed_parts: int = 0
    warnings: list = field(default_factory=list)

    def __int__(self):
        return self.triangles

    def to_dict(self) -> dict:
        return asdict(self)
