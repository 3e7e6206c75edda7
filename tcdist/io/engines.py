"""Where a text block's lines are parsed: on every core (grammar.py) or on the current GPU
(cuda/parse.cu), into one growing pair of int64 arrays.

An engine parses a block, says where its first bad line is (or keeps its edges), and holds what
it parsed. The GPU engine keeps its edges on the device while they and the build after them fit
there; past that it hands them to a CPU engine, which goes on.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from tcdist import compiled
from tcdist.io import grammar
from tcdist.xp import copy_into

RANGE_BYTES = 1 << 16  # the least piece of a block a thread parses
RANGES_PER_THREAD = 16  # pieces a block is cut into per thread, so that threads end together
PAIR_BYTES = 16  # an edge as two int64


class Pairs:
    """Two int64 arrays that grow by blocks: capacity from an estimate of the whole input, a half
    more whenever it falls short."""

    def __init__(self, xp):
        self.xp = xp
        self.src = self.dst = xp.empty(0, xp.int64)
        self.size = 0

    def room_for(self, more: int, estimate: int = 0) -> int:
        """The capacity the arrays need for more edges (0: they have it): the estimate of the whole
        input with a little to spare, or a half more than now."""
        need = self.size + more
        if need <= self.src.size:
            return 0
        return max(need, estimate * 51 // 50 + 1024 if estimate else 0, self.src.size * 3 // 2)

    def grow(self, capacity: int) -> None:
        src, dst = self.xp.empty(capacity, self.xp.int64), self.xp.empty(capacity, self.xp.int64)
        copy_into(src[: self.size], self.src[: self.size])
        copy_into(dst[: self.size], self.dst[: self.size])
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
        self.read_bytes = 0  # of the file (compressed, for gzip) up to the last block parsed
        self.lines = 0  # of the last block
        self._last = None  # its edges

    def estimate(self, block_edges: int) -> int:
        """Edges of the whole input, from its size and what the blocks so far held (0: unknown)."""
        if not self.file_bytes:
            return 0
        return (self.out.size + block_edges) * self.file_bytes // max(self.read_bytes, 1)

    def last_block(self):
        return self._last

    def pairs(self):
        return self.out.pairs()


class CpuEngine(Engine):
    """Blocks parsed by the run's threads, range by range, into scratch, then packed in order; a
    small block, while no compiled code has run, in whole-array NumPy (grammar.parse_small)."""

    def __init__(self, file_bytes: int, held: Pairs | None = None):
        super().__init__(file_bytes, held or Pairs(np))
        self._scratch = (np.empty(0, np.int64), np.empty(0, np.int64))
        self._thread_count = compiled.get_threads()
        self._threads = ThreadPoolExecutor(self._thread_count, thread_name_prefix="tcdist-parse")

    allocate = staticmethod(lambda nbytes: np.empty(nbytes, np.uint8))

    def parse(self, block):
        """None with the block's edges kept, or (offset, lines before it) of its first bad line."""
        if block.size <= grammar.SMALL_BLOCK_BYTES and not compiled.is_loaded():
            small = grammar.parse_small(block)
            if small is not None:
                src, dst, self.lines = small
                self._pending = (src.size, lambda into: (copy_into(into[0], src), copy_into(into[1], dst)))
                return None
        ranges = max(1, min(block.size // RANGE_BYTES, RANGES_PER_THREAD * self._thread_count))
        bounds = grammar.range_bounds(block.size, ranges)
        at = bounds[:-1] // 4 + 2 * np.arange(ranges)
        need = grammar.scratch_edges(block.size, ranges)
        if self._scratch[0].size < need:
            self._scratch = (np.empty(need, np.int64), np.empty(need, np.int64))
        found = np.empty((ranges, 4), np.int64)
        self._on_threads(ranges, lambda first, last: grammar.parse_ranges(block, bounds, at, *self._scratch, found,
                                                                          first, last))
        edges, lines, bad, index = found.T
        if (bad >= 0).any():
            first = int(np.flatnonzero(bad >= 0)[0])
            return int(bad[first]), int(lines[:first].sum() + index[first])
        self.lines = int(lines.sum())
        starts = np.cumsum(edges) - edges
        self._pending = (int(edges.sum()), lambda into: self._on_threads(
            edges.size, lambda first, last: grammar.pack(*self._scratch, at, edges, starts, *into, first, last)))
        return None

    def settled(self, require):
        """Pack the last block's edges after the others; require(bytes, edges) refuses growing the
        arrays to hold that many edges where it will not fit. Returns the engine that goes on."""
        # dropped once used: the write holds the engine, a cycle that kept its buffers until Python's collector ran
        (total, write), self._pending = self._pending, None
        whole = max(self.estimate(total), self.out.size + total)
        capacity = self.out.room_for(total, whole)
        if capacity:
            require(PAIR_BYTES * capacity, whole)  # the new arrays, while the old ones are still held
            self.out.grow(capacity)
        self._last = self.out.block(total)
        write(self._last)
        return self

    def _on_threads(self, ranges: int, work) -> None:
        """work(first, last) over the ranges, a contiguous share for each thread."""
        cuts = np.linspace(0, ranges, min(ranges, self._thread_count) + 1).astype(int)
        compiled.threads_map(self._threads, work, cuts[:-1], cuts[1:])

    def pairs(self):
        self._threads.shutdown()
        return super().pairs()
