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
