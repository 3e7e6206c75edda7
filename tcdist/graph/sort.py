"""Sorting int64 or uint64 keys on every thread the run may use: the keys are bucketed by value
range in two compiled passes (count, then a stable scatter), and NumPy sorts the buckets side by
side (its sort lets go of the GIL). Integers have one sorted order, so the result is np.sort's."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from tcdist import compiled
from tcdist.compiled import jit, prange
from tcdist.xp import array_module, reserve_sort

SMALL = 1 << 20  # up to this many keys (or on one thread) np.sort alone is as fast
_BUCKET = 1 << 16  # keys per bucket aimed at: a bucket's sort stays in cache
_MAX_BITS = 12  # at most 4096 buckets: each thread's scatter keeps that many write streams


def sort(keys: np.ndarray) -> np.ndarray:
    """np.sort(keys) of a one-dimensional int64 or uint64 array, made on numba's threads (on the
    GPU where keys lie there)."""
    if array_module(keys) is not np:
        out = keys.copy()
        reserve_sort(out)  # (CuPy's sort short of its workspace leaves the keys unsorted: it is raised here)
        out.sort()
        return out
    threads = compiled.get_threads()
    if keys.size <= SMALL or threads < 2:
        return np.sort(keys)
    low, high = (int(x) for x in _bounds(keys))
    span = high - low
    shift = max(0, span.bit_length() - min(_MAX_BITS, max(4, (keys.size // _BUCKET).bit_length())))
    chunks = threads * 4
    low = np.uint64(low % 2**64)  # the passes take key - low modulo 2^64: the offset in the range, either dtype
    counts = _counts(keys, low, np.uint64(shift), (span >> shift) + 1, chunks)
    starts = np.zeros(counts.size + 1, np.int64)  # bucket by bucket, within a bucket chunk by chunk
    np.cumsum(counts.T, out=starts[1:])
    out = np.empty_like(keys)
    _scatter(keys, low, np.uint64(shift), starts[:-1].reshape(counts.shape[::-1]).T.copy(), out)
    edges = starts[::chunks]
    with ThreadPoolExecutor(threads, thread_name_prefix="tcdist-sort") as pool:
        for _ in pool.map(lambda b: out[edges[b]:edges[b + 1]].sort(), range(edges.size - 1)):
            pass
    return out


@jit(parallel=True, nogil=True, cache=True)
def _bounds(keys):
    return keys.min(), keys.max()


@jit(parallel=True, nogil=True, cache=True)
def _counts(keys, low, shift, buckets, chunks):
    """counts[c, b]: the keys of chunk c that fall in bucket b ((key - low) >> shift)."""
    counts = np.zeros((chunks, buckets), np.int64)
    for c in prange(chunks):
        for i in range(c * keys.size // chunks, (c + 1) * keys.size // chunks):
            counts[c, (np.uint64(keys[i]) - low) >> shift] += 1
    return counts


@jit(parallel=True, nogil=True, cache=True)
def _scatter(keys, low, shift, starts, out):
    """Each chunk's keys to their buckets from starts[c, b] on, in order."""
    chunks = starts.shape[0]
    for c in prange(chunks):
        at = starts[c].copy()
        for i in range(c * keys.size // chunks, (c + 1) * keys.size // chunks):
            b = (np.uint64(keys[i]) - low) >> shift
            out[at[b]] = keys[i]
            at[b] += 1
