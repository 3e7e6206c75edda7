"""middle's listing of the in-edges (count/cpu.py in_edges), built on every thread, against
NumPy's stable sort of the same edges by head: whole graphs, shares from a row on, and parts
whose proxies lead back to local vertices."""

import numpy as np
import pytest

import tcdist
from tcdist import compiled
from tcdist.count import cpu
from tcdist.partition import partition_graph


def _listed(rowptr, col, n_local, start):
    """The reference: each local edge u -> v from row start on, by v then u, as the span of u's row
    after v (v local) or all of it (v a proxy)."""
    rows = np.repeat(np.arange(rowptr.size - 1), np.diff(rowptr))
    edges = np.arange(rowptr[start], rowptr[n_local])
    tails, heads = rows[edges], col[edges]
    order = np.argsort(heads, kind="stable")  # edges are in row order: u ascends within each head
    in_ptr = np.concatenate([[0], np.cumsum(np.bincount(heads, minlength=rowptr.size - 1))])
    first = np.where(heads < n_local, edges + 1, rowptr[tails])
    return in_ptr, first[order], rowptr[tails + 1][order]


@pytest.mark.parametrize("threads", [1, 2])
def test_the_in_edges_are_listed_as_a_stable_sort_by_head_would_list_them(threads, monkeypatch):
    monkeypatch.setattr(cpu, "ONE_THREAD_BELOW", 1)  # threads even for these small graphs
    previous = compiled.get_threads()
    compiled.set_threads(threads)
    try:
        _check_every_case(tcdist.load_graph("rmat:12"))
    finally:
        compiled.set_threads(previous)


def _check_every_case(graph):
    cases = [(graph.rowptr, graph.col, graph.n, start) for start in (0, 1, 700, graph.n)]
    cases += [(p.rowptr, p.col, p.n_local, 0) for p in partition_graph(graph, 3, seed=2).parts]
    for rowptr, col, n_local, start in cases:
        got = cpu.in_edges(rowptr, col, n_local, start)
        for made, expected in zip(got, _listed(rowptr, col, n_local, start), strict=True):
            assert np.array_equal(made, expected), (n_local, start)
