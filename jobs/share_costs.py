"""What a replicated run's shares cost on the CPU against what their estimate says.

    python jobs/share_costs.py rmat:22 --shares 16 --threads 4 --out results/share-costs-rmat22.json

The graph's rows are cut into --shares runs of equal estimated work (graph/work.py: each row's
edges, the out-degrees of its out-neighbours and its wedges weighed by --wedge-weight, by
default as CPU ranks cut them in ranks/prepare.py), and each share
is counted by the CPU's `middle` kernel on --threads threads, as a rank of that many threads
counts it: its in-edges (prepare) and its count, timed. Beside each share: its rows, edges, the
wedges of its rows (d(d-1)/2 for a row of out-degree d, what `middle`'s lookups are bounded by)
and its triangles. A static plan deals shares by their estimate, so where the times of equal
estimates differ, so do the ranks' loads.
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


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("graph")
    p.add_argument("--shares", type=int, default=16)
    p.add_argument("--threads", type=int, default=1, help="CPU threads counting each share")
    p.add_argument("--wedge-weight", type=int, default=MIDDLE_WEDGE_WEIGHT,
                   help="probes a row's wedge weighs in the estimate (0: probes alone, as GPU ranks cut)")
    p.add_argument("--out")
    args = p.parse_args()
    graph = tcdist.load_graph(args.graph)
    rowptr, col = graph.rowptr, graph.col
    bounds, work = even_work(graph, args.shares, args.wedge_weight)
    compiled.set_threads(args.threads)
    count_middle(rowptr, col, min(graph.n, 2), 0)  # compiled before any share is timed
    degree = np.diff(rowptr).astype(np.int64)
    rows = []
    for k in range(bounds.size - 1):
        first, last = int(bounds[k]), int(bounds[k + 1])
        t0 = time.perf_counter()
        prepared = in_edges(rowptr, col, last, first)
        t1 = time.perf_counter()
        triangles = count_middle(rowptr, col, last, first, prepared)
        t2 = time.perf_counter()
        d = degree[first:last]
        rows.append({"share": k, "rows": [first, last], "estimate": int(work[k]), "edges": int(d.sum()),
                     "wedges": int((d * (d - 1) // 2).sum()), "triangles": triangles,
                     "prepare_s": t1 - t0, "count_s": t2 - t1})
        r = rows[-1]
        print(f"share {k:3d}: rows {first:>10,}-{last:<10,} estimate {r['estimate']:>14,} edges {r['edges']:>12,} "
              f"wedges {r['wedges']:>15,} prepare {r['prepare_s']:.3f} s count {r['count_s']:.3f} s", flush=True)
    seconds = [r["prepare_s"] + r["count_s"] for r in rows]
    print(f"{args.graph}: {sum(r['triangles'] for r in rows):,} triangles; the slowest share took "
          f"{max(seconds) / min(seconds):.2f}x the fastest, of equal estimates")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"graph": args.graph, "shares": args.shares, "threads": args.threads,
                       "wedge_weight": args.wedge_weight, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
