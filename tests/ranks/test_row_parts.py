"""Parts across ranks (ranks/row_parts.py): a graph no rank (and no host) holds whole, counted by
every rank's part of its own rows. Each part is partition/build.py's "minimal" part of the rank's
rows, array for array (row_parts_check.py under mpiexec); the count is one process's, on one
host and on two simulated hosts (MPICH's cliques) under --host-memory-limit, every rank holding
no more than its rows and their out-neighbours' rows, and a limit too small for a rank's rows is
one line and exit 2."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import run_module, scratch_held
from mpi_launch import checked, launcher, makes_cliques, mpiexec, mpiexec_json

import tcdist
import tcdist.io
from tcdist import plan
from tcdist.budget.model import csr_bytes
from tcdist.budget.sizes import size_text
from tcdist.errors import TcdistError
from tcdist.graph.build import build_graph
from tcdist.ranks.comm import SerialComm
from tcdist.ranks.ingest import build_rows
from tcdist.ranks.row_parts import row_part, row_plan

CHECK = Path(__file__).with_name("row_parts_check.py")
DATA = Path(__file__).resolve().parents[1] / "data"
CASES = 16  # the graphs and splits row_parts_check.py compares
GRID = "grid:200:200"  # a graph whose rows reach few others': a rank's part is about its share of the graph
CLIQUES = {**os.environ, "MPIR_CVAR_NUM_CLIQUES": "2"}  # one host taken for two, of two ranks each (-n 4)


def run_check(scratch, ranks, piece_bytes=1 << 30, least_step=1024, table_share=1, env=None):
    checked(ranks, CHECK, DATA, piece_bytes, least_step, table_share, scratch, cases=CASES, env=env)


@pytest.mark.mpi
@pytest.mark.parametrize("ranks", [1, 3])  # (four, the proxies found by a search: below)
def test_each_ranks_part_is_the_minimal_part_of_its_rows(tmp_path, ranks):
    run_check(tmp_path, ranks)


@pytest.mark.mpi
def test_a_rank_failing_in_the_fetch_ends_every_rank_with_its_error():
    done = subprocess.run([*launcher(), "-n", "3", sys.executable, str(CHECK.with_name("row_parts_watch_check.py"))],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    error = "MemoryError: out of memory allocating 1,024 bytes"
    assert json.loads(done.stdout) == [f"RemoteError: rank 2 ({socket.gethostname()}) failed: {error}"] * 2 + [error]


@pytest.mark.mpi
def test_two_hosts_make_the_same_parts_in_small_messages_and_steps_their_proxies_found_by_a_search(tmp_path):
    if not makes_cliques():
        pytest.skip("the launcher is not MPICH's: it cannot split one host in two")
    run_check(tmp_path, 4, 4000, 64, table_share=0, env=CLIQUES)


@pytest.fixture(scope="module")
def grid():
    """The grid's one-process count, graph and CSR bytes."""
    graph = tcdist.load_graph(GRID)
    alone = tcdist.count_triangles(GRID, backend="cpu")
    assert alone.triangles == 2 * 199 * 199  # two triangles in each square (its diagonal)
    return alone, graph, csr_bytes(graph.n, graph.m, graph.n, graph.col.itemsize)


@pytest.fixture(scope="module")
def grid_text(tmp_path_factory):
    path = tmp_path_factory.mktemp("rows") / "grid.txt"
    assert run_module("generate", GRID, "-o", path).returncode == 0
    return path


def held_within_bounds(record, graph, below_whole=True):
    """Every rank held within 1.5 times its rows and their out-neighbours' rows on other ranks,
    found in the one-process graph (the ranks' rows are consecutive: each part's locals in rank
    order), and with below_whole less than the whole graph (one rank: no more)."""
    whole = csr_bytes(graph.n, graph.m, graph.n, graph.col.itemsize)
    bounds = np.cumsum([0] + [p["n_local"] for p in record["part_stats"]])
    assert bounds[-1] == graph.n
    for r, (rank, part) in enumerate(zip(record["rank_stats"], record["part_stats"])):
        a, b = bounds[r], bounds[r + 1]
        own = csr_bytes(b - a, int(graph.rowptr[b] - graph.rowptr[a]), 0, graph.col.itemsize)
        targets = graph.col[graph.rowptr[a] : graph.rowptr[b]]
        proxies = np.unique(targets[targets >= b])
        asked = csr_bytes(proxies.size, int(np.diff(graph.rowptr)[proxies].sum()), 0, graph.col.itemsize) - 8
        assert rank["graph_via"] == "proxy rows" and rank["received_bytes"] == asked - 8 * proxies.size
        assert part["bytes"] <= rank["graph_peak_bytes"] <= 1.5 * (own + asked), (rank, part, own, asked)
        assert rank["graph_peak_bytes"] < whole or len(bounds) == 2 or not below_whole


