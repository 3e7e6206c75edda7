"""GPU benchmark: LSTC kernels on one GPU against networkit on the host CPUs, in the same run.

    python jobs/bench_gpu.py --graphs rmat:21 rmat:22 rmat:23 [FILE ...] --device nvidia-h100-x1 \
        --out results/gpu.json --plot results/gpu.png

For every graph: read (or generate) and build on the GPU, upload time of the CSR, then
every registry kernel (and option sweep) timed with CUDA events after a warm-up, median of
--repeat runs, a kernel's prepare step timed apart from its count; `--kernel auto`'s choice for
the graph; the work (wedges, probes) and the per-vertex kernel beside the total. Counts are
checked against each other and against the CPU kernel. networkit's TriangleEdgeScore on all
host cores is the CPU peer. The compiler's resource report (registers, shared memory) gives the
theoretical occupancy of each tile width (LSTC Table 8).
"""

import argparse
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import cupy
import numba
from meta import median, metadata, networkit_triangles

import tcdist
from tcdist.count.auto import Auto
from tcdist.count.cpu import count_marker
from tcdist.count.kernels.lstc import TILES
from tcdist.count.per_vertex import per_vertex
from tcdist.count.registry import of_backend, parse_spec
from tcdist.cuda import launch
from tcdist.cuda.build import source
from tcdist.partition.part import Part, part_stats
from tcdist.results import Timings

KERNELS = of_backend("gpu")
# The published wedge-parallel code (WETRIC, best of its spread x bitmap settings), kernel time
# only, measured on nvidia-h200 on these very graphs (issue 10's table): the column to beat.
WETRIC_H200_MS = {"rmat:20": 5.8, "rmat:22": 40.0, "rmat:23": 113.4, "er:8000000:100000000": 9.1,
                  "grid:4000:4000": 0.47}


def event_ms(fn, repeat, same=False):
    """Milliseconds of fn() by CUDA events, after one warm-up call: (its last value, times), with
    same, the same value every time. One value is held at a time (a prepare step's bitmaps can
    take gigabytes), dropped before the next call so the pool can give its memory back."""
    value, times = fn(), []
    first = value if same else None
    for _ in range(repeat):
        value = None
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        value = fn()
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop))
        if same and value != first:
            raise SystemExit(f"non-deterministic count: {first} then {value}")
    return value, times


def event_times(fn, repeat):
    """event_ms of a count: (the count, times), the same count every time."""
    return event_ms(fn, repeat, same=True)


def demangle(symbol):
    if not shutil.which("c++filt"):
        return symbol
    return subprocess.run(["c++filt", symbol], capture_output=True, text=True).stdout.strip() or symbol


def resource_report():
    """Registers and static shared memory per kernel from nvcc -Xptxas -v (sm_90), with the
    occupancy of those whose block size is a template argument."""
    nvcc = shutil.which("nvcc")
    if not nvcc:
        return {"error": "nvcc not found"}
    out = ""
    with tempfile.TemporaryDirectory() as tmp:
        for kernel in KERNELS.values():  # each kernel is a module of its own
            unit = os.path.join(tmp, "k.cu")
            with open(unit, "w") as f:
                f.write(source(kernel.sources) + "\n" + "\n".join(kernel.instantiations()) + "\n")
            out += subprocess.run([nvcc, "-cubin", "-arch=sm_90", "-std=c++17", "-Xptxas", "-v", unit, "-o",
                                   os.path.join(tmp, "k.cubin")], capture_output=True, text=True).stderr
    report, name = {}, None
    for line in out.splitlines():
        m = re.search(r"Compiling entry function '(\w+)'", line)
        if m:
            name = demangle(m.group(1))
        m = re.search(r"Used (\d+) registers.*?(\d+) bytes smem", line)
        if m and name:
            report[name] = {"registers": int(m.group(1)), "smem_bytes": int(m.group(2))}
    props = cupy.cuda.runtime.getDeviceProperties(0)
    for key, entry in report.items():
        tile = re.search(r"(\d+)>", key)  # the block size, where a template argument sets it
        if not tile:
            continue  # set at launch (bitmap's threads option, 256 elsewhere): registers and smem only
        threads = int(tile.group(1))
        by_threads = props["maxThreadsPerMultiProcessor"] // threads
        by_regs = props["regsPerMultiprocessor"] // max(1, entry["registers"] * threads)
        by_smem = props["sharedMemPerMultiprocessor"] // max(1, entry["smem_bytes"] + 1024)
        blocks = min(32, by_threads, by_regs, by_smem)
        entry.update(threads=threads, blocks_per_sm=blocks,
                     occupancy=blocks * threads / props["maxThreadsPerMultiProcessor"])
    return report


