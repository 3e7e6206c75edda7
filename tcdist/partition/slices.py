"""Slices: a part larger than the device's memory, counted in pieces that each fit.

A slice takes a range of the part's local rows as its sources and a range of all its rows as
its targets. A kernel walks u among the sources, v in N+(u), and the row of v if the slice
holds it, which it does for targets only: each wedge u -> v is walked in the one slice whose
sources hold u and whose targets hold v, so the slices' counts add up to the part's and each
triangle is credited once. A local row is both a source and a target, so a slice numbers its
sources 0..s-1 and every vertex x of the part s + x: columns shift by s, which keeps rows
sorted, and sources point to higher ids only. A slice is then an ordinary part with s local rows
that a kernel counts (of a part with proxies, one that needs no part order: SliceOf); its
per-vertex credits fold back onto the part's vertices (fold).

The ranges split what a slice may hold evenly between sources and targets (for a given room,
that makes the fewest bytes to copy). A slice whose target range holds no column of its
sources has no wedge and is left out: for the whole graph, whose ids are ranks, that is every
target range below the source range. This is an addition to LSTC (and to DESIGN.md), whose parts
must each fit the device: on skewed graphs every part holds the dense core, so no P fits a small
budget, while slices fit any budget that holds the pointers of a part's rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import NamedTuple

import numpy as np

from tcdist.errors import TcdistError
from tcdist.graph.graph import degree_summary
from tcdist.memory import size_text
from tcdist.partition.part import Part, recorded
from tcdist.xp import to_numpy

_SHRINK = 0.8  # a plan with a slice over the room tries again with ranges this much smaller
MAX_SLICES = 10_000  # more, and per-slice costs (a launch, a check, a copy's latency) would swamp the count

Need = Callable[[int, int, int, int], int]  # (v_res, e_res, n_local, col_bytes) -> device bytes


def plan(part: Part, room: int, need: Need, budget: int | None = None) -> list[tuple[int, int, int, int]] | None:
    """The slices of a part that does not fit in room bytes, as (source rows a..b, target rows
    c..d), in source order; None if the part fits whole. need(v_res, e_res, n_local,
    col_bytes) gives a piece's bytes on the device (budget.part_need with the kernel's own);
    budget, the device's memory that room is a share of, is what a refusal names."""
    rowptr = to_numpy(part.rowptr)
    n, n_local, col_bytes = rowptr.size - 1, part.n_local, part.col.itemsize
    if need(n, int(rowptr[-1]), n_local, col_bytes) <= room or n_local == 0:
        return None
    floor, longest = refuse_unsliceable(part, room, need, budget)
    per_row, per_edge = floor - need(n, 0, 0, col_bytes), need(n, 1, 0, col_bytes) - need(n, 0, 0, col_bytes)
    sources = per_row * np.arange(n_local + 1, dtype=np.int64) + per_edge * rowptr[: n_local + 1]
    targets = per_edge * rowptr
    share = (room - floor) / 2
    while True:
        s_bounds, t_bounds = _ranges(sources, share), _ranges(targets, share)
        too_many = (s_bounds.size - 1) * (t_bounds.size - 1) > 4 * MAX_SLICES
        slices = None if too_many else _with_wedges(part, rowptr, s_bounds, t_bounds)
        if slices == []:  # no local row has an edge: one slice of one empty row counts the part's none
            return [(0, 1, 0, 0)]
        if slices is None or len(slices) > MAX_SLICES:
            raise TcdistError(f"part {part.index} would need more than {MAX_SLICES:,} slices to fit "
                              f"{size_text(budget or room)} on the device (a slice of one row needs "
                              f"{size_text(need(n + 1, 2 * longest, 1, col_bytes))} with the kernel's own memory); "
                              "give the device more memory, or let --kernel auto choose")
        if max(need(b - a + n, _edges(rowptr, a, b) + _edges(rowptr, c, d), b - a, col_bytes)
               for a, b, c, d in slices) <= room:
            return slices
        share *= _SHRINK


def refuse_unsliceable(part: Part, room: int, need: Need, budget: int | None = None,
                       advice: str = "give the device more memory or count more parts") -> tuple[int, int]:
    """Stop if no slice of the part fits room bytes: the pointers of all its rows beside its
    longest row (as a source and as a target); else (the bytes of those pointers beside one
    row, the longest row's length)."""
    rowptr = to_numpy(part.rowptr)
    n, col_bytes = rowptr.size - 1, part.col.itemsize
    floor = need(n + 1, 0, 1, col_bytes)  # the target rows' pointers, beside one source row
    per_edge = need(n, 1, 0, col_bytes) - need(n, 0, 0, col_bytes)
    longest = int(np.diff(rowptr).max(initial=0))
    least = floor + 2 * per_edge * longest  # the longest row, as a source and as a target
    if least > room:
        raise TcdistError(f"part {part.index} cannot be sliced to fit {size_text(budget or room)} on the device: its "
                          f"longest row ({longest:,} out-neighbours) beside the pointers of its {n:,} rows needs "
                          f"{size_text(least)}{f', over the {size_text(room)} one slice may take' if budget else ''}; "
                          f"{advice}")
    return floor, longest


