"""Every rank reads its share and builds its rows (ranks/replicate.py), under a real mpiexec (CPU
ranks: the rows then go to rank 0, whose node shares them): the one-process count, each rank's
bytes read, and a graph over a rank's budget counted in slices."""

import gzip
import os

import pytest
from conftest import DATASETS, manifest, run_module
from mpi_launch import makes_cliques, mpiexec_json

import tcdist

pytestmark = pytest.mark.mpi

TEXT = DATASETS / "email-Enron.txt.gz"


def published(file_name):
    return next(e["published_triangles"] for e in manifest() if e["file"] == file_name)


@pytest.fixture(scope="module")
def graph_files(tmp_path_factory):
    """email-Enron as plain text, as Matrix Market and as a tcdist graph file."""
    where = tmp_path_factory.mktemp("replicate")
    text = where / "enron.txt"
    text.write_bytes(gzip.decompress(TEXT.read_bytes()))
    graph = tcdist.load_graph(str(text))
    pairs = [(int(a) + 1, int(b) + 1) for a, b in zip(*graph_edges(graph))]
    mtx = where / "enron.mtx"
    mtx.write_text(f"%%MatrixMarket matrix coordinate pattern general\n{graph.n} {graph.n} {len(pairs)}\n" +
                   "".join(f"{a} {b}\n" for a, b in pairs))
    h5 = where / "enron.h5"
    tcdist.convert(str(text), str(h5))
    return {"text": text, "mtx": mtx, "h5": h5}


def graph_edges(graph):
    """The oriented edges of a graph as (sources, targets), in rows."""
    import numpy as np

    rowptr, col = np.asarray(graph.rowptr), np.asarray(graph.col)
    return np.repeat(np.arange(graph.n), np.diff(rowptr)), col


@pytest.mark.parametrize("ranks,kind", [(2, "text"), (3, "mtx"), (4, "h5"), (4, "text")])
def test_every_rank_reads_a_fair_share_and_the_count_is_published(graph_files, kind, ranks):
    path = graph_files[kind]
    record = mpiexec_json(ranks, "count", path, "--backend", "cpu", "--read", "ranks")
    assert record["triangles"] == published("email-Enron.txt.gz")
    assert record["mode"] == "replicated"
    read = [r["read_bytes"] for r in record["rank_stats"]]
    fair = os.path.getsize(path) / ranks
    assert all(abs(r - fair) <= 0.1 * fair for r in read), read


@pytest.mark.parametrize("spec", ["rmat:12", "er:3000:40000", "grid:30:40"])
def test_a_generator_drawn_in_pieces_by_the_ranks_counts_as_one_process(spec):
    alone = tcdist.count_triangles(spec, backend="cpu")
    record = mpiexec_json(3, "count", spec, "--backend", "cpu", "--read", "ranks")
    assert (record["triangles"], record["n"], record["m"]) == (alone.triangles, alone.n, alone.m)
    assert (record["self_loops"], record["duplicates"], record["reciprocal"]) == \
        (alone.self_loops, alone.duplicates, alone.reciprocal)


def test_a_graph_over_a_ranks_budget_goes_to_rank_zero_and_is_counted_in_slices(graph_files):
    record = mpiexec_json(2, "count", graph_files["text"], "--backend", "cpu", "--read", "ranks", "--gpu-memory-limit",
                          "1MiB")
    assert record["triangles"] == published("email-Enron.txt.gz")
    assert record["slices"] > 0
    assert all(r["read_bytes"] > 0 for r in record["rank_stats"])


@pytest.mark.skipif(not makes_cliques(), reason="needs MPICH's Hydra launcher (MPIR_CVAR_NUM_CLIQUES)")
def test_two_hosts_each_read_half_the_text(graph_files):
    env = {**os.environ, "MPIR_CVAR_NUM_CLIQUES": "2"}
    record = mpiexec_json(4, "count", graph_files["text"], "--backend", "cpu", env=env)
    assert record["triangles"] == published("email-Enron.txt.gz")
    read = [r["read_bytes"] for r in record["rank_stats"]]
    assert sum(read[:2]) == pytest.approx(sum(read[2:]), rel=0.1)


def test_per_vertex_counts_of_ranks_that_read_their_shares_are_one_process_s(tmp_path, graph_files):
    alone, ranks = tmp_path / "alone.csv", tmp_path / "ranks.csv"
    assert run_module("count", graph_files["text"], "--backend", "cpu", "--per-vertex", alone).returncode == 0
    record = mpiexec_json(3, "count", graph_files["text"], "--backend", "cpu", "--read", "ranks", "--per-vertex", ranks)
    assert record["mode"] == "replicated"
    assert ranks.read_bytes() == alone.read_bytes()


