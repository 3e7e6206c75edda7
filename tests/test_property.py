"""Random small graphs, self loops and duplicates included, against an independent counter."""

import networkx as nx
import numpy as np
from conftest import brute_force_triangles
from hypothesis import given, settings
from hypothesis import strategies as st

import tcdist

pairs = st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), max_size=250)
huge_ids = st.lists(st.tuples(st.integers(0, 2**63 - 1), st.integers(0, 2**63 - 1)), max_size=60)


@settings(max_examples=200, deadline=None)
@given(pairs, st.sampled_from(["marker", "merge", "middle", "lookup"]))
def test_matches_brute_force(edges, kernel):
    src = np.array([u for u, _ in edges], np.int64)
    dst = np.array([v for _, v in edges], np.int64)
    result = tcdist.count_triangles((src, dst), backend="cpu", kernel=kernel)
    assert result.triangles == brute_force_triangles(edges)
    simple = {frozenset(p) for p in edges if p[0] != p[1]}
    assert result.m == len(simple)
    assert result.self_loops == sum(u == v for u, v in edges)
    directed = {p for p in edges if p[0] != p[1]}
    assert result.duplicates == len(edges) - result.self_loops - len(directed)  # the same pair again
    assert result.reciprocal == len(directed) - len(simple)  # the other direction of a pair


@settings(max_examples=50, deadline=None)
@given(huge_ids)
def test_ids_up_to_2_63_are_compacted(edges):
    src = np.array([u for u, _ in edges], np.int64)
    dst = np.array([v for _, v in edges], np.int64)
    assert tcdist.count_triangles((src, dst), backend="cpu").triangles == brute_force_triangles(edges)


@settings(max_examples=25, deadline=None)
@given(st.integers(20, 400), st.floats(0.01, 0.3), st.integers(0, 2**32 - 1))
def test_matches_networkx_on_random_graphs(n, p, seed):
    g = nx.gnp_random_graph(n, p, seed=seed)
    expected = sum(nx.triangles(g).values()) // 3
    assert tcdist.count_triangles(g, backend="cpu").triangles == expected


@settings(max_examples=50, deadline=None)
@given(pairs)
def test_orientation_invariants(edges):
    src = np.array([u for u, _ in edges], np.int64)
    dst = np.array([v for _, v in edges], np.int64)
    g = tcdist.load_graph((src, dst))
    row = np.repeat(np.arange(g.n), np.diff(g.rowptr))
    assert g.rowptr.dtype == np.int64
    assert np.all(g.col > row), "every edge goes from lower to higher rank"
    same_row = row[1:] == row[:-1]
    assert np.all(g.col[1:][same_row] > g.col[:-1][same_row]), "rows are sorted and duplicate-free"
    deg = g.degree()
    assert np.all(deg >= 1), "no isolated vertex"
    key = deg.astype(np.int64) * (2**40) + g.original_id
    assert np.all(np.diff(key) > 0), "vertices are numbered in (degree, original id) order"
    assert g.stats()["max_out_degree"] ** 2 <= 2 * g.m


@settings(max_examples=150, deadline=None)
@given(pairs, st.integers(1, 3), st.integers(0, 2**32 - 1), st.floats(0.0, 1.0))
def test_slices_add_up_to_the_brute_force_count(edges, parts, seed, squeeze):
    """Any graph, any parts, any room between a slice's least and the part's need: the slices'
    counts add up to the brute force's, and their per-vertex credits to the part's."""
    from tcdist.budget import slices as plans
    from tcdist.budget.model import need as part_need
    from tcdist.count.cpu import count_marker, per_vertex
    from tcdist.partition import Part, partition_graph, slices

    src = np.array([u for u, _ in edges], np.int64)
    dst = np.array([v for _, v in edges], np.int64)
    graph = tcdist.load_graph((src, dst))
    pieces = [Part(0, graph.rowptr, graph.col, None, graph.n, {})] if parts == 1 or graph.n < parts else \
        partition_graph(graph, parts, seed=seed).parts
    total = 0
    for part in pieces:
        rows, columns, local, col_bytes = part.sizes()
        longest = int(np.diff(part.rowptr).max(initial=0))
        least = part_need(rows + 1, 2 * longest, 1, col_bytes)
        whole = part_need(rows, columns, local, col_bytes)
        bounds = plans.plan(part, int(least + squeeze * max(whole - 1 - least, 0)), part_need)
        if bounds is None:
            total += count_marker(part.rowptr, part.col, part.n_local)
            continue
        made = [piece.made() for piece in slices.cut(part, bounds)]
        total += sum(count_marker(p.rowptr, p.col, p.n_local) for p in made)
        credits = sum(slices.fold(per_vertex(p.rowptr, p.col, p.n_local), p) for p in made)
        assert np.array_equal(credits, per_vertex(part.rowptr, part.col, part.n_local))
    assert total == brute_force_triangles(edges)


def _per_vertex(result) -> dict:
    return dict(zip(result.per_vertex.vertex.tolist(), result.per_vertex.triangles.tolist()))


def _per_edge(result) -> dict:
    return dict(zip(zip(result.per_edge.u.tolist(), result.per_edge.v.tolist()), result.per_edge.triangles.tolist()))


@settings(max_examples=60, deadline=None)
@given(pairs.filter(lambda e: len(e) > 0), st.integers(0, 2**32 - 1), st.sampled_from([None, 3]))
def test_relabelling_reversing_repeating_and_loops_change_no_count(edges, seed, parts):
    """Permuted ids, reversed edges, repeated edges and self loops: the same total and the same
    triangles at every vertex and edge (mapped through the permutation), whole and in parts."""
    rng = np.random.default_rng(seed)
    if parts and len({x for p in edges if p[0] != p[1] for x in p}) < parts:
        parts = None  # every part needs a vertex
    src = np.array([u for u, _ in edges], np.int64)
    dst = np.array([v for _, v in edges], np.int64)
    before = tcdist.count_triangles((src, dst), backend="cpu", parts=parts, per_vertex=True, per_edge=True)
    relabel = rng.permutation(10**6)[: 31] * 1000 + 7  # ids far apart, in another order
    flip = rng.random(src.size) < 0.5
    a, b = np.where(flip, dst, src), np.where(flip, src, dst)
    repeat = rng.integers(0, src.size, src.size // 2 + 1)
    loops = rng.integers(0, 31, 5)
    a = np.concatenate([a, b[repeat], loops])
    b = np.concatenate([b, a[repeat], loops])
    order = rng.permutation(a.size)
    after = tcdist.count_triangles((relabel[a[order]], relabel[b[order]]), backend="cpu", parts=parts,
                                   per_vertex=True, per_edge=True)
    assert after.triangles == before.triangles == brute_force_triangles(edges)
    assert _per_vertex(after) == {int(relabel[v]): t for v, t in _per_vertex(before).items()}
    assert _per_edge(after) == {tuple(sorted(map(int, relabel[[u, v]]))): t for (u, v), t in _per_edge(before).items()}
