"""The graph put in a node's shared memory (ranks/share.py's SharedArrays), under real mpiexec."""

import os

import pytest
from mpi_launch import checked, makes_cliques

pytestmark = pytest.mark.mpi

_ALIGNED = """
import numpy as np
from mpi4py import MPI
from tcdist.ranks.share import SharedArrays, layout

comm = MPI.COMM_WORLD
made = {"rowptr": np.arange(1001, dtype=np.int64) * 3, "col": np.arange(3, dtype=np.int32) - 7,
        "assignment": np.arange(5, dtype=np.uint8), "reached": np.arange(70_000, dtype=np.uint64) ** 2}
shared = SharedArrays(comm, made if comm.rank == 0 else None, layout(made))
try:
    for name, array in made.items():
        seen = shared.arrays[name]
        assert np.array_equal(seen, array) and seen.dtype == array.dtype, name
        assert seen.ctypes.data % 4096 == 0, f"{name} starts {seen.ctypes.data % 4096} bytes into a page"
finally:
    shared.close()
if comm.rank == 0:
    print(f"checked {len(made)}")
"""


@pytest.mark.parametrize("cliques", [1, 2], ids=["one-host", "two-hosts"])
def test_every_shared_array_starts_a_page_of_its_own(tmp_path, cliques):
    """Each array lies on pages of its own, so that registering one array's pages with CUDA (a copy
    of it at the link's speed) never takes in the start of the next: CUDA refuses a copy that
    starts in registered pages and runs past them (before, arrays were only 8-byte aligned, and a
    graph's columns began in the last page of its row pointers). The same bytes reach every rank,
    on one host by its window and between hosts by broadcast."""
    if cliques > 1 and not makes_cliques():
        pytest.skip("the launcher is not MPICH's: it cannot split one host in two")
    script = tmp_path / "aligned.py"
    script.write_text(_ALIGNED)
    env = {**os.environ, "MPIR_CVAR_NUM_CLIQUES": str(cliques)} if cliques > 1 else None
    checked(4, script, cases=4, env=env)
