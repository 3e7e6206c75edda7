"""Ranks under a real mpiexec (CPU backend): the one-process count for every R, P and schedule,
failures that end the job, and resuming after a rank is killed."""

import json
import os
import signal
import subprocess
import sys
import time

import h5py
import pytest
from conftest import DATASETS, manifest
from mpi_launch import launcher, makes_cliques, mpiexec, mpiexec_json

from tcdist.ranks.prepare import SHARES_PER_RANK

pytestmark = pytest.mark.mpi

GRAPH = DATASETS / "email-Enron.txt.gz"


def published(file_name):
    return next(e["published_triangles"] for e in manifest() if e["file"] == file_name)


def check_parts(record, parts):
    """Every part counted exactly once, by one rank, and the rank tables agree with the total."""
    counted = sorted(p for s in record["rank_stats"] for p in s["parts"])
    assert counted == list(range(parts)) == [s["part"] for s in record["part_stats"]]
    assert sum(s["triangles"] for s in record["rank_stats"]) == record["triangles"]
    for s in record["part_stats"]:
        assert s["part"] in record["rank_stats"][s["rank"]]["parts"]


@pytest.mark.parametrize("schedule,ranks,parts", [
    *(("static", r, p) for r, p in [(1, 1), (2, 1), (2, 5), (3, 7), (4, 3), (2, 70)]),
    *(("dynamic", r, p) for r, p in [(1, 3), (3, 3), (4, 9), (2, 70)]),
])  # fewer parts than ranks, as many, more, and over 64 (no in-parts shared)
def test_any_ranks_and_parts_give_the_published_count(ranks, parts, schedule):
    record = mpiexec_json(ranks, "count", GRAPH, "--backend", "cpu", "--parts", parts, "--schedule", schedule)
    assert record["triangles"] == published("email-Enron.txt.gz") == 727044
    assert (record["parts"], record["schedule"], record["backend"]) == (parts, schedule, "cpu")
    check_parts(record, parts)
    if schedule == "static":  # a rank with no part joins the reduce with nothing
        assert sum(1 for s in record["rank_stats"] if s["parts"]) == min(ranks, parts)


@pytest.mark.parametrize("schedule,ranks,cliques", [("static", 2, 1), ("dynamic", 3, 1), ("static", 4, 2),
                                                    ("dynamic", 4, 2), ("static", 3, 3)])
