"""Ranks on GPUs: each rank binds the GPU of its node-local rank, and the counts add up.

Run on a GPU host with ``pytest -m "gpu or mpi"`` (TCDIST_MPIEXEC names the host's mpirun).
"""

import json
import os
import re
import subprocess
import sys

import pytest
from conftest import DATASETS, FreshCudaCache, run_module
from mpi_launch import mpiexec, mpiexec_json

import tcdist

pytestmark = [pytest.mark.gpu, pytest.mark.mpi]


@pytest.fixture(scope="module")
def gpus():
    import cupy

    count = cupy.cuda.runtime.getDeviceCount()
    assert count > 0, "no CUDA device"
    return [cupy.cuda.Device(i).pci_bus_id for i in range(count)]


@pytest.fixture(scope="module")
def expected():
    graph = tcdist.load_graph("rmat:16")
    return tcdist.count_triangles(graph, backend="cpu").triangles


@pytest.mark.parametrize("schedule", ["static", "dynamic"])
def test_every_rank_binds_the_gpu_of_its_node_local_rank(gpus, expected, schedule):
    ranks = len(gpus)
    record = mpiexec_json(ranks, "count", "rmat:16", "--backend", "gpu", "-P", 2 * ranks, "--schedule", schedule)
    assert record["triangles"] == expected and record["backend"] == "gpu"
    assert [s["gpu"] for s in record["rank_stats"]] == list(range(ranks))
    assert [s["gpu_bus_id"] for s in record["rank_stats"]] == gpus  # each rank on its own device
    if ranks > 1:  # parts read from the store are copied (one rank alone counts them from GPU memory)
        assert all(s["timings"]["transfer"] + s["timings"]["transfer_overlapped"] > 0
                   for s in record["rank_stats"] if s["parts"])


@pytest.mark.parametrize("per_gpu", [1.5, 2], ids=["one-more", "two-per-gpu"])
def test_more_ranks_than_gpus_share_them_round_robin(gpus, expected, per_gpu):
    ranks = max(int(per_gpu * len(gpus)), len(gpus) + 1)
    record = mpiexec_json(ranks, "count", "rmat:16", "--backend", "gpu", "-P", 2 * ranks, "--ranks-per-gpu", 2)
    assert record["triangles"] == expected
    assert [s["gpu"] for s in record["rank_stats"]] == [r % len(gpus) for r in range(ranks)]
    assert [s["gpu_bus_id"] for s in record["rank_stats"]] == [gpus[r % len(gpus)] for r in range(ranks)]
    assert all(s["counted_by"] is None and s["parts"] for s in record["rank_stats"])


_CONTEXTS = """
import ctypes, sys
from mpi4py import MPI
from tcdist.cli import main

code = main(sys.argv[1:])
cuda, device, flags, active = ctypes.CDLL("libcuda.so.1"), ctypes.c_int(), ctypes.c_uint(), ctypes.c_int()
assert cuda.cuInit(0) == 0 and cuda.cuDeviceGet(ctypes.byref(device), 0) == 0
assert cuda.cuDevicePrimaryCtxGetState(device, ctypes.byref(flags), ctypes.byref(active)) == 0
print("context", MPI.COMM_WORLD.rank, active.value, file=sys.stderr, flush=True)
sys.exit(code)
"""


