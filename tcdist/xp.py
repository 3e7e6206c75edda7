"""Array code is written once against the NumPy API; this picks NumPy or CuPy for it."""

import sys

import numpy as np


def array_module(*arrays):
    """CuPy if any argument is a CuPy array, else NumPy (never imports CuPy itself)."""
    cupy = sys.modules.get("cupy")
    if cupy is not None and any(isinstance(a, cupy.ndarray) for a in arrays):
        return cupy
    return np


def to_numpy(a):
    """A host copy of a NumPy or CuPy array."""
    return a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray) else np.asarray(a)


def segment_ids(counts):
    """[0]*counts[0] + [1]*counts[1] + ...: np.repeat(arange, counts), which CuPy cannot do."""
    xp = array_module(counts)
    if xp is np:
        return np.repeat(np.arange(counts.size, dtype=np.int64), counts)
    ends = xp.cumsum(counts)
    total = int(ends[-1]) if ends.size else 0
    return xp.searchsorted(ends, xp.arange(total, dtype=xp.int64), side="right")
