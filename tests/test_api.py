"""The Python API accepts the in-memory forms a user already has."""

import networkx as nx
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import scipy.sparse as sp
from conftest import brute_force_triangles

import tcdist
from tcdist.errors import TcdistError


def test_import_touches_neither_cuda_nor_mpi():
    import subprocess
    import sys

    code = "import sys, tcdist; print(any(m in sys.modules for m in ('cupy', 'mpi4py', 'numba')))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"


def test_scipy_sparse_matrix():
    a = sp.random(300, 300, density=0.05, random_state=2, format="csr")
    rows, cols = a.nonzero()
    expected = brute_force_triangles(zip(rows.tolist(), cols.tolist()))
    assert tcdist.count_triangles(a, backend="cpu").triangles == expected


def test_networkx_graph_with_string_labels():
    g = nx.relabel_nodes(nx.karate_club_graph(), lambda v: f"member-{v}")
    assert tcdist.count_triangles(g, backend="cpu").triangles == 45


@pytest.mark.parametrize("parts", [None, 3])
def test_a_networkx_graph_s_average_clustering_averages_its_isolated_nodes_as_networkx_does(parts):
    """A triangle and two isolated nodes: 1.0 (over the vertices with edges), networkx 0.6."""
    g = nx.complete_graph(3)
    g.add_nodes_from([10, 11])
    assert tcdist.count_triangles(g, backend="cpu", per_vertex=True, parts=parts).average_clustering == 0.6
    g = nx.relabel_nodes(nx.gnm_random_graph(80, 200, seed=6), lambda v: f"n{v}")
    g.add_nodes_from(["alone", "looped"])
    g.add_edge("looped", "looped")
    result = tcdist.count_triangles(g, backend="cpu", per_vertex=True, parts=parts)
    assert result.average_clustering == pytest.approx(nx.average_clustering(g), rel=1e-12)
    assert result.transitivity == nx.transitivity(g)


def test_directed_networkx_graph_is_symmetrised():
    g = nx.DiGraph([(0, 1), (1, 2), (2, 0), (1, 0)])
    result = tcdist.count_triangles(g, backend="cpu")
    assert (result.triangles, result.m, result.reciprocal, result.duplicates) == (1, 3, 1, 0)


def test_a_networkx_self_loop_is_reported_once():
    """to_scipy_sparse_array's COO holds a loop three times (+1, +1, -1): it was reported as 3."""
    g = nx.complete_graph(5)
    g.add_edge(2, 2)
    result = tcdist.count_triangles(g, backend="cpu")
    assert (result.triangles, result.self_loops, result.duplicates, result.reciprocal) == (10, 1, 0, 0)