def test_ranks_past_one_per_gpu_wait_without_a_cuda_context(tmp_path, gpus, expected):
    """Three ranks on the last GPU: rank 0 counts as one process does; ranks 1 and 2 wait and never
    start a CUDA context there (four ranks sharing one H100 took 1.4-1.8x one process's time)."""
    from mpi_launch import launcher

    script = tmp_path / "contexts.py"
    script.write_text(_CONTEXTS)
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", ",".join(map(str, range(len(gpus))))).split(",")
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": visible[-1]}
    done = subprocess.run([*launcher(), "-n", "3", sys.executable, str(script), "count", "rmat:16", "--backend", "gpu",
                           "--json"], capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["triangles"] == expected and record["mode"] == "whole" and record["ranks"] == 3
    assert [s["counted_by"] for s in record["rank_stats"]] == [None, 0, 0]
    assert [s["gpu_bus_id"] for s in record["rank_stats"]] == [gpus[-1]] * 3
    assert "ranks 1, 2 waited" in done.stderr and "--ranks-per-gpu" in done.stderr
    contexts = sorted(re.findall(r"context \d \d", done.stderr))  # (mpirun may join two ranks' lines in one)
    assert contexts == ["context 0 1", "context 1 0", "context 2 0"]


@pytest.mark.parametrize("schedule", ["static", "dynamic"])
def test_gpu_ranks_sharing_a_graph_compile_nothing_that_one_process_does_not(tmp_path, gpus, schedule):
    """Ranks that each hold the whole graph (their shares estimated where it lies on rank 0's GPU,
    then copied to each rank's) run only programs that one process's count of the same file runs:
    any other is compiled on a fresh host and loaded by every rank (the estimate's CuPy array
    operations took 0.5-0.8 s of rank 0's start on RMAT-26, every cache warm)."""
    path = tmp_path / "g.h5"
    assert run_module("convert", "rmat:16", path).returncode == 0
    cache = FreshCudaCache(tmp_path)
    alone = run_module("count", path, "--backend", "gpu", "--json", env=cache.env)
    assert alone.returncode == 0, alone.stderr
    programs = cache.programs()
    ranked = mpiexec_json(2, "count", path, "--backend", "gpu", "--schedule", schedule, "--ranks-per-gpu", 2,
                          env=cache.env)
    assert ranked["mode"] == "replicated" and ranked["triangles"] == json.loads(alone.stdout)["triangles"]
    assert not cache.kernels(cache.programs() - programs)
    assert cache.programs() == programs


def test_cuda_visible_devices_is_respected(gpus, expected):
    """The ranks see only the last GPU this process sees (its id as CUDA_VISIBLE_DEVICES names it,
    when this process runs under one too)."""
    last = len(gpus) - 1
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", ",".join(map(str, range(len(gpus))))).split(",")
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": visible[last]}
    record = mpiexec_json(2, "count", "rmat:16", "--backend", "gpu", "-P", 4, env=env)
    assert record["triangles"] == expected
    assert [s["gpu_bus_id"] for s in record["rank_stats"]] == [gpus[last]] * 2


def test_a_store_counted_by_gpu_ranks_equals_cpu_ranks(tmp_path, cli, gpus):
    """GPU ranks (at least two, sharing a GPU where there is one) build their parts and rank 0
    writes them into the store: the file one process writes; CPU ranks then count it the same."""
    import h5py

    store = tmp_path / "parts.h5"
    on_gpu = mpiexec_json(max(2, len(gpus)), "count", "rmat:15", "--backend", "gpu", "-P", 6, "--store", store,
                          "--scheme", "metis", "--ranks-per-gpu", 2)
    assert cli("count", "rmat:15", "--backend", "cpu", "-P", 6, "--store", tmp_path / "one.h5", "--scheme",
               "metis").code == 0
    with h5py.File(store) as ranked, h5py.File(tmp_path / "one.h5") as one:
        assert ranked.attrs["digest"] == one.attrs["digest"]
    on_cpu = mpiexec_json(2, "count", store, "--backend", "cpu", "--schedule", "dynamic")
    assert on_gpu["triangles"] == on_cpu["triangles"] and on_cpu["parts"] == 6


@pytest.mark.parametrize("option", ["--per-vertex", "--per-edge"])
@pytest.mark.parametrize("schedule", ["static", "dynamic"])
def test_per_vertex_and_per_edge_on_gpu_ranks_equal_one_cpu_process(tmp_path, cli, gpus, schedule, option):
    """Each GPU rank credits the vertices (cuda/per_vertex.cu) or edges (cuda/per_edge.cu) of its
    parts; rank 0 reduces."""
    graph = DATASETS / "email-Enron.txt.gz"
    alone = tmp_path / "alone.csv"
    assert cli("count", graph, "--backend", "cpu", option, alone).code == 0
    ranked = tmp_path / "ranked.csv"
    result = mpiexec(max(len(gpus), 2), "count", graph, "--backend", "gpu", "-P", 5, "--schedule", schedule,
                     "--ranks-per-gpu", 2, option, ranked)
    assert result.returncode == 0, result.stderr
    assert ranked.read_bytes() == alone.read_bytes()


@pytest.mark.parametrize("schedule", ["static", "dynamic"])
@pytest.mark.parametrize("form", ["text", "h5"])
def test_gpu_ranks_share_a_graph_that_fits_and_count_as_one_process(tmp_path, cli, gpus, schedule, form):
    """Four ranks (sharing the GPUs there are): the graph read once and shared, each rank counting
    its shares of the rows as slices; no store. Counts and every vertex's triangles are one CPU
    process's, from text (built by rank 0) and from tcdist's HDF5 (read built, no degree summary)."""
    graph = DATASETS / "soc-Epinions1.txt.gz"
    if form == "h5":
        assert cli("convert", graph, tmp_path / "graph.h5").code == 0
        graph = tmp_path / "graph.h5"
    alone = tmp_path / "alone.csv"
    done = cli("count", graph, "--backend", "cpu", "--per-vertex", alone, "--json")
    assert done.code == 0
    ranked = tmp_path / "ranked.csv"
    record = mpiexec_json(4, "count", graph, "--backend", "gpu", "--schedule", schedule, "--per-vertex", ranked,
                          "--ranks-per-gpu", 4, cwd=tmp_path)
    assert record["mode"] == "replicated" and record["store"] is None
    assert ranked.read_bytes() == alone.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["alone.csv", "ranked.csv", *["graph.h5"] * (form == "h5")])
    counted = mpiexec_json(4, "count", graph, "--backend", "gpu", "--schedule", schedule, "--ranks-per-gpu", 4,
                           cwd=tmp_path)
    assert counted["mode"] == "replicated" and counted["triangles"] == json.loads(done.out)["triangles"]
    # built on rank 0's GPU (text) or uploaded by it (h5): every rank opens it there, none receives bytes
    assert [(r["graph_via"], r["received_bytes"]) for r in counted["rank_stats"]] == [("gpu", 0)] * 4


