"""Per-edge triangles (edge support) against the adjacency matrix, edge by edge: whole, in parts
of every scheme, beside per-vertex counts, through the CLI's files and with labels."""

import json

import networkx as nx
import numpy as np
import pytest
import scipy.sparse
from conftest import DATASETS, brute_force_triangles, read_table
from hypothesis import given, settings
from hypothesis import strategies as st

import tcdist
from tcdist.errors import TcdistError
from tcdist.io import generate, read

GRAPHS = ["email-Eu-core.txt.gz", "p2p-Gnutella08.txt.gz", "ca-GrQc.mtx.gz", "rmat:10", "er:500:4000"]
SCHEMES = ["random", "contiguous", "metis"]


def raw_edges(graph):
    edges = generate(graph) if ":" in graph else read(DATASETS / graph)
    return np.asarray(edges.src, np.int64), np.asarray(edges.dst, np.int64)


def reference(src, dst):
    """(u, v, triangles): every edge u < v of the simple undirected graph of the pairs, sorted, and
    (A @ A)[u, v] of its adjacency matrix A (int64, sparse: the datasets have thousands of vertices)."""
    ids, index = np.unique(np.concatenate([src, dst]), return_inverse=True)
    a, b = index[:src.size], index[src.size:]
    a, b = a[a != b], b[a != b]
    adjacency = scipy.sparse.coo_matrix((np.ones(2 * a.size, np.int64), (np.r_[a, b], np.r_[b, a])),
                                        shape=(ids.size, ids.size)).tocsr()
    adjacency.data[:] = 1  # repeated pairs were summed
    u, v = np.unique(np.stack([np.minimum(a, b), np.maximum(a, b)]), axis=1)
    support = np.asarray((adjacency @ adjacency)[u, v]).ravel() if u.size else np.zeros(0, np.int64)
    return ids[u], ids[v], support


def assert_matches(result, expected):
    u, v, support = expected
    edges = result.per_edge
    assert edges.triangles.dtype == np.uint64
    assert np.array_equal(edges.u, u) and np.array_equal(edges.v, v)
    assert np.array_equal(edges.triangles, support)
    assert result.m == u.size and 3 * result.triangles == support.sum()


@pytest.fixture(scope="module", params=GRAPHS)
def graph(request):
    return request.param, reference(*raw_edges(request.param))


def test_every_edge_matches_the_adjacency_matrix_whole(graph):
    source, expected = graph
    path = source if ":" in source else DATASETS / source
    result = tcdist.count_triangles(path, backend="cpu", per_edge=True)
    assert_matches(result, expected)
    assert result.kernel == "per-edge (marker)" and result.per_vertex is None
    assert "per_edge" not in result.to_dict()


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("parts", [1, 2, 5])
def test_every_edge_matches_in_parts_beside_per_vertex(graph, parts, scheme):
    """Each part credits the edges of its triangles, proxies' rows too; the per-vertex pass beside
    it gives what it gives alone."""
    if scheme == "metis":
        pytest.importorskip("pymetis")
    source, expected = graph
    path = source if ":" in source else DATASETS / source
    result = tcdist.count_triangles(path, backend="cpu", parts=parts, scheme=scheme, per_edge=True,
                                    per_vertex=parts == 2)
    assert_matches(result, expected)
    if parts == 2:
        alone = tcdist.count_triangles(path, backend="cpu", per_vertex=True)
        assert np.array_equal(result.per_vertex.triangles, alone.per_vertex.triangles)
        assert result.kernel == "per-vertex (marker), per-edge (marker)"


@pytest.mark.parametrize("prune", ["none", "minimal"])
def test_every_prune_mode_credits_the_same_edges(prune):
    """Parts that keep more proxies' rows ('none': induced subgraphs) or fewer ('minimal')."""
    expected = reference(*raw_edges("rmat:10"))
    assert_matches(tcdist.count_triangles("rmat:10", backend="cpu", parts=4, prune=prune, per_edge=True), expected)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 25), st.integers(0, 25)), max_size=200), st.integers(1, 4),
       st.sampled_from(["random", "contiguous"]), st.integers(0, 2**32 - 1))
