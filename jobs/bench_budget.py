"""One GPU, graphs larger than a memory budget: counted part after part, against the in-memory count.

    python jobs/bench_budget.py --device nvidia-h200 --case rmat:25=2GiB@whole,4GiB@6,4GiB \
        --case ../.datasets/soc-Epinions1.txt.gz=8MiB --work /tmp/budget --out results/budget-h100.json \
        --plot results/budget-h100.png [--kernel auto lstc-group]

For each case the graph is made once as a tcdist graph file (generated and built on the GPU
without a budget; a real graph is read), so every run below starts from the same file on the
host. Then, each as its own `tcdist count FILE --backend gpu --json` process:
- the in-memory count (the whole graph uploaded once, no budget), with each --kernel (auto's
  in-memory kernel may need memory of its own that no budget leaves: bitmap's bitmaps are 4x
  RMAT-25's CSR; a second kernel shows what the budget costs with the kernel fixed);
- for every budget, `--parts auto --gpu-memory-limit BUDGET` (BUDGET@P: P parts; BUDGET@whole:
  no partitioning): P chosen, parts built on the host one at a time, a part over the budget
  counted in slices, the next part's (or slice's) copy overlapping the current count; the peak
  GPU memory the allocator saw, the kernel seconds (prepare steps included), the copy seconds
  the count did not hide and those it did.
The host partitioner alone is timed by jobs/bench_host_partition.py.

With --user GRAPH (repeatable), what a user waits for instead: `tcdist count G --backend gpu`
with no option, then with `--gpu-memory-limit L` and nothing else for each of --limits (sizes, or
multiples of the graph's CSR such as 0.125x), G given as its spec and, with --forms, as a
`.h5` file written once; the wall clock from the command to its answer (best of --repeat),
every phase, the peak GPU memory, the parts and slices the run chose, and the ratio to the
in-memory wall clock; --plot draws wall clock against limit:

    python jobs/bench_budget.py --device nvidia-h100-x1 --user rmat:25 --user rmat:26 --forms spec h5 \\
        --limits 1x 0.5x 0.25x 0.125x 2GiB 4GiB --work /tmp/budget --out results/budget-user-h100.json \\
        --plot results/budget-user-h100.png
"""

import argparse
import json
import os
import subprocess
import sys
import time

from meta import metadata

from tcdist.budget.sizes import parse_size, size_text


def tcdist_json(*args, refusal_ok=False, timeout=None):
    """The --json record of one tcdist run; with refusal_ok, a run that tcdist refuses (exit 2:
    no P fits the budget), or one stopped (SIGTERM) after timeout seconds, comes back as
    {"refused": its one line}."""
    command = [sys.executable, "-m", "tcdist", *map(str, args), "--json", "-q"]
    t0 = time.perf_counter()
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as job:
        try:
            out, err = job.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            job.terminate()  # (tcdist removes its temporaries on SIGTERM)
            try:
                job.communicate(timeout=60)
            except subprocess.TimeoutExpired:  # stuck in a call that does not return to Python
                job.kill()
                job.communicate()
            if refusal_ok:
                return {"refused": f"stopped after {timeout} s (--run-timeout)", "job_wall_s": time.perf_counter() - t0}
            raise SystemExit(f"stopped after {timeout} s: {' '.join(command)}") from None
    done = subprocess.CompletedProcess(command, job.returncode, out, err)
    if refusal_ok and done.returncode == 2:
        return {"refused": done.stderr.strip(), "job_wall_s": time.perf_counter() - t0}
    if done.returncode != 0:
        raise SystemExit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stderr[-3000:]}")
    record = json.loads(done.stdout)
    record["job_wall_s"] = time.perf_counter() - t0
    return record