_SPIED = """
import os, sys
os.environ["NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING"] = "1"  # as main() sets it, before numba is imported here
from mpi4py import MPI
from tcdist.device import staging
from tcdist.ranks import share

from tcdist import xp
staging.REGISTER_FROM = xp.REGISTER_FROM = 0  # the graph's pages registered, however small
events, unregister, free = [], staging.unregister_pages, share.SharedArrays.close

def unregistering(starts):
    events.append(("unregistered", starts or []))
    unregister(starts)

def freeing(self):
    held = [a for a in self.arrays.values() if a.size]
    events.append(("freed", min(a.ctypes.data for a in held) // 4096 * 4096, max(a.ctypes.data + a.nbytes for a in held)))
    free(self)

staging.unregister_pages, share.SharedArrays.close = unregistering, freeing
from tcdist.cli import main
try:
    main(sys.argv[1:])
finally:
    _, low, high = next((e for e in events if e[0] == "freed"), (None, 0, 0))
    said = ["window freed" if e[0] == "freed" else "its pages unregistered" for e in events
            if e[0] == "freed" or any(low <= start < high for start in e[1])]
    print("events", MPI.COMM_WORLD.rank, said, file=sys.stderr, flush=True)
"""


@pytest.mark.parametrize("schedule", ["static", "dynamic"])
def test_gpu_ranks_over_their_limit_count_slices_of_the_shared_graph_and_unpin_it_before_it_is_freed(
        tmp_path, gpus, expected, schedule):
    """Each rank copies its slices from the node's window, its pages registered; they are let go
    before MPI unmaps the window (after, the registration outlived the memory it named)."""
    from mpi_launch import launcher

    script = tmp_path / "spied.py"
    script.write_text(_SPIED)
    done = subprocess.run([*launcher(), "-n", "2", sys.executable, str(script), "count", "rmat:16", "--backend", "gpu",
                           "--gpu-memory-limit", "4MiB", "--schedule", schedule, "--ranks-per-gpu", "2", "--json"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["triangles"] == expected and record["mode"] == "replicated" and "slices of it" in record["mode_reason"]
    events = sorted(line for line in done.stderr.splitlines() if line.startswith("events"))
    assert events == [f"events {rank} ['its pages unregistered', 'window freed']" for rank in range(2)]


_BROKEN_WARM_UP = """
import sys, time
from mpi4py import MPI
from tcdist.device import gpu
from tcdist.ranks import prepare, run
from tcdist.errors import TcdistError

if MPI.COMM_WORLD.rank == 1:
    def broken(self, per_vertex=False):
        raise TcdistError("the warm-up found this GPU broken")
    gpu.GpuDevice.start_warm_up = lambda self, per_vertex=False, builds=True, per_edge=False: self.warming.start(lambda: broken(self))
else:  # the root partitions for a while: rank 1's warm-up has long failed when it is done
    made = prepare.prepare
    run.prepare = lambda *args: (time.sleep(1.0), made(*args))[1]
count_parts = run.count_parts

def counting(*args, **kwargs):
    print("counting", file=sys.stderr, flush=True)
    return count_parts(*args, **kwargs)

run.count_parts = counting
from tcdist.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_rank_whose_gpu_fails_its_warm_up_stops_the_job_before_any_rank_counts(tmp_path, gpus):
    """Rank 1's warm-up fails on its own thread while the root partitions. Before, it surfaced
    when rank 1 first counted, after the root's partitioning (minutes on a large graph), and every
    rank had started counting; now every rank learns of it once the root is done, and the job
    ends with rank 1's one line."""
    from mpi_launch import launcher

    script = tmp_path / "broken_warm_up.py"
    script.write_text(_BROKEN_WARM_UP)
    job = tmp_path / "job"
    job.mkdir()
    done = subprocess.run([*launcher(), "-n", "2", sys.executable, str(script), "count", "rmat:14", "-P", "4",
                           "--backend", "gpu", "--ranks-per-gpu", "2"], capture_output=True, text=True, timeout=300,
                          cwd=job)
    assert done.returncode == 2, done.stderr
    assert list(job.iterdir()) == []  # nothing left in the working directory
    assert "counting" not in done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("tcdist")]  # not the launcher's banner
    assert len(said) == 1 and re.fullmatch(r"tcdist: error: rank 1 \(.+\): the warm-up found this GPU broken", said[0])


_STREAMED = """
import os, sys
os.environ["NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING"] = "1"  # as main() sets it, before numba is imported here
from mpi4py import MPI
from tcdist import xp
from tcdist.partition import gpu_parts
from tcdist import plan
from tcdist.ranks import run, share

xp.REGISTER_FROM = 0  # the window's arrays registered, however small
refusing = sys.argv.pop(1) == "refuse-second"
events, register, unregister, free = [], gpu_parts.register_pages, gpu_parts.unregister_pages, share.SharedArrays.close

def registering(arrays):
    starts = register(arrays)
    events.append("registered" if starts else "not registered")
    return starts

def unregistering(starts):
    events.append("unregistered" if starts else "none to unregister")
    unregister(starts)

def freeing(self):
    events.append("window freed")
    free(self)

gpu_parts.register_pages, gpu_parts.unregister_pages, share.SharedArrays.close = registering, unregistering, freeing
if refusing:  # each rank's second part refused by the GPU's builder
    chosen, asked = plan.streaming_fits, []
    plan.streaming_fits = lambda device, graph: None if chosen(device, graph) is None else \
        (lambda sizes, held: asked.append(sizes) or len(asked) < 2)
from tcdist.cli import main
try:
    main(sys.argv[1:])
finally:
    print("events", MPI.COMM_WORLD.rank, events, file=sys.stderr, flush=True)
"""


@pytest.mark.parametrize("mode", ["all", "refuse-second"])
def test_ranks_under_a_limit_build_their_parts_on_their_gpu_from_the_shared_graph(tmp_path, expected, mode):
    """Under a limit that the graph (with a part's build and two parts) does not fit but the
    streaming builder's state and a part do, each rank builds its parts on its GPU from the
    shared graph's rows streamed there, the window's pages registered for it and let go of before
    MPI frees the window: no part is copied to the GPU (before, they were built on the host's
    cores and copied). Where the builder refuses a rank's second part, the host builds that part
    and the rest, copied to the GPU, and the count is the same."""
    from mpi_launch import launcher

    script = tmp_path / "streamed.py"
    script.write_text(_STREAMED)
    done = subprocess.run([*launcher(), "-n", "2", sys.executable, str(script), mode, "count", "rmat:16", "--backend",
                           "gpu", "--parts", "4", "--gpu-memory-limit", "16MiB", "--ranks-per-gpu", "2", "--json"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["triangles"] == expected and record["parts"] == 4 and record["mode"] != "replicated"
    copied = {rank: [p["transfer_s"] + p["transfer_overlapped_s"] > 0 for p in record["part_stats"] if p["rank"] == rank]
              for rank in range(2)}
    for rank, each in copied.items():  # a rank's first part built on its GPU, the rest too unless refused
        assert sorted(each) == [False] + [mode != "all"] * (len(each) - 1), rank
    assert any(map(any, copied.values())) == (mode != "all")
    events = sorted(line for line in done.stderr.splitlines() if line.startswith("events"))
    assert events == [f"events {rank} ['registered', 'unregistered', 'window freed']" for rank in range(2)]
