"""The options of a count, checked once where they enter (the API; the CLI calls the API) and
trusted by everything below. Every choice and default is written here; this module imports
nothing heavy, so that every stage may read its names."""

from __future__ import annotations

import os
from dataclasses import dataclass

from tcdist.errors import OptionError

BACKENDS = ("auto", "cpu", "gpu")
SCHEMES = ("random", "contiguous", "metis")
PRUNE_MODES = ("lstc", "none", "minimal")
SCHEDULES = ("static", "dynamic")
READERS = ("auto", "ranks", "root")  # who reads the input under several ranks
DEFAULT_SCHEME, DEFAULT_PRUNE = "random", "lstc"
MAX_PARTS = 2**31 - 1  # a part id is stored as int32
MAX_BYTES = 2**63 - 1  # a memory limit is an int64 to NumPy and CuPy
# The file names of each format, by suffix (each text one optionally .gz): what is read, what convert
# and generate write, and what the help, the docs and the errors list.
EDGE_LIST_SUFFIXES = (".txt", ".tsv", ".csv", ".el", ".edges", ".snap", ".edgelist")
MTX_SUFFIXES = (".mtx", ".mm")
HDF5_SUFFIXES = (".h5", ".hdf5")
CSV_EDGE_COLUMNS = ("source", "target")  # the header row of every .csv edge list written


class OptionValueError(OptionError, ValueError):
    """An option's value is not one it may take."""


class OptionTypeError(OptionError, TypeError):
    """An option is not of the type it must be."""


def _integer(name: str, value) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise OptionTypeError(f"{{{name}}} must be an integer, got {type(value).__name__} {value!r}")
    if value < 1:
        raise OptionValueError(f"{{{name}}} must be at least 1, got {value}")


def _one_of(value, allowed, what: str) -> None:
    if value not in allowed:
        raise OptionValueError(f"unknown {what} '{value}' (choose from {', '.join(allowed)})")


def check_partitioning(parts, scheme, prune, seed, backend: str = "auto") -> None:
    """parts (None, 'auto' or 1..MAX_PARTS), scheme, prune (None: the default), seed and backend."""
    _one_of(backend, BACKENDS, "backend")
    if parts is not None and parts != "auto":
        if not isinstance(parts, int) or isinstance(parts, bool) or parts < 1:
            raise OptionValueError(f"{{parts}} must be a positive integer, got {parts!r}")
        if parts > MAX_PARTS:
            raise OptionValueError(f"{{parts}} must be at most {MAX_PARTS:,}, got {parts:,}")
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**64:
        raise OptionValueError(f"{{seed}} must be an integer from 0 to 2^64-1, got {seed!r}")
    if scheme is not None:
        _one_of(scheme, SCHEMES, "partitioning scheme")
    if prune is not None:
        _one_of(prune, PRUNE_MODES, "prune mode")


@dataclass(frozen=True)
class CountConfig:
    """How to count: where, with which kernel, in how many parts, and what to keep."""

    backend: str = "auto"
    kernel: str | None = None       # a registry spec ('lstc-group:tile=256'); None or 'auto': each part's by rule
    threads: int | None = None      # CPU threads (None: all, shared among a node's ranks)
    parts: int | str | None = None  # None: the whole graph with one rank, one part per rank with several;
                                    # 'auto': the fewest parts whose largest fits the memory budget
    scheme: str | None = None       # None: DEFAULT_SCHEME, and a store's own when counting a store
    prune: str | None = None        # likewise DEFAULT_PRUNE
    seed: int = 0
    store: str | None = None        # the partition store to reuse or write
    schedule: str = "static"
    read: str = "auto"
    resume: bool = False
    per_vertex: bool = False
    per_edge: bool = False
    gpu_memory_limit: int | None = None
    host_memory_limit: int | None = None  # what one host's ranks may hold of the graph (ranks/row_parts.py)
    scratch: str | None = None  # where a graph no memory holds is written (io/scratch.py; None: TMPDIR)
    labels: bool = False            # a text source's ids are names
    ranks_per_gpu: int = 1          # ranks of a node that count on one GPU; the others wait (ranks/per_gpu.py)

    def __post_init__(self):
        check_partitioning(self.parts, self.scheme, self.prune, self.seed)
        _one_of(self.backend, BACKENDS, "backend")
        _one_of(self.schedule, SCHEDULES, "schedule")
        _one_of(self.read, READERS, "reader")
        if self.kernel is not None and not isinstance(self.kernel, str):
            raise OptionTypeError(f"{{kernel}} must be a kernel spec such as 'lstc:tile=128', got {self.kernel!r}")
        if self.threads is not None:
            _integer("threads", self.threads)
        for name in ("gpu_memory_limit", "host_memory_limit"):
            if getattr(self, name) is not None:
                _integer(name, getattr(self, name))
                if getattr(self, name) > MAX_BYTES:  # not echoed: an int of over 4300 digits has no str()
                    raise OptionValueError(f"{{{name}}} must be at most 2^63-1 bytes (8 EiB)")
        _integer("ranks_per_gpu", self.ranks_per_gpu)
        if self.store is not None and not isinstance(self.store, (str, os.PathLike)):
            raise OptionTypeError(f"{{store}} must be a path, got {type(self.store).__name__} {self.store!r}")
        if self.store is not None:
            object.__setattr__(self, "store", os.fspath(self.store))
        for name in ("resume", "per_vertex", "per_edge", "labels"):
            if not isinstance(getattr(self, name), bool):
                raise OptionTypeError(f"{{{name}}} must be True or False, got {getattr(self, name)!r}")
        for name in ("per_vertex", "per_edge"):
            if getattr(self, name) and self.resume:
                raise OptionValueError(f"{{{name}}} cannot resume a count (the journal holds totals only); leave out "
                                       "{resume}")

    @property
    def whole(self) -> bool:
        """No partitioning asked for at all."""
        return self.parts is None and self.scheme is None and self.prune is None and self.store is None

    @property
    def scheme_or_default(self) -> str:
        return self.scheme or DEFAULT_SCHEME

    @property
    def prune_or_default(self) -> str:
        return self.prune or DEFAULT_PRUNE
