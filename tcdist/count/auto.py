"""--kernel auto (the default): each part's kernel, by a rule taken from measurements
(results/kernel-rule.md gives them).

The rule reads three degree statistics of the part's local rows (graph/degrees.py
degree_summary): the largest out-degree, the mean, and wedges per local edge (the work of a
wedge-checking kernel per edge, and the skew of the out-degrees: a hub's row has d+^2/2 wedges).
On the GPU:
- even out-degrees with many wedges per edge (ER of mean degree 25 to 100): `wedge-group`, 8
  lanes per vertex, a warp from WIDE_GROUP_WEDGES_PER_EDGE;
- out-degrees all small otherwise (a grid, sparse ER): `forward`, a thread per vertex;
- skewed degrees (RMAT, the SNAP graphs): `bitmap`, with bitmaps of the hubs only, then in a
  quarter of the blocks, where the full bitmaps do not fit beside the part;
- few wedges per edge but a hub: `wetric`;
- a slice (partition/slices.py) reads as its part and gets a kernel that intersects rows
  (bitmap where its part's statistics give it and its bitmaps fit, else lstc or lstc-group):
  a kernel that walks wedges would walk a source's wedges again in every slice, and forward and
  wetric rely on a part's id order, which a slice of a part with proxies does not keep;
- between: `lstc-group`, or LSTC's Algorithm 3 at tile 128 for parts under SMALL_PART_EDGES.
On the CPU it is `middle` (three times fewer lookups than `marker` on RMAT, for 8 bytes per edge of
its own), or `marker` for a slice (which does not keep a part's id order) or where middle's memory
does not fit; `lookup` (NumPy alone) for a part of at most LOOKUP_WEDGES wedges while Numba is not
loaded: its start (1-2 s) would cost more than such a count.
"""

from tcdist import compiled
from tcdist.count.registry import choose

SMALL_PART_EDGES = 500_000
LOOKUP_WEDGES = 1 << 22  # NumPy's lookups of this many wedges: 0.7 s on 2 cores, Numba's start 1.4 s
SPARSE_WEDGES_PER_EDGE = 2.0   # below (with a hub): wetric
SKEWED_WEDGES_PER_EDGE = 8.0   # from here (with a hub): bitmap
EVEN_MAX_OUT_DEGREE = 64       # up to here: forward
WEDGE_GROUP_WEDGES_PER_EDGE = 5.0  # from here, out-degrees even: wedge-group
WIDE_GROUP_WEDGES_PER_EDGE = 10.0  # from here: a warp per vertex, below: 8 lanes
EVEN_SKEW = 1.5  # wedges per edge over half the mean out-degree up to here: even (ER 1.1-1.2; ego-Facebook 2.0)
WEDGE_GROUPS = ("wedge-group:group=8", "wedge-group:group=32")
HUB_BITMAPS = (*(f"bitmap:bits={bits}" for bits in (20, 18, 16)),  # bits for the hubs only (the highest ids),
               "bitmap:threads=256,blocks_per_sm=8,bits=16")  # and in a quarter of the blocks (13-25 % slower)
BITMAPS = ("bitmap", *HUB_BITMAPS[:3], "bitmap:threads=256,blocks_per_sm=8", HUB_BITMAPS[3])  # fastest first
_SPECS = {"gpu": ("forward", *WEDGE_GROUPS, *BITMAPS, "wetric:spread=8", "lstc:tile=128", "lstc-group"),
          "cpu": ("middle", "marker", "lookup")}


def degree_stats(part) -> tuple[float, int, float]:
    """(wedges per local edge, the largest out-degree, the mean out-degree), over the part's local
    rows (a slice: its part's, slices.cut): from its statistics, taken when it was built (a part
    read from a store: now, and kept there)."""
    summary = part.degrees()
    return summary["wedges"] / max(summary["edges"], 1), summary["max_out"], summary["edges"] / max(summary["rows"], 1)


def _even(per_edge: float, mean_out: float) -> bool:
    return per_edge >= WEDGE_GROUP_WEDGES_PER_EDGE and per_edge <= EVEN_SKEW * mean_out / 2


def _skewed(part) -> bool:
    """Whether the rule gives the part bitmap, where its bitmaps fit (not ER's slices: 4.6x slower)."""
    per_edge, max_out, mean_out = degree_stats(part)
    return per_edge >= SKEWED_WEDGES_PER_EDGE and not (_even(per_edge, mean_out) or max_out <= EVEN_MAX_OUT_DEGREE)


def _part_order(part) -> bool:
    """Whether the part's ids follow the orientation as forward's walk needs (Kernel.part_order):
    a slice of a part with proxies does not."""
    return part.slice is None or part.slice.ordered


class Auto:
    """The rule for one backend: label(part) names one of choices (spec -> kernel, options)."""

    def __init__(self, backend: str):
        self.backend = backend
        self.choices = {spec: choose(backend, spec) for spec in _SPECS[backend]}

    def label(self, part, fits=lambda spec: True) -> str:
        """The spec that counts this part (a Part: its rows and its size); fits(spec) says whether
        a kernel's own memory (bitmaps) fits on the device now, else another counts."""
        if self.backend == "cpu":
            if not compiled.is_loaded() and part.degrees()["wedges"] <= LOOKUP_WEDGES:
                return "lookup"
            return "middle" if _part_order(part) and fits("middle") else "marker"
        per_edge, max_out, mean_out = degree_stats(part)
        whole = part.slice is None  # a slice gets a kernel that intersects rows (see above)
        even, small = _even(per_edge, mean_out), max_out <= EVEN_MAX_OUT_DEGREE
        if whole and even:
            return WEDGE_GROUPS[per_edge >= WIDE_GROUP_WEDGES_PER_EDGE]
        if whole and small:
            return "forward"
        if _skewed(part):
            for spec in BITMAPS:
                if fits(spec):
                    return spec
        if whole and per_edge < SPARSE_WEDGES_PER_EDGE:
            return "wetric:spread=8"
        return "lstc:tile=128" if int(part.col.size) < SMALL_PART_EDGES else "lstc-group"

    @staticmethod
    def per_vertex_by_thread(part) -> bool:
        """Whether the GPU's per-vertex credits take a thread per vertex (out-degrees all small,
        as for forward) rather than a warp per edge."""
        return degree_stats(part)[1] <= EVEN_MAX_OUT_DEGREE and _part_order(part)

    def kept_for_slices(self, part) -> tuple[str, ...]:
        """The specs, largest first, of which a part's slices are planned to leave room for one:
        the bitmaps of the hubs where the rule gives the slices bitmap, else none."""
        return HUB_BITMAPS if self.backend == "gpu" and _skewed(part) else ()

    def fallback(self, part) -> str:
        """The spec for this part when no kernel with memory of its own may count it."""
        return self.label(part, fits=lambda spec: False)
