"""End to end, time to answer: `tcdist count FILE` as a user runs it, against the page cache,
pyarrow's CSV reader and networkit, on the same files and cores.

    python jobs/bench_e2e.py --device-kind nvidia-h100-x1 [--graphs rmat:22 rmat:24 er:8000000:100000000] \
        [--formats txt txt.gz mtx h5] [--work /tmp/e2e] [--out results/]
    python jobs/bench_e2e.py --device-kind cpu-2core --small --out /tmp     # a quick check, no GPU needed

Every graph is generated once (`tcdist generate SPEC -o G.txt`: the raw generated edges, self-loops
and duplicates included) and written as tab-separated text (.txt), gzip -1 of that (.txt.gz),
Matrix Market (.mtx, 1-based, the same edges) and tcdist's HDF5 graph (.h5, `tcdist convert`:
cleaned and oriented). For every graph and format, after one read that puts the file in the
page cache, each row is timed from outside (wall clock, best and median of --repeat):
- cat: `cat FILE > /dev/null`, the page-cache floor;
- pyarrow: `pyarrow.csv.read_csv` of the text formats on every core (the header lines of .mtx
  skipped, .gz decompressed by pyarrow), the floor of any parser that builds arrays;
- networkit (when importable; its own process, all cores): read, clean (self-loops and
  multi-edges removed) and TriangleEdgeScore summed / 3, by its EdgeListReader (`native`, .txt
  only: see the note in main) and by pyarrow's read and GraphFromCoo (`arrow`, every text
  format); it reads no .h5 (tcdist's own format);
- tcdist: `python -m tcdist count FILE --json --backend B` for B in gpu (CuPy and a GPU
  present) and cpu: cold (fresh, empty compile caches: every variable of CACHE_VARS pointed at a
  new folder) and then warm (--repeat runs on the caches the cold run filled). Every phase of its
  --json timings is kept; wall minus its `total` is the process's start, imports and exit.
  Cold means the compile caches only: the file is in the page cache for every row.
Also `tcdist count SPEC` (the generator path, no file) for the graphs of --from-spec.
Every count of a graph must equal every other (any tool, format, backend); a mismatch is
printed at once, kept in the JSON's `mismatches`, and the job exits with status 1 at its end.
Results go to --out as e2e-DEVICE_KIND.json (written after every row, so a cut-off run keeps
what it measured) and e2e-DEVICE_KIND.png (when matplotlib is importable).

On a lent GPU host (networkit from the carried wheel), a graph or a few formats a call, with a
--work that the next call on the same warm machine reuses:
    bash jobs/gpu_host.sh e2e --device-kind nvidia-h100-x1 --graphs rmat:22 --work /tmp/e2e
"""

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from meta import compile_bytecode, median, metadata

# Compile caches a cold run starts without (each variable set to an empty folder): its CUDA modules
# are in CuPy's cache, its CPU kernels in Numba's (NUMBA_CACHE_DIR overrides TCDIST_CACHE_DIR's);
# CUDA_CACHE_PATH is the driver's JIT cache (PTX compiled to the GPU's code).
CACHE_VARS = ("CUPY_CACHE_DIR", "NUMBA_CACHE_DIR", "CUDA_CACHE_PATH")
GRAPHS = ["rmat:22", "rmat:24", "er:8000000:100000000"]
SMALL_GRAPHS = ["rmat:14", "rmat:16", "er:20000:200000"]
FORMATS = ["txt", "txt.gz", "mtx", "h5"]
TEXT_FORMATS = {"txt": "\t", "txt.gz": "\t", "mtx": " "}  # and their delimiters
PHASES = ("compile", "generate", "read", "build", "partition", "store_write", "share", "store_read", "transfer", "prepare",
          "count", "other")  # tcdist's timings that add up to its total (the *_overlapped ones are hidden)
HERE = os.path.dirname(os.path.abspath(__file__))


def log(text):
    print(text, flush=True)


def stats(walls):
    return {"wall_s": walls, "best_s": min(walls), "median_s": median(walls)}


# ---- the files -------------------------------------------------------------------------------

