"""Every CUDA kernel compiles for Hopper (sm_90) with nvcc, each as the module of its own that
NVRTC builds on a GPU host, on the CPU machines too: a kernel that does not compile never
reaches a GPU host."""

import shutil
import subprocess

import pytest

from tcdist.count.registry import of_backend
from tcdist.cuda.build import DEGREE_STATS, PARTS, PER_EDGE, PER_VERTEX, source

MODULES = [(k.name, k.sources, k.instantiations) for k in of_backend("gpu").values()] + \
    [("per-vertex", PER_VERTEX.sources, PER_VERTEX.instantiations),
     ("per-edge", PER_EDGE.sources, PER_EDGE.instantiations),
     ("degree-stats", DEGREE_STATS.sources, DEGREE_STATS.instantiations),
     ("parts", PARTS.sources, PARTS.instantiations)]


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


def test_the_passes_compile_as_one_program_and_each_is_launched(tmp_path):
    """passes.cu (the build, the check, the work estimate, the parse's sums and RMAT's draws) is one program of
    extern "C" kernels: every kernel it has compiles for sm_90, and each is launched by name from
    gpu_build.py or the generators (a name mistyped there, or a kernel nothing launches, fails here)."""
    import re
    from importlib import resources

    from tcdist.cuda.build import PASSES

    text = source(PASSES.sources)
    names = set(re.findall(r'extern "C" __global__ void (\w+)\(', text))
    unit = tmp_path / "passes.cu"
    unit.write_text(text)
    ptx = tmp_path / "passes.ptx"
    result = subprocess.run([shutil.which("nvcc"), "--ptx", "-arch=sm_90", "-std=c++17", str(unit), "-o", str(ptx)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert set(re.findall(r"\.entry (\w+)\(", ptx.read_text())) == names
    launchers = (resources.files("tcdist.graph") / "gpu_build.py").read_text() + \
        (resources.files("tcdist.io") / "generators.py").read_text()
    assert names == {name for name in re.findall(r'"(\w+)"', launchers) if name in names} and len(names) == 25