def configurations(args):
    """(kernel, tile, options) to time: every tile of lstc (Fig. 7), tiles x groups x row split of
    lstc-group; any other registry kernel at every tile it has, else at its defaults."""
    for name in args.kernels:
        if name == "lstc-group":
            for tile in args.group_tiles:
                for group in args.groups:
                    for warp_rows in args.warp_rows:
                        for hashed in args.hashed:
                            yield name, tile, {"group": group, "warp_rows": bool(warp_rows), "hashed": bool(hashed)}
        elif any(o.name == "tile" for o in KERNELS[name].options):
            for tile in args.tiles:
                yield name, tile, {}
        else:
            swept = [(option, values.split(",")) for kernel, _, rest in (spec.partition(":") for spec in args.sweep)
                     if kernel == name for option, _, values in [rest.partition("=")]]
            for values in itertools.product(*(v for _, v in swept)):
                yield name, None, dict(zip((o for o, _ in swept), values))


def bound(name, tile, options):
    """count(rowptr, col, n_local) of a registry kernel with these options, checked as a run checks them."""
    given = {k: str(v) for k, v in options.items()} | ({} if tile is None else {"tile": str(tile)})
    chosen = KERNELS[name].configure(given)
    return lambda rowptr, col, n_local: KERNELS[name].run(rowptr, col, n_local, chosen)


def timed(name, options, rowptr, col, n, repeat):
    """A registry kernel's prepare step and count timed apart (as a run times them), and together
    in one window as `auto` is timed, so the two compare like for like (apart, the time between
    the two steps fell out: 20 us on soc-Epinions1): (count, {prepare_ms, ms, median_ms (the
    count's), total_ms})."""
    kernel = KERNELS[name]
    chosen = kernel.configure({k: str(v) for k, v in options.items()})
    given, entry = {}, {}
    if kernel.prepare is not None:
        prepared, times = event_ms(lambda: kernel.prepare(rowptr, col, n, **chosen), repeat)
        given = {"prepared": prepared}
        entry["prepare_ms"] = median(times)
    value, times = event_times(lambda: kernel.count(rowptr, col, n, **given, **chosen), repeat)
    entry.update(ms=times, median_ms=median(times), total_ms=median(times))
    if kernel.prepare is not None:
        _, together = event_times(lambda: kernel.run(rowptr, col, n, chosen), repeat)
        entry["total_ms"] = median(together)
    return value, entry


