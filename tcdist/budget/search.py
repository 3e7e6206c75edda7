"""The number of parts for parts='auto': few parts whose largest fits the budget.

Under the random scheme P is chosen from the degrees alone (budget/estimate.py): the part
LSTC builds lies between the model's minimal part (a lower bound of its average) and its
induced part, and nears the induced part as P grows: measured, its need lies a share of the
way from the one to the other of about a tenth per doubling of P (RMAT-20: 0.17 at 4 parts,
0.41 at 16, 0.60 at 64, 0.66 at 256; RMAT-16 and email-Enron alike, or below), so P is the
fewest whose part fits by that share; where that stops shrinking above the budget (a dense
core every part holds), no P fits and the caller counts slices.
Where building parts is cheap (a graph on the GPU, or of few edges), the parts themselves are
then measured: P is searched from the least the lower bound allows, each probe building parts
and measuring them by the memory model (budget/model.py) as they are built, one at a time.
The contiguous and metis schemes, whose parts no degree model bounds, are searched so too, at
most MAX_PROBES partitionings. The largest part shrinks as P grows, but not strictly, so a
search doubles P until the largest part fits and then bisects between the last P that did not
and that one.
"""

from __future__ import annotations

import functools
import itertools
import time
from dataclasses import dataclass

import numpy as np

from tcdist.budget.estimate import part_model
from tcdist.budget.sizes import size_text
from tcdist.count.cpu import lowest_triangles
from tcdist.errors import OptionError, TcdistError
from tcdist.graph.graph import col_dtype
from tcdist.partition import partition_graph
from tcdist.partition.incoming import transpose
from tcdist.xp import to_numpy

STALLED = 0.8  # four times the parts and the largest shrank by less than a fifth: more will not fit
MEASURED_EDGES = 1 << 20  # up to this many edges on the host a probe is cheap: parts are built and measured
INDUCED_SHARE_PER_DOUBLING = 0.1  # of the way from the minimal part to the induced one, LSTC's part (measured)
MIN_LOCAL = 4096  # local vertices a part has on average, from which the average part stands for the largest
MAX_PROBES = 8  # partitionings a search that builds parts may probe (random: beside the model's start)


@dataclass
class Choice:
    """What parts='auto' chose, and why, in a user's words (the summary and --json say both)."""

    parts: int
    why: str
    seconds: float = 0.0
    built: int = 0  # partitionings probed by building parts (0: chosen from the degrees alone)

    def to_dict(self) -> dict:
        return {"parts": self.parts, "why": self.why, "seconds": round(self.seconds, 4), "built": self.built}


class NoParts(TcdistError):
    """No number of parts fits: the message says why; the caller counts slices instead."""

    def __init__(self, message: str, seconds: float = 0.0, built: int = 0):
        super().__init__(message)
        self.seconds, self.built = seconds, built


