"""slurm/cluster.sh under a real Slurm (slurm/local.sh, which .ci/run starts)."""

import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import DATASETS, REPO

pytestmark = pytest.mark.mpi


@pytest.fixture
def sbatch():
    found = shutil.which("sbatch")
    why = "sbatch not found" if found is None else _controller_down()
    if why:
        if os.environ.get("CI"):
            pytest.fail(f"{why}: .ci/run starts a one-node Slurm with slurm/local.sh")
        pytest.skip(f"{why} (as root, bash slurm/local.sh start brings one up on Debian or Ubuntu)")
    return found


def _controller_down():
    """Why Slurm's controller does not answer, or None (its clients may be installed without one
    running, as after .ci/run stopped it)."""
    try:
        ping = subprocess.run(["scontrol", "ping"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"scontrol ping failed ({e})"
    return None if ping.returncode == 0 and "UP" in ping.stdout else "Slurm's controller does not answer"


def test_sbatch_counts_with_two_ranks(tmp_path, sbatch):
    """With no TCDIST_RESULTS, the records go to tcdist-results/ in the submit folder (not a checkout's results/)."""
    env = {k: v for k, v in os.environ.items() if k != "TCDIST_RESULTS"} | {"TCDIST_PYTHON": sys.executable}
    command = [sbatch, "--wait", "--gpus-per-task=0", f"--output={tmp_path}/slurm-%j.out",
               str(REPO / "slurm" / "cluster.sh"), str(DATASETS / "email-Enron.txt.gz"), "--backend", "cpu",
               "--parts", "3", "--schedule", "dynamic"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)
    logs = "".join(p.read_text() for p in tmp_path.glob("slurm-*.out"))
    assert result.returncode == 0, result.stderr + logs
    assert not (tmp_path / "results").exists()
    (record_file,) = (tmp_path / "tcdist-results").glob("tcdist-*.json")
    record = json.loads(record_file.read_text())
    assert (record["triangles"], record["ranks"], record["parts"]) == (727044, 2, 3)
    assert len({s["rank"] for s in record["rank_stats"]}) == 2
    summary = record_file.with_suffix(".txt").read_text()
    assert "triangles  727,044" in summary and "2 rank(s)" in summary


def test_srun_without_pmi_is_refused_not_counted_twice(sbatch):
    """srun --mpi=none starts unconnected processes, each a world of one: refuse, do not count R times."""
    srun = shutil.which("srun")
    command = [srun, "-n", "2", "--mpi=none", sys.executable, "-m", "tcdist", "count", "complete:5", "--backend", "cpu"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 2
    assert "srun started 2 tasks but MPI sees each as a world of 1" in result.stderr
    assert "triangles" not in result.stdout


def test_scancel_ends_every_rank_and_removes_the_temporaries(tmp_path, sbatch):
    """scancel (and a time limit) sends SIGTERM to the job's ranks: they end within seconds, the
    store's partial write is removed, and the log says why."""
    import time

    env = {**os.environ, "TCDIST_RESULTS": str(tmp_path / "results"), "TCDIST_PYTHON": sys.executable}
    command = [sbatch, "--parsable", "--gpus-per-task=0", f"--chdir={tmp_path}", f"--output={tmp_path}/slurm-%j.out",
               str(REPO / "slurm" / "cluster.sh"), "rmat:18", "--backend", "cpu", "--parts", "8", "--threads", "1",
               "--store", str(tmp_path / "parts.h5")]
    submitted = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)
    assert submitted.returncode == 0, submitted.stderr
    job = submitted.stdout.strip().split(";")[0]

    def temporaries():
        return [p.name for p in tmp_path.iterdir() if ".parts.h5.tmp-" in p.name]

    def running():
        state = subprocess.run(["squeue", "-h", "-j", job, "-o", "%T"], capture_output=True, text=True, timeout=30)
        return state.stdout.strip()

    deadline = time.monotonic() + 300
    while not temporaries():
        assert running() in ("PENDING", "RUNNING", "CONFIGURING"), "the job ended before it wrote its store"
        assert time.monotonic() < deadline, "the job began no store in 300 s"
        time.sleep(0.05)
    subprocess.run(["scancel", job], check=True, timeout=30)
    sent = time.monotonic()
    while running():
        assert time.monotonic() - sent < 10, "the job outlived scancel by 10 s"
        time.sleep(0.1)
    log = "".join(p.read_text() for p in tmp_path.glob("slurm-*.out"))
    assert "tcdist: stopped by SIGTERM (temporary files removed)" in log, log
    assert "Traceback" not in log, log
    assert temporaries() == []


def test_a_job_on_two_nodes_shares_the_graph_once_per_node(tmp_path, sbatch):
    """The job script on two "nodes" (MPICH's cliques: two ranks each that share memory, as two
    hosts would): the gzip stream is inflated once on each node, whose first rank deals its lines
    out to the node's ranks; the graph they build together, which fits, is received once by the
    other node from rank 0, shared by the ranks of each, and counted exactly."""
    env = {**os.environ, "TCDIST_RESULTS": str(tmp_path / "results"), "TCDIST_PYTHON": sys.executable,
           "MPIR_CVAR_NUM_CLIQUES": "2"}
    command = [sbatch, "--wait", "--nodes=1", "--ntasks=4", "--overcommit", "--gpus-per-task=0", f"--chdir={tmp_path}",
               f"--output={tmp_path}/slurm-%j.out", str(REPO / "slurm" / "cluster.sh"),
               str(DATASETS / "email-Enron.txt.gz"), "--backend", "cpu"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
    logs = "".join(p.read_text() for p in tmp_path.glob("slurm-*.out"))
    assert result.returncode == 0, result.stderr + logs
    (record_file,) = (tmp_path / "results").glob("tcdist-*.json")
    record = json.loads(record_file.read_text())
    assert (record["triangles"], record["ranks"], record["mode"]) == (727044, 4, "replicated")
    assert sum(s["read_bytes"] > 0 for s in record["rank_stats"]) == 2  # one reader a node
    assert sum(s["received_bytes"] > 0 for s in record["rank_stats"]) == 1  # one copy for the other node
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results", *sorted(p.name for p in tmp_path.glob("slurm-*"))]
