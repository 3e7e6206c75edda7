"""Listing triangles (networkx's all_triangles): every triangle once, in blocks of whole rows."""

import numpy as np
import pytest
from conftest import brute_force_triangles

import tcdist
from tcdist.count.listing import triangle_blocks


@pytest.mark.parametrize("block", [1, 7, 1 << 20])
def test_every_triangle_once_whatever_the_block(block):
    rng = np.random.default_rng(3)
    src, dst = rng.integers(0, 60, 900), rng.integers(0, 60, 900)
    graph = tcdist.load_graph((src, dst))
    blocks = list(triangle_blocks(graph.rowptr, graph.col, block))
    found = np.concatenate(blocks)
    assert len(found) == brute_force_triangles(zip(src.tolist(), dst.tolist())) > 0
    assert (found[:, 0] < found[:, 1]).all() and (found[:, 1] < found[:, 2]).all()
    assert len({tuple(t) for t in found.tolist()}) == len(found)
    edges = {(u, v) for u in range(graph.n) for v in graph.col[graph.rowptr[u]:graph.rowptr[u + 1]].tolist()}
    assert all({(u, v), (v, w), (u, w)} <= edges for u, v, w in found.tolist())
    assert block > 1 << 10 or len(blocks) > 1


def test_a_graph_without_vertices_lists_nothing():
    assert list(triangle_blocks(np.zeros(1, np.int64), np.zeros(0, np.int32))) == []