def tcdist_cli(*args, env=None):
    """(wall seconds, the --json record) of one `python -m tcdist ARGS --json -q` process."""
    command = [sys.executable, "-m", "tcdist", *map(str, args), "--json", "-q"]
    t0 = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stderr[-3000:]}")
    return wall, json.loads(done.stdout)


def read_table(path, fmt):
    """The two id columns of a text format as a pyarrow Table, on every core."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    skip = 0
    if fmt == "mtx":  # banner and comments (%), then the size line: skipped up to it
        with open(path, "rb") as f:
            for skip, line in enumerate(f, 1):
                if not line.startswith(b"%"):
                    break
    return pcsv.read_csv(path, read_options=pcsv.ReadOptions(column_names=["u", "v"], skip_rows=skip),
                         parse_options=pcsv.ParseOptions(delimiter=TEXT_FORMATS[fmt]),
                         convert_options=pcsv.ConvertOptions(column_types={"u": pa.int64(), "v": pa.int64()}))


def write_mtx(txt, path):
    """The edges of txt as a Matrix Market pattern file: 1-based, every line as it was."""
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    table = read_table(txt, "txt")
    n = max(pc.max(table["u"]).as_py(), pc.max(table["v"]).as_py()) + 1
    table = table.set_column(0, "u", pc.add(table["u"], 1)).set_column(1, "v", pc.add(table["v"], 1))
    with open(path + ".part", "wb") as f:
        f.write(f"%%MatrixMarket matrix coordinate pattern general\n{n} {n} {table.num_rows}\n".encode())
        pcsv.write_csv(table, f, pcsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none"))
    os.replace(path + ".part", path)


def write_gz(txt, path):
    """gzip -1 of txt, one gzip stream: pigz where the host has it, else ISA-L's igzip (several times
    gzip's speed), else gzip."""
    if shutil.which("pigz"):
        tool = ["pigz", "-1", "-p", str(os.cpu_count())]
    elif importlib.util.find_spec("isal"):
        tool = [sys.executable, "-m", "isal.igzip", "-1"]
    else:
        tool = ["gzip", "-1"]
    with open(path + ".part", "wb") as dst:
        subprocess.run([*tool, "-c", txt], stdout=dst, check=True)
    os.replace(path + ".part", path)


def make_files(spec, work, formats):
    """{format: path} of spec in work, each written once (kept from an earlier run of the same --work)."""
    base = os.path.join(work, spec.replace(":", "-"))
    txt = base + ".txt"
    makers = {"txt": lambda p: tcdist_cli("generate", spec, "-o", p),
              "txt.gz": lambda p: write_gz(txt, p),
              "mtx": lambda p: write_mtx(txt, p),
              "h5": lambda p: tcdist_cli("convert", txt, p)}
    paths = {}
    for fmt in ["txt", *(f for f in formats if f != "txt")]:
        path = paths[fmt] = f"{base}.{fmt}"
        if not os.path.exists(path):
            t0 = time.perf_counter()
            makers[fmt](path)
            log(f"{spec}: wrote {os.path.basename(path)} ({os.path.getsize(path) / 1e9:.2f} GB) in "
                f"{time.perf_counter() - t0:.1f} s")
    return {fmt: paths[fmt] for fmt in formats}


# ---- the rows --------------------------------------------------------------------------------

def floor_row(path, repeat):
    """`cat FILE > /dev/null` after one warming read: the page cache's speed."""
    walls = []
    for i in range(repeat + 1):
        t0 = time.perf_counter()
        subprocess.run(["cat", path], stdout=subprocess.DEVNULL, check=True)
        walls.append(time.perf_counter() - t0)
    row = {"tool": "cat", **stats(walls[1:])}
    row["GB_per_s"] = os.path.getsize(path) / row["best_s"] / 1e9
    return row


def pyarrow_row(path, fmt, repeat):
    walls = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        rows = read_table(path, fmt).num_rows
        walls.append(time.perf_counter() - t0)
    row = {"tool": "pyarrow", "edges": rows, **stats(walls)}
    row["GB_per_s"] = os.path.getsize(path) / row["best_s"] / 1e9
    return row


