"""The plan of slices: the source and target ranges of a part too large for the device
(partition/slices.py cuts them), and the early refusal of a part no slice of which fits, both
from the same rooms, so that what is refused is exactly what no plan would count.

Two slices share the device: the one being counted, and the next one being copied beside it.
Only the slice being checked or counted holds its working memory (the check's, the kernel's);
the one being copied holds only its CSR. So a slice is planned with its CSR and half its
working memory in half the budget (less the room kept for the hubs' bitmaps under
--kernel auto), or, where no slice fits that, alone in ALONE of the budget.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from tcdist.budget import model
from tcdist.budget.host import available
from tcdist.budget.sizes import size_text
from tcdist.errors import OptionError, TcdistError
from tcdist.io.scratch import on_disk
from tcdist.partition import slices
from tcdist.partition.part import Part
from tcdist.xp import to_numpy

_SHRINK = 0.8  # a plan with a slice over the room tries again with ranges this much smaller
BITMAP_SHARE = 8  # a skewed part's slices leave up to this fraction of the budget to the hubs' bitmaps
HOST_SHARE = 0.9  # of what the host may still take: what slices read from disk into it may hold
MAX_SLICES = 10_000  # more, and per-slice costs (a launch, a check, a copy's latency) would swamp the count

Need = Callable[[int, int, int, int], int]  # (v_res, e_res, n_local, col_bytes) -> device bytes


def slice_plan(device, part: Part, budget: int | None = None) -> list[tuple[int, int, int, int]] | None:
    """The slices of a part on the device, or None where it fits whole; refused, with why, where
    no slice fits (device: a Device, whose need() and kept_for_slices() are asked; budget: its
    budget() unless given, e.g. the least that any of several ranks may take)."""
    budget = device.budget() if budget is None else budget
    need = device.need_of(part)
    if need <= budget:
        return None
    kernel = device.fixed_kernel
    if kernel is not None and kernel.part_order and part.n_local < part.rowptr.size - 1:
        raise OptionError(f"part {part.index} needs {size_text(need)} and the device has {size_text(budget)}: "
                          f"it can be counted in slices, but not by {{kernel}} {kernel.name}, which relies on "
                          "a part's id order; let {kernel} auto choose, or count more parts")
    (beside, beside_need), (alone, alone_need) = _rooms(device, budget, device.kept_for_slices(part, budget))
    own_memory = kernel is not None and kernel.extra_bytes is not None  # auto may take a kernel without any
    advice = "give the device more memory" + (", or let {kernel} auto choose" if own_memory else "")
    try:
        return plan(part, beside, beside_need, advice=advice)
    except TcdistError:
        return plan(part, alone, alone_need, budget, advice)


def pieces(device, part: Part, host_room: int | None = None) -> Iterator[Part | slices.Slice]:
    """The part, or where it does not fit the device, its slices, made one at a time (a part whose
    columns lie on disk is read as one slice where it fits whole, in slices that its host holds
    too, two at a time: host_room, else what the host has free; for a GPU, each is read there
    first)."""
    budget = None
    if on_disk(part.col):
        room = int(HOST_SHARE * available()[0]) if host_room is None else host_room
        budget = min(device.budget(), room // 2 if device.is_gpu else room)
    bounds = slice_plan(device, part, budget) if device.sliced(part) else None
    if bounds is None and on_disk(part.col):
        bounds = [(0, part.n_local, 0, part.rowptr.size - 1)]
    return iter([part]) if bounds is None else slices.cut(part, bounds)


def refuse_unsliceable(device, part: Part, advice: str) -> None:
    """Stop if neither room of the plan holds a slice of the part, with the second's reason (the
    room kept for the hubs' bitmaps left out, so this never refuses what slice_plan counts)."""
    budget = device.budget()
    (beside, beside_need), (alone, alone_need) = _rooms(device, budget, 0)
    try:
        refuse_floor(part, beside, beside_need)
    except TcdistError:
        refuse_floor(part, alone, alone_need, budget, advice)


def kept_for_slices(auto, part: Part, budget: int) -> int:
    """Bytes a part's slices leave free for the kernel's own memory: under --kernel auto (auto, the
    rule), the largest bitmaps of the hubs within an eighth of the budget where the rule gives
    the slices bitmap (a kernel fixed by name has its memory in need already)."""
    specs = auto.kept_for_slices(part) if auto is not None else ()
    if not specs:
        return 0
    v_res, n_local = part.rowptr.size - 1 + part.n_local, part.n_local  # a slice's rows at most
    share = budget // BITMAP_SHARE
    for spec in specs:  # largest first
        kernel, options = auto.choices[spec]
        need = int(kernel.extra_bytes(v_res, 0, n_local, 4, **options))
        if need <= share:
            return need
    return 0


def _rooms(device, budget: int, kept: int) -> list[tuple[int, Need]]:
    """(room, need) for a slice beside another, then for a slice alone."""

    def beside_another(v_res: int, e_res: int, n_local: int, col_bytes: int) -> int:
        csr = model.csr_bytes(v_res, e_res, n_local, col_bytes)
        return csr + (device.need(v_res, e_res, n_local, col_bytes) - csr) // 2

    return [((budget - kept) // 2, beside_another), (int(budget * model.ALONE), device.need)]


def plan(part: Part, room: int, need: Need, budget: int | None = None,
         advice: str = "give the device more memory") -> list[tuple[int, int, int, int]] | None:
    """The slices of a part that does not fit in room bytes, as (source rows a..b, target rows
    c..d), in source order; None if the part fits whole. need(v_res, e_res, n_local,
    col_bytes) gives a piece's bytes on the device (budget.part_need with the kernel's own);
    budget, the device's memory that room is a share of, is what a refusal names, with advice
    (a kernel given by name may leave auto's choice as an option)."""
    rowptr = to_numpy(part.rowptr)
    n, n_local, col_bytes = rowptr.size - 1, part.n_local, part.col.itemsize
    if need(n, int(rowptr[-1]), n_local, col_bytes) <= room or n_local == 0:
        return None
    floor, longest = refuse_floor(part, room, need, budget)
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
            raise OptionError(f"part {part.index} would need more than {MAX_SLICES:,} slices to fit "
                              f"{size_text(budget or room)} on the device (a slice of one row needs "
                              f"{size_text(need(n + 1, 2 * longest, 1, col_bytes))} with the kernel's own memory); "
                              f"{advice}")
        if max(need(b - a + n, _edges(rowptr, a, b) + _edges(rowptr, c, d), b - a, col_bytes)
               for a, b, c, d in slices) <= room:
            return slices
        share *= _SHRINK


def refuse_floor(part: Part, room: int, need: Need, budget: int | None = None,
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
        first = int(starts[0]) if on_disk(col) else 0  # (columns on disk: the range's run read, a share's bytes)
        run = col[first : int(ends[-1])] if on_disk(col) else col
        least, most = int(run[starts[rows] - first].min()), int(run[ends[rows] - 1 - first].max())
        slices += [(int(a), int(b), int(c), int(d)) for c, d in zip(t_bounds[:-1], t_bounds[1:])
                   if c <= most and d > least]
    return slices
