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
target range below the source range. This is an addition to LSTC, whose parts
must each fit the device: on skewed graphs every part holds the dense core, so no P fits a small
budget, while slices fit any budget that holds the pointers of a part's rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

from tcdist.partition.part import Part, recorded


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
    equal degrees, and would read as even where the part is skewed."""
    part.degrees()  # taken from the whole part, before it is cut
    ordered = part.n_local == part.rowptr.size - 1
    for k, (a, b, c, d) in enumerate(bounds):
        yield Slice(part, a, b, c, d, SliceOf(k, len(bounds), a, ordered))


def share(part: Part, index: int, first: int, last: int, targets: tuple[int, int] | None = None) -> Slice:
    """Rows first..last-1 of a whole graph (a part with no proxies, ids ranks) as share `index`, one
    slice whose targets are every row from first on, or the rows targets[0]..targets[1]-1 (a
    slice of the graph's plan): a rank's share of a replicated graph, counted in place where the
    device can (in_place). Every share of a graph is cut from one Part, whose pages a GPU keeps
    registered from its first share's copy to the end of the run."""
    part.degrees()
    n = part.rowptr.size - 1
    c, d = targets or (first, n)
    piece = Slice(part, first, last, c, d, SliceOf(0, 1, first, part.n_local == n), share=True)
    piece.index = index
    return piece


class Slice:
    """A slice of a part, not made yet: four runs of the part's arrays (the pointers and columns
    of its source rows, and of its target rows) that copies() moves to a device and lays out as
    a Part there, so that a GPU receives the runs only, not the slice's filled pointers."""

    def __init__(self, part: Part, a: int, b: int, c: int, d: int, label: SliceOf, share: bool = False):
        self.part, self.bounds, self.slice, self.index = part, (a, b, c, d), label, part.index
        self.share = share  # a share of a replicated graph (a counted piece of its own, not one of a part's slices)
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
                        slice=self.slice, checked=self.part.checked)  # as trusted as its part

        return runs, make

    def in_place(self) -> Part | None:
        """A share as its graph's own arrays, counted from its first row on (its targets are every
        row from there on, and ids are ranks, so no row below them is reached): the same count, no
        copy; None for any other slice (made() lays it out)."""
        (a, b, c, d), part = self.bounds, self.part
        if not (self.share and self.slice.ordered and part.global_id is None and c == a and d == part.rowptr.size - 1):
            return None
        stats = {**recorded(part.stats), "degrees": part.stats["degrees"]}
        return Part(self.index, part.rowptr, part.col, None, b, stats, part.source, start=a, checked=True)

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
