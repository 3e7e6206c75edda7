"""A first run against a warm one: each scenario (a list of shell commands run in order, in a folder
of its own) timed from an empty compile cache, then again once the cache is warm (after the
background warm-up a first run begins has ended), wall clock from the first command to the last.

    python jobs/bench_first_run.py --device cpu-2core --out results/first-run.json readme-cli readme-py
    python jobs/bench_first_run.py --device nvidia-h100-x1 --out $OUT/first-run.json rmat22-cpu rmat22
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from meta import metadata

README_PY = """
import networkx as nx

import tcdist

result = tcdist.count_triangles("rmat:14", backend="cpu", per_vertex=True)
print(result.triangles, result.transitivity, result.average_clustering)
assert tcdist.count_triangles(nx.karate_club_graph(), backend="cpu").triangles == 45
"""

SCENARIOS = {  # the README's examples, and a large text file on every core (made first, untimed, in "setup")
    "readme-cli": {"run": ["tcdist count", "tcdist count rmat:16 --backend cpu --json",
                           "tcdist generate rmat:14 -o rmat14.txt.gz",
                           "tcdist count rmat14.txt.gz --parts 4 --backend cpu --per-vertex vertices.csv",
                           "tcdist count rmat14.txt.gz --backend cpu --per-edge edges.csv",
                           "tcdist list rmat14.txt.gz -o triangles.parquet", "tcdist info rmat14.txt.gz"]},
    "readme-py": {"run": [f"{sys.executable} -c '{README_PY}'"]},
    "rmat22-cpu": {"setup": ["tcdist generate rmat:22 -o rmat22.txt"], "run": ["tcdist count rmat22.txt --backend cpu"]},
    "rmat22": {"setup": ["tcdist generate rmat:22 -o rmat22.txt"], "run": ["tcdist count rmat22.txt"]},
}


TCDIST = f"{sys.executable} -m tcdist"  # (a GPU host has tcdist on PYTHONPATH, not on PATH)


def timed(commands, folder, env) -> float:
    t0 = time.perf_counter()
    for command in commands:
        command = TCDIST + command[len("tcdist"):] if command.startswith("tcdist ") or command == "tcdist" else command
        done = subprocess.run(command, shell=True, cwd=folder, env=env, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"{command} failed: {done.stderr[-2000:]}")
    return time.perf_counter() - t0


def background_warm_up_ended(timeout: float = 900) -> float:
    """Wait for every background warm-up to end; the seconds waited."""
    t0 = time.perf_counter()
    while subprocess.run(["pgrep", "-f", "tcdist.warm import background"], capture_output=True).returncode == 0:
        if time.perf_counter() - t0 > timeout:
            raise SystemExit("the background warm-up did not end")
        time.sleep(1)
    return time.perf_counter() - t0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scenarios", nargs="+", choices=SCENARIOS)
    p.add_argument("--device", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--background", choices=["on", "off"], default="on", help="the first run's background warm-up")
    args = p.parse_args()
    rows = []
    for name in args.scenarios:
        scenario = SCENARIOS[name]
        folder, cache = tempfile.mkdtemp(prefix=f"first-run-{name}-"), tempfile.mkdtemp(prefix="cache-")
        env = {**os.environ, "TCDIST_CACHE_DIR": cache, "TCDIST_BACKGROUND_WARM_UP": "1" if args.background == "on"
               else "0"}
        env.pop("NUMBA_CACHE_DIR", None)
        env.pop("CUPY_CACHE_DIR", None)
        if scenario.get("setup"):  # made with a cache of its own: the timed cache starts empty
            timed(scenario["setup"], folder, {**env, "TCDIST_CACHE_DIR": tempfile.mkdtemp(prefix="setup-cache-"),
                                              "TCDIST_BACKGROUND_WARM_UP": "0"})
        first = timed(scenario["run"], folder, env)
        waited = background_warm_up_ended()
        warm = [timed(scenario["run"], folder, env) for _ in range(2)]
        row = {"scenario": name, "commands": scenario["run"], "first_s": round(first, 2),
               "warm_s": [round(w, 2) for w in warm], "ratio": round(first / min(warm), 2),
               "background_warm_up": args.background, "background_left_s": round(waited, 1)}
        print(json.dumps(row), flush=True)
        rows.append(row)
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)
    with open(args.out, "w") as f:
        json.dump({**metadata(args.device), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