def graph_file(spec, work, log, device="gpu"):
    """A tcdist graph file of spec (made on the GPU for a generator spec) and the seconds it took."""
    if os.path.exists(spec):
        return spec, 0.0
    path = os.path.join(work, spec.replace(":", "-") + ".h5")
    if not os.path.exists(path):
        t0 = time.perf_counter()
        code = ("import sys, tcdist; from tcdist.io.h5graph import write_graph; "
                "write_graph(tcdist.load_graph(sys.argv[1], device=sys.argv[3]), sys.argv[2])")
        subprocess.run([sys.executable, "-c", code, spec, path, device], check=True)
        log(f"{spec}: graph file made in {time.perf_counter() - t0:.1f} s ({os.path.getsize(path) / 2**30:.2f} GiB)")
    return path, os.path.getsize(path)


def summary(record):
    t = record["timings"]
    return {"triangles": record["triangles"], "n": record["n"], "m": record["m"], "parts": record["parts"],
            "gpu_peak_bytes": record.get("gpu_peak_bytes"), "memory_budget": record.get("memory_budget"),
            "slices": record["slices"], "kernels": record["kernels"], "kernel_s": t["count"] + t["prepare"],
            "transfer_s": t["transfer"],
            "transfer_overlapped_s": t["transfer_overlapped"],
            "read_s": t["read"], "partition_s": t["partition"], "parts_waited_s": t["store_read"],
            "total_s": t["total"], "job_wall_s": record["job_wall_s"],
            "part_bytes": [p["bytes"] for p in record["part_stats"]],
            "edge_replication": sum(p["e_res"] for p in record["part_stats"]) / record["m"] if record["part_stats"] else 1.0}


def bench_case(case, backend, kernels, work, log, save, cases):
    """Every budget of one case, with each kernel (auto first): its in-memory count, then the
    budgeted ones against it and against the first kernel's in-memory count."""
    spec, budgets = case.split("=")
    path, file_bytes = graph_file(spec, work, log, backend)
    best = None
    for kernel in kernels:
        whole = summary(tcdist_json("count", path, "--backend", backend, "--kernel", kernel))
        best = best or whole
        log(f"{spec}, --kernel {kernel}: in memory {whole['triangles']:,} triangles, kernel {whole['kernel_s']:.3f} s, "
            f"transfer {whole['transfer_s']:.3f} s, kernels {whole['kernels']}")
        rows = []
        cases.append({"graph": spec, "kernel": kernel, "file": path, "file_bytes": file_bytes, "in_memory": whole,
                      "budgets": rows})
        for entry in budgets.split(","):
            budget, _, parts = entry.partition("@")  # 4GiB: --parts auto; 4GiB@6: six parts; 4GiB@whole: none
            split = [] if parts == "whole" else ["--parts", parts or "auto"]
            done = tcdist_json("count", path, "--backend", backend, "--kernel", kernel, *split, "--gpu-memory-limit",
                               budget, refusal_ok=True)
            if "refused" in done:
                rows.append({"budget": budget, "asked_parts": parts or "auto", **done})
                save()
                log(f"  budget {entry}: refused: {done['refused']}")
                continue
            r = summary(done)
            if r["triangles"] != whole["triangles"]:
                raise SystemExit(f"{spec} under {budget}: {r['triangles']} != {whole['triangles']}")
            r["budget"], r["asked_parts"] = budget, parts or "auto"
            r["ratio_to_in_memory"] = (r["kernel_s"] + r["transfer_s"]) / (whole["kernel_s"] + whole["transfer_s"])
            r["ratio_to_in_memory_kernel"] = (r["kernel_s"] + r["transfer_s"]) / whole["kernel_s"]
            r["ratio_to_first_in_memory"] = (r["kernel_s"] + r["transfer_s"]) / (best["kernel_s"] + best["transfer_s"])
            rows.append(r)
            save()
            log(f"  budget {budget}: P={r['parts']}, {r['slices']} slices, peak {size_text(r['gpu_peak_bytes'] or 0)}, "
                f"kernel {r['kernel_s']:.3f} s, transfer not hidden {r['transfer_s']:.3f} s, hidden "
                f"{r['transfer_overlapped_s']:.3f} s, (kernel+transfer)/in-memory {r['ratio_to_in_memory']:.2f}x "
                f"(/{kernels[0]} in memory {r['ratio_to_first_in_memory']:.2f}x), partition {r['partition_s']:.1f} s, "
                f"kernels {r['kernels']}")


