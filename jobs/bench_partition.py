"""Partitioning benchmark and the analogue of LSTC Tables 3-5 on an RMAT graph.

    python jobs/bench_partition.py [--scale 20] [--parts 2 4 8] [--out results/partition-rmat20.json]

Times random partitioning into 4 parts with --prune lstc (first call in the process, which
pays for fresh memory, and the median of the following calls), then tabulates |V_ind|,
|V_res|, |E_ind|, |E_res| and bytes for every scheme x prune mode x P, checking that the
parts' counts add up to the whole graph's.
"""

import argparse
import itertools
import json
import os
import time

from meta import median, metadata

import tcdist
from tcdist.count.cpu import count_marker
from tcdist.partition import PRUNE_MODES, SCHEMES, partition_graph


def markdown(record, path):
    """LSTC Tables 3-5 analogue: sizes of every scheme x P x prune mode, totals over parts."""
    t = record["random_P4_lstc_seconds"]
    lines = [f"# Partitioning {record['graph']}: {record['n']:,} vertices, {record['m']:,} edges, "
             f"{record['triangles']:,} triangles", "",
             f"{record['device']}, commit {record['commit']}, {record['date']}. Command: `{record['command']}`", "",
             f"Random partitioning into 4 parts with prune lstc ({record['backend']}): first call in the process "
             f"{t['first_call']:.2f} s, then median {t['warm_median']:.2f} s.", "",
             "Every row was checked: the parts' triangle counts add up to the whole graph's.", "",
             "| scheme | P | prune | V_ind | V_res | E_ind | E_res | GPU bytes | V_res / n | E_res / m | seconds |",
             "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in record["table"]:
        lines.append(f"| {r['scheme']} | {r['parts']} | {r['prune']} | {r['v_ind']:,} | {r['v_res']:,} | {r['e_ind']:,} "
                     f"| {r['e_res']:,} | {r['bytes'] / 2**20:,.1f} MiB | {r['vertex_replication']:.2f} "
                     f"| {r['edge_replication']:.2f} | {r['seconds']:.1f} |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scale", type=int, default=20)
    p.add_argument("--parts", type=int, nargs="*", default=[2, 4, 8], help="P of the statistics table (none: timing only)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--backend", default="cpu", help="cpu (NumPy) or gpu (CuPy arrays)")
    p.add_argument("--device", default=f"cpu-{os.cpu_count()}core")
    p.add_argument("--out")
    p.add_argument("--markdown", help="also write the table as markdown")
    p.add_argument("--from-json", help="only render --markdown from an earlier --out")
    args = p.parse_args()
    if args.from_json:
        with open(args.from_json) as f:
            markdown(json.load(f), args.markdown)
        return

    host = tcdist.load_graph(f"rmat:{args.scale}")
    graph = tcdist.load_graph(f"rmat:{args.scale}")
    if args.backend == "gpu":
        import cupy

        graph.rowptr, graph.col = cupy.asarray(graph.rowptr), cupy.asarray(graph.col)
    count = count_marker
    expected = count(host.rowptr, host.col, host.n)

    def timed():
        t0 = time.perf_counter()
        partition_graph(graph, 4, scheme="random", prune="lstc")
        if args.backend == "gpu":
            cupy.cuda.Device().synchronize()
        return time.perf_counter() - t0

    first = timed()
    warm = [timed() for _ in range(args.repeat)]

    table = []
    for scheme, parts, prune in itertools.product(SCHEMES, args.parts, PRUNE_MODES):
        t0 = time.perf_counter()
        result = partition_graph(host, parts, scheme=scheme, prune=prune)
        seconds = time.perf_counter() - t0
        triangles = sum(count(q.rowptr, q.col, q.n_local) for q in result.parts)
        if triangles != expected:
            raise SystemExit(f"{scheme} P={parts} {prune}: {triangles} != {expected}")
        row = {"scheme": scheme, "parts": parts, "prune": prune, "seconds": seconds, **result.totals(),
               "per_part": [q.stats for q in result.parts]}
        table.append(row)
        print(f"{scheme:<10} P={parts:<2} {prune:<7} V_ind {row['v_ind']:>11,} V_res {row['v_res']:>11,} "
              f"E_ind {row['e_ind']:>12,} E_res {row['e_res']:>12,} {row['bytes'] / 2**20:9.1f} MiB "
              f"({seconds:.1f} s)", flush=True)

    record = {**metadata(args.device), "graph": f"rmat:{args.scale} (seed 0)", "n": host.n, "m": host.m,
              "triangles": expected, "backend": args.backend,
              "random_P4_lstc_seconds": {"first_call": first, "warm": warm, "warm_median": median(warm)},
              "table": table}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(record, f, indent=1)
    if args.markdown:
        markdown(record, args.markdown)
    print(f"random P=4 lstc on rmat:{args.scale} ({host.m:,} edges): first call {first:.2f} s, "
          f"warm median {median(warm):.2f} s [{args.backend}, {args.device}]")


if __name__ == "__main__":
    main()