@pytest.mark.mpi
@pytest.mark.parametrize("source", ["generator", "text"])
def test_two_hosts_count_a_graph_neither_may_hold(grid, grid_text, source):
    """Two hosts of two ranks, the host limit below the graph's CSR: no rank receives the graph,
    and the count is one process's; each host reads half the text."""
    if not makes_cliques():
        pytest.skip("the launcher is not MPICH's: it cannot split one host in two")
    alone, graph, whole = grid
    path = GRID if source == "generator" else grid_text
    record = mpiexec_json(4, "count", path, "--backend", "cpu", "--host-memory-limit", int(0.8 * whole), env=CLIQUES)
    assert (record["triangles"], record["n"], record["m"]) == (alone.triangles, alone.n, alone.m)
    assert record["mode"] == "parts across ranks" and "--host-memory-limit" in record["mode_reason"]
    assert (record["parts"], record["scheme"], record["prune"]) == (4, "rows", "minimal")
    assert len({r["host"] for r in record["rank_stats"]}) == 1  # (the cliques are of one machine)
    held_within_bounds(record, graph)
    if source == "text":
        read = [r["read_bytes"] for r in record["rank_stats"]]
        assert sum(read) == pytest.approx(os.path.getsize(grid_text), rel=0.05)  # (each reads on to a line end)
        assert sum(read[:2]) == pytest.approx(sum(read[2:]), rel=0.1)


@pytest.mark.mpi
@pytest.mark.parametrize("ranks", [2, 3])  # (one launched process runs as one process: it holds the graph once)
@pytest.mark.parametrize("schedule", ["static", "dynamic"])
def test_one_host_of_several_ranks_counts_in_parts_across_them(grid, ranks, schedule):
    """Under a limit that one copy of the graph fits but not rank 0's two: every rank counts its own part."""
    alone, graph, whole = grid
    record = mpiexec_json(ranks, "count", GRID, "--backend", "cpu", "--host-memory-limit", int(1.5 * whole),
                          "--schedule", schedule)
    assert (record["triangles"], record["n"], record["m"]) == (alone.triangles, alone.n, alone.m)
    assert record["mode"] == "parts across ranks" and record["schedule"] == "static"
    assert [r["parts"] for r in record["rank_stats"]] == [[r] for r in range(ranks)]
    held_within_bounds(record, graph)


@pytest.mark.mpi
def test_a_limit_the_graph_fits_twice_keeps_rank_zero_reading(grid):
    alone, _, whole = grid
    record = mpiexec_json(2, "count", GRID, "--backend", "cpu", "--host-memory-limit", 2 * whole)
    assert record["triangles"] == alone.triangles and record["mode"] == "replicated"
    assert {r["graph_peak_bytes"] for r in record["rank_stats"]} == {None}


@pytest.mark.mpi
def test_a_skewed_graph_counts_across_hosts_though_its_first_rank_asks_for_most_of_it():
    """RMAT's lowest rows reach nearly every hub: rank 0's part holds most of the graph (the docs
    say so); three hosts of one rank each."""
    if not makes_cliques():
        pytest.skip("the launcher is not MPICH's: it cannot split one host in three")
    alone = tcdist.count_triangles("rmat:13", backend="cpu")
    graph = tcdist.load_graph("rmat:13")
    whole = csr_bytes(graph.n, graph.m, graph.n, graph.col.itemsize)
    record = mpiexec_json(3, "count", "rmat:13", "--backend", "cpu", "--host-memory-limit", int(1.9 * whole),
                          env={**os.environ, "MPIR_CVAR_NUM_CLIQUES": "3"})
    assert record["triangles"] == alone.triangles and record["mode"] == "parts across ranks"
    held_within_bounds(record, graph, below_whole=False)
    first, last = record["part_stats"][0], record["part_stats"][-1]
    assert first["e_res"] > 0.5 * graph.m > last["e_res"]


