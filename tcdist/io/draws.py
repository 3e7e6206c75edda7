"""The generators' counter-based draws on the host, compiled and on every thread the run may use:
each value is splitmix64 of its position (generators._Random), made where it is used, so an
edge's RMAT levels are drawn and combined in registers."""

from __future__ import annotations

import numpy as np

from tcdist.compiled import jit, prange
from tcdist.graph.sort import SMALL, sort

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MUL1, _MUL2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_ONE = np.uint64(1)
_LOW24 = np.uint64((1 << 24) - 1)  # RMAT draws two 24-bit uniforms from each 64-bit value
_HIGH24 = np.uint64(40)


@jit(nogil=True, cache=True, inline="always")
def _value(key, position):
    """Value number position (from 0) of the sequence of key: splitmix64's mix of key + (position + 1) * GOLDEN."""
    z = (np.uint64(position) + _ONE) * GOLDEN + key
    z = (z ^ (z >> np.uint64(30))) * _MUL1
    z = (z ^ (z >> np.uint64(27))) * _MUL2
    return z ^ (z >> np.uint64(31))


@jit(parallel=True, nogil=True, cache=True)
def raw(key, first, size):
    """size values from position first."""
    out = np.empty(size, np.uint64)
    for i in prange(size):
        out[i] = _value(key, first + i)
    return out


@jit(parallel=True, nogil=True, cache=True)
def below(key, first, size, high):
    """(raw(key, first, size) % high).astype(int64)."""
    out = np.empty(size, np.int64)
    for i in prange(size):
        out[i] = np.int64(_value(key, first + i) % high)
    return out


_RUN = 512  # edges drawn together, level by level: consecutive positions, a loop the compiler vectorises


@jit(parallel=True, nogil=True, cache=True)
def rmat(key, first, scale, m, block, cuts, perm, lo, src, dst):
    """Edges lo.. of RMAT's m (as many as src holds), ids through perm: edge j of the block from b
    takes level l's bits from value first + b * scale + l * (the block's size) + j. cuts: the row
    cut, the column cut where the row bit is 0, where it is 1 (of 2^24). Drawn a run of edges at a
    time, level by level (1.7x faster than edge by edge on two cores)."""
    row_cut, col_cut, col_step = cuts[0], cuts[1], cuts[2] - cuts[1]  # (wraps: row * col_step is exact mod 2^64)
    for run in prange((src.size + _RUN - 1) // _RUN):
        k0 = run * _RUN
        k1 = min(src.size, k0 + _RUN)
        s = np.zeros(_RUN, np.int64)
        d = np.zeros(_RUN, np.int64)
        a = k0
        while a < k1:  # the edges a..b-1 of the run in one block
            start = (lo + a) // block * block
            size = min(m, start + block) - start
            b = min(k1, start + block - lo)
            at = first + start * scale + lo + a - start
            for level in range(scale):
                position = at + level * size
                for j in range(b - a):
                    bits = _value(key, position + j)
                    row = np.uint64((bits >> _HIGH24) >= row_cut)
                    s[a - k0 + j] |= np.int64(row) << level
                    d[a - k0 + j] |= np.int64((bits & _LOW24) >= col_cut + row * col_step) << level
            a = b
        for j in range(k1 - k0):
            src[k0 + j] = perm[s[j]]
            dst[k0 + j] = perm[d[j]]


def stable_order(keys):
    """np.argsort(keys, kind="stable") of uint64 keys, sorted on every thread: each key's high
    bits packed with its index below them, the packed keys sorted (sort.py), then the rare runs
    whose high bits are equal put in order of their whole keys."""
    n = keys.size
    if n <= SMALL:
        return np.argsort(keys, kind="stable")
    bits = np.uint64((n - 1).bit_length())
    packed = sort((keys >> bits << bits) | np.arange(n, dtype=np.uint64))
    order = (packed & ((np.uint64(1) << bits) - np.uint64(1))).astype(np.int64)
    _settle_runs(packed, keys, bits, order)
    return order


@jit(nogil=True, cache=True)
def _settle_runs(packed, keys, bits, order):
    """Each run of order whose keys share their high bits (in index order), sorted stably by whole key."""
    a = 0
    while a < packed.size:
        b = a + 1
        while b < packed.size and packed[b] >> bits == packed[a] >> bits:
            b += 1
        if b - a > 1:
            run = order[a:b].copy()
            order[a:b] = run[np.argsort(keys[run], kind="mergesort")]
        a = b
