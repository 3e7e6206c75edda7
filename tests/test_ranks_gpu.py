"""Ranks on GPUs: each rank binds the GPU of its node-local rank, and the counts add up.

Run on a GPU host with ``pytest -m "gpu or mpi"`` (TCDIST_MPIEXEC names the host's mpirun).
"""

import os

import pytest
from conftest import DATASETS
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
    record = mpiexec_json(ranks, "count", "rmat:16", "--backend", "gpu", "-P", 2 * ranks)
    assert record["triangles"] == expected
    assert [s["gpu"] for s in record["rank_stats"]] == [r % len(gpus) for r in range(ranks)]
    assert [s["gpu_bus_id"] for s in record["rank_stats"]] == [gpus[r % len(gpus)] for r in range(ranks)]


def test_cuda_visible_devices_is_respected(gpus, expected):
    """The ranks see only the last GPU this process sees (its id as CUDA_VISIBLE_DEVICES names it,
    when this process runs under one too)."""
    last = len(gpus) - 1
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", ",".join(map(str, range(len(gpus))))).split(",")
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": visible[last]}
    record = mpiexec_json(2, "count", "rmat:16", "--backend", "gpu", "-P", 4, env=env)
    assert record["triangles"] == expected
    assert [s["gpu_bus_id"] for s in record["rank_stats"]] == [gpus[last]] * 2


def test_a_store_counted_by_gpu_ranks_equals_cpu_ranks(tmp_path, gpus):
    store = tmp_path / "parts.h5"
    on_gpu = mpiexec_json(len(gpus), "count", "rmat:15", "--backend", "gpu", "-P", 6, "--store", store,
                          "--scheme", "metis")
    on_cpu = mpiexec_json(2, "count", store, "--backend", "cpu", "--schedule", "dynamic")
    assert on_gpu["triangles"] == on_cpu["triangles"] and on_cpu["parts"] == 6


@pytest.mark.parametrize("schedule", ["static", "dynamic"])
def test_per_vertex_on_gpu_ranks_equals_one_cpu_process(tmp_path, cli, gpus, schedule):
    """Each GPU rank credits the vertices of its parts (cuda/per_vertex.cu); rank 0 reduces."""
    graph = DATASETS / "email-Enron.txt.gz"
    alone = tmp_path / "alone.csv"
    assert cli("count", graph, "--backend", "cpu", "--per-vertex", alone).code == 0
    ranked = tmp_path / "ranked.csv"
    result = mpiexec(max(len(gpus), 2), "count", graph, "--backend", "gpu", "-P", 5, "--schedule", schedule,
                     "--per-vertex", ranked)
    assert result.returncode == 0, result.stderr
    assert ranked.read_bytes() == alone.read_bytes()
