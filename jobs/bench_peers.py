"""Issue 63's table: tcdist's `--kernel auto` against the fastest published GPU codes, each built from
its authors' public source in the same run: WETRIC (wedge-parallel, Euro-Par 2025), and GroupTC
and TRUST as TC-Compare (IPDPS 2024) gives them. Kernel time only, by CUDA events: one warm-up
launch, then the median of --repeat; every peer's count must be tcdist's.

    python jobs/bench_peers.py --peers .peers --graphs rmat:20 rmat:22 --device nvidia-h100-x1 \
        --out results/peers-h100.json --markdown results/peers-h100.md

--peers is a folder holding the two repositories (the GPU hosts reach nothing outside: carry it):
TC-Compare/ (github.com/Jangbao/TC-Compare) and wedge-parallel-triangle-counting/
(github.com/jeffreyspaan/wedge-parallel-triangle-counting). Each peer is built from a copy of its
source with nvcc -O3 for the GPU's architecture (sm_90 on Hopper), as its Makefile builds it.

- GroupTC reads a CSR of begin.bin (int64 row offsets), source.bin and adjacent.bin (int32), ids
  ranked by ascending degree and each edge from the lower id (TC-Compare's CSR2RidDCSR): tcdist's
  oriented CSR as it is.
- TRUST reads the same files laid out by TC-Compare's CSR2TrustCSR: oriented by degree, vertices
  by descending out-degree (its kernel stops its warps' loop at the first row of fewer than two
  edges), then renumbered within three classes of out-degree in the order a walk of the rows of
  more than two edges first meets them. trust_csr does this in NumPy; the tool's own C++ compares
  vertices by copying their adjacency vectors, hours for RMAT-24.
- Both time themselves by the wall clock over each launch (GroupTC's with its reduction), and print
  the mean: a copy of each source gets CUDA events around the launch itself (timed_source).
- WETRIC reads a zero-indexed edge list and does its own preprocessing, timing its kernel by CUDA
  events itself; its best over --spreads x --bitmaps (its -s and -a). Each setting reads the text
  again (RMAT-24's 4 GB take minutes): narrow them for the largest graphs.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np
from meta import median, metadata

TC_COMPARE = "TC-Compare"
WETRIC = "wedge-parallel-triangle-counting"
TIMER = r"""#include <cstdio>
#include <cuda_runtime.h>
// Added by tcdist's jobs/bench_peers.py: CUDA events around each kernel launch, one line each.
static cudaEvent_t peer_start_, peer_stop_;
static inline void PEER_START() {
    static bool made = false;
    if (!made) { cudaEventCreate(&peer_start_); cudaEventCreate(&peer_stop_); made = true; }
    cudaEventRecord(peer_start_);
}
static inline void PEER_STOP() {
    float ms = 0;
    cudaEventRecord(peer_stop_);
    cudaEventSynchronize(peer_stop_);
    cudaEventElapsedTime(&ms, peer_start_, peer_stop_);
    fprintf(stderr, "peer_ms %.6f\n", ms);
}
"""
LAUNCHES = {"GroupTC": "grouptc<<<", "TRUST": "trust<<<"}  # the one launch of each peer's count
COUNT_LINE = re.compile(r"triangle count\s+(\d+)")
TRUST_WIDE = 100  # CSR2TrustCSR's `bounder`: rows of more edges are the first class
TRUST_NARROW = 2  # and of fewer than this the last


def rid_csr(rowptr, col) -> dict:
    """GroupTC's files of an oriented CSR whose ids are ranks by ascending degree (tcdist's)."""
    rowptr = np.asarray(rowptr, np.int64)
    source = np.repeat(np.arange(rowptr.size - 1, dtype=np.int32), np.diff(rowptr))
    return {"begin": rowptr, "source": source, "adjacent": np.asarray(col, np.int32)}


def trust_csr(rowptr, col) -> dict:
    """TRUST's files of an oriented CSR (rows by rank, each edge from its lower-ranked end), as
    CSR2TrustCSR lays them out: rows by descending out-degree (ties by rank), then renumbered
    within the classes of more than TRUST_WIDE edges, of TRUST_NARROW or more, and of fewer, in
    the order a walk of the rows of more than TRUST_NARROW edges, each in its order, first meets
    them (those it never meets after, in row order); rows sorted."""
    rowptr, col = np.asarray(rowptr, np.int64), np.asarray(col, np.int64)
    n, out = rowptr.size - 1, np.diff(rowptr)
    by_out = np.argsort(-out, kind="stable")  # position -> the row there
    place = np.empty(n, np.int64)
    place[by_out] = np.arange(n)
    out = out[by_out]
    walked = place[col[_runs(rowptr, by_out[out > TRUST_NARROW])]]  # (as positions: the tool renumbers first)
    first = walked.size + np.arange(n)  # never met: after every met one, in row order
    met, at = np.unique(walked, return_index=True)
    first[met] = at
    wide, narrow = int(np.sum(out > TRUST_WIDE)), int(np.sum(out >= TRUST_NARROW))
    new = np.empty(n, np.int64)
    for lo, hi in ((0, wide), (wide, narrow), (narrow, n)):
        new[lo + np.argsort(first[lo:hi], kind="stable")] = np.arange(lo, hi)
    renumbered = new[place]  # rank -> new id
    begin = np.zeros(n + 1, np.int64)
    begin[1:][new] = out
    np.cumsum(begin, out=begin)
    source = np.repeat(renumbered, np.diff(rowptr))
    adjacent = renumbered[col]
    order = np.lexsort((adjacent, source))
    return {"begin": begin, "source": source[order].astype(np.int32), "adjacent": adjacent[order].astype(np.int32)}


def _runs(rowptr, rows) -> np.ndarray:
    """The indices of the columns of rows, row after row."""
    starts, lengths = rowptr[rows], rowptr[rows + 1] - rowptr[rows]
    ends = np.cumsum(lengths)
    return np.repeat(starts - (ends - lengths), lengths) + np.arange(int(ends[-1]) if ends.size else 0)


def write_csr(folder: str, arrays: dict) -> str:
    os.makedirs(folder, exist_ok=True)
    for name, array in arrays.items():
        array.tofile(os.path.join(folder, f"{name}.bin"))
    return folder


def timed_source(text: str, launch: str) -> str:
    """text with PEER_START() before the statement that launches `launch` and PEER_STOP() after it."""
    at = text.index(launch)
    if text.find(launch, at + 1) != -1:
        raise SystemExit(f"{launch} is launched more than once: which launch to time is not clear")
    end = text.index(";", at) + 1
    return f"{text[:at]}PEER_START(); {text[at:end]} PEER_STOP();{text[end:]}"


def build(peers: str, into: str, arch: str) -> dict:
    """Each peer built from a copy of its source in into: {name: executable}."""
    built, approach = {}, os.path.join(into, "approach")
    shutil.rmtree(into, ignore_errors=True)
    shutil.copytree(os.path.join(peers, TC_COMPARE, "approach", "comm"), os.path.join(approach, "comm"))
    with open(os.path.join(into, "timer.cuh"), "w") as f:
        f.write(TIMER)
    for name, launch in LAUNCHES.items():
        folder = os.path.join(approach, name)
        os.makedirs(folder)
        with open(os.path.join(peers, TC_COMPARE, "approach", name, "tc.cu")) as f:
            text = timed_source(f.read(), launch)
        with open(os.path.join(folder, "tc.cu"), "w") as f:
            f.write(text)
        built[name] = _nvcc(folder, ["-O3", f"-arch={arch}", "--pre-include", os.path.join(into, "timer.cuh")],
                            name.lower())
    wetric = os.path.join(into, "wetric")
    os.makedirs(wetric)
    shutil.copy(os.path.join(peers, WETRIC, "tc.cu"), wetric)
    built["WETRIC"] = _nvcc(wetric, ["-O3", f"-arch={arch}", "-Xcompiler", "-funroll-loops,-O3"], "wetric")
    return built


def _nvcc(folder: str, flags: list, name: str) -> str:
    done = subprocess.run(["nvcc", *flags, "-o", name, "tc.cu"], cwd=folder, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"nvcc {name}: {done.stderr[-3000:]}")
    return os.path.join(folder, name)


def run_timed(executable: str, args: list, repeat: int) -> tuple[int, list]:
    """(the count it printed, the ms of its launches after the first) of a peer patched by timed_source."""
    done = subprocess.run([executable, *args], capture_output=True, text=True, timeout=3600)
    found = COUNT_LINE.findall(done.stdout)
    times = [float(t) for t in re.findall(r"peer_ms ([0-9.]+)", done.stderr)]
    if done.returncode or not found or len(times) != repeat + 1:
        raise SystemExit(f"{executable} {' '.join(args)}: exit {done.returncode}, {len(times)} launches timed\n"
                         f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return int(found[-1]), times[1:]


def run_wetric(executable: str, edges: str, spread: int, bitmap: int, repeat: int) -> tuple[int, list]:
    """(count, ms of its launches after its own warm-up): its table's triangles and GPU exec columns."""
    done = subprocess.run([executable, "-e", edges, "-z", "-s", str(spread), "-a", str(bitmap), "-l", str(repeat)],
                          capture_output=True, text=True, timeout=7200)
    rows = [line.split() for line in done.stdout.splitlines() if line.startswith(edges)]
    if done.returncode or len(rows) != repeat:
        raise SystemExit(f"WETRIC -s {spread} -a {bitmap}: exit {done.returncode}\n{done.stdout[-2000:]}\n"
                         f"{done.stderr[-2000:]}")
    counts = {int(row[5]) for row in rows}
    if len(counts) != 1:
        raise SystemExit(f"WETRIC -s {spread} -a {bitmap}: counts {sorted(counts)}")
    return counts.pop(), [1000 * float(row[8]) for row in rows]


