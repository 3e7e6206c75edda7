"""Shares of a whole graph counted in place on the CPU (from a row on, the graph's own arrays)
give what the same shares laid out as slices give, count and per-vertex credits alike, and add up
to the whole graph's."""

import numpy as np
import pytest

import tcdist
from tcdist.device import resolve
from tcdist.partition import slices
from tcdist.partition.part import Part


def _shares(graph, k):
    bounds = np.linspace(0, graph.n, k + 1).astype(int)
    whole = Part(0, graph.rowptr, graph.col, None, graph.n, {})
    return [slices.share(whole, i, a, b) for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:]))]


@pytest.mark.parametrize("spec", ["rmat:12", "er:2000:30000", "complete:30"])
@pytest.mark.parametrize("kernel", ["marker", "merge", "middle", "lookup"])
def test_shares_in_place_count_as_their_slices_and_add_up(spec, kernel):
    graph = tcdist.load_graph(spec)
    whole = tcdist.count_triangles(graph, backend="cpu").triangles
    device = resolve("cpu", kernel=kernel, threads=2)
    try:
        counts = []
        for share in _shares(graph, 5):
            in_place, made = share.in_place(), share.made()
            assert in_place is not None and in_place.start == share.bounds[0] and in_place.col is graph.col
            counts.append(device.count(in_place))
            assert counts[-1] == device.count(made)
        assert sum(counts) == whole
    finally:
        device.close()


def test_per_vertex_credits_of_shares_in_place_add_up_to_the_whole_graphs():
    graph = tcdist.load_graph("rmat:12")
    device = resolve("cpu", threads=2)
    try:
        whole = device.count_per_vertex(Part(0, graph.rowptr, graph.col, None, graph.n, {}))
        summed = sum(device.count_per_vertex(share.in_place()) for share in _shares(graph, 4))
        assert np.array_equal(summed, whole)
        for share in _shares(graph, 3):
            folded = slices.fold(device.count_per_vertex(share.made()), share.made())
            assert np.array_equal(device.count_per_vertex(share.in_place()), folded)
    finally:
        device.close()


def test_only_a_share_is_counted_in_place():
    """A part's slices (a budget's) are pieces of one part, laid out and counted as such, even one
    whose rows a share could hold."""
    graph = tcdist.load_graph("rmat:10")
    whole = Part(0, graph.rowptr, graph.col, None, graph.n, {})
    for bounds in [(0, 10, 0, graph.n), (0, 10, 0, graph.n - 1), (10, 20, 0, graph.n)]:
        assert next(slices.cut(whole, [bounds])).in_place() is None
    assert slices.share(whole, 0, 10, 20).in_place().start == 10
