"""The build's whole-array passes on the host, compiled and on every thread the run may use; each
gives what build.py's NumPy expression beside its call gives, fused into one pass."""

from __future__ import annotations

import numpy as np

from tcdist import compiled
from tcdist.compiled import jit, prange


def _chunks(size: int) -> int:
    """How many pieces a compaction splits its input into: a few per thread, each written in order."""
    return max(1, min(size, 4 * compiled.get_threads()))


@jit(parallel=True, nogil=True, cache=True)
def take(table, index):
    """table[index]."""
    out = np.empty(index.size, table.dtype)
    for i in prange(index.size):
        out[i] = table[index[i]]
    return out


@jit(parallel=True, nogil=True, cache=True)
def touch(array, step):
    """Write a zero every step items: the pages of a new array faulted in on every thread (CUDA
    registering them faults them in on one)."""
    for i in prange((array.size + step - 1) // step):
        array[i * step] = 0


@jit(parallel=True, nogil=True, cache=True)
def copy(out, values):
    """out[...] = values (1-d, one dtype) on every thread: a new array's pages are faulted in by
    all of them, not by one (4.5 GB into a fresh shared window took 4.4 s on one)."""
    for i in prange(values.size):
        out[i] = values[i]


@jit(parallel=True, nogil=True, cache=True)
def mark(present, ids):
    """present[ids] = True (threads that write the same flag write the same value)."""
    for i in prange(ids.size):
        present[ids[i]] = True


@jit(parallel=True, nogil=True, cache=True)
def positions(ids, values):
    """np.searchsorted(ids, values)."""
    out = np.empty(values.size, np.int64)
    for i in prange(values.size):
        out[i] = np.searchsorted(ids, values[i])
    return out


@jit(parallel=True, nogil=True, cache=True)
def loops(src, dst):
    """(src == dst).sum()."""
    found = 0
    for i in prange(src.size):
        found += src[i] == dst[i]
    return found


@jit(parallel=True, nogil=True, cache=True)
def _drop_loops(src, dst, chunks, kept):
    counts = np.zeros(chunks + 1, np.int64)
    for c in prange(chunks):
        for i in range(c * src.size // chunks, (c + 1) * src.size // chunks):
            counts[c + 1] += src[i] != dst[i]
    starts = np.cumsum(counts)
    new_src, new_dst = np.empty(kept, src.dtype), np.empty(kept, dst.dtype)
    for c in prange(chunks):
        at = starts[c]
        for i in range(c * src.size // chunks, (c + 1) * src.size // chunks):
            if src[i] != dst[i]:
                new_src[at], new_dst[at] = src[i], dst[i]
                at += 1
    return new_src, new_dst


def drop_loops(src, dst, loops_found: int):
    """src[src != dst], dst[src != dst]."""
    return _drop_loops(src, dst, _chunks(src.size), src.size - loops_found)


@jit(parallel=True, nogil=True, cache=True)
def directed_keys(u, v, n):
    """(min(u, v) * n + max(u, v)).astype(uint64) * 2 + (u > v)."""
    out = np.empty(u.size, np.uint64)
    for i in prange(u.size):
        lo, hi = min(u[i], v[i]), max(u[i], v[i])
        out[i] = np.uint64(lo * n + hi) * np.uint64(2) + np.uint64(u[i] > v[i])
    return out


@jit(parallel=True, nogil=True, cache=True)
def _distinct(keys, shift, chunks):
    counts = np.zeros(chunks + 1, np.int64)
    unshifted = 0
    for c in prange(chunks):
        for i in range(c * keys.size // chunks, (c + 1) * keys.size // chunks):
            counts[c + 1] += i == 0 or keys[i] >> shift != keys[i - 1] >> shift
            unshifted += i == 0 or keys[i] != keys[i - 1]
    starts = np.cumsum(counts)
    out = np.empty(starts[-1], keys.dtype)
    for c in prange(chunks):
        at = starts[c]
        for i in range(c * keys.size // chunks, (c + 1) * keys.size // chunks):
            if i == 0 or keys[i] >> shift != keys[i - 1] >> shift:
                out[at] = keys[i] >> shift
                at += 1
    return out, unshifted


def distinct(keys, shift: int = 0):
    """(the distinct values of keys >> shift, how many distinct keys), keys sorted uint64."""
    return _distinct(keys, np.uint64(shift), _chunks(keys.size))


@jit(parallel=True, nogil=True, cache=True)
def row_starts(keys, n):
    """rowptr of sorted keys u * n + v: 0 and np.cumsum(np.bincount(keys // n, minlength=n)); the
    passes below go row by row from it, so that no key is divided by n (a slow division)."""
    rowptr = np.empty(n + 1, np.int64)
    for x in prange(n + 1):
        rowptr[x] = np.searchsorted(keys, x * n)
    return rowptr


@jit(parallel=True, nogil=True, cache=True)
def _degrees(keys, rowptr, parts):
    n = rowptr.size - 1
    counts = np.zeros((parts, n), np.int64)
    for p in prange(parts):
        for x in range(p * n // parts, (p + 1) * n // parts):
            counts[p, x] += rowptr[x + 1] - rowptr[x]
            for j in range(rowptr[x], rowptr[x + 1]):
                counts[p, keys[j] - x * n] += 1
    degree = np.empty(n, np.int64)
    for x in prange(n):
        degree[x] = counts[:, x].sum()
    return degree


def degrees(keys, rowptr):
    """np.bincount(keys // n, minlength=n) + np.bincount(keys % n, minlength=n) of sorted keys with
    rowptr row_starts(keys, n): in parts with counts of their own, which take no more memory than the keys."""
    n = rowptr.size - 1
    return _degrees(keys, rowptr, max(1, min(compiled.get_threads(), keys.size // max(n, 1))))


@jit(parallel=True, nogil=True, cache=True)
def oriented_keys(keys, rowptr, rank):
    """a, b = rank[keys // n], rank[keys % n]; min(a, b) * n + max(a, b), of sorted keys with rowptr."""
    n = rowptr.size - 1
    out = np.empty(keys.size, np.int64)
    for x in prange(n):
        a = rank[x]
        for j in range(rowptr[x], rowptr[x + 1]):
            b = rank[keys[j] - x * n]
            out[j] = min(a, b) * n + max(a, b)
    return out


@jit(parallel=True, nogil=True, cache=True)
def columns(keys, rowptr, col):
    """col[:] = keys % n, of sorted keys with rowptr."""
    n = rowptr.size - 1
    for x in prange(n):
        for j in range(rowptr[x], rowptr[x + 1]):
            col[j] = keys[j] - x * n
