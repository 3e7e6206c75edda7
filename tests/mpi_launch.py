"""Launching real MPI jobs from pytest: ``mpiexec -n R python -m tcdist ...`` as a child process.

TCDIST_MPIEXEC names the launcher and its options (default: the mpiexec beside this Python,
as the mpich wheel installs it; on a GPU host e.g. "mpirun --allow-run-as-root --oversubscribe").
"""

import functools
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path


def launcher():
    if "TCDIST_MPIEXEC" in os.environ:
        return shlex.split(os.environ["TCDIST_MPIEXEC"])
    beside = Path(sys.executable).parent / "mpiexec"
    found = str(beside) if beside.exists() else shutil.which("mpiexec")
    assert found, "no mpiexec: install tcdist[mpi] or set TCDIST_MPIEXEC"
    return [found]


@functools.cache
def makes_cliques() -> bool:
    """Whether the launcher is MPICH's (Hydra), whose MPIR_CVAR_NUM_CLIQUES splits one host into
    "nodes" that do not share memory."""
    shown = subprocess.run([*launcher(), "--version"], capture_output=True, text=True, timeout=60)
    return "HYDRA" in shown.stdout + shown.stderr


def mpiexec(ranks, *args, timeout=300, options=(), **kwargs):
    """Run ``python -m tcdist ARGS`` on `ranks` MPI ranks (options: the launcher's); returns the CompletedProcess."""
    command = [*launcher(), *options, "-n", str(ranks), sys.executable, "-m", "tcdist", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, **kwargs)


def checked(ranks, script, *args, cases, env=None):
    """Run a check script (`python SCRIPT ARGS`) on `ranks` MPI ranks: it must end well, and rank 0
    must say it found every one of `cases` right."""
    command = [*launcher(), "-n", str(ranks), sys.executable, str(script), *map(str, args)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"checked {cases}" in done.stdout.splitlines(), done.stdout  # (a launcher may add its own bytes)


def mpiexec_json(ranks, *args, **kwargs):
    """The one JSON record a job prints (only rank 0 prints), checked to come from `ranks` ranks."""
    result = mpiexec(ranks, *args, "--json", **kwargs)
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)  # one document: a second rank printing would break it
    assert record["ranks"] == ranks == len(record["rank_stats"]), "the MPI world has the wrong size"
    return record
