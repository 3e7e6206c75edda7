"""The work estimate of rows: the probes before every row, compiled on the host and summed a step
of edges at a time (the GPU's way), against a row-by-row reference."""

import numpy as np
import pytest
from conftest import probes_row_by_row

import tcdist
from tcdist.budget.slices import plan
from tcdist.graph import work
from tcdist.partition.part import Part


@pytest.mark.parametrize("spec", ["rmat:12", "er:3000:20000", "grid:40:40", "er:5:0"])
def test_the_compiled_probes_before_each_row_are_the_row_by_row_sums(spec):
    graph = tcdist.load_graph(spec)
    assert np.array_equal(work.probes_before(graph), probes_row_by_row(graph))


@pytest.mark.parametrize("spec", ["rmat:12", "er:3000:20000", "grid:40:40"])
@pytest.mark.parametrize("step", [1, 7, 1000, 1 << 26])
def test_the_stepwise_probes_before_each_row_are_the_row_by_row_sums_for_any_step(monkeypatch, spec, step):
    graph = tcdist.load_graph(spec)
    monkeypatch.setattr(work, "PROBES_STEP", step)
    assert np.array_equal(work.stepwise_probes_before(graph), probes_row_by_row(graph))


@pytest.mark.parametrize("spec,room", [("rmat:12", 64 << 10), ("grid:40:40", 24 << 10)])
def test_the_work_of_a_plan_s_slices_is_each_slice_s_edges_and_probes_and_adds_up_to_the_graph_s(spec, room):
    graph = tcdist.load_graph(spec)
    out = np.diff(graph.rowptr)
    whole = Part(0, graph.rowptr, graph.col, None, graph.n, {})
    bounds = plan(whole, room, lambda v, e, n_local, col_bytes: 8 * (v + n_local) + 4 * e)
    assert len(bounds) > 4
    expected = []
    for a, b, c, d in bounds:
        targets = graph.col[graph.rowptr[a]:graph.rowptr[b]]
        targets = targets[(targets >= c) & (targets < d)]
        expected.append(int((1 + out[targets]).sum()))
    got = work.slice_work(graph.rowptr, graph.col, bounds)
    assert got.tolist() == expected
    assert int(got.sum()) == graph.m + int(work.probes_before(graph)[-1])  # every edge in one slice


def test_the_work_of_any_rectangles_of_rows_and_targets_is_their_edges_and_probes():
    """Slices that overlap, leave rows out or end at the last row: each its own edges and probes."""
    graph = tcdist.load_graph("rmat:12")
    n, out = graph.n, np.diff(graph.rowptr)
    bounds = [(0, n, 0, n), (n // 3, n // 2, n // 2, n - n // 5), (n // 4, n - 1, n // 5, n), (n - 1, n, 0, n), (5, 6, 7, 7)]
    expected = []
    for a, b, c, d in bounds:
        targets = graph.col[graph.rowptr[a]:graph.rowptr[b]]
        targets = targets[(targets >= c) & (targets < d)]
        expected.append(int((1 + out[targets]).sum()))
    assert expected[1] and expected[2]
    assert work.slice_work(graph.rowptr, graph.col, bounds).tolist() == expected
