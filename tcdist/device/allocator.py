"""The GPU memory limit, as a scoped allocator: CuPy's default pool behind a check of what the
run's arrays hold at once, recording the peak. Installed process-wide (the reader thread stages
copies beside the count, and CuPy's own scoped allocator is per thread) for the length of a
``with limited(...)`` block, and the allocator that was there before put back at its end.

The limit is on the arrays in use, not the pool's own limit, which counts the free blocks the
pool keeps: a free block split to serve a smaller array cannot be given back while that array
lives, and would be refused though the arrays fit. Once the pool has grown past the limit, it
gives back what free blocks it can (doing so earlier would empty the cache, and wait for the
device, on every allocation near the limit).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

_POOL_UNIT = 512  # CuPy's pool rounds every allocation up to a multiple of this


class PeakAllocator:
    """CuPy's default pool under a limit, with the most it held in use at once (peak)."""

    def __init__(self, pool, limit: int):
        import cupy

        self.pool, self.limit, self.peak = pool, limit, 0
        self.lock = threading.RLock()  # the pool may collect garbage while it allocates: a finalizer may too
        self.refused = cupy.cuda.memory.OutOfMemoryError

    def __call__(self, size: int):
        rounded = -(-size // _POOL_UNIT) * _POOL_UNIT
        with self.lock:
            used = self.pool.used_bytes()
            if used + rounded > self.limit:
                raise self.refused(size, used, self.limit)
            try:
                memory = self.pool.malloc(size)
            except self.refused:  # the device itself is short: other processes, or blocks cached on it
                self.pool.free_all_blocks()
                memory = self.pool.malloc(size)
            if self.pool.total_bytes() > self.limit:  # grown past it: give back what the cache can
                self.pool.free_all_blocks()
            self.peak = max(self.peak, self.pool.used_bytes())
        return memory


@contextmanager
def limited(limit: int) -> Iterator[PeakAllocator]:
    """CuPy allocates under the limit inside the block (the allocator before is put back after)."""
    import cupy

    pool = cupy.get_default_memory_pool()
    allocator, before = PeakAllocator(pool, limit), cupy.cuda.get_allocator()
    pool.free_all_blocks()
    cupy.cuda.set_allocator(allocator)
    try:
        yield allocator
    finally:
        cupy.cuda.set_allocator(before)
        pool.free_all_blocks()