def auto_ms(graph, repeat: int) -> tuple[int, str, list]:
    """(count, choice, ms) of --kernel auto on the graph on the GPU, as jobs/bench_gpu.py times it."""
    from bench_gpu import bound, event_times

    from tcdist.count.auto import Auto
    from tcdist.count.registry import parse_spec
    from tcdist.partition.part import Part

    whole = Part(0, graph.rowptr, graph.col, None, graph.n, {} if graph.degrees is None else
                 {"degrees": graph.degrees})
    auto = Auto("gpu")

    def run():
        name, given = parse_spec(auto.label(whole))
        return bound(name, None, given)(graph.rowptr, graph.col, graph.n)

    value, times = event_times(run, repeat)
    return value, auto.label(whole), times


def bench_graph(spec: str, built: dict, args, scratch: str) -> dict:
    import cupy

    import tcdist

    graph = tcdist.load_graph(spec, device="gpu")
    triangles, choice, times = auto_ms(graph, args.repeat)
    row = {"graph": spec, "n": graph.n, "m": graph.m, "triangles": triangles,
           "auto": {"choice": choice, "ms": times, "median_ms": median(times)}, "peers": {}}
    print(f"  {spec:<24} auto ({choice}) {median(times):9.3f} ms  {triangles:,}", flush=True)
    rowptr, col = cupy.asnumpy(graph.rowptr), cupy.asnumpy(graph.col)
    del graph
    cupy.get_default_memory_pool().free_all_blocks()  # the peers' processes take the GPU next
    for name, layout in (("GroupTC", rid_csr), ("TRUST", trust_csr)):
        folder = write_csr(os.path.join(scratch, name), layout(rowptr, col))
        count, ms = run_timed(built[name], [folder, "0", str(args.repeat + 1)], args.repeat)
        row["peers"][name] = {"triangles": count, "ms": ms, "median_ms": median(ms)}
        print(f"  {spec:<24} {name:<14} {median(ms):9.3f} ms  {count:,}", flush=True)
        shutil.rmtree(folder)
    del rowptr, col
    edges = os.path.join(scratch, "edges.txt")
    tcdist.convert(spec, edges)
    settings = {}
    for spread in args.spreads:
        for bitmap in args.bitmaps:
            count, ms = run_wetric(built["WETRIC"], edges, spread, bitmap, args.repeat)
            settings[f"s={spread} a={bitmap}"] = {"triangles": count, "ms": ms, "median_ms": median(ms)}
    os.remove(edges)
    best = min(settings, key=lambda k: settings[k]["median_ms"])
    row["peers"]["WETRIC"] = {**settings[best], "setting": best, "settings": settings}
    print(f"  {spec:<24} WETRIC ({best}) {settings[best]['median_ms']:9.3f} ms", flush=True)
    wrong = {name: p["triangles"] for name, p in row["peers"].items() if p["triangles"] != triangles} | \
        {f"WETRIC {k}": s["triangles"] for k, s in settings.items() if s["triangles"] != triangles}
    if wrong:
        row["wrong"] = wrong
        print(f"  {spec}: counts differ from tcdist's {triangles:,}: {wrong}", flush=True)
    return row


