"""Where a text block's lines are parsed: on every core (grammar.py) or on the current GPU
(cuda/parse.cu), into one growing pair of int64 arrays.

An engine parses a block, says where its first bad line is (or keeps its edges), and holds what
it parsed. The GPU engine keeps its edges on the device while they and the build after them fit
there; past that it hands them to a CPU engine, which goes on.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from tcdist.io import grammar

HEAD_BYTES = 1 << 20  # a header lies within the first MiB
RANGE_BYTES = 1 << 16  # a CPU thread's piece of a block: small enough to balance, large enough to pay
PAIR_BYTES = 16  # an edge as two int64


class Pairs:
    """Two int64 arrays that grow by blocks: capacity from an estimate of the whole input, a half
    more whenever it falls short."""

    def __init__(self, xp):
        self.xp = xp
        self.src = self.dst = xp.empty(0, xp.int64)
        self.size = 0

    def room_for(self, more: int, estimate: int = 0) -> int:
        """The capacity the arrays need for more edges (0: they have it), at least estimate."""
        need = self.size + more
        if need <= self.src.size:
            return 0
        return max(need, estimate, self.src.size * 3 // 2)

    def grow(self, capacity: int) -> None:
        src, dst = self.xp.empty(capacity, self.xp.int64), self.xp.empty(capacity, self.xp.int64)
        src[: self.size], dst[: self.size] = self.src[: self.size], self.dst[: self.size]
        self.src, self.dst = src, dst

    def block(self, count: int):
        """Views of the next count edges, which the caller fills."""
        lo, self.size = self.size, self.size + count
        return self.src[lo : self.size], self.dst[lo : self.size]

    def pairs(self):
        return self.src[: self.size], self.dst[: self.size]


class Engine:
    """What both engines hold: the edges parsed so far, and the lines and bytes of the last block."""

    def __init__(self, file_bytes: int, out: Pairs):
        self.file_bytes = file_bytes
        self.out = out
        self.read_bytes = 0  # of the input, parsed so far
        self.lines = 0  # of the last block
        self._last = None  # its edges

    def estimate(self, block_edges: int) -> int:
        """Edges of the whole input, from its size and what the blocks so far held (0: unknown)."""
        if not self.file_bytes:
            return 0
        return (self.out.size + block_edges) * self.file_bytes // max(self.read_bytes, 1) * 102 // 100 + 1024

    def last_block(self):
        return self._last

    def pairs(self):
        return self.out.pairs()


class CpuEngine(Engine):
    """Blocks parsed by the run's threads, range by range, into scratch, then packed in order."""

    def __init__(self, file_bytes: int, held: Pairs | None = None):
        super().__init__(file_bytes, held or Pairs(np))
        self._scratch = (np.empty(0, np.int64), np.empty(0, np.int64))
        self._threads = ThreadPoolExecutor(numba.get_num_threads(), thread_name_prefix="tcdist-parse")

    allocate = staticmethod(lambda nbytes: np.empty(nbytes, np.uint8))

    def parse(self, block):
        """None with the block's edges kept, or (offset, lines before it) of its first bad line."""
        ranges = max(1, min(block.size // RANGE_BYTES, 64 * self._threads._max_workers))
        bounds = grammar.range_bounds(block.size, ranges)
        at = bounds[:-1] // 4 + 2 * np.arange(ranges)
        need = grammar.scratch_edges(block.size, ranges)
        if self._scratch[0].size < need:
            self._scratch = (np.empty(need, np.int64), np.empty(need, np.int64))
        src, dst = self._scratch
        found = np.array(list(self._threads.map(
            lambda r: grammar.parse_range(block, bounds[r], bounds[r + 1], src, dst, at[r]), range(ranges))),
            np.int64).reshape(ranges, 4)
        edges, lines, bad, index = found.T
        if (bad >= 0).any():
            first = int(np.flatnonzero(bad >= 0)[0])
            return int(bad[first]), int(lines[:first].sum() + index[first])
        self.lines = int(lines.sum())
        self.read_bytes += block.size
        self._pending = (edges, at)
        return None

    def settled(self, require):
        """Pack the last block's edges after the others; require(bytes, edges) refuses growing the
        arrays to hold that many edges where it will not fit. Returns the engine that goes on."""
        edges, at = self._pending
        capacity = self.out.room_for(int(edges.sum()), self.estimate(int(edges.sum())))
        if capacity:
            require(PAIR_BYTES * capacity, capacity)
            self.out.grow(capacity)
        src, dst = self._scratch
        into = self.out.block(int(edges.sum()))
        starts = np.concatenate([[0], np.cumsum(edges)])
        self._last = into

        def pack(r):
            k, lo = starts[r], at[r]
            into[0][k : starts[r + 1]] = src[lo : lo + edges[r]]
            into[1][k : starts[r + 1]] = dst[lo : lo + edges[r]]

        list(self._threads.map(pack, range(edges.size)))
        return self

    def pairs(self):
        self._threads.shutdown()
        return super().pairs()