PHASES = ("compile", "generate", "read", "build", "partition", "store_read", "transfer", "prepare", "count", "other")


def csr_bytes(record) -> int:
    """The bytes of a graph's CSR: rowptr int64, col int32 below 2^31 vertices."""
    return 8 * (record["n"] + 1) + (4 if record["n"] < 2**31 else 8) * record["m"]


def limit_bytes(limit: str, csr: int) -> int:
    """A --limits entry: a size, or a multiple of the CSR (0.125x), rounded down to MiB."""
    size = int(float(limit[:-1]) * csr) if limit.endswith("x") else parse_size(limit)
    return max(size >> 20, 1) << 20


def user_path(spec, forms, limits, backend, repeat, work, log, save, rows, timeout=None):
    """The graph as a user counts it, in memory and under every limit, in each form."""
    files = {"spec": spec, "file": spec}
    if "h5" in forms:
        files["h5"] = graph_file(spec, work, log, backend)[0]
    for form in forms:
        def best(*extra):
            runs = [tcdist_json("count", files[form], "--backend", backend, *extra, refusal_ok=True, timeout=timeout)
                    for _ in range(repeat)]
            return min(runs, key=lambda r: ("refused" in r, r["job_wall_s"]))  # a run that counted, if any did

        whole = best()
        if "refused" in whole:
            raise SystemExit(f"{spec} {form} in memory: {whole['refused']}")
        csr = csr_bytes(whole)
        for limit in [None, *limits]:
            size = limit and limit_bytes(limit, csr)
            r = whole if limit is None else best("--gpu-memory-limit", str(size))
            row = {"graph": spec, "form": form, "limit": limit, "limit_bytes": size, "csr_bytes": csr,
                   "job_wall_s": r["job_wall_s"]}
            if "refused" in r:
                row["refused"] = r["refused"]
                log(f"{spec} {form} limit {limit} ({size_text(size)}): refused: {r['refused']}")
            else:
                if r["triangles"] != whole["triangles"]:
                    raise SystemExit(f"{spec} {form} under {limit}: {r['triangles']} != {whole['triangles']}")
                row.update(triangles=r["triangles"], mode=r["mode"], parts=r["parts"], slices=r["slices"],
                           gpu_peak_bytes=r.get("gpu_peak_bytes"), phases={k: r["timings"][k] for k in PHASES},
                           ratio_to_in_memory=r["job_wall_s"] / whole["job_wall_s"])
                log(f"{spec} {form} " + ("in memory" if limit is None else f"limit {limit} ({size_text(size)})")
                    + f": {r['job_wall_s']:.2f} s wall ({row['ratio_to_in_memory']:.2f}x), P={r['parts']}, "
                    f"{r['slices']} slices, peak {size_text(r.get('gpu_peak_bytes') or 0)}; "
                    + ", ".join(f"{k} {v:.2f}" for k, v in row["phases"].items() if v >= 0.005))
            rows.append(row)
            save()


