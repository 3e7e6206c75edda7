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
from mpi_launch import launcher, makes_cliques, mpiexec

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
         for j, target in enumerate(["launcher", "rank 0", "rank 1"])] + [("count", "rank 1", signal.SIGHUP)]


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
        _, err, took = _signalled(job, pid, signum)
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


def _in_private_shm(command, listing):
    """command in a mount namespace of its own whose /dev/shm is an empty tmpfs, listed into the
    file `listing` once it ends (its exit status kept): what the job left there, and no other's."""
    script = 'mount -t tmpfs tmpfs /dev/shm || exit 99; "$@"; code=$?; ls -A /dev/shm > "$LISTING"; exit $code'
    return ["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", *command], {**os.environ,
                                                                                              "LISTING": str(listing)}


@pytest.fixture(scope="module")
def text_graph(tmp_path_factory):
    """A text edge list every rank reads a share of (--read ranks)."""
    if subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs tmpfs /dev/shm"], capture_output=True).returncode:
        pytest.skip("a private /dev/shm needs unshare and mount (root)")
    if not makes_cliques():
        pytest.skip("MPICH's shared memory files are looked for")
    path = tmp_path_factory.mktemp("graph") / "rmat17.txt"
    assert subprocess.run([sys.executable, "-m", "tcdist", "generate", "rmat:17", "-o", str(path)],
                          capture_output=True, timeout=300).returncode == 0
    return path


def _launcher_pid(job) -> int:
    name = os.path.basename(launcher()[0]).encode()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if os.path.basename(f.read().split(b"\0")[0]) == name and _descends(pid, job.pid):
                    return int(pid)
        except OSError:
            continue
    raise AssertionError("no launcher found")


@pytest.mark.parametrize("ranks,cliques,target", [(3, None, "launcher"), (4, 2, "rank 1")])
def test_a_stopped_job_ends_at_once_with_one_line_and_leaves_no_shared_memory(tmp_path, text_graph, ranks, cliques,
                                                                              target):
    """SIGTERM to mpiexec -n 3 took 7.1 s to end the job, every rank said so, and every signalled job
    left MPICH's shared memory files in /dev/shm (ranks ended without MPI_Finalize); a rank signalled
    under cliques ended the job with status 9."""
    env_cliques = {"MPIR_CVAR_NUM_CLIQUES": str(cliques)} if cliques else {}
    command, env = _in_private_shm([*launcher(), "-n", str(ranks), sys.executable, "-m", "tcdist", "count",
                                    str(text_graph), "--read", "ranks", "--backend", "cpu", "--per-edge", "e.csv",
                                    "-q"], tmp_path / "shm.txt")
    job = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env={**env, **env_cliques})
    try:
        _wait_for(lambda: len(_rank_pids(job)) == ranks and all(map(_handling, _rank_pids(job).values())), job)
        time.sleep(0.5)  # the ranks read their shares
        out, err, took = _signalled(job, _launcher_pid(job) if target == "launcher" else _rank_pids(job)[1],
                                    signal.SIGTERM)
    finally:
        if job.poll() is None:
            job.kill()
    assert err == "tcdist: stopped by SIGTERM (temporary files removed)\n"
    # Known open race (issue 64): Hydra, seeing the first rank leave with 143, may kill one that has not left
    # yet (within a millisecond of it) and end the job 9, saying so; anything else is a failure
    assert (job.returncode, out) == (143, "") or job.returncode == 9 and "Killed (signal 9)" in out, (job.returncode, out)
    assert took < 3, f"the job ran {took:.1f} s after the signal"
    assert (tmp_path / "shm.txt").read_text() == "" and _temporaries(tmp_path) == []


def test_a_signal_as_the_job_ends_is_no_traceback(tmp_path, text_graph):
    """SIGINT to mpiexec just after the count was printed: every rank printed a Stopped traceback
    (raised inside the stop's join) and the job ended with status 1. The signal comes at delays
    after the count; each job ends with its count alone or stopped, in one line."""
    for delay in (0, 0.002, 0.005, 0.01, 0.02):
        command, env = _in_private_shm([*launcher(), "-n", "2", sys.executable, "-m", "tcdist", "count",
                                        str(text_graph), "--read", "ranks", "--backend", "cpu", "-q"],
                                       tmp_path / "shm.txt")
        job = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=env)
        try:
            count = job.stdout.readline()
            time.sleep(delay)
            os.kill(_launcher_pid(job), signal.SIGINT)
            _, err = job.communicate(timeout=60)
        finally:
            if job.poll() is None:
                job.kill()
        assert count.strip().isdigit(), (count, err)
        assert (job.returncode, err) in [(0, ""), (130, "tcdist: stopped by SIGINT (temporary files removed)\n")], \
            (delay, job.returncode, err)
        assert (tmp_path / "shm.txt").read_text() == ""


def _signalled(job, pid: int, signum) -> tuple[str, str, float]:
    """(stdout, stderr, seconds the job ran after the signal) of a job once pid is sent signum."""
    os.kill(pid, signum)
    sent = time.monotonic()
    out, err = job.communicate(timeout=60)
    return out, err, time.monotonic() - sent