def test_networkx_needs_no_scipy():
    import subprocess
    import sys

    code = ("import sys; sys.modules['scipy'] = None\n"
            "import networkx as nx, tcdist\n"
            "print(tcdist.count_triangles(nx.karate_club_graph(), backend='cpu').triangles)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "45", done.stderr


def test_labels_map_back_to_the_source():
    g = nx.relabel_nodes(nx.karate_club_graph(), lambda v: f"member-{v}")
    graph = tcdist.load_graph(g)
    assert sorted(graph.vertex_ids().tolist()) == sorted(g.nodes)
    ids = graph.vertex_ids()
    rows = np.repeat(np.arange(graph.n), np.diff(graph.rowptr))
    assert {frozenset((ids[u], ids[v])) for u, v in zip(rows, graph.col)} == {frozenset(e) for e in g.edges}
    grid = tcdist.load_graph(nx.grid_2d_graph(3, 3))
    assert sorted(grid.vertex_ids().tolist()) == sorted(nx.grid_2d_graph(3, 3).nodes)


def test_edge_frames_and_tables():
    edges = {"source": ["x", "y", "z", "x", "y"], "target": ["y", "z", "x", "w", "x"], "weight": [1, 2, 3, 4, 5]}
    frame = pd.DataFrame(edges)
    result = tcdist.count_triangles(frame, backend="cpu")
    assert (result.triangles, result.m, result.reciprocal) == (1, 4, 1)
    assert sorted(tcdist.load_graph(frame).vertex_ids().tolist()) == ["w", "x", "y", "z"]
    table = pa.table({"src": [0, 1, 2, 2], "dst": [1, 2, 0, 3]})
    assert tcdist.count_triangles(table, backend="cpu").triangles == 1
    assert tcdist.count_triangles(pd.DataFrame({"a": [5, 6, 7], "b": [6, 7, 5]}), backend="cpu").triangles == 1


def test_negative_ids_are_labels():
    result = tcdist.count_triangles((np.array([-1, 2, 3]), np.array([2, 3, -1])), backend="cpu")
    graph = tcdist.load_graph((np.array([-1, 2, 3]), np.array([2, 3, -1])))
    assert result.triangles == 1 and sorted(graph.vertex_ids().tolist()) == [-1, 2, 3]


def test_two_arrays_and_a_graph():
    src, dst = np.array([0, 1, 2, 2]), np.array([1, 2, 0, 3])
    result = tcdist.count_triangles((src, dst), backend="cpu")
    assert (result.triangles, int(result)) == (1, 1)
    graph = tcdist.load_graph((src, dst))
    assert isinstance(graph, tcdist.Graph)
    assert tcdist.count_triangles(graph, backend="cpu").triangles == 1


@pytest.mark.parametrize("bad,problem", [
    (object(), "cannot read a graph from object"),
    ((np.array([1, 2]), np.array([2])), "equal length"),
    ((np.array([{1}, {2}], dtype=object), np.array([2, 3])), "vertex ids must be hashable"),
    (pd.DataFrame({"a": [1], "b": [2], "c": [3]}), "an edge table with 3 columns"),
    (sp.random(3, 4, density=0.5, random_state=0), "must be square"),
])
def test_bad_api_input(bad, problem):
    with pytest.raises(tcdist.TcdistError, match=problem):
        tcdist.count_triangles(bad, backend="cpu")


def test_bad_api_options():
    with pytest.raises(tcdist.TcdistError, match="parts must be a positive integer"):
        tcdist.count_triangles(parts=0)
    with pytest.raises(tcdist.TcdistError, match="unknown backend"):
        tcdist.count_triangles(backend="quantum")


@pytest.mark.parametrize("output", ["count --store", "partition", "graph file"])
def test_labels_are_not_written_where_they_would_be_lost(tmp_path, output):
    """Files keep integer ids: labels came back as their indices."""
    import tcdist.api
    from tcdist.io.h5graph import write_graph

    source = (np.array(["x", "y", "z", "x"]), np.array(["y", "z", "x", "w"]))
    with pytest.raises(tcdist.TcdistError, match="keeps integer vertex ids only"):
        if output == "count --store":
            tcdist.count_triangles(source, backend="cpu", parts=2, store=tmp_path / "s.h5")
        elif output == "partition":
            tcdist.api.partition(source, parts=2, output=tmp_path / "s.h5")
        else:
            write_graph(tcdist.load_graph(source), tmp_path / "g.h5")
    assert list(tmp_path.iterdir()) == []


def test_a_graph_object_whose_edges_do_not_ascend_is_refused():
    """A Graph is counted as given; forward and wetric trust that its ids follow its orientation."""
    from tcdist.graph import Graph

    looped = Graph(rowptr=np.array([0, 1, 1], np.int64), col=np.array([0], np.int32), original_id=np.arange(2))
    with pytest.raises(TcdistError, match="a Graph whose CSR a kernel cannot trust: an edge u -> v has u >= v"):
        tcdist.count_triangles(looped)
    made = tcdist.load_graph("complete:6")
    assert tcdist.count_triangles(made).triangles == 20


def test_convert_and_write_generated_are_the_cli_s_own_steps(tmp_path):
    """tcdist.convert and tcdist.write_generated (what `tcdist convert` and `tcdist generate`
    call): a Python graph to a graph file and back, a generator's edges to text, both counted
    again; an output that would replace the input is refused before any work."""
    karate = nx.karate_club_graph()
    done = tcdist.convert(karate, tmp_path / "karate.h5")
    assert (done["n"], done["m"]) == (34, 78) and done["bytes"] == (tmp_path / "karate.h5").stat().st_size
    assert tcdist.count_triangles(tmp_path / "karate.h5", backend="cpu").triangles == 45 == \
        sum(nx.triangles(karate).values()) // 3
    text = tmp_path / "k10.txt"
    assert tcdist.write_generated("complete:10", text)["edges"] == 45
    assert tcdist.count_triangles(text, backend="cpu").triangles == 10 * 9 * 8 // 6
    with pytest.raises(TcdistError, match="is the input"):
        tcdist.convert(text, text)


@pytest.mark.parametrize("source", [[(0, 1), (1, 2), (2, 0)], (np.array([0, 1]), np.array([1, 2])), nx.path_graph(3)])
def test_a_plan_of_a_graph_in_memory_is_refused_in_one_line(source):
    with pytest.raises(TcdistError, match="a plan is made for a path or a generator spec, not a "):
        tcdist.plan_count(source, backend="cpu")


@pytest.mark.parametrize("table", [pd.DataFrame([[0, 1], [1, 2], [2, 0]], columns=["src", "src"]),
                                   pd.DataFrame([[0, 1, 5], [1, 2, 5], [2, 0, 5]], columns=["src", "dst", "dst"]),
                                   pa.table([[0, 1, 2], [1, 2, 0]], names=["a", "a"])])
def test_an_edge_table_with_a_column_name_twice_is_one_line(table):
    with pytest.raises(TcdistError, match="column name '(src|dst|a)' is given to 2 columns: name its two columns apart"):
        tcdist.count_triangles(table, backend="cpu")


def test_a_device_or_an_output_of_another_kind_is_one_line(tmp_path):
    with pytest.raises(TcdistError, match="device must be 'cpu', 'gpu' or a Device, got 'tpu'"):
        tcdist.load_graph([(0, 1)], device="tpu")
    for write in (lambda: tcdist.convert("rmat:5", 5), lambda: tcdist.list_triangles("rmat:5", 7),
                  lambda: tcdist.write_generated("rmat:5", 3)):
        with pytest.raises(TypeError, match=r"output must be a path, got int \d") as refused:
            write()
        assert isinstance(refused.value, TcdistError)


def test_a_python_graph_converted_to_text_keeps_its_ids_or_is_refused(tmp_path):
    """Its own ids written (a graph's numbering of them once came out instead), read back as the
    same edges; ids a text edge list cannot hold back (names, below 0, over 2^63) refused."""
    ids = np.array([3, 2**62, 17], np.uint64)
    tcdist.convert((ids, np.roll(ids, 1)), tmp_path / "ids.txt")
    written = np.loadtxt(tmp_path / "ids.txt", dtype=np.uint64)
    assert {frozenset(map(int, edge)) for edge in written} == {frozenset({3, 2**62}), frozenset({2**62, 17}),
                                                               frozenset({17, 3})}
    for edges in ([("x", "y"), ("y", "z"), ("z", "x")], [(-1, 2), (2, 3), (3, -1)],
                  (np.array([2**63 + 5, 1], np.uint64), np.array([1, 2], np.uint64))):
        with pytest.raises(TcdistError, match="a text edge list keeps integer vertex ids only"):
            tcdist.convert(edges, tmp_path / "refused.txt")
        assert not (tmp_path / "refused.txt").exists()


@pytest.mark.parametrize("given,error,message", [
    ({"threads": "2"}, TypeError, "threads must be an integer, got str '2'"),
    ({"threads": 0}, ValueError, "threads must be at least 1, got 0"),
    ({"kernel": 5}, TypeError, "kernel must be a kernel spec"),
    ({"store": 5}, TypeError, "store must be a path, got int 5"),
    ({"gpu_memory_limit": -5}, ValueError, "gpu_memory_limit must be at least 1, got -5"),
    ({"gpu_memory_limit": "lots"}, ValueError, "gpu_memory_limit: 'lots' is not a size"),
    ({"gpu_memory_limit": 2.5}, TypeError, "gpu_memory_limit must be an integer"),
    ({"host_memory_limit": 0}, ValueError, "host_memory_limit must be at least 1, got 0"),
    ({"host_memory_limit": "a lot"}, ValueError, "host_memory_limit: 'a lot' is not a size"),
    ({"gpu_memory_limit": "9" * 400}, ValueError, r"gpu_memory_limit must be at most 2\^63-1 bytes \(8 EiB\)$"),
    ({"host_memory_limit": 10**400}, ValueError, r"host_memory_limit must be at most 2\^63-1 bytes \(8 EiB\)$"),
    ({"gpu_memory_limit": "\u0664GiB"}, ValueError, "gpu_memory_limit: '\u0664GiB' is not a size"),
    ({"resume": "yes"}, TypeError, "resume must be True or False"),
    ({"per_vertex": 1}, TypeError, "per_vertex must be True or False"),
    ({"parts": 0}, ValueError, "parts must be a positive integer"),
    ({"schedule": "eager"}, ValueError, "unknown schedule 'eager'"),
    ({"comm": 5}, TypeError, "comm must be an mpi4py communicator, got int"),
])
def test_wrong_argument_types_and_values_name_the_parameter_at_the_call(given, error, message):
    """Refused before any work, as a TypeError or ValueError that is also a TcdistError, in the
    API's words (the command line names its flags instead)."""
    with pytest.raises(error, match=message) as raised:
        tcdist.count_triangles("complete:5", backend="cpu", **given)
    assert isinstance(raised.value, tcdist.TcdistError)
