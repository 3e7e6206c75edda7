"""Arrays spread over the ranks in contiguous ranges, on the host or on each rank's GPU: a sort of
every rank's keys across the ranks (a sample sort), each value's place among them all, a table
read or added into by global index (`bounds`: rank r holds indices bounds[r] to bounds[r + 1]),
and an array moved from one split into ranges to another. Each is one or two all-to-alls of the
keys concerned (of CuPy arrays over NCCL with gpus, nccl.communicator(comm), else through the
host over MPI); the all-gathers move SAMPLES values per rank and a few per rank, never the arrays
themselves. The array code is NumPy's API: it runs on NumPy arrays and on CuPy arrays alike."""

from __future__ import annotations

import numpy as np

from tcdist.graph.build import compact_ids, positions, unique_sorted
from tcdist.graph.sort import sort
from tcdist.ranks import exchange, nccl
from tcdist.ranks.exchange import before, offsets
from tcdist.xp import array_module, to_numpy

SAMPLES = 256  # values per rank that place the splitters of a sample sort: the ranks' shares within about 1/256


def alltoallv(comm, send, counts, gpus=None):
    """exchange.alltoallv, over NCCL with gpus (send a CuPy array)."""
    return exchange.alltoallv(comm, send, counts) if gpus is None else nccl.alltoallv(comm, gpus, send, counts)


def splitters(comm, ordered) -> np.ndarray:
    """size - 1 values cutting the sorted values of every rank (ordered, this rank's) into ranges
    of about equal count: rank r's range lies from the (r - 1)-th splitter up to the r-th."""
    if comm.size == 1:
        return np.zeros(0, ordered.dtype)
    xp = array_module(ordered)
    picks = (np.arange(min(SAMPLES, ordered.size) + 1) * ordered.size) // max(min(SAMPLES, ordered.size), 1)
    sample = to_numpy(ordered[xp.asarray(picks[:-1])])
    gathered = comm.allgather((sample, np.diff(picks)))  # each pick stands for the values up to the next
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
    """How many of the sorted values fall below limits[0], then between each two limits, then above
    the last (on the host, wherever ordered lies)."""
    xp = array_module(ordered)
    at = to_numpy(xp.searchsorted(ordered, xp.asarray(np.asarray(limits, ordered.dtype)), side="left"))
    return np.diff(np.concatenate([[0], at, [ordered.size]])).astype(np.int64)


def sort_across(comm, keys, shift: int = 0, gpus=None):
    """Every rank's keys sorted across the ranks: this rank's range of them, sorted. Keys go by
    their value shifted right by shift bits, so keys equal in it (both directions of an edge) meet."""
    ordered = sort(keys)
    routes = ordered >> ordered.dtype.type(shift)
    return merged(*alltoallv(comm, ordered, cut(routes, splitters(comm, routes)), gpus))


def places(comm, ordered, gpus=None):
    """(each value's place among the distinct values of every rank, this rank's range of those
    distinct values, the place of its first) of sorted, distinct values on each rank."""
    received, counts = alltoallv(comm, ordered, cut(ordered, splitters(comm, ordered)), gpus)
    held = unique_sorted(received)
    first, _ = before(comm, held.size)
    found, _ = alltoallv(comm, first + positions(held, received), counts, gpus)
    return found, held, first


def read(comm, index, bounds, table, gpus=None):
    """table[index] of a table spread over the ranks by bounds (this rank's part: table); each
    distinct index asked of its rank once."""
    asked, where, _ = compact_ids(index, index[:1])
    got, counts = alltoallv(comm, asked, cut(asked, bounds[1:-1]), gpus)
    answers, _ = alltoallv(comm, table[got - int(bounds[comm.rank])], counts, gpus)
    return answers[where]


def add(comm, ordered, values, bounds, gpus=None):
    """This rank's part of a table of zeros spread over the ranks by bounds, with every rank's
    values added at its sorted indices (ordered): each rank's sum per index sent once."""
    xp = array_module(ordered)
    starts = _runs(ordered)
    upto = xp.concatenate([xp.zeros(1, np.int64), xp.cumsum(values, dtype=np.int64)])  # (exact: int64)
    sums = upto[xp.concatenate([starts[1:], xp.asarray([ordered.size], starts.dtype)])] - upto[starts]  # run by run
    return _added(comm, ordered[starts], sums, bounds, gpus)


def count(comm, index, bounds, gpus=None):
    """This rank's part of a table spread over the ranks by bounds, counting how often every rank
    names each index: on the host a bincount over the span of this rank's indices where it is
    small (as graph/build.py's compact_ids takes it), else (and on a GPU, where CuPy's bincount
    takes a workspace of some 700 bytes a bin: graph/gpu_build.py) a sort."""
    xp = array_module(index)
    if xp is np and index.size and int(index.max()) - int(index.min()) < 4 * index.size + 1024:
        low = int(index.min())
        counts = np.bincount(index - low)
        distinct = np.flatnonzero(counts)
        return _added(comm, distinct + low, counts[distinct].astype(np.int64), bounds, gpus)
    ordered = sort(index)
    starts = _runs(ordered)
    ends = xp.concatenate([starts[1:], xp.asarray([ordered.size], starts.dtype)])
    return _added(comm, ordered[starts], (ends - starts).astype(np.int64), bounds, gpus)


def _runs(ordered):
    """Where each run of equal values of a sorted array starts."""
    xp = array_module(ordered)
    if not ordered.size:
        return xp.zeros(0, np.int64)
    first = xp.empty(ordered.size, dtype=bool)
    first[0] = True
    xp.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    return xp.flatnonzero(first)


def _added(comm, distinct, sums, bounds, gpus=None):
    """The table of add and count: sums at sorted distinct indices, sent to their ranks and added
    (each rank's indices are distinct, so one rank's sums are added at once)."""
    counts = cut(distinct, bounds[1:-1])
    got, got_counts = alltoallv(comm, distinct, counts, gpus)
    got_sums, _ = alltoallv(comm, sums, counts, gpus)
    lo = int(bounds[comm.rank])
    table = array_module(distinct).zeros(int(bounds[comm.rank + 1]) - lo, np.int64)
    at = offsets(got_counts)
    for source in range(comm.size):
        part = slice(int(at[source]), int(at[source + 1]))
        table[got[part] - lo] += got_sums[part]
    return table


def merged(received, counts):
    """The sorted runs an all-to-all brought (counts: their sizes), sorted: with at most two runs,
    NumPy's timsort merges them on one core faster than sort() sorts on several; with more, or on
    a GPU, sort()."""
    if isinstance(received, np.ndarray) and np.count_nonzero(counts) <= 2:
        return np.sort(received, kind="stable")
    return sort(received)


def move(comm, part, old, new, gpus=None):
    """An array spread over the ranks by bounds old, spread by bounds new: this rank's new part."""
    lo, hi = int(old[comm.rank]), int(old[comm.rank + 1])
    counts = np.clip(np.minimum(hi, new[1:]) - np.maximum(lo, new[:-1]), 0, None)
    moved, _ = alltoallv(comm, part, counts, gpus)
    return moved