def _ranges(cost, share: float) -> np.ndarray:
    """Bounds of consecutive rows whose cost (cumulative, per row bound) is about share each:
    the fewest ranges of about equal cost."""
    total = int(cost[-1] - cost[0])
    pieces = max(1, -(-total // max(int(share), 1)))
    marks = cost[0] + np.arange(pieces + 1) * (total / pieces)
    bounds = np.searchsorted(cost, marks, side="left")
    bounds[0], bounds[-1] = 0, cost.size - 1
    return np.unique(bounds)


def _edges(rowptr, a: int, b: int) -> int:
    return int(rowptr[b] - rowptr[a])


def _with_wedges(part: Part, rowptr: np.ndarray, s_bounds, t_bounds) -> list[tuple[int, int, int, int]]:
    """(a, b, c, d) for every source range a..b and target range c..d that may share a wedge:
    the target range meets the span of the sources' columns (a row's first column is its least
    and its last its largest)."""
    col = part.col
    slices = []
    for a, b in zip(s_bounds[:-1], s_bounds[1:]):
        starts, ends = rowptr[a:b], rowptr[a + 1 : b + 1]
        rows = ends > starts
        if not rows.any():
            continue
        least, most = int(col[starts[rows]].min()), int(col[ends[rows] - 1].max())
        slices += [(int(a), int(b), int(c), int(d)) for c, d in zip(t_bounds[:-1], t_bounds[1:])
                   if c <= most and d > least]
    return slices


class SliceOf(NamedTuple):
    """Which slice a piece is: the k-th of `of`, its sources from the part's row `first`; ordered:
    the part had no proxies (the whole graph), so the slice's ids follow the orientation among
    its targets as a part's do among its proxies, which some kernels rely on (Kernel.part_order:
    in a slice of a part with proxies, a proxy's edge to a local vertex runs between targets)."""

    k: int
    of: int
    first: int
    ordered: bool


def cut(part: Part, bounds: list[tuple[int, int, int, int]]) -> Iterator[Slice]:
    """The slices of a part by plan's bounds, in order; each reads to --kernel auto as the part
    does (its degree summary): a slice's source rows alone, ids being degree ranks, have about
    equal degrees, and read as even where the part is skewed (before, RMAT's slices went to
    lstc-group where the part went to bitmap)."""
    if "degrees" not in part.stats:
        part.stats["degrees"] = degree_summary(part.rowptr, part.n_local)
    ordered = part.n_local == part.rowptr.size - 1
    for k, (a, b, c, d) in enumerate(bounds):
        yield Slice(part, a, b, c, d, SliceOf(k, len(bounds), a, ordered))


class Slice:
    """A slice of a part, not made yet: four runs of the part's arrays (the pointers and columns
    of its source rows, and of its target rows) that copies() moves to a device and lays out as
    a Part there, so that a GPU receives the runs only, not the slice's filled pointers."""

    def __init__(self, part: Part, a: int, b: int, c: int, d: int, label: SliceOf):
        self.part, self.bounds, self.slice, self.index = part, (a, b, c, d), label, part.index
        self.n_local = b - a
        rowptr = part.rowptr
        self.spans = (int(rowptr[a]), int(rowptr[b]), int(rowptr[c]), int(rowptr[d]))
        n = rowptr.size - 1
        self.dtype = part.col.dtype if self.n_local + n <= np.iinfo(part.col.dtype).max else np.dtype(np.int64)

    def sizes(self) -> tuple[int, int, int, int]:
        start, end, lo, hi = self.spans
        return self.n_local + self.part.rowptr.size - 1, end - start + hi - lo, self.n_local, self.dtype.itemsize

    def copies(self, xp):
        """([(a run of the part's arrays, the empty array on xp's device it is copied into)], and
        make(), which lays the filled arrays out as the slice, a Part, on that device). The runs of
        pointers land where the slice's own pointers go and are shifted there, in place: a staged
        copy takes the slice's CSR and nothing more (Device.stage reserves that much)."""
        (a, b, c, d), (start, end, lo, hi) = self.bounds, self.spans
        rowptr, col, s = self.part.rowptr, self.part.col, self.n_local
        n, edges = rowptr.size - 1, end - start
        pointers = xp.empty(s + n + 1, np.int64)
        columns = xp.empty(end - start + hi - lo, self.dtype)
        runs = [(rowptr[a : b + 1], pointers[: s + 1]), (rowptr[c : d + 1], pointers[s + c : s + d + 1]),
                (col[start:end], columns[: end - start]), (col[lo:hi], columns[end - start :])]

        def make() -> Part:
            pointers[s + c : s + d + 1] -= lo - edges
            pointers[: s + 1] -= start
            pointers[s : s + c + 1] = edges  # the sources' end (shared with the targets' start if c is 0), and
            pointers[s + d + 1 :] = edges + hi - lo  # target rows before the range are empty, and those after it
            columns[...] += s
            stats = {**recorded(self.part.stats), "degrees": self.part.stats["degrees"]}  # the part's (cut)
            return Part(self.index, pointers, columns, self.part.global_id, s, stats, self.part.source,
                        slice=self.slice)

        return runs, make

    def made(self) -> Part:
        """The slice in host memory."""
        runs, make = self.copies(np)
        for run, into in runs:
            into[...] = run
        return make()


def fold(credits, part: Part):
    """A slice's per-vertex credits (one per slice row) as the part's (one per part row): a
    source's credit goes to the vertex it copies. In place, a view of credits (the sources'
    entries lie before the ones they add to)."""
    s, first = part.n_local, part.slice.first
    folded = credits[s:]
    folded[first : first + s] += credits[:s]
    return folded
