"""CPU benchmark: `tcdist count` of an RMAT edge list against networkit, same threads, same run.

    python jobs/bench_cpu.py [--scale 18] [--repeat 5] [--out results/cpu-rmat18.json]

Writes the RMAT edge list as text and as tcdist HDF5, runs ``python -m tcdist count FILE
--json`` on both as a user would (parse rate = text bytes / read seconds; read + build of
text against HDF5), reads the text back to back in this process against pyarrow's read_csv of
it (as a script or notebook reads: what one read leaves behind, the next one pays for, which
one CLI run per process cannot show), and the command's read (and read + build) against
read_csv in a fresh process of its own, then times the counting step of every
tcdist CPU kernel (lookup only up to the wedges auto gives it) and networkit's TriangleEdgeScore on the same cleaned graph in this process.
"""

import argparse
import json
import os
import subprocess
import sys

import numba
from bench_e2e import read_table
from meta import median, metadata, networkit_triangles, timed

import tcdist
from tcdist.count.auto import LOOKUP_WEDGES
from tcdist.count.registry import of_backend
from tcdist.io import read


def in_process_reads(path, repeat):
    """The text read, and read and built, back to back in this process (Python's collector left to
    itself), against pyarrow's read_csv of it on every core: seconds of each, the best's ratios
    and a line that says them."""
    _, reads = timed(lambda: read(path), repeat)
    _, loads = timed(lambda: tcdist.load_graph(path), repeat)
    _, arrow = timed(lambda: read_table(path, "txt"), repeat)
    rate, load = min(arrow) / min(reads), min(loads) / min(arrow)
    line = (f"in one process, best of {repeat} back to back: read {min(reads):.3f} s, read + build {min(loads):.3f} s, "
            f"pyarrow read_csv {min(arrow):.3f} s: read at {rate:.2f}x pyarrow's rate, read + build {load:.2f}x its time")
    return {"read_s": reads, "read_and_build_s": loads, "pyarrow_read_csv_s": arrow, "read_rate_vs_pyarrow": rate,
            "read_and_build_vs_pyarrow": load, "line": line}


def fresh_read_csv(path) -> float:
    """Seconds of pyarrow's read_csv of path in a process of its own (its start and imports aside)."""
    program = ("import sys, time\nfrom bench_e2e import read_table\nt = time.perf_counter()\n"
               "read_table(sys.argv[1], 'txt')\nprint(time.perf_counter() - t)")
    done = subprocess.run([sys.executable, "-c", program, path], check=True, capture_output=True, text=True,
                          cwd=os.path.dirname(os.path.abspath(__file__)))
    return float(done.stdout)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scale", type=int, default=18)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--threads", type=int, default=numba.config.NUMBA_NUM_THREADS)
    p.add_argument("--workdir", default=".bench")
    p.add_argument("--out")
    p.add_argument("--device", default=f"cpu-{os.cpu_count()}core")
    args = p.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    path = os.path.join(args.workdir, f"rmat{args.scale}.txt")
    subprocess.run([sys.executable, "-m", "tcdist", "generate", f"rmat:{args.scale}", "-o", path, "-q"], check=True)
    size = os.path.getsize(path)

    h5_path = os.path.join(args.workdir, f"rmat{args.scale}.h5")
    subprocess.run([sys.executable, "-m", "tcdist", "convert", path, h5_path, "-q"], check=True, capture_output=True)

    def cli_runs(source):
        command = [sys.executable, "-m", "tcdist", "count", source, "--json", "--threads", str(args.threads)]
        return [json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
                for _ in range(args.repeat)]

    cli, cli_h5 = cli_runs(path), cli_runs(h5_path)
    read_s = median([r["timings"]["read"] for r in cli])
    load = {name: median([r["timings"]["read"] + r["timings"]["build"] for r in runs])
            for name, runs in (("text", cli), ("hdf5", cli_h5))}

    in_process = in_process_reads(path, args.repeat)
    # a fresh process's read_csv, as the command's own read is: each first touches its buffers (pyarrow's
    # first read in a process took 2.3x its next on the 2-core VM), so a warm read_csv is no fair floor
    arrow_s = median([fresh_read_csv(path) for _ in range(args.repeat)])
    cli_vs_arrow = {"pyarrow_fresh_read_csv_s": arrow_s, "read_rate": arrow_s / read_s,
                    "read_and_build_time": load["text"] / arrow_s}

    graph = tcdist.load_graph(path)
    numba.set_num_threads(args.threads)
    kernels = {}
    for name, kernel in of_backend("cpu").items():
        if name == "lookup" and graph.degrees["wedges"] > LOOKUP_WEDGES:  # NumPy's: minutes past this
            continue
        count, times = timed(lambda kernel=kernel: kernel.run(graph.rowptr, graph.col, graph.n, {}), args.repeat)
        kernels[name] = {"triangles": count, "seconds": times, "median_s": median(times)}
    networkit_triangles(graph.rowptr, graph.col, args.threads, 1)  # warm-up, as for the kernels
    nk_count, nk_times = networkit_triangles(graph.rowptr, graph.col, args.threads, args.repeat)
    kernels["networkit-TriangleEdgeScore"] = {"triangles": nk_count, "seconds": nk_times, "median_s": median(nk_times)}
    counts = {k["triangles"] for k in kernels.values()} | {r["triangles"] for r in cli + cli_h5}
    if len(counts) != 1:
        raise SystemExit(f"counts disagree: {counts}")

    best = min(("middle", "marker", "merge"), key=lambda k: kernels[k]["median_s"])
    result = {
        **metadata(args.device),
        "graph": f"rmat:{args.scale} (seed 0)",
        "n": graph.n,
        "m": graph.m,
        "triangles": counts.pop(),
        "threads": args.threads,
        "edge_list_bytes": size,
        "cli_runs": cli,
        "cli_runs_hdf5": cli_h5,
        "parse_MB_per_s": size / read_s / 1e6,
        "read_and_build_s": load,
        "in_process": in_process,
        "cli_vs_pyarrow": cli_vs_arrow,
        "hdf5_bytes": os.path.getsize(h5_path),
        "kernels": kernels,
        "speedup_vs_networkit": kernels["networkit-TriangleEdgeScore"]["median_s"] / kernels[best]["median_s"],
        "best_kernel": best,
    }
    text = json.dumps(result, indent=1)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    print(f"rmat:{args.scale}: n={graph.n:,} m={graph.m:,} triangles={result['triangles']:,} threads={args.threads}")
    print(f"parse {size / 1e6:.0f} MB text: {result['parse_MB_per_s']:.0f} MB/s (read step of `tcdist count`, median)")
    print(f"read + build: text {load['text']:.3f} s, tcdist HDF5 {load['hdf5']:.3f} s "
          f"({load['text'] / load['hdf5']:.1f}x faster; {result['hdf5_bytes'] / 1e6:.0f} MB)")
    print(f"`tcdist count` of the text against pyarrow read_csv in a fresh process (medians of {args.repeat}): read at "
          f"{cli_vs_arrow['read_rate']:.2f}x pyarrow's rate, read + build {cli_vs_arrow['read_and_build_time']:.2f}x "
          "its time")
    print(in_process["line"])
    for name, k in kernels.items():
        print(f"count {name:<28} {k['median_s'] * 1e3:8.1f} ms (median of {args.repeat})")
    print(f"tcdist {best} vs networkit: {result['speedup_vs_networkit']:.2f}x")


if __name__ == "__main__":
    main()
