"""Every CUDA kernel compiles for Hopper (sm_90) with nvcc, on the CPU machines too, so a kernel that
does not compile never reaches a GPU host."""

import shutil
import subprocess

from tcdist.count.cuda_sources import explicit_instantiations, kernel_names, source


def test_every_kernel_compiles_to_ptx_for_sm_90(tmp_path):
    nvcc = shutil.which("nvcc")
    assert nvcc, "nvcc is not on PATH (CUDA 13 is expected on the CI machines)"
    unit = tmp_path / "tcdist_kernels.cu"
    unit.write_text(source() + "\n" + explicit_instantiations() + "\n")
    ptx = tmp_path / "tcdist_kernels.ptx"
    result = subprocess.run([nvcc, "--ptx", "-arch=sm_90", "-std=c++17", str(unit), "-o", str(ptx)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    text = ptx.read_text()
    assert text.count(".entry") == len(kernel_names())
