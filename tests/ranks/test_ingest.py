"""Every rank builds its rows (ranks/ingest.py): graph/build.py's one-process graph, byte for byte,
under a real mpiexec for 1 to 4 ranks and two simulated hosts, with each graph's edges split among
the ranks in several ways, and its exchange and spread arrays against NumPy on all ranks' data
(ingest_check.py); in one process, the same without MPI. Each rank's arrays there lie under
build.COMPILED_FROM: the whole-array steps a GPU runs in CuPy, here in NumPy (in CuPy on a GPU host)."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from mpi_launch import checked, launcher, makes_cliques

from tcdist import io
from tcdist.graph.build import build_graph
from tcdist.graph.edges import EdgeList
from tcdist.ranks.comm import SerialComm
from tcdist.ranks.ingest import build_rows, gather_graph

CHECK = Path(__file__).with_name("ingest_check.py")
WATCH = Path(__file__).with_name("watch_check.py")
DATA = Path(__file__).resolve().parents[1] / "data"
CASES = 60  # the graphs and splits ingest_check.py compares


def run_check(ranks, piece_bytes=1 << 30, *args, env=None):
    checked(ranks, CHECK, DATA, piece_bytes, *args, cases=CASES, env=env)


@pytest.mark.mpi
@pytest.mark.parametrize("ranks,piece_bytes", [(1, 1 << 30), (2, 1 << 30), (3, 4000)])  # (four: on two hosts, below)
def test_each_rank_builds_the_rows_one_process_builds(ranks, piece_bytes):
    """Three ranks' messages are cut into pieces of 4000 bytes: they carry the same rows."""
    run_check(ranks, piece_bytes)


@pytest.mark.mpi
def test_two_hosts_of_two_ranks_build_the_same_rows():
    if not makes_cliques():
        pytest.skip("the launcher is not MPICH's: it cannot split one host in two")
    run_check(4, env={**os.environ, "MPIR_CVAR_NUM_CLIQUES": "2"})


@pytest.mark.mpi
def test_a_rank_failing_between_exchanges_ends_every_rank_with_its_error():
    """A rank out of memory (on its GPU) between two exchanges of the build: the others waited in
    the next exchange for ever; watched, they stop there and every rank names its error."""
    done = subprocess.run([*launcher(), "-n", "3", sys.executable, str(WATCH)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    error = "MemoryError: out of memory allocating 1,024 bytes"
    assert json.loads(done.stdout) == [f"RemoteError: rank 2 ({socket.gethostname()}) failed: {error}"] * 2 + [error]


@pytest.mark.gpu
@pytest.mark.mpi
@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_ranks_sharing_a_gpu_build_the_rows_there_through_the_host(ranks):
    run_check(ranks, 1 << 30, "gpu")


@pytest.mark.gpu
@pytest.mark.mpi
@pytest.mark.parametrize("ranks", [1, 2, 4])
def test_edges_on_gpus_give_the_rows_on_them_built_and_gathered_over_nccl(ranks):
    import cupy

    if ranks > cupy.cuda.runtime.getDeviceCount():
        pytest.skip(f"NCCL takes a GPU for each of {ranks} ranks")
    run_check(ranks, 1 << 30, "nccl")


def test_one_rank_without_mpi_builds_the_one_process_graph_on_every_core():
    edges = io.generate("rmat:16")  # 2^20 edges: the compiled passes and the parallel sort
    whole, rows = build_graph(edges), build_rows(SerialComm(), edges)
    assert (rows.first_row, rows.end_row, rows.first_edge) == (0, whole.n, 0)
    gathered = gather_graph(SerialComm(), rows)
    for part in ("rowptr", "col", "original_id"):
        assert getattr(gathered, part).tobytes() == getattr(whole, part).tobytes()
    assert (gathered.self_loops, gathered.duplicates, gathered.reciprocal, gathered.degrees) == \
        (whole.self_loops, whole.duplicates, whole.reciprocal, whole.degrees)


def test_an_edge_list_read_both_ways_counts_its_repeats_and_reverses_as_networkx_sees_them():
    nx = pytest.importorskip("networkx")
    src = np.array([5, 9, 9, 5, 7, 7, 2**40, 5], np.int64)
    dst = np.array([9, 5, 5, 9, 7, 2**40, 5, 7], np.int64)
    rows = build_rows(SerialComm(), EdgeList(src, dst, "pairs"))
    simple = nx.Graph((int(a), int(b)) for a, b in zip(src, dst) if a != b)
    directed = set(zip(src.tolist(), dst.tolist())) - {(a, a) for a in src.tolist()}
    assert (rows.n, rows.m, rows.self_loops) == (simple.number_of_nodes(), simple.number_of_edges(), 1)
    assert rows.duplicates == int((src != dst).sum()) - len(directed)
    assert rows.reciprocal == len(directed) - simple.number_of_edges()
    assert sorted(rows.original_id.tolist()) == sorted(simple.nodes)
