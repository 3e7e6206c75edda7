"""Array helpers shared by NumPy and CuPy code."""

import numpy as np
import pytest

from tcdist import xp as xp_module
from tcdist.xp import select


@pytest.mark.parametrize("size", [0, 1, 7, 64, 1000])
def test_select_in_batches_equals_boolean_indexing(monkeypatch, size):
    monkeypatch.setattr(xp_module, "SELECT_BATCH", 7)
    rng = np.random.default_rng(size)
    mask = rng.random(size) < 0.4
    a, b = rng.integers(0, 1 << 40, size), rng.random(size)
    got_a, got_b = select(mask, a, b)
    assert np.array_equal(got_a, a[mask]) and np.array_equal(got_b, b[mask])


@pytest.mark.gpu
def test_select_more_than_2_to_the_31_elements_on_the_gpu():
    """CuPy's a[mask] raised OverflowError once 2^31 elements were selected (RMAT-25 in 8 parts)."""
    import cupy

    size = (1 << 31) + (1 << 20)
    mask = cupy.ones(size, dtype=bool)
    mask[::1000] = False
    data = cupy.zeros(size, dtype=cupy.int8)
    data[::1000] = 1  # dropped
    data[1::1000] = 2  # kept
    (got,) = select(mask, data)
    dropped = (size + 999) // 1000
    assert got.size == size - dropped
    assert int((got == 1).sum()) == 0 and int((got == 2).sum()) == (size - 1 + 999) // 1000
    assert int(got[998]) == 0 and int(got[999]) == 2  # order kept: element 1001 follows 999 of the first 1000
