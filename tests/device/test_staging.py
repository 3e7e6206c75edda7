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


def test_a_registered_array_and_its_neighbours_on_its_end_pages_are_copied_both_ways():
    """glibc carves even an array of hundreds of MiB from its heap where the heap has room (freed
    arrays, its thresholds raised by a freed mapping): its first and last pages hold its
    neighbours. With those pages registered too, a neighbour's copy ran across the span's edge and
    CUDA refused it (the share test above failed so on nvidia-h100-x1, with 'invalid argument').
    Here the neighbours are views of one block beside a 40 MiB view registered: they, it and slices
    of it that begin and end on its end pages are copied both ways."""
    import cupy

    from tcdist.xp import copy_to_device, copy_to_host, register_pages, unregister_pages

    block = np.arange((5 << 20) + 1000, dtype=np.int64) * 3
    before, large, after = block[:300], block[300 : 300 + (5 << 20)], block[300 + (5 << 20) :]
    assert large.ctypes.data % 4096 and after.ctypes.data % 4096  # large's ends mid-page: its neighbours' pages
    pages = register_pages([large])
    assert pages
    try:
        for a in (before, after):
            assert np.array_equal(cupy.asarray(a).get(), a)
            back = np.empty_like(a)
            cupy.asarray(a * 2).get(out=back)
            assert np.array_equal(back, a * 2)
        for piece in (slice(None), slice(1, -1), slice(3, 600), slice(large.size - 700, large.size - 5)):
            host = large[piece]
            on_gpu = cupy.empty(host.shape, host.dtype)
            copy_to_device(on_gpu, host)
            assert np.array_equal(on_gpu.get(), host)
            back = np.zeros_like(large)
            copy_to_host(back[piece], on_gpu * 2)
            assert np.array_equal(back[piece], host * 2)
    finally:
        unregister_pages(pages)


def test_arrays_beside_registered_ones_are_copied_both_ways(monkeypatch):
    """CUDA rejects a copy that starts in a registered span and runs past it (invalid argument).
    When small arrays were registered too, their pages rounded out to whole pages, a neighbour on
    the same heap could no longer be copied (the share test above failed so on nvidia-h200). Now
    only the pages each holds whole are registered: its neighbours copy as they are, and it in
    pieces cut at its span's edges."""
    import cupy

    from tcdist import xp

    arrays = [np.arange(k, k + 3000, dtype=np.int64) for k in range(64)]  # 24 KB each, side by side on one heap
    monkeypatch.setattr(xp, "REGISTER_FROM", 0)
    pages = xp.register_pages(arrays[::2])
    assert pages
    try:
        for a in arrays[1::2]:
            assert np.array_equal(cupy.asarray(a).get(), a)
        for a in arrays[::2]:
            on_gpu = cupy.empty(a.shape, a.dtype)
            xp.copy_to_device(on_gpu, a)
            back = np.empty_like(a)
            xp.copy_to_host(back, on_gpu)
            assert np.array_equal(back, a)
    finally:
        xp.unregister_pages(pages)
