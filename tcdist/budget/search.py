"""The smallest number of parts whose largest part fits a budget (parts='auto').

Each probe partitions the graph and measures its parts by the memory model (budget/model.py)
as they are built, one at a time. The largest part shrinks as P grows, but not strictly, so
the search doubles P until the largest part fits and then bisects between the last P that did
not and that one.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

from tcdist.budget.sizes import size_text
from tcdist.count.cpu import lowest_triangles
from tcdist.errors import OptionError, TcdistError
from tcdist.graph.graph import col_dtype
from tcdist.partition import partition_graph
from tcdist.partition.incoming import transpose
from tcdist.xp import to_numpy

STALLED = 0.8  # four times the parts and the largest shrank by less than a fifth: more will not fit


def auto_parts(graph, scheme: str, prune: str, seed: int, budget: int, at_once: int, need) -> int:
    """The fewest parts whose largest fits the budget (each probe's parts are built one at a
    time and dropped once measured). A graph that does not fit whole is planned for at_once
    parts on the device together (on a GPU two: the next part's copy overlaps the count), or,
    if no P allows that, for one. need(v_res, e_res, n_local, col_bytes): a part's bytes on the
    device with its kernel (Device.need)."""
    col_bytes = np.dtype(col_dtype(graph.n)).itemsize
    out = to_numpy(graph.out_degree())

    @functools.cache
    def reversed_edges():
        """The graph's transpose (on the host), made by the first probe of over 64 parts for every
        such probe."""
        return transpose(graph)

    def largest_need(parts: int, budget: int, measured: int | None = None) -> int:
        """The largest of the first `measured` parts' bytes (all by default), or the first part's
        over the budget: then the probe stops."""
        largest = 0
        built = partition_graph(graph, parts, scheme=scheme, prune=prune, seed=seed, lazy=True,
                                reversed_edges=reversed_edges).parts
        for p in itertools.islice(built, measured):
            largest = max(largest, need(p.stats["v_res"], p.stats["e_res"], p.stats["n_local"], col_bytes))
            if largest > budget:
                break
        return largest

    def heaviest():
        """A vertex's own part: it, its out-neighbours, its out-edges and the edges among them
        (one per triangle in which it is the lowest vertex)."""
        lowest = lowest_triangles(to_numpy(graph.rowptr), to_numpy(graph.col))
        needs = need(1 + out, out + lowest.astype(np.int64), 1, col_bytes)
        u = int(needs.argmax())
        return graph.vertex_ids()[u], int(needs[u])

    floor = need(1 + int(out.max()), int(out.max()), 1, col_bytes) if out.size else 0
    alike = scheme == "random"  # each part a random draw of vertices: the first stands for them all
    whole = need(graph.n, graph.m, graph.n, col_bytes)
    if at_once > 1 and whole > budget:
        try:
            return smallest_parts(graph.n, whole, budget // at_once, largest_need, floor, heaviest, alike)
        except TcdistError:
            pass
    return smallest_parts(graph.n, whole, budget, largest_need, floor, heaviest, alike)


def smallest_parts(n: int, whole_need: int, budget: int, largest_need, floor_need: int, heaviest,
                   alike: bool = False) -> int:
    """The smallest P (1..n) whose largest part fits the budget, within the bracket the search
    finds (the largest part shrinks with P, but not strictly).

    whole_need: bytes of the graph as one part; largest_need(P, budget, measured=None): bytes of
    the largest of the first `measured` parts (all by default) of the P-way partitioning, or of
    the first part found over the budget (a probe that fails stops there); floor_need: a cheap
    lower bound of what the heaviest vertex's own part needs; heaviest(): (vertex, bytes) of the
    vertex whose part, alone with its out-neighbours, needs most, asked only when no P fits, to
    say why. alike: the parts of one P are alike (random assignment), so the search probes each
    P by its first part, and checks the P it finds whole; if a part of it is over (the one a hub
    fell in), the search goes on above it with every part measured.
    """
    if whole_need <= budget or n <= 1:  # with at most one vertex there is no other P
        return 1
    if floor_need > budget:
        _none_fits(budget, heaviest, n)
    low = max(2, -(-whole_need // budget))  # the largest part is at least whole / P: fewer cannot fit
    if alike:
        found = _search(low, n, budget, lambda parts: largest_need(parts, budget, 1), heaviest)
        if largest_need(found, budget) <= budget:
            return found
        if found >= n:
            _none_fits(budget, heaviest, n)
        low = found + 1  # the search goes on above it, every part measured
    return _search(low, n, budget, lambda parts: largest_need(parts, budget), heaviest)


def _search(low: int, n: int, budget: int, probe, heaviest) -> int:
    """The smallest P in a bracket above low that fits by probe (P doubled until one fits, then
    halved); stopped where parts stop shrinking."""
    if low > n:
        _none_fits(budget, heaviest, n)
    high, needs = low, []
    while (need := probe(high)) > budget:
        if high >= n:
            _none_fits(budget, heaviest, n)
        needs.append(need)
        if len(needs) >= 3 and needs[-1] > STALLED * needs[-3]:
            _refuse_heaviest(budget, heaviest)
            raise TcdistError(f"parts stop shrinking: with {high:,} parts one still needs {size_text(need)}, over "
                              f"the budget of {size_text(budget)} (vertices whose out-neighbourhoods every part "
                              f"needs, such as a dense core of high-degree vertices); more parts will not fit it")
        low, high = high + 1, min(2 * high, n)
    while low < high:  # the smallest P in [low, high] that fits (high does)
        middle = (low + high) // 2
        if probe(middle) <= budget:
            high = middle
        else:
            low = middle + 1
    return high


def _refuse_heaviest(budget: int, heaviest):
    """Stop if one vertex's own part is over the budget: no P can fit then."""
    vertex, need = heaviest()
    if need > budget:
        raise TcdistError(f"no number of parts fits the budget of {size_text(budget)}: vertex {vertex} alone with "
                          f"its out-neighbours needs {size_text(need)}; give the device more memory")


def _none_fits(budget: int, heaviest, n: int):
    _refuse_heaviest(budget, heaviest)
    raise OptionError(f"even {n:,} parts leave a part over the budget of {size_text(budget)}, though every vertex's "
                      "own part fits: this scheme puts several vertices in some parts; try {scheme} contiguous")