def test_a_graph_that_fits_is_shared_whole_not_partitioned(tmp_path, cli, ranks, cliques, schedule):
    """Every rank holds the whole graph, read once: a single gzip stream is inflated by the first
    rank of each node, which deals its blocks of lines out to the node's ranks; every rank builds
    its rows, rank 0 receives them, the ranks of its node share its memory, one rank of each other
    node ("nodes" are MPICH's cliques) receives it, and nothing is written; each rank counts shares
    of the rows. The count and every vertex's triangles are one process's."""
    alone = tmp_path / "alone.csv"
    assert cli("count", GRAPH, "--backend", "cpu", "--per-vertex", alone).code == 0
    ranked = tmp_path / "ranked.csv"
    env = {**os.environ, "MPIR_CVAR_NUM_CLIQUES": str(cliques)}
    record = mpiexec_json(ranks, "count", GRAPH, "--backend", "cpu", "--schedule", schedule, "--per-vertex", ranked,
                          cwd=tmp_path, env=env)
    assert (record["triangles"], record["mode"], record["store"]) == (727044, "replicated", None)
    assert record["mode_reason"].startswith("replicated: the graph needs ")
    shares = record["parts"]
    assert shares == ranks * SHARES_PER_RANK
    assert sorted(p for s in record["rank_stats"] for p in s["parts"]) == list(range(shares))
    csr = -(-8 * (record["n"] + 1) // 4096) * 4096 + -(-4 * record["m"] // 4096) * 4096  # each array on its own pages
    nodes = cliques if makes_cliques() else 1  # Open MPI's mpirun (GPU hosts) has no cliques: one node
    read = [s["read_bytes"] for s in record["rank_stats"]]  # the file, once per node
    assert read[0] == GRAPH.stat().st_size and sorted(read) == [0] * (ranks - nodes) + [read[0]] * nodes
    received = sorted(s["received_bytes"] for s in record["rank_stats"])
    assert received == [0] * (ranks - nodes + 1) + [csr] * (nodes - 1)  # one copy for each other node
    assert ranked.read_bytes() == alone.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["alone.csv", "ranked.csv"]


def test_parts_are_made_when_asked_for_or_when_no_slice_of_the_graph_fits(tmp_path):
    asked = mpiexec_json(2, "count", GRAPH, "--backend", "cpu", "-P", 2, cwd=tmp_path)
    assert (asked["triangles"], asked["mode"], asked["parts"]) == (727044, "parts", 2)
    assert asked["mode_reason"] == "parts: asked for by the options given"
    # a slice of the whole graph holds the pointers of its 36,692 rows (over 256 KiB): a part's are fewer
    small = mpiexec_json(2, "count", GRAPH, "--backend", "cpu", "--gpu-memory-limit", "512KiB", cwd=tmp_path)
    assert (small["triangles"], small["mode"]) == (727044, "parts")
    assert small["mode_reason"] == "parts: the graph needs 3.3 MiB on a device, over the 512.0 KiB a rank may " \
                                   "take, nor does any slice of it"
    assert list(tmp_path.iterdir()) == []  # nothing written: each rank built the parts it counted


@pytest.mark.parametrize("schedule", ["static", "dynamic"])
def test_a_graph_over_each_rank_s_limit_is_counted_in_slices_of_it_from_host_memory(tmp_path, cli, schedule):
    """No part is made where slices of the whole graph fit each rank's limit (its own, each process
    being limited): the ranks share the slices of one process's plan, and every vertex gets the
    triangles of one process without a limit."""
    alone = tmp_path / "alone.csv"
    assert cli("count", GRAPH, "--backend", "cpu", "--per-vertex", alone).code == 0
    one = cli("count", GRAPH, "--backend", "cpu", "--gpu-memory-limit", "2MiB", "--json").json()
    ranked = tmp_path / "ranked.csv"
    record = mpiexec_json(3, "count", GRAPH, "--backend", "cpu", "--gpu-memory-limit", "2MiB", "--schedule", schedule,
                          "--per-vertex", ranked, cwd=tmp_path)
    assert (record["triangles"], record["mode"]) == (727_044, "replicated")
    assert record["mode_reason"] == "replicated: the graph needs 3.3 MiB on a device, over the 2.0 MiB a rank may " \
                                    "take: every rank counts slices of it that fit, from host memory"
    assert record["parts"] == record["slices"] == one["slices"] > 1
    assert sorted(p for s in record["rank_stats"] for p in s["parts"]) == list(range(record["parts"]))
    assert all(s["parts"] for s in record["rank_stats"])  # every rank counted some
    assert ranked.read_bytes() == alone.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["alone.csv", "ranked.csv"]


@pytest.mark.parametrize("binding", ["none", "core"])
def test_a_cpu_rank_takes_the_cores_it_is_bound_to_else_its_share_of_the_node(binding, tmp_path):
    """Unbound, two ranks share the node's cores; bound by the launcher (Open MPI binds each of two
    ranks to one core unless told otherwise), a rank takes its own cores only (a core's hardware
    threads, where it has several)."""
    options = ("--bind-to", binding)
    probe = f"import os; open(os.path.join({str(tmp_path)!r}, str(os.getpid())), 'w').write(str(len(os.sched_getaffinity(0))))"
    subprocess.run([*launcher(), *options, "-n", "2", sys.executable, "-c", probe], check=True, timeout=120)
    bound = sorted(int(p.read_text()) for p in tmp_path.iterdir())  # (a file each: the launcher may merge their lines)
    expected = [b if b < os.cpu_count() else max(1, b // 2) for b in bound]
    record = mpiexec_json(2, "count", GRAPH, "--backend", "cpu", options=options)
    assert sorted(s["threads"] for s in record["rank_stats"]) == expected


def test_partition_and_count_a_store_under_ranks(tmp_path):
    store = tmp_path / "parts.h5"
    result = mpiexec(3, "partition", GRAPH, "-o", store, "-P", 6, "--scheme", "contiguous")
    assert result.returncode == 0 and result.stdout.count("wrote") == 1, result.stderr
    for schedule in ("static", "dynamic"):
        record = mpiexec_json(3, "count", store, "--backend", "cpu", "--schedule", schedule)
        assert (record["triangles"], record["parts"], record["scheme"]) == (727044, 6, "contiguous")
        check_parts(record, 6)


def test_static_schedule_balances_the_estimated_work(tmp_path):
    store = tmp_path / "parts.h5"
    record = mpiexec_json(2, "count", "rmat:13", "--backend", "cpu", "-P", 8, "--store", store)
    work = {s["part"]: s["work"] for s in record["part_stats"]}
    loads = sorted(sum(work[p] for p in s["parts"]) for s in record["rank_stats"])
    assert loads[1] - loads[0] <= max(work.values())  # LPT: no rank ahead by more than one part


def test_only_rank_zero_reports_an_error_and_every_rank_exits_2():
    result = mpiexec(3, "count", DATASETS / "no-such-graph.txt", "--backend", "cpu")
    assert result.returncode == 2
    assert result.stderr.count("tcdist: error:") == 1 and "no-such-graph.txt" in result.stderr
    started = time.monotonic()
    result = mpiexec(3, "count", "--parts", "0")
    assert result.returncode == 2 and result.stderr.count("error: argument --parts") == 1
    assert time.monotonic() - started < 5  # the ranks that do not say it leave within a second or so


def test_a_usage_error_does_not_wait_for_a_rank_that_never_parses_the_same(tmp_path):
    """Rank 0 refuses its options while rank 1 only asks for --help: rank 0 says why once and
    leaves within seconds (its wait for every rank to leave together used to hang here)."""
    command = [*launcher(), "-n", "1", sys.executable, "-m", "tcdist", "count", "--parts", "0", ":",
               "-n", "1", sys.executable, "-m", "tcdist", "--help"]
    started = time.monotonic()
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode != 0 and result.stderr.count("error: argument --parts") == 1
    assert time.monotonic() - started < 60


def test_a_store_that_exists_for_another_graph_is_refused_once(tmp_path):
    store = tmp_path / "s.h5"
    assert mpiexec(2, "partition", "rmat:10", "-o", store, "-P", 2).returncode == 0
    result = mpiexec(2, "count", GRAPH, "--backend", "cpu", "--store", store, "-P", 2)
    assert result.returncode == 2 and result.stderr.count("tcdist: error:") == 1
    assert "made from another graph" in result.stderr


@pytest.mark.parametrize("schedule", ["static", "dynamic"])
def test_a_rank_that_fails_mid_count_ends_the_job_with_its_message(tmp_path, schedule):
    """One part's data is corrupt on disk: the rank that reads it stops every rank, which all exit 2
    (under MPI_Abort, MPICH's mpiexec sometimes answered 9: the status of a rank it killed)."""

    store = tmp_path / "parts.h5"
    assert mpiexec(1, "partition", GRAPH, "-o", store, "-P", 4).returncode == 0
    with h5py.File(store) as f:
        offset = f["part00002/col"].id.get_offset()
    data = bytearray(store.read_bytes())
    data[offset + 40] ^= 0x5A
    store.write_bytes(bytes(data))
    started = time.monotonic()
    result = mpiexec(3, "count", store, "--backend", "cpu", "--schedule", schedule, timeout=120)
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert time.monotonic() - started < 60
    assert result.stderr.count("tcdist: error:") == 1 and "part 2 is corrupt" in result.stderr


def test_count_triangles_takes_a_communicator(tmp_path):
    script = tmp_path / "user.py"
    script.write_text(
        "import json, sys\n"
        "from mpi4py import MPI\n"
        "import tcdist\n"
        "r = tcdist.count_triangles(sys.argv[1], backend='cpu', parts=5, schedule='dynamic', comm=MPI.COMM_WORLD)\n"
        "rank = MPI.COMM_WORLD.rank\n"
        "open(f'{sys.argv[2]}/{rank}.json', 'w').write(json.dumps([rank, r.triangles, r.ranks]))\n")
    command = [*launcher(), "-n", "3", sys.executable, str(script), str(GRAPH), str(tmp_path)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    rows = sorted(json.loads(path.read_text()) for path in tmp_path.glob("*.json"))
    assert rows == [[0, 727044, 3], [1, 727044, 3], [2, 727044, 3]]  # every rank returns the total


@pytest.mark.parametrize("ranks,cliques", [(2, 1), (4, 2)])
def test_a_rank_killed_mid_count_is_resumed_exactly(tmp_path, ranks, cliques):
    """SIGKILL the last rank (with cliques, on another "node" than rank 0) once it has journalled a
    part: the job ends within 30 s, leaving only the store and its journal; --resume recounts
    only what is missing."""
    store, parts = tmp_path / "parts.h5", 16
    journal = tmp_path / "parts.h5.journal"
    assert mpiexec(1, "partition", "complete:1000", "-o", store, "-P", parts).returncode == 0
    command = [*launcher(), "-n", str(ranks), sys.executable, "-m", "tcdist", "count", str(store), "--backend", "cpu",
               "--kernel", "merge", "--threads", "1", "--json"]
    env = {**os.environ, "MPIR_CVAR_NUM_CLIQUES": str(cliques)}
    job = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env)
    victim, deadline = None, time.monotonic() + 120
    while victim is None and time.monotonic() < deadline and job.poll() is None:
        for entry in journal.glob("part*.json") if journal.exists() else []:
            record = json.loads(entry.read_text())
            if record["rank"] == ranks - 1:
                victim = record["pid"]
                break
        time.sleep(0.002)
    assert victim is not None, f"rank {ranks - 1} finished no part before the job ended"
    os.kill(victim, signal.SIGKILL)
    killed = time.monotonic()
    job.communicate(timeout=60)
    assert time.monotonic() - killed < 30
    assert job.returncode != 0
    left = {p.name for p in tmp_path.iterdir()}  # and the store's lock, where the launcher killed rank 0 too
    assert left - {"parts.h5.lock"} == {"parts.h5", "parts.h5.journal"}
    finished = len(list(journal.glob("part*.json")))
    assert 0 < finished < parts, f"the kill came after {finished} of {parts} parts"
    record = mpiexec_json(2, "count", store, "--backend", "cpu", "--resume")
    assert record["triangles"] == 1000 * 999 * 998 // 6
    assert record["resumed_parts"] == finished
    assert sum(len(s["parts"]) for s in record["rank_stats"]) == parts - finished
    again = mpiexec_json(1, "count", store, "--backend", "cpu", "--resume")
    assert (again["triangles"], again["resumed_parts"]) == (record["triangles"], parts)
    assert not (tmp_path / "parts.h5.lock").exists()  # a lock left by a killed run is taken over and removed


@pytest.mark.parametrize("schedule", ["static", "dynamic"])
def test_per_vertex_under_ranks_equals_one_process(tmp_path, cli, schedule):
    """Each rank credits the vertices of its parts; rank 0 reduces the uint64 arrays and writes."""
    alone = tmp_path / "alone.csv"
    assert cli("count", GRAPH, "--backend", "cpu", "--per-vertex", alone).code == 0
    ranked = tmp_path / "ranked.csv"
    result = mpiexec(3, "count", GRAPH, "--backend", "cpu", "-P", "5", "--schedule", schedule, "--per-vertex", ranked)
    assert result.returncode == 0, result.stderr
    assert ranked.read_bytes() == alone.read_bytes()


@pytest.mark.parametrize("ranks,schedule", [(2, "static"), (3, "dynamic")])
def test_per_edge_under_ranks_equals_one_process(tmp_path, cli, ranks, schedule):
    """Each rank sums the edge credits of its parts by edge; rank 0 sums the ranks' and writes."""
    alone = tmp_path / "alone.csv"
    assert cli("count", GRAPH, "--backend", "cpu", "--per-edge", alone).code == 0
    ranked = tmp_path / "ranked.csv"
    record = mpiexec_json(ranks, "count", GRAPH, "--backend", "cpu", "-P", "5", "--schedule", schedule,
                          "--per-edge", ranked, "--per-vertex", tmp_path / "vertices.csv")
    assert record["triangles"] == 727_044 and record["kernel"] == "per-vertex (marker), per-edge (marker)"
    check_parts(record, 5)
    assert ranked.read_bytes() == alone.read_bytes()
    rows = alone.read_text().splitlines()
    assert rows[0] == "u,v,triangles" and len(rows) == 1 + record["m"]
    assert sum(int(row.rsplit(",", 1)[1]) for row in rows[1:]) == 3 * 727_044


@pytest.mark.parametrize("schedule", ["static", "dynamic"])
def test_sliced_parts_under_ranks_equal_one_process(tmp_path, cli, schedule):
    """Parts over the limit, each counted in slices on the rank that takes it (a dynamic queue's
    next part claimed only when the last slice of the one before is done): the total, each part's
    slices and every vertex's triangles are those of one process without a limit."""
    alone = tmp_path / "alone.csv"
    assert cli("count", GRAPH, "--backend", "cpu", "--per-vertex", alone).code == 0
    ranked = tmp_path / "ranked.csv"
    record = mpiexec_json(3, "count", GRAPH, "--backend", "cpu", "-P", "4", "--schedule", schedule,
                          "--gpu-memory-limit", "1MiB", "--per-vertex", ranked)
    assert record["triangles"] == 727_044 and all(p["slices"] > 1 for p in record["part_stats"])
    assert record["slices"] == sum(p["slices"] for p in record["part_stats"])
    check_parts(record, 4)
    assert ranked.read_bytes() == alone.read_bytes()


def test_parts_auto_under_ranks_plans_the_same_parts(cli):
    alone = cli("count", GRAPH, "--backend", "cpu", "--parts", "auto", "--gpu-memory-limit", "2MiB", "--json").json()
    ranked = mpiexec_json(2, "count", GRAPH, "--backend", "cpu", "--parts", "auto", "--gpu-memory-limit", "2MiB")
    assert (ranked["triangles"], ranked["parts"], ranked["memory_budget"]) == (727_044, alone["parts"], 2 << 20)


FAULTS = """\
import json, sys
import numpy as np
from mpi4py import MPI
import tcdist
from tcdist.errors import InputError
from tcdist.partition import store

rank, fault, out = MPI.COMM_WORLD.rank, sys.argv[2], sys.argv[3]
fetched = []
part = store.Store.part

def counted_part(self, i):
    fetched.append(i)
    if fault == "rank 0 fails" and rank == 0:
        raise InputError(self.path, f"part {i} is corrupt (injected)")
    return part(self, i)

store.Store.part = counted_part
if fault == "no memory on rank 1" and rank == 1:
    zeros = np.zeros
    np.zeros = lambda shape, dtype=float, **k: (_ for _ in ()).throw(MemoryError()) \\
        if dtype is np.uint64 and shape == 36692 - 1 else zeros(shape, dtype, **k)
try:
    tcdist.count_triangles(sys.argv[1], backend="cpu", schedule="dynamic", per_vertex=True,
                           comm=MPI.COMM_WORLD)
    outcome = "counted"
except (tcdist.TcdistError, MemoryError) as e:
    outcome = f"{type(e).__name__}: {e}"
open(f"{out}/{rank}.json", "w").write(json.dumps([rank, len(fetched), outcome]))
"""


@pytest.mark.parametrize("fault", ["rank 0 fails", "no memory on rank 1"])
def test_a_fault_on_one_rank_ends_every_rank_at_once(tmp_path, fault):
    """Rank 0's scheduler waited for every rank to leave the queue before telling them it had
    failed, so they counted every remaining part first; a per-vertex array that could not be
    allocated on one rank left the others waiting in a collective for ever."""
    stored = tmp_path / "s.h5"
    assert mpiexec(1, "partition", GRAPH, "-o", stored, "-P", 40).returncode == 0
    script = tmp_path / "faults.py"
    script.write_text(FAULTS)
    command = [*launcher(), "-n", "3", sys.executable, str(script), str(stored), fault, str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = sorted(json.loads(p.read_text()) for p in tmp_path.glob("[0-9].json"))
    assert len(rows) == 3 and all(outcome != "counted" for _, _, outcome in rows), rows
    if fault == "rank 0 fails":
        assert all("part" in outcome and "injected" in outcome for _, _, outcome in rows), rows
        assert all(fetched <= 3 for _, fetched, _ in rows), rows  # 40 parts: nobody went on counting
    else:
        assert [outcome.split(":")[0] for _, _, outcome in rows] == ["RemoteError", "MemoryError", "RemoteError"]


def test_the_ranks_waiting_for_rank_0_make_their_kernel_ready_meanwhile():
    """A CPU rank loaded its compiled check and kernel only when its first part reached it, after
    waiting for rank 0's read, build and partitioning (0.6-0.8 s later than rank 0 on two cores).
    (Parts asked for: rank 0 reads alone.)"""
    record = mpiexec_json(3, "count", GRAPH, "--backend", "cpu", "--parts", 3)
    assert record["triangles"] == 727_044
    assert [s["timings"]["compile_overlapped"] > 0 for s in record["rank_stats"]] == [False, True, True]


NOT_READY = """\
import json, sys
from mpi4py import MPI
import tcdist
from tcdist.device.cpu import CpuDevice

rank = MPI.COMM_WORLD.rank
if rank == 1:
    def not_ready(self):
        raise tcdist.TcdistError("the kernel cannot be made ready here (injected)")
    CpuDevice.ready_while_waiting = not_ready
try:
    tcdist.count_triangles(sys.argv[1], backend="cpu", parts=4, store=f"{sys.argv[2]}/s.h5", comm=MPI.COMM_WORLD)
    outcome = "counted"
except tcdist.TcdistError as e:
    outcome = f"{type(e).__name__}: {e}"
open(f"{sys.argv[2]}/{rank}.json", "w").write(json.dumps(outcome))
"""


def test_a_rank_failing_while_rank_0_prepares_ends_every_rank_and_leaves_nothing(tmp_path):
    """Rank 0's step succeeded (the store locked) when another rank's failure reached it: every rank
    ends with that error, and no lock is left."""
    script = tmp_path / "not_ready.py"
    script.write_text(NOT_READY)
    done = subprocess.run([*launcher(), "-n", "3", sys.executable, str(script), str(GRAPH), str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    outcomes = [json.loads((tmp_path / f"{rank}.json").read_text()) for rank in range(3)]
    assert outcomes[1] == "TcdistError: the kernel cannot be made ready here (injected)"
    assert all(o.startswith("RemoteError: rank 1 (") and o.endswith("injected)") for o in outcomes[::2]), outcomes
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0.json", "1.json", "2.json", "not_ready.py"]


_WAITING = """
import resource, sys, time
from mpi4py import MPI
from tcdist.ranks.guard import collective, independently

def cpu_seconds():
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime

comm = MPI.COMM_WORLD
slow = lambda: time.sleep(2.0) if comm.rank == 0 else None
t0 = cpu_seconds()
collective(comm, slow, root_only=True)  # the others wait for rank 0's reading and building
t1 = cpu_seconds()
independently(comm, lambda check: slow())  # the others, done counting, wait for rank 0 to be
with open(f"{sys.argv[1]}/rank{comm.rank}", "w") as f:  # (ranks' lines on one stdout may interleave)
    f.write(f"{t1 - t0} {cpu_seconds() - t1}")
"""


def test_ranks_waiting_for_another_take_no_core(tmp_path):
    """MPI's blocking calls poll: ranks waiting in one for rank 0 (while it read and built the graph,
    or counted its last part) each took a whole core from the ranks of their host still working.
    Rank 0 sleeps 2 s in each; the others' CPU time while they wait stays near zero (2.0 s before)."""
    script = tmp_path / "waiting.py"
    script.write_text(_WAITING)
    done = subprocess.run([*launcher(), "-n", "3", sys.executable, str(script), str(tmp_path)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    used = {rank: [float(s) for s in (tmp_path / f"rank{rank}").read_text().split()] for rank in (1, 2)}
    assert all(a < 0.5 and b < 0.5 for a, b in used.values()), used


@pytest.mark.parametrize("ranks,cliques,schedule", [(2, 1, "static"), (3, 1, "dynamic"), (4, 2, "static")])
def test_a_store_asked_for_under_ranks_is_written_by_rank_0_from_the_parts_the_ranks_build(tmp_path, cli, ranks,
                                                                                           cliques, schedule):
    """Each rank builds its parts from the shared graph, sends them to rank 0 and counts them; rank
    0 writes them into the store: the same file one process writes (its root digest covers every
    part), none read back, nothing else left; the store then counts the same."""
    assert cli("count", GRAPH, "--backend", "cpu", "-P", 7, "--store", tmp_path / "one.h5").code == 0
    env = {**os.environ, "MPIR_CVAR_NUM_CLIQUES": str(cliques)}
    record = mpiexec_json(ranks, "count", GRAPH, "--backend", "cpu", "-P", 7, "--store", "ranked.h5", "--schedule",
                          schedule, "--resume", cwd=tmp_path, env=env)
    assert (record["triangles"], record["mode"], record["store"]) == (727044, "parts", str(tmp_path / "ranked.h5"))
    check_parts(record, 7)
    assert [s["read_bytes"] for s in record["rank_stats"]][1:] == [0] * (ranks - 1)
    assert any("nothing to resume" in w for w in record["warnings"])
    with h5py.File(tmp_path / "one.h5") as one, h5py.File(tmp_path / "ranked.h5") as ranked:
        assert ranked.attrs["digest"] == one.attrs["digest"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one.h5", "one.h5.journal", "ranked.h5"]
    again = mpiexec_json(2, "count", tmp_path / "ranked.h5", "--backend", "cpu")
    assert (again["triangles"], again["parts"]) == (727044, 7)


GATHER_FAULT = """\
import json, sys
from mpi4py import MPI
import tcdist
from tcdist.partition.store import StoreWriter
from tcdist.ranks import gather, own_parts, run

rank, failing, at, out, step = MPI.COMM_WORLD.rank, int(sys.argv[1]), int(sys.argv[5]), sys.argv[2], sys.argv[6]
built, added, made = own_parts.OwnParts._built, StoreWriter.add, []

def failing_part(self, index):
    made.append(index)
    if rank == failing and len(made) == at:
        raise tcdist.TcdistError(f"part {index} cannot be built (injected)")
    return built(self, index)

def failing_write(self, part):
    made.append(part.index)
    if len(made) == at:
        raise tcdist.TcdistError(f"part {part.index} cannot be written (injected)")
    return added(self, part)

def failing_open(*args):
    raise tcdist.TcdistError("the store's gather cannot open here (injected)")

if step == "build":
    own_parts.OwnParts._built = failing_part
elif step == "open":  # rank 0 has begun the file when another rank fails
    if rank == failing:
        gather._open_end = failing_open
else:
    StoreWriter.add = failing_write
try:
    tcdist.count_triangles(sys.argv[3], backend="cpu", parts=9, store=f"{out}/s.h5", schedule=sys.argv[4],
                           comm=MPI.COMM_WORLD)
    outcome = "counted"
except tcdist.TcdistError as e:
    outcome = str(e)
open(f"{out}/{rank}.json", "w").write(json.dumps([rank, outcome]))
"""


@pytest.mark.parametrize("failing,schedule,at,step", [(0, "static", 2, "build"), (2, "dynamic", 1, "build"),
                                                       (0, "dynamic", 4, "write"), (1, "static", 1, "open")])
# (a queue may give one part)
def test_a_rank_failing_while_the_ranks_write_a_store_leaves_no_file(tmp_path, failing, schedule, at, step):
    """A rank fails to build a part while the others send theirs to rank 0, or rank 0 fails to
    write one, or a rank fails as the gather opens (rank 0's writing thread, begun, then probed a
    freed communicator: Open MPI aborted the job): every rank ends with the error, in seconds (no
    rank left waiting to send), and neither the store nor its partial write is left."""
    script = tmp_path / "fault.py"
    script.write_text(GATHER_FAULT)
    command = [*launcher(), "-n", "3", sys.executable, str(script), str(failing), str(tmp_path), str(GRAPH), schedule,
               str(at), step]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 60
    rows = sorted(json.loads(p.read_text()) for p in tmp_path.glob("[0-9].json"))
    assert len(rows) == 3 and all("injected" in outcome for _, outcome in rows), rows
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0.json", "1.json", "2.json", "fault.py"]


def test_one_process_under_a_launcher_counts_as_one_process_does_without_starting_mpi(tmp_path):
    """mpirun -n 1 cost 1.2 s over one process on nvidia-h200-x4: MPI's start and the ranks' run
    path for a world of one. A launcher's single process now runs as a process of its own."""
    script = tmp_path / "one.py"
    script.write_text("import sys\nfrom tcdist.cli import main\ncode = main(sys.argv[1:])\n"
                      "print('mpi started', 'mpi4py.MPI' in sys.modules, file=sys.stderr)\nsys.exit(code)\n")
    done = subprocess.run([*launcher(), "-n", "1", sys.executable, str(script), "count", GRAPH, "--backend", "cpu",
                           "--json"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["triangles"] == published(GRAPH.name) and record["ranks"] == 1 == len(record["rank_stats"])
    assert "mpi started False" in done.stderr
