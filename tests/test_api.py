"""The Python API accepts the in-memory forms a user already has."""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from conftest import brute_force_triangles

import tcdist


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


def test_directed_networkx_graph_is_symmetrised():
    g = nx.DiGraph([(0, 1), (1, 2), (2, 0), (1, 0)])
    assert tcdist.count_triangles(g, backend="cpu").triangles == 1


def test_two_arrays_and_a_graph():
    src, dst = np.array([0, 1, 2, 2]), np.array([1, 2, 0, 3])
    result = tcdist.count_triangles((src, dst), backend="cpu")
    assert (result.triangles, int(result)) == (1, 1)
    graph = tcdist.load_graph((src, dst))
    assert isinstance(graph, tcdist.Graph)
    assert tcdist.count_triangles(graph, backend="cpu").triangles == 1


@pytest.mark.parametrize("bad,problem", [
    (object(), "cannot read a graph from object"),
    ((np.array([1.5]), np.array([2.0])), "vertex ids must be integers"),
    ((np.array([1, 2]), np.array([2])), "equal length"),
    ((np.array([-1]), np.array([2])), "non-negative"),
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