def markdown(record: dict) -> str:
    lines = [f"# `--kernel auto` against the published GPU codes ({record['device']}, {record['gpu']})", "",
             f"Kernel time only, CUDA events, median of {record['repeat']} after a warm-up launch; "
             f"`jobs/bench_peers.py`, commit {record['commit']}, {record['date']}.", "",
             "| graph | edges | triangles | auto (choice) | WETRIC best (setting) | GroupTC | TRUST | auto / WETRIC "
             "| auto / GroupTC | auto / TRUST |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in record["graphs"]:
        auto, peers = r["auto"]["median_ms"], r["peers"]
        ratios = " | ".join(f"{auto / peers[p]['median_ms']:.2f}" for p in ("WETRIC", "GroupTC", "TRUST"))
        lines.append(f"| `{r['graph']}` | {r['m']:,} | {r['triangles']:,} | {auto:.3f} (`{r['auto']['choice']}`) | "
                     f"{peers['WETRIC']['median_ms']:.3f} ({peers['WETRIC']['setting']}) | "
                     f"{peers['GroupTC']['median_ms']:.3f} | {peers['TRUST']['median_ms']:.3f} | {ratios} |")
    wrong = [f"- `{r['graph']}`: " + ", ".join(f"{name} counted {count:,}" for name, count in r["wrong"].items())
             + f", not {r['triangles']:,}" for r in record["graphs"] if r.get("wrong")]
    if wrong:
        lines += ["", "Counts that differ from tcdist's (the peer's time stands for a wrong answer):", *wrong]
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--peers", required=True, help=f"the folder holding {TC_COMPARE}/ and {WETRIC}/")
    p.add_argument("--graphs", nargs="+", required=True)
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--spreads", type=int, nargs="+", default=[4, 8, 16], help="WETRIC's -s values")
    p.add_argument("--bitmaps", type=int, nargs="+", default=[0, 8192, 32768], help="WETRIC's -a values")
    p.add_argument("--scratch", default=os.environ.get("TMPDIR", "/tmp"), help="where the peers' inputs are written")
    p.add_argument("--device", required=True, help="the machine kind, e.g. nvidia-h100-x1")
    p.add_argument("--out")
    p.add_argument("--markdown")
    args = p.parse_args()
    import cupy

    props = cupy.cuda.runtime.getDeviceProperties(0)
    arch = f"sm_{props['major']}{props['minor']}"
    t0 = time.perf_counter()
    built = build(args.peers, os.path.join(args.scratch, "tcdist-peers"), arch)
    print(f"peers built for {arch} in {time.perf_counter() - t0:.0f} s", flush=True)
    record = {**metadata(args.device), "gpu": props["name"].decode(), "arch": arch, "repeat": args.repeat,
              "peers": {TC_COMPARE: _head(args.peers, TC_COMPARE), WETRIC: _head(args.peers, WETRIC)}, "graphs": []}
    for spec in args.graphs:
        record["graphs"].append(bench_graph(spec, built, args, args.scratch))
        if args.out:
            with open(args.out, "w") as f:
                json.dump(record, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(record))
    print(markdown(record))
    sys.exit(1 if any("wrong" in r for r in record["graphs"]) else 0)


def _head(peers: str, name: str) -> str:
    """The commit of a peer's own checkout (its .git there: a folder inside tcdist's tree would give
    tcdist's), else what its folder's COMMIT file says."""
    folder = os.path.join(peers, name)
    if os.path.exists(os.path.join(folder, ".git")):
        done = subprocess.run(["git", "-C", folder, "rev-parse", "HEAD"], capture_output=True, text=True)
        if done.returncode == 0:
            return done.stdout.strip()
    marker = os.path.join(folder, "COMMIT")
    if not os.path.exists(marker):
        return "unknown"
    with open(marker) as f:
        return f.read().strip()


if __name__ == "__main__":
    main()
