"""middle's listing of the in-edges (count/cpu.py in_edges), built on every thread, against
NumPy's stable sort of the same edges by head: whole graphs, shares from a row on (whose later
rows lead up only: looked up after v), and parts whose proxies lead back to local vertices."""

import numpy as np
import pytest

import tcdist
from tcdist import compiled
from tcdist.count import cpu
from tcdist.partition import partition_graph


def _listed(rowptr, col, n_local, start):
    """The reference: each local edge u -> v from row start on, by v then u, as the span of u's row
    after v, or all of it where v has an edge back to a local row (a proxy's)."""
    n = rowptr.size - 1
    rows = np.repeat(np.arange(n), np.diff(rowptr))
    back = np.zeros(n, bool)
    back[rows[col < n_local]] = True  # rows with an edge into 0..n_local-1
    back[:n_local] = False
    edges = np.arange(rowptr[start], rowptr[n_local])
    tails, heads = rows[edges], col[edges]
    order = np.argsort(heads, kind="stable")  # edges are in row order: u ascends within each head
    in_ptr = np.concatenate([[0], np.cumsum(np.bincount(heads, minlength=n))])
    first = np.where(back[heads], rowptr[tails], edges + 1)
    return (in_ptr, first[order], rowptr[tails + 1][order]), int(np.count_nonzero(back[heads]))


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
    whole = [(graph.rowptr, graph.col, n_local, start) for start, n_local in
             ((0, graph.n), (1, graph.n), (700, graph.n), (graph.n, graph.n), (0, 500), (700, 2000))]
    parts = [(p.rowptr, p.col, p.n_local, 0) for p in partition_graph(graph, 3, seed=2).parts]
    for cases, whole_rows_found in ((whole, lambda k: k == 0), (parts, lambda k: k > 0)):
        whole_rows = 0
        for rowptr, col, n_local, start in cases:
            got = cpu.in_edges(rowptr, col, n_local, start)
            expected, k = _listed(rowptr, col, n_local, start)
            whole_rows += k
            for made, wanted in zip(got, expected, strict=True):
                assert np.array_equal(made, wanted), (n_local, start)
        assert whole_rows_found(whole_rows)  # a whole graph's rows lead up; some proxies lead back
