"""The copy stream on a GPU: shares of one graph in host memory, copied one ahead of another."""

import numpy as np
import pytest

import tcdist
from tcdist.device import staging
from tcdist.partition import slices
from tcdist.partition.part import Part

pytestmark = pytest.mark.gpu


def test_shares_of_a_graph_in_host_memory_keep_its_pages_registered_while_any_is_copied(monkeypatch):
    """A rank stages its next share while the last one's copy runs; the graph's pages must stay
    registered until the stager closes. When each share unregistered them at the end of its own
    copy, the next one's copy (started while they were registered) read unregistered pages: 4 GPU
    ranks counting RMAT-26's slices failed with 'unspecified launch failure'."""
    import cupy

    graph = tcdist.load_graph("rmat:20")  # its col is registered (59 MiB), its rowptr not: its pages may hold others
    whole = Part(0, graph.rowptr, graph.col, None, graph.n, {})
    bounds = np.linspace(0, graph.n, 4).astype(int)
    shares = [slices.share(whole, i, a, b, (a, graph.n)) for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:]))]
    with staging.Stager(0) as stager:
        staged = [stager.start(shares[0]), stager.start(shares[1])]
        for k, share in enumerate(shares):
            moved, _, _ = staged[k].finish()
            assert [pages is not None for _, pages in stager.pinned.values()] == [True]  # the graph's, once
            expected = share.made()
            assert moved.index == k and np.array_equal(cupy.asnumpy(moved.rowptr), expected.rowptr)
            assert np.array_equal(cupy.asnumpy(moved.col), expected.col)
            if k + 2 < len(shares):
                staged.append(stager.start(shares[k + 2]))
    assert stager.pinned == {}


def test_arrays_beside_registered_ones_are_copied_both_ways():
    """CUDA rejects a copy that starts in a registered span and runs past it (invalid argument).
    When small arrays were registered too, their pages rounded out to whole pages, a neighbour on
    the same heap could no longer be copied (the test above failed so on nvidia-h200)."""
    import cupy

    from tcdist.xp import register_pages, unregister_pages

    arrays = [np.arange(k, k + 3000, dtype=np.int64) for k in range(64)]  # 24 KB each, side by side on one heap
    pages = register_pages(arrays[::2])
    try:
        for a in arrays[1::2]:
            assert np.array_equal(cupy.asarray(a).get(), a)
    finally:
        unregister_pages(pages)