def work(rowptr, col, n):
    """The work of a graph that kernels differ in: wedges (sum of C(d+, 2)), probes (LSTC's
    estimate: sum over edges (u, v) of d+(v)) and the out-degree's mean and maximum."""
    out = cupy.diff(rowptr)
    stats = part_stats(rowptr, col, n, n, int(col.size))
    return {"wedges": int((out * (out - 1) // 2).sum()), "probes": stats["work"],
            "mean_out_degree": int(col.size) / max(n, 1), "max_out_degree": int(out.max()) if n else 0}


def partitioned(graph, rowptr, col, parts, repeat):
    """LSTC's single-GPU mode on one graph: random parts built on the GPU (Algorithms 1-2), then
    counted one after another, each by --kernel auto's choice; partition and kernels timed apart."""
    from tcdist.partition import partition_graph

    graph.rowptr, graph.col = rowptr, col
    seconds = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = partition_graph(graph, parts, scheme="random", prune="lstc")
        cupy.cuda.Device().synchronize()
        seconds.append(time.perf_counter() - t0)
    total, per_part = 0, []
    for part in result.parts:
        choice = Auto("gpu").label(part)
        name, given = parse_spec(choice)
        kernel = bound(name, None, given)
        value, times = event_times(lambda: kernel(part.rowptr, part.col, part.n_local), repeat)
        total += value
        per_part.append({**part.stats, "kernel": choice, "triangles": value, "median_ms": median(times)})
    entry = {"parts": parts, "scheme": "random", "prune": "lstc", "kernel": "auto",
             "partition_s": seconds, "partition_median_s": median(seconds), "per_part": per_part,
             "kernel_ms_sum": sum(p["median_ms"] for p in per_part), "triangles": total, **result.totals()}
    print(f"  {graph.name:<24} {parts} parts: partition {median(seconds):.3f} s, kernels {entry['kernel_ms_sum']:.2f} ms",
          flush=True)
    return entry


def bench_graph(spec, args):
    timings = Timings()
    t0 = time.perf_counter()
    graph = tcdist.load_graph(spec, device="gpu", timings=timings)
    cupy.cuda.Device().synchronize()
    load_s = time.perf_counter() - t0
    host_rowptr, host_col = cupy.asnumpy(graph.rowptr), cupy.asnumpy(graph.col)
    _, upload_ms = event_times(lambda: (cupy.asarray(host_rowptr), cupy.asarray(host_col)) and 0, args.repeat)
    rowptr, col = cupy.asarray(host_rowptr), cupy.asarray(host_col)
    row = {"graph": spec, "n": graph.n, "m": graph.m, "read_s": timings.read, "build_s": timings.build,
           "load_s": load_s, "transfer_ms": median(upload_ms), "kernels": {}}
    row["work"] = work(rowptr, col, graph.n)
    counts = set()
    for name, tile, options in configurations(args):
        options = options | ({} if tile is None else {"tile": tile})
        value, entry = timed(name, options, rowptr, col, graph.n, args.repeat)
        counts.add(value)
        label = "/".join([name, str(tile), *(f"{k}={v}" for k, v in options.items() if k != "tile")])
        row["kernels"][label] = {"kernel": name, "tile": tile, **options, "triangles": value, **entry}
        prepare = f" + prepare {entry['prepare_ms']:.2f} ms" if "prepare_ms" in entry else ""
        print(f"  {spec:<24} {label:<36} {entry['median_ms']:9.2f} ms{prepare}  ({value:,})", flush=True)
    # as a run holds a whole graph: with the degrees its build took (a graph file read: none yet)
    whole, auto = Part(0, rowptr, col, None, graph.n, {} if graph.degrees is None else {"degrees": graph.degrees}), \
        Auto("gpu")

    def run_auto():
        """As a run counts a part: the rule (reading the degrees the build took, as a run's does),
        the chosen kernel's prepare step and count."""
        name, given = parse_spec(auto.label(whole))
        return bound(name, None, given)(rowptr, col, graph.n)

    choice = auto.label(whole)
    value, times = event_times(run_auto, args.repeat)
    counts.add(value)
    row["auto"] = {"choice": choice, "ms": times, "total_ms": median(times)}  # the rule, prepare and count
    print(f"  {spec:<24} {'auto: ' + choice:<36} {median(times):9.2f} ms", flush=True)
    by_thread = Auto.per_vertex_by_thread(whole)  # the per-vertex kernel a run takes for this graph
    row["per_vertex"] = {"by_thread": by_thread}
    for kind, thread in (("warp_per_edge", False), ("thread_per_vertex", True)):
        value, times = event_times(lambda thread=thread: int(per_vertex(rowptr, col, graph.n, thread).sum()) // 3,
                                   args.repeat)
        counts.add(value)
        row["per_vertex"][kind] = {"ms": times, "median_ms": median(times)}
        print(f"  {spec:<24} {'per-vertex, ' + kind.replace('_', ' '):<36} {median(times):9.2f} ms", flush=True)
    row["per_vertex"]["median_ms"] = row["per_vertex"]["thread_per_vertex" if by_thread else "warp_per_edge"]["median_ms"]
    if args.parts > 1:
        row["partitioned"] = partitioned(graph, rowptr, col, args.parts, args.repeat)
        counts.add(row["partitioned"]["triangles"])
    if args.check_cpu:
        t0 = time.perf_counter()
        counts.add(count_marker(host_rowptr, host_col, graph.n))
        row["cpu_marker_s"] = time.perf_counter() - t0
    if args.peer_repeat:
        value, seconds = networkit_triangles(host_rowptr, host_col, os.cpu_count(), args.peer_repeat)
        times = [1e3 * t for t in seconds]
        counts.add(value)
        row["networkit"] = {"triangles": value, "ms": times, "median_ms": median(times), "threads": os.cpu_count()}
        print(f"  {spec:<24} networkit ({os.cpu_count()} threads): {median(times):9.1f} ms", flush=True)
    if len(counts) != 1:
        raise SystemExit(f"{spec}: counts disagree: {sorted(counts)}")
    row["triangles"] = counts.pop()
    best = min(row["kernels"], key=lambda k: row["kernels"][k]["total_ms"])
    row["best"] = {"config": best, **row["kernels"][best]}
    return row


def lstc_sweep(row):
    return sorted((k["tile"], k["median_ms"]) for k in row["kernels"].values() if k["kernel"] == "lstc")


def best_of(row, kernel):
    """(milliseconds, label) of a kernel's fastest configuration on a graph, prepare step included."""
    entries = [(k["total_ms"], label) for label, k in row["kernels"].items() if k["kernel"] == kernel]
    return min(entries) if entries else (float("nan"), "-")


def plot(record, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.8))
    graphs = [r["graph"].split("/")[-1] for r in record["graphs"]]
    for kernel in record["kernels"]:
        left.plot(graphs, [best_of(r, kernel)[0] for r in record["graphs"]], "o-", label=f"{kernel} (best config)")
    peer = [r.get("networkit", {}).get("median_ms", float("nan")) for r in record["graphs"]]
    left.plot(graphs, peer, "s--", label=f"networkit, {record['cores']} host threads")
    left.set_yscale("log")
    left.set_ylabel("counting time, ms (median)")
    left.set_title(f"{record['gpu']} ({record['device']})")
    left.tick_params(axis="x", rotation=30)
    left.legend()
    for r in record["graphs"]:
        sweep = lstc_sweep(r)
        if r["graph"].startswith("rmat") and sweep:
            right.plot([t for t, _ in sweep], [ms for _, ms in sweep], "o-", label=r["graph"])
    right.set_xscale("log", base=2)
    right.set_yscale("log")
    right.set_xlabel("tile width = threads per block")
    right.set_ylabel("LSTC kernel ms (median)")
    right.set_title("Algorithm 3, tile width sweep (LSTC Fig. 7)")
    right.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def markdown(record, path):
    """Table 9 and Figure 7 analogues, with the occupancy each tile width allows."""
    lines = [f"# GPU results: {record['gpu']} ({record['device']})", "",
             f"commit {record['commit']}, {record['date']}, CuPy {record['cupy']}, CUDA runtime "
             f"{record['cuda_runtime']}; kernel times by CUDA events, median of {record['repeat']} after a warm-up; "
             f"networkit TriangleEdgeScore on {record['cores']} host threads in the same run.", "",
             f"Command: `{record['command']}`", "",
             "## Counting time (LSTC Table 9 analogue)", "",
             "| graph | edges | triangles | read + build | upload | LSTC Alg. 3 (best tile) | lstc-group (best) | networkit "
             "| group vs Alg. 3 | group vs networkit |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in record["graphs"]:
        lstc, lstc_cfg = best_of(r, "lstc")
        group, group_cfg = best_of(r, "lstc-group")
        peer = r.get("networkit", {}).get("median_ms", float("nan"))
        lines.append(f"| {r['graph'].split('/')[-1]} | {r['m']:,} | {r['triangles']:,} | {r['read_s'] + r['build_s']:.2f} s "
                     f"| {r['transfer_ms']:.1f} ms | {lstc:.2f} ms (`{lstc_cfg}`) | {group:.2f} ms (`{group_cfg}`) "
                     f"| {peer:.1f} ms | {lstc / group:.2f}x | {peer / group:.1f}x |")
    lines += ["", "## Every kernel, `auto` and the published WETRIC (issue 10)", "",
              "Count time of each kernel at its best setting (its prepare step, where it has one, after the +); "
              "`auto` is `--kernel auto`'s choice for the graph, prepare included; WETRIC is the published code's "
              "kernel time on nvidia-h200 from issue 10's table (not run here). Work: wedges = Σ C(d+, 2), "
              "probes = Σ over edges (u, v) of d+(v).", "",
              "| graph | edges | wedges | probes | " + " | ".join(record["kernels"])
              + " | auto (choice) | auto / best | WETRIC (issue) | per-vertex / best |",
              "| --- | ---: | ---: | ---: |" + " ---: |" * len(record["kernels"]) + " --- | ---: | ---: | ---: |"]
    for r in record["graphs"]:
        cells = []
        for kernel in record["kernels"]:
            ms, label = best_of(r, kernel)
            prepare = r["kernels"][label].get("prepare_ms") if label in r["kernels"] else None
            cells.append(f"{ms - (prepare or 0):.2f}" + (f" + {prepare:.2f}" if prepare is not None else ""))
        auto, best = r.get("auto", {}), r["best"]["total_ms"]
        wetric = WETRIC_H200_MS.get(r["graph"])
        per_vertex = r.get("per_vertex", {}).get("median_ms", float("nan"))
        lines.append(f"| {r['graph'].split('/')[-1]} | {r['m']:,} | {r['work']['wedges']:,} | {r['work']['probes']:,} | "
                     + " | ".join(cells) + f" | {auto.get('total_ms', float('nan')):.2f} (`{auto.get('choice')}`) | "
                     f"{auto.get('total_ms', float('nan')) / best:.2f} | {'' if wetric is None else f'{wetric:.2f}'} | "
                     f"{per_vertex / best:.2f} |")
    lines += ["", "## Partition after partition on one GPU (LSTC Table 2 analogue)", "",
              "| graph | parts | partition on the GPU | kernels (sum over parts) | V_res / n | E_res / m |",
              "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in record["graphs"]:
        p = r.get("partitioned")
        if p:
            lines.append(f"| {r['graph'].split('/')[-1]} | {p['parts']} ({p['scheme']}, prune {p['prune']}) | "
                         f"{p['partition_median_s']:.3f} s | {p['kernel_ms_sum']:.2f} ms | {p['vertex_replication']:.2f} "
                         f"| {p['edge_replication']:.2f} |")
    lines += ["", "## Tile width (LSTC Fig. 7 and Table 8 analogue)", "",
              "| tile | " + " | ".join(r["graph"] for r in record["graphs"] if r["graph"].startswith("rmat"))
              + " | registers | static smem | blocks/SM | occupancy |",
              "| ---: |" + " ---: |" * (sum(r["graph"].startswith("rmat") for r in record["graphs"]) + 4)]
    resources = record.get("resources", {})
    for tile in record["tiles"]:
        times = [dict(lstc_sweep(r)).get(tile, float("nan")) for r in record["graphs"] if r["graph"].startswith("rmat")]
        res = next((v for k, v in resources.items() if k.startswith(f"void lstc_block<int, {tile}>")), {})
        lines.append(f"| {tile} | " + " | ".join(f"{t:.2f} ms" for t in times)
                     + f" | {res.get('registers', '?')} | {res.get('smem_bytes', '?')} B | {res.get('blocks_per_sm', '?')}"
                     f" | {res.get('occupancy', float('nan')):.0%} |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--graphs", nargs="+", required=True)
    p.add_argument("--kernels", nargs="+", default=list(KERNELS), choices=list(KERNELS))
    p.add_argument("--tiles", type=int, nargs="+", default=list(TILES))
    p.add_argument("--sweep", nargs="+", default=[], metavar="KERNEL:OPTION=V1,V2",
                   help="other kernels' options to sweep, e.g. wetric:spread=1,4,16 bitmap:blocks_per_sm=1,2,4")
    p.add_argument("--groups", type=int, nargs="+", default=[32], help="lstc-group group sizes")
    p.add_argument("--group-tiles", type=int, nargs="+", default=[512], help="lstc-group tile widths")
    p.add_argument("--warp-rows", type=int, nargs="+", default=[1], help="lstc-group row split: 0, 1 or both")
    p.add_argument("--hashed", type=int, nargs="+", default=[1], help="lstc-group lookups: 0 binary search, 1 hash")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--peer-repeat", type=int, default=3, help="networkit runs per graph (0: no peer)")
    p.add_argument("--check-cpu", action="store_true", help="also count with the CPU kernel")
    p.add_argument("--parts", type=int, default=4, help="also partition into this many parts on the GPU (1: no)")
    p.add_argument("--device", required=True, help="the machine kind, e.g. nvidia-h100-x1")
    p.add_argument("--out")
    p.add_argument("--plot")
    p.add_argument("--markdown")
    args = p.parse_args()

    props = cupy.cuda.runtime.getDeviceProperties(0)
    for kernel in KERNELS.values():
        launch.compile_every_instance(kernel)
    record = {
        **metadata(args.device),
        "gpu": props["name"].decode(),
        "sms": props["multiProcessorCount"],
        "cupy": cupy.__version__,
        "cuda_runtime": cupy.cuda.runtime.runtimeGetVersion(),
        "cuda_driver": cupy.cuda.runtime.driverGetVersion(),
        "numba_threads": numba.get_num_threads(),
        "kernels": args.kernels,
        "tiles": args.tiles,
        "repeat": args.repeat,
        "resources": resource_report(),
        "graphs": [],
    }
    for spec in args.graphs:
        record["graphs"].append(bench_graph(spec, args))
        cupy.get_default_memory_pool().free_all_blocks()  # the last graph's arrays are gone with its frame
        if args.out:
            with open(args.out, "w") as f:
                json.dump(record, f, indent=1)
    if args.plot:
        plot(record, args.plot)
    if args.markdown:
        markdown(record, args.markdown)
    print(f"\n{'graph':<26}{'m':>13}{'triangles':>16}  {'best configuration':<34}{'ms':>9}  networkit ms")
    for r in record["graphs"]:
        b = r["best"]
        peer = r.get("networkit", {}).get("median_ms", float("nan"))
        lstc = best_of(r, "lstc")[0]
        print(f"{r['graph'][-26:]:<26}{r['m']:>13,}{r['triangles']:>16,}  {b['config']:<34}{b['total_ms']:9.2f} "
              f"(lstc best {lstc:.2f}) {peer:12.1f}")
    print(f"[{args.device}: {record['gpu']}, CuPy {record['cupy']}, commit {record['commit']}]", file=sys.stderr)


if __name__ == "__main__":
    main()
