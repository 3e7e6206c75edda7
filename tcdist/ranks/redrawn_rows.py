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
from tcdist.graph.redrawn_build import Directed, binned, key_ranges, orienting
from tcdist.io.scratch import DiskColumns
from tcdist.io.shares import read_share
from tcdist.ranks.exchange import alltoallv, before, summed
from tcdist.ranks.ingest import Rows, degree_summary_across


def build_rows_again(comm, pieces, span: int, name: str, keys_per_range: int, warnings=()) -> Rows:
    """This rank's rows of the graph of every rank's raw edges, pieces() drawing or reading this
    rank's afresh on each call (ids below span), in ranges of keys_per_range keys (over all ranks),
    each made distinct at a rank of its own, a range for every rank in a pass (_groups)."""
    directed = Directed(pieces, span, np)
    with progress.bar(4, f"build {name}", "passes") as bar:
        mine = binned(directed, lambda keys: keys // np.uint64(2 * span), span, np)
        by_lower = summed(comm, mine.copy())
        bar.update()
        degree, kept, duplicates, reciprocal = np.zeros(span, np.uint64), 0, 0, 0
        lowers = [(None, lo, hi) for lo, hi in key_ranges(by_lower, keys_per_range)]
        for together in _groups(comm, lowers, mine, keys_per_range):
            keys = _at_owners(comm, directed, lambda keys: keys, together, mine, 2 * span)[0]
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
        by_owner = [[(r, lo + int(bounds[r]), hi + int(bounds[r])) for lo, hi in
                     key_ranges(by_row[bounds[r] : bounds[r + 1]], keys_per_range)] for r in range(comm.size)]
        rows = [ranges[i] for i in range(max(map(len, by_owner))) for ranges in by_owner if i < len(ranges)]
        for together in _groups(comm, rows, mine, keys_per_range):  # (each rank's ranges in order)
            keys, mine_of = _at_owners(comm, directed, oriented, together, mine, n)
            if keys is None:
                continue
            lo, hi = mine_of
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
                original_id=order[first:end].copy(), bounds=bounds, n=n, m=m, self_loops=loops, duplicates=duplicates,
                reciprocal=reciprocal, degrees=degree_summary_across(comm, rowptr, n, m), name=name,
                warnings=list(warnings))


def _groups(comm, ranges: list, mine, keys_per_range: int) -> list:
    """The ranges [(owner or None: any, lo, hi)], in order, in groups taken in one pass: each range
    at a rank of its own (None: the next free), at most one for each rank, consecutive, and each
    rank's keys of the group's ranges (mine: its keys in each bin) at most keys_per_range together.
    With every rank's keys spread over every range, a pass serves as many ranges as there are ranks."""
    local = np.array([int(mine[lo:hi].sum()) for _, lo, hi in ranges], np.int64)
    every = np.array(comm.allgather(local), np.int64).reshape(comm.size, len(ranges))
    groups, group, held = [], [], np.zeros(comm.size, np.int64)
    for j, (owner, lo, hi) in enumerate(ranges):
        taken = {r for r, _, _ in group}
        if group and (len(group) == comm.size or owner in taken or int((held + every[:, j]).max()) > keys_per_range):
            groups.append(group)
            group, held, taken = [], np.zeros(comm.size, np.int64), set()
        group.append((min(set(range(comm.size)) - taken) if owner is None else owner, lo, hi))
        held += every[:, j]
    return groups + [group] * bool(group)


def _at_owners(comm, directed, key_of, group: list, mine, stride: int):
    """Each of the group's ranges [(owner, lo, hi)] of keys key_of(directed keys) in [stride * lo,
    stride * hi), every rank's sent to its owner: (this rank's range's keys, sorted, and its (lo, hi)),
    or (None, None) where it owns none of them."""
    group = sorted(group)  # (by owner: sent in rank order)
    sizes = [int(mine[lo:hi].sum()) for _, lo, hi in group]
    send, at = np.empty(sum(sizes), np.uint64), list(np.cumsum([0, *sizes[:-1]]))
    for keys in directed:
        keys = key_of(keys)
        for j, (_, lo, hi) in enumerate(group):
            taken = keys[(keys >= np.uint64(stride * lo)) & (keys <= np.uint64(stride * hi - 1))]
            send[at[j] : at[j] + taken.size] = taken
            at[j] += taken.size
    counts = np.zeros(comm.size, np.int64)
    for (owner, _, _), size in zip(group, sizes):
        counts[owner] = size
    got = alltoallv(comm, send, counts)[0]
    del send
    owned = [(lo, hi) for owner, lo, hi in group if owner == comm.rank]
    if not owned:
        return None, None
    sort_in_place(got, np)
    return got, owned[0]


def _row_bounds(by_row, ranks: int) -> np.ndarray:
    """Each rank's first row, then the rows' end: contiguous rows of about equal raw edges."""
    ends = np.cumsum(by_row.astype(np.int64))
    total = int(ends[-1]) if ends.size else 0
    bounds = np.searchsorted(ends, np.arange(ranks + 1) * total // ranks, side="right")
    bounds[0], bounds[-1] = 0, by_row.size
    return np.maximum.accumulate(bounds).astype(np.int64)


class SpilledShare:
    """A rank's share of a text or Matrix Market file, parsed once in pieces and its pairs written to
    a scratch file on its own host, read back in pieces of at most piece pairs on every pass
    (pieces()); the ids' bound over every rank (span) and the reading's warnings."""

    def __init__(self, path: str, rank: int, ranks: int, pieces: int, edges: int, piece: int):
        """Rank's share read, by this rank alone (no collective: a rank failing here is settled by
        the caller's); together() then joins what every rank found."""
        self.pairs = DiskColumns(2 * edges, np.int64, "a rank's parsed pairs")
        self.at, self.read_bytes, self.piece, self.top, self.facts, self.warnings = [0], 0, max(piece, 1), -1, [], []
        try:
            for k in range(pieces):
                share = read_share(path, rank * pieces + k, ranks * pieces)
                src, dst = share.edges.src, share.edges.dst
                self.top = max(self.top, int(max(src.max(), dst.max())) if src.size else -1)
                self.pairs.write(self.at[-1], src)
                self.pairs.write(self.at[-1] + src.size, dst)
                self.at.append(self.at[-1] + 2 * src.size)
                self.facts.append(share.facts)
                self.warnings += share.edges.warnings
                self.read_bytes += share.read_bytes
        except BaseException:
            self.pairs.close()
            raise
        self.check = share.check_together

    def together(self, comm) -> None:
        """Every rank's facts checked together (the whole file's: its Matrix Market entries), the ids'
        bound over every rank (span) and every rank's warnings."""
        self.check([f for fs in comm.allgather(self.facts) for f in fs])
        self.span = max(comm.allgather(self.top)) + 1
        self.warnings = [w for ws in comm.allgather(self.warnings) for w in ws]

    def pieces(self):
        for k in range(len(self.at) - 1):
            half = (self.at[k + 1] - self.at[k]) // 2
            for lo in range(0, half, self.piece):
                hi = min(lo + self.piece, half)
                src, dst = self.at[k] + lo, self.at[k] + half + lo
                yield self.pairs[src : src + hi - lo], self.pairs[dst : dst + hi - lo]

    def close(self) -> None:
        self.pairs.close()
