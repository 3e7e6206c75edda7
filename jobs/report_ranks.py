"""The rank-scaling report: several bench_ranks.py result files (one per graph or run) merged
into one JSON, a markdown table and the speedup plot.

    python jobs/report_ranks.py results/ranks-h200x2-*.json --out results/ranks-h200x2
"""

import argparse
import json

from bench_ranks import plot, speedups


def load(paths):
    runs, rows, root = [], [], {}
    for path in paths:
        with open(path) as f:
            r = json.load(f)
        runs.append({k: v for k, v in r.items() if k not in ("rows", "root", "speedups")} | {"file": path})
        rows += [dict(row, run=len(runs) - 1, commit=r["commit"]) for row in r["rows"]]
        for graph, by_parts in r["root"].items():
            root.setdefault(graph, {}).update({p: dict(x, commit=r["commit"]) for p, x in by_parts.items()})
    return runs, rows, root


def markdown(runs, rows, root):
    devices = sorted({run["device"] for run in runs})
    lines = [f"# Rank scaling on {', '.join(devices)}", "",
             "Each row is one `mpirun -n R python -m tcdist count STORE --backend gpu` job on a store of P parts; "
             "phases are the slowest rank's (kernel: the sum of its parts' kernel seconds). Speedups compare R "
             "ranks with one rank, the same schedule and the same commit: on the same store where one rank counted "
             "it, else on the one-part store (the whole graph on one GPU; the column 'vs'); 'kernel, same parts' "
             "compares with the same parts counted from memory on one GPU by the root run. compile: binding the "
             "GPU and compiling or loading its kernels; other: what no stage accounts for. Runs: " + "; ".join(
                 f"`{run['file'].split('/')[-1]}` (commit {run['commit']}, {run['date']})" for run in runs), "",
             "| graph | commit | P | R | schedule | kernel ms | vs P | kernel speedup | kernel, same parts | "
             "store read s | transfer s | compile s | other s | count wall s | wall speedup |", "|" + " --- |" * 15]
    fast = {(s["graph"], s["parts"], s["ranks"], s["schedule"]): s for s in speedups(rows, root)}
    for r in sorted(rows, key=lambda r: (r["graph"], r["parts"], r["ranks"], r["schedule"])):
        s = fast.get((r["graph"], r["parts"], r["ranks"], r["schedule"]))
        s = s or {}
        kernel, same, wall = (f"{s[k]:.2f}x" if s.get(k) is not None else "" for k in (
            "kernel_speedup", "kernel_speedup_same_parts", "count_wall_speedup"))
        base = str(s["baseline_parts"]) if s.get("baseline_parts") else ""
        extra = [f"{r[k]:.2f}" if k in r else "" for k in ("compile_s", "other_s")]
        lines.append(f"| {r['graph']} | {r['commit']} | {r['parts']} | {r['ranks']} | {r['schedule']} | "
                     f"{r['kernel_s'] * 1e3:.1f} | {base} | {kernel} | {same} | {r['store_read_s']:.2f} | "
                     f"{r['transfer_s']:.2f} | {' | '.join(extra)} | {r['count_wall_s']:.2f} | {wall} |")
    lines += ["", "Root rank (one process: read or generate, build, partition on the GPU, write the store):", "",
              "| graph | commit | P | read+build s | partition s | store write s | store GiB | edge replication | "
              "kernel, parts from memory ms |", "|" + " --- |" * 9]
    for graph, by_parts in sorted(root.items()):
        for parts, x in sorted(by_parts.items(), key=lambda kv: int(kv[0])):
            lines.append(f"| {graph} | {x['commit']} | {parts} | {x['read_s'] + x['build_s']:.2f} | {x['partition_s']:.2f} | "
                         f"{x['store_write_s']:.2f} | {x['store_bytes'] / 2**30:.2f} | {x['edge_replication']:.2f} | "
                         f"{x['in_memory_kernel_s'] * 1e3:.0f} |")
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+")
    p.add_argument("--out", required=True, help="prefix of OUT.json, OUT.md and OUT.png")
    args = p.parse_args()
    runs, rows, root = load(args.files)
    with open(f"{args.out}.json", "w") as f:
        json.dump({"runs": runs, "rows": rows, "root": root, "speedups": speedups(rows, root)}, f, indent=1)
    with open(f"{args.out}.md", "w") as f:
        f.write(markdown(runs, rows, root))
    plot(rows, f"{args.out}.png", root)


if __name__ == "__main__":
    main()
