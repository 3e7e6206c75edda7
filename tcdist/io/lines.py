"""Edge lists as text ('u<SEP>v' lines, decimal), formatted on every thread the run may use."""

from __future__ import annotations

import numpy as np

from tcdist.compiled import jit, prange

BLOCK = 1 << 22  # edges formatted at a time: their text is written while the next block's is made
_TEN = np.uint64(10)
_ZERO = np.uint64(48)  # '0'


@jit(nogil=True, cache=True, inline="always")
def _width(x):
    """Characters of x in decimal, its sign included."""
    size = 1 + (x < 0)
    magnitude = np.uint64(x) if x >= 0 else np.uint64(0) - np.uint64(x)  # INT64_MIN too
    while magnitude >= _TEN:
        magnitude //= _TEN
        size += 1
    return size


@jit(nogil=True, cache=True, inline="always")
def _put(out, end, x):
    """x in decimal into out[..end] (its last digit at end - 1)."""
    magnitude = np.uint64(x) if x >= 0 else np.uint64(0) - np.uint64(x)
    while True:
        end -= 1
        out[end] = _ZERO + magnitude % _TEN
        magnitude //= _TEN
        if magnitude == 0:
            break
    if x < 0:
        out[end - 1] = 45


@jit(parallel=True, nogil=True, cache=True)
def text(src, dst, separator):
    """The bytes of the lines 'src[i]<separator>dst[i]\\n' (separator: a byte's value, 9 a tab)."""
    ends = np.empty(src.size, np.int64)
    for i in prange(src.size):
        ends[i] = _width(src[i]) + _width(dst[i]) + 2
    ends = np.cumsum(ends)
    out = np.empty(ends[-1] if src.size else 0, np.uint8)
    for i in prange(src.size):
        _put(out, ends[i] - 1, dst[i])
        between = ends[i] - 2 - _width(dst[i])
        out[between] = separator
        out[ends[i] - 1] = 10
        _put(out, between, src[i])
    return out
