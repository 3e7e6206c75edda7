"""The inputs jobs/bench_peers.py gives the published GPU codes: GroupTC's CSR is tcdist's oriented
CSR, ids ranked by degree (TC-Compare's CSR2RidDCSR); TRUST's is CSR2TrustCSR's layout, made in
NumPy and compared here with the tool's own steps written out as loops; both hold the graph's
triangles; and a peer's launch, timed by CUDA events, is the one statement wrapped."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tcdist
from tcdist.count.cpu import count_merge

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "jobs"))
import bench_peers  # noqa: E402

GRAPHS = ["rmat:10", "er:600:5000", "grid:15:20", "er:400:40000"]  # (the last with rows of over 100 edges)


def degree_of_every_id(rowptr, col):
    return np.diff(rowptr) + np.bincount(col, minlength=rowptr.size - 1)


@pytest.mark.parametrize("spec", GRAPHS)
def test_grouptc_reads_the_oriented_csr_its_ids_ranked_by_ascending_degree(spec):
    graph = tcdist.load_graph(spec)
    files = bench_peers.rid_csr(graph.rowptr, graph.col)
    begin, source, adjacent = files["begin"], files["source"], files["adjacent"]
    assert begin.dtype == np.int64 and source.dtype == adjacent.dtype == np.int32
    assert np.all(np.diff(degree_of_every_id(begin, adjacent)) >= 0)  # ids ranked by degree
    assert np.all(source < adjacent)  # each edge once, from its lower id
    assert np.array_equal(source, np.repeat(np.arange(graph.n), np.diff(begin)))
    assert count_merge(begin, adjacent, graph.n) == tcdist.count_triangles(spec, backend="cpu").triangles


def trust_by_its_tool(rowptr, col):
    """CSR2TrustCSR's steps on tcdist's oriented CSR, as the tool writes them (its sorts stable,
    its rows in rank order): rows by descending out-degree, then reassignID's walk, then the rows."""
    n = rowptr.size - 1
    rows = [list(col[rowptr[u] : rowptr[u + 1]]) for u in range(n)]
    order = sorted(range(n), key=lambda u: -len(rows[u]))  # cmp2
    position = {u: i for i, u in enumerate(order)}
    edges = [[position[v] for v in rows[u]] for u in order]
    k2 = next((i for i in range(n) if len(edges[i]) <= 100), -1)
    k3 = next((i for i in range(n) if len(edges[i]) < 2), -1)
    k2, k3 = (n if k2 == -1 else k2), (n if k3 == -1 else k3)
    k1, s2, s3 = 0, k2, k3
    new = [-1] * n

    def give(v):
        nonlocal k1, k2, k3
        if v >= s3:
            new[v], k3 = k3, k3 + 1
        elif v >= s2:
            new[v], k2 = k2, k2 + 1
        else:
            new[v], k1 = k1, k1 + 1

    for i in range(n):
        if len(edges[i]) <= 2:
            break
        for v in edges[i]:
            if new[v] == -1:
                give(v)
    for i in range(n):
        if new[i] == -1:
            give(i)
    out = [[] for _ in range(n)]
    for i in range(n):
        out[new[i]] = sorted(new[v] for v in edges[i])
    begin = np.cumsum([0] + [len(r) for r in out])
    source = np.repeat(np.arange(n), np.diff(begin))
    return begin, source, np.array([v for r in out for v in r], np.int64)


@pytest.mark.parametrize("spec", GRAPHS)
def test_trust_reads_the_layout_its_preprocessing_tool_makes(spec):
    graph = tcdist.load_graph(spec)
    files = bench_peers.trust_csr(graph.rowptr, graph.col)
    for made, by_tool in zip((files["begin"], files["source"], files["adjacent"]),
                             trust_by_its_tool(graph.rowptr, graph.col)):
        assert np.array_equal(made, by_tool)
    out = np.diff(files["begin"])  # TRUST's kernel: rows of more than 100 edges first, of fewer than 2 last
    wide, narrow = out > bench_peers.TRUST_WIDE, out < bench_peers.TRUST_NARROW
    assert np.all(np.diff(wide.astype(int)) <= 0) and np.all(np.diff(narrow.astype(int)) >= 0)
    assert count_merge(files["begin"], files["adjacent"], graph.n) == tcdist.count_triangles(spec, backend="cpu").triangles


def test_a_peer_s_one_launch_is_the_statement_timed():
    text = "for (;;) {\n  memset(x);\n  k<<<g, b>>>(a,\n    c);\n  sync();\n}\n"
    assert bench_peers.timed_source(text, "k<<<") == \
        "for (;;) {\n  memset(x);\n  PEER_START(); k<<<g, b>>>(a,\n    c); PEER_STOP();\n  sync();\n}\n"
    with pytest.raises(SystemExit, match="launched more than once"):
        bench_peers.timed_source(text + text, "k<<<")


def test_a_peer_s_commit_is_its_own_not_that_of_the_tree_it_lies_in(tmp_path):
    """Peers carried inside tcdist's tree have no .git of their own: git there answered tcdist's
    commit, and the table named it as each peer's."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                    "--allow-empty", "-m", "tree"], check=True)
    (tmp_path / "peer").mkdir()
    (tmp_path / "peer" / "COMMIT").write_text("149b90d99083e72f5e47ecc32bc228d0b4c67386\n")
    assert bench_peers._head(str(tmp_path), "peer") == "149b90d99083e72f5e47ecc32bc228d0b4c67386"


def test_the_table_says_which_peer_counted_wrong():
    """A peer whose count differs is named under the table with its count (the table showed only
    its time: TRUST's 423,814,435 of rmat:20's 423,817,377 on nvidia-h100-x1 read as an answer)."""
    timed = {"median_ms": 2.0}
    row = {"graph": "rmat:20", "m": 15_700_775, "triangles": 423_817_377, "auto": {"median_ms": 1.0, "choice": "bitmap"},
           "peers": {"WETRIC": {**timed, "setting": "s=8 a=32768"}, "GroupTC": timed, "TRUST": timed}}
    record = {"device": "d", "gpu": "g", "repeat": 10, "commit": "c", "date": "t", "graphs": [row]}
    assert "differ" not in bench_peers.markdown(record)
    row["wrong"] = {"TRUST": 423_814_435}
    assert bench_peers.markdown(record).endswith("- `rmat:20`: TRUST counted 423,814,435, not 423,817,377\n")
