"""Per-vertex triangles and clustering against networkx, vertex by vertex, whole and in parts."""

import networkx as nx
import numpy as np
import pytest
from conftest import DATASETS, dataset_params, manifest, read_table

import tcdist
from tcdist.io import read


def networkx_graph(path):
    edges = read(path)
    g = nx.Graph()
    g.add_edges_from(zip(edges.src.tolist(), edges.dst.tolist()))
    g.remove_edges_from(nx.selfloop_edges(g))
    g.remove_nodes_from([v for v in list(g) if g.degree(v) == 0])  # tcdist's vertices have an edge
    return g


def reference(g):
    """networkx's triangles per vertex and from them its clustering (nx.clustering's own formula
    for an unweighted graph, the same values: it counts every triangle again, 23 s on
    soc-Epinions1 against 2 s), the transitivity and the average clustering (what nx.transitivity
    and nx.average_clustering compute, without counting every triangle twice more)."""
    triangles = nx.triangles(g)
    clustering = {v: 2 * triangles[v] / (d * (d - 1)) if d > 1 else 0.0 for v, d in g.degree()}
    wedges = sum(d * (d - 1) // 2 for _, d in g.degree())
    return triangles, clustering, sum(triangles.values()) / wedges, sum(clustering.values()) / len(clustering)


def assert_matches(result, ref):
    triangles, clustering, transitivity, average = ref
    vertex = result.per_vertex.vertex.tolist()
    assert sorted(vertex) == sorted(triangles)
    assert result.per_vertex.triangles.dtype == np.uint64
    assert result.per_vertex.triangles.tolist() == [triangles[v] for v in vertex]
    assert result.per_vertex.clustering.tolist() == pytest.approx([clustering[v] for v in vertex], rel=1e-12, abs=0)
    assert result.transitivity == pytest.approx(transitivity, rel=1e-12)
    assert result.average_clustering == pytest.approx(average, rel=1e-12)


@pytest.mark.parametrize("entry", dataset_params())
def test_every_vertex_matches_networkx_whole_and_in_parts(entry):
    path = DATASETS / entry["file"]
    ref = reference(networkx_graph(path))
    whole = tcdist.count_triangles(path, backend="cpu", per_vertex=True)
    assert whole.triangles == entry["published_triangles"]
    assert_matches(whole, ref)
    parts = tcdist.count_triangles(path, backend="cpu", per_vertex=True, parts=3, scheme="metis")
    assert_matches(parts, ref)


@pytest.mark.gpu
@pytest.mark.parametrize("entry", dataset_params())
def test_the_gpu_kernel_credits_every_vertex_as_networkx_does(entry):
    """cuda/per_vertex.cu, whole, in parts on the GPU (int32 ids) and from a store of parts."""
    path = DATASETS / entry["file"]
    ref = reference(networkx_graph(path))
    whole = tcdist.count_triangles(path, per_vertex=True)  # --backend auto counts per vertex on the GPU
    assert whole.triangles == entry["published_triangles"]
    assert whole.kernel in ("per-vertex (edge warps)", "per-vertex (thread per vertex)")
    assert_matches(whole, ref)
    in_parts = tcdist.count_triangles(path, backend="gpu", per_vertex=True, parts=5, kernel="lstc:tile=128")
    assert_matches(in_parts, ref)
    assert in_parts.kernel_options == {}  # the counting kernel's options are not the per-vertex kernel's


@pytest.mark.gpu
@pytest.mark.parametrize("entry", dataset_params())
def test_both_gpu_per_vertex_kernels_credit_every_row_as_the_cpu_does(entry):
    """A warp per edge and a thread per vertex (cuda/per_vertex.cu), on the whole graph and on
    parts with proxies (whose edges to local vertices run against the ids), int32 and int64 ids."""
    import cupy

    from tcdist.count.cpu import per_vertex
    from tcdist.count.per_vertex import per_vertex as gpu_per_vertex
    from tcdist.partition import partition_graph
    from tcdist.partition.part import Part

    graph = tcdist.load_graph(DATASETS / entry["file"])
    for part in [Part(0, graph.rowptr, graph.col, None, graph.n, {}), *partition_graph(graph, 4, seed=5).parts]:
        expected = per_vertex(part.rowptr, part.col, part.n_local)
        for col in (part.col, part.col.astype(np.int64)):
            for by_thread in (False, True):
                credits = gpu_per_vertex(cupy.asarray(part.rowptr), cupy.asarray(col), part.n_local, by_thread)
                assert np.array_equal(credits.get(), expected), (part.index, col.dtype, by_thread)


@pytest.mark.gpu
@pytest.mark.parametrize("spec,kernel", [("rmat:16", "per-vertex (edge warps)"),
                                         ("complete:60", "per-vertex (thread per vertex)"),
                                         ("grid:50:70", "per-vertex (thread per vertex)")])
def test_the_gpu_per_vertex_counts_equal_the_cpu_ones(spec, kernel, tmp_path):
    """Each part's per-vertex kernel as the rule takes it: a thread per vertex for out-degrees
    of at most 64, a warp per edge past them."""
    cpu = tcdist.count_triangles(spec, backend="cpu", per_vertex=True, parts=3)
    gpu = tcdist.count_triangles(spec, backend="gpu", per_vertex=True, parts=3, store=str(tmp_path / "s.h5"))
    assert gpu.triangles == cpu.triangles and gpu.kernel == kernel
    assert np.array_equal(gpu.per_vertex.vertex, cpu.per_vertex.vertex)
    assert np.array_equal(gpu.per_vertex.triangles, cpu.per_vertex.triangles)


def test_labels_come_back(tmp_path):
    g = nx.relabel_nodes(nx.karate_club_graph(), lambda v: f"member-{v}")
    r = tcdist.count_triangles(g, backend="cpu", per_vertex=True, parts=4)
    assert_matches(r, reference(g))
    assert r.transitivity == pytest.approx(nx.transitivity(g), rel=1e-12)
    assert r.average_clustering == pytest.approx(nx.average_clustering(g), rel=1e-12)


@pytest.mark.parametrize("name", ["pv.csv", "pv.parquet", "pv.h5"])
def test_the_per_vertex_file(tmp_path, cli, name):
    entry = next(e for e in manifest() if e["file"] == "email-Eu-core.txt.gz")
    path, out = DATASETS / entry["file"], tmp_path / name
    result = cli("count", path, "--per-vertex", out, "-P", "2", "--store", tmp_path / "s.h5", "--json")
    assert result.code == 0, result.err
    record = result.json()
    g = networkx_graph(path)
    assert record["transitivity"] == pytest.approx(reference(g)[2], rel=1e-12)
    table = read_table(out, ("vertex", "triangles", "clustering"))
    triangles = nx.triangles(g)
    assert {v: t for v, t in zip(table["vertex"], table["triangles"])} == triangles
    again = cli("count", tmp_path / "s.h5", "--per-vertex", tmp_path / ("again" + out.suffix), "--json")
    assert again.code == 0 and (tmp_path / ("again" + out.suffix)).read_bytes() == out.read_bytes()


@pytest.mark.parametrize("args,message", [
    (("--per-vertex", "pv.txt"), "--per-vertex writes .csv, .parquet or .h5 files; name it so"),
])
def test_per_vertex_refusals(tmp_path, cli, args, message):
    result = cli("count", "rmat:8", *[tmp_path / a if a.startswith("pv") else a for a in args])
    assert result.code == 2 and message in result.err and not list(tmp_path.iterdir())


@pytest.mark.parametrize("numba_loaded", [False, True])
def test_small_parts_credits_are_lookup_s_while_numba_is_not_loaded_and_match_networkx(monkeypatch, numba_loaded):
    """A small part's per-vertex and per-edge credits come from lookup's triangles in NumPy while
    Numba is not loaded (a first run compiles nothing for them), from the compiled kernels once it
    is: each vertex's and each edge's count as networkx's, either way."""
    from tcdist import compiled

    monkeypatch.setattr(compiled, "is_loaded", lambda: numba_loaded)
    g = nx.relabel_nodes(nx.powerlaw_cluster_graph(400, 6, 0.4, seed=3), lambda v: v * 7 + 1)
    ref = reference(g)
    for parts in (None, 3):
        result = tcdist.count_triangles(g, backend="cpu", per_vertex=True, per_edge=True, parts=parts)
        assert_matches(result, ref)
        by_edge = {frozenset(e): t for e, t in zip(zip(result.per_edge.u.tolist(), result.per_edge.v.tolist()),
                                                    result.per_edge.triangles.tolist())}
        assert by_edge == {frozenset((u, v)): len(set(g[u]) & set(g[v])) for u, v in g.edges}
        assert set(result.kernels) == {"per-vertex (lookup), per-edge (lookup)" if not numba_loaded else
                                       "per-vertex (marker), per-edge (marker)"}, result.kernels
