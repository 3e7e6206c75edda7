"""A signal ends the whole MPI job: SIGINT or SIGTERM to the launcher or to any one rank, while
rank 0 reads, writes the store asked for or while the ranks count, ends every rank within 10 s
with the signal's exit status, and leaves no temporary file behind."""

import os
import re
import signal
import subprocess
import sys
import time

import pytest
from mpi_launch import launcher, mpiexec

pytestmark = pytest.mark.mpi

WITHIN_S = 10
_RANK_VARIABLES = (b"PMI_RANK=", b"OMPI_COMM_WORLD_RANK=", b"PMIX_RANK=")


def _parent(pid: str) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def _descends(pid: str, ancestor: int) -> bool:
    while pid not in ("0", "1"):
        pid = str(_parent(pid))
        if int(pid) == ancestor:
            return True
    return False


def _rank_pids(job: subprocess.Popen) -> dict[int, int]:
    """rank -> pid of the job's tcdist processes (read from their environment)."""
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if not _descends(pid, job.pid):
                continue
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"tcdist" not in f.read():
                    continue
            with open(f"/proc/{pid}/environ", "rb") as f:
                variables = f.read().split(b"\0")
        except OSError:
            continue
        for line in variables:
            if line.startswith(_RANK_VARIABLES) and int(pid) != job.pid:
                found[int(line.split(b"=")[1])] = int(pid)
    return found


def _handling(pid: int) -> bool:
    """Whether the process catches SIGTERM (tcdist has installed its handlers)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            caught = next(int(line.split()[1], 16) for line in f if line.startswith("SigCgt:"))
    except (OSError, StopIteration):
        return False
    return bool(caught >> (signal.SIGTERM - 1) & 1)


def _wait_for(ready, job, seconds=120):
    deadline = time.monotonic() + seconds
    while not ready():
        assert job.poll() is None, f"the job ended before the signal: {job.communicate()[1]}"
        assert time.monotonic() < deadline, "the phase to signal in never came"
        time.sleep(0.01)


def _temporaries(folder):
    return [p.name for p in folder.iterdir() if ".tcdist-parts-" in p.name or ".tmp-" in p.name]


CASES = [(phase, target, (signal.SIGINT, signal.SIGTERM)[(i + j) % 2])  # each phase and target, both signals
         for i, phase in enumerate(["read", "store written", "count"])
         for j, target in enumerate(["launcher", "rank 0", "rank 1"])]


@pytest.mark.parametrize("phase,target,signum", CASES)
def test_a_signal_ends_every_rank_and_removes_the_temporaries(tmp_path, phase, target, signum):
    store = tmp_path / "parts.h5"
    if phase == "count":  # a store to count slowly, part by part, journalled as each is done
        assert mpiexec(1, "partition", "complete:1200", "-o", store, "-P", 24).returncode == 0
        args = [store, "--kernel", "merge"]
    else:  # a store asked for, written by rank 0 (without one, each rank builds its own parts in memory)
        args = ["rmat:18", "--parts", 8, "--store", store]
    command = [*launcher(), "-n", "2", sys.executable, "-m", "tcdist", "count", *map(str, args), "--backend", "cpu",
               "--threads", "1", "-q"]
    job = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: len(_rank_pids(job)) == 2 and all(map(_handling, _rank_pids(job).values())), job)
        if phase == "read":
            time.sleep(0.5)  # every rank handles signals; rank 0 generates and builds the graph
        elif phase == "store written":
            _wait_for(lambda: _temporaries(tmp_path), job)
        else:
            journal = tmp_path / "parts.h5.journal"
            _wait_for(lambda: journal.exists() and any(journal.glob("part*.json")), job)
        pid = job.pid if target == "launcher" else _rank_pids(job)[int(target[-1])]
        os.kill(pid, signum)
        sent = time.monotonic()
        _, err = job.communicate(timeout=60)
        took = time.monotonic() - sent
    finally:
        if job.poll() is None:
            job.kill()
    assert took < WITHIN_S, f"the job ran {took:.1f} s after the signal"
    assert job.returncode != 0
    if target == "launcher":  # a launcher may pass on another signal (Open MPI's mpirun: SIGTERM) and drop output
        assert re.fullmatch(r"(tcdist: stopped by SIG(INT|TERM) \(temporary files removed\)\n)*", err), err
    else:
        assert f"tcdist: stopped by {signal.Signals(signum).name} (temporary files removed)" in err, err
    assert "Traceback" not in err, err
    assert _temporaries(tmp_path) == []
    assert not _rank_pids(job), "a rank outlived the job"


def test_a_rank_killed_outright_leaves_temporaries_that_the_next_run_removes(tmp_path):
    """SIGKILL cannot be handled: MPICH then kills the other ranks, and the store's partial write
    stays. It names its host and process, so the next run writing that store removes it, once
    that process is gone, and says so."""
    store = tmp_path / "parts.h5"
    command = [*launcher(), "-n", "2", sys.executable, "-m", "tcdist", "count", "rmat:18", "--parts", "8",
               "--store", str(store), "--backend", "cpu", "--threads", "1", "-q"]
    job = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: len(_rank_pids(job)) == 2 and _temporaries(tmp_path), job)
        os.kill(_rank_pids(job)[0], signal.SIGKILL)
        job.communicate(timeout=60)
    finally:
        if job.poll() is None:
            job.kill()
    left = _temporaries(tmp_path)
    assert left, "the killed job left nothing to remove"
    again = subprocess.run([sys.executable, "-m", "tcdist", "count", "complete:6", "--backend", "cpu", "--parts", "2",
                            "--store", str(store)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert _temporaries(tmp_path) == []
    for name in left:
        assert f"tcdist: warning: removed {tmp_path / name}, a temporary file of a run whose process is gone" \
            in again.stderr, again.stderr