def networkit_child(path, fmt, how):
    """In its own process (--networkit-child): read, clean, count on every core; one JSON line."""
    t0 = time.perf_counter()
    import networkit as nk

    nk.setNumberOfThreads(os.cpu_count())
    t1 = time.perf_counter()
    if how == "native":
        graph = nk.graphio.EdgeListReader("\t", 0, continuous=True, directed=False).read(path)
    else:
        table = read_table(path, fmt)
        u, v = (table[c].to_numpy().astype("uint64") for c in ("u", "v"))
        del table
        graph = nk.GraphFromCoo((u, v), n=int(max(u.max(), v.max())) + 1, directed=False)
        del u, v
    t2 = time.perf_counter()
    graph.removeSelfLoops()
    graph.removeMultiEdges()
    graph.indexEdges(True)
    t3 = time.perf_counter()
    score = nk.sparsification.TriangleEdgeScore(graph)
    score.run()
    t4 = time.perf_counter()
    triangles = round(sum(score.scores())) // 3  # a Python list of a float per edge: its own phase
    t5 = time.perf_counter()
    print(json.dumps({"triangles": triangles, "n": graph.numberOfNodes(), "m": graph.numberOfEdges(),
                      "threads": nk.getMaxNumberOfThreads(), "timings": {
                          "import": t1 - t0, "read": t2 - t1, "clean": t3 - t2, "count": t4 - t3, "sum_scores": t5 - t4,
                          "total": t5 - t0}}))


def networkit_row(path, fmt, how, repeat):
    runs = []
    for _ in range(repeat):
        command = [sys.executable, os.path.join(HERE, "bench_e2e.py"), "--networkit-child", path, fmt, how]
        t0 = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if done.returncode != 0:
            raise SystemExit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stderr[-3000:]}")
        runs.append({"wall_s": wall, **json.loads(done.stdout)})
    return {"tool": f"networkit-{how}", **runs_summary(runs)}


def runs_summary(runs):
    """best and median wall of runs, the count and the phases of the best run, and every run."""
    best = min(runs, key=lambda r: r["wall_s"])
    return {**stats([r["wall_s"] for r in runs]), "triangles": best["triangles"], "n": best["n"], "m": best["m"],
            "threads": best.get("threads"), "phases": best["timings"], "runs": runs}


def tcdist_rows(source, backend, repeat, work):
    """Cold (empty compile caches) then warm (repeat runs on the caches the cold run filled)."""
    with tempfile.TemporaryDirectory(prefix="caches-", dir=work) as caches:
        env = dict(os.environ, **{var: os.path.join(caches, var) for var in CACHE_VARS})

        def run():
            wall, record = tcdist_cli("count", source, "--backend", backend, env=env)
            keep = ("triangles", "n", "m", "threads", "kernels", "timings", "gpu_peak_bytes")
            return {"wall_s": wall, **{k: record.get(k) for k in keep}, "gpu": record["rank_stats"][0]["gpu"]}

        cold = [run()]
        warm = [run() for _ in range(repeat)]
    return [{"tool": "tcdist", "backend": backend, "cache": "cold", **runs_summary(cold)},
            {"tool": "tcdist", "backend": backend, "cache": "warm", **runs_summary(warm)}]


def describe(row):
    text = f"  {row['format']:6s} {row['tool']:17s} {row.get('backend', ''):3s} {row.get('cache', ''):4s} " \
           f"best {row['best_s']:8.3f} s  median {row['median_s']:8.3f} s"
    if "GB_per_s" in row:
        text += f"  {row['GB_per_s']:.2f} GB/s"
    if "phases" in row:
        text += "  " + ", ".join(f"{k} {v:.2f}" for k, v in row["phases"].items() if v >= 0.005 and k != "total")
    return text