@pytest.mark.mpi
def test_ranks_over_their_share_of_a_host_spill_their_part_s_columns_to_scratch(tmp_path):
    """Two hosts of two ranks, a host limit below what RMAT's first ranks need for their parts (their
    rows reach the hubs): those ranks write their part's columns to scratch, hold no more than
    their share of the limit, and the count is one process's."""
    if not makes_cliques():
        pytest.skip("the launcher is not MPICH's: it cannot split one host in two")
    alone = tcdist.count_triangles("rmat:13", backend="cpu")
    graph = tcdist.load_graph("rmat:13")
    whole = csr_bytes(graph.n, graph.m, graph.n, graph.col.itemsize)
    limit = int(1.2 * whole)  # each rank's share 0.6 of the graph: rank 0's part in memory is about all of it
    record = mpiexec_json(4, "count", "rmat:13", "--backend", "cpu", "--host-memory-limit", limit,
                          "--scratch", tmp_path, env=CLIQUES)
    assert record["triangles"] == alone.triangles and record["mode"] == "parts across ranks"
    spilled = [r["rank"] for r in record["rank_stats"] if r["scratch_bytes"]]
    assert spilled[:1] == [0] and "with its part's columns on scratch" in record["mode_reason"]
    for rank, part in zip(record["rank_stats"], record["part_stats"]):
        assert rank["graph_peak_bytes"] <= limit // 2
        assert rank["scratch_bytes"] == (graph.col.itemsize * part["e_res"] if rank["rank"] in spilled else 0)


