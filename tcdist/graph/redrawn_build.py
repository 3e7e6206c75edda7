"""A generated graph built where not even its sorted keys fit the host: nothing of its raw edges is
kept anywhere, its pieces are drawn again for every range of keys instead (a generator's pieces are
a pure function of the spec and the seed; drawing them on a GPU is faster than a disk gives them).

Four kinds of pass, each over every piece: the raw edges counted by their lower end (and the self
loops dropped); then, a range of lower ends at a time, the range's directed keys gathered, sorted and
made distinct, the ends' degrees counted as in ranges_build; the vertices ranked; the raw edges
counted by their oriented row; then, a range of rows at a time, the range's oriented keys gathered,
sorted and made distinct, and laid out as the range's rows of the CSR on the host. A range holds at
most keys_per_range keys (a vertex with more is a range of its own). The same Graph as build_graph
makes of the raw edges; the host holds only the CSR and the rank order (model.REDRAWN_HOST_BYTES_PER_ID),
or, where a GPU holds the graph its host cannot, the CSR is laid out on the GPU.
"""

from __future__ import annotations

import numpy as np

from tcdist import progress
from tcdist.budget.host import require
from tcdist.graph import build
from tcdist.graph.degrees import degree_summary
from tcdist.graph.graph import Graph, col_dtype
from tcdist.graph.pieces_build import pack
from tcdist.graph.ranges_build import distinct_counted, ranked, sort_in_place, to_host
from tcdist.xp import to_numpy


