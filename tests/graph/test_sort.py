"""The parallel sort against np.sort: buckets by value range, any spread of keys, either dtype."""

from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from tcdist.graph import sort

int64s = arrays(np.int64, st.integers(0, 3000), elements=st.integers(-2**63, 2**63 - 1))
uint64s = arrays(np.uint64, st.integers(0, 3000), elements=st.integers(0, 2**64 - 1))
narrow = arrays(np.uint64, st.integers(0, 3000), elements=st.integers(2**40, 2**40 + 50))


@settings(max_examples=150, deadline=None)
@given(st.one_of(int64s, uint64s, narrow))
def test_sort_is_np_sort(keys):
    with mock.patch.object(sort, "SMALL", 0):
        assert np.array_equal(sort.sort(keys), np.sort(keys))


def test_sort_of_millions_in_many_buckets():
    keys = np.random.default_rng(3).integers(0, 2**43, 3 << 20, dtype=np.uint64)
    keys[::7] = keys[5]  # a bucket far fuller than the others
    assert np.array_equal(sort.sort(keys), np.sort(keys))