def test_any_small_graph_in_any_parts(edges, parts, scheme, seed):
    src = np.array([u for u, _ in edges], np.int64)
    dst = np.array([v for _, v in edges], np.int64)
    if len({x for u, v in edges if u != v for x in (u, v)}) < parts:
        parts = 1  # every part needs a vertex
    result = tcdist.count_triangles((src, dst), backend="cpu", parts=parts, scheme=scheme, seed=seed, per_edge=True)
    assert_matches(result, reference(src, dst))
    assert result.triangles == brute_force_triangles(edges)


def test_closed_forms():
    """Every edge of K_n is in n - 2 triangles; no edge of a cycle is in any, and each is listed."""
    complete = tcdist.count_triangles("complete:12", backend="cpu", parts=3, per_edge=True).per_edge
    assert complete.u.size == 66 and (complete.triangles == 10).all()
    assert np.array_equal(np.stack([complete.u, complete.v]), np.array(np.triu_indices(12, 1)))
    cycle = tcdist.count_triangles([(i, (i + 1) % 9) for i in range(9)], backend="cpu", per_edge=True).per_edge
    assert cycle.u.tolist() == [0, 0, 1, 2, 3, 4, 5, 6, 7] and cycle.v.tolist() == [1, 8, 2, 3, 4, 5, 6, 7, 8]
    assert cycle.triangles.tolist() == [0] * 9


def test_labels_come_back_ordered_as_the_vertices_are():
    """Labels sorted (pairs), or in a networkx graph's node order: u is the earlier of the two."""
    pairs = [("pear", "fig"), ("fig", "apple"), ("apple", "pear"), ("kiwi", "pear")]
    edges = tcdist.count_triangles(pairs, backend="cpu", per_edge=True).per_edge
    assert list(zip(edges.u, edges.v, edges.triangles.tolist())) == [
        ("apple", "fig", 1), ("apple", "pear", 1), ("fig", "pear", 1), ("kiwi", "pear", 0)]
    edges = tcdist.count_triangles(nx.Graph(pairs), backend="cpu", per_edge=True, parts=2).per_edge
    assert list(zip(edges.u, edges.v, edges.triangles.tolist())) == [
        ("pear", "fig", 1), ("pear", "apple", 1), ("pear", "kiwi", 0), ("fig", "apple", 1)]


def test_a_networkx_graph_with_labels_in_parts():
    g = nx.relabel_nodes(nx.les_miserables_graph(), lambda v: f"<{v}>")
    result = tcdist.count_triangles(g, backend="cpu", per_edge=True, parts=3)
    position = {v: i for i, v in enumerate(g)}
    expected = sorted((position[a], position[b]) if position[a] < position[b] else (position[b], position[a])
                      for a, b in g.edges)
    nodes = list(g)
    assert list(zip(result.per_edge.u, result.per_edge.v)) == [(nodes[a], nodes[b]) for a, b in expected]
    common = {(u, v): len(set(g[u]) & set(g[v])) for u, v in zip(result.per_edge.u, result.per_edge.v)}
    assert result.per_edge.triangles.tolist() == list(common.values())


@pytest.mark.parametrize("name", ["pe.csv", "pe.parquet", "pe.h5"])
def test_the_per_edge_file(tmp_path, cli, name):
    """A row per edge, u < v, sorted; counting the store it wrote gives the same file."""
    path, out = DATASETS / "email-Eu-core.txt.gz", tmp_path / name
    result = cli("count", path, "--per-edge", out, "-P", "3", "--store", tmp_path / "s.h5", "--backend", "cpu",
                 "--json")
    assert result.code == 0, result.err
    assert "per_edge" not in result.json()
    table = read_table(out, ("u", "v", "triangles"))
    u, v, support = reference(*raw_edges("email-Eu-core.txt.gz"))
    assert (table["u"], table["v"], table["triangles"]) == (u.tolist(), v.tolist(), support.tolist())
    again = tmp_path / ("again" + out.suffix)
    assert cli("count", tmp_path / "s.h5", "--per-edge", again, "--backend", "cpu", "-q").code == 0
    assert again.read_bytes() == out.read_bytes()


