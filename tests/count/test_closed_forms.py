"""Graphs whose triangle counts are known in closed form."""

import json
from math import comb

import numpy as np
import pytest
from conftest import run_module

import tcdist
from tcdist.io import generate


def count(source, **kw):
    return tcdist.count_triangles(source, backend="cpu", **kw).triangles


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5, 17, 64, 150])
@pytest.mark.parametrize("kernel", ["marker", "merge", "middle", "lookup"])
def test_complete_graph(n, kernel):
    src, dst = np.triu_indices(n, 1)
    assert count((src, dst), kernel=kernel) == comb(n, 3)


@pytest.mark.parametrize("a,b,c", [(1, 1, 1), (2, 3, 4), (10, 1, 7), (30, 20, 10)])
def test_complete_tripartite(a, b, c):
    assert count(f"tripartite:{a}:{b}:{c}") == a * b * c


@pytest.mark.parametrize("rows,cols", [(1, 1), (1, 9), (2, 2), (7, 5), (100, 300)])
def test_grid_with_diagonals(rows, cols):
    assert count(f"grid:{rows}:{cols}") == 2 * (rows - 1) * (cols - 1)


def test_grid_without_diagonals_has_no_triangles():
    edges = generate("grid:40:40")
    keep = (edges.dst - edges.src == 1) | (edges.dst - edges.src == 40)  # drop the diagonals (step 41)
    assert count((edges.src[keep], edges.dst[keep])) == 0


@pytest.mark.parametrize("seed", range(5))
def test_random_trees_have_no_triangles(seed):
    rng = np.random.default_rng(seed)
    n = 5000
    child = np.arange(1, n)
    parent = (rng.random(n - 1) * child).astype(np.int64)
    assert count((child, parent)) == 0


def test_empty_graph(tmp_path):
    """Counted as 0, and said: an input with no edges was counted without a word."""
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    comments = tmp_path / "comments.txt"
    comments.write_text("# nothing but a comment\n% and another\n\n")
    for source, name in ((empty, empty), (comments, comments), ((np.array([], np.int64), np.array([], np.int64)),
                                                                 "edge arrays")):
        result = tcdist.count_triangles(source, backend="cpu")
        assert (result.triangles, result.n, result.m, result.warnings) == (0, 0, 0, [f"{name}: no edges"])


def test_only_self_loops_leaves_no_vertex():
    result = tcdist.count_triangles((np.array([1, 2, 2]), np.array([1, 2, 2])), backend="cpu")
    assert (result.n, result.m, result.self_loops, result.triangles) == (0, 0, 3, 0)
    assert result.warnings == ["edge arrays: no edges (only 3 self loops, which are dropped)"]


@pytest.mark.parametrize("text", ["", "# a comment\n", "1 1\n2 2\n"], ids=["empty", "comments", "self loops"])
def test_a_file_of_no_edges_prints_its_count_and_warns_in_a_line(tmp_path, text):
    path = tmp_path / "g.txt"
    path.write_text(text)
    result = run_module("count", path, "--backend", "cpu", "--json")
    loops = " (only 2 self loops, which are dropped)" if "1 1" in text else ""
    assert (result.returncode, json.loads(result.stdout)["triangles"]) == (0, 0)
    assert result.stderr == f"tcdist: warning: {path}: no edges{loops}\n"


@pytest.mark.slow
def test_count_above_2_32_is_exact():
    """K_{1630,1630,1630}: 4,330,747,000 triangles, more than a 32-bit counter holds."""
    expected = 1630**3
    assert expected > 2**32
    assert count("tripartite:1630:1630:1630") == expected


@pytest.mark.mpi
def test_no_edges_is_said_however_the_graph_came(tmp_path):
    """A graph file of no edges, and ranks that build the graph together (--read ranks), were
    counted as 0 without the warning one process's build gives."""
    from mpi_launch import mpiexec

    loops = tmp_path / "loops.txt"
    loops.write_text("1 1\n2 2\n")
    assert run_module("convert", loops, tmp_path / "loops.h5").returncode == 0
    said = [f"{tmp_path / 'loops.txt'}: no edges (only 2 self loops, which are dropped)"]
    from_file = run_module("count", tmp_path / "loops.h5", "--backend", "cpu", "--json")
    assert from_file.returncode == 0 and json.loads(from_file.stdout)["warnings"] == said
    by_ranks = mpiexec(2, "count", loops, "--backend", "cpu", "--read", "ranks", "--json")
    assert by_ranks.returncode == 0, by_ranks.stderr
    assert (json.loads(by_ranks.stdout)["triangles"], json.loads(by_ranks.stdout)["warnings"]) == (0, said)
