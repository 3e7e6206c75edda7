"""Run each GPU kernel once on a graph, for a profiler to attach to (e.g. Nsight Compute):

    ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
        --section WarpStateStats -k regex:lstc python3 jobs/profile_gpu.py rmat:21
"""

import sys

import cupy

import tcdist
from tcdist.count.registry import of_backend


def main():
    graph = tcdist.load_graph(sys.argv[1] if len(sys.argv) > 1 else "rmat:21", device="gpu")
    rowptr, col = cupy.asarray(graph.rowptr), cupy.asarray(graph.col)
    for name, kernel in of_backend("gpu").items():  # each at its default options
        print(name, kernel.run(rowptr, col, graph.n, kernel.configure({})), flush=True)


if __name__ == "__main__":
    main()
