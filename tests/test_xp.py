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


def test_a_copy_is_cut_where_registered_spans_begin_and_end(monkeypatch):
    """CUDA refuses one copy across a registered span's edge: the pieces of an array's bytes are
    each wholly inside a span or wholly outside every one."""
    page = xp_module.PAGE
    host = np.zeros(10 * page, np.uint8)[page // 2 : page // 2 + 8 * page]  # starts mid-page
    begin = host.ctypes.data
    inner = -(-begin // page) * page
    monkeypatch.setattr(xp_module, "_registered", {inner + page: inner + 3 * page, inner + 5 * page: inner + 9 * page})
    pieces = xp_module._pieces(host)
    edges = [begin + p.start for p in pieces] + [begin + host.nbytes]
    assert edges == [begin, inner + page, inner + 3 * page, inner + 5 * page, begin + host.nbytes]
    assert pieces[0].start == 0 and pieces[-1].stop == host.nbytes
    assert all(a.stop == b.start for a, b in zip(pieces, pieces[1:]))
    assert xp_module._pieces(host[:0]) == []



def test_a_copy_into_a_strided_array_is_refused_not_lost():
    """A strided destination reshaped to bytes is a copy: the values would go to it and be lost."""
    strided = np.zeros(10, np.int64)[::2]
    with pytest.raises(ValueError, match="copy_to_host: out must be C-contiguous"):
        xp_module.copy_to_host(strided, None)
    with pytest.raises(ValueError, match="copy_to_device: out must be C-contiguous"):
        xp_module.copy_to_device(strided, np.arange(5))
