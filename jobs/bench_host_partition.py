"""Host partitioning: the compiled builders (lanes.py: eight parts from each pass over the edges,
a part at a time on every core; host.py: parts side by side) against the whole-array builder run
on NumPy, on the same RMAT graph and assignment, and where lanes.py's time goes, step by step.

    python jobs/bench_host_partition.py --scale 20 --parts 8 [--reference] --out results/host-partition.json

Issue 8 asks for RMAT-26 into 8 parts within 30 s on the 16-core GPU host (the graph built on
its GPU, which is many times faster than NumPy's sorts, then moved to host memory); the
builders are compiled on a small graph first, and each part's time is printed as it is built:
    NUMBA_NUM_THREADS=16 python jobs/bench_host_partition.py --scale 26 --parts 8 --build-on gpu \
        --repeat 1 --builders teams part-a-thread --device nvidia-h200 --out host-partition-rmat26.json
"""

import argparse
import json
import os
import time
from collections import Counter

import numba
from meta import median, metadata

import tcdist
from tcdist.partition import lanes
from tcdist.partition.build import build_parts
from tcdist.partition.host import iter_parts_host
from tcdist.partition.incoming import RANGES_PER_THREAD, parts_reached
from tcdist.partition.schemes import assign


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scale", type=int, default=20)
    p.add_argument("--parts", type=int, default=8)
    p.add_argument("--prune", default="lstc")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--builders", nargs="+", choices=("lanes", "auto", "teams", "every-core", "part-a-thread"),
                   default=["lanes"],
                   help="lanes: eight parts from each pass over the edges, a part at a time on every core (tcdist's "
                        "choice up to 64 parts); the others host.py's, parts built in passes of their own: auto, as "
                        "it chooses (teams for a graph this large); teams: the threads shared out among the parts; "
                        "every-core: one part at a time; part-a-thread: no teams")
    p.add_argument("--reference", action="store_true", help="also time the whole-array builder on NumPy (slow)")
    p.add_argument("--device", default=f"cpu-{os.cpu_count()}core")
    p.add_argument("--build-on", choices=("cpu", "gpu"), default="cpu",
                   help="where the graph is generated and built before its host partitioning")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    threads = numba.get_num_threads()
    team = {"auto": None, "teams": max(1, threads // args.parts), "every-core": threads, "part-a-thread": 1}
    steps = timed_steps()

    def built(builder, graph, assignment):
        if builder == "lanes":
            return lanes.iter_parts_lanes(graph, assignment, args.parts, args.prune)
        return iter_parts_host(graph, assignment, args.parts, args.prune, team[builder])

    t0 = time.perf_counter()
    small = tcdist.load_graph("rmat:12")  # compiles every builder before anything is timed
    for builder in args.builders:
        list(built(builder, small, assign(small, "random", args.parts, 0)))
    stage("compiled (Numba) on rmat:12", time.perf_counter() - t0)
    t0 = time.perf_counter()
    graph = tcdist.load_graph(f"rmat:{args.scale}", device=args.build_on).on_host()
    load = time.perf_counter() - t0
    stage(f"rmat:{args.scale} ({graph.m:,} edges) generated and built on the {args.build_on}, in host memory", load)
    assignment = assign(graph, "random", args.parts, 0)
    record = {**metadata(args.device), "command": f"python jobs/bench_host_partition.py --scale {args.scale} "
                                                  f"--parts {args.parts} --build-on {args.build_on} --repeat "
                                                  f"{args.repeat} --builders {' '.join(args.builders)}" +
                                                  (" --reference" if args.reference else ""),
              "graph": f"rmat:{args.scale}", "n": graph.n, "m": graph.m, "parts": args.parts, "prune": args.prune,
              "threads": threads, "load_build_s": load, "builders": {}}
    if args.parts <= 64:  # where the time goes: the first step of every builder below, alone
        t0 = time.perf_counter()
        parts_reached(graph.rowptr, graph.col, assignment.astype("uint8"), threads * RANGES_PER_THREAD)
        record["in_parts_s"] = time.perf_counter() - t0
        stage("each vertex's in-parts (one pass over the edges; included in each builder's time)", record["in_parts_s"])
    for builder in args.builders:
        runs = record["builders"][builder] = []
        for _ in range(args.repeat):
            parts, t0 = [], time.perf_counter()
            steps.clear()
            for part in built(builder, graph, assignment):
                parts.append(part.stats)
                stage(f"  {builder}: part {part.index} built ({part.stats['e_res']:,} edges), since the start",
                      time.perf_counter() - t0)
            runs.append(time.perf_counter() - t0)
            stage(f"{builder} builder, {args.parts} parts", runs[-1])
            if steps:
                record.setdefault("lanes_steps_s", []).append({k: round(v, 3) for k, v in steps.most_common()})
                print("   its steps, seconds:", record["lanes_steps_s"][-1], flush=True)
            save(record, args.out)  # a run stopped by a time limit keeps the builders timed so far
        record["e_res_total"] = sum(stats["e_res"] for stats in parts)
        edges_per_core = record["e_res_total"] / median(runs) / threads
        record.setdefault("part_edges_per_s_per_core", {})[builder] = edges_per_core
        stage(f"{builder}: {edges_per_core / 1e6:.1f} M part edges written a second a core (median run)", median(runs))
    best = min(median(runs) for runs in record["builders"].values())
    record["partition_s"] = best  # what a count's partition step takes
    stage("partition (the faster builder)", best)
    if args.reference:
        t0 = time.perf_counter()  # one call: it takes minutes at scale
        reference = build_parts(graph, assignment, args.parts, args.prune)
        record["whole_array_numpy_s"] = time.perf_counter() - t0
        assert [r.stats for r in reference] == parts, "the builders disagree"
        record["speedup"] = record["whole_array_numpy_s"] / best
    save(record, args.out)
    print(json.dumps(record, indent=1))


def timed_steps() -> Counter:
    """Seconds of each compiled step of lanes.py, summed over the parts built since cleared."""
    spent = Counter()
    for name in ("_marked", "_first_round", "_round", "_last_round", "_numbered", "_runs", "_slotted", "_packed", "_probes"):
        function = getattr(lanes, name)

        def run(*args, function=function, name=name):
            t0 = time.perf_counter()
            try:
                return function(*args)
            finally:
                spent[name] += time.perf_counter() - t0
        setattr(lanes, name, run)
    return spent


def save(record: dict, path: str) -> None:
    with open(path, "w") as f:
        json.dump(record, f, indent=1)


def stage(what: str, seconds: float) -> None:
    """One line per step as it ends: a run stopped by a time limit still says where it got."""
    print(f"{seconds:9.2f} s  {what}", flush=True)


if __name__ == "__main__":
    main()