def test_the_summary_names_the_file_and_dash_is_csv_on_stdout(tmp_path, cli, monkeypatch):
    out = tmp_path / "pe.csv"
    result = cli("count", "complete:5", "--backend", "cpu", "--per-edge", out, "--per-vertex", tmp_path / "pv.csv")
    assert result.code == 0 and f"  per edge   the triangles of each of the 10 edges in {out}\n" in result.out
    monkeypatch.chdir(tmp_path)
    result = cli("count", "complete:4", "--backend", "cpu", "--per-edge", "-", "--json")
    assert result.code == 0
    assert result.out == "u,v,triangles\n" + "".join(f"{u},{v},2\n" for u, v in zip(*np.triu_indices(4, 1)))
    assert json.loads(result.err)["triangles"] == 4  # the summary on standard error
    assert sorted(tmp_path.iterdir()) == [tmp_path / "pe.csv", tmp_path / "pv.csv"]  # nothing named '-'


@pytest.mark.parametrize("args,message", [
    (("--per-edge", "pe.txt"), "--per-edge writes .csv, .parquet or .h5 files; name it so"),
    (("--per-edge", "-", "--per-vertex", "-"), "--per-vertex and --per-edge both name -; give each output its own file"),
    (("--per-edge", "pe.csv", "--store", "s.h5", "-P", "2", "--resume"),
     "--per-edge cannot resume a count (the journal holds totals only); leave out --resume"),
    (("--per-edge", "pe.csv", "--backend", "cpu", "--gpu-memory-limit", "300KiB"),
     "--per-edge counts whole parts only; count in more parts (--parts auto picks them)"),
])
def test_per_edge_refusals(tmp_path, cli, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    result = cli("count", "rmat:12", *args)
    lines = result.err.strip().splitlines()
    assert result.code == 2 and len(lines) == 1 and message in lines[0], result.err
    assert not [p for p in tmp_path.iterdir() if p.name != "s.h5"]


def test_the_internal_checks():
    """Credits that miss an edge, or that do not add up to three per triangle, are refused."""
    from tcdist.edge_triangles import per_edge_result

    keys, credits, ids, order = np.array([1, 2, 5], np.uint64), np.array([1, 1, 1], np.uint64), np.arange(3), \
        np.arange(3)
    assert per_edge_result(keys, credits, 3, 3, 1, ids, order).triangles.tolist() == [1, 1, 1]
    with pytest.raises(TcdistError, match="internal error: per-edge triangles for 3 edges, not the graph's 4"):
        per_edge_result(keys, credits, 3, 4, 1, ids, order)
    with pytest.raises(TcdistError, match=r"internal error: per-edge triangles add up to 3, not 3 x 2"):
        per_edge_result(keys, credits, 3, 3, 2, ids, order)


@pytest.mark.gpu
@pytest.mark.parametrize("graph_name", GRAPHS)
def test_the_gpu_kernel_credits_every_edge_as_the_cpu_does(graph_name):
    """cuda/per_edge.cu on the whole graph and on parts with proxies, int32 and int64 ids, against
    the CPU's credits per CSR position; and a count on the GPU against the adjacency matrix."""
    import cupy

    from tcdist.count.cpu import per_edge
    from tcdist.count.per_edge import per_edge as gpu_per_edge
    from tcdist.partition import partition_graph
    from tcdist.partition.part import Part

    path = graph_name if ":" in graph_name else DATASETS / graph_name
    graph = tcdist.load_graph(path).on_host()
    for part in [Part(0, graph.rowptr, graph.col, None, graph.n, {}), *partition_graph(graph, 4, seed=5).parts]:
        expected = per_edge(part.rowptr, part.col, part.n_local)
        for col in (part.col, part.col.astype(np.int64)):
            credits = gpu_per_edge(cupy.asarray(part.rowptr), cupy.asarray(col), part.n_local)
            assert np.array_equal(credits.get(), expected), (part.index, col.dtype)
    expected = reference(*raw_edges(graph_name))
    whole = tcdist.count_triangles(path, backend="gpu", per_edge=True)
    assert whole.kernel == "per-edge (edge warps)"
    assert_matches(whole, expected)
    assert_matches(tcdist.count_triangles(path, backend="gpu", per_edge=True, per_vertex=True, parts=5), expected)


@pytest.mark.gpu
def test_a_sliced_part_on_the_gpu_is_refused(cli):
    result = cli("count", "rmat:14", "--backend", "gpu", "--gpu-memory-limit", "1MiB", "--per-edge", "-")
    assert result.code == 2
    assert "--per-edge counts whole parts only; count in more parts (--parts auto picks them)" in result.err
