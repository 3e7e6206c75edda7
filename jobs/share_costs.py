"""What a replicated run's shares cost on the CPU against what their estimate says.

    python jobs/share_costs.py rmat:22 --shares 16 --threads 4 --ranks 4 --wedge-weight 0 4 \\
        --out results/share-costs-rmat22.json

For each --wedge-weight, the graph's rows are cut into --shares runs of equal estimated work
(graph/work.py: each row's edges, the out-degrees of its out-neighbours and its wedges weighed
by that many probes, as ranks/prepare.py cuts them: CPU ranks weigh them by the CPU device's
weight, the default), and each share is counted by the CPU's `middle` kernel on --threads threads,
as a rank of that many threads counts it: its in-edges (prepare) and its count, timed (the best
of --repeat). Beside each share: its rows, edges, the wedges of its rows (d(d-1)/2 for a row of
out-degree d, what `middle`'s lookups are bounded by) and its triangles. Then the static plan of
--ranks ranks (ranks/schedule.py, by the estimates) and each rank's load: the sum of its shares'
seconds. Where the times of equal estimates differ, so do the ranks' loads.
"""

import argparse
import json
import time

import numpy as np

import tcdist
from tcdist import compiled
from tcdist.count.cpu import count_middle, in_edges
from tcdist.device.cpu import MIDDLE_WEDGE_WEIGHT
from tcdist.graph.work import even_work
from tcdist.ranks.schedule import static_plan


def shares(graph, count: int, wedge_weight: int, repeat: int) -> list[dict]:
    rowptr, col = graph.rowptr, graph.col
    bounds, work = even_work(graph, count, wedge_weight)
    degree = np.diff(rowptr).astype(np.int64)
    rows = []
    for k in range(bounds.size - 1):
        first, last = int(bounds[k]), int(bounds[k + 1])
        best = None
        for _ in range(repeat):
            t0 = time.perf_counter()
            prepared = in_edges(rowptr, col, last, first)
            t1 = time.perf_counter()
            triangles = count_middle(rowptr, col, last, first, prepared)
            t2 = time.perf_counter()
            best = (t1 - t0, t2 - t1) if best is None or t2 - t0 < sum(best) else best
        d = degree[first:last]
        rows.append({"share": k, "rows": [first, last], "estimate": int(work[k]), "edges": int(d.sum()),
                     "wedges": int((d * (d - 1) // 2).sum()), "triangles": triangles,
                     "prepare_s": best[0], "count_s": best[1]})
        r = rows[-1]
        print(f"share {k:3d}: rows {first:>10,}-{last:<10,} estimate {r['estimate']:>14,} edges {r['edges']:>12,} "
              f"wedges {r['wedges']:>15,} prepare {r['prepare_s']:.3f} s count {r['count_s']:.3f} s", flush=True)
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("graph")
    p.add_argument("--shares", type=int, default=16)
    p.add_argument("--threads", type=int, default=1, help="CPU threads counting each share")
    p.add_argument("--ranks", type=int, default=4, help="ranks the static plan deals the shares to")
    p.add_argument("--wedge-weight", type=int, nargs="+", default=[MIDDLE_WEDGE_WEIGHT],
                   help="probes a row's wedge weighs in the estimate (0: probes alone, as GPU ranks cut)")
    p.add_argument("--repeat", type=int, default=2, help="runs of each share (the fastest is kept)")
    p.add_argument("--out")
    args = p.parse_args()
    graph = tcdist.load_graph(args.graph)
    compiled.set_threads(args.threads)
    count_middle(graph.rowptr, graph.col, min(graph.n, 2), 0)  # compiled before any share is timed
    runs = []
    for weight in args.wedge_weight:
        rows = shares(graph, args.shares, weight, args.repeat)
        seconds = [r["prepare_s"] + r["count_s"] for r in rows]
        plan = static_plan({r["share"]: r["estimate"] for r in rows}, args.ranks)
        loads = [sum(seconds[k] for k in mine) for mine in plan]
        runs.append({"wedge_weight": weight, "shares": rows, "plan": plan, "loads_s": loads})
        print(f"{args.graph}, wedges weighing {weight}: {sum(r['triangles'] for r in rows):,} triangles; the "
              f"slowest share took {max(seconds) / min(seconds):.2f}x the fastest, of equal estimates; "
              f"{args.ranks} ranks' loads {min(loads):.3f}-{max(loads):.3f} s, the slowest "
              f"{max(loads) / np.mean(loads):.3f}x the mean", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"graph": args.graph, "shares": args.shares, "threads": args.threads, "ranks": args.ranks,
                       "runs": runs}, f, indent=1)


if __name__ == "__main__":
    main()
