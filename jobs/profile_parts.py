"""Where one part's build on the GPU goes (partition/build.py), step by step, each step's time
synchronised: the seconds of every function build.py calls, summed over the parts built.

    python3 jobs/profile_parts.py rmat:26 16 [parts to build, default 2]
"""

import sys
import time
from collections import Counter

import cupy

import tcdist
from tcdist.partition import build
from tcdist.partition.schemes import assign

SPENT = Counter()


def timed(name, function):
    def run(*args, **kwargs):
        cupy.cuda.Device().synchronize()
        t0 = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            cupy.cuda.Device().synchronize()
            SPENT[name] += time.perf_counter() - t0
    return run


def main():
    spec, parts = sys.argv[1], int(sys.argv[2])
    built = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    graph = tcdist.load_graph(spec, device="gpu")
    assignment = assign(graph, "random", parts, 0)
    for name in ("segment_ids", "select", "locals_first", "_reachable", "_laid_out"):
        setattr(build, name, timed(name, getattr(build, name)))
    steps = build.iter_parts(graph, assignment, parts, "lstc")
    for k in range(built + 1):  # the first part pays for compiling CuPy's kernels: not counted
        if k == 1:
            SPENT.clear()
        cupy.cuda.Device().synchronize()
        t0 = time.perf_counter()
        part = next(steps)
        cupy.cuda.Device().synchronize()
        SPENT["part"] += time.perf_counter() - t0
        print(f"part {part.index}: v_res {part.stats['v_res']:,} e_res {part.stats['e_res']:,} "
              f"({time.perf_counter() - t0:.3f} s)", flush=True)
    print(f"{spec}, {parts} parts, seconds over {built} parts:",
          {k: round(v, 3) for k, v in SPENT.most_common()}, flush=True)


if __name__ == "__main__":
    main()
