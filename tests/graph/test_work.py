"""The work estimate of rows: the probes before every row, compiled on the host and in passes on
the GPU, and the rows that split it evenly, against a row-by-row reference."""

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


def _wedges_before(graph):
    """d(d-1)/2 of every row of out-degree d, summed before every row."""
    out = np.diff(graph.rowptr).astype(np.int64)
    return np.concatenate([[0], np.cumsum(out * (out - 1) // 2)])


def _even_work_of_the_reference(graph, pieces, wedge_weight=0):
    """even_work's answer from the row-by-row probes (and weighed wedges): the rows where the work
    before them first reaches k / pieces of the whole, the first 0 and the last n."""
    before = probes_row_by_row(graph) + graph.rowptr + wedge_weight * _wedges_before(graph)
    total = int(before[-1])
    bounds = [next(x for x in range(graph.n + 1) if before[x] >= total * k // pieces) for k in range(pieces + 1)]
    bounds = sorted(set([0, *bounds[1:-1], graph.n]))
    return bounds, [int(before[b] - before[a]) for a, b in zip(bounds, bounds[1:])]


@pytest.mark.parametrize("spec", ["rmat:12", "er:3000:20000", "grid:40:40", "er:5:0"])
@pytest.mark.parametrize("pieces", [1, 3, 16])
@pytest.mark.parametrize("wedge_weight", [0, 4])
def test_rows_of_even_work_are_where_the_work_before_them_reaches_each_share(spec, pieces, wedge_weight):
    graph = tcdist.load_graph(spec)
    bounds, each = work.even_work(graph, pieces, wedge_weight)
    assert (bounds.tolist(), each.tolist()) == _even_work_of_the_reference(graph, pieces, wedge_weight)
    wedges = int(_wedges_before(graph)[-1])
    assert int(each.sum()) == graph.m + int(probes_row_by_row(graph)[-1]) + wedge_weight * wedges


def test_weighed_wedges_move_the_shares_of_a_skewed_graph_toward_its_dense_rows():
    """RMAT's last rows (highest degree rank) hold most wedges: weighed, the last share has fewer rows."""
    graph = tcdist.load_graph("rmat:12")
    plain, _ = work.even_work(graph, 8)
    weighed, _ = work.even_work(graph, 8, 4)
    assert weighed[-2] > plain[-2]


@pytest.mark.gpu
@pytest.mark.parametrize("spec", ["rmat:14", "er:3000:20000", "grid:40:40", "er:5:0"])
@pytest.mark.parametrize("columns", ["int32", "int64"])
def test_the_gpu_s_work_before_each_row_and_rows_of_even_work_are_the_host_s(spec, columns):
    import cupy

    from tcdist.graph import gpu_build

    host = tcdist.load_graph(spec)
    on_gpu = tcdist.load_graph(spec, device="gpu")
    assert isinstance(on_gpu.col, cupy.ndarray)
    before = gpu_build.work_before(on_gpu.rowptr, on_gpu.col.astype(columns))
    assert np.array_equal(before.get(), probes_row_by_row(host) + host.rowptr)
    for pieces in (1, 3, 16):
        bounds, each = work.even_work(on_gpu, pieces)
        assert (bounds.tolist(), each.tolist()) == _even_work_of_the_reference(host, pieces)


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