def build_redrawn(span: int, pieces, name: str, xp, keys_per_range: int, csr_on_device: bool = False,
                  columns=None, counted: LowerEnds | None = None) -> Graph:
    """The Graph of the raw edges (ids below span) that pieces() draws, afresh on each call, as
    (src, dst) pieces on xp's device, keys_per_range keys held there at a time; laid out on the
    host, or on xp's device where csr_on_device (a GPU that holds the graph its host cannot), its
    columns written where columns(size, dtype) makes them where given (io.scratch's on disk).
    counted: the pieces' LowerEnds, where a pass before this one counted them (the first pass's)."""
    with progress.bar(4, f"build {name}", "passes") as bar:
        directed = Directed(pieces, span, xp)
        if counted is None:
            by_lower = binned(directed, lambda keys: keys // np.uint64(2 * span), span, xp)
        else:
            by_lower, directed.loops = xp.zeros(span, np.uint64), counted.loops
            by_lower[: min(span, counted.counts.size)] = xp.asarray(counted.counts[:span])
            counted.counts = None  # (freed once its copy is made, as the pass it stands for frees them)
        bar.update()
        degree, kept, duplicates, reciprocal = xp.zeros(span, np.uint64), 0, 0, 0
        for lo, hi in key_ranges(by_lower, keys_per_range):
            keys = _gathered(directed, lambda keys: keys, 2 * span * lo, 2 * span * hi, by_lower[lo:hi], xp)
            keys, repeated, both_ways = distinct_counted(keys, span, degree, xp)
            kept, duplicates, reciprocal = kept + keys.size, duplicates + repeated, reciprocal + both_ways
            del keys
        del by_lower
        bar.update()
        order, rank, n = ranked(degree, name, xp, True)
        del degree
        where = xp if csr_on_device else np
        oriented = orienting(rank, span, n, xp)
        by_row = binned(directed, lambda keys: oriented(keys) // np.uint64(n), n, xp)
        bar.update()
        rowptr = where.zeros(n + 1, np.int64)
        col = where.empty(kept, col_dtype(n)) if columns is None else columns(kept, col_dtype(n))
        for lo, hi in key_ranges(by_row, keys_per_range):
            keys = build.distinct_sorted(_gathered(directed, oriented, n * lo, n * hi, by_row[lo:hi], xp))
            lengths = xp.zeros(hi - lo, np.uint64)
            _add_counts(lengths, (keys // np.uint64(n)).astype(np.int64) - lo, xp)
            lengths = lengths.astype(np.int64) if csr_on_device else to_numpy(lengths).astype(np.int64)
            where.cumsum(lengths, out=rowptr[lo + 1 : hi + 1])
            rowptr[lo + 1 : hi + 1] += rowptr[lo]
            first, end, values = int(rowptr[lo]), int(rowptr[hi]), (keys % np.uint64(n)).astype(col.dtype)
            if csr_on_device:
                col[first:end] = values
            elif columns is not None:
                col.write(first, to_numpy(values))
            else:
                to_host(values, col[first:end], xp)
            del keys, lengths, values
        bar.update()
    return Graph(rowptr=rowptr, col=col, original_id=where.asarray(order), name=name, self_loops=directed.loops,
                 duplicates=duplicates, reciprocal=reciprocal, degrees=degree_summary(rowptr, n))


def orienting(rank, span: int, n: int, xp):
    """The function of directed keys (ids below span) to oriented keys: (rank of the lower-ranked end)
    * n + rank of the other, by every id's rank."""

    def oriented(keys):
        undirected = keys >> np.uint64(1)
        a = rank[(undirected // np.uint64(span)).astype(np.int64)]
        b = rank[(undirected % np.uint64(span)).astype(np.int64)]
        return xp.minimum(a, b).astype(np.uint64) * np.uint64(n) + xp.maximum(a, b).astype(np.uint64)

    return oriented


class LowerEnds:
    """The raw edges counted by their lower end, self loops apart, as pieces come (their ids' bound
    not known before): what build_redrawn's first pass counts, made by a reading that goes over
    the pieces anyway."""

    def __init__(self, xp, name: str):
        self.xp, self.name, self.counts, self.loops = xp, name, xp.zeros(0, np.uint64), 0

    def add(self, src, dst) -> None:
        keep = src != dst
        self.loops += int(keep.size - int(keep.sum()))
        lower = self.xp.minimum(src[keep], dst[keep]).astype(np.int64)
        top = int(lower.max()) + 1 if lower.size else 0
        if top > self.counts.size:  # (grown to twice what it holds at least: few copies)
            grown = max(top, 2 * self.counts.size)
            if self.xp is np:  # the new counts beside the old, and a piece's
                require(8 * (grown + self.counts.size + top), f"counting the raw edges of {self.name} by their lower "
                        "end", "count it on a host with more memory")
            counts = self.xp.zeros(grown, np.uint64)
            counts[: self.counts.size] = self.counts
            self.counts = counts
        _add_counts(self.counts, lower, self.xp)


class Directed:
    """The pieces drawn again on each iteration, as their directed keys (pieces_build.pack); the
    self loops dropped, counted once a whole iteration has been made (loops)."""

    def __init__(self, pieces, span: int, xp):
        self.pieces, self.span, self.xp, self.loops = pieces, span, xp, None

    def __iter__(self):
        dropped = 0
        for src, dst in self.pieces():
            keys, more = pack(src, dst, self.span, self.xp)
            del src, dst
            dropped += more
            yield keys
        self.loops = dropped


def binned(directed, bin_of, bins: int, xp):
    """How many of the directed keys fall in each bin (uint64, on xp's device)."""
    counts = xp.zeros(bins, np.uint64)
    for keys in directed:
        _add_counts(counts, bin_of(keys).astype(np.int64), xp)
    return counts


def _add_counts(counts, bins, xp) -> None:
    """counts[b] += 1 for each b of bins (on a GPU by atomic adds: CuPy's bincount takes a workspace
    per bin, and there are as many bins as ids)."""
    if xp is np:
        counts += np.bincount(bins, minlength=counts.size).astype(np.uint64)
    else:
        xp.add.at(counts, bins, np.uint64(1))


def key_ranges(counts, keys_per_range: int):
    """(lo, hi) bins in order, each holding at most keys_per_range of counts (or one bin, over it)."""
    ends = to_numpy(counts.cumsum())
    lo = 0
    while lo < ends.size:
        below = int(ends[lo - 1]) if lo else 0
        hi = max(lo + 1, int(np.searchsorted(ends, below + keys_per_range, side="right")))
        yield lo, hi
        lo = hi


def _gathered(directed, key_of, low: int, high: int, counts, xp):
    """The keys key_of(directed keys) in [low, high), sorted: as many as counts sum to."""
    out, at = xp.empty(int(counts.sum()), np.uint64), 0
    low, last = np.uint64(low), np.uint64(high - 1)  # (high may be 2^64)
    for keys in directed:
        keys = key_of(keys)
        keys = keys[(keys >= low) & (keys <= last)]
        out[at : at + keys.size] = keys
        at += keys.size
    sort_in_place(out, xp)
    return out
