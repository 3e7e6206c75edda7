"""Every CUDA kernel compiles for Hopper (sm_90) with nvcc, each as the module of its own that
NVRTC builds on a GPU host, on the CPU machines too: a kernel that does not compile never
reaches a GPU host."""

import shutil
import subprocess

import pytest

from tcdist.count.registry import of_backend
from tcdist.cuda.build import DEGREE_STATS, PER_VERTEX, source

MODULES = [(k.name, k.sources, k.instantiations) for k in of_backend("gpu").values()] + \
    [("per-vertex", PER_VERTEX.sources, PER_VERTEX.instantiations),
     ("degree-stats", DEGREE_STATS.sources, DEGREE_STATS.instantiations)]


@pytest.mark.parametrize("name,files,instantiations", MODULES, ids=[m[0] for m in MODULES])
def test_every_kernel_compiles_on_its_own_to_ptx_for_sm_90(tmp_path, name, files, instantiations):
    nvcc = shutil.which("nvcc")
    assert nvcc, "nvcc is not on PATH (CUDA 13 is expected on the CI machines)"
    declarations = instantiations()
    unit = tmp_path / "kernel.cu"
    unit.write_text(source(files) + "\n" + "\n".join(declarations) + "\n")
    ptx = tmp_path / "kernel.ptx"
    result = subprocess.run([nvcc, "--ptx", "-arch=sm_90", "-std=c++17", str(unit), "-o", str(ptx)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert ptx.read_text().count(".entry") == len(declarations) > 0