class Exact:
    """Every count of a graph against the first one measured; a mismatch is kept and reported."""

    def __init__(self):
        self.first, self.mismatches = {}, []

    def check(self, graph, row):
        what = f"{row['format']} {row['tool']} {row.get('backend', '')} {row.get('cache', '')}".strip()
        for run in row.get("runs", []):
            first = self.first.setdefault(graph, (what, run["triangles"]))
            if run["triangles"] != first[1]:
                self.mismatches.append(f"{graph}: {what} counted {run['triangles']:,}, {first[0]} {first[1]:,}")
                log(f"COUNT MISMATCH: {self.mismatches[-1]}")


def bench_graph(spec, args, backends, networkit, exact, rows, save):
    def add(row, fmt, path=None):
        row = {"graph": spec, "format": fmt, "bytes": path and os.path.getsize(path), **row}
        rows.append(row)
        exact.check(spec, row)
        save()
        log(describe(row))

    for fmt, path in make_files(spec, args.work, args.formats).items():
        add(floor_row(path, args.repeat), fmt, path)  # also the warming read of the rows below
        if fmt in TEXT_FORMATS:
            add(pyarrow_row(path, fmt, args.repeat), fmt, path)
            for how in networkit:
                if how == "arrow" or fmt == "txt":
                    add(networkit_row(path, fmt, how, args.peer_repeat), fmt, path)
        for backend in backends:
            for row in tcdist_rows(path, backend, args.repeat, args.work):
                add(row, fmt, path)
    if spec in args.from_spec:
        for backend in backends:
            for row in tcdist_rows(spec, backend, args.repeat, args.work):
                add(row, "spec")


# ---- where it ran, and the plot ----------------------------------------------------------------

def gpu_names():
    """nvidia-smi's name of each GPU ([] without one)."""
    if not shutil.which("nvidia-smi"):
        return []
    done = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True)
    return [line.strip() for line in done.stdout.splitlines() if line.strip()] if done.returncode == 0 else []


def versions():
    found = {}
    for name in ("tcdist", "numpy", "numba", "pyarrow", "cupy", "networkit"):
        if importlib.util.find_spec(name):
            done = subprocess.run([sys.executable, "-c", f"import {name}; print({name}.__version__)"],
                                  capture_output=True, text=True)
            found[name] = done.stdout.strip() or done.stderr.strip().splitlines()[-1]
    return found


