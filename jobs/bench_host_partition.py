"""Host partitioning: the compiled builder (parts on threads) against the whole-array builder
run on NumPy, on the same RMAT graph and assignment, and where the compiled builder's time goes.

    python jobs/bench_host_partition.py --scale 20 --parts 8 [--reference] --out results/host-partition.json

Issue 8 asks for RMAT-26 into 8 parts within 30 s on the 16-core GPU host (the graph built on
its GPU, which is many times faster than NumPy's sorts, then moved to host memory):
    python jobs/bench_host_partition.py --scale 26 --parts 8 --build-on gpu --device nvidia-h200-host
"""

import argparse
import json
import os
import time

import numba
from meta import median, metadata, timed

import tcdist
from tcdist.partition.build import build_parts
from tcdist.partition.host import iter_parts_host, transpose
from tcdist.partition.schemes import assign


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scale", type=int, default=20)
    p.add_argument("--parts", type=int, default=8)
    p.add_argument("--prune", default="lstc")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--reference", action="store_true", help="also time the whole-array builder on NumPy (slow)")
    p.add_argument("--device", default=f"cpu-{os.cpu_count()}core")
    p.add_argument("--build-on", choices=("cpu", "gpu"), default="cpu",
                   help="where the graph is generated and built before its host partitioning")
    p.add_argument("--out", required=True)
    args = p.parse_args()

    t0 = time.perf_counter()
    graph = tcdist.load_graph(f"rmat:{args.scale}", device=args.build_on).on_host()
    load = time.perf_counter() - t0
    stage(f"rmat:{args.scale} ({graph.m:,} edges) generated and built on the {args.build_on}, in host memory", load)
    assignment = assign(graph, "random", args.parts, 0)
    _, reversing = timed(lambda: transpose(graph), args.repeat)
    stage("transpose (median)", median(reversing))
    parts, host = timed(lambda: list(iter_parts_host(graph, assignment, args.parts, args.prune)), args.repeat)
    stage(f"host builder, {args.parts} parts (runs {', '.join(f'{s:.1f}' for s in host)})", median(host))
    record = {**metadata(args.device), "command": f"python jobs/bench_host_partition.py --scale {args.scale} "
                                                  f"--parts {args.parts} --build-on {args.build_on}" +
                                                  (" --reference" if args.reference else ""),
              "graph": f"rmat:{args.scale}", "n": graph.n, "m": graph.m, "parts": args.parts, "prune": args.prune,
              "threads": numba.get_num_threads(), "load_build_s": load, "transpose_s": median(reversing),
              "host_builder_s": median(host), "host_builder_runs": host,
              "e_res_total": sum(part.stats["e_res"] for part in parts)}
    if args.reference:
        t0 = time.perf_counter()  # one call: it takes minutes at scale
        reference = build_parts(graph, assignment, args.parts, args.prune)
        record["whole_array_numpy_s"] = time.perf_counter() - t0
        assert [r.stats for r in reference] == [h.stats for h in parts], "the builders disagree"
        record["speedup"] = record["whole_array_numpy_s"] / median(host)
    with open(args.out, "w") as f:
        json.dump(record, f, indent=1)
    print(json.dumps({k: v for k, v in record.items() if k != "host_builder_runs"}, indent=1))


def stage(what: str, seconds: float) -> None:
    """One line per step as it ends: a run stopped by a time limit still says where it got."""
    print(f"{seconds:9.2f} s  {what}", flush=True)


if __name__ == "__main__":
    main()
