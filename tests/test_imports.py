"""A run imports only what it uses (start-up is paid on every run): `import tcdist` loads no
library at all, and a CPU count of an edge list no frame, graph, GPU, MPI, HDF5 or
progress-bar library. Each is checked in a fresh interpreter, by what is in sys.modules at the end."""

import os
import subprocess
import sys

import pytest

# What a CPU count of an edge list does not use. A small one loads no Numba either (nor SciPy, which
# Numba imports itself when its CPU target starts: numba/np/arraymath.py).
UNUSED = ("pandas", "pyarrow", "cupy", "mpi4py", "networkx", "h5py", "tqdm")

_MODULES_AT_EXIT = """
import sys
{code}
print(" ".join(sorted(sys.modules)))
raise SystemExit(code)
"""


def _modules_at_exit(code: str, *args: str) -> set[str]:
    """The top-level packages in sys.modules once code has run in a fresh interpreter, with no MPI
    launcher in its environment; code sets `code`, its exit status."""
    launcher = ("OMPI_", "PMI_", "PMIX_", "MV2_", "SLURM_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(launcher)}
    done = subprocess.run([sys.executable, "-c", _MODULES_AT_EXIT.format(code=code), *args], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return {name.split(".")[0] for name in done.stdout.splitlines()[-1].split()}


@pytest.fixture(scope="module")
def counted(tmp_path_factory):
    """The packages a CPU count imported, of the embedded graph and of a small edge list."""
    edges = tmp_path_factory.mktemp("graph") / "triangle.txt"
    edges.write_text("0 1\n1 2\n2 0\n")
    count = "from tcdist.cli import main\ncode = main(sys.argv[1:])"
    return {"embedded": _modules_at_exit(count, "count", "--backend", "cpu"),
            "edge list": _modules_at_exit(count, "count", str(edges), "--backend", "cpu")}


def test_import_tcdist_loads_no_library():
    loaded = _modules_at_exit("import tcdist\ncode = 0")
    assert loaded.isdisjoint({*UNUSED, "numpy", "numba", "pyarrow", "scipy"}), loaded


@pytest.mark.parametrize("source", ["embedded", "edge list"])
@pytest.mark.parametrize("module", UNUSED)
def test_a_cpu_count_imports_only_what_it_uses(counted, source, module):
    assert module not in counted[source]


@pytest.mark.parametrize("source", ["embedded", "edge list"])
def test_a_cpu_count_of_small_text_loads_no_compiler(counted, source):
    """Parsed in whole-array NumPy, built in NumPy, counted by NumPy's lookups: Numba's start unpaid."""
    assert counted[source].isdisjoint({"numba", "scipy"}), counted[source]


def test_the_run_path_loads_no_compiler_until_it_calls_compiled_code():
    """The command line, the API and the run's modules import Numba only when a compiled function
    is first called (a count on the GPU calls none)."""
    loaded = _modules_at_exit("import tcdist.cli, tcdist.api, tcdist.ranks.run, tcdist.source\ncode = 0")
    assert loaded.isdisjoint({"numba", "scipy", "h5py", "pyarrow"}), loaded


@pytest.mark.gpu
@pytest.mark.parametrize("form", ["h5", "txt"])
def test_a_gpu_count_of_a_graph_file_or_an_edge_list_loads_no_cpu_compiler(tmp_path, form):
    """Read, checked and counted on the GPU: Numba (and SciPy, which it loads) never imported."""
    path = tmp_path / f"g.{form}"
    done = subprocess.run([sys.executable, "-m", "tcdist", "convert", "rmat:12", str(path), "-q"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    expected = _modules_at_exit("import tcdist\ncode = 0")  # (a count that fails exits non-zero: refused below)
    count = f"from tcdist.cli import main\ncode = main(['count', {str(path)!r}, '--backend', 'gpu', '-q'])"
    loaded = _modules_at_exit(count)
    assert "cupy" in loaded and loaded.isdisjoint({"numba", "scipy"}), loaded
    assert expected <= loaded


def test_a_cpu_count_of_a_small_graph_in_memory_loads_no_compiler():
    """--kernel auto counts a small part by NumPy's lookups while Numba is not loaded: a first call
    of the API with a small graph does not pay Numba's start."""
    count = ("import numpy as np, tcdist\n"
             "src, dst = np.triu_indices(30, 1)\n"
             "r = tcdist.count_triangles((src, dst), backend='cpu')\n"
             "code = 0 if (r.triangles, r.kernels) == (4060, {'lookup': 1}) else 1")
    assert "numba" not in _modules_at_exit(count)
