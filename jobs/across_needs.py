"""How much of a graph each rank holds in parts across ranks: its rows and the rows of their
targets on other ranks, as a share of the graph's CSR, for R ranks whose rows are the ranges of
equal work that the ranks' build gives them (graph/work.py's model), from the one-process graph.

    python jobs/across_needs.py rmat:16 grid:200:200 tests/data/email-Enron.txt.gz --ranks 2 4 8
"""

import argparse

import numpy as np

import tcdist
from tcdist.budget.model import csr_bytes
from tcdist.graph.work import probes_before


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("graphs", nargs="+")
    p.add_argument("--ranks", nargs="+", type=int, default=[2, 4, 8])
    args = p.parse_args()
    for name in args.graphs:
        g = tcdist.load_graph(name)
        whole, degree, before = csr_bytes(g.n, g.m, g.n, g.col.itemsize), np.diff(g.rowptr), probes_before(g) + g.rowptr
        for ranks in args.ranks:
            bounds = np.searchsorted(before, [int(before[-1]) * k // ranks for k in range(ranks + 1)], side="left")
            bounds[0], bounds[-1] = 0, g.n
            shares = []
            for a, b in zip(bounds[:-1], bounds[1:]):
                targets = g.col[g.rowptr[a] : g.rowptr[b]]
                proxies = np.unique(targets[targets >= b])
                held = csr_bytes(b - a, targets.size, 0, g.col.itemsize) + 8 * proxies.size + \
                    g.col.itemsize * int(degree[proxies].sum())
                shares.append(held / whole)
            print(f"{name} {ranks} ranks: " + " ".join(f"{s:.2f}" for s in shares))


if __name__ == "__main__":
    main()
