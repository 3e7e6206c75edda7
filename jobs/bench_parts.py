"""LSTC parts against the paths without them, each from the command to its answer, in one run.

    python jobs/bench_parts.py --device nvidia-h200 --work /tmp/parts --out results/parts-h200.json \
        [--rows store budget16 auto2 parts16] [--table 24 25 26 27] [--table-parts 2 4 8 16] [--mpirun "mpirun ..."]

Rows (each `python -m tcdist ...` a process of its own, its wall clock and --json timings):
- store: `partition rmat:26 --parts 4 -o W/p.h5` beside the disk's own rate (dd of as many
  bytes, fsynced, in the same run) - the store's goal is the disk's rate;
- budget16: `count rmat:27 --gpu-memory-limit 16GiB --parts 8` against the same without --parts;
- auto2: `count rmat:25 --gpu-memory-limit 2GiB --parts auto` against the same without --parts;
- parts16: `count rmat:26 --parts 16` against `count rmat:26`;
- ranks16 (with --mpirun): `MPIRUN -n 4 ... count rmat:26 --parts 16 --store W/s.h5`.
--table: `count rmat:S --parts P --json` for each scale and P, and the whole count: LSTC
Tables 3-4 at our scale (|V_ind|, |V_res|, |E_ind|, |E_res|, bytes per part) with the time of
each, so a user sees when parts pay and when the whole graph or slices do.
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import time

from meta import metadata

ROWS = {
    "store": [("partition rmat:26 --parts 4 -o {work}/p.h5 --force", None)],
    "budget16": [("count rmat:27 --gpu-memory-limit 16GiB --parts 8", "count rmat:27 --gpu-memory-limit 16GiB")],
    "auto2": [("count rmat:25 --gpu-memory-limit 2GiB --parts auto", "count rmat:25 --gpu-memory-limit 2GiB")],
    "parts16": [("count rmat:26 --parts 16", "count rmat:26")],
}


def tcdist(command: str, launcher: list | None = None) -> dict:
    """Run `python -m tcdist COMMAND --json`; its wall clock and record (or its error)."""
    argv = [*(launcher or []), sys.executable, "-m", "tcdist", *shlex.split(command), "--json"]
    t0 = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    print(f"{wall:8.2f} s  {command}" + ("" if done.returncode == 0 else f"  FAILED: {done.stderr.strip()[-300:]}"),
          flush=True)
    if done.returncode != 0:
        return {"command": command, "wall_s": wall, "error": done.stderr.strip()[-2000:]}
    record = json.loads(done.stdout)
    return {"command": command, "wall_s": wall, "timings": record.get("timings"), "record": _kept(record)}


def _kept(record: dict) -> dict:
    """What a row keeps of a --json record: everything but per-vertex payloads."""
    return {k: v for k, v in record.items() if k not in ("per_vertex",)}


def disk_rate(work: str, size: int) -> dict:
    """The disk's own write rate: dd of size bytes into work, fsynced before it ends."""
    path = os.path.join(work, "dd.bin")
    t0 = time.perf_counter()
    subprocess.run(["dd", "if=/dev/zero", f"of={path}", "bs=64M", f"count={max(size >> 26, 1)}", "conv=fsync"],
                   capture_output=True, check=True)
    seconds = time.perf_counter() - t0
    os.remove(path)
    return {"bytes": max(size >> 26, 1) << 26, "seconds": seconds, "gb_per_s": (max(size >> 26, 1) << 26) / seconds / 1e9}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", required=True)
    p.add_argument("--work", default="/tmp/parts")
    p.add_argument("--out", required=True)
    p.add_argument("--rows", nargs="*", default=list(ROWS))
    p.add_argument("--mpirun", help="the launcher and its options, for the ranks16 row")
    p.add_argument("--table", type=int, nargs="*", default=[], help="RMAT scales of the part statistics table")
    p.add_argument("--table-parts", type=int, nargs="*", default=[2, 4, 8, 16])
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    subprocess.run([sys.executable, "-m", "tcdist", "warm-up"], capture_output=True, check=True)
    record = {**metadata(args.device), "rows": [], "table": []}

    def save():  # after every row: a run cut short by its time limit keeps what it measured
        with open(args.out, "w") as f:
            json.dump(record, f, indent=1)

    for row in args.rows:
        for with_parts, without in ROWS[row]:
            measured = {"row": row, "parts": tcdist(with_parts.format(work=args.work))}
            if without:
                measured["without"] = tcdist(without)
                if "error" not in measured["parts"] and "error" not in measured["without"]:
                    measured["ratio"] = measured["parts"]["wall_s"] / measured["without"]["wall_s"]
            if row == "store" and "error" not in measured["parts"]:
                measured["disk"] = disk_rate(args.work, os.path.getsize(f"{args.work}/p.h5"))
                os.remove(f"{args.work}/p.h5")
            record["rows"].append(measured)
            save()
    if args.mpirun:
        store = f"{args.work}/s.h5"
        ranks = tcdist(f"count rmat:26 --parts 16 --store {store}", shlex.split(args.mpirun) + ["-n", "4"])
        if os.path.exists(store):
            ranks["disk"] = disk_rate(args.work, os.path.getsize(store))
            os.remove(store)
        record["rows"].append({"row": "ranks16", "parts": ranks, "without": tcdist("count rmat:26")})
        save()
    for scale in args.table:
        whole = tcdist(f"count rmat:{scale}")
        for parts in args.table_parts:
            counted = tcdist(f"count rmat:{scale} --parts {parts}")
            record["table"].append({"scale": scale, "parts": parts, "whole_wall_s": whole["wall_s"], **counted})
            save()


if __name__ == "__main__":
    main()
