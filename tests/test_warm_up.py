"""tcdist warm-up: every kernel compiled into the caches TCDIST_CACHE_DIR names, so that a later
process compiles nothing."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import warm_up_process

REPO = Path(__file__).parents[1]


def warm_up(tmp_path, backend):
    return json.loads(warm_up_process(tmp_path, backend).stdout)


def test_the_cpu_functions_land_in_the_cache_folder_and_only_that_is_named(warmed_cache):
    tmp_path, done = warmed_cache, json.loads((warmed_cache / "done").read_text())
    assert done["caches"] == {"CPU functions (Numba)": str(tmp_path / "numba")} and not done["gpu"]  # no CuPy cache
    cached = {p.name.split(".")[0] for p in (tmp_path / "numba").rglob("*.nbi")}
    assert {"grammar", "cpu", "host", "lanes"} <= cached, cached  # the parser, the CPU kernels, both host partitioners
    functions = {p.name.split(".")[1].split("-")[0] for p in (tmp_path / "numba").rglob("cpu.*.nbi")}
    assert {"_marker", "_merge", "_middle", "_per_vertex_rows", "_third_edges"} <= functions, functions  # and credits


def test_a_run_with_per_vertex_credits_compiles_no_counting_kernel(tmp_path):
    """Its count comes from the credits: the warm-up compiled and checked every counting kernel
    for nothing, seconds of a first run."""
    env = {**os.environ, "TCDIST_CACHE_DIR": str(tmp_path)}
    env.pop("NUMBA_CACHE_DIR", None)
    program = ("import tcdist; from tcdist import compiled; from tcdist.count import cpu\ncompiled.loaded()  # (else "
               "lookup's credits, nothing compiled)\n"
               "found = tcdist.count_triangles('rmat:10', backend='cpu', parts=2, per_vertex=True)\n"
               "print(3 * found.triangles == found.per_vertex.triangles.sum(), len(cpu._per_vertex_rows.signatures), "
               "*(len(f.signatures) for f in (cpu._marker, cpu._merge, cpu._middle)))")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    credited, per_vertex_signatures, *counting = done.stdout.split()
    assert credited == "True" and int(per_vertex_signatures) > 0 and counting == ["0", "0", "0"]


@pytest.mark.gpu
def test_every_gpu_kernel_instance_lands_in_the_cache_folder(tmp_path):
    from tcdist.count.registry import of_backend
    from tcdist.cuda.build import DEGREE_STATS, PARSE, PARTS, PER_EDGE, PER_VERTEX

    done = warm_up(tmp_path, "gpu")
    modules = [*of_backend("gpu").values(), PARSE, PER_VERTEX, PER_EDGE, DEGREE_STATS, PARTS]
    assert done["gpu"] and done["gpu_kernel_instances"] == sum(len(m.instantiations()) for m in modules)
    assert done["caches"]["CUDA kernels (CuPy)"] == str(tmp_path / "cupy")
    assert len(list((tmp_path / "cupy").iterdir())) >= done["gpu_kernel_instances"]  # one file a program, and CuPy's own
