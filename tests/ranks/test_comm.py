"""The communicator a run takes: what a launcher without mpi4py gets told."""

import os
import subprocess
import sys

import pytest

_WITHOUT_MPI4PY = "import sys; sys.modules['mpi4py'] = None; from tcdist.cli import main; raise SystemExit(main())"
_LAUNCHERS = ("OMPI_", "PMI_", "PMIX_", "MV2_", "SLURM_")


def _without_mpi4py(*args, **launcher):
    """``tcdist ARGS`` where mpi4py cannot be imported, under the launcher variables given (and no others)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_LAUNCHERS)} | launcher
    return subprocess.run([sys.executable, "-c", _WITHOUT_MPI4PY, *args], env=env, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.parametrize("launcher", [{"PMI_SIZE": "2", "PMI_RANK": "0"},
                                      {"OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_RANK": "0"}],
                         ids=["hydra", "open mpi"])
def test_a_launcher_without_mpi4py_is_told_the_cluster_s_way_to_install_it(launcher):
    """It said only pip install 'tcdist[mpi]', whose MPICH wheel knows neither a cluster's network nor its launcher."""
    done = _without_mpi4py("count", "complete:5", "--backend", "cpu", **launcher)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == ("tcdist: error: started by an MPI launcher but mpi4py is not installed: on a cluster, load "
                           "the site's MPI module and build mpi4py against it: MPICC=mpicc pip install "
                           "--no-binary=mpi4py mpi4py; on a workstation, pip install 'tcdist[mpi]'\n")
    info = _without_mpi4py("info", "--json")
    assert info.returncode == 0, info.stderr
    assert "MPICC=mpicc pip install --no-binary=mpi4py mpi4py" in info.stdout and "tcdist[mpi]" in info.stdout