@pytest.mark.gpu
def test_gpu_ranks_read_their_rows_of_a_graph_file_and_all_gather_them(graph_files):
    record = mpiexec_json(2, "count", graph_files["h5"], "--backend", "gpu", "--read", "ranks", "--ranks-per-gpu", 2)
    assert record["triangles"] == published("email-Enron.txt.gz")
    assert record["mode"] == "replicated" and "every rank read its share" in record["mode_reason"]
    assert {r["graph_via"] for r in record["rank_stats"]} == {"all-gather"}
    read = [r["read_bytes"] for r in record["rank_stats"]]
    assert all(abs(r - os.path.getsize(graph_files["h5"]) / 2) <= 0.1 * os.path.getsize(graph_files["h5"]) / 2
               for r in read), read


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["text", "mtx", "generator"])
def test_gpu_ranks_build_their_rows_of_text_and_generators_on_their_gpus(graph_files, kind):
    """Two ranks on one GPU (every GPU host has one): each reads its share and builds its rows there,
    and the count and the facts are one CPU process's."""
    source = "rmat:14" if kind == "generator" else graph_files[kind]
    alone = tcdist.count_triangles(str(source), backend="cpu")
    record = mpiexec_json(2, "count", source, "--backend", "gpu", "--read", "ranks", "--ranks-per-gpu", 2)
    assert (record["triangles"], record["n"], record["m"]) == (alone.triangles, alone.n, alone.m)
    assert (record["self_loops"], record["duplicates"], record["reciprocal"]) == \
        (alone.self_loops, alone.duplicates, alone.reciprocal)
    assert record["mode"] == "replicated" and "every rank read its share" in record["mode_reason"]
    assert {r["graph_via"] for r in record["rank_stats"]} == {"all-gather"}
    assert not any("on the host" in w for w in record.get("warnings", [])), record.get("warnings")


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["text", "mtx"])
def test_gpu_ranks_parse_their_shares_of_text_and_rank_zero_builds_the_graph_from_them(tmp_path, graph_files, kind):
    """By default (--read auto), GPU ranks each parse their byte range of a text file on their GPU,
    and rank 0 builds the graph from all the edges, which reach its GPU by CUDA IPC; it then shares
    the graph there as when it reads alone."""
    alone = tcdist.count_triangles(str(graph_files[kind]), backend="cpu")
    one, ranked = tmp_path / "one.csv", tmp_path / "ranked.csv"
    assert run_module("count", graph_files[kind], "--backend", "cpu", "--per-vertex", one).returncode == 0
    record = mpiexec_json(2, "count", graph_files[kind], "--backend", "gpu", "--ranks-per-gpu", 2,
                          "--per-vertex", ranked)
    assert ranked.read_bytes() == one.read_bytes()
    assert (record["triangles"], record["n"], record["m"]) == (alone.triangles, alone.n, alone.m)
    assert (record["self_loops"], record["duplicates"], record["reciprocal"]) == \
        (alone.self_loops, alone.duplicates, alone.reciprocal)
    read, fair = [r["read_bytes"] for r in record["rank_stats"]], os.path.getsize(graph_files[kind]) / 2
    assert all(abs(r - fair) <= 0.1 * fair for r in read), read
    assert record["mode"] == "replicated" and {r["graph_via"] for r in record["rank_stats"]} == {"gpu"}


@pytest.mark.gpu
def test_gpu_ranks_leave_a_gzip_stream_and_a_graph_file_to_rank_zero_by_default(tmp_path, graph_files):
    text = tmp_path / "enron.txt.gz"
    text.write_bytes(gzip.compress(graph_files["text"].read_bytes()))
    for path in (text, graph_files["h5"]):
        record = mpiexec_json(2, "count", path, "--backend", "gpu", "--ranks-per-gpu", 2)
        assert record["triangles"] == published("email-Enron.txt.gz")
        assert [r["read_bytes"] for r in record["rank_stats"]] == [os.path.getsize(path), 0]


@pytest.mark.gpu
def test_gpu_ranks_on_gpus_of_their_own_build_and_gather_over_nccl_as_one_process(graph_files):
    import cupy

    if cupy.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("NCCL between ranks takes a GPU for each")
    alone = tcdist.count_triangles(str(graph_files["text"]), backend="cpu")
    record = mpiexec_json(2, "count", graph_files["text"], "--backend", "gpu", "--read", "ranks")
    assert (record["triangles"], record["n"], record["m"]) == (alone.triangles, alone.n, alone.m)
    assert [s["gpu"] for s in record["rank_stats"]] == [0, 1]
    assert {r["graph_via"] for r in record["rank_stats"]} == {"all-gather"}



@pytest.mark.parametrize("kind", ["text", "h5"])
def test_cpu_ranks_of_one_host_leave_the_reading_to_rank_zero_by_default(graph_files, kind):
    """On one host the ranks share its cores: rank 0 reads and builds on all of them (measured
    faster than the ranks' build together: results/ranks-read-s34.md)."""
    record = mpiexec_json(3, "count", graph_files[kind], "--backend", "cpu")
    assert record["triangles"] == published("email-Enron.txt.gz")
    assert [r["read_bytes"] for r in record["rank_stats"]] == [os.path.getsize(graph_files[kind]), 0, 0]


def test_an_empty_file_under_ranks_counts_nothing_and_says_why_it_is_one_part(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("# no edge\n")
    record = mpiexec_json(2, "count", empty, "--backend", "cpu")
    assert (record["triangles"], record["n"], record["m"]) == (0, 0, 0)
    assert record["mode_reason"] == "parts: the graph has no vertex"


def test_rank_zero_reads_alone_when_asked(graph_files):
    record = mpiexec_json(3, "count", graph_files["text"], "--backend", "cpu", "--read", "root")
    assert record["triangles"] == published("email-Enron.txt.gz")
    assert [r["read_bytes"] for r in record["rank_stats"]] == [os.path.getsize(graph_files["text"]), 0, 0]
