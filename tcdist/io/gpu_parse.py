"""Text blocks parsed on the current GPU (cuda/parse.cu): each block copied up from pinned host
memory, its lines counted and checked by one launch, its edges written by a second after an
exclusive sum. The edges stay on the device for the build there; once they and that build would
no longer fit in the room given, they move to the host and the CPU engine goes on.

Imported only for the GPU backend; importing it imports CuPy.
"""

from __future__ import annotations

import cupy
import numpy as np

from tcdist.budget import model
from tcdist.cuda import launch
from tcdist.cuda.build import PARSE
from tcdist.graph import gpu_build
from tcdist.io.engines import PAIR_BYTES, CpuEngine, Engine, Pairs

RANGE_BYTES = 128  # a GPU thread's piece of a block: a few lines
THREADS = 256
BLOCK_BYTES_PER_BYTE = 2  # a block on the device and its ranges' four counts


def pinned(nbytes: int) -> np.ndarray:
    """A host buffer the copy engine reads at full speed (page-locked; pageable where a locked-memory
    limit refuses it)."""
    try:
        memory = cupy.cuda.alloc_pinned_memory(nbytes)
    except cupy.cuda.runtime.CUDARuntimeError:
        return np.empty(nbytes, np.uint8)
    return np.frombuffer(memory, np.uint8, nbytes)


class GpuEngine(Engine):
    """Blocks parsed on the GPU while room (bytes) holds their edges' build."""

    def __init__(self, file_bytes: int, room: int):
        super().__init__(file_bytes, Pairs(cupy))
        self.room = room
        self._block = cupy.empty(0, cupy.uint8)
        self._gpu = cupy.cuda.Device().id

    def allocate(self, nbytes: int) -> np.ndarray:
        """A pinned buffer, made in this GPU's context (the read-ahead thread starts on device 0)."""
        with cupy.cuda.Device(self._gpu):
            return pinned(nbytes)

    def parse(self, block):
        """None with the block's edges counted, or (offset, lines before it) of its first bad line."""
        if self._block.size < block.size:
            self._block = cupy.empty(block.size, cupy.uint8)
        on_gpu = self._block[: block.size]
        on_gpu.set(block)
        ranges = max(1, -(-block.size // RANGE_BYTES))
        edges, lines, bad, index = (cupy.empty(ranges, cupy.int64) for _ in range(4))
        bad.data.memset_async(0xFF, bad.nbytes)  # -1: no bad line (index is read only where bad is set)
        grid = (-(-ranges // THREADS),)
        launch.named(PARSE, "parse_ranges<false>")(
            grid, (THREADS,), (on_gpu, np.int64(block.size), np.int64(RANGE_BYTES), np.int64(ranges), edges, lines,
                               bad, index, edges, edges))
        offsets, total, line_total, first = gpu_build.block_totals(edges, lines, bad)
        if first is not None:
            return int(bad[first]), int(lines[:first].get().sum() + index[first])
        self.lines = line_total
        self._pending = (on_gpu, offsets, ranges, grid, total)
        return None

    def settled(self, require):
        """Write the last block's edges after the others; where they would no longer fit beside
        their build, move every edge to the host and return a CPU engine that goes on."""
        on_gpu, offsets, ranges, grid, total = self._pending
        capacity = self.out.room_for(total, self.estimate(total))
        fits = ((self.out.size + total) * model.GPU_BUILD_BYTES_PER_EDGE + PAIR_BYTES * max(capacity, self.out.src.size)
                + BLOCK_BYTES_PER_BYTE * self._block.size <= self.room)
        if fits and capacity:
            self.out.grow(capacity)
        into = self.out.block(total) if fits else (cupy.empty(total, cupy.int64), cupy.empty(total, cupy.int64))
        launch.named(PARSE, "parse_ranges<true>")(
            grid, (THREADS,), (on_gpu, np.int64(on_gpu.size), np.int64(RANGE_BYTES), np.int64(ranges), offsets,
                               offsets, offsets, offsets, *into))
        self._last = into
        return self if fits else self._to_host(require)

    def _to_host(self, require):
        """A CPU engine holding every edge parsed so far, the last block's after the others."""
        (src, dst), (last_src, last_dst) = self.out.pairs(), self._last
        edges = src.size + last_src.size
        require(PAIR_BYTES * edges, edges)
        held = Pairs(np)
        held.grow(edges)
        for a, b in ((src, dst), (last_src, last_dst)):
            into = held.block(a.size)
            a.get(out=into[0])
            b.get(out=into[1])
        cpu = CpuEngine(self.file_bytes, held)
        cpu.read_bytes, cpu.lines, cpu._last = self.read_bytes, self.lines, into
        self.out = self._block = None
        return cpu
