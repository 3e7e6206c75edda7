"""The counting work of two orientations of the same graph (issue 63's "the orientation itself"):
tcdist's, by (degree, id), against a degeneracy order (vertices peeled in rounds of the least
remaining degree, ties by tcdist's rank: each vertex's out-degree at most the core it leaves
from). Per orientation: the wedges Σ C(d+(u), 2) that wedge-parallel kernels walk, the probes
Σ over edges u -> v of d+(v) that lookup kernels make, the largest out-degree, and the
out-degrees' spread (the rows a GPU's threads share). Exact counts, on the host; no GPU time.

    python jobs/orientation_work.py rmat:20 er:1000000:16000000 grid:1000:1000 --out results/orientation-work.md
"""

import argparse
import sys
import time

import numpy as np
from meta import metadata

import tcdist


def undirected(graph):
    """(src, dst): every edge once, as tcdist orients it (ids are its ranks)."""
    rowptr, col = np.asarray(graph.rowptr), np.asarray(graph.col, np.int64)
    return np.repeat(np.arange(graph.n, dtype=np.int64), np.diff(rowptr)), col


def peeled(n: int, src, dst) -> np.ndarray:
    """Every vertex's place in a degeneracy order: rounds that remove every vertex of the least
    remaining degree (or less), in order, ties by id (tcdist's rank)."""
    both = np.concatenate([src, dst]), np.concatenate([dst, src])
    order = np.argsort(both[0], kind="stable")
    starts = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(both[0], minlength=n), out=starts[1:])
    neighbours = both[1][order]
    degree = np.diff(starts)
    alive, rounds, level, left = np.ones(n, bool), np.full(n, -1, np.int64), 0, np.arange(n)
    k = 0
    while left.size:
        k = max(k, int(degree[left].min()))
        out = left[degree[left] <= k]
        rounds[out] = level
        alive[out] = False
        lengths = starts[out + 1] - starts[out]
        at = np.repeat(starts[out] - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths) + \
            np.arange(int(lengths.sum()))
        hit = neighbours[at]
        np.subtract.at(degree, hit[alive[hit]], 1)
        left = left[alive[left]]
        level += 1
    return np.lexsort((np.arange(n), rounds)).argsort()  # place of each vertex: by round, then id


def work(n: int, src, dst, place) -> dict:
    """The work of orienting each edge from the end placed first."""
    lower = place[src] < place[dst]
    a, b = np.where(lower, src, dst), np.where(lower, dst, src)
    out = np.bincount(a, minlength=n)
    wedges = int((out * (out - 1) // 2).sum())
    probes = int(out[b].sum())
    busy = out[out > 0]
    return {"wedges": wedges, "probes": probes, "max_out": int(out.max(initial=0)),
            "out_cv": float(busy.std() / busy.mean()) if busy.size else 0.0}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("graphs", nargs="+")
    p.add_argument("--out", help="a Markdown table")
    args = p.parse_args()
    rows = []
    for spec in args.graphs:
        graph = tcdist.load_graph(spec)
        src, dst = undirected(graph)
        t0 = time.perf_counter()
        place = peeled(graph.n, src, dst)
        seconds = time.perf_counter() - t0
        by_degree, by_core = work(graph.n, src, dst, np.arange(graph.n)), work(graph.n, src, dst, place)
        rows.append((spec, graph.n, graph.m, by_degree, by_core, seconds))
        print(spec, by_degree, by_core, f"{seconds:.1f} s", flush=True)
    meta = metadata("cpu-2core")
    lines = ["# Counting work of two orientations", "",
             f"`jobs/orientation_work.py`, commit {meta['commit']}, {meta['date']}: exact counts on the host. "
             "Degree: tcdist's orientation by (degree, id); core: a degeneracy order (peeled in rounds, ties by "
             "tcdist's rank). Wedges Σ C(d+, 2); probes Σ over edges u → v of d+(v); the spread of the out-degrees "
             "is their coefficient of variation over the rows that have any.", "",
             "| graph | vertices | edges | wedges degree / core | probes degree / core | max d+ degree / core "
             "| spread degree / core | peeling s |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for spec, n, m, d, c, seconds in rows:
        lines.append(f"| `{spec}` | {n:,} | {m:,} | {d['wedges']:,} / {c['wedges']:,} ({c['wedges'] / d['wedges']:.2f}) "
                     f"| {d['probes']:,} / {c['probes']:,} ({c['probes'] / d['probes']:.2f}) | {d['max_out']:,} / "
                     f"{c['max_out']:,} | {d['out_cv']:.2f} / {c['out_cv']:.2f} | {seconds:.1f} |")
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print(text, file=sys.stderr)


if __name__ == "__main__":
    main()
