"""The build (its host passes and parallel sort) against an independent NumPy reference."""

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcdist.graph import build_graph, sort
from tcdist.graph.edges import EdgeList


def reference(src, dst):
    """(rowptr, col, original_id, self loops, duplicates, reciprocal) by unique, lexsort and bincount."""
    loops = src == dst
    s, d = src[~loops], dst[~loops]
    ids = np.unique(np.concatenate([s, d]))
    u, v = np.searchsorted(ids, s), np.searchsorted(ids, d)
    n = ids.size
    directed = np.unique(np.stack([u, v], 1), axis=0).reshape(-1, 2)
    pairs = np.unique(np.sort(directed, axis=1), axis=0).reshape(-1, 2)
    order = np.lexsort((np.arange(n), np.bincount(pairs.ravel(), minlength=n)))
    rank = np.empty(n, np.int64)
    rank[order] = np.arange(n)
    a, b = rank[pairs[:, 0]], rank[pairs[:, 1]]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    rowptr = np.concatenate([[0], np.cumsum(np.bincount(lo, minlength=n))])
    return (rowptr, hi[np.lexsort((hi, lo))], ids[order], int(loops.sum()), int(s.size - len(directed)),
            len(directed) - len(pairs))


small_ids = st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)), max_size=400)
huge_ids = st.lists(st.tuples(st.integers(0, 2**63 - 1), st.integers(0, 2**63 - 1)), max_size=100)


@settings(max_examples=150, deadline=None)
@given(st.one_of(small_ids, huge_ids), st.sampled_from([0, 2**62]))
def test_build_is_the_reference(edges, compiled_from):
    """Both ways of the host: the compiled passes (from 0 edges) and whole-array NumPy."""
    src = np.array([p[0] for p in edges], np.int64)
    dst = np.array([p[1] for p in edges], np.int64)
    with mock.patch.object(sort, "SMALL", 0), mock.patch("tcdist.graph.build.COMPILED_FROM", compiled_from):
        g = build_graph(EdgeList(src, dst, "random"))
    rowptr, col, original_id, loops, duplicates, reciprocal = reference(src, dst)
    assert np.array_equal(g.rowptr, rowptr) and g.rowptr.dtype == np.int64
    assert np.array_equal(g.col, col) and g.col.dtype == np.int32
    assert np.array_equal(g.original_id, original_id)
    assert (g.self_loops, g.duplicates, g.reciprocal) == (loops, duplicates, reciprocal)


def test_a_generated_graph_is_the_reference():
    from tcdist.io import generate

    e = generate("rmat:13", seed=4)
    with mock.patch("tcdist.graph.build.COMPILED_FROM", 0):
        g = build_graph(e)
    rowptr, col, original_id, *counts = reference(e.src, e.dst)
    assert np.array_equal(g.rowptr, rowptr) and np.array_equal(g.col, col)
    assert np.array_equal(g.original_id, original_id)
    assert [g.self_loops, g.duplicates, g.reciprocal] == counts


@pytest.mark.gpu
@settings(max_examples=150, deadline=None)
@given(st.one_of(small_ids, huge_ids, st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), max_size=8)))
def test_the_gpu_build_is_the_reference(edges):
    """The GPU's passes (dense and searched ids, self loops kept as keys that sort last), and
    graphs of no edge or of self loops only."""
    import cupy

    src = np.array([p[0] for p in edges], np.int64)
    dst = np.array([p[1] for p in edges], np.int64)
    g = build_graph(EdgeList(cupy.asarray(src), cupy.asarray(dst), "random"))
    rowptr, col, original_id, loops, duplicates, reciprocal = reference(src, dst)
    assert np.array_equal(g.rowptr.get(), rowptr) and g.rowptr.dtype == np.int64
    assert np.array_equal(g.col.get(), col) and g.col.dtype == np.int32
    assert np.array_equal(g.original_id.get(), original_id)
    assert (g.self_loops, g.duplicates, g.reciprocal) == (loops, duplicates, reciprocal)


@pytest.mark.gpu
@pytest.mark.parametrize("spec", ["rmat:18", "er:300000:2000000"])
def test_a_large_graph_built_on_the_gpu_is_the_hosts(spec):
    """Many tiles of every compaction; ids in int64 columns too."""
    import cupy

    from tcdist.io import generate

    e = generate(spec, seed=11)
    e.src[::97] = e.dst[::97]  # self loops among the rest
    host = build_graph(e)
    for shift in (0, 2**40):  # dense ids, then ids searched
        g = build_graph(EdgeList(cupy.asarray(e.src + shift), cupy.asarray(e.dst + shift), spec))
        assert np.array_equal(g.rowptr.get(), host.rowptr) and np.array_equal(g.col.get(), host.col)
        assert np.array_equal(g.original_id.get(), host.original_id + shift)
        assert (g.self_loops, g.duplicates, g.reciprocal) == (host.self_loops, host.duplicates, host.reciprocal)