@pytest.mark.mpi
def test_a_rank_killed_while_ranks_spill_leaves_nothing_in_scratch(tmp_path):
    """RMAT-19 on two hosts of two ranks under 40 MiB a host: ranks 0 and 1 spill. One rank killed
    (SIGKILL) while their files are open ends the job, and the scratch folder is as it was."""
    if not makes_cliques():
        pytest.skip("the launcher is not MPICH's: it cannot split one host in two")
    job = subprocess.Popen([*launcher(), "-n", "4", sys.executable, "-m", "tcdist", "count", "rmat:19", "--backend",
                            "cpu", "--host-memory-limit", "40MiB", "--scratch", str(tmp_path)], env=CLIQUES,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 240
        while not scratch_held(tmp_path) and job.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        held = scratch_held(tmp_path)
        assert held and os.listdir(tmp_path) == [], job.communicate()
        pid = int(held[0].split("-")[-2])  # (named by host and process id)
        os.kill(pid, signal.SIGKILL)
        job.communicate(timeout=120)
    finally:
        job.kill()
    assert job.returncode != 0 and os.listdir(tmp_path) == [] and not scratch_held(tmp_path)


@pytest.mark.mpi
def test_a_scratch_folder_that_is_none_is_one_line_on_every_rank_before_any_work(tmp_path):
    if not makes_cliques():
        pytest.skip("the launcher is not MPICH's: it cannot split one host in two")
    locked = tmp_path / "a file"  # (not a read-only folder: root writes in one)
    locked.write_text("")
    done = mpiexec(4, "count", "rmat:13", "--backend", "cpu", "--scratch", locked, env=CLIQUES)
    lines = [line for line in done.stderr.splitlines() if line.startswith("tcdist")]
    assert done.returncode == 2 and lines == [f"tcdist: error: --scratch {locked}: not a folder this process may "
                                              "write in"], done.stderr


@pytest.mark.mpi
def test_per_vertex_counts_across_ranks_are_one_process_s(tmp_path, grid_text, grid):
    _, _, whole = grid
    alone, ranks = tmp_path / "alone.csv", tmp_path / "ranks.csv"
    assert run_module("count", grid_text, "--backend", "cpu", "--per-vertex", alone).returncode == 0
    record = mpiexec_json(3, "count", grid_text, "--backend", "cpu", "--per-vertex", ranks,
                          "--host-memory-limit", int(1.5 * whole))
    assert record["mode"] == "parts across ranks"
    assert ranks.read_bytes() == alone.read_bytes()


@pytest.mark.mpi
@pytest.mark.parametrize("ranks,env", [(2, None), (4, CLIQUES)])
def test_a_limit_below_a_ranks_rows_is_one_line_and_exit_2_on_every_rank(grid, ranks, env):
    if env is not None and not makes_cliques():
        pytest.skip("the launcher is not MPICH's: it cannot split one host in two")
    _, _, whole = grid
    done = mpiexec(ranks, "count", GRID, "--backend", "cpu", "--host-memory-limit", whole // 8, env=env)
    lines = [line for line in done.stderr.splitlines() if line.startswith("tcdist")]  # not Open MPI's banner
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith("tcdist: error: rank ") and " of host memory for its rows (" in lines[0]
    assert lines[0].endswith("leaves each rank of its host; count on more hosts, or give a larger "
                             "--host-memory-limit")
    assert done.stdout == ""


@pytest.mark.mpi
def test_a_graph_file_read_by_rows_counts_across_ranks(tmp_path, grid):
    alone, graph, whole = grid
    h5 = tmp_path / "grid.h5"
    tcdist.convert(GRID, str(h5))
    record = mpiexec_json(2, "count", h5, "--backend", "cpu", "--host-memory-limit", int(1.5 * whole))
    assert record["triangles"] == alone.triangles and record["mode"] == "parts across ranks"
    held_within_bounds(record, graph)


def test_one_process_takes_the_limit_as_a_size_and_is_bound_by_it(grid):
    """One process (no ranks) counts within the limit, or is refused naming it: the limit bound only
    ranks, and one process held the whole graph past it with a warning."""
    _, _, whole = grid
    counted = tcdist.count_triangles(GRID, backend="cpu", host_memory_limit="64MiB")
    assert counted.triangles == 2 * 199 * 199 and counted.warnings == []
    with pytest.raises(TcdistError, match=r"^generating 'grid:200:200' needs about .* but host_memory_limit leaves"):
        tcdist.count_triangles(GRID, backend="cpu", host_memory_limit=f"{whole}B")


@pytest.mark.mpi
def test_per_edge_counts_leave_the_reading_to_rank_zero_and_say_it_holds_more_than_the_limit(tmp_path, grid):
    alone, _, whole = grid
    record = mpiexec_json(2, "count", GRID, "--backend", "cpu", "--host-memory-limit", whole, "--per-edge",
                          tmp_path / "edges.csv")
    assert record["triangles"] == alone.triangles and record["mode"] == "parts"
    assert record["warnings"] == [f"rank 0 read the graph alone and holds {size_text(2 * whole)} of it, over the "
                                  f"{size_text(whole)} of --host-memory-limit: ranks count parts across them only "
                                  "where every rank reads its share (no --per-edge, --labels, --store, partitioning "
                                  "asked for, or standard input)"]


def test_one_rank_without_mpi_makes_the_whole_graph_its_part():
    edges = tcdist.io.generate("rmat:12")
    whole, rows = build_graph(edges), build_rows(SerialComm(), edges)
    made = row_part(SerialComm(), row_plan(SerialComm(), rows))
    assert made.part.n_local == whole.n and made.received_bytes == 0
    for array in ("rowptr", "col"):
        assert getattr(made.part, array).tobytes() == getattr(whole, array).tobytes()
    assert np.array_equal(made.part.global_id, np.arange(whole.n))
    assert made.graph_peak_bytes == whole.rowptr.nbytes + whole.col.nbytes


@pytest.mark.parametrize("limit,room,placed,why", [
    (None, 10**9, "rank 0", ""), (None, 999, plan.ACROSS, "999 bytes it has free"),
    (1000, None, "rank 0", ""), (999, None, plan.ACROSS, "999 bytes of host_memory_limit")])
def test_rank_zero_takes_the_graph_where_its_host_holds_it_twice(limit, room, placed, why):
    """A graph of 500 bytes: rank 0's host holds it twice within the limit, else within what it has
    free (asked only without a limit)."""
    found = plan.rows_placed(False, 10**9, 1, 500, limit, lambda: room if room is not None else 1 / 0)
    assert found[0] == placed and why in found[1]


def test_gpu_ranks_whose_devices_hold_the_graph_have_it_replicated_and_do_not_ask_rank_0_s_room():
    assert plan.rows_placed(True, 100, 100, 10**12, None, lambda: 1 / 0)[0] == "replicated"
    assert plan.rows_placed(True, 101, 100, 50, None, lambda: 100)[0] == "rank 0"


@pytest.mark.gpu
@pytest.mark.mpi
def test_gpu_ranks_count_their_parts_across_ranks_on_their_gpu(grid):
    """Two ranks on one GPU (every GPU host has one), the graph over the GPU limit and the host limit
    below two copies: each builds its rows on the GPU, makes its part on the host and counts it there."""
    alone, graph, whole = grid
    record = mpiexec_json(2, "count", GRID, "--backend", "gpu", "--ranks-per-gpu", 2, "--gpu-memory-limit", "2MiB",
                          "--host-memory-limit", int(1.5 * whole))
    assert (record["triangles"], record["n"], record["m"]) == (alone.triangles, alone.n, alone.m)
    assert record["mode"] == "parts across ranks" and {r["device"] for r in record["rank_stats"]} == {"gpu"}
    held_within_bounds(record, graph)
