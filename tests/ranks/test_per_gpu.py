"""Ranks that share a GPU (ranks/per_gpu.py), under a real mpiexec without one: each rank is told
it would bind the GPU of its node-local rank among `gpus` (a bus id of our making), and counts on
the CPU where it counts at all. The GPU tests (test_ranks_gpu.py) run the same on real GPUs."""

import json
import subprocess
import sys

import pytest
from conftest import DATASETS
from mpi_launch import launcher, makes_cliques

pytestmark = pytest.mark.mpi

GRAPH = DATASETS / "email-Enron.txt.gz"

_SEATED = """
import os, sys
os.environ["NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING"] = "1"
from tcdist.ranks import per_gpu
from tcdist.ranks.comm import node_local

gpus = int(sys.argv.pop(1))
per_gpu.seat = lambda backend, local_rank: (local_rank % gpus, f"0000:{local_rank % gpus:02x}:00.0")
from tcdist.cli import main
sys.exit(main(sys.argv[1:]))
"""


def seated(tmp_path, ranks, gpus, *args, env=None):
    script = tmp_path / "seated.py"
    script.write_text(_SEATED)
    return subprocess.run([*launcher(), "-n", str(ranks), sys.executable, str(script), str(gpus), "count", *map(str, args)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)


@pytest.mark.parametrize("ranks,gpus,per_gpu,counting", [(3, 1, 1, [0]), (4, 2, 1, [0, 1]), (3, 1, 2, [0, 1]),
                                                         (4, 2, 2, [0, 1, 2, 3])])
def test_the_first_ranks_on_a_gpu_count_and_the_others_wait(tmp_path, ranks, gpus, per_gpu, counting):
    done = seated(tmp_path, ranks, gpus, GRAPH, "--backend", "cpu", "--ranks-per-gpu", per_gpu, "--json")
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["triangles"] == 727044 and record["ranks"] == ranks
    assert [s["rank"] for s in record["rank_stats"]] == list(range(ranks))
    waited = [s["rank"] for s in record["rank_stats"] if s["counted_by"] is not None]
    assert waited == [r for r in range(ranks) if r not in counting]
    for s in record["rank_stats"]:
        if s["counted_by"] is not None:  # the first rank on its GPU counted; this one held no device
            assert s["counted_by"] == s["rank"] % gpus and s["parts"] == [] and s["triangles"] == 0
            assert s["gpu_bus_id"] == f"0000:{s['rank'] % gpus:02x}:00.0"
    assert sum(s["triangles"] for s in record["rank_stats"]) == 727044
    assert (f"rank{'s' * (len(waited) > 1)} {', '.join(map(str, waited))} waited" in done.stderr) == bool(waited)
    assert ("--ranks-per-gpu" in done.stderr) == bool(waited)


@pytest.mark.skipif(not makes_cliques(), reason="needs MPICH's cliques to make two nodes")
def test_each_node_counts_on_its_own_gpus(tmp_path):
    """Two "nodes" (MPICH's cliques: ranks 0 and 2 on one, 1 and 3 on the other), each with one
    GPU: ranks 0 and 1 count, the first of their nodes, and share the graph between nodes."""
    import os

    env = {**os.environ, "MPIR_CVAR_NUM_CLIQUES": "2"}
    done = seated(tmp_path, 4, 1, GRAPH, "--backend", "cpu", "--json", env=env)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["triangles"] == 727044 and record["mode"] == "replicated"
    assert [s["counted_by"] for s in record["rank_stats"]] == [None, None, 0, 1]
    assert [bool(s["parts"]) for s in record["rank_stats"]] == [True, True, False, False]


def test_a_failed_count_ends_the_ranks_that_wait_too(tmp_path):
    """Bad input: the rank that counts says it once, and every rank ends with status 2 (none waits on)."""
    bad = tmp_path / "bad.txt"
    bad.write_text("1 2\n2 x\n")
    done = seated(tmp_path, 3, 1, bad, "--backend", "cpu")
    assert done.returncode == 2, done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("tcdist")]
    assert len(said) == 1 and said[0].startswith(f"tcdist: error: {bad}:2: ")