def plot(result, path):
    """A panel per graph: each row's best wall, tcdist's split into its phases (the rest of its
    wall: process start, imports, exit)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    graphs = list(dict.fromkeys(r["graph"] for r in result["rows"]))
    sizes = [sum(r["graph"] == g for r in result["rows"]) for g in graphs]
    fig, axes = plt.subplots(len(graphs), 1, figsize=(12, 1.5 + 0.24 * max(sizes) * len(graphs)), squeeze=False,
                             height_ratios=sizes)
    colours = {phase: plt.cm.tab20(i) for i, phase in enumerate((*PHASES, "process"))}
    for ax, graph in zip(axes[:, 0], graphs):
        rows = [r for r in result["rows"] if r["graph"] == graph][::-1]
        labels = [f"{r['format']} {r['tool']} {r.get('backend', '')} {r.get('cache', '')}" for r in rows]
        for y, r in enumerate(rows):
            if r["tool"] != "tcdist":
                ax.barh(y, r["best_s"], color="0.6")
                continue
            left = 0.0
            for phase in PHASES:
                width = r["phases"].get(phase, 0.0)
                ax.barh(y, width, left=left, color=colours[phase], label=phase if width else None)
                left += width
            ax.barh(y, r["best_s"] - left, left=left, color=colours["process"], label="process")
        ax.set_yticks(range(len(rows)), labels, fontsize=6)
        ax.set(title=f"{graph}: time to answer, best of runs ({result['device']}, {', '.join(result['gpus']) or 'no GPU'})",
               xlabel="seconds", xscale="log")
        handles, names = ax.get_legend_handles_labels()
        unique = dict(zip(names, handles))  # one entry per phase
        ax.legend(unique.values(), unique.keys(), fontsize=6, loc="lower left", bbox_to_anchor=(1.01, 0))
    fig.tight_layout()
    fig.savefig(path, dpi=120)


# ---- the job -----------------------------------------------------------------------------------

def main():
    if sys.argv[1:2] == ["--networkit-child"]:  # networkit_row's process: FILE FORMAT HOW
        return networkit_child(*sys.argv[2:5])
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device-kind", required=True, help="the machine kind, e.g. nvidia-h100-x1 or cpu-2core")
    p.add_argument("--graphs", nargs="+", help=f"generator specs [{' '.join(GRAPHS)}; with --small "
                                                f"{' '.join(SMALL_GRAPHS)}]")
    p.add_argument("--small", action="store_true", help="small graphs, for a quick check on any machine")
    p.add_argument("--formats", nargs="+", choices=FORMATS, default=FORMATS)
    p.add_argument("--from-spec", nargs="*", help="graphs also counted from their spec (generator path) "
                                                  "[the first of --graphs]")
    p.add_argument("--backends", nargs="+", choices=("gpu", "cpu"),
                   help="[gpu (where CuPy and a GPU are) and cpu]")
    p.add_argument("--networkit", nargs="*", choices=("native", "arrow"), default=["native", "arrow"],
                   help="networkit's readers to time (none: no networkit rows)")
    p.add_argument("--repeat", type=int, default=3, help="timed runs of cat, pyarrow and warm tcdist")
    p.add_argument("--peer-repeat", type=int, default=1, help="runs of each networkit row")
    p.add_argument("--work", help="folder for the graph files, kept (and reused) when given [a temporary folder "
                                  "on local disk, removed at the end]")
    p.add_argument("--out", default=os.path.join(HERE, "..", "results"), help="folder for the JSON and the plot")
    args = p.parse_args()
    args.graphs = args.graphs or (SMALL_GRAPHS if args.small else GRAPHS)
    args.from_spec = args.graphs[:1] if args.from_spec is None else args.from_spec
    notes = []
    gpus = gpu_names()
    if args.backends is None:
        args.backends = ["gpu", "cpu"] if gpus and importlib.util.find_spec("cupy") else ["cpu"]
        if "gpu" not in args.backends:
            notes.append("no GPU or no CuPy: no --backend gpu rows")
    if args.networkit and not importlib.util.find_spec("networkit"):
        notes.append("networkit is not importable: no networkit rows")
        args.networkit = []
    if args.networkit:
        notes.append("networkit: no .h5 rows (tcdist's own format); its own reader (native) on .txt only: "
                     "EdgeListReader reads no .gz, and MTXGraphReader makes a general matrix a directed graph, "
                     "whose toUndirected + removeMultiEdges lost reciprocal pairs (or crashed) in networkit 11.3")
    compiled = compile_bytecode()
    if compiled:
        notes.append(compiled)
    os.makedirs(args.out, exist_ok=True)
    out = os.path.join(args.out, f"e2e-{args.device_kind}")
    result = {**metadata(args.device_kind), "gpus": gpus, "versions": versions(), "cache_vars": CACHE_VARS,
              "graphs": args.graphs, "formats": args.formats, "backends": args.backends, "repeat": args.repeat,
              "notes": notes, "mismatches": [], "rows": []}
    exact = Exact()

    def save():
        result["mismatches"] = exact.mismatches
        with open(out + ".json", "w") as f:
            json.dump(result, f, indent=1)

    for note in notes:
        log(f"note: {note}")
    temporary = args.work is None
    args.work = args.work or tempfile.mkdtemp(prefix="tcdist-e2e-", dir="/tmp")
    os.makedirs(args.work, exist_ok=True)
    try:
        for spec in args.graphs:
            bench_graph(spec, args, args.backends, args.networkit, exact, result["rows"], save)
    finally:
        save()
        if temporary:
            shutil.rmtree(args.work, ignore_errors=True)
    log(f"wrote {out}.json")
    if importlib.util.find_spec("matplotlib"):
        plot(result, out + ".png")
        log(f"wrote {out}.png")
    else:
        log("note: matplotlib is not importable: no plot")
    if exact.mismatches:
        log("COUNTS DISAGREE:\n" + "\n".join(exact.mismatches))
        sys.exit(1)


if __name__ == "__main__":
    main()
