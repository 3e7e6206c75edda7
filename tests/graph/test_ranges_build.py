"""A graph built in ranges (a device that sorts a range of keys at a time, the host holding the
rest) is the graph build_graph makes of all its raw edges at once: every array and count, with
ranges cut anywhere, even where they cut through a vertex's edges or an edge's two directions."""

import numpy as np
import pytest
from conftest import same_graph
from hypothesis import given, settings
from hypothesis import strategies as st

from tcdist import io
from tcdist.graph import build_graph, ranges_build
from tcdist.io import generators
from tcdist.io.objects import edges_of


@pytest.mark.parametrize("spec", ["rmat:12", "rmat:10:40", "er:3000:50000", "er:50:4000", "er:7:5"])
@pytest.mark.parametrize("piece, keys, ranked", [(1 << 26, 1 << 26, True), (4096, 1000, False), (1024, 37, True)])
def test_ranges_build_the_graph_build_graph_builds(monkeypatch, spec, piece, keys, ranked):
    """Ranked on the device's way or the host's, the same graph."""
    monkeypatch.setattr(generators, "_DRAW_BLOCK", 1 << 14)
    reference = build_graph(io.generate(spec, seed=5))
    span, m, pieces = generators.pieces(spec, seed=5, size=min(piece, 1 << 14))
    same_graph(ranges_build.build_in_ranges(span, m, pieces, spec, np, keys, ranked), reference)


def test_many_repeats_of_one_edge_stay_in_one_range_and_are_counted_once():
    """Repeats of an edge (both ways) beyond a range's keys: the range grows to hold them."""
    src = np.array([3, 5] * 500 + [1, 2, 2, 4], np.int64)
    dst = np.array([5, 3] * 500 + [2, 4, 3, 3], np.int64)
    reference = build_graph(edges_of((src, dst)))
    pieces = [(src[i : i + 64], dst[i : i + 64]) for i in range(0, src.size, 64)]
    same_graph(ranges_build.build_in_ranges(6, src.size, iter(pieces), "repeats", np, 10), reference)


def test_range_keys_leave_room_for_the_ids():
    from tcdist.budget import model

    assert ranges_build.range_keys(model.RANGES_BYTES_PER_ID * 100, 100) == 0
    assert ranges_build.range_keys(model.RANGES_BYTES_PER_ID * 100 + 10 * model.RANGES_BYTES_PER_KEY, 100) == 10


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_random_edges_in_any_pieces_and_ranges_build_the_graph_build_graph_builds(data):
    """Edges of few ids (repeats both ways, self loops, isolated ids below the bound), cut into
    pieces anywhere and sorted in ranges of any size, ranked either way."""
    ids = data.draw(st.integers(1, 40))
    edges = data.draw(st.lists(st.tuples(st.integers(0, ids - 1), st.integers(0, ids - 1)), max_size=300))
    src, dst = (np.array([e[k] for e in edges], np.int64) for k in (0, 1))
    cuts = sorted(data.draw(st.lists(st.integers(0, src.size), max_size=5)))
    bounds = [0, *cuts, src.size]
    pieces = [(src[a:b], dst[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
    span = ids + data.draw(st.integers(0, 3))
    keys, ranked = data.draw(st.integers(1, 400)), data.draw(st.booleans())
    same_graph(ranges_build.build_in_ranges(span, src.size, iter(pieces), "random", np, keys, ranked),
               build_graph(edges_of((src, dst))))
