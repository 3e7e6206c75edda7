"""Arrays spread over the ranks in contiguous ranges, in host memory: a sort of every rank's keys
across the ranks (a sample sort), each value's place among them all, a table read or added into
by global index (`bounds`: rank r holds indices bounds[r] to bounds[r + 1]), and an array moved
from one split into ranges to another. Each is one or two all-to-alls of the keys concerned; the
all-gathers move SAMPLES values per rank and a few per rank, never the arrays themselves."""

from __future__ import annotations

import numpy as np

from tcdist.graph.build import compact_ids, positions, unique_sorted
from tcdist.graph.sort import sort
from tcdist.ranks.exchange import alltoallv, before

SAMPLES = 256  # values per rank that place the splitters of a sample sort: the ranks' shares within about 1/256


def splitters(comm, ordered):
    """size - 1 values cutting the sorted values of every rank (ordered, this rank's) into ranges
    of about equal count: rank r's range lies from the (r - 1)-th splitter up to the r-th."""
    if comm.size == 1:
        return ordered[:0]
    picks = (np.arange(min(SAMPLES, ordered.size) + 1) * ordered.size) // max(min(SAMPLES, ordered.size), 1)
    gathered = comm.allgather((ordered[picks[:-1]], np.diff(picks)))  # each pick stands for the values up to the next
    values = np.concatenate([v for v, _ in gathered]).astype(ordered.dtype)
    weights = np.concatenate([w for _, w in gathered])
    if values.size == 0:
        return np.zeros(comm.size - 1, ordered.dtype)
    order = np.argsort(values, kind="stable")
    values, weights = values[order], weights[order]
    ahead = np.cumsum(weights) - weights
    goals = [int(weights.sum()) * r // comm.size for r in range(1, comm.size)]
    return values[np.minimum(np.searchsorted(ahead, goals, side="left"), values.size - 1)]


def cut(ordered, limits) -> np.ndarray:
    """How many of the sorted values fall below limits[0], then between each two limits, then above the last."""
    at = np.searchsorted(ordered, limits, side="left")
    return np.diff(np.concatenate([[0], at, [ordered.size]])).astype(np.int64)


def sort_across(comm, keys, shift: int = 0):
    """Every rank's keys sorted across the ranks: this rank's range of them, sorted. Keys go by
    their value shifted right by shift bits, so keys equal in it (both directions of an edge) meet."""
    ordered = sort(keys)
    routes = ordered >> ordered.dtype.type(shift)
    return merged(*alltoallv(comm, ordered, cut(routes, splitters(comm, routes))))


def places(comm, ordered):
    """(each value's place among the distinct values of every rank, this rank's range of those
    distinct values, the place of its first) of sorted, distinct values on each rank."""
    received, counts = alltoallv(comm, ordered, cut(ordered, splitters(comm, ordered)))
    held = unique_sorted(received)
    first, _ = before(comm, held.size)
    found, _ = alltoallv(comm, first + positions(held, received), counts)
    return found, held, first


def read(comm, index, bounds, table):
    """table[index] of a table spread over the ranks by bounds (this rank's part: table); each
    distinct index asked of its rank once."""
    asked, where, _ = compact_ids(index, index[:1])
    got, counts = alltoallv(comm, asked, cut(asked, bounds[1:-1]))
    answers, _ = alltoallv(comm, table[got - bounds[comm.rank]], counts)
    return answers[where]


def add(comm, ordered, values, bounds):
    """This rank's part of a table of zeros spread over the ranks by bounds, with every rank's
    values added at its sorted indices (ordered): each rank's sum per index sent once."""
    starts = _runs(ordered)
    sums = np.add.reduceat(values, starts).astype(np.int64) if starts.size else np.zeros(0, np.int64)
    return _added(comm, ordered[starts], sums, bounds)


def count(comm, index, bounds):
    """This rank's part of a table spread over the ranks by bounds, counting how often every rank
    names each index: a bincount over the span of this rank's indices where it is small (as
    graph/build.py's compact_ids takes it), else a sort."""
    if index.size and int(index.max()) - int(index.min()) < 4 * index.size + 1024:
        low = int(index.min())
        counts = np.bincount(index - low)
        distinct = np.flatnonzero(counts)
        return _added(comm, distinct + low, counts[distinct].astype(np.int64), bounds)
    ordered = sort(index)
    starts = _runs(ordered)
    return _added(comm, ordered[starts], np.diff(np.append(starts, ordered.size)).astype(np.int64), bounds)


def _runs(ordered):
    """Where each run of equal values of a sorted array starts."""
    return np.flatnonzero(np.concatenate([[True], ordered[1:] != ordered[:-1]])) if ordered.size else ordered[:0]


def _added(comm, distinct, sums, bounds):
    """The table of add and count: sums at sorted distinct indices, sent to their ranks and added."""
    counts = cut(distinct, bounds[1:-1])
    got, _ = alltoallv(comm, distinct, counts)
    got_sums, _ = alltoallv(comm, sums, counts)
    table = np.zeros(int(bounds[comm.rank + 1] - bounds[comm.rank]), np.int64)
    np.add.at(table, got - bounds[comm.rank], got_sums)
    return table


def merged(received, counts):
    """The sorted runs an all-to-all brought (counts: their sizes), sorted: with at most two runs,
    NumPy's timsort merges them on one core faster than sort() sorts on several; with more, sort()."""
    return np.sort(received, kind="stable") if np.count_nonzero(counts) <= 2 else sort(received)


def move(comm, part, old, new):
    """An array spread over the ranks by bounds old, spread by bounds new: this rank's new part."""
    lo, hi = int(old[comm.rank]), int(old[comm.rank + 1])
    counts = np.clip(np.minimum(hi, new[1:]) - np.maximum(lo, new[:-1]), 0, None)
    moved, _ = alltoallv(comm, part, counts)
    return moved
