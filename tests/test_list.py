"""tcdist list and tcdist.list_triangles: every triangle once, u < v < w in the input's ids,
against networkx's all_triangles on real graphs, streamed block by block."""

import gzip
from collections import Counter

import networkx as nx
import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest
from conftest import DATASETS

import tcdist
from tcdist.count import listing


def networkx_triangles(path):
    with gzip.open(path, "rt") as f:
        graph = nx.parse_edgelist((line for line in f if not line.startswith("#")), nodetype=int)
    graph.remove_edges_from(nx.selfloop_edges(graph))
    return sorted(tuple(sorted(t)) for t in nx.all_triangles(graph))


@pytest.mark.parametrize("name", ["email-Eu-core.txt.gz", "p2p-Gnutella08.txt.gz"])
def test_the_triangles_of_real_graphs_are_networkx_s(tmp_path, cli, monkeypatch, name):
    monkeypatch.setattr(listing, "BLOCK", 1000)  # many blocks
    out = tmp_path / "t.parquet"
    result = cli("list", DATASETS / name, "-o", out, "--json")
    table = pq.read_table(out)
    listed = list(zip(*(table.column(c).to_pylist() for c in "uvw")))
    assert len(set(listed)) == len(listed) and all(u < v < w for u, v, w in listed)
    assert sorted(listed) == networkx_triangles(DATASETS / name)
    assert result.json()["triangles"] == len(listed)


def test_labels_come_back_ordered_as_the_graph_numbered_them(tmp_path):
    out = tmp_path / "t.csv"
    done = tcdist.list_triangles((["c", "b", "a", "a"], ["b", "a", "c", "d"]), out)
    assert done["triangles"] == 1
    rows = pcsv.read_csv(out).to_pylist()
    assert len(rows) == 1 and sorted(rows[0].values()) == ["a", "b", "c"]


def _listed_file(path):
    table = pq.read_table(path) if path.suffix == ".parquet" else pcsv.read_csv(
        path, convert_options=pcsv.ConvertOptions(column_types=dict.fromkeys("uvw", pa.string())))
    return Counter(map(frozenset, zip(*(table.column(c).to_pylist() for c in "uvw"))))


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
@pytest.mark.parametrize("labels", ["past int64 beside negative", "tuples"])
def test_labels_no_column_type_holds_are_written_as_text(tmp_path, suffix, labels):
    """Ids from -1 to 2**63 + 9 (Python ints) and tuple nodes: the listing raised pyarrow's errors."""
    g = nx.gnm_random_graph(30, 150, seed=5)
    g = nx.relabel_nodes(g, {v: ((v,) * (1 + v % 3) if labels == "tuples" else 2**63 + v if v % 2 else -v)
                             for v in g})
    source = g if labels == "tuples" else list(g.edges())
    expected = Counter(frozenset(t) for t in nx.all_triangles(g))
    assert Counter(frozenset(row) for block in tcdist.list_triangles(source) for row in block.tolist()) == expected
    out = tmp_path / f"t{suffix}"
    assert tcdist.list_triangles(source, out)["triangles"] == sum(expected.values())
    assert _listed_file(out) == Counter(frozenset(map(str, t)) for t in expected)


def test_an_iterator_without_a_file_and_a_graph_without_triangles():
    blocks = list(tcdist.list_triangles("complete:6"))
    triangles = np.concatenate(blocks)
    assert len(triangles) == 20 and (triangles[:, 0] < triangles[:, 1]).all() and (triangles[:, 1] < triangles[:, 2]).all()
    assert sum(len(b) for b in tcdist.list_triangles("grid:1:5")) == 0


def test_csv_on_standard_output_keeps_the_summary_off_it(tmp_path):
    from conftest import run_module

    done = run_module("list", "complete:4", "-o", "-")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "u,v,w" and len(done.stdout.splitlines()) == 5
    assert "listed 4 triangles" in done.stderr


def test_an_unknown_kind_of_file_is_refused_before_any_work(tmp_path, cli):
    result = cli("list", "rmat:8", "-o", tmp_path / "t.txt")
    assert result.code == 2 and "a triangle list is written as .parquet or .csv" in result.err
