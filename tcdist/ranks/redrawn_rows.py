"""Every rank's rows where its share of the build does not fit its share of its host's
--host-memory-limit (plan.rows_again): built as graph/redrawn_build.py builds one process's graph,
with nothing of the rank's raw edges held. Each rank draws its share again (a generator's range of
edges) or reads its share's parsed pairs back from a scratch file on its own host (a text file,
parsed once), for every range of keys. A range's keys go to one rank, which makes them distinct
and counts their ends' degrees; the counts over every id are summed over the ranks, each rank
holding arrays over all ids (dense ids, as a generator's) and ranking the vertices itself; then
each rank lays out its own rows, a range of them at a time, from the keys every rank draws of
them. The same rows as graph/build.py's graph, split among the ranks by raw edges."""

from __future__ import annotations

import numpy as np

from tcdist import progress
from tcdist.graph import build
from tcdist.graph.graph import col_dtype
from tcdist.graph.ranges_build import distinct_counted, ranked, sort_in_place
from tcdist.graph.redrawn_build import Directed, binned, gathered, key_ranges, orienting
from tcdist.io.scratch import DiskColumns
from tcdist.io.shares import read_share
from tcdist.ranks.exchange import alltoallv, before, summed
from tcdist.ranks.ingest import Rows, degree_summary_across


def build_rows_again(comm, pieces, span: int, name: str, keys_per_range: int, warnings=()) -> Rows:
    """This rank's rows of the graph of every rank's raw edges, pieces() drawing or reading this
    rank's afresh on each call (ids below span), a range of keys_per_range keys (over all ranks)
    at a time at the rank that makes it distinct."""
    directed = Directed(pieces, span, np)
    with progress.bar(4, f"build {name}", "passes") as bar:
        mine = binned(directed, lambda keys: keys // np.uint64(2 * span), span, np)
        by_lower = summed(comm, mine.copy())
        bar.update()
        degree, kept, duplicates, reciprocal = np.zeros(span, np.uint64), 0, 0, 0
        for k, (lo, hi) in enumerate(key_ranges(by_lower, keys_per_range)):
            keys = _at(comm, gathered(directed, lambda keys: keys, 2 * span * lo, 2 * span * hi, mine[lo:hi], np),
                       k % comm.size)
            if keys is not None:
                keys, repeated, both_ways = distinct_counted(keys, span, degree, np)
                kept, duplicates, reciprocal = kept + keys.size, duplicates + repeated, reciprocal + both_ways
            del keys
        del mine, by_lower
        degree = summed(comm, degree)
        kept, duplicates, reciprocal, loops = (sum(v) for v in zip(*comm.allgather(
            (kept, duplicates, reciprocal, directed.loops))))
        bar.update()
        order, rank, n = ranked(degree, name, np, True)
        del degree
        oriented = orienting(rank, span, n, np)
        mine = binned(directed, lambda keys: oriented(keys) // np.uint64(n), n, np)
        by_row = summed(comm, mine.copy())
        bounds = _row_bounds(by_row, comm.size)
        bar.update()
        first, end = int(bounds[comm.rank]), int(bounds[comm.rank + 1])
        rowptr, col, fill = np.zeros(end - first + 1, np.int64), np.empty(int(by_row[first:end].sum()), col_dtype(n)), 0
        for owner in range(comm.size):
            a = int(bounds[owner])
            for lo, hi in key_ranges(by_row[a : bounds[owner + 1]], keys_per_range):
                lo, hi = lo + a, hi + a
                keys = _at(comm, gathered(directed, oriented, n * lo, n * hi, mine[lo:hi], np), owner)
                if keys is None:
                    continue
                keys = build.distinct_sorted(keys)
                lengths = np.bincount((keys // np.uint64(n)).astype(np.int64) - lo, minlength=hi - lo)
                np.cumsum(lengths, out=rowptr[lo - first + 1 : hi - first + 1])
                rowptr[lo - first + 1 : hi - first + 1] += rowptr[lo - first]
                col[fill : fill + keys.size] = keys % np.uint64(n)
                fill += keys.size
                del keys
        bar.update()
    col.resize(fill, refcheck=False)  # (raw edges at most: the duplicates' room given back)
    first_edge, m = before(comm, fill)
    return Rows(first_row=first, end_row=end, first_edge=first_edge, rowptr=rowptr, col=col,
                original_id=order[first:end], bounds=bounds, n=n, m=m, self_loops=loops, duplicates=duplicates,
                reciprocal=reciprocal, degrees=degree_summary_across(comm, rowptr, n, m), name=name,
                warnings=list(warnings))


def _at(comm, keys, owner: int):
    """Every rank's sorted keys, sorted together on owner (None on the others)."""
    counts = np.zeros(comm.size, np.int64)
    counts[owner] = keys.size
    got = alltoallv(comm, keys, counts)[0]
    if comm.rank != owner:
        return None
    sort_in_place(got, np)
    return got


def _row_bounds(by_row, ranks: int) -> np.ndarray:
    """Each rank's first row, then the rows' end: contiguous rows of about equal raw edges."""
    ends = np.cumsum(by_row.astype(np.int64))
    total = int(ends[-1]) if ends.size else 0
    bounds = np.searchsorted(ends, np.arange(ranks + 1) * total // ranks, side="right")
    bounds[0], bounds[-1] = 0, by_row.size
    return np.maximum.accumulate(bounds).astype(np.int64)


class SpilledShare:
    """A rank's share of a text or Matrix Market file, parsed once in pieces and its pairs written to
    a scratch file on its own host, read back a piece at a time on every pass (pieces()); the ids'
    bound over every rank (span) and the reading's warnings."""

    def __init__(self, comm, path: str, pieces: int, edges: int):
        self.pairs = DiskColumns(2 * edges, np.int64, "a rank's parsed pairs")
        self.at, self.read_bytes, top, facts, warnings = [0], 0, -1, [], []
        for k in range(pieces):
            share = read_share(path, comm.rank * pieces + k, comm.size * pieces)
            src, dst = share.edges.src, share.edges.dst
            top = max(top, int(max(src.max(), dst.max())) if src.size else -1)
            self.pairs.write(self.at[-1], src)
            self.pairs.write(self.at[-1] + src.size, dst)
            self.at.append(self.at[-1] + 2 * src.size)
            facts.append(share.facts)
            warnings += share.edges.warnings
            self.read_bytes += share.read_bytes
        every = [f for fs in comm.allgather(facts) for f in fs]
        share.check_together(every)  # (the whole file's: its Matrix Market entries)
        self.span = max(comm.allgather(top)) + 1
        self.warnings = [w for ws in comm.allgather(warnings) for w in ws]

    def pieces(self):
        for k in range(len(self.at) - 1):
            half = (self.at[k + 1] - self.at[k]) // 2
            yield self.pairs[self.at[k] : self.at[k] + half], self.pairs[self.at[k] + half : self.at[k + 1]]

    def close(self) -> None:
        self.pairs.close()
