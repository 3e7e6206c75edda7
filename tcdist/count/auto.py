"""--kernel auto (the default): each part's kernel, by a rule taken from measurements.

The rule reads three degree statistics of the part's local rows, taken when the rows were
built (graph/graph.py degree_summary): the largest out-degree, the mean, and wedges per local
edge (sum over local u of C(d+(u), 2), over the out-edges of the local vertices: the work of a
wedge-checking kernel per edge, and the skew of the out-degrees, a hub's row having d+^2/2
wedges; per local edge, so a part of a graph reads about as the whole graph does, whatever P).
Even out-degrees have about half the mean wedges per edge. On nvidia-h200
(results/kernels-h200.md, kernels-h200-final.md, kernels-h200-wedge.md, the last with this
rule):
- even out-degrees with 5 wedges per edge or more (ER of mean degree 25 to 100): `wedge-group`,
  8 lanes per vertex walking its wedges, a warp from 10 wedges per edge (ER-8M-100M, 6.9 per
  edge: 5.5 ms against a warp's 6.2, forward's 11.8 and the published WETRIC's 9.1; of mean
  degree 50, 14.7 per edge: a warp's 10.2 against 8 lanes' 11.8; of mean degree 100: 20.4
  against lstc-group's 26.8 and bitmap's 102);
- out-degrees all small otherwise (a grid's d+ <= 4, sparser ER): `forward`, a thread per
  vertex merging rows (grid 0.21 ms against wedge-group's 2.1, lstc-group's 6.7 and wetric's
  1.2 with its wedge map; ER of mean degree 6.25: 0.63 ms against wedge-group's 1.25, of 12.5:
  2.22 against 2.33); a thread holding a hub's row would keep its block waiting;
- skewed degrees (RMAT: 78-160 wedges per edge; the SNAP graphs: 9.9-22): `bitmap`, a bitmap of
  N+(u) per block (RMAT-20..24 2.3-2.6x lstc-group); where its bitmaps do not fit beside the
  part, bitmaps of the hubs only (2^20, 2^18 or 2^16 bits for the highest ids, the rest
  searched: RMAT-25 0.73-0.74 s as the full bitmaps, RMAT-22 38 ms against 35, RMAT-23 101
  against 95, results/budget.md), then 8 blocks of 256 threads per multiprocessor (a quarter of
  the bitmaps, as fast on RMAT-22/23, 13 % slower on RMAT-20: results/kernels-h200-sweep.md;
  with the hubs' bits 13-25 % slower than 128 threads); where none fits, the rules below;
- few wedges per edge but a hub: `wetric`, a thread per eight wedges of a static map;
- a slice (partition/slices.py) reads as its part (slices.cut) and gets a kernel that
  intersects rows: bitmap where its part's statistics give it and its bitmaps fit (a skewed
  part's slices are planned to leave room for the hubs' bitmaps: kept_for_slices), else lstc
  or lstc-group. Its source rows meet each target range in a slice of their own, and the
  bitmap kernel walks only the v in the slice's targets; a kernel that walks wedges
  (wedge-group, wetric) walks a source's every wedge again in each slice. On nvidia-h200
  (results/budget.md), bitmaps of the hubs in every slice counted RMAT-25 under 2 GiB in 1.18 s
  and RMAT-26 under 4 GiB in 2.76 s, against lstc-group's 2.40 s and 5.15 s, and 3.08 s and
  7.81 s with the whole-graph rules (forward and wedge-group); forward and wetric also rely on a
  part's id order, which a slice of a part with proxies does not keep;
- between: `lstc-group`, or LSTC's Algorithm 3 at tile 128 for parts of fewer than
  SMALL_PART_EDGES edges (nvidia-h100-x1, results/gpu-h100.md: lstc-group's second launch and
  degree split cost more than they save there).
The thresholds come from whole graphs; parts were not timed apart.
CPU (results/cpu-rmat18.json): `marker` beat `merge` 4.5x, so it is always `marker`.
"""

from tcdist.count.registry import choose
from tcdist.graph.graph import degree_summary

SMALL_PART_EDGES = 500_000
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
          "cpu": ("marker",)}


def degree_stats(part) -> tuple[float, int, float]:
    """(wedges per local edge, the largest out-degree, the mean out-degree), over the part's local
    rows (a slice: its part's, slices.cut): from its statistics, taken when it was built (a part
    read from a store: now, and kept there)."""
    if "degrees" not in part.stats:
        part.stats["degrees"] = degree_summary(part.rowptr, part.n_local)
    summary = part.stats["degrees"]
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
            return "marker"
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