def user_plot(rows, path):
    """Wall clock against the GPU memory limit, a panel per graph, a line per form, the in-memory
    run dotted and three times it dashed (the goal)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    graphs = list(dict.fromkeys(r["graph"] for r in rows))
    fig, axes = plt.subplots(1, len(graphs), figsize=(6.5 * len(graphs), 4.5), squeeze=False)
    for ax, graph in zip(axes[0], graphs):
        for i, form in enumerate(dict.fromkeys(r["form"] for r in rows if r["graph"] == graph)):
            mine = [r for r in rows if (r["graph"], r["form"]) == (graph, form)]
            whole = next(r for r in mine if r["limit"] is None)
            limited = sorted((r for r in mine if r["limit"] is not None and "refused" not in r),
                             key=lambda r: r["limit_bytes"])
            ax.plot([r["limit_bytes"] / 2**30 for r in limited], [r["job_wall_s"] for r in limited], "-o",
                    color=f"C{i}", label=f"{form}, under the limit")
            ax.axhline(whole["job_wall_s"], linestyle=":", color=f"C{i}", label=f"{form}, in memory")
            ax.axhline(3 * whole["job_wall_s"], linestyle="--", color=f"C{i}", alpha=0.4, label=f"{form}, 3x in memory")
        ax.set(title=f"{graph}: tcdist count, command to answer", xlabel="--gpu-memory-limit (GiB)",
               ylabel="wall seconds", xscale="log")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def plot(cases, path):
    """Kernel plus the transfer the count did not hide, against the budget, a panel per graph and a
    line per kernel (each kernel's in-memory count dotted): the analogue of LSTC's Fig. 8 for one
    GPU and a budget."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    graphs = list(dict.fromkeys(case["graph"] for case in cases))
    fig, axes = plt.subplots(1, len(graphs), figsize=(6.5 * len(graphs), 4.5), squeeze=False)
    for ax, graph in zip(axes[0], graphs):
        for i, case in enumerate(c for c in cases if c["graph"] == graph):
            color = f"C{i}"
            rows = sorted((r for r in case["budgets"] if "refused" not in r), key=lambda r: parse_size(r["budget"]))
            x = [parse_size(r["budget"]) / 2**30 for r in rows]
            label = case.get("kernel", "auto")
            ax.plot(x, [r["kernel_s"] + r["transfer_s"] for r in rows], "-o", color=color, label=label)
            whole = case["in_memory"]
            ax.axhline(whole["kernel_s"] + whole["transfer_s"], linestyle=":", color=color,
                       label=f"{label}, in memory")
            for r, xi in zip(rows, x):
                ax.annotate(f"{r['slices']} slices", (xi, r["kernel_s"] + r["transfer_s"]), fontsize=7)
        ax.set(title=f"{os.path.basename(graph)}: kernel + copies not hidden", xlabel="GPU memory budget (GiB)",
               ylabel="seconds", xscale="log")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--case", action="append", default=[],
                   help="GRAPH=BUDGET[@P][,...] (a spec or a file; @P fixes P, else --parts auto)")
    p.add_argument("--device", required=True, help="the machine kind, e.g. nvidia-h100-x1")
    p.add_argument("--backend", default="gpu", help="gpu, or cpu to try the job without one")
    p.add_argument("--kernel", nargs="+", default=["auto"],
                   help="each case with each of these kernels (the first, auto by default, is the reference)")
    p.add_argument("--work", default="/tmp/tcdist-budget")
    p.add_argument("--out", required=True)
    p.add_argument("--plot")
    p.add_argument("--user", action="append", default=[], help="a graph (spec or file) counted as a user does it")
    p.add_argument("--forms", nargs="+", choices=("spec", "h5"), default=["spec"],
                   help="with --user: the graph as its spec and as a .h5 file")
    p.add_argument("--limits", nargs="+", default=["1x", "0.5x", "0.25x", "0.125x"],
                   help="with --user: sizes (4GiB) or multiples of the graph's CSR (0.125x)")
    p.add_argument("--repeat", type=int, default=1, help="with --user: runs of each row (the best is kept)")
    p.add_argument("--run-timeout", type=float,
                   help="with --user: seconds after which a run is stopped and its row kept as stopped")
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    result = {**metadata(args.device), "cases": [], "user": []}

    def save():
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)

    def log(text):
        print(text, flush=True)

    for graph in args.user:
        forms = ["spec"] if not os.path.exists(graph) else ["file"]
        user_path(graph, forms if forms == ["file"] else args.forms, args.limits, args.backend, args.repeat, args.work,
                  log, save, result["user"], args.run_timeout)
        if args.plot:
            user_plot(result["user"], args.plot if not args.case else args.plot.replace(".png", "-user.png"))
    for case in args.case:
        bench_case(case, args.backend, args.kernel, args.work, log, save, result["cases"])
        save()
        if args.plot:
            plot(result["cases"], args.plot)


if __name__ == "__main__":
    main()