def auto_parts(graph, scheme: str, prune: str, seed: int, budget: int, at_once: int, need) -> Choice:
    """The parts to count in and why (raises NoParts where none fits). A graph that does not fit
    whole is planned for at_once parts on the device together (on a GPU two: the next part's copy
    overlaps the count), or, if no P allows that, for one. need(v_res, e_res, n_local, col_bytes):
    a part's bytes on the device with its kernel (Device.need)."""
    t0 = time.perf_counter()
    col_bytes = np.dtype(col_dtype(graph.n)).itemsize
    whole = need(graph.n, graph.m, graph.n, col_bytes)
    if whole <= budget or graph.n <= 1:  # with at most one vertex there is no other P
        return Choice(1, f"the whole graph needs {size_text(whole)}, within the budget of {size_text(budget)}",
                      time.perf_counter() - t0)
    search = _Search(graph, scheme, prune, seed, need, col_bytes, whole)
    rooms = [(budget // at_once, f"half the budget of {size_text(budget)}: two parts on the device at once"),
             (budget, f"the budget of {size_text(budget)}")][at_once <= 1:]
    for k, (room, named) in enumerate(rooms):
        try:
            choice = search.choose(room, named)
        except TcdistError as e:
            if k + 1 < len(rooms):
                continue
            raise NoParts(str(e), time.perf_counter() - t0, search.built) from None
        choice.seconds, choice.built = time.perf_counter() - t0, search.built
        return choice


class _Search:
    """The choice of P for one graph, under one room or another (the model made once)."""

    def __init__(self, graph, scheme, prune, seed, need, col_bytes, whole):
        self.graph, self.scheme, self.prune, self.seed, self.need = graph, scheme, prune, seed, need
        self.col_bytes, self.whole, self.built, self.measured, self.estimates = col_bytes, whole, 0, {}, {}
        out = to_numpy(graph.out_degree())
        self.floor = need(1 + int(out.max()), int(out.max()), 1, col_bytes) if out.size else 0
        self.measures = graph.xp is not np or graph.m <= MEASURED_EDGES  # parts cheap to build and measure
        self.heaviest = self.heaviest_part if self.measures else self.longest  # (a count's pass: where cheap)
        self.model = part_model(graph, seed) if scheme == "random" else None

    def choose(self, room: int, named: str) -> Choice:
        low = max(2, -(-self.whole // room))  # the largest part is at least whole / P: fewer cannot fit
        if self.model is None:
            parts = smallest_parts(self.graph.n, self.whole, room, self.largest_need, self.floor, self.heaviest,
                                   low=low, probes=MAX_PROBES)
            return self.built_choice(parts, named)
        if self.floor > room:
            _refuse_heaviest(room, self.heaviest)
        least = functools.partial(self.estimate, bound=True)
        if self.measures:  # from the least P the lower bound allows, the parts themselves measured
            start = _fewest(least, low, self.graph.n, room)[0]
            parts = smallest_parts(self.graph.n, self.whole, room, self.largest_need, self.floor, self.heaviest,
                                   alike=True, low=low if start is None else start)
            return self.built_choice(parts, named)
        parts, at = _fewest(self.estimate, low, self.graph.n, room)
        if parts is None:
            raise TcdistError(f"parts stop shrinking: with {at:,} random parts one needs {self.between(at)} by "
                              f"the degrees, over {named} "
                              "(vertices whose out-neighbourhoods every part needs, such as a dense core of "
                              "high-degree vertices); more parts will not fit it")
        if self.graph.n < MIN_LOCAL * parts:
            raise TcdistError(f"{parts:,} random parts would fit by the degrees ({self.between(parts)} a part, "
                              f"within {named}), but each would hold only about {self.graph.n // parts:,} vertices: "
                              "too few for the average part to stand for the largest (the one a hub falls in can "
                              "need twice as much)")
        return Choice(parts, f"{parts} random parts, by the degrees: each needs {self.between(parts)}, within {named}")

    def built_choice(self, parts: int, named: str) -> Choice:
        """P found by building its parts: the largest measured of them (all, or the first of alike parts)."""
        largest = self.measured.get((parts, None), self.measured.get((parts, 1)))
        return Choice(parts, f"{parts} {self.scheme} parts, built: the largest needs {size_text(largest)}, within "
                             f"{named}")

    def estimate(self, parts: int, bound: bool = False) -> int:
        """A random LSTC part's bytes by the model, or with bound, its minimal part's (a lower bound)."""
        if parts not in self.estimates:
            least = self.need(*_rounded(self.model.minimal(parts)), self.col_bytes)
            induced = self.need(*_rounded(self.model.induced(parts)), self.col_bytes)
            share = min(1.0, INDUCED_SHARE_PER_DOUBLING * np.log2(parts))
            self.estimates[parts] = least, int(least + share * (induced - least))
        return self.estimates[parts][0 if bound else 1]

    def between(self, parts: int) -> str:
        return f"about {size_text(self.estimate(parts))} (at least {size_text(self.estimate(parts, True))})"

    @functools.cached_property
    def reversed_edges(self):
        """The graph's transpose (on the host), made by the first probe of over 64 parts for every
        such probe."""
        return transpose(self.graph)

    def largest_need(self, parts: int, budget: int, measured: int | None = None) -> int:
        """The largest of the first `measured` parts' bytes (all by default), or the first part's
        over the budget: then the probe stops."""
        self.built += 1
        largest = 0
        built = partition_graph(self.graph, parts, scheme=self.scheme, prune=self.prune, seed=self.seed, lazy=True,
                                reversed_edges=lambda: self.reversed_edges).parts
        for p in itertools.islice(built, measured):
            largest = max(largest, self.need(p.stats["v_res"], p.stats["e_res"], p.stats["n_local"], self.col_bytes))
            if largest > budget:
                break
        self.measured[parts, measured] = largest
        return largest

    def heaviest_part(self):
        """A vertex's own part: it, its out-neighbours, its out-edges and the edges among them
        (one per triangle in which it is the lowest vertex)."""
        graph = self.graph
        out = to_numpy(graph.out_degree())
        lowest = lowest_triangles(to_numpy(graph.rowptr), to_numpy(graph.col))
        needs = self.need(1 + out, out + lowest.astype(np.int64), 1, self.col_bytes)
        u = int(needs.argmax())
        return graph.vertex_ids()[u], int(needs[u])

    def longest(self):
        """The vertex of most out-neighbours, with what it and they need at least (no triangle counted)."""
        out = to_numpy(self.graph.out_degree())
        u = int(out.argmax())
        return self.graph.vertex_ids()[u], self.floor


def _rounded(sizes) -> tuple[int, int, int]:
    return tuple(int(np.ceil(x)) for x in sizes)


def _fewest(estimate, low: int, n: int, room: int) -> tuple[int | None, int]:
    """(the fewest parts from low on whose estimate fits the room, P doubled then bisected; or
    None where none does: up to n, or until the estimate stalls (four times the parts shrank it by
    less than a fifth); the last P tried)."""
    high, needs = min(low, n), []
    while (bytes_ := estimate(high)) > room:
        needs.append(bytes_)
        if high >= n or _stalled(needs):
            return None, high
        low, high = high + 1, min(2 * high, n)
    while low < high:
        middle = (low + high) // 2
        if estimate(middle) <= room:
            high = middle
        else:
            low = middle + 1
    return high, high


def _stalled(needs: list) -> bool:
    """Whether parts stopped shrinking, by the needs of P doubled each time: four times the parts
    shrank the largest by less than a fifth."""
    return len(needs) >= 3 and needs[-1] > STALLED * needs[-3]


def smallest_parts(n: int, whole_need: int, budget: int, largest_need, floor_need: int, heaviest,
                   alike: bool = False, low: int | None = None, probes: int | None = None) -> int:
    """The smallest P (1..n) whose largest part fits the budget, within the bracket the search
    finds (the largest part shrinks with P, but not strictly).

    whole_need: bytes of the graph as one part; largest_need(P, budget, measured=None): bytes of
    the largest of the first `measured` parts (all by default) of the P-way partitioning, or of
    the first part found over the budget (a probe that fails stops there); floor_need: a cheap
    lower bound of what the heaviest vertex's own part needs; heaviest(): (vertex, bytes) of the
    vertex whose part, alone with its out-neighbours, needs most, asked only when no P fits, to
    say why. alike: the parts of one P are alike (random assignment), so the search probes each
    P by its first part, and checks the P it finds whole; if a part of it is over (the one a hub
    fell in), the search goes on above it with every part measured. low: the least P that may
    fit (by default whole_need / budget); probes: at most this many partitionings probed (then
    the search stops and says so).
    """
    if whole_need <= budget or n <= 1:  # with at most one vertex there is no other P
        return 1
    if floor_need > budget:
        _none_fits(budget, heaviest, n)
    if low is None:
        low = max(2, -(-whole_need // budget))  # the largest part is at least whole / P: fewer cannot fit
    if probes is not None:
        largest_need = _counted(largest_need, probes, budget)
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
        if _stalled(needs):
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


def _counted(largest_need, probes: int, budget: int):
    """largest_need, refused past `probes` partitionings."""
    done = []

    def probe(parts: int, budget_: int, measured: int | None = None) -> int:
        if len(done) >= probes:
            raise TcdistError(f"{probes} partitionings probed, and none of their largest parts fit the budget of "
                              f"{size_text(budget)} (the last: {done[-1]:,} parts)")
        done.append(parts)
        return largest_need(parts, budget_, measured)

    return probe


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
