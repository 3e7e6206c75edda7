"""A graph whose parts are built on the host, counted on one GPU under a memory limit: `tcdist
count SPEC --gpu-memory-limit LIMIT --parts P` against the same with no --parts (slices of the
whole graph, the fastest way it counts under that limit), as a user runs them, each --json's
timings kept.

    python3 jobs/bench_host_parts.py --spec rmat:27 --limit 16GiB --parts 8 --repeat 2 --out $OUT

The first run of each is warm for Numba's and CuPy's caches only if something ran before it: run
`python3 -m tcdist warm-up` first, or read the second run. Writes OUT/host-parts-SPEC.json after
every run (a run cut off keeps what was measured); both counts must be equal (exit 1 if not).
"""

import argparse
import json
import os
import subprocess
import sys
import time

from meta import metadata


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--spec", default="rmat:27")
    p.add_argument("--limit", default="16GiB")
    p.add_argument("--parts", type=int, default=8)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--device", default="nvidia-h200")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    path = os.path.join(args.out, f"host-parts-{args.spec.replace(':', '')}.json")
    record = {**metadata(args.device), "spec": args.spec, "limit": args.limit, "parts": args.parts, "runs": []}
    counts = set()
    for _ in range(args.repeat):
        for parts in (args.parts, None):
            command = [sys.executable, "-m", "tcdist", "count", args.spec, "--gpu-memory-limit", args.limit, "--json"]
            command += ["--parts", str(parts)] if parts else []
            t0 = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True)
            wall = time.perf_counter() - t0
            if done.returncode:
                print(done.stderr[-3000:], flush=True)
                record["runs"].append({"parts": parts, "wall_s": wall, "error": done.stderr[-3000:]})
                continue
            result = json.loads(done.stdout)
            counts.add(result["triangles"])
            timings = {k: round(v, 3) for k, v in result["timings"].items()}
            built = [{k: s.get(k) for k in ("part", "e_res", "build_s", "build_overlapped_s", "transfer_s", "count_s")}
                     for s in result.get("part_stats", [])]
            record["runs"].append({"parts": parts, "mode": result["mode"], "wall_s": round(wall, 3),
                                   "triangles": result["triangles"], "timings": timings, "part_stats": built})
            print(f"{'--parts ' + str(parts) if parts else 'no --parts':>11}: {wall:6.2f} s wall, "
                  f"{result['triangles']:,} triangles, {result['mode']}; {timings}", flush=True)
            with open(path, "w") as f:
                json.dump(record, f, indent=1)
    if len(counts) > 1:
        print(f"MISMATCH: {sorted(counts)}", flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
